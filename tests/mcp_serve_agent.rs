//! `cairn serve` over stdio names its session as the verbs name their
//! agent (issue 27): `--as`, else `CAIRN_AGENT`, else the client's name
//! plus a session id. Two servers on one project with different
//! `CAIRN_AGENT` values claim through `task_query_write`; each claim is
//! recorded under its server's `CAIRN_AGENT`, not `client/xxxx`.

use std::path::Path;
use std::process::Stdio;

use rmcp::ServiceExt;
use rmcp::transport::TokioChildProcess;
use serde_json::json;

mod mcpfx;

use mcpfx::Client;

/// `cairn serve ARGS` over stdio in `dir` with `CAIRN_AGENT` = `agent`
/// (unset when `None`).
async fn spawn(dir: &Path, agent: Option<&str>, args: &[&str]) -> Client {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn"));
    cmd.arg("serve")
        .args(args)
        .current_dir(dir)
        .env_remove("CAIRN_DB")
        .env_remove("CAIRN_AGENT");
    if let Some(a) = agent {
        cmd.env("CAIRN_AGENT", a);
    }
    let (transport, _) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    Client(().serve(transport).await.unwrap())
}

fn claim(slug: &str) -> serde_json::Value {
    json!({"query": format!("(-> (node \"{slug}\") (:claim! 900) (:select :claimed-by))")})
}

#[tokio::test]
async fn serve_claims_under_cairn_agent() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    let d = mcpfx::today();
    let (a, b, c) = (
        format!("{d}-tune-search-ranking"),
        format!("{d}-tokenizer-fix"),
        format!("{d}-prefix-queries"),
    );
    let ana = spawn(dir.path(), Some("ana"), &[]).await;
    let bob = spawn(dir.path(), Some("bob"), &[]).await;
    for name in ["tune search ranking", "tokenizer fix", "prefix queries"] {
        ana.ok("task_create", json!({ "name": name })).await;
    }
    assert_eq!(
        ana.ok("task_query_write", claim(&a)).await,
        format!("1 task:\n- {a}  claimed-by=ana")
    );
    assert_eq!(
        bob.ok("task_query_write", claim(&b)).await,
        format!("1 task:\n- {b}  claimed-by=bob")
    );
    // bob cannot take ana's task: the claim keeps only what bob now holds.
    assert_eq!(
        bob.ok("task_query_write", claim(&a)).await,
        "No matching tasks."
    );
    assert_eq!(
        bob.ok("task_query", json!({"query": "(-> (mine) (:ids))"}))
            .await,
        format!("1 task:\n- {b}")
    );
    // --as wins over CAIRN_AGENT.
    let cy = spawn(dir.path(), Some("ana"), &["--as", "cy"]).await;
    assert_eq!(
        cy.ok("task_query_write", claim(&c)).await,
        format!("1 task:\n- {c}  claimed-by=cy")
    );
    cy.close().await;
    // Without either, the session is named by the client: not ana, bob, cy.
    let anon = spawn(dir.path(), None, &[]).await;
    let all = anon
        .ok(
            "task_query",
            json!({"query": "(-> (all) (:where (has :claimed-by)) (:select :claimed-by))"}),
        )
        .await;
    assert_eq!(
        all,
        format!("3 tasks:\n- {c}  claimed-by=cy\n- {b}  claimed-by=bob\n- {a}  claimed-by=ana")
    );
    anon.ok("task_create", json!({"name": "ranking benchmark"}))
        .await;
    let who = anon
        .ok("task_query_write", claim(&format!("{d}-ranking-benchmark")))
        .await;
    // rmcp's client calls itself `rmcp`: `rmcp/` and a 4-letter session id.
    let prefix = format!("1 task:\n- {d}-ranking-benchmark  claimed-by=rmcp/");
    let id = who.strip_prefix(&prefix).unwrap_or_else(|| panic!("{who}"));
    assert_eq!(id.chars().count(), 4, "{who}");
    anon.close().await;
    ana.close().await;
    bob.close().await;
}
