//! Shared by the scale-out tests (`pg_scaleout.rs`, `pg_scaleout_load.rs`;
//! issue 24): `cairn serve --http` processes on one PostgreSQL schema, their
//! stderr lines on a channel, the round-robin proxy of
//! `tests/interop/proxy.py`, 2026-07-28 (stateless) and 2025-11-25 clients,
//! and plain HTTP requests.
#![allow(dead_code)] // each test file uses a part

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProtocolVersion};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt, RoleClient, ServiceExt};

pub const BIN: &str = env!("CARGO_BIN_EXE_cairn");

/// `cairn ARGS` on the store `url` in `dir`: (exit code, stdout, stderr).
pub fn cairn(url: &str, dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(BIN)
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

/// A new token NAME with every grant on `url`.
pub fn token(url: &str, dir: &Path, name: &str) -> String {
    let (code, token, err) = cairn(
        url,
        dir,
        &["token", "create", name, "--grant", "read,observe,write"],
    );
    assert_eq!(code, 0, "{err}");
    token
}

/// One `cairn serve --http 127.0.0.1:0` process; killed on drop.
pub struct Server {
    pub child: Child,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    pub port: u16,
    /// Its stderr lines after the first.
    pub lines: mpsc::Receiver<String>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// Serves the store `url` from `dir`.
    pub fn start(url: &str, dir: &Path) -> Server {
        Server::start_with(url, dir, &[])
    }

    /// Serves the store `url` from `dir` with more flags (`--route-id a`).
    pub fn start_with(url: &str, dir: &Path, flags: &[&str]) -> Server {
        let mut child = Command::new(BIN)
            .args(["serve", "--http", "127.0.0.1:0"])
            .args(flags)
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
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for l in err.lines() {
                let Ok(l) = l else { break };
                if tx.send(l).is_err() {
                    // Nobody reads: keep draining so the server never blocks.
                }
            }
        });
        let at = line.find("http://").unwrap_or_else(|| panic!("{line}"));
        let mcp = line[at..].split(' ').next().unwrap().to_string();
        let base = mcp.trim_end_matches("/mcp").to_string();
        let port = base.rsplit(':').next().unwrap().parse().unwrap();
        Server {
            child,
            base,
            port,
            lines,
        }
    }

    /// The MCP endpoint.
    pub fn mcp(&self) -> String {
        format!("{}/mcp", self.base)
    }

    /// Waits (at most `limit`) for a stderr line containing `needle`.
    pub fn wait_line(&self, needle: &str, limit: Duration) -> String {
        let end = Instant::now() + limit;
        loop {
            let left = end.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(l) if l.contains(needle) => return l,
                Ok(_) => {}
                Err(e) => panic!("no stderr line with {needle:?}: {e}"),
            }
        }
    }
}

/// `tests/interop/proxy.py` in front of `ports`; killed on drop.
pub struct Proxy {
    pub child: Child,
    pub url: String,
    /// Its stderr lines (`retry A -> B: WHY`).
    pub lines: mpsc::Receiver<String>,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Proxy {
    /// A proxy over the backends `(route id, port)`.
    pub fn start(backends: &[(&str, u16)]) -> Proxy {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/proxy.py");
        let mut child = Command::new("python3")
            .arg(script)
            .args(backends.iter().map(|(n, p)| format!("{n}={p}")))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("python3 runs the proxy");
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        let port: u16 = line.trim().parse().unwrap_or_else(|_| panic!("{line}"));
        let err = BufReader::new(child.stderr.take().unwrap());
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for l in err.lines() {
                let Ok(l) = l else { break };
                let _ = tx.send(l);
            }
        });
        Proxy {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
            lines,
        }
    }

    /// The retries it made so far.
    pub fn retries(&self) -> Vec<String> {
        self.lines
            .try_iter()
            .filter(|l| l.starts_with("retry "))
            .collect()
    }
}

#[derive(Clone)]
pub struct Agent(pub String);

impl ClientHandler for Agent {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new(self.0.clone(), "1.0.0"),
        )
    }
}

pub type Modern = RunningService<RoleClient, Agent>;

/// A 2026-07-28 (stateless) client of `url` presenting `token`.
pub async fn stateless(url: &str, token: &str, name: &str) -> Modern {
    let cfg = StreamableHttpClientTransportConfig::with_uri(url.to_string())
        .auth_header(token.to_string());
    let c = Agent(name.to_string())
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

/// A 2025-11-25 session at `url` presenting `token`, handled by `h`.
pub async fn session<H: ClientHandler>(
    url: &str,
    token: &str,
    h: H,
) -> RunningService<RoleClient, H> {
    let cfg = StreamableHttpClientTransportConfig::with_uri(url.to_string())
        .auth_header(token.to_string());
    h.serve(StreamableHttpClientTransport::from_config(cfg))
        .await
        .unwrap()
}

/// `GET url`: (status, body).
pub async fn get(url: &str) -> (u16, String) {
    let r = reqwest::Client::new().get(url).send().await.unwrap();
    let status = r.status().as_u16();
    (status, r.text().await.unwrap_or_default())
}

/// A `POST` of a JSON-RPC `ping` to `url` with `token`: (status, body).
pub async fn post_ping(url: &str, token: &str) -> (u16, String) {
    let r = reqwest::Client::new()
        .post(url)
        .header("authorization", format!("Bearer {token}"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    (status, r.text().await.unwrap_or_default())
}

/// Runs `sql` on the cluster behind `url` (the test's own connection).
pub fn psql(url: &str) -> postgres::Client {
    // `postgres://cairn@/postgres?host=DIR&options=...` → key=value form.
    let host = url
        .split("host=")
        .nth(1)
        .and_then(|r| r.split('&').next())
        .unwrap();
    postgres::Client::connect(
        &format!("host={host} user=cairn dbname=postgres"),
        postgres::NoTls,
    )
    .unwrap()
}

/// The schema named in `url` (`...search_path%3DNAME`).
pub fn schema_of(url: &str) -> String {
    url.rsplit("%3D").next().unwrap().to_string()
}
