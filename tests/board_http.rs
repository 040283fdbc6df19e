//! The board over real HTTP (issue 25): `cairn serve --http` serves it at
//! `/` beside `/mcp`; its endpoints refuse a missing, wrong or revoked token
//! and a foreign `Host`/`Origin` exactly as `/mcp` does (same status, same
//! challenge, same sentence); the sign-in sets an HttpOnly SameSite=Strict
//! cookie that holds no token; the JSON endpoints answer from the store and
//! never write; the live stream hears a write from another process; every
//! page carries the CSP; `cairn board` serves only the board to the browser
//! that opens its one-time link, once.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_cairn");

fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    dir
}

/// `cairn ARGS` in `dir` with the tool clock at 2026-01-01: (code, stdout).
fn cairn(dir: &Path, args: &[&str]) -> (i32, String) {
    let out = Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .env_remove("CAIRN_DB")
        .env("CAIRN_NOW", "1767225600")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).trim_end().to_string(),
    )
}

fn ok(dir: &Path, args: &[&str]) -> String {
    let (code, out) = cairn(dir, args);
    assert_eq!(code, 0, "cairn {args:?}: {out}");
    out
}

/// A running server (`cairn serve --http` or `cairn board`); killed on drop.
struct Server {
    child: Child,
    addr: String,
    first: String,
}

impl Server {
    fn start(dir: &Path, args: &[&str]) -> Server {
        let mut child = Command::new(BIN)
            .args(args)
            .current_dir(dir)
            .env_remove("CAIRN_DB")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut err = BufReader::new(child.stderr.take().unwrap());
        let mut first = String::new();
        err.read_line(&mut first).unwrap();
        std::thread::spawn(move || {
            let mut sink = Vec::new();
            let _ = err.read_to_end(&mut sink);
        });
        let at = first.find("http://").unwrap() + "http://".len();
        let addr: String = first[at..]
            .chars()
            .take_while(|c| *c != '/' && !c.is_whitespace())
            .collect();
        Server { child, addr, first }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A response: status, headers (lowercase names), body.
#[derive(Debug)]
struct Resp {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Resp {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }
}

/// One HTTP/1.1 request with `Connection: close`; `headers` replace the
/// default `Host`.
fn request(addr: &str, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Resp {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut req = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        req.push_str(&format!("Host: {addr}\r\n"));
    }
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    s.write_all(req.as_bytes()).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    parse(&String::from_utf8_lossy(&raw))
}

fn parse(raw: &str) -> Resp {
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((raw, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    Resp {
        status,
        headers,
        body: body.to_string(),
    }
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

/// `/mcp`'s answer to an `initialize` POST with `headers`.
fn mcp(addr: &str, headers: &[(&str, &str)]) -> Resp {
    let mut h = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    h.extend_from_slice(headers);
    request(addr, "POST", "/mcp", &h, INIT)
}

/// What a refusal is judged by: status, challenge, sentence.
fn refusal(r: &Resp) -> (u16, Option<String>, String) {
    (
        r.status,
        r.header("www-authenticate").map(str::to_string),
        r.body.clone(),
    )
}

const PLAN: &str = "2026-01-01-ship-board";
const DESIGN: &str = "2026-01-01-design";
const BUILD: &str = "2026-01-01-build-it";

fn seed(dir: &Path) {
    ok(dir, &["add", "ship the board"]);
    ok(dir, &["add", "design", "--under", PLAN]);
    ok(dir, &["add", "build it", "--under", PLAN]);
    ok(dir, &["dep", "add", BUILD, "--on", DESIGN]);
    ok(
        dir,
        &[
            "note",
            DESIGN,
            "<script>alert(1)</script> <img src=x onerror=alert(2)>",
        ],
    );
    ok(dir, &["done", DESIGN]);
}

#[test]
fn the_board_refuses_exactly_as_mcp_does() {
    let dir = repo();
    seed(dir.path());
    let read = ok(
        dir.path(),
        &["token", "create", "viewer", "--grant", "read"],
    );
    let observe = ok(
        dir.path(),
        &["token", "create", "noter", "--grant", "observe"],
    );
    let server = Server::start(dir.path(), &["serve", "--http", "127.0.0.1:0"]);
    let a = server.addr.as_str();
    let wrong = "Bearer cairn_0000000000000000000000000000000000000000000000000000000000000000";
    let good = format!("Bearer {read}");
    let cases: [(&str, Vec<(&str, &str)>); 4] = [
        ("no token", vec![]),
        ("wrong token", vec![("Authorization", wrong)]),
        (
            "foreign host",
            vec![("Host", "evil.example"), ("Authorization", &good)],
        ),
        (
            "foreign origin",
            vec![("Origin", "http://evil.example"), ("Authorization", &good)],
        ),
    ];
    for (why, h) in &cases {
        let want = refusal(&mcp(a, h));
        assert!(matches!(want.0, 401 | 403), "{why}: {want:?}");
        for path in [
            "/board/api/graph",
            "/board/api/task?slug=x",
            "/board/events",
            "/",
        ] {
            if path == "/" && want.0 == 401 {
                continue; // `/` answers the sign-in page instead
            }
            let got = request(a, "GET", path, h, "");
            assert_eq!(refusal(&got), want, "{why} at {path}");
        }
    }
    // Signed out, `/` is the sign-in page, with the CSP.
    let page = request(a, "GET", "/", &[], "");
    assert_eq!(page.status, 200);
    assert!(
        page.body
            .contains("<form method=\"post\" action=\"/board/signin\"")
    );
    assert_eq!(
        page.header("content-security-policy"),
        Some(cairn::board::web::CSP)
    );
    // A wrong token at the sign-in: 401 and /mcp's sentence on the page.
    let bad = request(
        a,
        "POST",
        "/board/signin",
        &[("Content-Type", "application/x-www-form-urlencoded")],
        "token=cairn_nope",
    );
    assert_eq!(bad.status, 401);
    assert!(
        bad.body
            .contains("The bearer token is not valid (unknown or revoked).")
    );
    assert_eq!(bad.header("set-cookie"), None);
    // A token without read: 403.
    let noread = request(
        a,
        "POST",
        "/board/signin",
        &[("Content-Type", "application/x-www-form-urlencoded")],
        &format!("token={observe}"),
    );
    assert_eq!(noread.status, 403);
    assert!(
        noread
            .body
            .contains("The board needs a token with the read grant.")
    );
    // The read token: a cookie (HttpOnly, SameSite=Strict, no token in it)
    // and a redirect to `/` (no token in the URL).
    let signed = request(
        a,
        "POST",
        "/board/signin",
        &[("Content-Type", "application/x-www-form-urlencoded")],
        &format!("token={read}"),
    );
    assert_eq!(signed.status, 303);
    assert_eq!(signed.header("location"), Some("/"));
    // The redirect carries the security headers too (hostile pass).
    assert_eq!(
        signed.header("content-security-policy"),
        Some(cairn::board::web::CSP)
    );
    assert_eq!(signed.header("x-content-type-options"), Some("nosniff"));
    let set = signed.header("set-cookie").unwrap().to_string();
    assert!(
        set.ends_with("; HttpOnly; SameSite=Strict; Path=/"),
        "{set}"
    );
    assert!(!set.contains(&read));
    // Named after the port: two boards on one host keep apart.
    let port = a.rsplit(':').next().unwrap();
    assert!(set.starts_with(&format!("cairn_board_{port}=")), "{set}");
    let cookie = set.split(';').next().unwrap().to_string();
    let with = [("Cookie", cookie.as_str())];
    let app = request(a, "GET", "/", &with, "");
    assert_eq!(app.status, 200);
    assert!(
        app.body
            .contains("<script src=\"/board/app.js\" defer></script>")
    );
    assert_eq!(request(a, "GET", "/board/api/graph", &with, "").status, 200);
    // Revoked: the cookie and the bearer get /mcp's 401 at once.
    ok(dir.path(), &["token", "revoke", "viewer"]);
    let want = refusal(&mcp(a, &[("Authorization", &good)]));
    assert_eq!(want.0, 401);
    assert_eq!(
        refusal(&request(a, "GET", "/board/api/graph", &with, "")),
        want
    );
    assert_eq!(
        refusal(&request(
            a,
            "GET",
            "/board/api/graph",
            &[("Authorization", &good)],
            ""
        )),
        want
    );
    drop(server);
}

#[test]
fn the_endpoints_answer_from_the_store_and_never_write() {
    let dir = repo();
    seed(dir.path());
    let read = ok(
        dir.path(),
        &["token", "create", "viewer", "--grant", "read"],
    );
    let server = Server::start(dir.path(), &["serve", "--http", "127.0.0.1:0"]);
    let a = server.addr.as_str();
    let auth = format!("Bearer {read}");
    let h = [("Authorization", auth.as_str())];
    let get = |path: &str| {
        let r = request(a, "GET", path, &h, "");
        assert_eq!(r.status, 200, "{path}: {}", r.body);
        assert_eq!(r.header("content-type"), Some("application/json"));
        r.json()
    };
    let events_before = ok(dir.path(), &["query", "--format", "json", "(all)"]);
    let g = get(&format!("/board/api/graph?plan={BUILD}"));
    let tasks: Vec<(String, String, bool)> = g["graph"]["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["slug"].as_str().unwrap().to_string(),
                t["status"].as_str().unwrap().to_string(),
                t["ready"].as_bool().unwrap(),
            )
        })
        .collect();
    let mut sorted = tasks.clone();
    sorted.sort();
    assert_eq!(
        sorted,
        vec![
            (BUILD.to_string(), "active".to_string(), true),
            (DESIGN.to_string(), "completed".to_string(), false),
            (PLAN.to_string(), "active".to_string(), false),
        ]
    );
    assert_eq!(
        g["graph"]["edges"],
        serde_json::json!([{"from": BUILD, "to": DESIGN}])
    );
    assert_eq!(g["total"], 3);
    let cols = get("/board/api/columns");
    let counts: Vec<(String, i64)> = cols["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["status"].as_str().unwrap().to_string(),
                c["count"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        counts,
        vec![
            ("open".to_string(), 0),
            ("active".to_string(), 2),
            ("blocked".to_string(), 0),
            ("completed".to_string(), 1),
            ("abandoned".to_string(), 0)
        ]
    );
    let ready: Vec<&str> = get("/board/api/ready")["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["slug"].as_str().unwrap())
        .map(|s| if s == BUILD { BUILD } else { "other" })
        .collect();
    assert_eq!(ready, vec![BUILD]);
    let task = get(&format!("/board/api/task?slug={DESIGN}"));
    assert_eq!(
        task["observations"]["events"][0]["text"],
        "<script>alert(1)</script> <img src=x onerror=alert(2)>"
    );
    assert_eq!(task["task"]["task"]["status"], "completed");
    assert_eq!(task["task"]["task"]["parent"], PLAN);
    let search = get("/board/api/search?q=alert");
    assert_eq!(search["hits"][0]["task"], DESIGN);
    let q = get("/board/api/query?q=(-%3E%20(all)%20(:count))");
    assert_eq!(q["result"], 3);
    // A mutation through the TQ box is refused (read surface) and writes nothing.
    let m = request(
        a,
        "GET",
        "/board/api/query?q=(-%3E%20(all)%20(:status!%20%22abandoned%22))",
        &h,
        "",
    );
    assert_eq!(m.status, 400, "{}", m.body);
    assert_eq!(
        request(a, "GET", "/board/api/task?slug=nope", &h, "").status,
        404
    );
    assert_eq!(request(a, "GET", "/board/api/nothing", &h, "").status, 404);
    assert_eq!(
        ok(dir.path(), &["query", "--format", "json", "(all)"]),
        events_before
    );
    // The page's own files: the script builds the DOM with textContent.
    let js = request(a, "GET", "/board/app.js", &[], "");
    assert_eq!(js.status, 200);
    assert!(!js.body.contains("innerHTML"));
    assert_eq!(
        js.header("content-security-policy"),
        Some(cairn::board::web::CSP)
    );
    drop(server);
}

/// Reads `stream` until `needle` shows or `limit` passes; what was read.
fn read_until(s: &mut TcpStream, needle: &str, limit: Duration) -> String {
    s.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let start = Instant::now();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while start.elapsed() < limit && !String::from_utf8_lossy(&got).contains(needle) {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(_) => continue,
        }
    }
    String::from_utf8_lossy(&got).into_owned()
}

#[test]
fn the_live_stream_hears_a_write_from_another_process() {
    let dir = repo();
    seed(dir.path());
    let read = ok(
        dir.path(),
        &["token", "create", "viewer", "--grant", "read"],
    );
    let server = Server::start(dir.path(), &["serve", "--http", "127.0.0.1:0"]);
    let mut s = TcpStream::connect(&server.addr).unwrap();
    write!(
        s,
        "GET /board/events HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {read}\r\n\r\n",
        server.addr
    )
    .unwrap();
    let hello = read_until(&mut s, "event: hello", Duration::from_secs(10));
    assert!(hello.starts_with("HTTP/1.1 200"), "{hello}");
    assert!(hello.contains("content-type: text/event-stream"), "{hello}");
    ok(dir.path(), &["add", "a new task"]);
    let change = read_until(&mut s, "event: change", Duration::from_secs(10));
    assert!(change.contains("event: change"), "not heard: {change}");
    // One viewer holds at most 8 streams (this one and 7 more); the 9th is
    // a 429 with a sentence; closing one makes room (hostile pass: 3,000
    // streams stalled the server, /mcp included).
    let open = |n: usize| -> Vec<TcpStream> {
        (0..n)
            .map(|_| {
                let mut t = TcpStream::connect(&server.addr).unwrap();
                write!(
                    t,
                    "GET /board/events HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {read}\r\n\r\n",
                    server.addr
                )
                .unwrap();
                t
            })
            .collect()
    };
    let mut seven = open(7);
    for t in &mut seven {
        let hello = read_until(t, "event: hello", Duration::from_secs(10));
        assert!(hello.starts_with("HTTP/1.1 200"), "{hello}");
    }
    let mut ninth = open(1);
    let refused = read_until(&mut ninth[0], "reload.", Duration::from_secs(10));
    assert!(refused.starts_with("HTTP/1.1 429"), "{refused}");
    assert!(
        refused.ends_with(
            "This sign-in already holds 8 live board streams; close a board tab and reload.\n"
        ),
        "{refused}"
    );
    drop(s);
    std::thread::sleep(Duration::from_millis(1500));
    let mut again = open(1);
    let hello = read_until(&mut again[0], "event: hello", Duration::from_secs(10));
    assert!(hello.starts_with("HTTP/1.1 200"), "{hello}");
    drop(server);
}

#[test]
fn cairn_board_serves_one_browser_through_a_one_time_link() {
    let dir = repo();
    seed(dir.path());
    let server = Server::start(dir.path(), &["board"]);
    assert!(
        server.first.starts_with("cairn board: the board of "),
        "{}",
        server.first
    );
    let at = server.first.find("/board/open?code=").unwrap();
    let link: String = server.first[at..]
        .chars()
        .take_while(|c| !c.is_whitespace())
        .collect();
    let a = server.addr.as_str();
    assert_eq!(request(a, "GET", "/board/api/graph", &[], "").status, 401);
    let no_mcp = mcp(a, &[]);
    assert_eq!(no_mcp.status, 404, "no /mcp behind cairn board");
    assert_eq!(
        no_mcp.body.trim_end(),
        "Not found; cairn board serves only the board, at /; cairn serve --http serves /mcp."
    );
    let opened = request(a, "GET", &link, &[], "");
    assert_eq!(opened.status, 303);
    let cookie = opened
        .header("set-cookie")
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_string();
    let again = request(a, "GET", &link, &[], "");
    assert_eq!(again.status, 401, "the link is dead once used");
    assert_eq!(again.header("set-cookie"), None);
    let g = request(a, "GET", "/board/api/graph", &[("Cookie", &cookie)], "");
    assert_eq!(g.status, 200);
    assert_eq!(g.json()["total"], 3);
    assert_eq!(
        request(
            a,
            "GET",
            "/board/api/graph",
            &[("Cookie", &cookie), ("Host", "evil.example")],
            ""
        )
        .status,
        403
    );
    drop(server);
}

#[test]
fn cookies_and_form_fields_are_parsed_exactly() {
    use cairn::board::api::param;
    use cairn::board::web::cookie;
    let mut h = http::HeaderMap::new();
    h.append("cookie", "a=1; cairn_board=abc".parse().unwrap());
    h.append("cookie", "cairn_boardx=no".parse().unwrap());
    assert_eq!(cookie(&h, "cairn_board").as_deref(), Some("abc"));
    assert_eq!(cookie(&h, "b"), None);
    assert_eq!(
        param(Some("token=cairn_a%2Bb+c&x="), "token").as_deref(),
        Some("cairn_a+b c")
    );
    assert_eq!(param(Some("x=1"), "token"), None);
    assert_eq!(param(Some("x"), "x").as_deref(), Some(""));
    assert_eq!(param(None, "x"), None);
}
