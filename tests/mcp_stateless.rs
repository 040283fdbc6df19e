//! Identity by token for stateless 2026-07-28 HTTP requests (issue 22;
//! docs/mcp.md "Identity by token"), driven by rmcp's client in `Discover`
//! mode (every request its own POST, no session) against the built
//! `cairn serve --http`: an agent claims a task, renews it and completes it
//! across requests, `(mine)` and the current task carrying from one request
//! to the next; a second token can neither release the claim nor see it in
//! its `(mine)`; a revoked token's open `subscriptions/listen` stream is
//! closed.

mod mcpfx;

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, ProtocolVersion, SubscriptionFilter,
};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt, RoleClient};
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_cairn");

#[derive(Clone)]
struct Named;

impl ClientHandler for Named {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("stateless-agent", "1.0.0"),
        )
    }
}

type Modern = RunningService<RoleClient, Named>;

/// `cairn ARGS` in `dir`: stdout, trimmed; the command must succeed.
fn cairn(dir: &Path, args: &[&str]) -> String {
    let out = Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .env_remove("CAIRN_DB")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim_end().to_string()
}

/// `cairn serve --http 127.0.0.1:0` in `dir`; its URL. Killed on drop.
struct Server(Child, String);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start(dir: &Path) -> Server {
    let mut child = Command::new(BIN)
        .args(["serve", "--http", "127.0.0.1:0"])
        .current_dir(dir)
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
    let at = line.find("http://").unwrap_or_else(|| panic!("{line}"));
    Server(child, line[at..].split(' ').next().unwrap().to_string())
}

/// A 2026-07-28 client of `url` presenting `token`.
async fn connect(url: &str, token: &str) -> Modern {
    let cfg = StreamableHttpClientTransportConfig::with_uri(url.to_string())
        .auth_header(token.to_string());
    let c = Named
        .serve_with_lifecycle(
            StreamableHttpClientTransport::from_config(cfg),
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .unwrap();
    assert_eq!(
        c.peer_info().map(|i| i.protocol_version.clone()),
        Some(ProtocolVersion::V_2026_07_28)
    );
    c
}

async fn ok(c: &Modern, tool: &str, args: Value) -> String {
    let (text, err) = mcpfx::call_tool(c, tool, args).await;
    assert!(!err, "{tool} failed: {text}");
    text
}

fn claimed_line(task_get: &str) -> String {
    task_get
        .lines()
        .find(|l| l.starts_with("  claimed: "))
        .map(|l| l.split(" until ").next().unwrap_or("").to_string())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_agent_claims_renews_and_completes_as_its_token() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    let builder = cairn(
        dir.path(),
        &[
            "token",
            "create",
            "builder",
            "--grant",
            "read,observe,write",
        ],
    );
    let reviewer = cairn(
        dir.path(),
        &[
            "token",
            "create",
            "reviewer",
            "--grant",
            "read,observe,write",
        ],
    );
    let srv = start(dir.path());
    let b = connect(&srv.1, &builder).await;
    let r = connect(&srv.1, &reviewer).await;
    let slug = format!("{}-stateless-work", mcpfx::today());
    assert_eq!(
        ok(&b, "task_create", json!({"name": "stateless work"})).await,
        format!("Created {slug}.")
    );
    let claim =
        json!({"query": "(-> (query \"ready\") (:take 1) (:claim! 900) (:select :claimed-by))"});
    assert_eq!(
        ok(&b, "task_query_write", claim.clone()).await,
        format!("1 task:\n- {slug}  claimed-by=builder")
    );
    let mine = json!({"query": "(-> (mine) (:ids))"});
    assert_eq!(
        ok(&b, "task_query", mine.clone()).await,
        format!("1 task:\n- {slug}")
    );
    // A later request renews the claim: the same agent.
    let renew = json!({"query": "(-> (mine) (:claim! 1800) (:ids))"});
    assert_eq!(
        ok(&b, "task_query_write", renew).await,
        format!("1 task:\n- {slug}")
    );
    // The second token: nothing in its (mine), nothing to claim, and its
    // release leaves the builder's claim alone.
    assert_eq!(
        ok(&r, "task_query", mine.clone()).await,
        "No matching tasks."
    );
    assert_eq!(
        ok(&r, "task_query_write", claim).await,
        "No matching tasks."
    );
    let release = json!({"query": "(-> (node \"stateless-work\") (:release!) (:ids))"});
    assert_eq!(
        ok(&r, "task_query_write", release).await,
        format!("1 task:\n- {slug}")
    );
    let got = ok(&r, "task_get", json!({"task_id": slug})).await;
    assert_eq!(claimed_line(&got), "  claimed: builder");
    assert_eq!(
        ok(&b, "task_query", mine.clone()).await,
        format!("1 task:\n- {slug}")
    );
    // Completing it with no task_id: the current task carried over from
    // the task_create request.
    assert_eq!(
        ok(&b, "task_update_status", json!({"status": "completed"})).await,
        format!("{slug} is now completed.")
    );
    let got = ok(&b, "task_get", json!({"task_id": slug})).await;
    assert_eq!(
        got.lines().next().unwrap_or(""),
        format!("{slug}  [completed]")
    );
    b.cancel().await.unwrap();
    r.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn revoking_a_token_closes_its_listen_stream() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    let gone = cairn(
        dir.path(),
        &[
            "token",
            "create",
            "leaving",
            "--grant",
            "read,observe,write",
        ],
    );
    let stays = cairn(
        dir.path(),
        &["token", "create", "staying", "--grant", "read"],
    );
    let srv = start(dir.path());
    let a = connect(&srv.1, &gone).await;
    let k = connect(&srv.1, &stays).await;
    let slug = format!("{}-watched", mcpfx::today());
    ok(&a, "task_create", json!({"name": "watched"})).await;
    let filter = SubscriptionFilter::builder()
        .resource_subscription(format!("cairn://tasks/{slug}"))
        .build();
    let mut revoked = a.peer().listen(filter.clone()).await.unwrap();
    let mut kept = k.peer().listen(filter).await.unwrap();
    assert_eq!(
        cairn(dir.path(), &["token", "revoke", "leaving"]),
        "Revoked the token leaving."
    );
    let ended = tokio::time::timeout(Duration::from_secs(5), async {
        while let Ok(Some(_)) = revoked.next().await {}
    })
    .await;
    assert!(ended.is_ok(), "the revoked token's stream is still open");
    // The other token's stream stays open and still hears writes.
    let still = tokio::time::timeout(Duration::from_millis(1500), kept.next()).await;
    assert!(still.is_err(), "{still:?}");
    cairn(
        dir.path(),
        &[
            "call",
            "observe",
            &json!({"task_id": slug, "text": "heard"}).to_string(),
        ],
    );
    let heard = tokio::time::timeout(Duration::from_secs(3), kept.next()).await;
    assert!(matches!(heard, Ok(Ok(Some(_)))), "{heard:?}");
    k.cancel().await.unwrap();
}
