//! Shared by the MCP client tests (`mcp_contract.rs`, `mcp_stdio.rs`,
//! `mcp_subscribe.rs`, ...): one `tools/call` through rmcp's client, returning
//! the joined text blocks and whether the result was `isError: true`.

use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::{ClientHandler, RoleClient};
use serde_json::Value;

/// Calls `tool` with the JSON object `args`; `(text, is_error)`.
pub async fn call_tool<H: ClientHandler>(
    c: &RunningService<RoleClient, H>,
    tool: &str,
    args: Value,
) -> (String, bool) {
    let res = c
        .call_tool(
            CallToolRequestParams::new(tool.to_string())
                .with_arguments(args.as_object().unwrap().clone()),
        )
        .await
        .unwrap();
    let text = res
        .content
        .iter()
        .filter_map(|b| b.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("");
    (text, res.is_error == Some(true))
}
