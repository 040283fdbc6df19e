//! The protocol: `ServerHandler` for [`CairnServer`] (spec/mcp.md
//! "Serving", "Wave 2"): initialize, the lists, tool calls on the blocking
//! pool, logging level, prompts, resources, subscriptions, completion.

#![allow(deprecated)] // rmcp marks roots and logging deprecated (SEP-2577); clients still use them.

use std::sync::atomic::Ordering;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams, CompleteResult,
    ContentBlock, CustomRequest, CustomResult, GetPromptRequestParams, GetPromptResponse,
    GetPromptResult, Implementation, InitializeRequestParams, InitializeResult, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    PromptMessage, ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, ResourceContents, Role, ServerCapabilities, ServerConfig,
    SetLevelRequestParams, SubscribeRequestParams, SubscriptionFilter, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::Value;

use super::listing::*;
use super::logging::{capture, clip};
use super::prompts::{INSTRUCTIONS, MIME, by_uri, prompt};
use super::resources::templates;
use super::server::*;
use crate::session::client_agent_name;
use crate::tools::ToolOutcome;
use crate::tq::engine::Cancel;

/// Raises a call's cancellation flag when dropped (the handler future went
/// away, e.g. an HTTP session closed); harmless after the call finished.
struct CancelOnDrop(Cancel);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

/// Whether `context`'s request speaks the 2026-07-28 protocol (its `_meta`
/// names it, or its session opened on it).
fn modern(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
}

impl CairnServer {
    /// Names a session that has no agent yet from the request's client
    /// (`clientInfo.name` plus the session's short id, as `initialize`
    /// does): a 2026-07-28 client over stdio never calls `initialize`, and
    /// sends its `clientInfo` in every request's `_meta`.
    fn name_agent(&self, context: &RequestContext<RoleServer>) {
        let mut st = self.lock();
        if st.session.agent.is_some() {
            return;
        }
        if let Some(info) = context.client_info() {
            let agent = client_agent_name(&info.name, &st.session.short_id());
            tracing::info!(agent = %agent, "session opened");
            st.session.agent = Some(agent);
        }
    }
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
        .with_instructions(match self.scratch_note() {
            Some(note) => format!("{INSTRUCTIONS}\n{note}"),
            None => INSTRUCTIONS.to_string(),
        })
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        context.peer.set_peer_info(request.clone());
        // Kept to tell the session why its streams close at a graceful stop.
        let _ = self.peer.set(context.peer.clone());
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

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(self.accepted_filter(requested))
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        self.name_agent(context.request_context());
        self.listen_stream(context).await
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
        // In flight until its result is out (a graceful stop waits for it).
        let _work = super::drain::DRAIN.work();
        self.name_agent(&context);
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
        let mut out = result?;
        if let Some(note) = self.first_scratch_note() {
            out.text = format!("{note}\n\n{}", out.text);
        }
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
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if modern(&context)
            && let Some(e) = removed_in_2026("logging/setLevel")
        {
            return Err(e);
        }
        self.log_level.set(request.level);
        Ok(())
    }

    async fn on_roots_list_changed(&self, _context: NotificationContext<RoleServer>) {
        self.roots_stale.store(true, Ordering::SeqCst);
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, McpError> {
        tracing::debug!(method = %request.method, "untyped request");
        if modern(&context)
            && let Some(e) = removed_in_2026(&request.method)
        {
            return Err(e);
        }
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
        let _work = super::drain::DRAIN.work();
        self.name_agent(&context);
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
