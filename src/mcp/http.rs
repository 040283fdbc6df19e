//! `cairn serve --http ADDR`: MCP over Streamable HTTP at `/mcp` (spec/mcp.md
//! "Wave 2: one server for a team") with rmcp's server transport behind
//! [`super::http_gate`]. One store per server; one `CairnServer` (its own
//! current-task pointer and agent identity `TOKEN-NAME/xxxx`) per MCP
//! session. Serves until SIGINT or SIGTERM, then stops accepting, lets
//! in-flight requests finish (each tool call is one store transaction, so
//! nothing is half-written), closes the sessions and exits 0.

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use hyper_util::server::graceful::GracefulShutdown;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use super::http_gate::{Gate, GateConfig, IDENTITY, LOOPBACK_HOSTS, MAX_BODY_BYTES, MCP_PATH};
use super::serve::init_tracing;
use super::server::{CairnServer, State};
use crate::session::{Capability, Session};
use crate::store::{Store, StoreError};
use crate::tq::engine::Engine;

/// What `cairn serve --http` needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpOptions {
    /// `ADDR` as given: `HOST:PORT` (`127.0.0.1:8765`, `[::1]:0`,
    /// `localhost:8765`, `0.0.0.0:8765`). Port 0 picks a free port; the
    /// startup line on stderr names it.
    pub addr: String,
    /// The `cairn.db` path.
    pub db: PathBuf,
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

/// How long shutdown waits for in-flight requests before closing sessions.
const DRAIN: Duration = Duration::from_secs(10);

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
    drop(Store::open(&opts.db)?);
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
    let local = listener
        .local_addr()
        .map_err(|e| HttpError::Io(e.to_string()))?;
    let mut allow_hosts: Vec<String> = LOOPBACK_HOSTS.iter().map(|s| s.to_string()).collect();
    allow_hosts.extend(
        opts.allow_hosts
            .iter()
            .map(|h| h.trim().to_ascii_lowercase()),
    );
    let tokens = (!opts.no_auth).then(|| super::http_tokens::tokens_path(&opts.db));
    let ct = CancellationToken::new();
    let sessions = Arc::new(LocalSessionManager::default());
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(allow_hosts.clone())
        .with_max_request_body_bytes(MAX_BODY_BYTES)
        .with_cancellation_token(ct.clone());
    let (db, root) = (opts.db.clone(), opts.root.clone());
    let factory = move || -> Result<CairnServer, std::io::Error> {
        let identity = IDENTITY
            .try_with(|i| i.clone())
            .map_err(|_| std::io::Error::other("no identity for this request"))?;
        let store = Store::open(&db).map_err(std::io::Error::other)?;
        let mut session = Session::with_grants(identity.grants);
        session.agent = Some(format!("{}/{}", identity.name, session.short_id()));
        tracing::info!(agent = session.agent.as_deref(), "session opened");
        Ok(CairnServer::new(State {
            store,
            session,
            engine: Engine::new(),
            root: root.clone(),
        }))
    };
    let service = StreamableHttpService::new(factory, sessions.clone(), config);
    let gate = Gate::new(
        GateConfig {
            tokens: tokens.clone(),
            grants: opts.grants.clone(),
            allow_hosts,
            max_sessions: opts.max_sessions,
        },
        service,
        sessions,
    );
    let auth = match &tokens {
        Some(p) => format!("bearer tokens from {}", p.display()),
        None => "no auth (loopback only)".to_string(),
    };
    eprintln!(
        "cairn serve: MCP over HTTP at http://{local}{MCP_PATH} for the store at {} ({auth}); Ctrl-C to stop",
        opts.db.display()
    );
    let graceful = GracefulShutdown::new();
    let stop = shutdown_signal();
    tokio::pin!(stop);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (stream, _) = match accepted {
                    Ok(a) => a,
                    Err(e) => {
                        tracing::warn!(error = %e, "accept failed");
                        continue;
                    }
                };
                let gate = gate.clone();
                let svc = service_fn(move |req| {
                    let gate = gate.clone();
                    async move { Ok::<_, std::convert::Infallible>(gate.handle(req).await) }
                });
                let conn = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), svc);
                let conn = graceful.watch(conn);
                tokio::spawn(async move {
                    if let Err(e) = conn.await {
                        tracing::debug!(error = %e, "connection ended");
                    }
                });
            }
            () = &mut stop => break,
        }
    }
    drop(listener);
    eprintln!("cairn serve: stopping; letting in-flight requests finish");
    // In-flight POSTs finish and idle connections close; long-lived SSE
    // streams end when the sessions are cancelled below.
    let drained = tokio::time::timeout(DRAIN, async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        ct.cancel();
        graceful.shutdown().await;
    })
    .await;
    if drained.is_err() {
        tracing::warn!("some connections did not close within {DRAIN:?}");
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(addr: &str, no_auth: bool) -> HttpOptions {
        HttpOptions {
            addr: addr.to_string(),
            db: PathBuf::from("x.db"),
            root: PathBuf::from("."),
            grants: Capability::ALL.into_iter().collect(),
            no_auth,
            allow_hosts: vec![],
            max_sessions: DEFAULT_MAX_SESSIONS,
        }
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
