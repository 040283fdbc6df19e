//! The registry as MCP sees it: tools (titles, capability `_meta`,
//! annotations), prompts and resources, and the JSON-RPC errors of a
//! dispatch fault or an unserved method (spec/mcp.md "Serving").

#![allow(deprecated)] // rmcp marks roots and logging deprecated (SEP-2577); clients still use them.

use std::sync::Arc;

use rmcp::ErrorData as McpError;
use rmcp::model::{ErrorCode, MetaObject, Prompt, Resource, Tool, ToolAnnotations};
use serde_json::{Map, Value};

use super::logging::clip;
use super::prompts::{MIME, prompts};
use super::server::*;
use super::titles::tool_title;
use crate::tools::ToolSpec;
use crate::tools::registry::DispatchError;

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

/// The standard MCP methods this server answers, in the order the
/// method-not-found message lists them. rmcp hands a request for one of them
/// whose params do not deserialise (`tools/call` with `arguments: []`,
/// `name: null`, no params) to `on_custom_request`, which would answer
/// method-not-found; for these it is invalid params instead. `ping`,
/// `initialize`, `resources/subscribe` and `resources/unsubscribe` are
/// 2025-11-25 methods, `server/discover` and `subscriptions/listen`
/// 2026-07-28 ones (rmcp answers a method asked in the other era `-32601`).
pub const SERVED_METHODS: [&str; 15] = [
    "initialize",
    "server/discover",
    "ping",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "resources/subscribe",
    "resources/unsubscribe",
    "subscriptions/listen",
    "logging/setLevel",
    "completion/complete",
];

/// The JSON-RPC error for a request rmcp could not type (spec/mcp.md
/// "Serving"): `-32602` with
/// `tools/call needs params {"name": string, "arguments"?: object}.` for
/// `tools/call`, `invalid params for METHOD.` for another served method, and
/// `-32601` for any other method, its message naming the method (at most
/// [`MAX_ECHO_CHARS`] characters of it) and every method served
/// ([`method_not_found`]).
pub fn untyped_request_error(method: &str) -> McpError {
    if method == "tools/call" {
        McpError::invalid_params(
            "tools/call needs params {\"name\": string, \"arguments\"?: object}.",
            None,
        )
    } else if SERVED_METHODS.contains(&method) {
        McpError::invalid_params(format!("invalid params for {method}."), None)
    } else {
        method_not_found(method)
    }
}

/// The `-32601` for a 2025-11-25 method asked in a 2026-07-28 request (the
/// revision removed it; the conformance suite's SEP-2575 checks), saying
/// what replaces it; `None` for any other method.
pub fn removed_in_2026(method: &str) -> Option<McpError> {
    let instead = match method {
        "initialize" => {
            "call server/discover, and send protocolVersion, clientInfo and clientCapabilities in each request's _meta"
        }
        "ping" => "call server/discover to check the server",
        "logging/setLevel" => "send io.modelcontextprotocol/logLevel in each request's _meta",
        "resources/subscribe" | "resources/unsubscribe" => "open a subscriptions/listen stream",
        _ => return None,
    };
    Some(McpError::new(
        ErrorCode::METHOD_NOT_FOUND,
        format!("{method} is not part of the 2026-07-28 protocol this request names; {instead}."),
        None,
    ))
}

/// `-32601` for a method this server does not serve:
/// `Method not found: METHOD. This server serves initialize, server/discover, ….`
pub fn method_not_found(method: &str) -> McpError {
    McpError::new(
        ErrorCode::METHOD_NOT_FOUND,
        format!(
            "Method not found: {}. This server serves {}.",
            clip(method, MAX_ECHO_CHARS),
            SERVED_METHODS.join(", ")
        ),
        None,
    )
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
