//! `cairn watch` (spec/tq.md §9 "Changes", docs/cli.md "cairn watch"): the
//! first result, then a reprint after a write from ANOTHER process, only
//! when the text changed; `--count` exits 0; a bad query exits 2 at once.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn today() -> String {
    let d = time::OffsetDateTime::now_utc().date();
    format!("{:04}-{:02}-{:02}", d.year(), u8::from(d.month()), d.day())
}

fn cairn(db: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cairn"));
    c.arg("--db").arg(db).env_remove("CAIRN_DB");
    c
}

fn run(db: &Path, args: &[&str]) -> String {
    let out = cairn(db).args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// True for `-- HH:MM:SS UTC`.
fn is_separator(line: &str) -> bool {
    let Some(t) = line
        .strip_prefix("-- ")
        .and_then(|r| r.strip_suffix(" UTC"))
    else {
        return false;
    };
    t.len() == 8
        && t.char_indices().all(|(i, c)| {
            if i == 2 || i == 5 {
                c == ':'
            } else {
                c.is_ascii_digit()
            }
        })
}

#[test]
fn watch_reprints_a_changed_result_and_exits_after_count() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cairn.db");
    run(&db, &["call", "task_create", r#"{"name": "alpha task"}"#]);
    let d = today();
    let mut child = cairn(&db)
        .args(["watch", "--count", "2", "(-> (all) (:ids))"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    for _ in 0..2 {
        out.read_line(&mut first).unwrap();
    }
    assert_eq!(first, format!("1 task:\n- {d}-alpha-task\n"));

    // A write that leaves the answer unchanged prints nothing; a create does.
    run(
        &db,
        &[
            "call",
            "observe",
            &format!(r#"{{"task_id": "{d}-alpha-task", "text": "x"}}"#),
        ],
    );
    std::thread::sleep(Duration::from_millis(700));
    run(&db, &["call", "task_create", r#"{"name": "beta task"}"#]);
    let started = Instant::now();
    let mut rest = String::new();
    out.read_to_string(&mut rest).unwrap();
    let status = child.wait().unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(status.code(), Some(0));
    let lines: Vec<&str> = rest.lines().collect();
    assert_eq!(lines.len(), 5, "{rest:?}");
    assert_eq!(lines[0], "");
    assert!(is_separator(lines[1]), "{rest:?}");
    assert_eq!(
        lines[2..].join("\n"),
        format!("2 tasks:\n- {d}-alpha-task\n- {d}-beta-task")
    );
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert_eq!(err, "");
}

#[test]
fn a_bad_query_is_an_error_and_no_loop() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cairn.db");
    let started = Instant::now();
    let out = cairn(&db)
        .args(["--color", "never", "watch", "(-> (al) (:ids))"])
        .output()
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("Query error: Unknown source al; did you mean all?\n"),
        "{err}"
    );
    // The read surface refuses a mutation the same way.
    let out = cairn(&db)
        .args(["watch", "(-> (all) (:set-status! :blocked))"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    // Intervals under 10 ms are usage errors.
    let out = cairn(&db)
        .args(["watch", "--interval", "9", "(all)"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("expected whole milliseconds, at least 10."),
        "{out:?}"
    );
    // `(current)` without `--current` names the flag (each process is a new
    // session; the verbs' remembered task is not a query's).
    run(&db, &["add", "watch the current task"]);
    let out = cairn(&db)
        .args(["--color", "never", "watch", "(current)"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("Query error: This query needs a current task; select one first.\n"),
        "{err}"
    );
    assert!(
        err.contains("Help: cairn watch --current SLUG gives this query a current task (cairn current shows the verbs' one).\n"),
        "{err}"
    );
}
