//! `cairn serve --db postgres://…` (spec/team.md): the seed story over
//! stdio with the exact texts SQLite gives, and the claims race through
//! several server processes on one database (spec/team.md "Concurrency and
//! claims": 8 agents × 50 rounds over 3 ready tasks, exactly 3 distinct
//! winners a round).

mod common;
mod mcpfx;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Stdio;

use common::pg;
use mcpfx::{Client, seed_story};
use rmcp::ServiceExt;
use rmcp::transport::TokioChildProcess;
use serde_json::json;

const CLAIM_ONE: &str = "(-> (query \"ready\") (:take 1) (:claim! 600) (:ids))";

/// `cairn serve` over stdio on the PostgreSQL store `url`, as agent `agent`.
async fn serve_pg(dir: &Path, url: &str, agent: &str) -> Client {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn"));
    cmd.args(["serve", "--as", agent])
        .current_dir(dir)
        .env("CAIRN_DB", url)
        .env("HOME", dir);
    let (transport, _) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    Client(().serve(transport).await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_seed_story_over_stdio_on_postgres() {
    let Some(url) = tokio::task::block_in_place(pg::url) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    let c = serve_pg(dir.path(), &url, "ana").await;
    seed_story(&c, dir.path()).await;
    c.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eight_server_processes_claim_three_ready_tasks_fifty_times() {
    let Some(url) = tokio::task::block_in_place(pg::url) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    let mut agents = Vec::new();
    for i in 0..8 {
        agents.push(serve_pg(dir.path(), &url, &format!("agent-{i}")).await);
    }
    let agents = std::sync::Arc::new(agents);
    for round in 0..50 {
        let mut made = BTreeSet::new();
        for k in 0..3 {
            let text = agents[0]
                .ok(
                    "task_create",
                    json!({"name": format!("round {round} task {k}")}),
                )
                .await;
            made.insert(
                text.trim_start_matches("Created ")
                    .trim_end_matches('.')
                    .to_string(),
            );
        }
        let mut jobs = Vec::new();
        for i in 0..8 {
            let agents = agents.clone();
            jobs.push(tokio::spawn(async move {
                agents[i]
                    .call("task_query_write", json!({"query": CLAIM_ONE}))
                    .await
            }));
        }
        let mut winners = BTreeSet::new();
        let mut losers = 0;
        for j in jobs {
            let (text, is_error) = j.await.unwrap();
            assert!(!is_error, "round {round}: {text}");
            match text.lines().nth(1) {
                Some(line) => {
                    assert!(
                        winners.insert(line.trim_start_matches("- ").to_string()),
                        "{text}"
                    );
                }
                None => {
                    assert_eq!(text, "No matching tasks.");
                    losers += 1;
                }
            }
        }
        assert_eq!((winners.len(), losers), (3, 5), "round {round}");
        assert_eq!(
            winners, made,
            "round {round}: the winners are the round's tasks"
        );
    }
    let agents = std::sync::Arc::try_unwrap(agents).ok().unwrap();
    for a in agents {
        a.close().await;
    }
}

/// A session on PostgreSQL ends cleanly: the client closes stdin, the
/// server exits 0 and says nothing (its connection is closed off the
/// async runtime; it used to panic on drop).
#[test]
fn a_session_on_postgres_ends_cleanly() {
    let Some(url) = pg::url() else { return };
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
        .arg("serve")
        .env("CAIRN_DB", &url)
        .env("HOME", dir.path())
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).as_ref()
        ),
        (Some(0), "")
    );
}
