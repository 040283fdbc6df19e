//! Roots and logging over the real stdio with rmcp's client (spec/mcp.md
//! "Wave 2": Roots, Logging): a client launched from `/` that declares a root
//! inside a repository writes to that repository's store, follows
//! `roots/list_changed`, and receives cairn's diagnostics as
//! `notifications/message` at the level it set.
#![allow(deprecated)] // rmcp marks roots and logging deprecated (SEP-2577).

use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, ListRootsResult, LoggingLevel,
    LoggingMessageNotificationParam, Root, SetLevelRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::process::Command;

/// A client that declares roots (the URIs in `roots`) and records log
/// notifications.
#[derive(Clone, Default)]
struct RootsClient {
    roots: Arc<Mutex<Vec<String>>>,
    logs: Arc<Mutex<Vec<LoggingMessageNotificationParam>>>,
}

impl ClientHandler for RootsClient {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::builder()
                .enable_roots()
                .enable_roots_list_changed()
                .build(),
            Implementation::new("roots-test", "0"),
        )
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        let roots = self.roots.lock().unwrap().iter().map(Root::new).collect();
        Ok(ListRootsResult::new(roots))
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.logs.lock().unwrap().push(params);
    }
}

fn file_uri(p: &Path) -> String {
    format!("file://{}", p.display().to_string().replace(' ', "%20"))
}

/// A repository at `<tmp>/my repo` (a space, so the URI is percent-encoded).
fn repo(tmp: &tempfile::TempDir) -> std::path::PathBuf {
    let dir = tmp.path().join("my repo");
    std::fs::create_dir_all(dir.join(".git")).unwrap();
    dir
}

fn events(db: &Path) -> i64 {
    cairn::store::Store::open(db)
        .unwrap()
        .event_count()
        .unwrap()
}

async fn spawn(home: &Path, client: RootsClient) -> RunningService<RoleClient, RootsClient> {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cairn"));
    cmd.arg("serve")
        .current_dir("/")
        .env("HOME", home)
        .env_remove("XDG_DATA_HOME")
        .env_remove("CAIRN_DB");
    let (transport, _) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    client.serve(transport).await.unwrap()
}

async fn call(c: &RunningService<RoleClient, RootsClient>, tool: &str, args: Value) -> String {
    let res = c
        .call_tool(
            rmcp::model::CallToolRequestParams::new(tool.to_string())
                .with_arguments(args.as_object().unwrap().clone()),
        )
        .await
        .unwrap();
    assert_ne!(res.is_error, Some(true), "{tool}: {res:?}");
    res.content
        .iter()
        .filter_map(|b| b.as_text().map(|t| t.text.clone()))
        .collect()
}

#[tokio::test]
async fn a_client_launched_from_root_writes_to_its_roots_store_and_follows_changes() {
    let home = tempfile::tempdir().unwrap();
    let a_tmp = tempfile::tempdir().unwrap();
    let b_tmp = tempfile::tempdir().unwrap();
    let a = repo(&a_tmp);
    let b = repo(&b_tmp);
    let client = RootsClient::default();
    client.roots.lock().unwrap().push(file_uri(&a));
    let c = spawn(home.path(), client.clone()).await;
    let created = call(&c, "task_create", json!({"name": "root selected store"})).await;
    assert!(created.starts_with("Created "), "{created}");
    assert!(created.ends_with("-root-selected-store."), "{created}");
    assert_eq!(events(&a.join(".cairn/cairn.db")), 1);
    let scratch = home.path().join(".local/share/cairn/cairn.db");
    assert_eq!(events(&scratch), 0);

    // The roots change: the next call re-resolves to the second repository.
    *client.roots.lock().unwrap() = vec![file_uri(&b), file_uri(&a)];
    c.notify_roots_list_changed().await.unwrap();
    let created = call(&c, "task_create", json!({"name": "second repository work"})).await;
    assert!(created.ends_with("-second-repository-work."), "{created}");
    assert_eq!(events(&b.join(".cairn/cairn.db")), 1);
    assert_eq!(events(&a.join(".cairn/cairn.db")), 1);

    // No file root any more: the launch directory's store (global scratch from `/`).
    *client.roots.lock().unwrap() = vec!["https://example.com/x".to_string()];
    c.notify_roots_list_changed().await.unwrap();
    call(&c, "task_create", json!({"name": "scratch note"})).await;
    assert_eq!(events(&scratch), 1);
    assert_eq!(events(&b.join(".cairn/cairn.db")), 1);
    c.cancel().await.unwrap();
}

#[tokio::test]
async fn diagnostics_reach_the_client_at_the_level_it_sets() {
    let home = tempfile::tempdir().unwrap();
    let a_tmp = tempfile::tempdir().unwrap();
    let a = repo(&a_tmp);
    let client = RootsClient::default();
    client.roots.lock().unwrap().push(file_uri(&a));
    let c = spawn(home.path(), client.clone()).await;
    let caps = c.peer_info().unwrap().capabilities.clone();
    assert!(caps.logging.is_some());
    // Default level warning: an ordinary call logs nothing to the client.
    call(&c, "task_create", json!({"name": "quiet call"})).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(client.logs.lock().unwrap().len(), 0);
    c.set_level(SetLevelRequestParams::new(LoggingLevel::Debug))
        .await
        .unwrap();
    call(&c, "task_get", json!({})).await;
    let mut got = Vec::new();
    for _ in 0..50 {
        got = client.logs.lock().unwrap().clone();
        if !got.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].level, LoggingLevel::Debug);
    assert_eq!(got[0].logger.as_deref(), Some("cairn"));
    assert_eq!(got[0].data, json!("tool call tool=task_get is_error=false"));
    c.cancel().await.unwrap();
}
