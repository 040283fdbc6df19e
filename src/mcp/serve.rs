//! `cairn serve`: MCP over stdio until the client closes stdin
//! (spec/mcp.md "Serving", seed 003). stdout carries JSON-RPC only (through
//! [`super::lines::LineTransport`], which answers malformed lines itself);
//! every diagnostic goes to stderr through `tracing`.

use std::collections::BTreeSet;
use std::io::IsTerminal;
use std::path::PathBuf;

use rmcp::ServiceExt;

use super::lines::LineTransport;
use super::server::{CairnServer, RootsPolicy, State};
use crate::session::{Capability, Session};
use crate::store::pg::{PgStore, PgTarget};
use crate::store::{Db, Store, StoreError};
use crate::tq::engine::Engine;

/// What `cairn serve` needs: the store file, the project root and the grants.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The `cairn.db` path (after `--db` / `CAIRN_DB` / location resolution).
    pub db: PathBuf,
    /// The project root (handoff notes must stay inside it): the store
    /// location's `project`.
    pub root: PathBuf,
    /// The capabilities this server holds (`--grant`, default all three).
    pub grants: BTreeSet<Capability>,
    /// Whether a client's roots may choose the store: false when `--db` or
    /// `CAIRN_DB` pinned it (spec/mcp.md "Roots").
    pub follow_roots: bool,
    /// The store is the global scratch store (started outside any project):
    /// the session says so in its instructions and first tool answer.
    pub scratch: bool,
    /// A PostgreSQL store instead of `db` (`--db postgres://…`,
    /// `--pg-schema`; spec/team.md). Client roots never move it.
    pub pg: Option<PgTarget>,
    /// `cairn serve --as NAME`: the session's agent name as given, instead
    /// of the client's name plus a session id (spec/tq.md §9).
    pub agent: Option<String>,
    /// `cairn serve --fence`: fence the written text in tool texts
    /// (spec/tq.md §10; off by default on stdio so the seed's texts hold).
    pub fence: bool,
}

/// Why serving failed.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The store could not be opened.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The async runtime could not start.
    #[error("cannot start the runtime: {0}")]
    Runtime(std::io::Error),
    /// The MCP session failed to initialise or ended with an error.
    #[error("MCP session failed: {0}")]
    Mcp(String),
}

/// The stderr filter when `CAIRN_LOG` is unset: warnings and errors, except
/// rmcp's per-request `response error` warning (a protocol fault is the
/// client's business, answered to it; issue 14 "quiet stderr").
pub const DEFAULT_LOG_FILTER: &str = "warn,rmcp::service=error";

/// Installs the `tracing` subscriber: stderr (filter from `CAIRN_LOG`, default
/// [`DEFAULT_LOG_FILTER`]) plus the MCP `logging` capture layer
/// ([`super::logging`]). Idempotent: a second call does nothing.
pub fn init_tracing() {
    use tracing_subscriber::Layer;
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let filter = tracing_subscriber::EnvFilter::try_from_env("CAIRN_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(DEFAULT_LOG_FILTER));
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_filter(filter);
    let _ = tracing_subscriber::registry()
        .with(stderr)
        .with(super::logging::CaptureLayer.with_filter(super::logging::capture_filter()))
        .try_init();
}

/// Serves MCP on stdin/stdout until the client closes stdin, stops reading
/// stdout (a broken pipe), or the process gets SIGTERM, SIGHUP or SIGINT
/// (the answers in flight get at most 2 seconds, stdin's and stdout's
/// flags are put back); `Ok(())` then. When stdin is a terminal, one line
/// on stderr says what is served and where the store is. Errors:
/// [`ServeError`].
pub fn serve(opts: ServeOptions) -> Result<(), ServeError> {
    init_tracing();
    let store = match &opts.pg {
        Some(t) => Db::Pg(Box::new(PgStore::open(t)?)),
        None => Db::Sqlite(Store::open(&opts.db)?),
    };
    if std::io::stdin().is_terminal() {
        eprintln!(
            "cairn serve: MCP over stdio for the store at {} (waiting for a client; Ctrl-D to stop)",
            store.r().describe()
        );
    }
    let follow_roots = opts.follow_roots && opts.pg.is_none();
    let server = CairnServer::new(State {
        store,
        session: Session {
            agent: opts.agent,
            ..Session::with_grants(opts.grants)
        },
        engine: Engine::new(),
        root: opts.root,
    })
    .with_scratch(opts.scratch)
    .with_fence(opts.fence)
    .with_roots(if follow_roots {
        RootsPolicy::Follow
    } else {
        RootsPolicy::Ignore
    });
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(ServeError::Runtime)?;
    let served = rt.block_on(async move {
        match super::stdio_pipes::pipes() {
            Some((read, write, _restore)) => run(server, LineTransport::new(read, write)).await,
            None => {
                run(
                    server,
                    LineTransport::new(tokio::io::stdin(), tokio::io::stdout()),
                )
                .await
            }
        }
    });
    // tokio's stdin reads on a blocking thread that only input or its end
    // can wake: after a signal, it is not waited for.
    rt.shutdown_background();
    served
}

/// Serves `server` over `transport` until the client closes its side.
async fn run<R, W>(server: CairnServer, transport: LineTransport<R, W>) -> Result<(), ServeError>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let running = match super::served::Served(server).serve(transport).await {
        Ok(r) => r,
        // The client closed stdin before initializing: nothing to serve.
        Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
        Err(e) => return Err(ServeError::Mcp(e.to_string())),
    };
    let stop = running.cancellation_token();
    let ended = running.waiting();
    tokio::pin!(ended);
    let name = tokio::select! {
        r = &mut ended => return r.map(drop).map_err(|e| ServeError::Mcp(e.to_string())),
        name = stop_signal() => name,
    };
    tracing::info!("{name}: ending the session");
    stop.cancel();
    match tokio::time::timeout(STOP_GRACE, ended).await {
        Ok(r) => r.map(drop).map_err(|e| ServeError::Mcp(e.to_string())),
        Err(_) => {
            tracing::warn!(
                "{name}: the client did not take the last answers within {STOP_GRACE:?}; stopping"
            );
            Ok(())
        }
    }
}

/// How long a stop signal leaves the session to send its last answers.
const STOP_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// Resolves with the signal's name on SIGTERM, SIGHUP or SIGINT (each one
/// that could be listened to; the others keep their default action).
async fn stop_signal() -> &'static str {
    use tokio::signal::unix::{Signal, SignalKind, signal};
    async fn heard(s: Option<Signal>, name: &'static str) -> &'static str {
        match s {
            Some(mut s) => {
                s.recv().await;
                name
            }
            None => std::future::pending().await,
        }
    }
    tokio::select! {
        n = heard(signal(SignalKind::terminate()).ok(), "SIGTERM") => n,
        n = heard(signal(SignalKind::hangup()).ok(), "SIGHUP") => n,
        n = heard(signal(SignalKind::interrupt()).ok(), "SIGINT") => n,
    }
}
