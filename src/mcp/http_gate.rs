//! The gate in front of rmcp's Streamable HTTP service (spec/mcp.md "Wave 2:
//! one server for a team"): every request to `cairn serve --http` passes,
//! in this order,
//!
//! 1. the path: only `/mcp` (else `404`);
//! 2. exactly one `Host` header and at most one `Origin` (else `400`: which
//!    one counts is ambiguous, so neither is trusted);
//! 3. DNS-rebinding protection: the `Host` name and any `Origin`'s host must
//!    be on the allow list (loopback names plus `--allow-host`), else `403`;
//! 4. a declared body over the limit (8 MiB): `413` before reading it (rmcp
//!    enforces the same limit while streaming a body without a length);
//! 5. bearer auth: `Authorization: Bearer TOKEN` whose SHA-256 is a live
//!    token of the store's `tokens` table (issue 22; PostgreSQL: its schema's
//!    table), read on every request so a revocation takes effect at once;
//!    else `401` with `WWW-Authenticate: Bearer`;
//! 6. a POST body is read whole within the body timeout (else `408`) and
//!    the limit (else `413`); it must be JSON (else `400` with JSON-RPC
//!    `-32700`) and one JSON-RPC object: a batch (array), `null` or any
//!    other value is `400` with JSON-RPC `-32600` (Invalid Request);
//! 7. session ownership, checked on every request against the token
//!    presented now: a request naming an `Mcp-Session-Id` opened with
//!    another token is `403`; so is one whose token was revoked and
//!    re-created under the same name, or whose grants changed since the
//!    session opened (the session is closed: it never keeps grants its
//!    token no longer has);
//! 8. capacity: a request that would open a session (an `initialize` POST
//!    without `Mcp-Session-Id`) when `--max-sessions` are open is `503`;
//!    one whose token already holds [`token_session_cap`] sessions (half of
//!    them) is `429`. A stateless (2026-07-28) request opens no session.
//!
//! The request then runs inside [`IDENTITY`]'s scope, so the service factory
//! of [`super::http`] builds each session's `CairnServer` with the token's
//! name and grants.

use std::collections::{BTreeSet, HashMap};
use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Request, Response, StatusCode, header};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use rmcp::transport::streamable_http_server::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use tower_service::Service;

use super::http_tokens::{self, TokenFile, TokenSource};
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
    /// The SHA-256 (hex) of the token presented, which tells a token from a
    /// later one under the same name; `None` under `--no-auth`.
    pub token: Option<String>,
    /// The request is a stateless one (2026-07-28): a POST without
    /// `Mcp-Session-Id` that is not `initialize`. Its agent is the token
    /// itself ([`StatelessAgents`]).
    pub stateless: bool,
}

/// Who opened a session: checked against every later request's [`Identity`].
#[derive(Debug, Clone, PartialEq, Eq)]
struct Owner {
    name: String,
    token: Option<String>,
    grants: BTreeSet<Capability>,
}

/// Why a request naming a session opened by `owner` is refused (`403`), or
/// `None` when `identity` may use it: the same token (by hash, not name)
/// with the same grants as when the session opened.
fn session_refusal(owner: &Owner, identity: &Identity) -> Option<String> {
    if owner.name != identity.name {
        Some("This session was opened with another token.".to_string())
    } else if owner.token != identity.token {
        Some(format!(
            "This session was opened with an earlier token named {}, since revoked or replaced; open a new session (initialize without Mcp-Session-Id).",
            owner.name
        ))
    } else if owner.grants != identity.grants {
        Some(format!(
            "The grants of the token {} changed since this session was opened; open a new session (initialize without Mcp-Session-Id).",
            owner.name
        ))
    } else {
        None
    }
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
    pub tokens: Option<TokenSource>,
    /// The server's `--grant` (caps every token's grants).
    pub grants: BTreeSet<Capability>,
    /// Allowed host names, lowercase (loopback names plus `--allow-host`).
    pub allow_hosts: Vec<String>,
    /// `--max-sessions`.
    pub max_sessions: usize,
    /// How long a POST body may take to arrive, from the end of its headers.
    pub body_timeout: Duration,
}

/// The gate and the rmcp service behind it. Cheap to clone (shared state).
#[derive(Clone)]
pub struct Gate {
    config: Arc<GateConfig>,
    inner: StreamableHttpService<CairnServer, LocalSessionManager>,
    sessions: Arc<LocalSessionManager>,
    /// Session id → the token that opened it.
    owners: Arc<Mutex<HashMap<String, Owner>>>,
    /// Session-opening requests in flight (counted against the limit).
    opening: Arc<AtomicUsize>,
    /// The same, per token name (counted against [`token_session_cap`]).
    opening_by: Arc<Mutex<HashMap<String, usize>>>,
    /// The servers of stateless agents, one per token.
    agents: Arc<StatelessAgents>,
}

/// A credential as presented: the token itself, or the SHA-256 of one.
#[derive(Debug, Clone, Copy)]
enum Presented<'a> {
    Token(&'a str),
    Hash(&'a str),
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

/// `400` sentence for a request with several `Host` headers or several
/// `Origin` headers (which one would count is ambiguous), or `None`.
pub fn duplicate_header_refusal(headers: &HeaderMap) -> Option<String> {
    let hosts = headers.get_all(header::HOST).iter().count();
    if hosts > 1 {
        return Some(format!(
            "A request must have exactly one Host header; this one has {hosts}."
        ));
    }
    let origins = headers.get_all(header::ORIGIN).iter().count();
    if origins > 1 {
        return Some(format!(
            "A request may have at most one Origin header; this one has {origins}."
        ));
    }
    None
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
    jsonrpc_error(-32700, &format!("Parse error: {detail}."))
}

/// The JSON-RPC Invalid Request message (`-32600`) for a POST body that is
/// JSON but not one JSON-RPC object, or `None` for an object.
pub fn invalid_request(body: &serde_json::Value) -> Option<String> {
    use serde_json::Value;
    let what = match body {
        Value::Object(m) => {
            // One JSON-RPC 2.0 message: a request or notification (a string
            // `method`) or a response (an `id` with `result` or `error`).
            // Anything else is -32600 here as on stdio (hostile run L2:
            // `{}` got rmcp's 415).
            let version = m.get("jsonrpc").and_then(Value::as_str) == Some("2.0");
            let request = m.get("method").is_some_and(Value::is_string);
            let response =
                m.contains_key("id") && (m.contains_key("result") || m.contains_key("error"));
            if version && (request || response) {
                return None;
            }
            return Some(
                "Invalid Request: not a JSON-RPC 2.0 message; it needs \"jsonrpc\": \"2.0\" and a string \"method\" (or, for a response, an \"id\" with a \"result\" or an \"error\")."
                    .to_string(),
            );
        }
        Value::Array(_) => {
            return Some(
                "Invalid Request: JSON-RPC batches (a JSON array) are not supported; send one request object per POST."
                    .to_string(),
            );
        }
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
    };
    Some(format!(
        "Invalid Request: the body is {what}, not a JSON-RPC request object; send one object per POST."
    ))
}

/// The longest method name passed on to rmcp, in characters; a longer one
/// is `-32601` here, its echo clipped.
pub const MAX_METHOD_CHARS: usize = 256;

/// True when the request's `MCP-Protocol-Version` header names 2026-07-28.
fn req_header_2026(h: &HeaderMap) -> bool {
    h.get("mcp-protocol-version")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim() == "2026-07-28")
}

/// `200` with a JSON-RPC error answering the request `id` (what rmcp
/// would send, as `application/json`).
fn jsonrpc_answer(id: serde_json::Value, e: &rmcp::ErrorData) -> Response<Body> {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": e.code.0, "message": e.message}
    });
    let mut r = Response::new(Full::new(Bytes::from(body.to_string())).boxed());
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    r
}

/// `400` with a JSON-RPC error object (`code`, `message`, id `null`).
fn jsonrpc_error(code: i64, message: &str) -> Response<Body> {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": code, "message": message}
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
        agents: Arc<StatelessAgents>,
    ) -> Gate {
        Gate {
            config: Arc::new(config),
            inner,
            sessions,
            owners: Arc::new(Mutex::new(HashMap::new())),
            opening: Arc::new(AtomicUsize::new(0)),
            opening_by: Arc::new(Mutex::new(HashMap::new())),
            agents,
        }
    }

    /// The identity of a token file entry: its name, its grants capped by
    /// the server's `--grant`, its hash.
    fn identity_of(&self, entry: &http_tokens::TokenEntry) -> Identity {
        Identity {
            name: entry.name.clone(),
            grants: entry
                .capabilities()
                .intersection(&self.config.grants)
                .copied()
                .collect(),
            token: Some(entry.sha256.clone()),
            stateless: false,
        }
    }

    /// Closes every open session whose token is no longer in the token file
    /// (revoked, or replaced under its name) or whose grants changed since
    /// it opened, so that its event stream and subscriptions end too, not
    /// only its next request; returns how many it closed. The session's
    /// record stays: a later request naming it is still `403`/`401`. Does
    /// nothing under `--no-auth` or when the token file cannot be read.
    pub async fn sweep(&self) -> usize {
        let Some(src) = &self.config.tokens else {
            return 0;
        };
        let Ok(file) = load_tokens(src) else {
            return 0;
        };
        let ended = self.agents.sweep(|owner| {
            let current = owner
                .token
                .as_deref()
                .and_then(|h| file.tokens.iter().find(|t| t.sha256 == h));
            current.is_some_and(|entry| session_refusal(owner, &self.identity_of(entry)).is_none())
        });
        if ended > 0 {
            tracing::info!(
                agents = ended,
                "ended the stateless agents (and their streams) of revoked or changed tokens"
            );
        }
        let live: Vec<String> = self
            .sessions
            .sessions
            .read()
            .await
            .keys()
            .map(|k| k.to_string())
            .collect();
        let stale: Vec<String> = {
            let m = match self.owners.lock() {
                Ok(m) => m,
                Err(p) => p.into_inner(),
            };
            live.into_iter()
                .filter(|id| {
                    m.get(id).is_some_and(|owner| {
                        let current = owner
                            .token
                            .as_deref()
                            .and_then(|h| file.tokens.iter().find(|t| t.sha256 == h));
                        current.is_none_or(|entry| {
                            session_refusal(owner, &self.identity_of(entry)).is_some()
                        })
                    })
                })
                .collect()
        };
        for id in &stale {
            let sid: rmcp::transport::streamable_http_server::session::SessionId =
                id.as_str().into();
            if let Err(e) = self.sessions.close_session(&sid).await {
                tracing::debug!(error = %e, "closing a session of a revoked token");
            }
        }
        if !stale.is_empty() {
            tracing::info!(
                sessions = stale.len(),
                "closed sessions whose token was revoked or changed"
            );
        }
        stale.len()
    }

    /// Who presents these headers, or the `401` to answer.
    fn authenticate(&self, headers: &HeaderMap) -> Result<Identity, Box<Response<Body>>> {
        self.authenticate_token(bearer(headers))
    }

    /// Steps 2 and 3 of the gate (one `Host`, at most one `Origin`, both on
    /// the allow list) for a path besides `/mcp` (the board, issue 25): the
    /// same `400`/`403` as `/mcp` answers, or `None` when they pass.
    pub fn front_refusal(&self, headers: &HeaderMap) -> Option<Response<Body>> {
        if let Some(sentence) = duplicate_header_refusal(headers) {
            return Some(text_response(StatusCode::BAD_REQUEST, &sentence));
        }
        if let Some(sentence) = rebinding_refusal(headers, &self.config.allow_hosts) {
            tracing::warn!(%sentence, "refused (DNS rebinding protection)");
            return Some(text_response(StatusCode::FORBIDDEN, &sentence));
        }
        None
    }

    /// True when requests need a token (not `--no-auth`).
    pub fn needs_token(&self) -> bool {
        self.config.tokens.is_some()
    }

    /// Who a presented bearer token (`None`: none presented) is, as step 5
    /// judges it, or the same `401` (or `500`) `/mcp` answers. Under
    /// `--no-auth`, `anonymous` with the server's grants.
    pub fn authenticate_token(
        &self,
        presented: Option<&str>,
    ) -> Result<Identity, Box<Response<Body>>> {
        self.authenticate_with(presented.map(Presented::Token))
    }

    /// Who the token with SHA-256 `hash` (hex) is while it is still a live
    /// token (the board's cookie sessions keep the hash, never the token),
    /// or the `401` `/mcp` answers a revoked token with.
    pub fn authenticate_hash(&self, hash: &str) -> Result<Identity, Box<Response<Body>>> {
        self.authenticate_with(Some(Presented::Hash(hash)))
    }

    fn authenticate_with(
        &self,
        presented: Option<Presented<'_>>,
    ) -> Result<Identity, Box<Response<Body>>> {
        let Some(src) = &self.config.tokens else {
            return Ok(Identity {
                name: "anonymous".to_string(),
                grants: self.config.grants.clone(),
                token: None,
                stateless: false,
            });
        };
        let Some(presented) = presented else {
            return Err(Box::new(unauthorized(
                "This server needs a bearer token: send Authorization: Bearer TOKEN (cairn token create NAME makes one).",
                false,
            )));
        };
        let file: TokenFile = match load_tokens(src) {
            Ok(f) => f,
            Err(e) => {
                // The store is out of reach (a database outage, a locked
                // file): 503, so a load balancer tries another server.
                tracing::error!(error = %e, "tokens unreadable");
                let mut r = text_response(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "The server cannot read its tokens from the store just now; try again (see its log).",
                );
                r.headers_mut()
                    .insert(header::RETRY_AFTER, header::HeaderValue::from_static("1"));
                return Err(Box::new(r));
            }
        };
        let found = match presented {
            Presented::Token(t) => file.lookup(t),
            Presented::Hash(h) => file.tokens.iter().find(|e| e.sha256 == h),
        };
        match found {
            Some(entry) => {
                if !matches!(src, TokenSource::File(..)) {
                    tokio::task::block_in_place(|| src.touch(&entry.sha256));
                }
                Ok(self.identity_of(entry))
            }
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
        if let Some(sentence) = duplicate_header_refusal(req.headers()) {
            tracing::debug!(%sentence, "refused (duplicate header)");
            return text_response(StatusCode::BAD_REQUEST, &sentence);
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
        let mut identity = match self.authenticate(req.headers()) {
            Ok(i) => i,
            Err(r) => return *r,
        };
        // POST bodies are read here, within the limit, so that an
        // oversized body without a length is 413 and a body that is not
        // JSON is a JSON-RPC parse error (400), whatever rmcp would say.
        let (parts, body) = req.into_parts();
        let bytes = if parts.method == http::Method::POST {
            let collect = http_body_util::Limited::new(body, MAX_BODY_BYTES).collect();
            let Ok(collected) = tokio::time::timeout(self.config.body_timeout, collect).await
            else {
                return text_response(
                    StatusCode::REQUEST_TIMEOUT,
                    &format!(
                        "The request body did not arrive within {} s.",
                        self.config.body_timeout.as_secs_f64()
                    ),
                );
            };
            match collected {
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
        let mut method = None;
        let mut request_id: Option<serde_json::Value> = None;
        let mut declared_2026 = false;
        if parts.method == http::Method::POST {
            match serde_json::from_slice::<serde_json::Value>(&bytes) {
                Err(e) => return parse_error(&e.to_string()),
                Ok(v) => {
                    if let Some(message) = invalid_request(&v) {
                        return jsonrpc_error(-32600, &message);
                    }
                    method = v.get("method").and_then(|m| m.as_str()).map(str::to_string);
                    request_id = v.get("id").cloned();
                    declared_2026 = v
                        .pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion")
                        .and_then(|p| p.as_str())
                        == Some("2026-07-28");
                }
            }
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
            if let Some(owner) = owner
                && let Some(sentence) = session_refusal(&owner, &identity)
            {
                if owner.name == identity.name {
                    // The token it was opened with is gone (or lost grants):
                    // end the session so nothing, not even its stream, goes on
                    // under the old grants. The record stays, so later uses
                    // get the same 403.
                    let sid: rmcp::transport::streamable_http_server::session::SessionId =
                        id.as_str().into();
                    if let Err(e) = self.sessions.close_session(&sid).await {
                        tracing::debug!(error = %e, "closing a stale session");
                    }
                    tracing::info!(token = %owner.name, "refused a session of a replaced token");
                }
                return text_response(StatusCode::FORBIDDEN, &sentence);
            }
        }
        // rmcp refuses a 2026-07-28 stream in a session with only the
        // method's name; say what to use instead (docs/mcp.md "Protocol eras").
        if session.is_some()
            && method.as_deref() == Some("subscriptions/listen")
            && let Some(id) = request_id.clone()
        {
            return jsonrpc_answer(id, &super::served::other_era("subscriptions/listen"));
        }
        // No method cairn serves is long: answer an absurd one here, clipped,
        // before rmcp echoes it whole in a header-mismatch error.
        if method
            .as_ref()
            .is_some_and(|m| m.chars().count() > MAX_METHOD_CHARS)
            && let (Some(m), Some(id)) = (method.as_deref(), request_id.clone())
        {
            let mut r = jsonrpc_answer(id, &super::listing::method_not_found(m));
            *r.status_mut() = StatusCode::NOT_FOUND;
            return r;
        }
        // ... and a 2025-11-25 method in a request that declares 2026-07-28
        // (header or `_meta`) with the bare name too: say what replaces it,
        // with the 404 SEP-2575 gives it over HTTP.
        if session.is_none()
            && (declared_2026 || req_header_2026(req.headers()))
            && let Some(m) = method.as_deref()
            && m != "initialize"
            && let Some(e) = super::listing::removed_in_2026(m)
            && let Some(id) = request_id.clone()
        {
            let mut r = jsonrpc_answer(id, &e);
            *r.status_mut() = StatusCode::NOT_FOUND;
            return r;
        }
        // A POST without a session that is not `initialize` opens none: rmcp
        // serves it statelessly (2026-07-28) or refuses it.
        identity.stateless = session.is_none()
            && req.method() == http::Method::POST
            && method.as_deref() != Some("initialize");
        let opens = session.is_none() && req.method() == http::Method::POST && !identity.stateless;
        let capped = opens && self.config.tokens.is_some();
        if opens {
            let pending = self.opening.fetch_add(1, Ordering::SeqCst);
            let live: Vec<String> = self
                .sessions
                .sessions
                .read()
                .await
                .keys()
                .map(|k| k.to_string())
                .collect();
            if live.len() + pending >= self.config.max_sessions {
                self.opening.fetch_sub(1, Ordering::SeqCst);
                return text_response(
                    StatusCode::SERVICE_UNAVAILABLE,
                    &format!(
                        "This server already holds its limit of {} sessions; close one or start the server with a higher --max-sessions.",
                        self.config.max_sessions
                    ),
                );
            }
            if capped {
                let cap = token_session_cap(self.config.max_sessions);
                let held = {
                    let m = lock_map(&self.owners);
                    live.iter()
                        .filter(|id| m.get(*id).is_some_and(|o| o.name == identity.name))
                        .count()
                };
                let mine = {
                    let mut by = lock_map(&self.opening_by);
                    let n = by.entry(identity.name.clone()).or_insert(0);
                    *n += 1;
                    *n - 1
                };
                if held + mine >= cap {
                    self.opening.fetch_sub(1, Ordering::SeqCst);
                    self.done_opening(&identity.name);
                    return text_response(
                        StatusCode::TOO_MANY_REQUESTS,
                        &format!(
                            "The token {} already holds {cap} sessions, the most one token may (half of --max-sessions); close one, or give each agent its own token (cairn token create NAME).",
                            identity.name
                        ),
                    );
                }
            }
        }
        let token_name = identity.name.clone();
        let deleting = req.method() == http::Method::DELETE;
        let owner = Owner {
            name: identity.name.clone(),
            token: identity.token.clone(),
            grants: identity.grants.clone(),
        };
        let mut inner = self.inner.clone();
        let response = IDENTITY.scope(identity, inner.call(req)).await;
        let response = match response {
            Ok(r) => r,
            Err(never) => match never {},
        };
        if opens {
            self.opening.fetch_sub(1, Ordering::SeqCst);
            if capped {
                self.done_opening(&token_name);
            }
            if let Some(id) = response
                .headers()
                .get(SESSION_HEADER)
                .and_then(|v| v.to_str().ok())
            {
                self.bind(id, owner).await;
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

    /// One session-opening request of token `name` finished.
    fn done_opening(&self, name: &str) {
        let mut by = lock_map(&self.opening_by);
        if let Some(n) = by.get_mut(name) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                by.remove(name);
            }
        }
    }

    /// Records that session `id` belongs to `owner`, dropping records
    /// of sessions that have ended once the map grows past twice the limit.
    async fn bind(&self, id: &str, owner: Owner) {
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
        m.insert(id.to_string(), owner);
    }
}

/// The most sessions one token may hold open at once: half of
/// `--max-sessions` (at least 1), so one token never holds every slot
/// (issue 22). Only with tokens; under `--no-auth` every session is
/// `anonymous` and only `--max-sessions` applies.
pub fn token_session_cap(max_sessions: usize) -> usize {
    (max_sessions / 2).max(1)
}

fn lock_map<K, V>(m: &Mutex<HashMap<K, V>>) -> std::sync::MutexGuard<'_, HashMap<K, V>> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

/// The servers of stateless (2026-07-28) HTTP agents, one per token name
/// (docs/mcp.md "Identity by token"): every stateless request of a token is
/// served by the same [`CairnServer`], whose agent is the token's name, so
/// its claims, `(mine)` and current task carry from one request to the next.
/// A token replaced under its name or whose grants changed gets a fresh
/// server; [`StatelessAgents::sweep`] ends the servers of revoked tokens,
/// closing their `subscriptions/listen` streams.
#[derive(Default)]
pub struct StatelessAgents {
    /// Token name → who, its server, and the database outages the process
    /// had noticed when the server was made
    /// ([`crate::store::pg::connect::outages`]).
    servers: Mutex<HashMap<String, (Owner, CairnServer, u64)>>,
}

impl StatelessAgents {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (Owner, CairnServer, u64)>> {
        match self.servers.lock() {
            Ok(m) => m,
            Err(p) => p.into_inner(),
        }
    }

    /// The server of `identity`'s token: the one already serving it, or a
    /// new one from `make` (the old one, of a replaced token or whose
    /// database connection was lost — a restart or failover of
    /// PostgreSQL — is ended). Errors: `make`'s.
    pub fn server_for<E>(
        &self,
        identity: &Identity,
        make: impl FnOnce() -> Result<CairnServer, E>,
    ) -> Result<CairnServer, E> {
        let owner = Owner {
            name: identity.name.clone(),
            token: identity.token.clone(),
            grants: identity.grants.clone(),
        };
        let outages = crate::store::pg::connect::outages();
        let mut m = self.lock();
        if let Some((held, server, seen)) = m.get(&identity.name) {
            if *held != owner {
                server.end();
            } else if *seen == outages && !server.store_lost() {
                return Ok(server.clone());
            }
            // After an outage the old server's connection may be dead; it
            // lives on only as long as its open streams hold it.
        }
        let server = make()?;
        m.insert(identity.name.clone(), (owner, server.clone(), outages));
        Ok(server)
    }

    /// Ends and forgets every server whose owner `keep` refuses (its token
    /// was revoked, replaced, or its grants changed); how many.
    fn sweep(&self, keep: impl Fn(&Owner) -> bool) -> usize {
        let mut m = self.lock();
        let before = m.len();
        m.retain(|_, (owner, server, _)| {
            let kept = keep(owner);
            if !kept {
                server.end();
            }
            kept
        });
        before - m.len()
    }
}

/// The board (issue 25) sits behind this gate: the same `Host`/`Origin`
/// rules and token checks, answered with `/mcp`'s own responses.
impl crate::board::web::Gatekeeper for Gate {
    fn front_refusal(&self, headers: &HeaderMap) -> Option<Response<Body>> {
        Gate::front_refusal(self, headers)
    }

    fn authenticate_token(
        &self,
        presented: Option<&str>,
    ) -> Result<crate::board::web::Viewer, Box<Response<Body>>> {
        Gate::authenticate_token(self, presented).map(viewer)
    }

    fn authenticate_hash(
        &self,
        hash: &str,
    ) -> Result<crate::board::web::Viewer, Box<Response<Body>>> {
        Gate::authenticate_hash(self, hash).map(viewer)
    }
}

fn viewer(i: Identity) -> crate::board::web::Viewer {
    crate::board::web::Viewer {
        grants: i.grants,
        token: i.token,
    }
}

/// The tokens of `src`: a file is read in place; the PostgreSQL table is
/// read off the async workers (`block_in_place`: the server's runtime is
/// multi-threaded). Errors: the source's.
fn load_tokens(src: &TokenSource) -> Result<TokenFile, http_tokens::TokenError> {
    match src {
        TokenSource::File(p) => http_tokens::load(p),
        TokenSource::Sqlite(..) | TokenSource::Pg(..) => tokio::task::block_in_place(|| src.load()),
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
    fn duplicate_host_or_origin_is_refused() {
        let mut h = HeaderMap::new();
        h.insert(header::HOST, "127.0.0.1:7000".parse().unwrap());
        assert_eq!(duplicate_header_refusal(&h), None);
        h.append(header::HOST, "evil.example".parse().unwrap());
        assert_eq!(
            duplicate_header_refusal(&h).as_deref(),
            Some("A request must have exactly one Host header; this one has 2.")
        );
        h.remove(header::HOST);
        h.insert(header::HOST, "localhost".parse().unwrap());
        h.append(header::ORIGIN, "http://localhost".parse().unwrap());
        assert_eq!(duplicate_header_refusal(&h), None);
        h.append(header::ORIGIN, "http://evil.example".parse().unwrap());
        assert_eq!(
            duplicate_header_refusal(&h).as_deref(),
            Some("A request may have at most one Origin header; this one has 2.")
        );
    }

    #[test]
    fn only_one_jsonrpc_object_is_a_valid_request() {
        use serde_json::json;
        assert_eq!(
            invalid_request(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"})),
            None
        );
        assert_eq!(
            invalid_request(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"})),
            None
        );
        assert_eq!(
            invalid_request(&json!({"jsonrpc": "2.0", "id": 1, "result": {}})),
            None
        );
        assert!(invalid_request(&json!({"jsonrpc": "2.0"})).is_some());
        assert_eq!(
            invalid_request(&json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}])).as_deref(),
            Some(
                "Invalid Request: JSON-RPC batches (a JSON array) are not supported; send one request object per POST."
            )
        );
        assert_eq!(
            invalid_request(&json!(null)).as_deref(),
            Some(
                "Invalid Request: the body is null, not a JSON-RPC request object; send one object per POST."
            )
        );
        assert!(
            invalid_request(&json!(7))
                .unwrap()
                .contains("the body is a number,")
        );
    }

    #[test]
    fn a_session_answers_only_the_token_that_opened_it() {
        let grants = |c: &[Capability]| c.iter().copied().collect::<BTreeSet<_>>();
        let owner = Owner {
            name: "agent-1".to_string(),
            token: Some("aaaa".to_string()),
            grants: grants(&[Capability::Read, Capability::Write]),
        };
        let mut who = Identity {
            name: "agent-1".to_string(),
            grants: grants(&[Capability::Read, Capability::Write]),
            token: Some("aaaa".to_string()),
            stateless: false,
        };
        assert_eq!(session_refusal(&owner, &who), None);
        who.token = Some("bbbb".to_string());
        who.grants = grants(&[Capability::Read]);
        assert_eq!(
            session_refusal(&owner, &who).as_deref(),
            Some(
                "This session was opened with an earlier token named agent-1, since revoked or replaced; open a new session (initialize without Mcp-Session-Id)."
            )
        );
        who.token = Some("aaaa".to_string());
        assert_eq!(
            session_refusal(&owner, &who).as_deref(),
            Some(
                "The grants of the token agent-1 changed since this session was opened; open a new session (initialize without Mcp-Session-Id)."
            )
        );
        who.name = "reviewer".to_string();
        assert_eq!(
            session_refusal(&owner, &who).as_deref(),
            Some("This session was opened with another token.")
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
