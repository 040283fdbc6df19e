//! `cairn serve --http` on PostgreSQL (spec/team.md): two server processes
//! on one database share the schema's `tokens` table — a token created once
//! opens a session on either, the seed story runs with the exact texts,
//! and a revocation from a third process is honoured by both servers on
//! their next request.

mod common;
mod mcpfx;

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use common::pg;
use mcpfx::{Client, seed_story};
use serde_json::json;

fn cairn(url: &str, dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(args)
        .env("CAIRN_DB", url)
        .env("HOME", dir)
        .current_dir(dir)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).trim_end().to_string(),
        String::from_utf8_lossy(&out.stderr).trim_end().to_string(),
    )
}

/// `cairn serve --http 127.0.0.1:0` on `url`; (child, MCP URL, startup line).
fn serve(url: &str, dir: &Path) -> (Child, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["serve", "--http", "127.0.0.1:0"])
        .env("CAIRN_DB", url)
        .env("HOME", dir)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while matches!(err.read(&mut buf), Ok(n) if n > 0) {}
    });
    let start = line.find("http://").unwrap_or_else(|| panic!("{line}"));
    let mcp = line[start..].split(' ').next().unwrap().to_string();
    (child, mcp, line)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_http_servers_share_tokens_and_a_revocation() {
    let Some(url) = tokio::task::block_in_place(pg::url) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    let (code, token, err) = cairn(
        &url,
        dir.path(),
        &["token", "create", "ana", "--grant", "read,observe,write"],
    );
    assert_eq!(code, 0, "{err}");
    assert!(token.starts_with("cairn_") && token.len() == 70, "{token}");
    let (code, list, _) = cairn(&url, dir.path(), &["token", "list"]);
    assert_eq!(code, 0);
    assert!(list.starts_with("ana  read,observe,write  "), "{list}");
    let (mut one, mcp1, line) = serve(&url, dir.path());
    assert!(
        line.contains("(bearer tokens from the tokens table)"),
        "{line}"
    );
    assert!(!line.contains(".tokens"), "{line}");
    let (mut two, mcp2, _) = serve(&url, dir.path());
    let a = Client::connect(&mcp1, Some(&token)).await;
    seed_story(&a, dir.path()).await;
    // The other server sees the same plan through the same token.
    let b = Client::connect(&mcp2, Some(&token)).await;
    let tasks = b
        .ok("task_query", json!({"query": "(-> (all) (:count))"}))
        .await;
    assert_eq!(tasks, "3");
    // Revoked from a third process: both servers refuse the next request.
    let (code, out, _) = cairn(&url, dir.path(), &["token", "revoke", "ana"]);
    assert_eq!((code, out.as_str()), (0, "Revoked the token ana."));
    for c in [&a, &b] {
        let res =
            c.0.call_tool(
                rmcp::model::CallToolRequestParams::new("task_query".to_string())
                    .with_arguments(json!({"query": "(all)"}).as_object().unwrap().clone()),
            )
            .await;
        assert!(res.is_err(), "a revoked token still answered: {res:?}");
    }
    let (code, _, err) = cairn(&url, dir.path(), &["token", "revoke", "ana"]);
    assert_eq!((code, err.as_str()), (2, "error: no token named \"ana\"."));
    one.kill().unwrap();
    two.kill().unwrap();
    let _ = one.wait();
    let _ = two.wait();
}
