//! Several `cairn serve --http` processes on one PostgreSQL database
//! (issue 24; docs/team.md "Several servers behind a load balancer"):
//!
//! - `GET /healthz` answers 200 while the database answers and 503 while
//!   its cluster is stopped, and 200 again once it is back, when a
//!   stateless agent's next request is served on a new connection;
//! - SIGTERM: the request in flight (a write waiting on the project's
//!   write lock) completes, a new request gets 503 with a sentence, an
//!   open session and a board's live stream hear why they close, and the
//!   process exits 0;
//! - a session on server A hears a write made through server B; when A's
//!   change listener loses its database connection it listens again and
//!   tells the session that changes may have been missed (and announces
//!   the subscribed task; a 2026-07-28 `subscriptions/listen` stream on A
//!   hears its URI announced too), and hears B's next write; `cairn watch` on
//!   PostgreSQL says the same on stderr and keeps watching;
//! - a view defined through A answers through B, as a query and as a
//!   resource.

#![allow(deprecated)] // rmcp marks logging and resources/subscribe deprecated; 2025-11-25 clients use them.

mod common;
mod fleet;
mod mcpfx;

use std::time::{Duration, Instant};

use common::pg;
use fleet::{Server, cairn, get, post_ping, psql, schema_of, session, stateless, token};
use rmcp::model::{
    LoggingMessageNotificationParam, ReadResourceRequestParams, ResourceUpdatedNotificationParam,
    SubscribeRequestParams, SubscriptionFilter,
};
use rmcp::service::NotificationContext;
use rmcp::{ClientHandler, RoleClient};
use serde_json::json;
use tokio::sync::mpsc;

/// What a 2025-11-25 session heard: `log: TEXT` or `updated: URI`.
#[derive(Clone)]
struct Ears(mpsc::UnboundedSender<String>);

impl ClientHandler for Ears {
    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let text = params.data.as_str().unwrap_or_default().to_string();
        let _ = self.0.send(format!("log: {text}"));
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.0.send(format!("updated: {}", params.uri));
    }
}

/// Waits (at most 60 s: a loaded CI machine) for a message equal to
/// `want`; the time it took.
async fn hear(rx: &mut mpsc::UnboundedReceiver<String>, want: &str) -> Duration {
    let t0 = Instant::now();
    loop {
        match tokio::time::timeout(Duration::from_secs(60), rx.recv()).await {
            Ok(Some(m)) if m == want => return t0.elapsed(),
            Ok(Some(_)) => {}
            other => panic!("never heard {want:?}: {other:?}"),
        }
    }
}

/// Waits (at most 60 s) for the next notification of a
/// `subscriptions/listen` stream, which must name `uri`.
async fn heard_on(stream: &mut rmcp::service::Subscription, uri: &str) {
    let next = tokio::time::timeout(Duration::from_secs(60), stream.next())
        .await
        .expect("a notification within 60 s");
    let text = format!("{next:?}");
    assert!(text.contains(uri), "{text}");
}

/// The next line of `r` (at most 60 s), without its newline.
async fn line<R: tokio::io::AsyncBufRead + Unpin>(r: &mut R) -> String {
    use tokio::io::AsyncBufReadExt;
    let mut s = String::new();
    tokio::time::timeout(Duration::from_secs(60), r.read_line(&mut s))
        .await
        .expect("a line within 60 s")
        .unwrap();
    s.trim_end().to_string()
}

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn healthz_follows_the_database() {
    // A cluster of its own: this test stops it.
    let c = match tokio::task::block_in_place(|| pg::start_named("health")) {
        Ok(c) => c,
        Err(why) => {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "PostgreSQL could not start: {why}"
            );
            eprintln!("skipped (not CI): {why}");
            return;
        }
    };
    let url = pg::url_in(&c);
    let dir = project();
    let tok = token(&url, dir.path(), "lb");
    let srv = Server::start(&url, dir.path());
    let healthz = format!("{}/healthz", srv.base);
    let agent = stateless(&srv.mcp(), &tok, "lb").await;
    let count = json!({"query": "(-> (all) (:count))"});
    assert_eq!(
        mcpfx::call_tool(&agent, "task_query", count.clone()).await,
        ("0".to_string(), false)
    );
    // No token, no data: a sentence.
    assert_eq!(get(&healthz).await, (200, "ok\n".to_string()));
    let r = reqwest::Client::new().post(&healthz).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 405);
    tokio::task::block_in_place(|| pg::stop(&c)).unwrap();
    let t0 = Instant::now();
    assert_eq!(
        get(&healthz).await,
        (
            503,
            "The database does not answer; see the server's log.\n".to_string()
        )
    );
    println!("healthz said 503 in {:?} after the stop", t0.elapsed());
    // `/mcp` cannot read its tokens either: 503 (a balancer retries), with
    // a sentence that names the store, not a file.
    let r = reqwest::Client::new()
        .post(srv.mcp())
        .header("Authorization", format!("Bearer {tok}"))
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 503);
    assert_eq!(
        r.text().await.unwrap(),
        "The server cannot read its tokens from the store just now; try again (see its log).\n"
    );
    tokio::task::block_in_place(|| pg::start_again(&c)).unwrap();
    // The probe connects again by itself.
    let t0 = Instant::now();
    let mut last = (0, String::new());
    while t0.elapsed() < Duration::from_secs(60) {
        last = get(&healthz).await;
        if last.0 == 200 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(last, (200, "ok\n".to_string()));
    println!("healthz said 200 again {:?} after the start", t0.elapsed());
    // The stateless agent's next request gets a server on a new connection.
    assert_eq!(
        mcpfx::call_tool(&agent, "task_query", count).await,
        ("0".to_string(), false)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_finishes_the_request_in_flight_and_refuses_new_ones() {
    let Some(url) = tokio::task::block_in_place(pg::url) else {
        return;
    };
    let dir = project();
    let tok = token(&url, dir.path(), "builder");
    let mut srv = Server::start(&url, dir.path());
    // An open 2025-11-25 session hears why it closes.
    let (tx, mut heard) = mpsc::unbounded_channel();
    let old = session(&srv.mcp(), &tok, Ears(tx)).await;
    let _ = old.list_tools(None).await.unwrap();
    let agent = stateless(&srv.mcp(), &tok, "builder").await;
    // The session's own stream (its GET) is open once it hears a change:
    // a server's message before the client opened that stream has nowhere
    // to go (the client would not hear the farewell either).
    let early = format!("{}-early-work", mcpfx::today());
    let (text, _) = mcpfx::call_tool(&agent, "task_create", json!({"name": "early work"})).await;
    assert_eq!(text, format!("Created {early}."));
    let uri = format!("cairn://tasks/{early}");
    old.subscribe(SubscribeRequestParams::new(uri.clone()))
        .await
        .unwrap();
    let (text, _) =
        mcpfx::call_tool(&agent, "observe", json!({"task_id": early, "text": "seen"})).await;
    assert_eq!(text, format!("Observed on {early}."));
    hear(&mut heard, &format!("updated: {uri}")).await;
    // And a board's live stream hears it too.
    let mut board = reqwest::Client::new()
        .get(format!("{}/board/events", srv.base))
        .header("authorization", format!("Bearer {tok}"))
        .send()
        .await
        .unwrap();
    assert_eq!(board.status().as_u16(), 200);
    // Hold the project's write lock, so the next write waits in flight.
    let schema = schema_of(&url);
    let mut lock = tokio::task::block_in_place(|| psql(&url));
    tokio::task::block_in_place(|| {
        lock.execute(
            "SELECT pg_advisory_lock(hashtext('cairn.write.' || $1::text))",
            &[&schema],
        )
        .unwrap()
    });
    let in_flight = tokio::spawn(async move {
        let r = mcpfx::call_tool(&agent, "task_create", json!({"name": "late work"})).await;
        (r, agent)
    });
    // Until the write waits on the lock.
    let t0 = Instant::now();
    loop {
        let waiting: i64 = tokio::task::block_in_place(|| {
            lock.query_one(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted",
                &[],
            )
            .unwrap()
            .get(0)
        });
        if waiting > 0 {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "the write never waited"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // SAFETY: kill(2) on our own child's pid.
    assert_eq!(
        unsafe { libc::kill(srv.child.id() as i32, libc::SIGTERM) },
        0
    );
    let line = tokio::task::block_in_place(|| srv.wait_line("stopping", Duration::from_secs(60)));
    assert_eq!(
        line,
        "cairn serve: stopping; finishing 2 requests in flight, answering new ones 503"
    );
    // A new request, and the health check: 503 with a sentence.
    let shutting = "This cairn server is shutting down (a restart); send the request again, to another server.\n";
    assert_eq!(
        post_ping(&srv.mcp(), &tok).await,
        (503, shutting.to_string())
    );
    assert_eq!(
        get(&format!("{}/healthz", srv.base)).await,
        (503, shutting.to_string())
    );
    // Let the write through: it completes, and the process exits 0.
    tokio::task::block_in_place(|| {
        lock.execute(
            "SELECT pg_advisory_unlock(hashtext('cairn.write.' || $1::text))",
            &[&schema],
        )
        .unwrap()
    });
    let ((text, failed), _agent) = in_flight.await.unwrap();
    let slug = format!("{}-late-work", mcpfx::today());
    assert_eq!((text, failed), (format!("Created {slug}."), false));
    tokio::task::block_in_place(|| drop(lock));
    let status = tokio::task::block_in_place(|| srv.child.wait()).unwrap();
    assert_eq!(status.code(), Some(0));
    // The board's stream ended with the reason.
    let mut events = String::new();
    while let Ok(Some(chunk)) = board.chunk().await {
        events.push_str(&String::from_utf8_lossy(&chunk));
    }
    assert!(
        events.ends_with("event: closing\ndata: {\"reason\": \"This cairn server is shutting down (a restart); the board reconnects by itself.\"}\n\n"),
        "{events}"
    );
    // The session heard the reason before its stream closed.
    let closing = "log: This cairn server is shutting down (a restart); its sessions and streams close now. Open a new session (initialize) or send the request again; a load balancer routes it to a server that is up.";
    hear(&mut heard, closing).await;
    // The write is there.
    let (code, out, _) = cairn(&url, dir.path(), &["query", "(-> (all) (:ids))"]);
    assert_eq!((code, out), (0, format!("2 tasks:\n- {early}\n- {slug}")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listener_hears_the_other_server_and_says_when_it_may_have_missed_changes() {
    let Some(url) = tokio::task::block_in_place(pg::url) else {
        return;
    };
    let dir = project();
    let tok = token(&url, dir.path(), "ana");
    let a = Server::start(&url, dir.path());
    let b = Server::start(&url, dir.path());
    let writer = stateless(&b.mcp(), &tok, "writer").await;
    let slug = format!("{}-watched", mcpfx::today());
    let (text, _) = mcpfx::call_tool(&writer, "task_create", json!({"name": "watched"})).await;
    assert_eq!(text, format!("Created {slug}."));
    let (tx, mut heard) = mpsc::unbounded_channel();
    let reader = session(&a.mcp(), &tok, Ears(tx)).await;
    let uri = format!("cairn://tasks/{slug}");
    reader
        .subscribe(SubscribeRequestParams::new(uri.clone()))
        .await
        .unwrap();
    // A 2026-07-28 agent on A listens to the same task.
    let modern = stateless(&a.mcp(), &tok, "listener").await;
    let filter = SubscriptionFilter::builder()
        .resource_subscription(uri.clone())
        .build();
    let mut stream = modern.peer().listen(filter).await.unwrap();
    // `cairn watch` on the same schema, another process.
    let mut watch = tokio::process::Command::new(fleet::BIN)
        .args([
            "watch",
            &format!("(-> (node \"{slug}\") (:select :obs-count))"),
        ])
        .env("CAIRN_DB", &url)
        .env("HOME", dir.path())
        .current_dir(dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut out = tokio::io::BufReader::new(watch.stdout.take().unwrap());
    let mut err = tokio::io::BufReader::new(watch.stderr.take().unwrap());
    assert_eq!(line(&mut out).await, "1 task:");
    assert_eq!(line(&mut out).await, format!("- {slug}  obs-count=0"));
    // A write through B is heard on A.
    let (text, _) =
        mcpfx::call_tool(&writer, "observe", json!({"task_id": slug, "text": "one"})).await;
    assert_eq!(text, format!("Observed on {slug}."));
    let took = hear(&mut heard, &format!("updated: {uri}")).await;
    println!("A heard B's write after {took:?}");
    heard_on(&mut stream, &uri).await;
    // Every listening connection loses the database.
    let mut admin = tokio::task::block_in_place(|| psql(&url));
    let cut: i64 = tokio::task::block_in_place(|| {
        admin
            .query_one(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = 'cairn-listen'",
                &[],
            )
            .unwrap()
            .get(0)
    });
    tokio::task::block_in_place(|| drop(admin));
    // A's signal, its session's counter, and `cairn watch`.
    assert!(cut >= 3, "{cut} listeners");
    hear(
        &mut heard,
        "log: cairn's change listener lost its database connection and reconnected; changes may have been missed, so every subscribed resource is announced as updated: read them again.",
    )
    .await;
    hear(&mut heard, &format!("updated: {uri}")).await;
    // The stream hears every URI it listens to announced.
    heard_on(&mut stream, &uri).await;
    loop {
        let l = line(&mut err).await;
        if l == "cairn watch: listening again; changes made meanwhile may have been missed, so the query runs again."
        {
            break;
        }
        assert!(
            l.starts_with("cairn watch: lost the database connection ("),
            "{l}"
        );
    }
    // And B's next write is heard again, by both.
    let (text, _) =
        mcpfx::call_tool(&writer, "observe", json!({"task_id": slug, "text": "two"})).await;
    assert_eq!(text, format!("Observed on {slug}."));
    let took = hear(&mut heard, &format!("updated: {uri}")).await;
    println!("A heard B's write after the reconnection after {took:?}");
    heard_on(&mut stream, &uri).await;
    loop {
        let l = line(&mut out).await;
        if l == format!("- {slug}  obs-count=2") {
            break;
        }
    }
    let _ = watch.kill().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_view_defined_through_one_server_answers_through_the_other() {
    let Some(url) = tokio::task::block_in_place(pg::url) else {
        return;
    };
    let dir = project();
    let tok = token(&url, dir.path(), "ana");
    let a = Server::start(&url, dir.path());
    let b = Server::start(&url, dir.path());
    let on_a = stateless(&a.mcp(), &tok, "a").await;
    let on_b = stateless(&b.mcp(), &tok, "b").await;
    for name in ["cache one", "cache two", "unrelated chore"] {
        let (text, failed) = mcpfx::call_tool(&on_a, "task_create", json!({"name": name})).await;
        assert!(!failed, "{text}");
    }
    let (text, failed) = mcpfx::call_tool(
        &on_a,
        "task_query_write",
        json!({"query": "(define! \"cache-work\" (-> (active) (:where (matches :slug \"cache\"))))"}),
    )
    .await;
    assert!(!failed, "{text}");
    let d = mcpfx::today();
    let want = format!("2 tasks:\n- {d}-cache-one\n- {d}-cache-two");
    let (text, failed) = mcpfx::call_tool(
        &on_b,
        "task_query",
        json!({"query": "(-> (query \"cache-work\") (:ids))"}),
    )
    .await;
    assert_eq!((text, failed), (want.clone(), false));
    let read = on_b
        .read_resource(ReadResourceRequestParams::new("cairn://views/cache-work"))
        .await
        .unwrap();
    let body = serde_json::to_value(&read.contents).unwrap().to_string();
    assert!(body.contains(&format!("{d}-cache-two")), "{body}");
    // Undefined through B: gone through A.
    let (_, failed) = mcpfx::call_tool(
        &on_b,
        "task_query_write",
        json!({"query": "(undefine! \"cache-work\")"}),
    )
    .await;
    assert!(!failed);
    let (text, failed) = mcpfx::call_tool(
        &on_a,
        "task_query",
        json!({"query": "(query \"cache-work\")"}),
    )
    .await;
    assert!(failed, "{text}");
}
