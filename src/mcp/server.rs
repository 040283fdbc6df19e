//! The rmcp adapter's session: [`CairnServer`], one per stdio connection or
//! HTTP session (spec/mcp.md "Serving", "Wave 2"), holding the store, the
//! session, its grants, its log level and subscriptions; a tool call runs
//! through [`CairnServer::call_with`] on tokio's blocking pool, one at a time
//! on the store (the connection is not `Sync`). Rooms beside it: `handler`
//! (the `ServerHandler` protocol methods), `listing` (tools, prompts and
//! resources as MCP sees them; protocol errors), `roots` (client roots
//! choose the store, [`RootsPolicy`]), `prompts`, `resources`,
//! `subscriptions`, `logging`. Over stdio, `initialize` names the session's
//! agent from `clientInfo.name` ([`crate::session::client_agent_name`]).
//!
//! Build one per session with [`CairnServer::new`] (the store may be opened
//! per session).

#![allow(deprecated)] // rmcp marks logging deprecated (SEP-2577); clients still use it.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use rmcp::model::Tool;
use rmcp::service::Peer;
use rmcp::{ErrorData as McpError, RoleServer};
use serde_json::Value;

use super::logging::{LevelCell, LogLine, clip};
use super::subscriptions::Subscriptions;
use crate::session::{Capability, Session};
use crate::store::Db;
use crate::store::changes::ChangeCounter;
use crate::tools::{Clock, ToolCtx, ToolOutcome, dispatch, tools};
use crate::tq::engine::{Cancel, Engine};

pub use super::listing::{
    SERVED_METHODS, mcp_prompts, mcp_resources, mcp_tool, method_not_found, protocol_fault,
    removed_in_2026, titled_tool, untyped_request_error,
};
pub(crate) use super::roots::Launch;
pub use super::roots::{ROOTS_TIMEOUT, RootsPolicy, file_root};

/// What one server holds: the store, this connection's session, the engine
/// and the project root.
pub struct State {
    /// The project's store.
    pub store: Db,
    /// The connection's session (current pointer, grants).
    pub session: Session,
    /// The TQ engine.
    pub engine: Engine,
    /// The project root (handoff confinement).
    pub root: PathBuf,
}

/// At most this many characters of a tool name or argument error are quoted
/// back in a protocol error (and so in logs).
pub const MAX_ECHO_CHARS: usize = 100;

/// The MCP server: one per session (stdio connection or HTTP session).
#[derive(Clone)]
pub struct CairnServer {
    pub(super) state: Arc<Mutex<State>>,
    pub(super) grants: Arc<BTreeSet<Capability>>,
    pub(super) roots: RootsPolicy,
    pub(super) launch: Arc<Mutex<Launch>>,
    pub(super) roots_stale: Arc<AtomicBool>,
    pub(super) roots_lock: Arc<tokio::sync::Mutex<()>>,
    pub(super) log_level: Arc<LevelCell>,
    pub(super) subs: Subscriptions,
    /// The global scratch store this server was started on (outside any
    /// project: no repository, no roots; issue 27), and whether a tool
    /// answer has said so yet this session.
    pub(super) scratch: Option<(PathBuf, Arc<AtomicBool>)>,
    /// Raised when the server's agent ends (a stateless HTTP agent whose
    /// token was revoked): its `subscriptions/listen` streams close.
    pub(super) ended: tokio_util::sync::CancellationToken,
    /// Whether the session's current task is kept in the store under its
    /// agent (a stateless HTTP agent, issue 22): read before each tool
    /// call, written when the call moved it, so every server on the store
    /// sees the same current task.
    pub(super) stored_current: bool,
    /// Whether tool texts are fenced (spec/tq.md §10, docs/mcp.md "Fenced
    /// text"): on for HTTP servers, `cairn serve --fence` on stdio.
    pub(super) fence: bool,
    /// The session's peer, once `initialize` named it (2025-11-25), so a
    /// graceful stop can tell the session why it closes
    /// ([`CairnServer::farewell`]).
    pub(super) peer: Arc<std::sync::OnceLock<Peer<RoleServer>>>,
}

impl CairnServer {
    /// A server over `state` whose store stays put ([`RootsPolicy::Ignore`]);
    /// the grants are the session's.
    pub fn new(state: State) -> CairnServer {
        let grants = Arc::new(state.session.grants.clone());
        let launch = Launch {
            db: state
                .store
                .r()
                .path()
                .map(PathBuf::from)
                .unwrap_or_default(),
            root: state.root.clone(),
        };
        CairnServer {
            state: Arc::new(Mutex::new(state)),
            grants,
            roots: RootsPolicy::Ignore,
            launch: Arc::new(Mutex::new(launch)),
            roots_stale: Arc::new(AtomicBool::new(true)),
            roots_lock: Arc::new(tokio::sync::Mutex::new(())),
            log_level: Arc::new(LevelCell::default()),
            subs: Subscriptions::default(),
            scratch: None,
            ended: tokio_util::sync::CancellationToken::new(),
            stored_current: false,
            fence: false,
            peer: Arc::new(std::sync::OnceLock::new()),
        }
    }

    /// Tells the session `sentence` as a `notifications/message` at level
    /// `warning` (when its level admits it and `initialize` named its
    /// peer), then ends its agent ([`CairnServer::end`]: its
    /// `subscriptions/listen` streams close with their final result). A
    /// graceful stop of `cairn serve --http` calls it on every server.
    pub async fn farewell(&self, sentence: &str) {
        if let Some(peer) = self.peer.get()
            && !peer.is_transport_closed()
            && self.log_level.admits(rmcp::model::LoggingLevel::Warning)
        {
            let mut param = rmcp::model::LoggingMessageNotificationParam::new(
                rmcp::model::LoggingLevel::Warning,
                serde_json::Value::from(sentence),
            );
            param.logger = Some(super::logging::LOGGER.to_string());
            let _ = peer.notify_logging_message(param).await;
        }
        self.end();
    }

    /// The same server, fencing the written text in its tool texts when
    /// `fence` (spec/tq.md §10; `crate::fence`): on by default over HTTP,
    /// `cairn serve --fence` on stdio. `structuredContent` is unchanged.
    pub fn with_fence(mut self, fence: bool) -> CairnServer {
        self.fence = fence;
        self
    }

    /// True when this server fences its tool texts.
    pub fn fences(&self) -> bool {
        self.fence
    }

    /// The same server, keeping its agent's current task in the store
    /// (`agent_current`) when `stored` (a stateless HTTP agent, issue 22).
    pub fn with_stored_current(mut self, stored: bool) -> CairnServer {
        self.stored_current = stored;
        self
    }

    /// The same server, started on the global scratch store (outside any
    /// project): while the session still uses that store, its
    /// `instructions` and its first tool answer say where it writes.
    pub fn with_scratch(mut self, scratch: bool) -> CairnServer {
        self.scratch = scratch.then(|| (self.db_path(), Arc::new(AtomicBool::new(false))));
        self
    }

    /// The sentence saying this session writes to the global scratch store,
    /// while it does (`None` in a project, or once roots moved it to one).
    pub fn scratch_note(&self) -> Option<String> {
        let (db, _) = self.scratch.as_ref()?;
        (self.db_path() == *db).then(|| {
            format!(
                "Note: this server was started outside any project (no repository, no roots), so it writes to the global scratch store at {}; start it in your project's directory to keep the plan with the project.",
                db.display()
            )
        })
    }

    /// [`Self::scratch_note`] the first time it is asked for in a session,
    /// then `None`.
    pub fn first_scratch_note(&self) -> Option<String> {
        let note = self.scratch_note()?;
        let (_, said) = self.scratch.as_ref()?;
        (!said.swap(true, std::sync::atomic::Ordering::SeqCst)).then_some(note)
    }

    /// Ends this server's agent: its `subscriptions/listen` streams close
    /// (gracefully, with their final result).
    pub fn end(&self) {
        self.ended.cancel();
    }

    /// True when this server's PostgreSQL connection is gone for good
    /// (never on SQLite, never while a call holds the state): a stateless
    /// agent's next request then gets a server on a new connection
    /// ([`super::http_gate::StatelessAgents::server_for`]).
    pub fn store_lost(&self) -> bool {
        match self.state.try_lock() {
            Ok(st) => matches!(&st.store, Db::Pg(p) if p.is_closed()),
            Err(_) => false,
        }
    }

    /// The session's agent identity (spec/tq.md §9), once known.
    pub fn agent(&self) -> Option<String> {
        self.lock().session.agent.clone()
    }

    /// The URIs this session is subscribed to, sorted.
    pub fn subscribed(&self) -> Vec<String> {
        self.subs.uris()
    }

    /// The same server with `policy` for client roots.
    pub fn with_roots(mut self, policy: RootsPolicy) -> CairnServer {
        self.roots = policy;
        self
    }

    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        match self.state.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    /// The store file this session uses now.
    pub fn db_path(&self) -> PathBuf {
        self.lock()
            .store
            .r()
            .path()
            .map(PathBuf::from)
            .unwrap_or_default()
    }

    /// A change counter on this session's store (its own connection): a
    /// SQLite `data_version` reader, or a PostgreSQL `LISTEN` on the
    /// schema's channel. Errors: the store's.
    pub fn change_counter(&self) -> Result<ChangeCounter, crate::store::StoreError> {
        let st = self.lock();
        match &st.store {
            Db::Sqlite(s) => ChangeCounter::open(s.path()),
            Db::Pg(p) => ChangeCounter::open_pg(p.target()),
        }
    }

    /// The tools this server lists: the registry filtered by the grants.
    /// Never waits for a running call.
    pub fn listed_tools(&self) -> Vec<Tool> {
        tools()
            .iter()
            .filter(|t| self.grants.contains(&t.capability))
            .map(titled_tool)
            .collect()
    }

    /// Runs one call synchronously. Protocol faults become JSON-RPC errors.
    pub fn call(&self, name: &str, args: Value) -> Result<ToolOutcome, McpError> {
        self.call_with(name, args, Cancel::new())
    }

    /// Runs one call synchronously under `cancel` (raising it interrupts the
    /// call's query; an interrupted query writes nothing). Waits for a call
    /// already running on this session. Protocol faults become JSON-RPC
    /// errors quoting at most [`MAX_ECHO_CHARS`] characters of user input.
    pub fn call_with(
        &self,
        name: &str,
        args: Value,
        cancel: Cancel,
    ) -> Result<ToolOutcome, McpError> {
        let mut guard = self.lock();
        if cancel.is_cancelled() {
            // Cancelled while it waited for the store: nothing runs.
            return Ok(ToolOutcome::err("The call was cancelled; nothing ran."));
        }
        let st = &mut *guard;
        st.engine.cancel = cancel;
        let keeper = if self.stored_current {
            st.session.agent.clone()
        } else {
            None
        };
        if let Some(agent) = &keeper {
            match st.store.r().agent_current(agent) {
                Ok(current) => st.session.current = current,
                Err(e) => tracing::warn!(error = %e, "could not read the agent's current task"),
            }
        }
        let before = st.session.current.clone();
        let mut ctx = ToolCtx {
            store: st.store.r(),
            session: &mut st.session,
            engine: &st.engine,
            root: st.root.clone(),
            clock: Clock::System,
        };
        let result = if self.fence {
            crate::fence::fenced(|| dispatch(&mut ctx, name, args)).map(|mut out| {
                out.text = crate::fence::finish(&out.text);
                out
            })
        } else {
            dispatch(&mut ctx, name, args)
        };
        st.engine.cancel = Cancel::new();
        if let Some(agent) = &keeper
            && st.session.current != before
            && let Err(e) = st
                .store
                .r()
                .set_agent_current(agent, st.session.current.as_deref())
        {
            tracing::warn!(error = %e, "could not keep the agent's current task");
        }
        drop(guard);
        if tools().iter().any(|t| t.name == name && !t.read_only) {
            super::subscriptions::wrote();
        }
        let shown = clip(name, MAX_ECHO_CHARS);
        match &result {
            Ok(out) => tracing::debug!(tool = %shown, is_error = out.is_error, "tool call"),
            Err(_) => tracing::debug!(tool = %shown, "tool call refused"),
        }
        result.map_err(|e| protocol_fault(&e))
    }

    /// Sends captured diagnostics the session's level admits.
    pub(super) async fn forward_logs(&self, peer: &Peer<RoleServer>, lines: Vec<LogLine>) {
        for line in lines {
            if self.log_level.admits(line.level) {
                let _ = peer.notify_logging_message(line.to_param()).await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::registry::DispatchError;

    #[test]
    fn file_roots_decode_to_absolute_directories() {
        assert_eq!(
            file_root("file:///home/me/my%20repo"),
            Some(PathBuf::from("/home/me/my repo"))
        );
        assert_eq!(
            file_root("file://localhost/srv/x"),
            Some(PathBuf::from("/srv/x"))
        );
        assert_eq!(file_root("file://otherhost/srv/x"), None);
        assert_eq!(file_root("https://example.com/x"), None);
        assert_eq!(file_root("file://"), None);
    }

    #[test]
    fn protocol_faults_cap_what_they_quote() {
        let e = protocol_fault(&DispatchError::UnknownTool("n".repeat(150)));
        assert_eq!(
            e.message,
            format!("Unknown tool {}… (150 characters).", "n".repeat(100))
        );
        let e = protocol_fault(&DispatchError::UnknownTool("task_gte".into()));
        assert_eq!(e.message, "Unknown tool task_gte.");
    }
}
