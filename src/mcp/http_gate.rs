//! The gate in front of rmcp's Streamable HTTP service (spec/mcp.md "Wave 2:
//! one server for a team"): every request to `cairn serve --http` passes,
//! in this order,
//!
//! 1. the path: only `/mcp` (else `404`);
//! 2. DNS-rebinding protection: the `Host` name and any `Origin`'s host must
//!    be on the allow list (loopback names plus `--allow-host`), else `403`;
//! 3. a declared body over the limit (8 MiB): `413` before reading it (rmcp
//!    enforces the same limit while streaming a body without a length);
//! 4. bearer auth: `Authorization: Bearer TOKEN` whose SHA-256 is in the
//!    token file, read on every request so a revocation takes effect at once;
//!    else `401` with `WWW-Authenticate: Bearer`;
//! 5. session ownership: a request naming an `Mcp-Session-Id` opened with
//!    another token is `403`;
//! 6. capacity: a request that would open a session (a POST without
//!    `Mcp-Session-Id`) when `--max-sessions` are open is `503`.
//!
//! The request then runs inside [`IDENTITY`]'s scope, so the service factory
//! of [`super::http`] builds each session's `CairnServer` with the token's
//! name and grants.

use std::collections::{BTreeSet, HashMap};
use std::convert::Infallible;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::{HeaderMap, Request, Response, StatusCode, header};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use rmcp::transport::streamable_http_server::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use tower_service::Service;

use super::http_tokens::{self, TokenFile};
use super::logging::clip;
use super::server::{CairnServer, MAX_ECHO_CHARS};
use crate::session::Capability;

/// The response body type shared with rmcp.
pub type Body = BoxBody<Bytes, Infallible>;

/// The MCP endpoint's path.
pub const MCP_PATH: &str = "/mcp";

/// The request body limit: 8 MiB.
pub const MAX_BODY_BYTES: usize = 8 * 1024 * 1024;

/// The host names allowed without `--allow-host`.
pub const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// The header naming a Streamable HTTP session.
const SESSION_HEADER: &str = "mcp-session-id";

/// Who is calling: the token's name and grants (or `anonymous` with the
/// server's grants under `--no-auth`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The token's name; the agent-identity prefix.
    pub name: String,
    /// The capabilities the session gets: the token's grants intersected
    /// with the server's `--grant`.
    pub grants: BTreeSet<Capability>,
}

tokio::task_local! {
    /// The identity of the request being served; read by the service
    /// factory when rmcp opens a session (or serves a stateless request).
    pub static IDENTITY: Identity;
}

/// The gate's settings.
#[derive(Debug, Clone)]
pub struct GateConfig {
    /// `Some(path of the token file)`, or `None` under `--no-auth`.
    pub tokens: Option<PathBuf>,
    /// The server's `--grant` (caps every token's grants).
    pub grants: BTreeSet<Capability>,
    /// Allowed host names, lowercase (loopback names plus `--allow-host`).
    pub allow_hosts: Vec<String>,
    /// `--max-sessions`.
    pub max_sessions: usize,
}

/// The gate and the rmcp service behind it. Cheap to clone (shared state).
#[derive(Clone)]
pub struct Gate {
    config: Arc<GateConfig>,
    inner: StreamableHttpService<CairnServer, LocalSessionManager>,
    sessions: Arc<LocalSessionManager>,
    /// Session id → the name of the token that opened it.
    owners: Arc<Mutex<HashMap<String, String>>>,
    /// Session-opening requests in flight (counted against the limit).
    opening: Arc<AtomicUsize>,
}

/// A plain-text response: `status`, one sentence and a newline.
pub fn text_response(status: StatusCode, sentence: &str) -> Response<Body> {
    let mut r = Response::new(Full::new(Bytes::from(format!("{sentence}\n"))).boxed());
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

/// The host part of a `Host` header value or an authority: lowercase,
/// without port or IPv6 brackets. `None` when it cannot be parsed.
pub fn host_name(authority: &str) -> Option<String> {
    let a = authority.trim();
    if a.is_empty() {
        return None;
    }
    let host = if let Some(rest) = a.strip_prefix('[') {
        rest.split(']').next()?
    } else {
        match a.rsplit_once(':') {
            Some((h, port)) if port.chars().all(|c| c.is_ascii_digit()) => h,
            _ => a,
        }
    };
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

/// The host of an `Origin` header (`scheme://host[:port]`); `None` for
/// `null` or anything unparsable.
pub fn origin_host(origin: &str) -> Option<String> {
    let (_, rest) = origin.trim().split_once("://")?;
    host_name(rest.split('/').next()?)
}

/// 403 sentence for a foreign `Host`/`Origin`, or `None` when both pass.
/// The sentence is both the response body and the server's log line, so
/// the header value it quotes is capped at [`MAX_ECHO_CHARS`] characters
/// (`…` and the length after a cut); a cut host is suggested as
/// `--allow-host HOST`.
pub fn rebinding_refusal(headers: &HeaderMap, allow: &[String]) -> Option<String> {
    let allowed = |h: &str| allow.iter().any(|a| a == h);
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .and_then(host_name);
    match host {
        Some(h) if allowed(&h) => {}
        Some(h) => {
            let shown = clip(&h, MAX_ECHO_CHARS);
            let flag = if shown == h { h.as_str() } else { "HOST" };
            return Some(format!(
                "Host \"{shown}\" is not allowed; start the server with --allow-host {flag} to serve it."
            ));
        }
        None => return Some("A Host header is required.".to_string()),
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let text = origin.to_str().unwrap_or("");
        match origin_host(text) {
            Some(h) if allowed(&h) => {}
            _ => {
                let shown = clip(text, MAX_ECHO_CHARS);
                return Some(format!(
                    "Origin \"{shown}\" is not allowed; start the server with --allow-host HOST to serve it."
                ));
            }
        }
    }
    None
}

/// The text after `Bearer ` in `Authorization`, if any.
fn bearer(headers: &HeaderMap) -> Option<&str> {
    let v = headers.get(header::AUTHORIZATION)?.to_str().ok()?.trim();
    let (scheme, token) = v.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then_some(token.trim())
        .filter(|t| !t.is_empty())
}

/// `400` with the JSON-RPC parse error (`-32700`, id `null`).
fn parse_error(detail: &str) -> Response<Body> {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": -32700, "message": format!("Parse error: {detail}.")}
    });
    let mut r = Response::new(Full::new(Bytes::from(body.to_string())).boxed());
    *r.status_mut() = StatusCode::BAD_REQUEST;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    r
}

fn unauthorized(sentence: &str, invalid: bool) -> Response<Body> {
    let mut r = text_response(StatusCode::UNAUTHORIZED, sentence);
    let challenge = if invalid {
        "Bearer realm=\"cairn\", error=\"invalid_token\""
    } else {
        "Bearer realm=\"cairn\""
    };
    r.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        http::HeaderValue::from_static(challenge),
    );
    r
}

impl Gate {
    /// A gate over `inner`, whose session manager is `sessions`.
    pub fn new(
        config: GateConfig,
        inner: StreamableHttpService<CairnServer, LocalSessionManager>,
        sessions: Arc<LocalSessionManager>,
    ) -> Gate {
        Gate {
            config: Arc::new(config),
            inner,
            sessions,
            owners: Arc::new(Mutex::new(HashMap::new())),
            opening: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// Who presents these headers, or the `401` to answer.
    fn authenticate(&self, headers: &HeaderMap) -> Result<Identity, Box<Response<Body>>> {
        let Some(path) = &self.config.tokens else {
            return Ok(Identity {
                name: "anonymous".to_string(),
                grants: self.config.grants.clone(),
            });
        };
        let Some(presented) = bearer(headers) else {
            return Err(Box::new(unauthorized(
                "This server needs a bearer token: send Authorization: Bearer TOKEN (cairn token create NAME makes one).",
                false,
            )));
        };
        let file: TokenFile = match http_tokens::load(path) {
            Ok(f) => f,
            Err(e) => {
                tracing::error!(error = %e, "token file unreadable");
                return Err(Box::new(text_response(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "The server cannot read its token file; see its log.",
                )));
            }
        };
        match file.lookup(presented) {
            Some(entry) => Ok(Identity {
                name: entry.name.clone(),
                grants: entry
                    .capabilities()
                    .intersection(&self.config.grants)
                    .copied()
                    .collect(),
            }),
            None => Err(Box::new(unauthorized(
                "The bearer token is not valid (unknown or revoked).",
                true,
            ))),
        }
    }

    /// Serves one HTTP request through the gate and rmcp. Never fails: every
    /// refusal is a response.
    pub async fn handle(self, req: Request<hyper::body::Incoming>) -> Response<Body> {
        if req.uri().path() != MCP_PATH {
            return text_response(
                StatusCode::NOT_FOUND,
                "Not found; the MCP endpoint is /mcp.",
            );
        }
        if let Some(sentence) = rebinding_refusal(req.headers(), &self.config.allow_hosts) {
            tracing::warn!(%sentence, "refused (DNS rebinding protection)");
            return text_response(StatusCode::FORBIDDEN, &sentence);
        }
        let declared = req
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok());
        if declared.is_some_and(|n| n > MAX_BODY_BYTES as u64) {
            return text_response(
                StatusCode::PAYLOAD_TOO_LARGE,
                "The request body is over the 8 MiB limit.",
            );
        }
        let identity = match self.authenticate(req.headers()) {
            Ok(i) => i,
            Err(r) => return *r,
        };
        // POST bodies are read here, within the limit, so that an
        // oversized body without a length is 413 and a body that is not
        // JSON is a JSON-RPC parse error (400), whatever rmcp would say.
        let (parts, body) = req.into_parts();
        let bytes = if parts.method == http::Method::POST {
            match http_body_util::Limited::new(body, MAX_BODY_BYTES)
                .collect()
                .await
            {
                Ok(c) => c.to_bytes(),
                Err(e) if e.is::<http_body_util::LengthLimitError>() => {
                    return text_response(
                        StatusCode::PAYLOAD_TOO_LARGE,
                        "The request body is over the 8 MiB limit.",
                    );
                }
                Err(e) => {
                    tracing::debug!(error = %e, "request body unreadable");
                    return text_response(
                        StatusCode::BAD_REQUEST,
                        "The request body could not be read.",
                    );
                }
            }
        } else {
            Bytes::new()
        };
        if parts.method == http::Method::POST
            && let Err(e) = serde_json::from_slice::<serde_json::Value>(&bytes)
        {
            return parse_error(&e.to_string());
        }
        let req = Request::from_parts(parts, Full::new(bytes));
        let session = req
            .headers()
            .get(SESSION_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        if let Some(id) = &session {
            let owner = match self.owners.lock() {
                Ok(m) => m.get(id).cloned(),
                Err(p) => p.into_inner().get(id).cloned(),
            };
            if owner.is_some_and(|o| o != identity.name) {
                return text_response(
                    StatusCode::FORBIDDEN,
                    "This session was opened with another token.",
                );
            }
        }
        let opens = session.is_none() && req.method() == http::Method::POST;
        if opens {
            let pending = self.opening.fetch_add(1, Ordering::SeqCst);
            let open = self.sessions.sessions.read().await.len();
            if open + pending >= self.config.max_sessions {
                self.opening.fetch_sub(1, Ordering::SeqCst);
                return text_response(
                    StatusCode::SERVICE_UNAVAILABLE,
                    &format!(
                        "This server already holds its limit of {} sessions; close one or start the server with a higher --max-sessions.",
                        self.config.max_sessions
                    ),
                );
            }
        }
        let deleting = req.method() == http::Method::DELETE;
        let name = identity.name.clone();
        let mut inner = self.inner.clone();
        let response = IDENTITY.scope(identity, inner.call(req)).await;
        let response = match response {
            Ok(r) => r,
            Err(never) => match never {},
        };
        if opens {
            self.opening.fetch_sub(1, Ordering::SeqCst);
            if let Some(id) = response
                .headers()
                .get(SESSION_HEADER)
                .and_then(|v| v.to_str().ok())
            {
                self.bind(id, &name).await;
            }
        }
        if deleting
            && response.status().is_success()
            && let Some(id) = &session
        {
            match self.owners.lock() {
                Ok(mut m) => m.remove(id),
                Err(p) => p.into_inner().remove(id),
            };
        }
        response
    }

    /// Records that session `id` belongs to token `name`, dropping records
    /// of sessions that have ended once the map grows past twice the limit.
    async fn bind(&self, id: &str, name: &str) {
        let live: Option<Vec<String>> = {
            let len = match self.owners.lock() {
                Ok(m) => m.len(),
                Err(p) => p.into_inner().len(),
            };
            if len >= 2 * self.config.max_sessions.max(1) {
                Some(
                    self.sessions
                        .sessions
                        .read()
                        .await
                        .keys()
                        .map(|k| k.to_string())
                        .collect(),
                )
            } else {
                None
            }
        };
        let mut m = match self.owners.lock() {
            Ok(m) => m,
            Err(p) => p.into_inner(),
        };
        if let Some(live) = live {
            m.retain(|k, _| live.contains(k));
        }
        m.insert(id.to_string(), name.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_names() {
        assert_eq!(host_name("localhost:8080").as_deref(), Some("localhost"));
        assert_eq!(host_name("127.0.0.1").as_deref(), Some("127.0.0.1"));
        assert_eq!(host_name("[::1]:9").as_deref(), Some("::1"));
        assert_eq!(
            host_name("Cairn.Example.COM").as_deref(),
            Some("cairn.example.com")
        );
        assert_eq!(host_name(""), None);
        assert_eq!(
            origin_host("http://localhost:5173").as_deref(),
            Some("localhost")
        );
        assert_eq!(origin_host("null"), None);
    }

    #[test]
    fn rebinding_refusals() {
        let allow: Vec<String> = LOOPBACK_HOSTS.iter().map(|s| s.to_string()).collect();
        let mut h = HeaderMap::new();
        h.insert(header::HOST, "127.0.0.1:7000".parse().unwrap());
        assert_eq!(rebinding_refusal(&h, &allow), None);
        h.insert(header::ORIGIN, "http://localhost:3000".parse().unwrap());
        assert_eq!(rebinding_refusal(&h, &allow), None);
        h.insert(header::ORIGIN, "http://evil.example".parse().unwrap());
        assert_eq!(
            rebinding_refusal(&h, &allow).as_deref(),
            Some(
                "Origin \"http://evil.example\" is not allowed; start the server with --allow-host HOST to serve it."
            )
        );
        h.remove(header::ORIGIN);
        h.insert(header::HOST, "evil.example:7000".parse().unwrap());
        assert_eq!(
            rebinding_refusal(&h, &allow).as_deref(),
            Some(
                "Host \"evil.example\" is not allowed; start the server with --allow-host evil.example to serve it."
            )
        );
    }

    #[test]
    fn rebinding_refusals_cap_the_echoed_header() {
        let allow: Vec<String> = LOOPBACK_HOSTS.iter().map(|s| s.to_string()).collect();
        let mut h = HeaderMap::new();
        let long = "a".repeat(60_000);
        h.insert(header::HOST, long.parse().unwrap());
        assert_eq!(
            rebinding_refusal(&h, &allow),
            Some(format!(
                "Host \"{}… (60000 characters)\" is not allowed; start the server with --allow-host HOST to serve it.",
                "a".repeat(100)
            ))
        );
        h.insert(header::HOST, "localhost".parse().unwrap());
        h.insert(header::ORIGIN, format!("http://{long}").parse().unwrap());
        assert_eq!(
            rebinding_refusal(&h, &allow),
            Some(format!(
                "Origin \"http://{}… (60007 characters)\" is not allowed; start the server with --allow-host HOST to serve it.",
                "a".repeat(93)
            ))
        );
    }

    #[test]
    fn bearer_parsing() {
        let mut h = HeaderMap::new();
        assert_eq!(bearer(&h), None);
        h.insert(header::AUTHORIZATION, "Bearer  cairn_x ".parse().unwrap());
        assert_eq!(bearer(&h), Some("cairn_x"));
        h.insert(header::AUTHORIZATION, "Basic abc".parse().unwrap());
        assert_eq!(bearer(&h), None);
    }
}
