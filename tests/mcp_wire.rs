//! Raw JSON-RPC over the real `cairn serve` stdio (issue 14 defects 4 and 5,
//! issue 15 `-32700` and `server/discover`): every malformed line is
//! answered and the connection keeps serving; `server/discover` and a
//! stateless 2026-07-28 call answer without `initialize`; a ping and `tools/list` answer while a long query runs; a
//! cancelled long query stops and writes nothing; the stderr stays quiet for
//! ordinary tool errors and never echoes a 100k-character tool name whole.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

mod common;

use cairn::session::Session;
use cairn::store::Store;
use serde_json::{Value, json};

/// A served connection: stdin to write lines, a channel of stdout lines.
struct Wire {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Value>,
}

impl Wire {
    fn spawn(dir: &Path) -> Wire {
        let mut w = Wire::bare(dir);
        w.send(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "wire", "version": "0"}}}),
        );
        let init = w.reply(0, Duration::from_secs(10));
        assert_eq!(init["result"]["serverInfo"]["name"], "cairn");
        w.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        w
    }

    /// A server that has not been initialised.
    fn bare(dir: &Path) -> Wire {
        Wire::with_args(dir, &["serve"])
    }

    /// A server started as `cairn ARGS`.
    fn with_args(dir: &Path, args: &[&str]) -> Wire {
        let mut child = Command::new(env!("CARGO_BIN_EXE_cairn"))
            .args(args)
            .current_dir(dir)
            .env_remove("CAIRN_DB")
            .env_remove("CAIRN_LOG")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let v: Value = serde_json::from_str(&line).expect("stdout carries JSON only");
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        let mut w = Wire {
            child,
            stdin,
            lines: rx,
        };
        w.send(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "wire", "version": "0"}}}),
        );
        let init = w.reply(0, Duration::from_secs(10));
        assert_eq!(init["result"]["serverInfo"]["name"], "cairn");
        w.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        w
    }

    fn raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(bytes).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    fn send(&mut self, v: &Value) {
        self.raw(v.to_string().as_bytes());
    }

    fn call(&mut self, id: i64, tool: &str, args: Value) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": args}}));
    }

    /// The next message with `id`; other messages are skipped.
    fn reply(&mut self, id: impl Into<Value>, within: Duration) -> Value {
        let id = id.into();
        let end = Instant::now() + within;
        loop {
            let left = end.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(v) if v.get("id") == Some(&id) => return v,
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout) => panic!("no reply to id {id} within {within:?}"),
                Err(RecvTimeoutError::Disconnected) => panic!("server closed before id {id}"),
            }
        }
    }

    /// The error `(code, id)` of the next error message.
    fn error(&mut self) -> (i64, Value, String) {
        loop {
            let v = self
                .lines
                .recv_timeout(Duration::from_secs(10))
                .expect("an error reply");
            if let Some(e) = v.get("error") {
                return (
                    e["code"].as_i64().unwrap(),
                    v["id"].clone(),
                    e["message"].as_str().unwrap().to_string(),
                );
            }
        }
    }

    fn text(v: &Value) -> String {
        v["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_string()
    }

    /// Closes stdin, waits for exit 0, returns stderr.
    fn close(mut self) -> String {
        drop(self.stdin.take());
        let status = self.child.wait().unwrap();
        assert!(status.success());
        let mut err = String::new();
        self.child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        err
    }
}

fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    dir
}

#[test]
fn every_malformed_line_is_answered_and_the_connection_keeps_serving() {
    let dir = repo();
    let mut w = Wire::spawn(dir.path());
    w.raw(b"hello, not json");
    assert_eq!(
        w.error(),
        (
            -32700,
            Value::Null,
            "Parse error: expected value at line 1 column 1.".to_string()
        )
    );
    // -32700, then a normal call on the same connection succeeds.
    w.call(1, "task_create", json!({"name": "parse error recovery"}));
    let created = Wire::text(&w.reply(1, Duration::from_secs(10)));
    assert!(created.starts_with("Created "), "{created}");

    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"task_query","arguments":{{"query":"(all)","x":{}1{}}}}}}}"#,
        "[".repeat(200),
        "]".repeat(200)
    );
    w.raw(deep.as_bytes());
    assert_eq!(
        w.error(),
        (
            -32700,
            json!(2),
            "Parse error: the message nests deeper than 128 levels.".to_string()
        )
    );
    w.raw(br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"observe","arguments":{"text":"a\ud800b"}}}"#);
    assert_eq!(
        w.error(),
        (
            -32700,
            json!(3),
            "Parse error: a string holds an invalid \\u escape, such as a lone surrogate."
                .to_string()
        )
    );
    w.raw(b"{\"jsonrpc\":\"2.0\",\"id\":\"u\",\"method\":\"ping\",\"x\":\"\xff\xfe\"}");
    assert_eq!(
        w.error(),
        (
            -32700,
            json!("u"),
            "Parse error: the line is not valid UTF-8 (at byte 47).".to_string()
        )
    );
    w.raw(br#"{"jsonrpc":"2.0","id":4,"method":"ping"}{"jsonrpc":"2.0","id":5,"method":"ping"}"#);
    assert_eq!(
        w.error(),
        (
            -32700,
            json!(4),
            "Parse error: more than one JSON value on the line; send one message per line."
                .to_string()
        )
    );
    w.raw(br#"[{"jsonrpc":"2.0","id":6,"method":"ping"}]"#);
    assert_eq!(
        w.error(),
        (
            -32600,
            Value::Null,
            "Invalid Request: a message is one JSON-RPC object (batches are not supported)."
                .to_string()
        )
    );
    w.raw(br#"{"jsonrpc":"2.0","id":7,"method":42}"#);
    assert_eq!(
        w.error(),
        (
            -32600,
            json!(7),
            "Invalid Request: not a JSON-RPC 2.0 request, notification or response.".to_string()
        )
    );
    let long = format!(
        r#"{{"jsonrpc":"2.0","id":8,"method":"ping","params":{{"x":"{}"}}}}"#,
        "x".repeat(cairn::mcp::lines::MAX_LINE_BYTES)
    );
    w.raw(long.as_bytes());
    assert_eq!(
        w.error(),
        (
            -32600,
            json!(8),
            "Invalid Request: the line is longer than 8388608 bytes.".to_string()
        )
    );
    w.send(&json!({"jsonrpc": "2.0", "id": 9, "method": "ping"}));
    assert_eq!(w.reply(9, Duration::from_secs(10))["result"], json!({}));
    w.call(10, "task_get", json!({}));
    let got = Wire::text(&w.reply(10, Duration::from_secs(10)));
    assert!(got.contains("parse-error-recovery"), "{got}");
    let stderr = w.close();
    assert_eq!(stderr, "");
}

#[test]
fn stderr_is_quiet_for_tool_errors_and_caps_a_huge_unknown_tool_name() {
    let dir = repo();
    let mut w = Wire::spawn(dir.path());
    w.call(1, "task_get", json!({"task_id": "no-such-task"}));
    let r = w.reply(1, Duration::from_secs(10));
    assert_eq!(r["result"]["isError"], json!(true));
    assert_eq!(Wire::text(&r), "No task no-such-task.");
    let name = "n".repeat(100_000);
    w.call(2, &name, json!({}));
    let r = w.reply(2, Duration::from_secs(10));
    assert_eq!(r["error"]["code"], json!(-32602));
    assert_eq!(
        r["error"]["message"],
        json!(format!(
            "Unknown tool {}… (100000 characters).",
            "n".repeat(100)
        ))
    );
    let stderr = w.close();
    assert_eq!(stderr, "");
}

/// 200 tasks, each related to the next 20; the predicate visits 20^4 paths
/// per task (the engine's time-limit fixture), so a query over it runs for
/// seconds.
fn heavy_store(dir: &Path) -> &'static str {
    let store = Store::open(&dir.join(".cairn/cairn.db")).unwrap();
    let sid = Session::new().id;
    store.write(&common::heavy_events(&sid)).unwrap();
    r#"(all (:follow :related) (all (:follow :related) (all (:follow :related) (all (:follow :related) (all (:follow :related) (matches :slug "2026"))))))"#
}

#[test]
fn ping_and_tools_list_answer_while_a_long_query_runs() {
    let dir = repo();
    let p = heavy_store(dir.path());
    let mut w = Wire::spawn(dir.path());
    let started = Instant::now();
    w.call(
        1,
        "task_query",
        json!({"query": format!("(-> (all) (:where {p}) (:count))")}),
    );
    std::thread::sleep(Duration::from_millis(300));
    // Five pings, 100 ms apart, while the query runs; the median counts (one
    // scheduling hiccup on a loaded 2-core machine is not the server's).
    let mut pings = Vec::new();
    for id in 100..105 {
        let sent = Instant::now();
        w.send(&json!({"jsonrpc": "2.0", "id": id, "method": "ping"}));
        let pong = w.reply(id, Duration::from_secs(5));
        pings.push(sent.elapsed().as_millis());
        assert_eq!(pong["result"], json!({}));
        std::thread::sleep(Duration::from_millis(100));
    }
    pings.sort_unstable();
    let ping_ms = pings[2];
    let sent = Instant::now();
    w.send(&json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}));
    let list = w.reply(3, Duration::from_secs(5));
    assert_eq!(list["result"]["tools"].as_array().map(Vec::len), Some(14));
    let list_ms = sent.elapsed().as_millis();
    // The query was still running: its answer comes after both.
    let answer = w.reply(1, Duration::from_secs(30));
    let query_ms = started.elapsed().as_millis();
    eprintln!("pings {pings:?} ms, tools/list {list_ms} ms, query {query_ms} ms");
    assert!(ping_ms < 100, "pings took {pings:?} ms during the query");
    assert!(
        list_ms < 1000,
        "tools/list took {list_ms} ms during the query"
    );
    assert!(
        query_ms > 1000,
        "the query took only {query_ms} ms: {answer}"
    );
    w.close();
}

#[test]
fn a_cancelled_long_query_stops_and_writes_nothing() {
    let dir = repo();
    let p = heavy_store(dir.path());
    let before = Store::open(&dir.path().join(".cairn/cairn.db"))
        .unwrap()
        .event_count()
        .unwrap();
    let mut w = Wire::spawn(dir.path());
    w.call(
        1,
        "task_query_write",
        json!({"query": format!(r#"(-> (all) (:where {p}) (:set-status! "blocked"))"#)}),
    );
    std::thread::sleep(Duration::from_millis(300));
    let cancelled = Instant::now();
    w.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 1, "reason": "test"}}),
    );
    // The next call waits for the store: it runs once the cancelled query stopped.
    w.call(
        2,
        "task_query",
        json!({"query": r#"(-> (all) (:where (= :status "blocked")) (:count))"#}),
    );
    let r = w.reply(2, Duration::from_secs(30));
    let stop_ms = cancelled.elapsed().as_millis();
    eprintln!("cancelled query stopped and the next call answered in {stop_ms} ms");
    assert_eq!(Wire::text(&r), "0");
    assert!(
        stop_ms < 2000,
        "the cancelled query ran on for {stop_ms} ms"
    );
    // No answer to the cancelled request (MCP: the receiver drops it).
    w.send(&json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}));
    let next = w.lines.recv_timeout(Duration::from_secs(5)).unwrap();
    assert_eq!(next["id"], json!(3));
    w.close();
    let after = Store::open(&dir.path().join(".cairn/cairn.db"))
        .unwrap()
        .event_count()
        .unwrap();
    assert_eq!(after, before);
}

#[test]
fn server_discover_answers_without_initialize() {
    let dir = repo();
    let mut w = Wire::bare(dir.path());
    w.send(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}}}),
    );
    let r = w.reply(1, Duration::from_secs(10));
    assert_eq!(
        r["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "cairn"
    );
    assert!(
        r["result"]["supportedVersions"]
            .as_array()
            .is_some_and(|v| v.contains(&json!("2026-07-28"))),
        "{r}"
    );
    let caps = &r["result"]["capabilities"];
    assert!(
        caps["tools"].is_object() && caps["logging"].is_object(),
        "{r}"
    );
    assert_eq!(
        r["result"]["instructions"],
        json!(cairn::mcp::prompts::INSTRUCTIONS)
    );
    // A stateless 2026-07-28 call on the same connection.
    w.send(
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "task_query", "arguments": {"query": "(-> (all) (:count))"},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}}}),
    );
    let r = w.reply(2, Duration::from_secs(10));
    assert_eq!(Wire::text(&r), "0");
    // Methods the 2026-07-28 revision removed are -32601 in such a request,
    // saying what replaces them (typed or not).
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "wire", "version": "0"}});
    for (id, method, params, message) in [
        (
            3,
            "logging/setLevel",
            json!({"level": "info", "_meta": meta}),
            "logging/setLevel is not part of the 2026-07-28 protocol this request names; send io.modelcontextprotocol/logLevel in each request's _meta.",
        ),
        (
            4,
            "logging/setLevel",
            json!({"_meta": meta}),
            "logging/setLevel is not part of the 2026-07-28 protocol this request names; send io.modelcontextprotocol/logLevel in each request's _meta.",
        ),
        (
            5,
            "resources/subscribe",
            json!({"_meta": meta}),
            "resources/subscribe is not part of the 2026-07-28 protocol this request names; open a subscriptions/listen stream.",
        ),
    ] {
        w.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        assert_eq!(
            w.reply(id, Duration::from_secs(10)),
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": message}}),
            "{method}"
        );
    }
    w.close();
}

/// Issue 22 "JSON-RPC hygiene": a line whose id cannot be read is answered
/// with `"id": null` (the member present), and an unknown method's message
/// lists what the server serves; the connection keeps serving.
#[test]
fn parse_errors_carry_a_null_id_and_unknown_methods_list_the_served_ones() {
    let dir = repo();
    let mut w = Wire::spawn(dir.path());
    w.raw(b"{not json");
    let v = w.lines.recv_timeout(Duration::from_secs(10)).unwrap();
    assert_eq!(
        v,
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700,
            "message": "Parse error: key must be a string at line 1 column 2."}})
    );
    w.raw(b"[]");
    let v = w.lines.recv_timeout(Duration::from_secs(10)).unwrap();
    assert_eq!(
        v,
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600,
            "message": "Invalid Request: a message is one JSON-RPC object (batches are not supported)."}})
    );
    w.send(&json!({"jsonrpc": "2.0", "id": 5, "method": "tasks/frobnicate"}));
    assert_eq!(
        w.reply(5, Duration::from_secs(10)),
        json!({"jsonrpc": "2.0", "id": 5, "error": {"code": -32601,
            "message": "Method not found: tasks/frobnicate. This server serves initialize, server/discover, ping, tools/list, tools/call, prompts/list, prompts/get, resources/list, resources/read, resources/templates/list, resources/subscribe, resources/unsubscribe, subscriptions/listen, logging/setLevel, completion/complete."}})
    );
    // A 2026-07-28 stream asked in this session (it began with initialize):
    // rmcp's bare `subscriptions/listen` becomes a sentence.
    w.send(
        &json!({"jsonrpc": "2.0", "id": 7, "method": "subscriptions/listen",
        "params": {"notifications": {"resourceSubscriptions": ["cairn://tasks/x"]}}}),
    );
    assert_eq!(
        w.reply(7, Duration::from_secs(10)),
        json!({"jsonrpc": "2.0", "id": 7, "error": {"code": -32601,
            "message": "subscriptions/listen is not part of the protocol of a session that began with initialize; use resources/subscribe in this session, or connect without initialize (server/discover, the 2026-07-28 protocol) to listen."}})
    );
    w.call(6, "task_query", json!({"query": "(-> (all) (:count))"}));
    assert_eq!(Wire::text(&w.reply(6, Duration::from_secs(10))), "0");
    w.close();
}

#[test]
fn a_last_line_without_its_newline_is_still_answered() {
    let dir = repo();
    let mut w = Wire::spawn(dir.path());
    let stdin = w.stdin.as_mut().unwrap();
    stdin
        .write_all(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"task_query","arguments":{"query":"(-> (all) (:count))"}}}"#)
        .unwrap();
    drop(w.stdin.take());
    assert_eq!(Wire::text(&w.reply(1, Duration::from_secs(10))), "0");
    w.close();
}

/// spec/tq.md §9 "Agent identity" over stdio: the client's name plus a
/// short session id, or `cairn serve --as NAME` exactly; `--as` with
/// `--http` is refused.
#[test]
fn stdio_sessions_claim_as_the_client_or_as_the_serve_flag() {
    let dir = repo();
    let claim =
        json!({"query": "(-> (query \"ready\") (:take 1) (:claim! 900) (:select :claimed-by))"});
    let mut w = Wire::spawn(dir.path());
    w.call(1, "task_create", json!({"name": "first shared task"}));
    w.reply(1, Duration::from_secs(10));
    w.call(2, "task_query_write", claim.clone());
    let got = Wire::text(&w.reply(2, Duration::from_secs(10)));
    let (head, owner) = got.rsplit_once("claimed-by=").unwrap_or(("", ""));
    assert!(head.starts_with("1 task:"), "{got}");
    let short = owner.strip_prefix("wire/").unwrap_or("");
    assert_eq!(short.len(), 4, "{got}");
    w.close();
    let mut w = Wire::with_args(dir.path(), &["--as", "builder-7", "serve"]);
    w.call(1, "task_create", json!({"name": "second shared task"}));
    w.reply(1, Duration::from_secs(10));
    w.call(2, "task_query_write", claim);
    let got = Wire::text(&w.reply(2, Duration::from_secs(10)));
    assert!(got.ends_with("  claimed-by=builder-7"), "{got}");
    w.close();
    let out = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["--as", "x", "serve", "--http", "127.0.0.1:0"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim_end(),
        "error: --as names the stdio session; over --http each session is named by its token."
    );
}

/// Issue 22 (hostile pass): one session may hold at most 16
/// `subscriptions/listen` streams (each holds a watcher and a store
/// connection; unbounded, 300 streams exhausted the descriptors and every
/// later tool call failed). The 17th is refused with a sentence after its
/// acknowledgment; cancelling one makes room; tools keep answering.
#[test]
fn a_session_holds_at_most_sixteen_listen_streams() {
    let dir = repo();
    let mut w = Wire::bare(dir.path());
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "wire", "version": "0"}});
    let listen = |id: u64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": {
            "notifications": {"resourceSubscriptions": [format!("cairn://tasks/t{id}")]},
            "_meta": meta}})
    };
    for id in 1..=17 {
        w.send(&listen(id));
    }
    let refusal = json!({"jsonrpc": "2.0", "id": 17, "error": {"code": -32600,
        "message": "This session already holds 16 subscriptions/listen streams, the most one session (one token over HTTP) may; cancel one, or listen to up to 1000 URIs in one stream."}});
    assert_eq!(w.reply(17, Duration::from_secs(20)), refusal);
    // Cancelling stream 1 frees a slot for the next.
    w.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 1, "_meta": meta}}),
    );
    std::thread::sleep(Duration::from_millis(500));
    w.send(&listen(18));
    w.send(&listen(19));
    let r = loop {
        let v = w.lines.recv_timeout(Duration::from_secs(20)).unwrap();
        assert_ne!(v.get("id"), Some(&json!(18)), "stream 18 was refused: {v}");
        if v.get("id") == Some(&json!(19)) {
            break v;
        }
    };
    assert_eq!(r["error"]["message"], refusal["error"]["message"], "{r}");
    w.send(
        &json!({"jsonrpc": "2.0", "id": 20, "method": "tools/call", "params": {
        "name": "task_query", "arguments": {"query": "(-> (all) (:count))"}, "_meta": meta}}),
    );
    assert_eq!(Wire::text(&w.reply(20, Duration::from_secs(10))), "0");
    w.close();
}
