//! Tokens in the store (issue 22; docs/connect.md "Tokens"): a side file
//! `<db>.tokens` of an earlier cairn is moved into the store's `tokens`
//! table once (renamed `.migrated`); its tokens keep working; a request
//! records `last used`; a revocation keeps the row (with its time) and frees
//! the name.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Command, Stdio};

use cairn::mcp::http_tokens;
use cairn::store::Store;

const BIN: &str = env!("CARGO_BIN_EXE_cairn");

/// Kills the server when the test ends, passed or not.
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

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

#[test]
fn a_side_file_moves_into_the_store_once_and_keeps_working() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    // A store and a side file as an earlier cairn left them.
    assert_eq!(
        cairn(
            dir.path(),
            &["call", "task_create", r#"{"name": "a first task"}"#]
        )
        .0,
        0
    );
    let db = dir.path().join(".cairn/cairn.db");
    let side = http_tokens::tokens_path(&db);
    let legacy = http_tokens::create(&side, "legacy", "read").unwrap();
    let created = http_tokens::load(&side).unwrap().tokens[0].created.clone();

    let (code, list, err) = cairn(dir.path(), &["token", "list"]);
    assert_eq!((code, err.as_str()), (0, ""));
    assert_eq!(list, format!("legacy  read  {created}"));
    assert!(!side.exists());
    let mut moved = side.as_os_str().to_owned();
    moved.push(".migrated");
    assert!(Path::new(&moved).exists());
    let rows = Store::open(&db).unwrap().token_records().unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(
        (
            rows[0].name.as_str(),
            rows[0].grants.clone(),
            rows[0].revoked.clone()
        ),
        ("legacy", vec!["read".to_string()], None)
    );
    assert_ne!(rows[0].sha256, "");
    assert!(
        !rows[0].sha256.contains(&legacy[6..]),
        "only the hash is kept"
    );

    // The migrated token works, and its use is recorded.
    let mut child = Command::new(BIN)
        .args(["serve", "--http", "127.0.0.1:0"])
        .current_dir(dir.path())
        .env_remove("CAIRN_DB")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let _server = Killed(child);
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    assert!(
        line.contains("(bearer tokens from the store's tokens table)"),
        "{line}"
    );
    std::thread::spawn(move || {
        let mut sink = Vec::new();
        let _ = err.read_to_end(&mut sink);
    });
    let url = line[line.find("http://").unwrap()..]
        .split(' ')
        .next()
        .unwrap()
        .to_string();
    let status = |token: &str| {
        let out = Command::new("curl")
            .args(["-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", &url])
            .args(["-H", &format!("Authorization: Bearer {token}")])
            .args(["-H", "Content-Type: application/json"])
            .args(["-H", "MCP-Protocol-Version: 2026-07-28"])
            .args(["-H", "Mcp-Method: server/discover"])
            .args(["-H", "Accept: application/json, text/event-stream"])
            .args(["-d", r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"curl","version":"0"}}}}"#])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    assert_eq!(status(&legacy), "200");
    let rows = Store::open(&db).unwrap().token_records().unwrap();
    let used = rows[0].last_used.clone().unwrap_or_default();
    assert_eq!(used.len(), 20, "{rows:?}");
    assert_eq!(
        cairn(dir.path(), &["token", "list"]).1,
        format!("legacy  read  {created}  last used {used}")
    );

    // Revoking keeps the row and frees the name; the old token is refused.
    assert_eq!(
        cairn(dir.path(), &["token", "revoke", "legacy"]).1,
        "Revoked the token legacy."
    );
    assert_eq!(status(&legacy), "401");
    assert_eq!(cairn(dir.path(), &["token", "list"]).1, "No tokens.");
    let (code, again, _) = cairn(
        dir.path(),
        &["token", "create", "legacy", "--grant", "read"],
    );
    assert_eq!(code, 0);
    assert_eq!(status(&again), "200");
    let rows = Store::open(&db).unwrap().token_records().unwrap();
    assert_eq!(rows.len(), 2);
    assert!(
        rows.iter().filter(|r| r.revoked.is_some()).count() == 1,
        "{rows:?}"
    );
}
