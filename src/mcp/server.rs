//! The rmcp adapter: a hand-written `ServerHandler` over the tool registry
//! (spec/mcp.md "Serving", "Wave 2"). Tools are listed from
//! `crate::tools::tools()` filtered by the session's grants, each with its
//! title, capability in `_meta` and annotations. A call runs on tokio's
//! blocking pool (`spawn_blocking`), one at a time on the store (the
//! connection is not `Sync`), so the connection keeps answering `ping` and
//! the lists meanwhile; `notifications/cancelled` interrupts the running
//! query (nothing is written). Client roots choose the store (see
//! [`RootsPolicy`]); diagnostics raised by a call reach the client as
//! `notifications/message` ([`super::logging`]). Prompts and their resources
//! come from [`super::prompts`]; tasks and views as resource templates, their
//! completion ([`super::resources`]) and subscriptions
//! ([`super::subscriptions`]) from their own files. Over stdio, `initialize`
//! names the session's agent from `clientInfo.name`
//! ([`crate::session::client_agent_name`]).
//!
//! One `CairnServer` is one MCP session: build one per stdio connection or
//! per HTTP session with [`CairnServer::new`] (the store may be opened per
//! session).
#![allow(deprecated)] // rmcp marks roots and logging deprecated (SEP-2577); clients still use them.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams, CompleteResult,
    ContentBlock, CustomRequest, CustomResult, ErrorCode, GetPromptRequestParams,
    GetPromptResponse, GetPromptResult, Implementation, InitializeRequestParams, InitializeResult,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    MetaObject, PaginatedRequestParams, Prompt, PromptMessage, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, Role, Root,
    ServerCapabilities, ServerConfig, SetLevelRequestParams, SubscribeRequestParams, Tool,
    ToolAnnotations, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, Peer, RequestContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{Map, Value};

use super::logging::{LevelCell, LogLine, capture, clip};
use super::prompts::{INSTRUCTIONS, MIME, by_uri, prompt, prompts};
use super::resources::templates;
use super::subscriptions::Subscriptions;
use super::titles::tool_title;
use crate::session::{Capability, Session, client_agent_name};
use crate::store::{Store, location};
use crate::tools::registry::DispatchError;
use crate::tools::{Clock, ToolCtx, ToolOutcome, ToolSpec, dispatch, tools};
use crate::tq::engine::{Cancel, Engine};

/// What one server holds: the store, this connection's session, the engine
/// and the project root.
pub struct State {
    /// The project's store.
    pub store: Store,
    /// The connection's session (current pointer, grants).
    pub session: Session,
    /// The TQ engine.
    pub engine: Engine,
    /// The project root (handoff confinement).
    pub root: PathBuf,
}

/// Whether the client's roots may choose the store (spec/mcp.md "Roots").
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum RootsPolicy {
    /// The store stays the one the server was built with (`--db`,
    /// `CAIRN_DB`, or an HTTP server's one store).
    #[default]
    Ignore,
    /// The first `file://` root of a client that declares `roots` selects
    /// the store by the store.md rules (rules 2–4 from that directory); with
    /// no `file://` root, the launch store stands. Re-resolved on
    /// `notifications/roots/list_changed`, before the next tool call.
    Follow,
}

/// How long the server waits for the client's `roots/list` answer.
pub const ROOTS_TIMEOUT: Duration = Duration::from_secs(5);

/// At most this many characters of a tool name or argument error are quoted
/// back in a protocol error (and so in logs).
pub const MAX_ECHO_CHARS: usize = 100;

/// The launch store: where the server started, restored when the roots stop
/// naming a directory.
#[derive(Debug, Clone)]
pub(super) struct Launch {
    db: PathBuf,
    root: PathBuf,
}

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
}

/// Raises a call's cancellation flag when dropped (the handler future went
/// away, e.g. an HTTP session closed); harmless after the call finished.
struct CancelOnDrop(Cancel);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

impl CairnServer {
    /// A server over `state` whose store stays put ([`RootsPolicy::Ignore`]);
    /// the grants are the session's.
    pub fn new(state: State) -> CairnServer {
        let grants = Arc::new(state.session.grants.clone());
        let launch = Launch {
            db: state.store.path().to_path_buf(),
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
        self.lock().store.path().to_path_buf()
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
        let mut ctx = ToolCtx {
            store: &st.store,
            session: &mut st.session,
            engine: &st.engine,
            root: st.root.clone(),
            clock: Clock::System,
        };
        let result = dispatch(&mut ctx, name, args);
        st.engine.cancel = Cancel::new();
        let shown = clip(name, MAX_ECHO_CHARS);
        match &result {
            Ok(out) => tracing::debug!(tool = %shown, is_error = out.is_error, "tool call"),
            Err(_) => tracing::debug!(tool = %shown, "tool call refused"),
        }
        result.map_err(|e| protocol_fault(&e))
    }

    /// Re-resolves the store from the client's roots when they may have
    /// changed (first call, `roots/list_changed`). A failure keeps the
    /// current store and is logged.
    async fn refresh_roots(&self, peer: &Peer<RoleServer>) -> Vec<LogLine> {
        if self.roots != RootsPolicy::Follow {
            return Vec::new();
        }
        let _serial = self.roots_lock.lock().await;
        if !self.roots_stale.swap(false, Ordering::SeqCst) {
            return Vec::new();
        }
        let declared = peer
            .peer_info()
            .is_some_and(|info| info.capabilities.roots.is_some());
        if !declared {
            return Vec::new();
        }
        let roots = match tokio::time::timeout(ROOTS_TIMEOUT, peer.list_roots()).await {
            Ok(Ok(r)) => r.roots,
            Ok(Err(e)) => {
                return capture(
                    || tracing::warn!(error = %e, "roots/list failed; the store stays"),
                )
                .1;
            }
            Err(_) => {
                return capture(|| tracing::warn!("roots/list timed out; the store stays")).1;
            }
        };
        let server = self.clone();
        let job = tokio::task::spawn_blocking(move || capture(|| server.switch_to_roots(&roots)).1);
        job.await.unwrap_or_default()
    }

    /// Points the session at the store the roots select (or the launch
    /// store), waiting for a running call. The current pointer is cleared
    /// when the store changes.
    fn switch_to_roots(&self, roots: &[Root]) {
        let launch = match self.launch.lock() {
            Ok(l) => l.clone(),
            Err(p) => p.into_inner().clone(),
        };
        let (db, root) = match roots.iter().find_map(|r| file_root(&r.uri)) {
            Some(dir) => match location_for(&dir) {
                Ok(loc) => (loc.db, loc.project),
                Err(e) => {
                    tracing::warn!(error = %e, "cannot resolve the store of the root; the store stays");
                    return;
                }
            },
            None => (launch.db, launch.root),
        };
        let mut st = self.lock();
        if st.store.path() == db {
            return;
        }
        match Store::open(&db) {
            Ok(store) => {
                tracing::info!(db = %db.display(), "roots select the store");
                st.store = store;
                st.root = root;
                st.session.current = None;
            }
            Err(e) => {
                tracing::warn!(error = %e, db = %db.display(), "cannot open the store the roots select; the store stays")
            }
        }
    }

    /// Sends captured diagnostics the session's level admits.
    async fn forward_logs(&self, peer: &Peer<RoleServer>, lines: Vec<LogLine>) {
        for line in lines {
            if self.log_level.admits(line.level) {
                let _ = peer.notify_logging_message(line.to_param()).await;
            }
        }
    }
}

/// The JSON-RPC error of a dispatch fault, quoting at most
/// [`MAX_ECHO_CHARS`] characters of what the client sent.
pub fn protocol_fault(e: &DispatchError) -> McpError {
    let message = match e {
        DispatchError::UnknownTool(name) => {
            format!("Unknown tool {}.", clip(name, MAX_ECHO_CHARS))
        }
        DispatchError::InvalidArgs { tool, message } => format!(
            "Invalid arguments for {}: {}",
            clip(tool, MAX_ECHO_CHARS),
            clip(message, 4 * MAX_ECHO_CHARS)
        ),
    };
    McpError::invalid_params(message, None)
}

/// The directory of a `file://` root URI (percent-decoded), if it is one.
pub fn file_root(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    // `file:///abs` (empty host) or `file://localhost/abs`.
    let path = if rest.starts_with('/') {
        rest
    } else {
        rest.strip_prefix("localhost")?
    };
    let decoded = percent_encoding::percent_decode_str(path)
        .decode_utf8()
        .ok()?
        .into_owned();
    let p = PathBuf::from(decoded);
    p.is_absolute().then_some(p)
}

/// The store location for directory `dir` by the store.md rules 2–4
/// (`--db` and `CAIRN_DB` never reach here: they pin the store).
fn location_for(dir: &Path) -> Result<location::Location, crate::store::StoreError> {
    let xdg = std::env::var_os("XDG_DATA_HOME").map(PathBuf::from);
    let home = std::env::var_os("HOME").map(PathBuf::from);
    location::resolve(&location::Inputs {
        flag: None,
        env_db: None,
        cwd: dir,
        xdg_data_home: xdg.as_deref(),
        home: home.as_deref(),
    })
}

/// The standard MCP methods this server answers. rmcp hands a request for one
/// of them whose params do not deserialise (`tools/call` with
/// `arguments: []`, `name: null`, no params) to `on_custom_request`, which
/// would answer method-not-found; for these it is invalid params instead.
const SERVED_METHODS: [&str; 14] = [
    "initialize",
    "ping",
    "server/discover",
    "logging/setLevel",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "resources/subscribe",
    "resources/unsubscribe",
    "completion/complete",
];

/// The JSON-RPC error for a request rmcp could not type (spec/mcp.md
/// "Serving"): `-32602` with
/// `tools/call needs params {"name": string, "arguments"?: object}.` for
/// `tools/call`, `invalid params for METHOD.` for another served method, and
/// `-32601` (message: the method) for any other method.
pub fn untyped_request_error(method: &str) -> McpError {
    if method == "tools/call" {
        McpError::invalid_params(
            "tools/call needs params {\"name\": string, \"arguments\"?: object}.",
            None,
        )
    } else if SERVED_METHODS.contains(&method) {
        McpError::invalid_params(format!("invalid params for {method}."), None)
    } else {
        McpError::new(ErrorCode::METHOD_NOT_FOUND, method.to_string(), None)
    }
}

/// The MCP `Tool` of a registry row: input and output schema, description,
/// annotations and `_meta` `{"cairn/capability": CAP}`.
pub fn mcp_tool(t: &ToolSpec) -> Tool {
    let annotations = if t.read_only {
        ToolAnnotations::new().read_only(true).open_world(false)
    } else {
        ToolAnnotations::new()
            .read_only(false)
            .destructive(t.destructive)
            .idempotent(t.idempotent)
            .open_world(false)
    };
    let mut meta = Map::new();
    meta.insert(
        "cairn/capability".to_string(),
        Value::from(t.capability.as_str()),
    );
    Tool::new(t.name, t.description, Arc::new((t.schema)()))
        .with_raw_output_schema(Arc::new((t.output_schema)()))
        .with_annotations(annotations)
        .with_meta(MetaObject(meta))
}

/// [`mcp_tool`] with the tool's title ([`tool_title`]): what `tools/list`
/// serves.
pub fn titled_tool(t: &ToolSpec) -> Tool {
    let mut tool = mcp_tool(t);
    tool.title = Some(tool_title(t.name).to_string());
    tool
}

/// The seven prompts as MCP prompts (no arguments).
pub fn mcp_prompts() -> Vec<Prompt> {
    prompts()
        .iter()
        .map(|p| Prompt::new(p.name, Some(p.description), None).with_title(p.title))
        .collect()
}

/// The seven prompt bodies as MCP resources.
pub fn mcp_resources() -> Vec<Resource> {
    prompts()
        .iter()
        .map(|p| {
            Resource::new(p.uri, p.name)
                .with_title(p.title)
                .with_description(p.description)
                .with_mime_type(MIME)
        })
        .collect()
}

impl ServerHandler for CairnServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_prompts()
                .enable_resources()
                .enable_resources_subscribe()
                .enable_logging()
                .enable_completions()
                .build(),
        )
        .with_server_info(Implementation::new("cairn", env!("CARGO_PKG_VERSION")))
        .with_instructions(INSTRUCTIONS)
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        context.peer.set_peer_info(request.clone());
        {
            // Over HTTP the token already named the agent (`http.rs`).
            let mut st = self.lock();
            if st.session.agent.is_none() {
                let agent = client_agent_name(&request.client_info.name, &st.session.short_id());
                tracing::info!(agent = %agent, "session opened");
                st.session.agent = Some(agent);
            }
        }
        self.negotiate_initialize(&request)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.listed_tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let roots_logs = self.refresh_roots(&context.peer).await;
        self.forward_logs(&context.peer, roots_logs).await;
        let name = request.name.to_string();
        let args = request.arguments.map(Value::Object).unwrap_or(Value::Null);
        let cancel = Cancel::new();
        let _guard = CancelOnDrop(cancel.clone());
        let server = self.clone();
        let flag = cancel.clone();
        let tool = name.clone();
        let mut job =
            tokio::task::spawn_blocking(move || capture(|| server.call_with(&tool, args, flag)));
        let joined = tokio::select! {
            r = &mut job => r,
            _ = context.ct.cancelled() => {
                tracing::debug!(tool = %clip(&name, MAX_ECHO_CHARS), "call cancelled by the client");
                cancel.cancel();
                job.await
            }
        };
        let (result, logs) = match joined {
            Ok(pair) => pair,
            Err(_) => (
                Ok(ToolOutcome::err(format!(
                    "Internal error in {}; the store is unchanged.",
                    clip(&name, MAX_ECHO_CHARS)
                ))),
                Vec::new(),
            ),
        };
        self.forward_logs(&context.peer, logs).await;
        let out = result?;
        let content = vec![ContentBlock::text(out.text)];
        Ok(if out.is_error {
            CallToolResult::error(content)
        } else {
            let mut result = CallToolResult::success(content);
            result.structured_content = out.structured;
            result
        }
        .into())
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.log_level.set(request.level);
        Ok(())
    }

    async fn on_roots_list_changed(&self, _context: NotificationContext<RoleServer>) {
        self.roots_stale.store(true, Ordering::SeqCst);
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, McpError> {
        tracing::debug!(method = %request.method, "untyped request");
        Err(untyped_request_error(&request.method))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        Ok(ListPromptsResult::with_all_items(mcp_prompts()))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let p = prompt(&request.name).ok_or_else(|| {
            McpError::invalid_params(format!("Unknown prompt {}.", request.name), None)
        })?;
        let mut result = GetPromptResult::new(vec![PromptMessage::new_text(Role::User, p.body)]);
        result.description = Some(p.description.to_string());
        Ok(result.into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        Ok(ListResourcesResult::with_all_items(mcp_resources()))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        Ok(ListResourceTemplatesResult::with_all_items(templates()))
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let roots_logs = self.refresh_roots(&context.peer).await;
        self.forward_logs(&context.peer, roots_logs).await;
        self.subscribe_uri(&request.uri, context.peer).await
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.subs.remove(&request.uri);
        Ok(())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        let roots_logs = self.refresh_roots(&context.peer).await;
        self.forward_logs(&context.peer, roots_logs).await;
        self.complete_argument(request).await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let Some(p) = by_uri(&request.uri) else {
            let roots_logs = self.refresh_roots(&context.peer).await;
            self.forward_logs(&context.peer, roots_logs).await;
            return self.read_target_uri(&request.uri).await;
        };
        Ok(ReadResourceResult::new(vec![
            ResourceContents::text(p.body, p.uri).with_mime_type(MIME),
        ])
        .into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
