//! What rmcp serves: [`Served`], a [`CairnServer`] whose refusals all say
//! what to do (issue 22 "JSON-RPC hygiene"; docs/mcp.md "Protocol eras").
//! rmcp answers a few requests itself before any handler runs, with only
//! the method's name as the message (`-32601` `subscriptions/listen` when
//! a session that began with `initialize` asks for a 2026-07-28 stream);
//! this wrapper replaces such a bare message with a sentence and passes
//! everything else through unchanged.

use std::borrow::Cow;

use rmcp::model::{ClientNotification, ClientRequest, ErrorCode, ProtocolVersion, ServerResult};
use rmcp::service::{NotificationContext, RequestContext, Service};
use rmcp::{ErrorData as McpError, RoleServer};

use super::listing::{SERVED_METHODS, method_not_found, removed_in_2026};
use super::server::CairnServer;

/// A [`CairnServer`] as rmcp serves it (stdio and every HTTP session).
#[derive(Clone)]
pub struct Served(pub CairnServer);

impl Service<RoleServer> for Served {
    async fn handle_request(
        &self,
        request: ClientRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<ServerResult, McpError> {
        let out =
            <CairnServer as Service<RoleServer>>::handle_request(&self.0, request, context).await;
        out.map_err(explained)
    }

    async fn handle_notification(
        &self,
        notification: ClientNotification,
        context: NotificationContext<RoleServer>,
    ) -> Result<(), McpError> {
        <CairnServer as Service<RoleServer>>::handle_notification(&self.0, notification, context)
            .await
    }

    fn get_info(&self) -> rmcp::model::ServerConfig {
        <CairnServer as Service<RoleServer>>::get_info(&self.0)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        <CairnServer as Service<RoleServer>>::supported_protocol_versions(&self.0)
    }
}

/// `e` with a sentence in place of a bare method name: a `-32601` whose
/// message is exactly one method (no space: rmcp's own refusal) becomes,
/// for a 2025-11-25 method the 2026-07-28 revision removed,
/// [`removed_in_2026`]'s sentence, for a 2026-07-28 method asked in a
/// session that began with `initialize` [`other_era`]'s, and for any other method
/// [`method_not_found`]'s list of what is served. Any other error is
/// returned as it is.
pub fn explained(e: McpError) -> McpError {
    if e.code != ErrorCode::METHOD_NOT_FOUND || e.message.contains(' ') || e.message.is_empty() {
        return e;
    }
    if let Some(removed) = removed_in_2026(&e.message) {
        removed
    } else if SERVED_METHODS.contains(&e.message.as_ref()) {
        other_era(&e.message)
    } else {
        method_not_found(&e.message)
    }
}

/// `-32601` for a 2026-07-28 method asked in a session that began with
/// `initialize` (2025-11-25 and older):
/// `subscriptions/listen is not part of the protocol of a session that
/// began with initialize; use resources/subscribe in this session, or
/// connect without initialize (server/discover, the 2026-07-28 protocol)
/// to listen.` (the `Served` wrapper on stdio, the HTTP gate on `/mcp`).
pub fn other_era(method: &str) -> McpError {
    let instead = match method {
        "subscriptions/listen" => {
            "use resources/subscribe in this session, or connect without initialize (server/discover, the 2026-07-28 protocol) to listen"
        }
        _ => "see docs/mcp.md \"Protocol eras\"",
    };
    McpError::new(
        ErrorCode::METHOD_NOT_FOUND,
        format!(
            "{method} is not part of the protocol of a session that began with initialize; {instead}."
        ),
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bare(m: &str) -> McpError {
        McpError::new(ErrorCode::METHOD_NOT_FOUND, m.to_string(), None)
    }

    #[test]
    fn a_bare_method_name_becomes_a_sentence_and_other_errors_pass() {
        assert_eq!(
            explained(bare("subscriptions/listen")).message,
            "subscriptions/listen is not part of the protocol of a session that began with initialize; use resources/subscribe in this session, or connect without initialize (server/discover, the 2026-07-28 protocol) to listen."
        );
        assert!(
            explained(bare("tasks/get"))
                .message
                .starts_with("Method not found: tasks/get. This server serves initialize, ")
        );
        let other = McpError::new(
            ErrorCode::METHOD_NOT_FOUND,
            "Method not found: x. Y".to_string(),
            None,
        );
        assert_eq!(explained(other.clone()), other);
        assert_eq!(
            explained(bare("resources/subscribe")).message,
            "resources/subscribe is not part of the 2026-07-28 protocol this request names; open a subscriptions/listen stream."
        );
        assert_eq!(
            explained(bare("ping")).message,
            "ping is not part of the 2026-07-28 protocol this request names; call server/discover to check the server."
        );
        let params = McpError::invalid_params("subscriptions/listen", None);
        assert_eq!(explained(params.clone()), params);
    }
}
