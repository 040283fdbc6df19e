//! `cairn serve --http` on PostgreSQL (spec/team.md): two server processes
//! on one database share the schema's `tokens` table — a token created once
//! opens a session on either, the seed story runs with the exact texts,
//! and a revocation from a third process is honoured by both servers on
//! their next request. Tokens keep their last use and their revocation
//! as on SQLite (a revoked name can be created again), and a stateless
//! (2026-07-28) agent's current task is kept in the database, so the
//! second server sees the task the first one made current (issue 22).

mod common;
mod mcpfx;

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use common::pg;
use mcpfx::{Client, seed_story};
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProtocolVersion};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt};
use serde_json::json;

/// `text` with every RFC 3339 UTC time (`2026-07-28T10:00:00Z`) as `TIME`.
fn times(text: &str) -> String {
    let b = text.as_bytes();
    let is_time = |w: &[u8]| {
        w.len() == 20
            && w.iter().enumerate().all(|(i, c)| match i {
                4 | 7 => *c == b'-',
                10 => *c == b'T',
                13 | 16 => *c == b':',
                19 => *c == b'Z',
                _ => c.is_ascii_digit(),
            })
    };
    let (mut out, mut i) = (String::new(), 0);
    while i < b.len() {
        if i + 20 <= b.len() && is_time(&b[i..i + 20]) {
            out.push_str("TIME");
            i += 20;
        } else {
            out.push(b[i] as char);
            i += 1;
        }
    }
    out
}

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
    assert_eq!(times(&list), "ana  read,observe,write  TIME");
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
    // A request recorded the token's last use, shown as on SQLite.
    let (code, list, _) = cairn(&url, dir.path(), &["token", "list"]);
    assert_eq!(code, 0);
    assert_eq!(
        times(&list),
        "ana  read,observe,write  TIME  last used TIME"
    );
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
    let (code, list, _) = cairn(&url, dir.path(), &["token", "list"]);
    assert_eq!((code, list.as_str()), (0, "No tokens."));
    // The revoked name is free again: a new token, the old one still refused.
    let (code, again, err) = cairn(
        &url,
        dir.path(),
        &["token", "create", "ana", "--grant", "read"],
    );
    assert_eq!(code, 0, "{err}");
    assert_ne!(again, token);
    let (code, list, _) = cairn(&url, dir.path(), &["token", "list"]);
    assert_eq!(code, 0);
    assert_eq!(times(&list), "ana  read  TIME");
    let c = Client::connect(&mcp1, Some(&again)).await;
    assert_eq!(
        c.ok("task_query", json!({"query": "(-> (all) (:count))"}))
            .await,
        "3"
    );
    let res =
        a.0.call_tool(
            rmcp::model::CallToolRequestParams::new("task_query".to_string())
                .with_arguments(json!({"query": "(all)"}).as_object().unwrap().clone()),
        )
        .await;
    assert!(res.is_err(), "the revoked token answered again: {res:?}");
    let (code, list, _) = cairn(&url, dir.path(), &["token", "list"]);
    assert_eq!(code, 0);
    assert_eq!(times(&list), "ana  read  TIME  last used TIME");
    one.kill().unwrap();
    two.kill().unwrap();
    let _ = one.wait();
    let _ = two.wait();
}

#[derive(Clone)]
struct Stateless;

impl ClientHandler for Stateless {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("stateless-agent", "1.0.0"),
        )
    }
}

/// A 2026-07-28 (stateless) client of `url` presenting `token`.
async fn stateless(
    url: &str,
    token: &str,
) -> rmcp::service::RunningService<rmcp::RoleClient, Stateless> {
    let cfg = StreamableHttpClientTransportConfig::with_uri(url.to_string())
        .auth_header(token.to_string());
    let c = Stateless
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_agents_current_task_is_shared_by_two_servers() {
    let Some(url) = tokio::task::block_in_place(pg::url) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    let (code, token, err) = cairn(
        &url,
        dir.path(),
        &[
            "token",
            "create",
            "builder",
            "--grant",
            "read,observe,write",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let (mut one, mcp1, _) = serve(&url, dir.path());
    let (mut two, mcp2, _) = serve(&url, dir.path());
    let a = stateless(&mcp1, &token).await;
    let b = stateless(&mcp2, &token).await;
    let slug = format!("{}-shared-work", mcpfx::today());
    let (text, failed) = mcpfx::call_tool(&a, "task_create", json!({"name": "shared work"})).await;
    assert_eq!((text, failed), (format!("Created {slug}."), false));
    // Through the other server, no task_id: the current task made on A.
    let (text, failed) = mcpfx::call_tool(&b, "observe", json!({"text": "seen from B"})).await;
    assert_eq!((text, failed), (format!("Observed on {slug}."), false));
    let (text, failed) =
        mcpfx::call_tool(&a, "task_query", json!({"query": "(-> (current) (:ids))"})).await;
    assert_eq!((text, failed), (format!("1 task:\n- {slug}"), false));
    a.cancel().await.unwrap();
    b.cancel().await.unwrap();
    one.kill().unwrap();
    two.kill().unwrap();
    let _ = one.wait();
    let _ = two.wait();
}
