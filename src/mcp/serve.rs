//! `cairn serve`: MCP over stdio until the client closes stdin
//! (spec/mcp.md "Serving", seed 003). stdout carries JSON-RPC only; every
//! diagnostic goes to stderr through `tracing`.

use std::collections::BTreeSet;
use std::io::IsTerminal;
use std::path::PathBuf;

use rmcp::ServiceExt;

use super::server::{CairnServer, State};
use crate::session::{Capability, Session};
use crate::store::{Store, StoreError};
use crate::tq::engine::Engine;

/// What `cairn serve` needs: the store file, the project root and the grants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServeOptions {
    /// The `cairn.db` path (after `--db` / `CAIRN_DB` / location resolution).
    pub db: PathBuf,
    /// The project root (handoff notes must stay inside it): the store
    /// location's `project`.
    pub root: PathBuf,
    /// The capabilities this server holds (`--grant`, default all three).
    pub grants: BTreeSet<Capability>,
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

/// Installs the stderr `tracing` subscriber (filter from `CAIRN_LOG`, default
/// `warn`). Idempotent: a second call does nothing.
pub fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("CAIRN_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
}

/// Serves MCP on stdin/stdout until the client closes stdin; `Ok(())` then.
/// When stdin is a terminal, one line on stderr says what is served and where
/// the store is. Errors: [`ServeError`].
pub fn serve(opts: ServeOptions) -> Result<(), ServeError> {
    init_tracing();
    let store = Store::open(&opts.db)?;
    if std::io::stdin().is_terminal() {
        eprintln!(
            "cairn serve: MCP over stdio for the store at {} (waiting for a client; Ctrl-D to stop)",
            opts.db.display()
        );
    }
    let server = CairnServer::new(State {
        store,
        session: Session::with_grants(opts.grants),
        engine: Engine::new(),
        root: opts.root,
    });
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(ServeError::Runtime)?;
    rt.block_on(async move {
        let running = match server.serve(rmcp::transport::stdio()).await {
            Ok(r) => r,
            // The client closed stdin before initializing: nothing to serve.
            Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
            Err(e) => return Err(ServeError::Mcp(e.to_string())),
        };
        running
            .waiting()
            .await
            .map_err(|e| ServeError::Mcp(e.to_string()))?;
        Ok(())
    })
}
