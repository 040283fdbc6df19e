//! `cairn serve --http` end to end (spec/mcp.md "Wave 2: one server for a
//! team", issue 11): the built binary serves a temporary git repository on a
//! loopback port; rmcp's Streamable HTTP client drives the seed story; raw
//! HTTP requests check auth (401), grants, DNS rebinding (403), limits (413,
//! 503), hostile clients, graceful shutdown, and a bounded load run.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

mod mcpfx;

const BIN: &str = env!("CARGO_BIN_EXE_cairn");

fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    dir
}

fn today() -> String {
    let d = time::OffsetDateTime::now_utc().date();
    format!("{:04}-{:02}-{:02}", d.year(), u8::from(d.month()), d.day())
}

/// `cairn ARGS` in `dir`: (exit code, stdout, stderr).
fn cairn(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .env_remove("CAIRN_DB")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).trim_end().to_string(),
        String::from_utf8_lossy(&out.stderr).trim_end().to_string(),
    )
}

fn token(dir: &Path, name: &str, grant: &str) -> String {
    let (code, out, err) = cairn(dir, &["token", "create", name, "--grant", grant]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("cairn_") && out.len() == 70, "{out}");
    out
}

/// A running `cairn serve --http 127.0.0.1:0`; killed on drop.
struct Server {
    child: Child,
    url: String,
    addr: String,
    /// Everything the server wrote on stderr after its first line.
    stderr: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
}

impl Server {
    fn start(dir: &Path, extra: &[&str]) -> Server {
        Server::spawn(dir, extra, &[], None)
    }

    /// `start` with extra environment variables and, on Unix, a descriptor
    /// limit (`RLIMIT_NOFILE`, soft and hard) for the server process.
    fn spawn(dir: &Path, extra: &[&str], env: &[(&str, &str)], nofile: Option<u64>) -> Server {
        let mut cmd = Command::new(BIN);
        cmd.args(["serve", "--http", "127.0.0.1:0"])
            .args(extra)
            .current_dir(dir)
            .env_remove("CAIRN_DB")
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        #[cfg(unix)]
        if let Some(n) = nofile {
            use std::os::unix::process::CommandExt;
            // SAFETY: setrlimit is async-signal-safe; nothing else runs
            // between fork and exec.
            unsafe {
                cmd.pre_exec(move || {
                    let lim = libc::rlimit {
                        rlim_cur: n as libc::rlim_t,
                        rlim_max: n as libc::rlim_t,
                    };
                    if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        }
        #[cfg(not(unix))]
        let _ = nofile;
        let mut child = cmd.spawn().unwrap();
        let mut line = String::new();
        let mut err = BufReader::new(child.stderr.take().unwrap());
        err.read_line(&mut line).unwrap();
        // Keep draining stderr so the server never blocks on a full pipe.
        let stderr = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = stderr.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = err.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        let start = line.find("http://").unwrap_or_else(|| panic!("{line}"));
        let url = line[start..].split(' ').next().unwrap().to_string();
        let addr = url
            .trim_start_matches("http://")
            .trim_end_matches("/mcp")
            .to_string();
        Server {
            child,
            url,
            addr,
            stderr,
        }
    }

    /// What the server wrote on stderr so far (after its first line).
    fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.stderr.lock().unwrap()).to_string()
    }

    /// Sends SIGTERM and waits; the exit code.
    fn terminate(mut self) -> i32 {
        let pid = self.child.id().to_string();
        Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s.code().unwrap_or(-1);
            }
            assert!(Instant::now() < deadline, "server did not stop on SIGTERM");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

use mcpfx::Client;

fn initialize_body() -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}})
    .to_string()
}

/// One raw POST to the server: (status, headers, body).
async fn post(
    url: &str,
    headers: &[(&str, &str)],
    body: String,
) -> (u16, reqwest::header::HeaderMap, String) {
    let mut rb = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    for (k, v) in headers {
        rb = rb.header(*k, *v);
    }
    let resp = rb.body(body).send().await.unwrap();
    let status = resp.status().as_u16();
    let h = resp.headers().clone();
    let text = resp.text().await.unwrap_or_default();
    (status, h, text)
}

async fn delete(url: &str, headers: &[(&str, &str)]) -> u16 {
    let mut rb = reqwest::Client::new().delete(url);
    for (k, v) in headers {
        rb = rb.header(*k, *v);
    }
    rb.send().await.unwrap().status().as_u16()
}

fn bearer(t: &str) -> String {
    format!("Bearer {t}")
}

fn event_count(dir: &Path) -> i64 {
    let store = cairn::store::Store::open(&dir.join(".cairn/cairn.db")).unwrap();
    store.event_count().unwrap()
}

fn verified(dir: &Path) -> bool {
    let store = cairn::store::Store::open(&dir.join(".cairn/cairn.db")).unwrap();
    store.verify().unwrap().ok
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_seed_story_over_http() {
    let dir = repo();
    let all = token(dir.path(), "agent-1", "read,observe,write");
    let srv = Server::start(dir.path(), &[]);
    let c = Client::connect(&srv.url, Some(&all)).await;
    let story = mcpfx::seed_story(&c, dir.path()).await;
    // A new session on the same server: no current task until bootstrap.
    let c2 = Client::connect(&srv.url, Some(&all)).await;
    mcpfx::seed_story_resume(&c2, &story).await;
    assert_eq!(event_count(dir.path()), 10);
    assert!(verified(dir.path()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_are_required_and_revocable() {
    let dir = repo();
    let t = token(dir.path(), "agent-1", "read,observe,write");
    let srv = Server::start(dir.path(), &[]);
    // No token.
    let (status, h, body) = post(&srv.url, &[], initialize_body()).await;
    assert_eq!(status, 401);
    assert_eq!(h["www-authenticate"], "Bearer realm=\"cairn\"");
    assert_eq!(
        body,
        "This server needs a bearer token: send Authorization: Bearer TOKEN (cairn token create NAME makes one).\n"
    );
    // An unknown token.
    let (status, h, body) = post(
        &srv.url,
        &[("authorization", "Bearer cairn_0000")],
        initialize_body(),
    )
    .await;
    assert_eq!(status, 401);
    assert_eq!(
        h["www-authenticate"],
        "Bearer realm=\"cairn\", error=\"invalid_token\""
    );
    assert_eq!(
        body,
        "The bearer token is not valid (unknown or revoked).\n"
    );
    // The token works, for a raw request and for a live session ...
    let auth = bearer(&t);
    let (status, h, _) = post(&srv.url, &[("authorization", &auth)], initialize_body()).await;
    assert_eq!(status, 200);
    let sid = h["mcp-session-id"].to_str().unwrap().to_string();
    let c = Client::connect(&srv.url, Some(&t)).await;
    c.ok("task_create", json!({"name": "before revoke"})).await;
    assert_eq!(
        cairn(dir.path(), &["token", "list"]).1.split("  ").next(),
        Some("agent-1")
    );
    // ... until it is revoked: the next request is refused, session or not.
    assert_eq!(
        cairn(dir.path(), &["token", "revoke", "agent-1"]).1,
        "Revoked the token agent-1."
    );
    let (status, _, _) = post(&srv.url, &[("authorization", &auth)], initialize_body()).await;
    assert_eq!(status, 401);
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string();
    let (status, _, _) = post(
        &srv.url,
        &[("authorization", &auth), ("mcp-session-id", &sid)],
        list,
    )
    .await;
    assert_eq!(status, 401);
    let res =
        c.0.call_tool(
            rmcp::model::CallToolRequestParams::new("task_create")
                .with_arguments(json!({"name": "after revoke"}).as_object().unwrap().clone()),
        )
        .await;
    assert!(res.is_err(), "a revoked token still called a tool");
    assert_eq!(event_count(dir.path()), 1);
    assert_eq!(cairn(dir.path(), &["token", "list"]).1, "No tokens.");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_observe_token_cannot_write() {
    let dir = repo();
    let w = token(dir.path(), "lead", "read,observe,write");
    let r = token(dir.path(), "reviewer", "read,observe");
    let srv = Server::start(dir.path(), &[]);
    let lead = Client::connect(&srv.url, Some(&w)).await;
    let created = lead
        .ok("task_create", json!({"name": "ship the parser"}))
        .await;
    let slug = created
        .trim_start_matches("Created ")
        .trim_end_matches('.')
        .to_string();
    assert!(slug.starts_with(&today()), "{created}");
    let rev = Client::connect(&srv.url, Some(&r)).await;
    assert_eq!(
        rev.tool_names().await,
        vec![
            "observe",
            "task_search",
            "task_get",
            "timeline",
            "task_query",
            "task_bootstrap"
        ]
    );
    assert_eq!(
        rev.err("task_create", json!({"name": "sneaky"})).await,
        "task_create needs the cairn/write capability, which this server was not granted."
    );
    // Naming task_query_write directly runs nothing.
    assert_eq!(
        rev.err(
            "task_query_write",
            json!({"query": format!("(-> (node \"{slug}\") (:set-status! :abandoned))")})
        )
        .await,
        "task_query_write needs the cairn/write capability, which this server was not granted."
    );
    assert_eq!(
        rev.err(
            "task_query",
            json!({"query": format!("(-> (node \"{slug}\") (:set-status! :abandoned))")})
        )
        .await,
        "Query error: Mutations need the task_query_write surface; task_query is read-only."
    );
    // Reading and observing work.
    assert_eq!(
        rev.ok("observe", json!({"text": "looks good", "task_id": slug}))
            .await,
        format!("Observed on {slug}.")
    );
    assert!(
        rev.ok("task_get", json!({"task_id": slug}))
            .await
            .starts_with(&format!("{slug}  [active]"))
    );
    // The server's --grant caps every token: a write token on a read-only server.
    rev.close().await;
    lead.close().await;
    assert_eq!(event_count(dir.path()), 2);
    drop(srv);
    let ro = Server::start(dir.path(), &["--grant", "read"]);
    let capped = Client::connect(&ro.url, Some(&w)).await;
    assert_eq!(capped.tool_names().await.len(), 5);
    assert_eq!(
        capped
            .err("observe", json!({"text": "x", "task_id": slug}))
            .await,
        "observe needs the cairn/observe capability, which this server was not granted."
    );
    capped.close().await;
    assert_eq!(event_count(dir.path()), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_keep_separate_current_tasks_and_owners() {
    let dir = repo();
    let t = token(dir.path(), "agent-1", "read,observe,write");
    let t2 = token(dir.path(), "agent-2", "read,observe,write");
    let srv = Server::start(dir.path(), &[]);
    let d = today();
    let a = Client::connect(&srv.url, Some(&t)).await;
    let b = Client::connect(&srv.url, Some(&t)).await;
    a.ok("task_create", json!({"name": "alpha work"})).await;
    b.ok("task_create", json!({"name": "beta work"})).await;
    assert_eq!(
        a.ok("observe", json!({"text": "on alpha"})).await,
        format!("Observed on {d}-alpha-work.")
    );
    assert_eq!(
        b.ok("observe", json!({"text": "on beta"})).await,
        format!("Observed on {d}-beta-work.")
    );
    assert!(
        a.ok("task_get", json!({}))
            .await
            .starts_with(&format!("{d}-alpha-work  [active]"))
    );
    assert!(
        b.ok("task_get", json!({}))
            .await
            .starts_with(&format!("{d}-beta-work  [active]"))
    );
    a.close().await;
    b.close().await;
    // A session opened with one token cannot be used with another.
    let (status, h, _) = post(
        &srv.url,
        &[("authorization", &bearer(&t))],
        initialize_body(),
    )
    .await;
    assert_eq!(status, 200);
    let sid = h["mcp-session-id"].to_str().unwrap().to_string();
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string();
    let (status, _, body) = post(
        &srv.url,
        &[("authorization", &bearer(&t2)), ("mcp-session-id", &sid)],
        list,
    )
    .await;
    assert_eq!(status, 403);
    assert_eq!(body, "This session was opened with another token.\n");
}

/// spec/tq.md §9 over HTTP: a session's agent is its token's name plus the
/// session id; the claim-one query hands the one ready task to one session,
/// `task_get` names the holder, `(mine)` differs per session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claims_are_held_by_the_token_named_session() {
    let dir = repo();
    let t = token(dir.path(), "reviewer", "read,observe,write");
    let t2 = token(dir.path(), "builder", "read,observe,write");
    let srv = Server::start(dir.path(), &[]);
    let d = today();
    let a = Client::connect(&srv.url, Some(&t)).await;
    let b = Client::connect(&srv.url, Some(&t2)).await;
    a.ok("task_create", json!({"name": "only ready work"}))
        .await;
    let slug = format!("{d}-only-ready-work");
    let claim = json!({"query": "(-> (query \"ready\") (:take 1) (:claim! 900) (:ids))"});
    assert_eq!(
        a.ok("task_query_write", claim.clone()).await,
        format!("1 task:\n- {slug}")
    );
    assert_eq!(b.ok("task_query_write", claim).await, "No matching tasks.");
    let got = b.ok("task_get", json!({"task_id": slug})).await;
    let line = got
        .lines()
        .find(|l| l.starts_with("  claimed: "))
        .unwrap_or("");
    let rest = line.strip_prefix("  claimed: reviewer/").unwrap_or("");
    let (short, until) = rest.split_once(" until ").unwrap_or(("", ""));
    assert_eq!(short.len(), 4, "{got}");
    assert!(short.chars().all(|c| c.is_ascii_alphanumeric()), "{got}");
    assert!(until.ends_with(" UTC") && until.len() == 20, "{got}");
    let mine = json!({"query": "(-> (mine) (:ids))"});
    assert_eq!(
        a.ok("task_query", mine.clone()).await,
        format!("1 task:\n- {slug}")
    );
    assert_eq!(b.ok("task_query", mine).await, "No matching tasks.");
    a.close().await;
    b.close().await;
    assert!(verified(dir.path()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foreign_host_or_origin_is_403() {
    let dir = repo();
    let t = token(dir.path(), "agent-1", "read,observe,write");
    let srv = Server::start(dir.path(), &["--allow-host", "cairn.example.com"]);
    let auth = bearer(&t);
    let (status, _, body) = post(
        &srv.url,
        &[("authorization", &auth), ("host", "evil.example:80")],
        initialize_body(),
    )
    .await;
    assert_eq!(status, 403);
    assert_eq!(
        body,
        "Host \"evil.example\" is not allowed; start the server with --allow-host evil.example to serve it.\n"
    );
    // Refused before auth: no token needed to be told no.
    let (status, _, _) = post(&srv.url, &[("host", "evil.example")], initialize_body()).await;
    assert_eq!(status, 403);
    let (status, _, body) = post(
        &srv.url,
        &[("authorization", &auth), ("origin", "http://evil.example")],
        initialize_body(),
    )
    .await;
    assert_eq!(status, 403);
    assert_eq!(
        body,
        "Origin \"http://evil.example\" is not allowed; start the server with --allow-host HOST to serve it.\n"
    );
    // Allowed: loopback origins and --allow-host names.
    let (status, _, _) = post(
        &srv.url,
        &[
            ("authorization", &auth),
            ("origin", &format!("http://{}", srv.addr)),
        ],
        initialize_body(),
    )
    .await;
    assert_eq!(status, 200);
    let (status, _, _) = post(
        &srv.url,
        &[
            ("authorization", &auth),
            ("host", "cairn.example.com"),
            ("origin", "https://cairn.example.com"),
        ],
        initialize_body(),
    )
    .await;
    assert_eq!(status, 200);
    // Only /mcp and the board (issue 25, docs/board.md) are served.
    let other = srv.url.replace("/mcp", "/other");
    let (status, _, body) = post(&other, &[("authorization", &auth)], initialize_body()).await;
    assert_eq!(status, 404);
    assert_eq!(
        body,
        "Not found; the MCP endpoint is /mcp and the board is at /.\n"
    );
}

#[test]
fn no_auth_only_on_loopback_and_bad_options() {
    let dir = repo();
    let (code, _, err) = cairn(dir.path(), &["serve", "--http", "0.0.0.0:0", "--no-auth"]);
    assert_eq!(code, 2);
    assert_eq!(
        err,
        "error: --no-auth is accepted only with a loopback address (127.0.0.1, ::1, localhost), not 0.0.0.0:0."
    );
    let (code, _, err) = cairn(dir.path(), &["serve", "--no-auth"]);
    assert_eq!(code, 2);
    assert!(err.contains("--http"), "{err}");
    let (code, _, err) = cairn(dir.path(), &["token", "create", "x y"]);
    assert_eq!(code, 2);
    assert_eq!(
        err,
        "error: token name \"x y\" is not valid; use 1 to 64 letters, digits, '.', '_' or '-'."
    );
    let (code, _, err) = cairn(dir.path(), &["token", "revoke", "nobody"]);
    assert_eq!(code, 2);
    assert_eq!(err, "error: no token named \"nobody\".");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_clients_get_the_right_status_and_the_server_keeps_serving() {
    let dir = repo();
    let t = token(dir.path(), "agent-1", "read,observe,write");
    let srv = Server::start(dir.path(), &[]);
    let auth = bearer(&t);
    // Oversized body: declared, and streamed without a length.
    let big = "x".repeat(8 * 1024 * 1024 + 1);
    // Raw TCP: the server answers 413 on the declared length and may close
    // before the body is sent (a client library would see a broken pipe).
    let declared = raw_declared_post(&srv.addr, &auth, big.as_bytes());
    assert!(declared.starts_with("HTTP/1.1 413"), "{declared}");
    assert!(
        declared.contains("The request body is over the 8 MiB limit.\n"),
        "{declared}"
    );
    let chunked = raw_chunked_post(&srv.addr, &auth, big.as_bytes());
    assert!(chunked.starts_with("HTTP/1.1 413"), "{chunked}");
    // Malformed JSON.
    let (status, _, _) = post(
        &srv.url,
        &[("authorization", &auth)],
        "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\":".to_string(),
    )
    .await;
    assert_eq!(status, 400);
    // A client that sends a call and disconnects before the answer.
    let (status, h, _) = post(&srv.url, &[("authorization", &auth)], initialize_body()).await;
    assert_eq!(status, 200);
    let sid = h["mcp-session-id"].to_str().unwrap().to_string();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    let (status, _, _) = post(
        &srv.url,
        &[("authorization", &auth), ("mcp-session-id", &sid)],
        initialized,
    )
    .await;
    assert_eq!(status, 202);
    // A 2026-07-28 stream asked in this 2025 session: a sentence, not
    // rmcp's bare method name, and the session goes on.
    let listen = json!({"jsonrpc": "2.0", "id": 6, "method": "subscriptions/listen",
        "params": {"notifications": {"resourceSubscriptions": ["cairn://tasks/x"]}}})
    .to_string();
    let (status, _, body) = post(
        &srv.url,
        &[("authorization", &auth), ("mcp-session-id", &sid)],
        listen,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&body).unwrap(),
        json!({"jsonrpc": "2.0", "id": 6, "error": {"code": -32601,
            "message": "subscriptions/listen is not part of the protocol of a session that began with initialize; use resources/subscribe in this session, or connect without initialize (server/discover, the 2026-07-28 protocol) to listen."}})
    );
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "task_create", "arguments": {"name": "dropped caller"}}})
    .to_string();
    {
        let mut s = std::net::TcpStream::connect(&srv.addr).unwrap();
        write!(
            s,
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: {auth}\r\nMcp-Session-Id: {sid}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{call}",
            srv.addr,
            call.len()
        )
        .unwrap();
        s.flush().unwrap();
    } // dropped here, before any answer is read
    // A half-sent request, then gone.
    {
        let mut s = std::net::TcpStream::connect(&srv.addr).unwrap();
        write!(
            s,
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: {auth}\r\nContent-Length: 500\r\n\r\n{{\"jsonrpc\"",
            srv.addr
        )
        .unwrap();
    }
    // The server keeps serving; the store stays a faithful fold.
    let c = Client::connect(&srv.url, Some(&t)).await;
    c.ok("task_create", json!({"name": "still serving"})).await;
    let count = c
        .ok("task_query", json!({"query": "(-> (all) (:count))"}))
        .await;
    assert!(count == "2" || count == "1", "{count}");
    c.close().await;
    assert!(verified(dir.path()));
}

/// A POST with `Transfer-Encoding: chunked` (no length); the status line
/// and whatever followed.
/// A POST with a declared `Content-Length` over raw TCP: the head, then as
/// much of the body as the server reads before it answers; the response.
fn raw_declared_post(addr: &str, auth: &str, body: &[u8]) -> String {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: {auth}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).unwrap();
    for chunk in body.chunks(1 << 20) {
        if s.write_all(chunk).is_err() {
            break; // the server answered and closed early
        }
    }
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    while let Ok(n) = s.read(&mut buf) {
        if n == 0 {
            break;
        }
        out.extend_from_slice(&buf[..n]);
        if out.windows(7).any(|w| w == b"limit.\n") {
            break;
        }
    }
    String::from_utf8_lossy(&out).to_string()
}

fn raw_chunked_post(addr: &str, auth: &str, body: &[u8]) -> String {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: {auth}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
    );
    s.write_all(head.as_bytes()).unwrap();
    for chunk in body.chunks(1 << 20) {
        if write!(s, "{:x}\r\n", chunk.len()).is_err()
            || s.write_all(chunk).is_err()
            || s.write_all(b"\r\n").is_err()
        {
            break; // the server answered and closed early
        }
    }
    let _ = s.write_all(b"0\r\n\r\n");
    let mut out = vec![0u8; 512];
    let n = s.read(&mut out).unwrap_or(0);
    String::from_utf8_lossy(&out[..n]).to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sixty_fifth_session_is_503() {
    let dir = repo();
    let t = token(dir.path(), "agent-1", "read");
    let t2 = token(dir.path(), "agent-2", "read");
    let t3 = token(dir.path(), "agent-3", "read");
    let srv = Server::start(dir.path(), &[]);
    let (auth, auth2, auth3) = (bearer(&t), bearer(&t2), bearer(&t3));
    let mut ids = Vec::new();
    for _ in 0..32 {
        let (status, h, _) = post(&srv.url, &[("authorization", &auth)], initialize_body()).await;
        assert_eq!(status, 200);
        ids.push(h["mcp-session-id"].to_str().unwrap().to_string());
    }
    // Issue 22: one token holds at most half the slots.
    let (status, _, body) = post(&srv.url, &[("authorization", &auth)], initialize_body()).await;
    assert_eq!(status, 429);
    assert_eq!(
        body,
        "The token agent-1 already holds 32 sessions, the most one token may (half of --max-sessions); close one, or give each agent its own token (cairn token create NAME).\n"
    );
    for _ in 0..32 {
        let (status, _, _) = post(&srv.url, &[("authorization", &auth2)], initialize_body()).await;
        assert_eq!(status, 200);
    }
    let (status, _, body) = post(&srv.url, &[("authorization", &auth3)], initialize_body()).await;
    assert_eq!(status, 503);
    assert_eq!(
        body,
        "This server already holds its limit of 64 sessions; close one or start the server with a higher --max-sessions.\n"
    );
    // Closing one makes room, for its own token too.
    assert_eq!(
        delete(
            &srv.url,
            &[("authorization", &auth), ("mcp-session-id", &ids[0])]
        )
        .await,
        202
    );
    let (status, _, _) = post(&srv.url, &[("authorization", &auth)], initialize_body()).await;
    assert_eq!(status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_stops_gracefully() {
    let dir = repo();
    let srv = Server::start(dir.path(), &["--no-auth"]);
    let c = Client::connect(&srv.url, None).await;
    c.ok("task_create", json!({"name": "before stop"})).await;
    // Calls in flight while the signal lands either finish or never start.
    let calls = async {
        let mut acked = 0;
        for i in 0..40 {
            match c
                .0
                .call_tool(
                    rmcp::model::CallToolRequestParams::new("observe").with_arguments(
                        json!({"text": format!("note {i}")})
                            .as_object()
                            .unwrap()
                            .clone(),
                    ),
                )
                .await
            {
                Ok(r) if r.is_error != Some(true) => acked += 1,
                _ => break,
            }
        }
        acked
    };
    let stop = async {
        tokio::time::sleep(Duration::from_millis(150)).await;
        tokio::task::spawn_blocking(move || srv.terminate())
            .await
            .unwrap()
    };
    let (acked, code) = tokio::join!(calls, stop);
    assert_eq!(code, 0);
    assert!(verified(dir.path()));
    let n = event_count(dir.path());
    assert!(
        n == 1 + acked || n == 2 + acked,
        "events {n}, acknowledged observes {acked}"
    );
}

/// `prefix` and `n` in base-26 letters (`item` 0 → `itema`): slugs keep
/// no bare numbers, so distinct tasks need distinct words.
fn letters(prefix: &str, mut n: usize) -> String {
    let mut tail = Vec::new();
    loop {
        tail.push(b'a' + (n % 26) as u8);
        n /= 26;
        if n == 0 {
            break;
        }
    }
    tail.reverse();
    format!("{prefix}{}", String::from_utf8(tail).unwrap())
}

/// 16 sessions × 500 mixed calls (reads, observes, creates, write queries)
/// on loopback: no errors, every acknowledged write in the log, `verify`
/// true. p50/p99 go to target/tmp/http-load.txt.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn load_sixteen_sessions_by_five_hundred_calls() {
    const SESSIONS: usize = 16;
    const CALLS: usize = 500;
    let dir = repo();
    let t = token(dir.path(), "load", "read,observe,write");
    let srv = Server::start(dir.path(), &[]);
    let started = Instant::now();
    let mut tasks = Vec::new();
    for s in 0..SESSIONS {
        let url = srv.url.clone();
        let t = t.clone();
        tasks.push(tokio::spawn(async move {
            let c = Client::connect(&url, Some(&t)).await;
            let mut lat = Vec::with_capacity(CALLS);
            let mut writes = 0i64;
            let mut errors = Vec::new();
            for i in 0..CALLS {
                let (tool, args, write) = match i % 5 {
                    0 => ("task_create", json!({"name": format!("loadtest {} {}", letters("sess", s), letters("item", i))}), true),
                    1 => ("observe", json!({"text": format!("s{s} obs {i}")}), true),
                    2 => ("task_query", json!({"query": "(-> (current) (:count))"}), false),
                    3 => (
                        "task_query_write",
                        json!({"query": format!("(-> (current) (:set! :step \"{i}\"))")}),
                        true,
                    ),
                    _ => ("task_get", json!({}), false),
                };
                let t0 = Instant::now();
                let (text, err) = c.call(tool, args).await;
                lat.push(t0.elapsed());
                if err {
                    errors.push(format!("{tool}: {text}"));
                } else if write {
                    writes += 1;
                }
            }
            // This session's current task holds its own observes.
            let obs = c
                .ok("timeline", json!({"types": "observation", "limit": 1000}))
                .await;
            c.close().await;
            (lat, writes, errors, obs)
        }));
    }
    let mut lat = Vec::new();
    let mut writes = 0;
    for task in tasks {
        let (l, w, errors, obs) = task.await.unwrap();
        assert!(errors.is_empty(), "{errors:?}");
        assert!(obs.contains(" — last 100 events"), "{obs}");
        lat.extend(l);
        writes += w;
    }
    let wall = started.elapsed();
    assert_eq!(lat.len(), SESSIONS * CALLS);
    assert_eq!(event_count(dir.path()), writes);
    assert_eq!(writes, (SESSIONS * CALLS * 3 / 5) as i64);
    assert!(verified(dir.path()));
    lat.sort();
    let p = |q: f64| lat[((lat.len() as f64 * q) as usize).min(lat.len() - 1)];
    let report = format!(
        "http load: {SESSIONS} sessions x {CALLS} calls = {} calls in {:.1?} ({:.0} calls/s); p50 {:.2?}, p99 {:.2?}, max {:.2?}; 0 errors; {writes} acknowledged writes all in the log; verify true\n",
        lat.len(),
        wall,
        lat.len() as f64 / wall.as_secs_f64(),
        p(0.50),
        p(0.99),
        lat[lat.len() - 1]
    );
    eprint!("{report}");
    let _ = std::fs::write(
        Path::new(env!("CARGO_TARGET_TMPDIR")).join("http-load.txt"),
        &report,
    );
}

/// Issue 19 item 2: `cairn token revoke A` and `cairn token create B` run at
/// once, 20 rounds: every revoke that printed `Revoked the token A.` holds
/// (A is 401 on the running server) and every create is kept (B is 200).
/// Before the token file was locked, one change undid the other in about
/// half the rounds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoke_racing_a_create_is_never_undone() {
    let dir = repo();
    let srv = Server::start(dir.path(), &[]);
    let cairn_child = |args: Vec<String>| {
        Command::new(BIN)
            .args(args)
            .current_dir(dir.path())
            .env_remove("CAIRN_DB")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    for round in 0..20 {
        let a = format!("a-{round}");
        let b = format!("b-{round}");
        let ta = token(dir.path(), &a, "read");
        let revoke = cairn_child(vec!["token".into(), "revoke".into(), a.clone()]);
        let create = cairn_child(vec![
            "token".into(),
            "create".into(),
            b.clone(),
            "--grant".into(),
            "read".into(),
        ]);
        let revoked = revoke.wait_with_output().unwrap();
        let created = create.wait_with_output().unwrap();
        assert!(revoked.status.success(), "round {round}: {revoked:?}");
        assert_eq!(
            String::from_utf8_lossy(&revoked.stdout).trim_end(),
            format!("Revoked the token {a}.")
        );
        assert!(created.status.success(), "round {round}: {created:?}");
        let tb = String::from_utf8_lossy(&created.stdout).trim().to_string();
        assert!(tb.starts_with("cairn_"), "round {round}: {tb}");
        let (status, _, body) = post(
            &srv.url,
            &[("authorization", &bearer(&ta))],
            initialize_body(),
        )
        .await;
        assert_eq!(
            (status, body.as_str()),
            (401, "The bearer token is not valid (unknown or revoked).\n"),
            "round {round}: the revoked token {a} still works"
        );
        let (status, _, _) = post(
            &srv.url,
            &[("authorization", &bearer(&tb))],
            initialize_body(),
        )
        .await;
        assert_eq!(status, 200, "round {round}: the created token {b} was lost");
        let listed = cairn(dir.path(), &["token", "list"]).1;
        assert!(
            !listed.contains(&format!("{a} ")),
            "round {round}: {listed}"
        );
        assert!(listed.contains(&format!("{b} ")), "round {round}: {listed}");
    }
}

/// Issue 19 item 2: a token revoked and re-created under the same name with
/// fewer grants does not inherit an open session's grants: the old
/// `Mcp-Session-Id` with the new token is 403 (twice: the refusal holds) and
/// runs nothing; the old token is 401; a new session gets the new grants.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recreated_token_does_not_inherit_an_open_sessions_grants() {
    let dir = repo();
    let old = token(dir.path(), "agent-1", "read,observe,write");
    let srv = Server::start(dir.path(), &[]);
    let auth = bearer(&old);
    let (status, h, _) = post(&srv.url, &[("authorization", &auth)], initialize_body()).await;
    assert_eq!(status, 200);
    let sid = h["mcp-session-id"].to_str().unwrap().to_string();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    let (status, _, _) = post(
        &srv.url,
        &[("authorization", &auth), ("mcp-session-id", &sid)],
        initialized,
    )
    .await;
    assert_eq!(status, 202);
    let create = |name: &str| {
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "task_create", "arguments": {"name": name}}})
        .to_string()
    };
    let (status, _, body) = post(
        &srv.url,
        &[("authorization", &auth), ("mcp-session-id", &sid)],
        create("with the write token"),
    )
    .await;
    assert_eq!(status, 200);
    assert!(body.contains("Created "), "{body}");
    assert_eq!(
        cairn(dir.path(), &["token", "revoke", "agent-1"]).1,
        "Revoked the token agent-1."
    );
    let new = token(dir.path(), "agent-1", "read");
    for _ in 0..2 {
        let (status, _, body) = post(
            &srv.url,
            &[("authorization", &bearer(&new)), ("mcp-session-id", &sid)],
            create("sneaky"),
        )
        .await;
        assert_eq!(status, 403);
        assert_eq!(
            body,
            "This session was opened with an earlier token named agent-1, since revoked or replaced; open a new session (initialize without Mcp-Session-Id).\n"
        );
    }
    let (status, _, _) = post(
        &srv.url,
        &[("authorization", &auth), ("mcp-session-id", &sid)],
        create("sneaky"),
    )
    .await;
    assert_eq!(status, 401);
    assert_eq!(event_count(dir.path()), 1);
    // A new session with the new token has the new token's grants.
    let c = Client::connect(&srv.url, Some(&new)).await;
    assert_eq!(
        c.err("task_create", json!({"name": "sneaky"})).await,
        "task_create needs the cairn/write capability, which this server was not granted."
    );
    c.close().await;
    assert_eq!(event_count(dir.path()), 1);
}

/// Issue 19 item 2: revoking a token also ends its open sessions' event
/// streams (the server looks for sessions of revoked tokens every second),
/// so a revoked holder stops receiving notifications, not only answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn revoking_a_token_ends_its_open_event_stream() {
    let dir = repo();
    let t = token(dir.path(), "agent-1", "read,observe,write");
    let keep = token(dir.path(), "agent-2", "read");
    let srv = Server::start(dir.path(), &[]);
    let mut streams = Vec::new();
    for t in [&t, &keep] {
        let auth = bearer(t);
        let (status, h, _) = post(&srv.url, &[("authorization", &auth)], initialize_body()).await;
        assert_eq!(status, 200);
        let sid = h["mcp-session-id"].to_str().unwrap().to_string();
        let initialized =
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
        let (status, _, _) = post(
            &srv.url,
            &[("authorization", &auth), ("mcp-session-id", &sid)],
            initialized,
        )
        .await;
        assert_eq!(status, 202);
        let stream = reqwest::Client::new()
            .get(&srv.url)
            .header("accept", "text/event-stream")
            .header("authorization", &auth)
            .header("mcp-session-id", &sid)
            .send()
            .await
            .unwrap();
        assert_eq!(stream.status().as_u16(), 200);
        streams.push(stream);
    }
    let mut kept = streams.pop().unwrap();
    let mut revoked = streams.pop().unwrap();
    assert_eq!(
        cairn(dir.path(), &["token", "revoke", "agent-1"]).1,
        "Revoked the token agent-1."
    );
    let ended = tokio::time::timeout(Duration::from_secs(5), async {
        while let Ok(Some(_)) = revoked.chunk().await {}
    })
    .await;
    assert!(ended.is_ok(), "the revoked token's stream is still open");
    // The other token's stream stays open.
    let still = tokio::time::timeout(Duration::from_millis(1500), kept.chunk()).await;
    assert!(
        still.is_err() || matches!(still, Ok(Ok(Some(_)))),
        "{still:?}"
    );
}

/// Reads from `s` until the server closes it (or `limit` passes): what it
/// sent, and how long that took.
fn read_until_closed(s: &mut std::net::TcpStream, limit: Duration) -> (String, Duration) {
    let start = Instant::now();
    s.set_read_timeout(Some(limit)).unwrap();
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break,
            Err(e) => panic!("still open after {:?}: {e}", start.elapsed()),
        }
    }
    (String::from_utf8_lossy(&out).to_string(), start.elapsed())
}

/// Issue 19 item 3: a client that sends half a request line, or headers and
/// half a body, is cut off after the header (body) timeout, here 1 s
/// (`CAIRN_HTTP_HEADER_TIMEOUT_MS`, `CAIRN_HTTP_BODY_TIMEOUT_MS`); before,
/// such connections stayed open for good.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_sent_requests_are_closed_after_the_timeouts() {
    let dir = repo();
    let t = token(dir.path(), "agent-1", "read");
    let srv = Server::spawn(
        dir.path(),
        &[],
        &[
            ("CAIRN_HTTP_HEADER_TIMEOUT_MS", "1000"),
            ("CAIRN_HTTP_BODY_TIMEOUT_MS", "1000"),
        ],
        None,
    );
    let mut s = std::net::TcpStream::connect(&srv.addr).unwrap();
    s.write_all(b"POST /mcp HTT").unwrap();
    let (got, took) = read_until_closed(&mut s, Duration::from_secs(10));
    assert_eq!(got, "", "no answer to half a request line");
    assert!(
        took >= Duration::from_millis(900) && took < Duration::from_secs(4),
        "closed after {took:?}"
    );
    // Whole headers, half the declared body.
    let mut s = std::net::TcpStream::connect(&srv.addr).unwrap();
    write!(
        s,
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 500\r\n\r\n{{\"jsonrpc\"",
        srv.addr,
        bearer(&t)
    )
    .unwrap();
    let (got, took) = read_until_closed(&mut s, Duration::from_secs(10));
    assert!(got.starts_with("HTTP/1.1 408 Request Timeout\r\n"), "{got}");
    assert!(
        got.ends_with("\r\n\r\nThe request body did not arrive within 1 s.\n"),
        "{got}"
    );
    assert!(
        took >= Duration::from_millis(900) && took < Duration::from_secs(4),
        "answered after {took:?}"
    );
    // An idle connection is closed too; the server keeps serving.
    let mut idle = std::net::TcpStream::connect(&srv.addr).unwrap();
    let (got, took) = read_until_closed(&mut idle, Duration::from_secs(10));
    assert_eq!(got, "");
    assert!(took < Duration::from_secs(4), "closed after {took:?}");
    let (status, _, _) = post(
        &srv.url,
        &[("authorization", &bearer(&t))],
        initialize_body(),
    )
    .await;
    assert_eq!(status, 200);
}

/// Issue 19 item 3: under a 128-descriptor limit, 160 half-sent requests do
/// not exhaust the server: connections past the cap wait in the backlog,
/// the timeout frees the held ones, a real request is answered, and stderr
/// stays quiet (before: every descriptor taken, the accept loop spinning,
/// ~100 MB of `accept failed` warnings in seconds, the real request never
/// answered).
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_sent_requests_cannot_exhaust_the_descriptors() {
    let dir = repo();
    let t = token(dir.path(), "agent-1", "read");
    let srv = Server::spawn(
        dir.path(),
        &[],
        &[("CAIRN_HTTP_HEADER_TIMEOUT_MS", "1000")],
        Some(128),
    );
    let mut held = Vec::new();
    for _ in 0..160 {
        let mut s = std::net::TcpStream::connect(&srv.addr).unwrap();
        s.write_all(b"POST /mcp HTT").unwrap();
        held.push(s);
    }
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(15))
        .build()
        .unwrap();
    let start = Instant::now();
    let resp = client
        .post(&srv.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("authorization", bearer(&t))
        .body(initialize_body())
        .send()
        .await
        .expect("the server stopped answering");
    assert_eq!(resp.status().as_u16(), 200);
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
    let err = srv.stderr();
    assert!(
        !err.contains("accept failed"),
        "{}",
        &err[..err.len().min(2000)]
    );
    assert!(err.len() < 4096, "{} bytes on stderr", err.len());
    drop(held);
}

/// Issue 19 item 9: a batch (JSON array), `null` or another non-object body
/// is HTTP 400 with JSON-RPC `-32600` (before: 415 with rmcp's text).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batches_and_null_bodies_are_invalid_requests() {
    let dir = repo();
    let t = token(dir.path(), "agent-1", "read");
    let srv = Server::start(dir.path(), &[]);
    let auth = bearer(&t);
    let batch = json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]).to_string();
    let cases = [
        (
            batch,
            "Invalid Request: JSON-RPC batches (a JSON array) are not supported; send one request object per POST.",
        ),
        (
            "null".to_string(),
            "Invalid Request: the body is null, not a JSON-RPC request object; send one object per POST.",
        ),
        (
            "\"initialize\"".to_string(),
            "Invalid Request: the body is a string, not a JSON-RPC request object; send one object per POST.",
        ),
    ];
    // Objects that are not JSON-RPC 2.0 messages (hostile run L2).
    let not_jsonrpc = "Invalid Request: not a JSON-RPC 2.0 message; it needs \"jsonrpc\": \"2.0\" and a string \"method\" (or, for a response, an \"id\" with a \"result\" or an \"error\").";
    let cases = cases.into_iter().chain(
        [
            json!({}),
            json!({"jsonrpc": "2.0", "id": 1}),
            json!({"jsonrpc": "1.0", "id": 1, "method": "ping"}),
            json!({"jsonrpc": "2.0", "id": 1, "method": 123}),
        ]
        .map(|v| (v.to_string(), not_jsonrpc)),
    );
    for (body, message) in cases {
        let (status, h, text) = post(&srv.url, &[("authorization", &auth)], body.clone()).await;
        assert_eq!(status, 400, "{body}: {text}");
        assert_eq!(h["content-type"], "application/json");
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            v,
            json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": message}})
        );
    }
}

/// Issue 19 item 9: two `Host` headers are 400, whichever they name (before:
/// the first one was taken and the request served).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn duplicate_host_headers_are_400() {
    let dir = repo();
    let t = token(dir.path(), "agent-1", "read");
    let srv = Server::start(dir.path(), &[]);
    let auth = bearer(&t);
    // reqwest cannot send two Host headers: raw TCP.
    for hosts in [
        format!("Host: {}\r\nHost: evil.example\r\n", srv.addr),
        format!("Host: {0}\r\nHost: {0}\r\n", srv.addr),
    ] {
        let mut s = std::net::TcpStream::connect(&srv.addr).unwrap();
        let body = initialize_body();
        write!(
            s,
            "POST /mcp HTTP/1.1\r\n{hosts}Authorization: {auth}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let (got, _) = read_until_closed(&mut s, Duration::from_secs(10));
        assert!(got.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{got}");
        assert!(
            got.ends_with("\r\n\r\nA request must have exactly one Host header; this one has 2.\n"),
            "{got}"
        );
    }
    // One Host still works.
    let (status, _, _) = post(&srv.url, &[("authorization", &auth)], initialize_body()).await;
    assert_eq!(status, 200);
}

/// Hostile run H3: under a 128-descriptor limit the default 64 sessions
/// (4 descriptors each) no longer wedge the server: it allows 19 sessions,
/// says so once on stderr, refuses the 20th with its session-limit sentence
/// (503), and every open session keeps answering.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_are_capped_by_the_descriptor_limit() {
    use rmcp::ServiceExt;
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    let dir = repo();
    let t = token(dir.path(), "agent-1", "read,write");
    // Three tokens in turn: one token may hold only half the slots.
    let ts = [
        t.clone(),
        token(dir.path(), "agent-2", "read,write"),
        token(dir.path(), "agent-3", "read,write"),
    ];
    let srv = Server::spawn(dir.path(), &[], &[], Some(128));
    let mut open = Vec::new();
    let mut refused = 0;
    for i in 0..24 {
        let cfg = StreamableHttpClientTransportConfig::with_uri(srv.url.clone())
            .auth_header(ts[i % 3].clone());
        match ().serve(StreamableHttpClientTransport::from_config(cfg)).await {
            Ok(c) => {
                let c = Client(c);
                assert_eq!(
                    c.ok("task_query", json!({"query": "(-> (all) (:count))"}))
                        .await,
                    "0"
                );
                open.push(c);
            }
            Err(_) => refused += 1,
        }
    }
    assert_eq!((open.len(), refused), (19, 5));
    let (status, _, body) = post(
        &srv.url,
        &[("authorization", &bearer(&t))],
        initialize_body(),
    )
    .await;
    assert_eq!(status, 503);
    assert_eq!(
        body,
        "This server already holds its limit of 19 sessions; close one or start the server with a higher --max-sessions.\n"
    );
    for c in &open {
        assert_eq!(
            c.ok("task_query", json!({"query": "(-> (all) (:count))"}))
                .await,
            "0"
        );
    }
    assert!(
        srv.stderr().contains(
            "cairn: --max-sessions 64 lowered to 19 by the descriptor limit (128); raise it with ulimit -n for more sessions"
        ),
        "{}",
        srv.stderr()
    );
}

/// Over HTTP the written text in tool texts is fenced by default (spec/tq.md
/// §10; docs/mcp.md "Fenced text"): quoted between `NOTE-<nonce>` and
/// `END-<nonce>`, a zero-width space escaped; `mcpfx::unfence` reads it
/// back as the plain text the seed tests compare.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_fences_written_text_by_default() {
    let dir = repo();
    let t = token(dir.path(), "agent-1", "read,observe,write");
    let srv = Server::start(dir.path(), &[]);
    let c = Client::connect(&srv.url, Some(&t)).await;
    let slug = format!("{}-fence-check", mcpfx::today());
    c.ok(
        "task_create",
        json!({"name": "fence check", "description": "ignore\u{200B} me"}),
    )
    .await;
    let res =
        c.0.call_tool(
            rmcp::model::CallToolRequestParams::new("task_get")
                .with_arguments(json!({}).as_object().unwrap().clone()),
        )
        .await
        .unwrap();
    let text: String = res
        .content
        .iter()
        .filter_map(|b| b.as_text().map(|t| t.text.clone()))
        .collect();
    let nonce = text
        .strip_prefix("NOTE-")
        .and_then(|r| r.split(' ').next())
        .unwrap_or_else(|| panic!("not fenced: {text}"))
        .to_string();
    assert_eq!(
        text,
        format!(
            "NOTE-{nonce} {}\n{slug}  [active]\n  «ignore\\u{{200b}} me»\nEND-{nonce}",
            cairn::fence::NOTE
        )
    );
    assert_eq!(
        c.ok("task_get", json!({})).await,
        format!("{slug}  [active]\n  ignore\u{200B} me")
    );
}

/// Issue 22 (hostile pass): a 2025-11-25 method in a request that declares
/// 2026-07-28 is refused over HTTP with a sentence saying what replaces it
/// and status 404 (SEP-2575), not rmcp's bare method name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn removed_methods_in_a_2026_request_say_what_replaces_them() {
    let dir = repo();
    let t = token(dir.path(), "agent-1", "read,observe,write");
    let srv = Server::start(dir.path(), &[]);
    let auth = bearer(&t);
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"}});
    for (id, method, params, message) in [
        (
            1,
            "ping",
            json!({"_meta": meta}),
            "ping is not part of the 2026-07-28 protocol this request names; call server/discover to check the server.",
        ),
        (
            2,
            "resources/subscribe",
            json!({"uri": "cairn://tasks/x", "_meta": meta}),
            "resources/subscribe is not part of the 2026-07-28 protocol this request names; open a subscriptions/listen stream.",
        ),
        (
            3,
            "resources/unsubscribe",
            json!({"uri": "cairn://tasks/x", "_meta": meta}),
            "resources/unsubscribe is not part of the 2026-07-28 protocol this request names; open a subscriptions/listen stream.",
        ),
    ] {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let (status, _, text) = post(
            &srv.url,
            &[
                ("authorization", &auth),
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", method),
            ],
            body.to_string(),
        )
        .await;
        assert_eq!(status, 404, "{method}: {text}");
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&text).unwrap(),
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": message}}),
            "{method}"
        );
    }
    // A 200,000-character method is not echoed whole (rmcp's header
    // mismatch error did): the refusal clips it.
    let long = "b".repeat(200_000);
    let body = json!({"jsonrpc": "2.0", "id": 9, "method": long, "params": {"_meta": meta}});
    let (status, _, text) = post(
        &srv.url,
        &[
            ("authorization", &auth),
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "bbbb"),
        ],
        body.to_string(),
    )
    .await;
    assert_eq!(status, 404);
    assert!(text.len() < 1_000, "{} bytes", text.len());
    assert!(text.contains("Method not found: bbbb"), "{text}");
}
