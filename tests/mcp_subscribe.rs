//! Tasks and views as MCP resources over real stdio (spec/tq.md §9
//! "Changes", docs/mcp.md "Resources and subscriptions"), driven by rmcp's
//! client against the built `cairn serve`: the two templates, reading both
//! (exact text), completion of `{slug}` and `{name}`, subscriptions that hear
//! a write from a SECOND OS process within a second (latency printed) and
//! stay silent for unsubscribed tasks, unrelated writes and after
//! unsubscribe; and the stdio agent identity from `clientInfo.name`.
#![allow(deprecated)] // resources/subscribe is "legacy-only" in rmcp; protocol 2025-11-25 has it.

mod mcpfx;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use rmcp::model::{
    ClientCapabilities, ClientConfig, ErrorCode, Implementation, ReadResourceRequestParams,
    ResourceContents, ResourceUpdatedNotificationParam, SubscribeRequestParams,
    UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RunningService, ServiceError};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::json;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

/// A client that names itself `name` and forwards every
/// `notifications/resources/updated` (URI, arrival instant).
#[derive(Clone)]
struct Listener {
    name: String,
    tx: UnboundedSender<(String, Instant)>,
}

impl ClientHandler for Listener {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new(self.name.clone(), "1.0.0"),
        )
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.tx.send((params.uri, Instant::now()));
    }
}

type Client = RunningService<RoleClient, Listener>;

fn today() -> String {
    let d = time::OffsetDateTime::now_utc().date();
    format!("{:04}-{:02}-{:02}", d.year(), u8::from(d.month()), d.day())
}

/// Runs the `cairn` binary on `db` (a second OS process); its stdout.
async fn cairn(db: &Path, args: &[&str]) -> String {
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
        .arg("--db")
        .arg(db)
        .args(args)
        .env_remove("CAIRN_DB")
        .output()
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "cairn {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Creates a task named `name` from another process; its slug.
async fn create(db: &Path, name: &str) -> String {
    let args = json!({ "name": name }).to_string();
    let out = cairn(db, &["call", "task_create", &args]).await;
    let slug = format!("{}-{}", today(), name.replace(' ', "-"));
    assert_eq!(out.trim(), format!("Created {slug}."));
    slug
}

async fn observe(db: &Path, slug: &str, text: &str) {
    let args = json!({ "task_id": slug, "text": text }).to_string();
    cairn(db, &["call", "observe", &args]).await;
}

/// `cairn serve` on `db` with a client called `name`; stderr goes to
/// `stderr` (with `CAIRN_LOG=cairn=info`, the `session opened` line).
async fn spawn(
    db: &Path,
    name: &str,
    stderr: &Path,
) -> (Client, UnboundedReceiver<(String, Instant)>) {
    let (c, rx, _) = spawn_pid(db, name, stderr).await;
    (c, rx)
}

/// [`spawn`], also returning the server's process id.
async fn spawn_pid(
    db: &Path,
    name: &str,
    stderr: &Path,
) -> (Client, UnboundedReceiver<(String, Instant)>, u32) {
    spawn_with(db, name, stderr, &[]).await
}

/// [`spawn_pid`] with `serve EXTRA...` (say `--grant observe`).
async fn spawn_with(
    db: &Path,
    name: &str,
    stderr: &Path,
    extra: &[&str],
) -> (Client, UnboundedReceiver<(String, Instant)>, u32) {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn"));
    cmd.arg("--db")
        .arg(db)
        .arg("serve")
        .args(extra)
        .env_remove("CAIRN_DB")
        .env("CAIRN_LOG", "cairn=info");
    let (transport, _) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::from(std::fs::File::create(stderr).unwrap()))
        .spawn()
        .unwrap();
    let pid = transport.id().unwrap();
    let (tx, rx) = unbounded_channel();
    let listener = Listener {
        name: name.to_string(),
        tx,
    };
    (listener.serve(transport).await.unwrap(), rx, pid)
}

/// How many SQLite connections process `pid` holds on `db`: its open file
/// descriptors on the database's `-wal` file (Linux `/proc`; each connection
/// that has read opens its own, and closing the connection closes it, while
/// the main file's descriptor may be kept for POSIX lock reasons). The
/// watcher's change counter is one of them while it runs.
fn connections(pid: u32, db: &Path) -> usize {
    let db = db.canonicalize().unwrap().with_extension("db-wal");
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter(|target| *target == db)
        .count()
}

/// The count of [`connections`] once it reaches `want` (or after 10 s): a
/// watcher opens its reader and the process's commit signal
/// (`store::commits`) on a thread of their own, and close them a tick after
/// the last subscription goes.
async fn settled(pid: u32, db: &Path, want: usize) -> usize {
    for _ in 0..200 {
        if connections(pid, db) == want {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    connections(pid, db)
}

fn store() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cairn.db");
    (dir, db)
}

/// The next notification within `wait`, if any.
async fn next(
    rx: &mut UnboundedReceiver<(String, Instant)>,
    wait: Duration,
) -> Option<(String, Instant)> {
    tokio::time::timeout(wait, rx.recv()).await.ok().flatten()
}

/// Drops notifications already queued (e.g. from the set-up writes).
fn drain(rx: &mut UnboundedReceiver<(String, Instant)>) {
    while rx.try_recv().is_ok() {}
}

async fn read_text(c: &Client, uri: &str) -> Result<String, ServiceError> {
    let r = c.read_resource(ReadResourceRequestParams::new(uri)).await?;
    assert_eq!(r.contents.len(), 1);
    match &r.contents[0] {
        ResourceContents::TextResourceContents {
            text,
            uri: got,
            mime_type,
            ..
        } => {
            assert_eq!(got, uri);
            assert_eq!(mime_type.as_deref(), Some("text/plain"));
            Ok(text.clone())
        }
        other => panic!("not text: {other:?}"),
    }
}

fn error_of(e: ServiceError) -> (ErrorCode, String) {
    match e {
        ServiceError::McpError(e) => (e.code, e.message.to_string()),
        other => panic!("not an MCP error: {other:?}"),
    }
}

#[tokio::test(flavor = "current_thread")]
async fn a_subscribed_task_hears_another_process_and_nothing_else() {
    let (dir, db) = store();
    let a = create(&db, "alpha task").await;
    let b = create(&db, "beta task").await;
    let (c, mut rx, pid) = spawn_pid(&db, "claude-code", &dir.path().join("err.log")).await;
    let uri_a = format!("cairn://tasks/{a}");
    read_text(&c, &uri_a).await.unwrap();
    // No subscription: no watcher, no connection of its own. With one: the
    // watcher's reader and the process's commit signal.
    let idle = connections(pid, &db);
    c.subscribe(SubscribeRequestParams::new(uri_a.clone()))
        .await
        .unwrap();
    assert_eq!(settled(pid, &db, idle + 2).await, idle + 2);

    // Seven writes to A from another process: each notifies A within 1 s.
    // Each write starts at another phase of the 10 ms commit signal, so the
    // latencies sample the whole interval.
    let mut latencies = Vec::new();
    for round in 0..7u64 {
        drain(&mut rx);
        tokio::time::sleep(Duration::from_millis(round * 37 % 250)).await;
        observe(&db, &a, &format!("round {round}")).await;
        let written = Instant::now();
        let (uri, at) = next(&mut rx, Duration::from_secs(1))
            .await
            .unwrap_or_else(|| panic!("no notification within 1 s in round {round}"));
        assert_eq!(uri, uri_a);
        latencies.push(at.saturating_duration_since(written));
        // Exactly one per write.
        assert_eq!(next(&mut rx, Duration::from_millis(600)).await, None);
    }
    let mut ms: Vec<f64> = latencies.iter().map(|d| d.as_secs_f64() * 1e3).collect();
    ms.sort_by(f64::total_cmp);
    println!(
        "notification latency after the writer exited, ms: {ms:.1?} (median {:.1}, max {:.1})",
        ms[ms.len() / 2],
        ms[ms.len() - 1]
    );

    // A write to B (not subscribed, not A's child or target): silence.
    observe(&db, &b, "unrelated").await;
    assert_eq!(next(&mut rx, Duration::from_millis(1500)).await, None);

    // Subscribing B too: a write to B names B only.
    let uri_b = format!("cairn://tasks/{b}");
    c.subscribe(SubscribeRequestParams::new(uri_b.clone()))
        .await
        .unwrap();
    // Still one watcher for the session.
    assert_eq!(connections(pid, &db), idle + 2);
    observe(&db, &b, "now heard").await;
    assert_eq!(
        next(&mut rx, Duration::from_secs(1)).await.map(|n| n.0),
        Some(uri_b.clone())
    );
    assert_eq!(next(&mut rx, Duration::from_millis(600)).await, None);

    // A link from B to A names both (A is its target).
    let link = json!({"task_id": b, "target_id": a, "edge_type": "related"}).to_string();
    cairn(&db, &["call", "task_link", &link]).await;
    let mut got = vec![
        next(&mut rx, Duration::from_secs(1)).await.unwrap().0,
        next(&mut rx, Duration::from_secs(1)).await.unwrap().0,
    ];
    got.sort();
    assert_eq!(got, vec![uri_a.clone(), uri_b.clone()]);

    // After unsubscribing both, writes to either stay silent.
    c.unsubscribe(UnsubscribeRequestParams::new(uri_a.clone()))
        .await
        .unwrap();
    c.unsubscribe(UnsubscribeRequestParams::new(uri_b.clone()))
        .await
        .unwrap();
    drain(&mut rx);
    observe(&db, &a, "after unsubscribe").await;
    observe(&db, &b, "after unsubscribe").await;
    assert_eq!(next(&mut rx, Duration::from_millis(1500)).await, None);
    // The last subscription gone, the watcher stopped and closed its
    // connection, and the commit signal with it.
    assert_eq!(settled(pid, &db, idle).await, idle);

    // Unknown tasks and foreign URIs are refused.
    let e = c
        .subscribe(SubscribeRequestParams::new("cairn://tasks/nope"))
        .await
        .unwrap_err();
    assert_eq!(
        error_of(e),
        (ErrorCode::RESOURCE_NOT_FOUND, "No task nope.".into())
    );
    let e = c
        .subscribe(SubscribeRequestParams::new("https://example.com/x"))
        .await
        .unwrap_err();
    assert_eq!(
        error_of(e),
        (
            ErrorCode::RESOURCE_NOT_FOUND,
            "Unknown resource https://example.com/x.".into()
        )
    );
    c.cancel().await.unwrap();
}

#[tokio::test(flavor = "current_thread")]
async fn a_subscribed_view_notifies_only_when_its_answer_changes() {
    let (dir, db) = store();
    let a = create(&db, "alpha task").await;
    create(&db, "beta task").await;
    cairn(
        &db,
        &[
            "query",
            "--write",
            r#"(define! "stuck" (-> (all) (:where (= :status "blocked"))))"#,
        ],
    )
    .await;
    let (c, mut rx) = spawn(&db, "claude-code", &dir.path().join("err.log")).await;
    let uri = "cairn://views/stuck";
    assert_eq!(read_text(&c, uri).await.unwrap(), "No matching tasks.");
    c.subscribe(SubscribeRequestParams::new(uri)).await.unwrap();

    // An observation leaves the answer unchanged: silence.
    observe(&db, &a, "still fine").await;
    assert_eq!(next(&mut rx, Duration::from_millis(1500)).await, None);

    // Blocking A changes it: one notification within 1 s, then the new text.
    let status = json!({"task_id": a, "status": "blocked"}).to_string();
    cairn(&db, &["call", "task_update_status", &status]).await;
    let written = Instant::now();
    let (got, at) = next(&mut rx, Duration::from_secs(1)).await.unwrap();
    assert_eq!(got, uri);
    println!(
        "view notification latency: {:.1} ms",
        at.saturating_duration_since(written).as_secs_f64() * 1e3
    );
    assert_eq!(
        read_text(&c, uri).await.unwrap(),
        format!("1 task:\n- {a} (blocked)")
    );
    assert_eq!(next(&mut rx, Duration::from_millis(600)).await, None);

    // Unsubscribed: unblocking changes the answer, nobody is told.
    c.unsubscribe(UnsubscribeRequestParams::new(uri))
        .await
        .unwrap();
    let status = json!({"task_id": a, "status": "active"}).to_string();
    cairn(&db, &["call", "task_update_status", &status]).await;
    assert_eq!(next(&mut rx, Duration::from_millis(1500)).await, None);

    // An unknown view cannot be subscribed.
    let e = c
        .subscribe(SubscribeRequestParams::new("cairn://views/nope"))
        .await
        .unwrap_err();
    let (code, message) = error_of(e);
    assert_eq!(code, ErrorCode::RESOURCE_NOT_FOUND);
    assert!(
        message.starts_with("Query error: Unknown named query nope. Available: "),
        "{message}"
    );
    c.cancel().await.unwrap();
}

#[tokio::test(flavor = "current_thread")]
async fn templates_reads_and_completion() {
    let (dir, db) = store();
    let a = create(&db, "alpha task").await;
    let b = create(&db, "beta task").await;
    let g = create(&db, "gamma task").await;
    let done = json!({"task_id": a, "status": "completed"}).to_string();
    cairn(&db, &["call", "task_update_status", &done]).await;
    let meta = json!({"task_id": b, "key": "owner", "value": "ana"}).to_string();
    cairn(&db, &["call", "task_set_metadata", &meta]).await;
    cairn(
        &db,
        &[
            "query",
            "--write",
            r#"(define! "stuck" (-> (all) (:where (= :status "blocked"))))"#,
        ],
    )
    .await;
    let (c, _rx) = spawn(&db, "claude-code", &dir.path().join("err.log")).await;

    // Advertised: resources with subscribe, completions.
    let info = c.peer_info().unwrap();
    let res = info.capabilities.resources.as_ref().unwrap();
    assert_eq!(res.subscribe, Some(true));
    assert!(info.capabilities.completions.is_some());

    let templates = c.list_all_resource_templates().await.unwrap();
    assert_eq!(
        serde_json::to_value(&templates).unwrap(),
        json!([
            {
                "uriTemplate": "cairn://tasks/{slug}",
                "name": "task",
                "title": "Task state",
                "description": "A task's state: exactly what task_get returns for SLUG. Subscribe to hear when an event touching the task commits.",
                "mimeType": "text/plain"
            },
            {
                "uriTemplate": "cairn://views/{name}",
                "name": "view",
                "title": "View answer",
                "description": "A named view's answer (built-in or user): the text of (query \"NAME\") on the read surface. Subscribe to hear when the answer changes.",
                "mimeType": "text/plain"
            }
        ])
    );
    // The seven prompt resources stay.
    assert_eq!(c.list_all_resources().await.unwrap().len(), 7);

    // A task reads as task_get's block.
    let text = read_text(&c, &format!("cairn://tasks/{b}")).await.unwrap();
    assert_eq!(
        text,
        format!("{b}  [active]\n  beta task\n  metadata:\n    owner = ana")
    );
    let (tool, is_error) = call(&c, "task_get", json!({"task_id": b})).await;
    assert!(!is_error);
    assert_eq!(text, tool);
    let e = read_text(&c, "cairn://tasks/nope").await.unwrap_err();
    assert_eq!(
        error_of(e),
        (ErrorCode::RESOURCE_NOT_FOUND, "No task nope.".into())
    );

    // A view reads as (query "NAME"); builtins too.
    assert_eq!(
        read_text(&c, "cairn://views/stuck").await.unwrap(),
        "No matching tasks."
    );
    let (tool, _) = call(&c, "task_query", json!({"query": "(query \"orphans\")"})).await;
    assert_eq!(read_text(&c, "cairn://views/orphans").await.unwrap(), tool);
    assert!(tool.starts_with("3 tasks:"), "{tool}");
    let e = read_text(&c, "cairn://views/nope").await.unwrap_err();
    let (code, message) = error_of(e);
    assert_eq!(code, ErrorCode::RESOURCE_NOT_FOUND);
    assert!(
        message.starts_with("Query error: Unknown named query nope. Available: active-roots, "),
        "{message}"
    );
    assert!(message.contains(", stuck"), "{message}");
    // A name with a quote stays one string literal.
    let e = read_text(&c, "cairn://views/a%22b").await.unwrap_err();
    assert!(
        error_of(e)
            .1
            .starts_with("Query error: Unknown named query a\"b."),
    );

    // Completion: slugs by prefix, live first; view names by prefix.
    let slugs = c
        .complete_resource_argument("cairn://tasks/{slug}", "slug", "", None)
        .await
        .unwrap();
    assert_eq!(slugs.values, vec![b.clone(), g.clone(), a.clone()]);
    assert_eq!((slugs.total, slugs.has_more), (Some(3), Some(false)));
    let slugs = c
        .complete_resource_argument(
            "cairn://tasks/{slug}",
            "slug",
            format!("{}-g", today()),
            None,
        )
        .await
        .unwrap();
    assert_eq!(slugs.values, vec![g.clone()]);
    assert_eq!((slugs.total, slugs.has_more), (Some(1), Some(false)));
    let slugs = c
        .complete_resource_argument("cairn://tasks/{slug}", "slug", "x' OR 1=1 --", None)
        .await
        .unwrap();
    assert_eq!((slugs.values.len(), slugs.total), (0, Some(0)));
    let names = c
        .complete_resource_argument("cairn://views/{name}", "name", "st", None)
        .await
        .unwrap();
    assert_eq!(names.values, vec!["stale-phases", "stuck"]);
    assert_eq!((names.total, names.has_more), (Some(2), Some(false)));
    let names = c
        .complete_resource_argument("cairn://views/{name}", "name", "pl", None)
        .await
        .unwrap();
    assert_eq!(names.values, vec!["plan", "plan-frontier"]);
    // Another template or argument: nothing.
    let none = c
        .complete_resource_argument("cairn://tasks/{slug}", "name", "", None)
        .await
        .unwrap();
    assert_eq!((none.values.len(), none.total), (0, Some(0)));
    c.cancel().await.unwrap();
}

async fn call(c: &Client, tool: &str, args: serde_json::Value) -> (String, bool) {
    mcpfx::call_tool(c, tool, args).await
}

/// The agent name in the `session opened` line of `log`.
fn agent_in(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap();
    let line = text
        .lines()
        .find(|l| l.contains("session opened"))
        .unwrap_or_else(|| panic!("no session line in {text:?}"));
    line.split("agent=").nth(1).unwrap().trim().to_string()
}

fn assert_agent(got: &str, name: &str) {
    let (n, short) = got.rsplit_once('/').unwrap();
    assert_eq!(n, name, "{got}");
    assert_eq!(short.len(), 4, "{got}");
    assert!(
        short
            .chars()
            .all(|c| c.is_ascii_digit() || c.is_ascii_lowercase()),
        "{got}"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn the_stdio_agent_is_the_client_name_and_a_short_session_id() {
    let (dir, db) = store();
    let log = dir.path().join("one.log");
    let (c, _rx) = spawn(&db, "claude-code", &log).await;
    c.list_all_tools().await.unwrap();
    c.cancel().await.unwrap();
    assert_agent(&agent_in(&log), "claude-code");

    // Control characters and `/` dropped, space trimmed.
    let log2 = dir.path().join("two.log");
    let (c, _rx) = spawn(&db, " my/agent\u{7} ", &log2).await;
    c.list_all_tools().await.unwrap();
    c.cancel().await.unwrap();
    assert_agent(&agent_in(&log2), "myagent");

    // Two sessions of one client: two short ids.
    let log3 = dir.path().join("three.log");
    let (c, _rx) = spawn(&db, "claude-code", &log3).await;
    c.list_all_tools().await.unwrap();
    c.cancel().await.unwrap();
    assert_ne!(agent_in(&log), agent_in(&log3));
}

/// `cairn serve --http 127.0.0.1:0 --no-auth` on `db`; its `/mcp` URL. The
/// child is killed when the guard drops.
struct HttpServer(std::process::Child, String);

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn http_server(db: &Path) -> HttpServer {
    use std::io::{BufRead, BufReader, Read};
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
        .arg("--db")
        .arg(db)
        .args(["serve", "--http", "127.0.0.1:0", "--no-auth"])
        .env_remove("CAIRN_DB")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    std::thread::spawn(move || {
        let mut sink = Vec::new();
        let _ = err.read_to_end(&mut sink);
    });
    let start = line.find("http://").unwrap_or_else(|| panic!("{line}"));
    let url = line[start..].split(' ').next().unwrap().to_string();
    HttpServer(child, url)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_sessions_hear_only_their_own_subscriptions() {
    use rmcp::transport::StreamableHttpClientTransport;
    let (_dir, db) = store();
    let a = create(&db, "alpha task").await;
    let b = create(&db, "beta task").await;
    let server = http_server(&db);
    let connect = || async {
        let (tx, rx) = unbounded_channel();
        let listener = Listener {
            name: "http-client".into(),
            tx,
        };
        let transport = StreamableHttpClientTransport::from_uri(server.1.clone());
        (listener.serve(transport).await.unwrap(), rx)
    };
    let (one, mut rx_one) = connect().await;
    let (two, mut rx_two) = connect().await;
    let (uri_a, uri_b) = (format!("cairn://tasks/{a}"), format!("cairn://tasks/{b}"));
    one.subscribe(SubscribeRequestParams::new(uri_a.clone()))
        .await
        .unwrap();
    two.subscribe(SubscribeRequestParams::new(uri_b.clone()))
        .await
        .unwrap();
    // Let the clients' standalone SSE streams settle before writing.
    tokio::time::sleep(Duration::from_millis(300)).await;
    observe(&db, &a, "for one").await;
    assert_eq!(
        next(&mut rx_one, Duration::from_secs(1)).await.map(|n| n.0),
        Some(uri_a.clone())
    );
    assert_eq!(next(&mut rx_two, Duration::from_millis(800)).await, None);
    observe(&db, &b, "for two").await;
    assert_eq!(
        next(&mut rx_two, Duration::from_secs(1)).await.map(|n| n.0),
        Some(uri_b.clone())
    );
    assert_eq!(next(&mut rx_one, Duration::from_millis(800)).await, None);
    one.cancel().await.unwrap();
    two.cancel().await.unwrap();
}

/// Completion shows slugs and view names, what the read tools show: a
/// session without `read` is refused, like `resources/read`; a task URI
/// whose slug is empty once a depot prefix is stripped is not a resource.
#[tokio::test(flavor = "current_thread")]
async fn completion_needs_read_and_an_empty_slug_is_not_a_resource() {
    let (dir, db) = store();
    create(&db, "one visible task").await;
    let (c, _rx, _) = spawn_with(
        &db,
        "obs",
        &dir.path().join("e.log"),
        &["--grant", "observe"],
    )
    .await;
    let e = c
        .complete_resource_argument("cairn://tasks/{slug}", "slug", "", None)
        .await
        .unwrap_err();
    assert_eq!(
        error_of(e).1,
        "completion/complete needs the cairn/read capability, which this server was not granted."
    );
    c.cancel().await.unwrap();
    let (c, _rx) = spawn(&db, "reader", &dir.path().join("f.log")).await;
    for uri in ["cairn://tasks/:", "cairn://tasks/x:", "cairn://tasks/%3A"] {
        let e = read_text(&c, uri).await.unwrap_err();
        assert_eq!(error_of(e).1, format!("Unknown resource {uri}."), "{uri}");
    }
    c.cancel().await.unwrap();
}

/// A claim that lapses makes no event, yet a subscribed task's text loses
/// its `claimed:` line then: the watcher compares live claims on its 5 s
/// tick and notifies (spec/tq.md §9 "Where it shows").
#[tokio::test(flavor = "current_thread")]
async fn a_subscribed_task_hears_its_claim_lapse() {
    let (dir, db) = store();
    let a = create(&db, "leased task").await;
    let b = create(&db, "other leased task").await;
    let claim = |slug: &str| format!("(-> (node \"{slug}\") (:claim! 3) (:ids))");
    let start = Instant::now();
    cairn(&db, &["--as", "ana", "query", "--write", &claim(&a)]).await;
    let (c, mut rx) = spawn(&db, "watcher", &dir.path().join("e.log")).await;
    let uri = format!("cairn://tasks/{a}");
    c.subscribe(SubscribeRequestParams::new(uri.clone()))
        .await
        .unwrap();
    assert!(
        read_text(&c, &uri)
            .await
            .unwrap()
            .contains("\n  claimed: ana until ")
    );
    // b's claim is an event on an unsubscribed task: nothing for a.
    cairn(&db, &["--as", "bob", "query", "--write", &claim(&b)]).await;
    let (got, at) = next(&mut rx, Duration::from_secs(12))
        .await
        .expect("a notification once the lease ran out");
    assert_eq!(got, uri);
    assert!(
        at.duration_since(start) >= Duration::from_secs(2),
        "too early"
    );
    assert!(!read_text(&c, &uri).await.unwrap().contains("claimed:"));
    assert!(
        next(&mut rx, Duration::from_secs(6)).await.is_none(),
        "only once"
    );
    c.cancel().await.unwrap();
}
