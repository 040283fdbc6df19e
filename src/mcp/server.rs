//! The rmcp adapter: a hand-written `ServerHandler` over the tool registry
//! (spec/mcp.md "Serving"). Tools are listed from `crate::tools::tools()`
//! filtered by the session's grants, each with its capability in `_meta` and
//! its annotations; calls run synchronously under a mutex (the store's
//! connection is not `Sync`); prompts and resources come from
//! [`super::prompts`].

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest,
    CustomResult, ErrorCode, GetPromptRequestParams, GetPromptResponse, GetPromptResult,
    Implementation, ListPromptsResult, ListResourcesResult, ListToolsResult, MetaObject,
    PaginatedRequestParams, Prompt, PromptMessage, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, Resource, ResourceContents, Role, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{Map, Value};

use super::prompts::{INSTRUCTIONS, MIME, by_uri, prompt, prompts};
use crate::session::Session;
use crate::store::Store;
use crate::tools::registry::DispatchError;
use crate::tools::{Clock, ToolCtx, ToolOutcome, ToolSpec, dispatch, tools};
use crate::tq::engine::Engine;

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

/// The MCP server: one per stdio connection.
#[derive(Clone)]
pub struct CairnServer {
    state: Arc<Mutex<State>>,
}

impl CairnServer {
    /// A server over `state`.
    pub fn new(state: State) -> CairnServer {
        CairnServer {
            state: Arc::new(Mutex::new(state)),
        }
    }

    /// The tools this server lists: the registry filtered by the grants.
    pub fn listed_tools(&self) -> Vec<Tool> {
        let granted = match self.state.lock() {
            Ok(s) => s.session.grants.clone(),
            Err(p) => p.into_inner().session.grants.clone(),
        };
        tools()
            .iter()
            .filter(|t| granted.contains(&t.capability))
            .map(mcp_tool)
            .collect()
    }

    /// Runs one call synchronously. Protocol faults become JSON-RPC errors.
    pub fn call(&self, name: &str, args: Value) -> Result<ToolOutcome, McpError> {
        let mut guard = match self.state.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        let st = &mut *guard;
        let mut ctx = ToolCtx {
            store: &st.store,
            session: &mut st.session,
            engine: &st.engine,
            root: st.root.clone(),
            clock: Clock::System,
        };
        let result = dispatch(&mut ctx, name, args);
        match &result {
            Ok(out) => tracing::debug!(tool = name, is_error = out.is_error, "tool call"),
            Err(e) => tracing::debug!(tool = name, error = %e, "tool call refused"),
        }
        result.map_err(|e| match e {
            DispatchError::UnknownTool(_) => McpError::invalid_params(e.to_string(), None),
            DispatchError::InvalidArgs { .. } => McpError::invalid_params(e.to_string(), None),
        })
    }
}

/// The standard MCP methods this server answers. rmcp hands a request for one
/// of them whose params do not deserialise (`tools/call` with
/// `arguments: []`, `name: null`, no params) to `on_custom_request`, which
/// would answer method-not-found; for these it is invalid params instead.
const SERVED_METHODS: [&str; 8] = [
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/read",
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

/// The seven prompts as MCP prompts (no arguments).
pub fn mcp_prompts() -> Vec<Prompt> {
    prompts()
        .iter()
        .map(|p| Prompt::new(p.name, Some(p.description), None))
        .collect()
}

/// The seven prompt bodies as MCP resources.
pub fn mcp_resources() -> Vec<Resource> {
    prompts()
        .iter()
        .map(|p| {
            Resource::new(p.uri, p.name)
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
                .build(),
        )
        .with_server_info(Implementation::new("cairn", env!("CARGO_PKG_VERSION")))
        .with_instructions(INSTRUCTIONS)
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
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let args = request.arguments.map(Value::Object).unwrap_or(Value::Null);
        let out = self.call(&request.name, args)?;
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

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let p = by_uri(&request.uri).ok_or_else(|| {
            McpError::resource_not_found(format!("Unknown resource {}.", request.uri), None)
        })?;
        Ok(ReadResourceResult::new(vec![
            ResourceContents::text(p.body, p.uri).with_mime_type(MIME),
        ])
        .into())
    }
}
