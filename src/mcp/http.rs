//! `cairn serve --http ADDR`: MCP over Streamable HTTP at `/mcp` (spec/mcp.md
//! "Wave 2: one server for a team") with rmcp's server transport behind
//! [`super::http_gate`]. One store per server; one `CairnServer` (its own
//! current-task pointer and agent identity `TOKEN-NAME/xxxx`) per MCP
//! session. Serves until SIGINT or SIGTERM, then drains
//! ([`super::drain`]): every new request (on a new or a kept-alive
//! connection) is answered `503` with a sentence, the requests and tool
//! calls in flight finish (each tool call is one store transaction, so
//! nothing is half-written), every session hears why its streams close,
//! the sessions close, and the process exits 0. `GET /healthz`
//! ([`super::health`]) answers load balancers without a token.
//!
//! Limits against clients that hold connections without finishing a
//! request (issue 19 item 3): a request's headers must arrive within
//! [`HttpOptions::header_timeout`] (hyper's `header_read_timeout`; it also
//! closes a keep-alive connection left idle that long) and a POST body
//! within [`HttpOptions::body_timeout`] (`408`, in the gate); at most
//! [`connection_cap`] connections are open at once, below the descriptor
//! limit, and further ones wait in the listen backlog until one closes; an
//! accept error (`EMFILE`, ...) makes the loop back off 10 ms .. 1 s and is
//! logged at most once a second with a count of the ones suppressed
//! ([`AcceptBackoff`]).

use super::http_tokens::TokenSource;
use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use hyper_util::server::graceful::GracefulShutdown;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use super::http_gate::{
    Gate, GateConfig, IDENTITY, Identity, LOOPBACK_HOSTS, MAX_BODY_BYTES, MCP_PATH, StatelessAgents,
};
use super::serve::init_tracing;
use super::server::{CairnServer, State};
use crate::board::api::Source;
use crate::board::web::{Access, Board};
use crate::session::{Capability, Session};
use crate::store::{Store, StoreError};
use crate::tq::engine::Engine;

/// What `cairn serve --http` needs.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// `ADDR` as given: `HOST:PORT` (`127.0.0.1:8765`, `[::1]:0`,
    /// `localhost:8765`, `0.0.0.0:8765`). Port 0 picks a free port; the
    /// startup line on stderr names it.
    pub addr: String,
    /// The `cairn.db` path.
    pub db: PathBuf,
    /// A PostgreSQL store instead of `db` (spec/team.md): sessions open it,
    /// tokens live in its `tokens` table.
    pub pg: Option<crate::store::pg::PgTarget>,
    /// The project root (handoff confinement).
    pub root: PathBuf,
    /// `--grant`: the most any session may hold (default all three).
    pub grants: BTreeSet<Capability>,
    /// `--no-auth`: serve without tokens (loopback addresses only).
    pub no_auth: bool,
    /// `--allow-host NAME` (repeatable): host names accepted in `Host` and
    /// `Origin` besides the loopback names.
    pub allow_hosts: Vec<String>,
    /// `--max-sessions` (default 64).
    pub max_sessions: usize,
    /// How long a client may take to send a request's headers (and how long
    /// a keep-alive connection may stay idle); default
    /// [`DEFAULT_HEADER_TIMEOUT`].
    pub header_timeout: Duration,
    /// How long a POST body may take to arrive after its headers; default
    /// [`DEFAULT_BODY_TIMEOUT`].
    pub body_timeout: Duration,
    /// The most connections open at once; `None` computes it from the
    /// descriptor limit ([`connection_cap`]).
    pub max_connections: Option<usize>,
    /// `cairn board`: serve only the board (no `/mcp`), to the browser that
    /// opens the one-time link printed at start; `open` also starts the
    /// system's browser on it. `None` for `cairn serve --http`.
    pub local_board: Option<LocalBoard>,
    /// `--route-id NAME`: session ids sent as `NAME.ID`, so a load balancer
    /// can route a session to this server by its prefix
    /// ([`super::session_route`]). `None`: rmcp's ids as they are.
    pub route_id: Option<String>,
}

/// What `cairn board` asks of the server (docs/board.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LocalBoard {
    /// Start the system's browser on the one-time link.
    pub open: bool,
}

/// Why `cairn serve --http` could not serve.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    /// A bad `ADDR`, `--no-auth` off loopback, `--max-sessions 0`: one
    /// sentence.
    #[error("{0}")]
    Options(String),
    /// The store could not be opened.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The runtime could not start or the address could not be bound.
    #[error("{0}")]
    Io(String),
}

/// The default of `--max-sessions`.
pub const DEFAULT_MAX_SESSIONS: usize = 64;

/// The default time a client has to send a request's headers: 10 s.
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// The default time a client has to send a POST body: 30 s.
pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(30);

/// Descriptors kept for the server itself (listener, runtime, stderr, the
/// token file) besides the per-session reserve.
const FD_RESERVE: u64 = 32;

/// Descriptors kept per allowed session (its store connection: database,
/// WAL, and a log file while it writes).
const FD_PER_SESSION: u64 = 4;

/// The connection cap when the descriptor limit is unknown or unlimited.
const MAX_CONNECTIONS: usize = 4096;

/// The descriptor limit of this process (`RLIMIT_NOFILE`'s soft value), or
/// `None` when it cannot be read or is unlimited.
// `rlim_t` is `u64` on Linux and macOS, not on every Unix.
#[allow(clippy::useless_conversion)]
pub fn nofile_limit() -> Option<u64> {
    #[cfg(unix)]
    {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes one `rlimit` through a valid pointer.
        let rc = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) };
        if rc != 0 || lim.rlim_cur == libc::RLIM_INFINITY {
            return None;
        }
        u64::try_from(lim.rlim_cur).ok()
    }
    #[cfg(not(unix))]
    None
}

/// The most sessions open at once: `max_sessions`, lowered so that the
/// sessions' descriptors (4 each) and one connection each fit in the
/// descriptor limit `nofile` after the server's reserve (32): with 128
/// descriptors, 19 (hostile run H3: 64 sessions at 4 descriptors each
/// exhausted a 128 limit and wedged the server). At least 1.
pub fn session_cap(nofile: Option<u64>, max_sessions: usize) -> usize {
    let Some(limit) = nofile else {
        return max_sessions.max(1);
    };
    let room = limit.saturating_sub(FD_RESERVE) / (FD_PER_SESSION + 1);
    usize::try_from(room)
        .map_or(max_sessions, |r| r.min(max_sessions))
        .max(1)
}

/// The most connections served at once: the descriptor limit `nofile`
/// minus a reserve (32, plus 4 per session of [`session_cap`]), but at
/// least one per session, and at most 4096 (also when the limit is
/// unknown).
pub fn connection_cap(nofile: Option<u64>, max_sessions: usize) -> usize {
    let Some(limit) = nofile else {
        return MAX_CONNECTIONS;
    };
    let sessions = session_cap(nofile, max_sessions) as u64;
    let reserve = FD_RESERVE.saturating_add(FD_PER_SESSION.saturating_mul(sessions));
    let cap = limit.saturating_sub(reserve).max(sessions).max(1);
    usize::try_from(cap).map_or(MAX_CONNECTIONS, |c| c.min(MAX_CONNECTIONS))
}

/// Backoff and rate-limited logging for a failing `accept`. Each error
/// doubles the pause (10 ms, 20 ms, ... capped at 1 s) until an accept
/// succeeds; at most one log line a second, saying how many errors were
/// not logged since the last line.
#[derive(Debug)]
pub struct AcceptBackoff {
    pause: Duration,
    last_logged: Option<Instant>,
    suppressed: u64,
}

impl Default for AcceptBackoff {
    fn default() -> Self {
        Self::new()
    }
}

impl AcceptBackoff {
    /// The first pause after an error.
    pub const MIN: Duration = Duration::from_millis(10);
    /// The longest pause.
    pub const MAX: Duration = Duration::from_secs(1);
    /// At most one log line per this interval.
    pub const LOG_EVERY: Duration = Duration::from_secs(1);

    /// No errors yet.
    pub fn new() -> AcceptBackoff {
        AcceptBackoff {
            pause: Self::MIN,
            last_logged: None,
            suppressed: 0,
        }
    }

    /// An accept failed at `now` with `error`: how long to pause before the
    /// next accept, and the line to log, if one is due.
    pub fn on_error(&mut self, now: Instant, error: &str) -> (Duration, Option<String>) {
        let pause = self.pause;
        self.pause = (self.pause * 2).min(Self::MAX);
        let due = self
            .last_logged
            .is_none_or(|t| now.saturating_duration_since(t) >= Self::LOG_EVERY);
        if !due {
            self.suppressed += 1;
            return (pause, None);
        }
        self.last_logged = Some(now);
        let line = match std::mem::take(&mut self.suppressed) {
            0 => format!("accept failed: {error}; pausing {} ms", pause.as_millis()),
            n => format!(
                "accept failed: {error}; pausing {} ms ({n} more {} not logged in the last second)",
                pause.as_millis(),
                if n == 1 { "failure" } else { "failures" }
            ),
        };
        (pause, Some(line))
    }

    /// An accept succeeded: the next error starts from the shortest pause.
    pub fn on_success(&mut self) {
        self.pause = Self::MIN;
    }
}

/// How long shutdown waits for in-flight requests before closing sessions.
const DRAIN: Duration = Duration::from_secs(10);

/// How long a drained server keeps its connections after the last piece of
/// work ended, so the last results reach their clients before the streams
/// close.
const FLUSH: Duration = Duration::from_millis(250);

/// How long the sessions' farewell messages may take, all together.
const FAREWELL: Duration = Duration::from_secs(2);

/// How long the connections may take to close once the work in flight has
/// ended (or [`DRAIN`] passed): a half-sent request is not work in flight,
/// so this is short; the whole stop stays within DRAIN + FLUSH + FAREWELL
/// + CLOSE (about 14 s), never two full DRAINs.
const CLOSE: Duration = Duration::from_secs(2);

/// The `503` every request gets once the server is stopping
/// ([`super::drain::SHUTTING_DOWN`], `Retry-After: 1`, `Connection: close`).
pub fn stopping_response() -> http::Response<super::http_gate::Body> {
    let mut r = super::http_gate::text_response(
        http::StatusCode::SERVICE_UNAVAILABLE,
        super::drain::SHUTTING_DOWN,
    );
    let h = r.headers_mut();
    h.insert(
        http::header::RETRY_AFTER,
        http::HeaderValue::from_static("1"),
    );
    h.insert(
        http::header::CONNECTION,
        http::HeaderValue::from_static("close"),
    );
    r
}

/// The servers this process made (sessions and stateless agents), held
/// weakly, so a graceful stop can say farewell to those still open.
#[derive(Default)]
struct Made(std::sync::Mutex<Vec<super::subscriptions::WeakServer>>);

impl Made {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<super::subscriptions::WeakServer>> {
        match self.0.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    /// Remembers `server`, forgetting the ones that ended once the list
    /// grows past `cap`.
    fn add(&self, server: &CairnServer, cap: usize) {
        let mut list = self.lock();
        if list.len() >= cap {
            list.retain(|w| w.alive());
        }
        list.push(server.downgrade());
    }

    /// The servers still open.
    fn open(&self) -> Vec<CairnServer> {
        self.lock().iter().filter_map(|w| w.upgrade()).collect()
    }
}

/// How often the sessions of revoked or changed tokens are looked for and
/// closed ([`Gate::sweep`]).
const SWEEP_EVERY: Duration = Duration::from_secs(1);

/// Resolves `addr` to socket addresses. Errors: a sentence naming `addr`.
fn resolve(addr: &str) -> Result<Vec<SocketAddr>, HttpError> {
    use std::net::ToSocketAddrs;
    let bad = |why: String| {
        HttpError::Options(format!(
            "cannot use --http {addr}: {why}; expected HOST:PORT such as 127.0.0.1:8765."
        ))
    };
    let addrs: Vec<SocketAddr> = addr
        .to_socket_addrs()
        .map_err(|e| bad(e.to_string()))?
        .collect();
    if addrs.is_empty() {
        return Err(bad("it names no address".to_string()));
    }
    Ok(addrs)
}

/// Checks the options before anything is bound: `--no-auth` only with an
/// address whose every resolution is loopback, `--max-sessions` at least 1.
/// Returns the address to bind.
pub fn check(opts: &HttpOptions) -> Result<SocketAddr, HttpError> {
    let addrs = resolve(&opts.addr)?;
    if opts.no_auth && !addrs.iter().all(|a| a.ip().is_loopback()) {
        return Err(HttpError::Options(format!(
            "--no-auth is accepted only with a loopback address (127.0.0.1, ::1, localhost), not {}.",
            opts.addr
        )));
    }
    if let Some(id) = &opts.route_id {
        super::session_route::check_route_id(id).map_err(HttpError::Options)?;
    }
    if opts.max_sessions == 0 {
        return Err(HttpError::Options(
            "--max-sessions must be at least 1.".to_string(),
        ));
    }
    Ok(addrs[0])
}

/// Serves MCP over HTTP until SIGINT/SIGTERM; `Ok(())` after a graceful
/// stop. One line on stderr says where it listens. Errors: bad options
/// ([`check`]), a store that cannot be opened, a port that cannot be bound.
pub fn serve_http(opts: HttpOptions) -> Result<(), HttpError> {
    init_tracing();
    let addr = check(&opts)?;
    // Open once up front: a missing or too-new store fails here, not per session.
    match &opts.pg {
        Some(t) => drop(crate::store::pg::PgStore::open(t)?),
        None => drop(Store::open(&opts.db)?),
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .map_err(|e| HttpError::Io(format!("cannot start the runtime: {e}")))?;
    rt.block_on(run(opts, addr))
}

async fn run(opts: HttpOptions, addr: SocketAddr) -> Result<(), HttpError> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| HttpError::Io(format!("cannot listen on {addr}: {e}.")))?;
    let nofile = nofile_limit();
    let sessions_allowed = session_cap(nofile, opts.max_sessions);
    let cap = opts
        .max_connections
        .unwrap_or_else(|| connection_cap(nofile, opts.max_sessions))
        .clamp(1, tokio::sync::Semaphore::MAX_PERMITS);
    tracing::info!(
        connections = cap,
        descriptors = nofile,
        header_timeout = ?opts.header_timeout,
        body_timeout = ?opts.body_timeout,
        "connection limits"
    );
    let slots = Arc::new(tokio::sync::Semaphore::new(cap));
    let local = listener
        .local_addr()
        .map_err(|e| HttpError::Io(e.to_string()))?;
    let mut allow_hosts: Vec<String> = LOOPBACK_HOSTS.iter().map(|s| s.to_string()).collect();
    allow_hosts.extend(
        opts.allow_hosts
            .iter()
            .map(|h| h.trim().to_ascii_lowercase()),
    );
    let tokens = match (&opts.pg, opts.no_auth) {
        (_, true) => None,
        (Some(t), false) => Some(TokenSource::pg(t)),
        (None, false) => Some(
            tokio::task::block_in_place(|| TokenSource::sqlite(&opts.db))
                .map_err(|e| HttpError::Io(e.to_string()))?,
        ),
    };
    let pg = opts.pg.clone();
    let ct = CancellationToken::new();
    let sessions = Arc::new(LocalSessionManager::default());
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(allow_hosts.clone())
        .with_max_request_body_bytes(MAX_BODY_BYTES)
        .with_cancellation_token(ct.clone());
    let (db, root) = (opts.db.clone(), opts.root.clone());
    let agents = Arc::new(StatelessAgents::default());
    let stateless = agents.clone();
    let made = Arc::new(Made::default());
    let made_by = made.clone();
    let made_cap = 2 * sessions_allowed + 64;
    let factory = move || -> Result<CairnServer, std::io::Error> {
        let identity = IDENTITY
            .try_with(|i| i.clone())
            .map_err(|_| std::io::Error::other("no identity for this request"))?;
        if identity.stateless {
            return stateless.server_for(&identity, || {
                let s = open_server(&identity, &pg, &db, &root)?;
                made_by.add(&s, made_cap);
                Ok(s)
            });
        }
        let s = open_server(&identity, &pg, &db, &root)?;
        made_by.add(&s, made_cap);
        Ok(s)
    };
    let probe = Arc::new(match &opts.pg {
        Some(t) => crate::store::health::Probe::pg(t),
        None => crate::store::health::Probe::sqlite(opts.db.clone()),
    });
    let service = StreamableHttpService::new(factory, sessions.clone(), config);
    let gate = Gate::new(
        GateConfig {
            tokens: tokens.clone(),
            grants: opts.grants.clone(),
            allow_hosts,
            max_sessions: sessions_allowed,
            body_timeout: opts.body_timeout,
        },
        service,
        sessions,
        agents,
    );
    let board_closing = CancellationToken::new();
    let access = match (&opts.local_board, &tokens) {
        (Some(_), _) => Access::Link,
        (None, Some(_)) => Access::Tokens,
        (None, None) => Access::Open,
    };
    let board = Board::new(
        gate.clone(),
        Source {
            db: opts.db.clone(),
            pg: opts.pg.clone(),
            root: opts.root.clone(),
            closing: board_closing.clone(),
        },
        access,
    )
    .on_port(local.port());
    if let Some(lb) = opts.local_board {
        let link = board.one_time_path().map_err(HttpError::Io)?;
        let url = format!("http://{local}{link}");
        let store = match &opts.pg {
            Some(t) => format!("{} schema {}", t.shown, t.schema),
            None => opts.db.display().to_string(),
        };
        eprintln!(
            "cairn board: the board of {store} at http://{local}/ (read-only); open this one-time link: {url}"
        );
        eprintln!("cairn board: Ctrl-C to stop");
        if lb.open {
            open_browser(&url);
        }
    }
    let auth = match &tokens {
        Some(TokenSource::File(p)) => format!("bearer tokens from {}", p.display()),
        Some(TokenSource::Sqlite(..)) => "bearer tokens from the store's tokens table".to_string(),
        Some(TokenSource::Pg(..)) => "bearer tokens from the tokens table".to_string(),
        None => "no auth (loopback only)".to_string(),
    };
    if opts.local_board.is_none() {
        eprintln!(
            "cairn serve: MCP over HTTP at http://{local}{MCP_PATH} for the store at {} ({auth}); Ctrl-C to stop",
            match &opts.pg {
                Some(t) => format!("{} schema {}", t.shown, t.schema),
                None => opts.db.display().to_string(),
            }
        );
        eprintln!("cairn serve: the board (read-only) at http://{local}/");
    }
    // After the listening line (the first line, which scripts read).
    if sessions_allowed < opts.max_sessions {
        eprintln!(
            "cairn: --max-sessions {} lowered to {sessions_allowed} by the descriptor limit ({}); raise it with ulimit -n for more sessions",
            opts.max_sessions,
            nofile.unwrap_or(0)
        );
    }
    if tokens.is_some() {
        let (gate, ct) = (gate.clone(), ct.clone());
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(SWEEP_EVERY);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    _ = tick.tick() => { gate.sweep().await; }
                    () = ct.cancelled() => break,
                }
            }
        });
    }
    let graceful = GracefulShutdown::new();
    let stop = shutdown_signal();
    tokio::pin!(stop);
    // Set when the signal came: resolves once the work in flight is done.
    let (drained_tx, drained_rx) = tokio::sync::oneshot::channel::<()>();
    let mut drained_tx = Some(drained_tx);
    let drained = async move {
        if drained_rx.await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    tokio::pin!(drained);
    let mut backoff = AcceptBackoff::new();
    let mut http1 = hyper::server::conn::http1::Builder::new();
    http1
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(opts.header_timeout);
    loop {
        // A free connection slot first: past the cap, new connections wait
        // in the listen backlog instead of taking descriptors.
        let slot = tokio::select! {
            s = slots.clone().acquire_owned() => s,
            () = &mut stop, if drained_tx.is_some() => {
                begin_drain(&mut drained_tx);
                continue;
            }
            () = &mut drained => break,
        };
        let Ok(slot) = slot else { break };
        let accepted = tokio::select! {
            a = listener.accept() => a,
            () = &mut stop, if drained_tx.is_some() => {
                begin_drain(&mut drained_tx);
                continue;
            }
            () = &mut drained => break,
        };
        let stream = match accepted {
            Ok((stream, _)) => {
                backoff.on_success();
                stream
            }
            Err(e) => {
                drop(slot);
                let (pause, line) = backoff.on_error(Instant::now(), &e.to_string());
                if let Some(line) = line {
                    tracing::warn!("{line}");
                }
                tokio::select! {
                    () = tokio::time::sleep(pause) => continue,
                    () = &mut drained => break,
                }
            }
        };
        let (gate, board, probe) = (gate.clone(), board.clone(), probe.clone());
        let board_only = opts.local_board.is_some();
        let route = opts.route_id.clone();
        let svc = service_fn(move |mut req: http::Request<hyper::body::Incoming>| {
            let (gate, board, probe) = (gate.clone(), board.clone(), probe.clone());
            let route = route.clone();
            async move {
                if req.uri().path() == super::health::HEALTH_PATH {
                    return Ok(super::health::answer(&probe, req.method()).await);
                }
                if super::drain::DRAIN.stopping() {
                    return Ok(stopping_response());
                }
                // In flight until the response's headers are out.
                let _work = super::drain::DRAIN.work();
                let r = if req.uri().path() == MCP_PATH && !board_only {
                    match &route {
                        Some(route) => {
                            super::session_route::untag(&mut req, route);
                            let mut r = gate.handle(req).await;
                            super::session_route::tag(&mut r, route);
                            r
                        }
                        None => gate.handle(req).await,
                    }
                } else {
                    board.handle(req).await
                };
                Ok::<_, std::convert::Infallible>(r)
            }
        });
        let conn = http1.serve_connection(TokioIo::new(stream), svc);
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!(error = %e, "connection ended");
            }
            drop(slot);
        });
    }
    drop(listener);
    // The work in flight is done: every open session and board stream
    // hears why its streams close, then the sessions end and the
    // connections close.
    board_closing.cancel();
    let open = made.open();
    let farewells = async {
        for server in &open {
            server.farewell(super::drain::CLOSING).await;
        }
    };
    if tokio::time::timeout(FAREWELL, farewells).await.is_err() {
        tracing::warn!("some sessions did not hear the farewell within {FAREWELL:?}");
    }
    drop(open);
    let closed = tokio::time::timeout(CLOSE, async {
        ct.cancel();
        graceful.shutdown().await;
    })
    .await;
    if closed.is_err() {
        tracing::warn!("some connections did not close within {CLOSE:?}; closing them");
    }
    eprintln!("cairn serve: stopped");
    Ok(())
}

/// The stop signal came: new requests get `503` from now on; a task waits
/// for the work in flight (at most [`DRAIN`]) and a short flush, then
/// fires `tx`, which ends the accept loop.
fn begin_drain(tx: &mut Option<tokio::sync::oneshot::Sender<()>>) {
    let Some(tx) = tx.take() else { return };
    let drain = &super::drain::DRAIN;
    drain.begin();
    eprintln!(
        "cairn serve: stopping; finishing {} in flight, answering new ones 503",
        requests(drain.busy())
    );
    tokio::spawn(async move {
        if !drain.idle(DRAIN).await {
            tracing::warn!("requests still in flight after {DRAIN:?}; closing anyway");
        }
        tokio::time::sleep(FLUSH).await;
        let _ = tx.send(());
    });
}

/// The server of one HTTP session, or of a token's stateless agent: the
/// store opened for it (PostgreSQL off the async workers), the token's
/// grants, and its agent: `TOKEN-NAME/xxxx` for a session, the token's name
/// itself for stateless requests (docs/mcp.md "Identity by token").
/// Errors: the store's.
fn open_server(
    identity: &Identity,
    pg: &Option<crate::store::pg::PgTarget>,
    db: &std::path::Path,
    root: &std::path::Path,
) -> Result<CairnServer, std::io::Error> {
    let store = match pg {
        Some(t) => crate::store::Db::Pg(Box::new(
            tokio::task::block_in_place(|| crate::store::pg::PgStore::open(t))
                .map_err(std::io::Error::other)?,
        )),
        None => crate::store::Db::Sqlite(Store::open(db).map_err(std::io::Error::other)?),
    };
    let mut session = Session::with_grants(identity.grants.clone());
    session.agent = Some(if identity.stateless {
        identity.name.clone()
    } else {
        format!("{}/{}", identity.name, session.short_id())
    });
    tracing::info!(
        agent = session.agent.as_deref(),
        stateless = identity.stateless,
        "session opened"
    );
    Ok(CairnServer::new(State {
        store,
        session,
        engine: Engine::new(),
        root: root.to_path_buf(),
    })
    .with_stored_current(identity.stateless)
    .with_fence(true))
}

/// Starts the system's browser on `url` (`xdg-open`, `open` on macOS),
/// without waiting; a failure is one line on stderr.
fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    if let Err(e) = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
    {
        eprintln!("cairn board: could not start a browser ({opener}: {e}); open the link yourself");
    }
}

/// Resolves on SIGINT (Ctrl-C) or, on Unix, SIGTERM.
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

/// `1 request`, `N requests`.
fn requests(n: usize) -> String {
    if n == 1 {
        "1 request".to_string()
    } else {
        format!("{n} requests")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(addr: &str, no_auth: bool) -> HttpOptions {
        HttpOptions {
            addr: addr.to_string(),
            db: PathBuf::from("x.db"),
            pg: None,
            root: PathBuf::from("."),
            grants: Capability::ALL.into_iter().collect(),
            no_auth,
            allow_hosts: vec![],
            max_sessions: DEFAULT_MAX_SESSIONS,
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            body_timeout: DEFAULT_BODY_TIMEOUT,
            max_connections: None,
            local_board: None,
            route_id: None,
        }
    }

    #[test]
    fn the_connection_cap_stays_below_the_descriptor_limit() {
        // 128 descriptors, 64 sessions asked: (128 - 32) / 5 = 19 sessions
        // (76 descriptors), 128 - 32 - 76 = 20 connections.
        assert_eq!(session_cap(Some(128), 64), 19);
        assert_eq!(connection_cap(Some(128), 64), 20);
        assert_eq!(session_cap(Some(256), 64), 44);
        assert_eq!(connection_cap(Some(256), 64), 48);
        // 1024 descriptors: every session fits; 1024 - (32 + 4 * 64).
        assert_eq!(session_cap(Some(1024), 64), 64);
        assert_eq!(connection_cap(Some(1024), 64), 736);
        assert_eq!(connection_cap(Some(1024), 1), 988);
        assert_eq!(session_cap(None, 64), 64);
        assert_eq!(session_cap(Some(0), 64), 1);
        assert_eq!(connection_cap(Some(1 << 40), 64), 4096);
        assert_eq!(connection_cap(None, 64), 4096);
        assert_eq!(connection_cap(Some(1), 64), 1);
        assert_eq!(connection_cap(Some(0), 64), 1);
    }

    /// Issue 19 item 3: a failing accept (EMFILE) backs off 10 ms .. 1 s
    /// instead of spinning, and logs at most one line a second, with the
    /// number of failures it did not log.
    #[test]
    fn accept_errors_back_off_and_are_logged_once_a_second() {
        let mut b = AcceptBackoff::new();
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let (p, line) = b.on_error(t0, "Too many open files (os error 24)");
        assert_eq!(p, ms(10));
        assert_eq!(
            line.as_deref(),
            Some("accept failed: Too many open files (os error 24); pausing 10 ms")
        );
        let mut pauses = vec![];
        let mut t = t0;
        for _ in 0..9 {
            t += ms(100);
            let (p, line) = b.on_error(t, "Too many open files (os error 24)");
            assert_eq!(line, None, "logged twice within a second");
            pauses.push(p.as_millis());
        }
        assert_eq!(pauses, [20, 40, 80, 160, 320, 640, 1000, 1000, 1000]);
        let (p, line) = b.on_error(t0 + ms(1000), "Too many open files (os error 24)");
        assert_eq!(p, ms(1000));
        assert_eq!(
            line.as_deref(),
            Some(
                "accept failed: Too many open files (os error 24); pausing 1000 ms (9 more failures not logged in the last second)"
            )
        );
        b.on_success();
        let (p, line) = b.on_error(t0 + ms(1500), "x");
        assert_eq!(p, ms(10));
        assert_eq!(line, None);
        let (_, line) = b.on_error(t0 + ms(2000), "x");
        assert_eq!(
            line.as_deref(),
            Some("accept failed: x; pausing 20 ms (1 more failure not logged in the last second)")
        );
    }

    #[test]
    fn no_auth_only_on_loopback() {
        assert!(check(&opts("127.0.0.1:0", true)).is_ok());
        assert!(check(&opts("[::1]:0", true)).is_ok());
        assert_eq!(
            check(&opts("0.0.0.0:0", true)).unwrap_err().to_string(),
            "--no-auth is accepted only with a loopback address (127.0.0.1, ::1, localhost), not 0.0.0.0:0."
        );
        assert!(check(&opts("0.0.0.0:0", false)).is_ok());
        assert!(check(&opts("nonsense", false)).is_err());
    }
}
