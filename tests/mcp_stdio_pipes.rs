//! `cairn serve` reads and writes stdio pipes from its own thread when both
//! are pipes (`src/mcp/stdio_pipes.rs`, issue 23) and keeps tokio's
//! blocking stdio otherwise. Each way answers the same lines; the pipes'
//! non-blocking mode is taken back when the server ends (the open file is
//! shared with whoever else holds it).

use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::process::{Command, Stdio};

mod mcpfx;

use mcpfx::today;

const LINES: &str = concat!(
    r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"task_create","arguments":{"name":"wire the cache"}}}"#,
    "\n",
);

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    dir
}

/// The text of the `tools/call` answer (id 2) among `out`'s lines.
fn created(out: &str) -> String {
    let line = out
        .lines()
        .find(|l| l.contains(r#""id":2"#))
        .unwrap_or_else(|| panic!("no answer to id 2 in {out:?}"));
    let v: serde_json::Value = serde_json::from_str(line).unwrap();
    v["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_string()
}

/// A pipe: (read end, write end).
fn pipe() -> (OwnedFd, OwnedFd) {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2(2) writes;
    // close-on-exec, so no child keeps an end it was not given.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    // SAFETY: pipe(2) succeeded; each descriptor is owned once.
    unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) }
}

fn nonblocking(fd: &OwnedFd) -> bool {
    // SAFETY: F_GETFL on a descriptor we own.
    let flags = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) };
    assert!(flags >= 0);
    flags & libc::O_NONBLOCK != 0
}

/// `cairn serve` in `dir` on the given stdio.
fn serve(
    dir: &tempfile::TempDir,
    stdin: impl Into<Stdio>,
    stdout: impl Into<Stdio>,
    stderr: impl Into<Stdio>,
) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_cairn"))
        .arg("serve")
        .current_dir(dir.path())
        .env_remove("CAIRN_DB")
        .stdin(stdin)
        .stdout(stdout)
        .stderr(stderr)
        .spawn()
        .unwrap()
}

/// The lines read from `from` up to and including the answer to id 2.
fn through_id_2(from: &mut impl std::io::BufRead) -> String {
    let mut out = String::new();
    while !out.contains(r#""id":2"#) {
        let mut line = String::new();
        assert!(from.read_line(&mut line).unwrap() > 0, "{out}");
        out.push_str(&line);
    }
    out
}

#[test]
fn stdin_and_stdout_as_files() {
    let dir = project();
    let input = dir.path().join("in.ndjson");
    std::fs::write(&input, LINES).unwrap();
    let output = dir.path().join("out.ndjson");
    let status = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .arg("serve")
        .current_dir(dir.path())
        .env_remove("CAIRN_DB")
        .stdin(std::fs::File::open(&input).unwrap())
        .stdout(std::fs::File::create(&output).unwrap())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let out = std::fs::read_to_string(&output).unwrap();
    assert_eq!(created(&out), format!("Created {}-wire-cache.", today()));
}

#[test]
fn stdout_and_stderr_on_one_pipe() {
    let dir = project();
    let (read, write) = pipe();
    let mut child = serve(&dir, Stdio::piped(), write.try_clone().unwrap(), write);
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(LINES.as_bytes()).unwrap();
    drop(stdin);
    let mut out = String::new();
    std::fs::File::from(read).read_to_string(&mut out).unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!(created(&out), format!("Created {}-wire-cache.", today()));
}

/// The server's stdin and stdout are this test's own pipe ends (one open
/// file each, shared): they are non-blocking while it serves and blocking
/// again once it has ended.
#[test]
fn shared_pipes_are_left_blocking() {
    let dir = project();
    let (in_read, in_write) = pipe();
    let (out_read, out_write) = pipe();
    let mut child = serve(
        &dir,
        in_read.try_clone().unwrap(),
        out_write.try_clone().unwrap(),
        Stdio::null(),
    );
    let mut to = std::fs::File::from(in_write);
    to.write_all(LINES.as_bytes()).unwrap();
    let mut from = std::io::BufReader::new(std::fs::File::from(out_read.try_clone().unwrap()));
    let out = through_id_2(&mut from);
    assert!(
        nonblocking(&in_read),
        "stdin is read through epoll while serving"
    );
    drop(to);
    assert!(child.wait().unwrap().success());
    assert!(!nonblocking(&in_read), "stdin left non-blocking");
    assert!(!nonblocking(&out_write), "stdout left non-blocking");
    assert_eq!(created(&out), format!("Created {}-wire-cache.", today()));
}

/// The child's exit status, waiting at most 30 s (a loaded CI machine).
fn exited(child: &mut std::process::Child) -> std::process::ExitStatus {
    let t0 = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if t0.elapsed() > std::time::Duration::from_secs(30) {
            let _ = child.kill();
            panic!("the server did not end within 30 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// SIGTERM or SIGHUP while the client still holds stdin open: the session
/// ends, the process exits 0, and the shared pipes are blocking again (the
/// default action would have left them non-blocking for the next reader).
#[test]
fn a_stop_signal_ends_the_session_and_leaves_shared_pipes_blocking() {
    for signal in [libc::SIGTERM, libc::SIGHUP] {
        let dir = project();
        let (in_read, in_write) = pipe();
        let (out_read, out_write) = pipe();
        let mut child = serve(
            &dir,
            in_read.try_clone().unwrap(),
            out_write.try_clone().unwrap(),
            Stdio::null(),
        );
        let mut to = std::fs::File::from(in_write);
        to.write_all(LINES.as_bytes()).unwrap();
        let mut from = std::io::BufReader::new(std::fs::File::from(out_read.try_clone().unwrap()));
        let out = through_id_2(&mut from);
        assert!(nonblocking(&in_read), "stdin is read through epoll");
        // SAFETY: kill(2) on our own child's pid.
        assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
        assert_eq!(exited(&mut child).code(), Some(0), "signal {signal}");
        assert!(!nonblocking(&in_read), "stdin left non-blocking ({signal})");
        assert!(
            !nonblocking(&out_write),
            "stdout left non-blocking ({signal})"
        );
        drop(to);
        assert_eq!(created(&out), format!("Created {}-wire-cache.", today()));
    }
}

/// A client that closes its end of stdout ends the session at the next
/// answer that cannot be written, though it keeps stdin open: the server
/// reads no further request (before, it ran every write it was sent and
/// logged a broken pipe for each).
#[test]
fn a_client_that_stops_reading_ends_the_session() {
    let dir = project();
    let mut child = serve(&dir, Stdio::piped(), Stdio::piped(), Stdio::piped());
    let mut to = child.stdin.take().unwrap();
    to.write_all(LINES.as_bytes()).unwrap();
    let mut from = std::io::BufReader::new(child.stdout.take().unwrap());
    let out = through_id_2(&mut from);
    assert_eq!(created(&out), format!("Created {}-wire-cache.", today()));
    drop(from);
    to.write_all(
        concat!(
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"task_create","arguments":{"name":"unheard answer"}}}"#,
            "\n"
        )
        .as_bytes(),
    )
    .unwrap();
    assert_eq!(exited(&mut child).code(), Some(0));
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert_eq!(
        err.matches("the client stopped reading (a write failed); ending the session")
            .count(),
        1,
        "{err}"
    );
    drop(to);
    // The write whose answer could not be sent was made; nothing after it.
    let q = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["query", "(-> (all) (:ids))"])
        .current_dir(dir.path())
        .env_remove("CAIRN_DB")
        .output()
        .unwrap();
    let d = today();
    assert_eq!(
        String::from_utf8_lossy(&q.stdout).trim_end(),
        format!("2 tasks:\n- {d}-unheard-answer\n- {d}-wire-cache")
    );
}

/// The peak resident memory of process `pid` (`VmHWM`, KiB).
fn peak_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// A client that pipelines 600 `tools/list` (~190 KB of answer each)
/// without reading: the server runs at most 64 requests ahead of the
/// answers it wrote and holds at most 8 MiB of requests more, so the
/// client's writes stop at a full pipe and the server's peak memory stays
/// small; once read, every answer is there, once.
#[test]
fn pipelined_requests_wait_for_their_answers_to_be_read() {
    const N: usize = 600;
    let dir = project();
    let mut child = serve(&dir, Stdio::piped(), Stdio::piped(), Stdio::null());
    let mut to = child.stdin.take().unwrap();
    let mut from = std::io::BufReader::new(child.stdout.take().unwrap());
    to.write_all(LINES.as_bytes()).unwrap();
    through_id_2(&mut from);
    let mut line = String::new();
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    // 32 KB a request (a `_meta` pad): 19 MB, over a pipe's buffer and
    // the 8 MiB of requests the server holds past its bound.
    let pad = "x".repeat(32 * 1024);
    let writer = std::thread::spawn(move || {
        for i in 0..N {
            let req = format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"tools/list\",\"params\":{{\"_meta\":{{\"pad\":\"{pad}\"}}}}}}\n",
                1000 + i
            );
            to.write_all(req.as_bytes()).unwrap();
        }
        done_tx.send(()).unwrap();
        to
    });
    // Nobody reads: the writer cannot get all 600 through.
    assert!(
        done_rx
            .recv_timeout(std::time::Duration::from_secs(2))
            .is_err(),
        "the server read every request while none was answered"
    );
    let mut ids = Vec::new();
    while ids.len() < N {
        line.clear();
        assert!(std::io::BufRead::read_line(&mut from, &mut line).unwrap() > 0);
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["result"]["tools"].as_array().map(Vec::len), Some(14));
        ids.push(v["id"].as_u64().unwrap());
    }
    ids.sort_unstable();
    assert_eq!(ids, (1000..1000 + N as u64).collect::<Vec<_>>());
    let peak = peak_kib(child.id());
    drop(writer.join().unwrap());
    assert!(exited(&mut child).success());
    assert!(peak < 100 * 1024, "peak {peak} KiB");
}
