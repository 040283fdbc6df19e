//! Notification latency (issue 22 "Benchmarks"; docs/performance.md
//! "Notification latency"): how long after a write a subscribed client
//! hears `notifications/resources/updated`, per transport (stdio, Streamable
//! HTTP), per protocol era (2025-11-25 `resources/subscribe`, 2026-07-28
//! `subscriptions/listen`), for this server process's own writes (an
//! `observe` call through the same client; the call's round trip is
//! included) and for another process's writes (this bench process writes to
//! the store directly; the clock starts when its commit returns), on the
//! embedded SQLite store and, with `CAIRN_BENCH_ENGINE=pg` (or `all`), on a
//! throwaway PostgreSQL cluster (`tests/common/pg.rs`).
//!
//! Each round waits a pseudo-random 0-99 ms first, so a write lands at every
//! phase of the server's 100 ms poll; `CAIRN_BENCH_ROUNDS` rounds per row
//! (default 100). Prints p50 / p99 / max in milliseconds as a Markdown table
//! (`cargo bench --bench notify`). A round that hears nothing within 10 s
//! stops the bench with the row's name.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use cairn::store::pg::{PgStore, PgTarget};
use cairn::store::{NewEvent, Store};
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, ProtocolVersion,
    ResourceUpdatedNotificationParam, ServerNotification, SubscribeRequestParams,
    SubscriptionFilter,
};
use rmcp::service::{NotificationContext, RunningService, Subscription};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt, RoleClient, ServiceExt};
use tokio::sync::mpsc;

#[path = "../tests/common/pg.rs"]
mod cluster;

/// The longest wait for one notification before the bench gives up.
const PATIENCE: Duration = Duration::from_secs(10);

/// Where the plan lives: the SQLite file or a PostgreSQL URL.
#[derive(Clone)]
enum Target {
    Sqlite(PathBuf),
    Pg(String),
}

impl Target {
    fn db_arg(&self) -> String {
        match self {
            Target::Sqlite(p) => p.display().to_string(),
            Target::Pg(u) => u.clone(),
        }
    }
    fn engine(&self) -> &'static str {
        match self {
            Target::Sqlite(_) => "SQLite",
            Target::Pg(_) => "PostgreSQL",
        }
    }
}

/// This bench process's own handle on the store: "another process".
enum Writer {
    Sqlite(Box<Store>),
    Pg(Box<PgStore>),
}

impl Writer {
    /// Opens the handle; PostgreSQL's client runs its own runtime, so both
    /// calls leave the bench's runtime first (`block_in_place`).
    fn open(t: &Target) -> Writer {
        tokio::task::block_in_place(|| Writer::open_here(t))
    }
    fn open_here(t: &Target) -> Writer {
        match t {
            Target::Sqlite(p) => Writer::Sqlite(Box::new(Store::open(p).expect("open sqlite"))),
            Target::Pg(u) => Writer::Pg(Box::new(
                PgStore::open(&PgTarget::parse(u, None).expect("pg url")).expect("open pg"),
            )),
        }
    }
    fn write(&self, ev: NewEvent) {
        tokio::task::block_in_place(|| self.write_here(ev))
    }
    fn write_here(&self, ev: NewEvent) {
        match self {
            Writer::Sqlite(s) => s.write(&[ev]).map(|_| ()).expect("write"),
            Writer::Pg(s) => s.write(&[ev]).map(|_| ()).expect("write"),
        }
    }
}

/// A 2025-11-25 client: `initialize`, then `resources/subscribe`; updates
/// arrive through the handler and are forwarded to a channel.
#[derive(Clone)]
struct Legacy(mpsc::UnboundedSender<String>);

impl ClientHandler for Legacy {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("bench-2025", "1.0.0"),
        )
    }
    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.0.send(params.uri);
    }
}

/// A 2026-07-28 client: `server/discover`, then `subscriptions/listen`.
#[derive(Clone)]
struct Modern;

impl ClientHandler for Modern {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("bench-2026", "1.0.0"),
        )
    }
}

/// A connected client of either era and what it hears.
enum Conn {
    Legacy(
        RunningService<RoleClient, Legacy>,
        mpsc::UnboundedReceiver<String>,
    ),
    Modern(RunningService<RoleClient, Modern>, Box<Subscription>),
}

impl Conn {
    async fn next(&mut self, within: Duration) -> Option<String> {
        match self {
            Conn::Legacy(_, rx) => tokio::time::timeout(within, rx.recv()).await.ok().flatten(),
            Conn::Modern(_, sub) => match tokio::time::timeout(within, sub.next()).await {
                Ok(Ok(Some(ServerNotification::ResourceUpdatedNotification(n)))) => {
                    Some(n.params.uri)
                }
                Ok(Ok(Some(other))) => panic!("unexpected on the stream: {other:?}"),
                _ => None,
            },
        }
    }

    async fn observe(&self, slug: &str, text: &str) {
        let args = serde_json::json!({"task_id": slug, "text": text})
            .as_object()
            .cloned()
            .unwrap_or_default();
        let req = CallToolRequestParams::new("observe").with_arguments(args);
        let res = match self {
            Conn::Legacy(c, _) => c.peer().call_tool(req).await,
            Conn::Modern(c, _) => c.peer().call_tool(req).await,
        }
        .expect("observe");
        assert_ne!(res.is_error, Some(true), "{:?}", res.content);
    }

    async fn close(self) {
        match self {
            Conn::Legacy(c, _) => {
                let _ = c.cancel().await;
            }
            Conn::Modern(c, mut sub) => {
                let _ = sub.cancel().await;
                let _ = c.cancel().await;
            }
        }
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Transport {
    Stdio,
    Http,
}

#[derive(Clone, Copy, PartialEq)]
enum Era {
    V2025,
    V2026,
}

/// A running `cairn serve --http` child and its URL.
struct HttpServer(std::process::Child, String);

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn http_server(t: &Target) -> HttpServer {
    use std::io::{BufRead, BufReader, Read};
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["--db", &t.db_arg()])
        .args(["serve", "--http", "127.0.0.1:0", "--no-auth"])
        .env_remove("CAIRN_DB")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn serve --http");
    let mut err = BufReader::new(child.stderr.take().expect("stderr"));
    let mut line = String::new();
    err.read_line(&mut line).expect("banner");
    std::thread::spawn(move || {
        let mut sink = Vec::new();
        let _ = err.read_to_end(&mut sink);
    });
    let start = line.find("http://").unwrap_or_else(|| panic!("{line}"));
    let url = line[start..]
        .split(' ')
        .next()
        .unwrap_or_default()
        .to_string();
    HttpServer(child, url)
}

async fn connect(
    t: &Target,
    transport: Transport,
    era: Era,
    uri: &str,
) -> (Conn, Option<HttpServer>) {
    let server = (transport == Transport::Http).then(|| http_server(t));
    let stdio = || {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn"));
        cmd.args(["--db", &t.db_arg(), "serve"])
            .env_remove("CAIRN_DB");
        TokioChildProcess::builder(cmd)
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn serve")
            .0
    };
    let conn = match era {
        Era::V2025 => {
            let (tx, rx) = mpsc::unbounded_channel();
            let c = match &server {
                None => Legacy(tx).serve(stdio()).await,
                Some(s) => {
                    Legacy(tx)
                        .serve(StreamableHttpClientTransport::from_uri(s.1.clone()))
                        .await
                }
            }
            .expect("initialize");
            #[allow(deprecated)] // the 2025-11-25 era is what this row measures
            c.peer()
                .subscribe(SubscribeRequestParams::new(uri))
                .await
                .expect("resources/subscribe");
            Conn::Legacy(c, rx)
        }
        Era::V2026 => {
            let mode = || ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            };
            let c = match &server {
                None => Modern.serve_with_lifecycle(stdio(), mode()).await,
                Some(s) => {
                    Modern
                        .serve_with_lifecycle(
                            StreamableHttpClientTransport::from_uri(s.1.clone()),
                            mode(),
                        )
                        .await
                }
            }
            .expect("discover");
            let sub = c
                .peer()
                .listen(
                    SubscriptionFilter::builder()
                        .resource_subscription(uri.to_string())
                        .build(),
                )
                .await
                .expect("subscriptions/listen");
            Conn::Modern(c, Box::new(sub))
        }
    };
    (conn, server)
}

/// p50, p99 and max of `samples`, in milliseconds.
fn summary(samples: &mut [Duration]) -> (f64, f64, f64) {
    samples.sort();
    let at = |q: f64| {
        let i = ((samples.len() as f64 - 1.0) * q).round() as usize;
        samples[i].as_secs_f64() * 1e3
    };
    (at(0.5), at(0.99), at(1.0))
}

/// The CPU time (user + system, ms) the server process `pid` spends over
/// `span` while its client holds a subscription and nothing is written:
/// the price of the poll interval. Read from `/proc/PID/stat` (Linux).
async fn idle_cost(pid: u32, span: Duration) -> (f64, f64) {
    let ticks = || -> f64 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let after = stat.rsplit(')').next().unwrap_or_default();
        let f: Vec<&str> = after.split_whitespace().collect();
        let num = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
        num(11) + num(12) // utime, stime (fields 14 and 15)
    };
    let hz = 100.0; // USER_HZ on Linux
    let (t0, c0) = (Instant::now(), ticks());
    tokio::time::sleep(span).await;
    ((ticks() - c0) * 1e3 / hz, t0.elapsed().as_secs_f64() * 1e3)
}

/// A small deterministic generator for the waits between rounds.
struct Lcg(u64);

impl Lcg {
    fn next_ms(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % 100
    }
}

async fn row(t: &Target, transport: Transport, era: Era, rounds: usize) -> Vec<String> {
    let writer = Writer::open(t);
    let slug = format!(
        "bench-{}-{}",
        if transport == Transport::Stdio {
            "stdio"
        } else {
            "http"
        },
        if era == Era::V2025 { "2025" } else { "2026" }
    );
    writer.write(NewEvent::task_create(
        "bench",
        1_782_138_605,
        &slug,
        None,
        None,
    ));
    let uri = format!("cairn://tasks/{slug}");
    let (mut conn, _server) = connect(t, transport, era, &uri).await;
    let mut rng = Lcg(0x2026_0728);
    let mut extra = 0usize;
    let mut lines = Vec::new();
    for own in [true, false] {
        let mut samples = Vec::with_capacity(rounds);
        for round in 0..rounds {
            tokio::time::sleep(Duration::from_millis(rng.next_ms())).await;
            while conn.next(Duration::from_millis(1)).await.is_some() {
                extra += 1;
            }
            let text = format!("round {round}");
            let start = Instant::now();
            if own {
                conn.observe(&slug, &text).await;
            } else {
                writer.write(NewEvent::observation("bench", 1_782_138_606, &slug, &text));
            }
            let start = if own { start } else { Instant::now() };
            match conn.next(PATIENCE).await {
                Some(u) if u == uri => samples.push(start.elapsed()),
                other => panic!(
                    "{} {slug} {}: heard {other:?} within {PATIENCE:?}",
                    t.engine(),
                    if own { "own" } else { "other" }
                ),
            }
        }
        let (p50, p99, max) = summary(&mut samples);
        lines.push(format!(
            "| {} | {} | {} | {} | {rounds} | {p50:.1} | {p99:.1} | {max:.1} |",
            t.engine(),
            if transport == Transport::Stdio {
                "stdio"
            } else {
                "HTTP"
            },
            if era == Era::V2025 {
                "2025-11-25 resources/subscribe"
            } else {
                "2026-07-28 subscriptions/listen"
            },
            if own {
                "own (call included)"
            } else {
                "other process"
            },
        ));
        eprintln!("{}", lines.last().map(String::as_str).unwrap_or_default());
    }
    if let Some(server) = &_server {
        let (busy, wall) = idle_cost(server.0.id(), Duration::from_secs(5)).await;
        lines.push(format!(
            "| {} | HTTP | {} | (idle, subscribed) | CPU {busy:.1} ms over {wall:.0} ms |",
            t.engine(),
            if era == Era::V2025 {
                "2025-11-25"
            } else {
                "2026-07-28"
            },
        ));
        eprintln!("{}", lines.last().map(String::as_str).unwrap_or_default());
    }
    if extra > 0 {
        lines.push(format!(
            "(extra notifications heard between rounds: {extra})"
        ));
    }
    conn.close().await;
    lines
}

fn main() {
    let rounds: usize = std::env::var("CAIRN_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    let engines = std::env::var("CAIRN_BENCH_ENGINE").unwrap_or_else(|_| "sqlite".into());
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join(".git")).expect(".git");
    let mut targets = Vec::new();
    if engines == "sqlite" || engines == "all" {
        let db: &Path = &dir.path().join("cairn.db");
        targets.push(Target::Sqlite(db.to_path_buf()));
    }
    if engines == "pg" || engines == "all" {
        cluster::cluster().unwrap_or_else(|e| panic!("PostgreSQL could not start: {e}"));
        targets.push(Target::Pg(cluster::url().expect("cluster url")));
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let mut out = vec![
        "| engine | transport | era | write | rounds | p50 ms | p99 ms | max ms |".to_string(),
        "|---|---|---|---|---:|---:|---:|---:|".to_string(),
    ];
    rt.block_on(async {
        for t in &targets {
            for transport in [Transport::Stdio, Transport::Http] {
                for era in [Era::V2025, Era::V2026] {
                    out.extend(row(t, transport, era, rounds).await);
                }
            }
        }
    });
    println!("{}", out.join("\n"));
}
