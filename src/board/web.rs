//! The board over HTTP (issue 25; docs/board.md): the page at `/`, its
//! script and style, the sign-in, the JSON endpoints ([`super::api`]) and
//! the live stream ([`super::sse`]), served by `cairn serve --http` beside
//! `/mcp` and by `cairn board` alone. Every request passes the same
//! `Host`/`Origin` rules as `/mcp` ([`Gate::front_refusal`]); the data
//! needs a viewer:
//!
//! - with tokens, `Authorization: Bearer TOKEN` or the cookie the sign-in
//!   page sets (it keeps the token's SHA-256 server-side, never the token,
//!   and asks the gate again on every request, so a revoked token is
//!   refused at once with `/mcp`'s own `401`); the token needs `read`;
//! - `cairn board`: the cookie its one-time link sets (the link dies when
//!   used);
//! - `--no-auth`: anyone (loopback only).
//!
//! The cookie is `HttpOnly; SameSite=Strict; Path=/`. Every response
//! carries a Content-Security-Policy that allows only the board's own
//! script and style (no inline script) and `nosniff`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full};

use super::api::{self, Source};
use super::sse;
use crate::session::Capability;

/// The response body type (the same as the MCP transport's).
pub type Body = http_body_util::combinators::BoxBody<Bytes, std::convert::Infallible>;

/// Who a credential is: its grants and the SHA-256 of its token (`None`
/// when the server needs no token).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Viewer {
    /// The capabilities the credential holds on this server.
    pub grants: std::collections::BTreeSet<Capability>,
    /// The token's SHA-256 (hex), kept by a cookie session instead of the token.
    pub token: Option<String>,
}

/// The gate the board sits behind: the same `Host`/`Origin` rules and token
/// checks as `/mcp` (implemented by `mcp::http_gate::Gate`, so the board's
/// refusals are `/mcp`'s own responses). The board never imports `mcp`.
pub trait Gatekeeper: Clone + Send + Sync + 'static {
    /// The `400`/`403` for duplicate or foreign `Host`/`Origin`, or `None`.
    fn front_refusal(&self, headers: &HeaderMap) -> Option<Response<Body>>;
    /// Who a presented token is (`None`: none presented), or the `401`.
    fn authenticate_token(&self, presented: Option<&str>) -> Result<Viewer, Box<Response<Body>>>;
    /// Who the still-live token with SHA-256 `hash` is, or the `401`.
    fn authenticate_hash(&self, hash: &str) -> Result<Viewer, Box<Response<Body>>>;
}

/// A plain-text response: `status`, one sentence and a newline.
pub fn text_response(status: StatusCode, sentence: &str) -> Response<Body> {
    body(status, "text/plain; charset=utf-8", format!("{sentence}\n"))
}

/// The page's HTML shell (no agent text in it).
pub const INDEX_HTML: &str = include_str!("assets/index.html");
/// The sign-in page.
pub const SIGNIN_HTML: &str = include_str!("assets/signin.html");
/// The board's script.
pub const APP_JS: &str = include_str!("assets/app.js");
/// The board's style.
pub const APP_CSS: &str = include_str!("assets/app.css");

/// The board's cookie.
pub const COOKIE: &str = "cairn_board";

/// The Content-Security-Policy of every board response.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// The most cookie sessions kept; past it the oldest half is forgotten.
const MAX_SESSIONS: usize = 4096;

/// The `404` sentence of `cairn board`, which serves no `/mcp`.
pub const NOT_FOUND_BOARD_ONLY: &str =
    "Not found; cairn board serves only the board, at /; cairn serve --http serves /mcp.";

/// Who may look.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Tokens with `read` (the server has a token table).
    Tokens,
    /// `--no-auth`: anyone who passes the `Host`/`Origin` rules.
    Open,
    /// `cairn board`: only the browser that opened the one-time link.
    Link,
}

/// One signed-in browser: the token's SHA-256 (`None` for a one-time link)
/// and when it signed in (for the cap).
#[derive(Debug, Clone)]
struct Signed {
    token: Option<String>,
    since: std::time::Instant,
}

/// The board of one server.
#[derive(Clone)]
pub struct Board<G: Gatekeeper> {
    gate: G,
    source: Source,
    access: Access,
    viewers: Arc<Mutex<HashMap<String, Signed>>>,
    once: Arc<Mutex<Option<String>>>,
    /// The session cookie's name: [`COOKIE`], then `_PORT` once the port is
    /// known ([`Board::on_port`]).
    cookie: String,
}

/// 32 random bytes as hex. Errors: no randomness.
fn random_hex() -> Result<String, String> {
    let mut b = [0u8; 32];
    getrandom::fill(&mut b).map_err(|e| e.to_string())?;
    Ok(hex::encode(b))
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

/// Adds the security headers every board response carries.
fn secure(mut r: Response<Body>) -> Response<Body> {
    let h = r.headers_mut();
    h.insert("content-security-policy", HeaderValue::from_static(CSP));
    h.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    h.insert("referrer-policy", HeaderValue::from_static("same-origin"));
    h.insert("x-frame-options", HeaderValue::from_static("DENY"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

fn body(status: StatusCode, kind: &'static str, text: impl Into<Bytes>) -> Response<Body> {
    let mut r = Response::new(Full::new(text.into()).boxed());
    *r.status_mut() = status;
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
    r
}

fn see_other(to: &'static str, cookie: Option<String>) -> Response<Body> {
    let mut r = body(StatusCode::SEE_OTHER, "text/plain; charset=utf-8", "");
    r.headers_mut()
        .insert(header::LOCATION, HeaderValue::from_static(to));
    if let Some(c) = cookie.and_then(|c| HeaderValue::from_str(&c).ok()) {
        r.headers_mut().insert(header::SET_COOKIE, c);
    }
    secure(r)
}

/// The value of cookie `name` in `headers`.
pub fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|kv| {
            let (k, v) = kv.trim().split_once('=')?;
            (k == name).then(|| v.to_string())
        })
}

fn signin_page(status: StatusCode, message: &str) -> Response<Body> {
    // The message is one of the server's own sentences; escaped anyway.
    let escaped = message
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    body(
        status,
        "text/html; charset=utf-8",
        SIGNIN_HTML.replace("{{message}}", &escaped),
    )
}

impl<G: Gatekeeper> Board<G> {
    /// The board of a server whose gate is `gate`, reading `source`.
    pub fn new(gate: G, source: Source, access: Access) -> Board<G> {
        Board {
            gate,
            source,
            access,
            viewers: Arc::new(Mutex::new(HashMap::new())),
            once: Arc::new(Mutex::new(None)),
            cookie: COOKIE.to_string(),
        }
    }

    /// The board served on `port`: its cookie is `cairn_board_PORT`, since
    /// a browser shares cookies across every port of one host (two boards
    /// on 127.0.0.1 signed each other out; hostile pass).
    pub fn on_port(mut self, port: u16) -> Board<G> {
        self.cookie = format!("{COOKIE}_{port}");
        self
    }

    /// A fresh one-time link path (`/board/open?code=...`) for `cairn
    /// board`; the previous one dies. Errors: no randomness.
    pub fn one_time_path(&self) -> Result<String, String> {
        let code = random_hex()?;
        *lock(&self.once) = Some(code.clone());
        Ok(format!("/board/open?code={code}"))
    }

    fn new_viewer(&self, token: Option<String>) -> Result<String, String> {
        let sid = random_hex()?;
        let mut m = lock(&self.viewers);
        if m.len() >= MAX_SESSIONS {
            let mut ages: Vec<(std::time::Instant, String)> =
                m.iter().map(|(k, v)| (v.since, k.clone())).collect();
            ages.sort();
            for (_, k) in ages.into_iter().take(MAX_SESSIONS / 2) {
                m.remove(&k);
            }
        }
        m.insert(
            sid.clone(),
            Signed {
                token,
                since: std::time::Instant::now(),
            },
        );
        Ok(format!(
            "{}={sid}; HttpOnly; SameSite=Strict; Path=/",
            self.cookie
        ))
    }

    /// Whether these headers may read, or the refusal: `/mcp`'s `401`
    /// for a missing, unknown or revoked token, `403` without `read`.
    fn allowed(&self, headers: &HeaderMap) -> Result<(), Box<Response<Body>>> {
        let viewer =
            cookie(headers, &self.cookie).and_then(|sid| lock(&self.viewers).get(&sid).cloned());
        match self.access {
            Access::Open => Ok(()),
            Access::Link => match viewer {
                Some(_) => Ok(()),
                None => Err(Box::new(text_response(
                    StatusCode::UNAUTHORIZED,
                    "Open the one-time link `cairn board` printed to view this board.",
                ))),
            },
            Access::Tokens => {
                let identity = match (viewer.and_then(|v| v.token), bearer(headers)) {
                    (_, Some(t)) => self.gate.authenticate_token(Some(t)),
                    (Some(hash), None) => self.gate.authenticate_hash(&hash),
                    (None, None) => self.gate.authenticate_token(None),
                }?;
                if identity.grants.contains(&Capability::Read) {
                    Ok(())
                } else {
                    Err(Box::new(text_response(
                        StatusCode::FORBIDDEN,
                        "The board needs a token with the read grant.",
                    )))
                }
            }
        }
    }

    /// Serves one request to a board path. Never fails: every refusal is
    /// a response.
    pub async fn handle(self, req: Request<hyper::body::Incoming>) -> Response<Body> {
        secure(self.route(req).await)
    }

    async fn route(self, req: Request<hyper::body::Incoming>) -> Response<Body> {
        if let Some(r) = self.gate.front_refusal(req.headers()) {
            return r;
        }
        let path = req.uri().path().to_string();
        let query = req.uri().query().map(str::to_string);
        let get = req.method() == http::Method::GET || req.method() == http::Method::HEAD;
        match (path.as_str(), get) {
            ("/board/app.js", true) => {
                body(StatusCode::OK, "text/javascript; charset=utf-8", APP_JS)
            }
            ("/board/app.css", true) => body(StatusCode::OK, "text/css; charset=utf-8", APP_CSS),
            ("/", true) => match self.allowed(req.headers()) {
                Ok(()) => body(StatusCode::OK, "text/html; charset=utf-8", INDEX_HTML),
                Err(_) if self.access == Access::Tokens => signin_page(StatusCode::OK, ""),
                Err(r) => *r,
            },
            ("/board/signin", false) if req.method() == http::Method::POST => {
                self.signin(req).await
            }
            ("/board/open", true) => {
                let code = api::param(query.as_deref(), "code").unwrap_or_default();
                let used = {
                    let mut once = lock(&self.once);
                    match once.as_deref() {
                        Some(c) if !code.is_empty() && c == code => {
                            *once = None;
                            true
                        }
                        _ => false,
                    }
                };
                if !used {
                    return text_response(
                        StatusCode::UNAUTHORIZED,
                        "This link was used already or is not valid; run cairn board again for a new one.",
                    );
                }
                match self.new_viewer(None) {
                    Ok(c) => see_other("/", Some(c)),
                    Err(e) => text_response(StatusCode::INTERNAL_SERVER_ERROR, &e),
                }
            }
            ("/board/signout", false) if req.method() == http::Method::POST => {
                if let Some(sid) = cookie(req.headers(), &self.cookie) {
                    lock(&self.viewers).remove(&sid);
                }
                see_other(
                    "/",
                    Some(format!(
                        "{}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0",
                        self.cookie
                    )),
                )
            }
            ("/board/events", true) => {
                if let Err(r) = self.allowed(req.headers()) {
                    return *r;
                }
                let (me, headers) = (self.clone(), req.headers().clone());
                let viewer = cookie(req.headers(), &self.cookie)
                    .or_else(|| {
                        bearer(req.headers()).map(|t| {
                            use sha2::Digest as _;
                            format!("bearer {}", hex::encode(sha2::Sha256::digest(t.as_bytes())))
                        })
                    })
                    .unwrap_or_default();
                let still = move || me.allowed(&headers).is_ok();
                match sse::stream(&self.source, &viewer, still) {
                    Ok(b) => {
                        let mut r = Response::new(b.boxed());
                        r.headers_mut().insert(
                            header::CONTENT_TYPE,
                            HeaderValue::from_static("text/event-stream"),
                        );
                        r
                    }
                    Err((true, e)) => text_response(StatusCode::TOO_MANY_REQUESTS, &e),
                    Err((false, e)) => text_response(StatusCode::INTERNAL_SERVER_ERROR, &e),
                }
            }
            (p, true) if p.starts_with("/board/api/") => {
                if let Err(r) = self.allowed(req.headers()) {
                    return *r;
                }
                let name = p.trim_start_matches("/board/api/").to_string();
                let src = self.source.clone();
                let answer =
                    tokio::task::spawn_blocking(move || api::answer(&src, &name, query.as_deref()))
                        .await;
                match answer {
                    Ok(Some((status, v))) => body(
                        StatusCode::from_u16(status).unwrap_or(StatusCode::OK),
                        "application/json",
                        serde_json::to_string(&v).unwrap_or_default(),
                    ),
                    Ok(None) => text_response(StatusCode::NOT_FOUND, "No such board endpoint."),
                    Err(_) => text_response(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        "The board could not answer; see the server's log.",
                    ),
                }
            }
            _ if self.access == Access::Link => {
                text_response(StatusCode::NOT_FOUND, NOT_FOUND_BOARD_ONLY)
            }
            _ => text_response(
                StatusCode::NOT_FOUND,
                "Not found; the MCP endpoint is /mcp and the board is at /.",
            ),
        }
    }

    /// `POST /board/signin` with the form field `token`: a live token with
    /// `read` gets a cookie and goes to `/`; anything else gets the sign-in
    /// page again with `/mcp`'s sentence (`401`, or `403` without `read`).
    async fn signin(&self, req: Request<hyper::body::Incoming>) -> Response<Body> {
        if self.access != Access::Tokens {
            return see_other("/", None);
        }
        let limited = http_body_util::Limited::new(req.into_body(), 4096).collect();
        let Ok(Ok(collected)) =
            tokio::time::timeout(std::time::Duration::from_secs(10), limited).await
        else {
            return signin_page(
                StatusCode::BAD_REQUEST,
                "The sign-in form could not be read.",
            );
        };
        let form = String::from_utf8_lossy(&collected.to_bytes()).into_owned();
        let token = api::param(Some(&form), "token").unwrap_or_default();
        let token = token.trim();
        let identity = match self
            .gate
            .authenticate_token(Some(token).filter(|t| !t.is_empty()))
        {
            Ok(i) => i,
            Err(r) => {
                let status = r.status();
                let text = r
                    .into_body()
                    .collect()
                    .await
                    .map(|c| c.to_bytes())
                    .unwrap_or_default();
                return signin_page(status, String::from_utf8_lossy(&text).trim());
            }
        };
        if !identity.grants.contains(&Capability::Read) {
            return signin_page(
                StatusCode::FORBIDDEN,
                "The board needs a token with the read grant.",
            );
        }
        match self.new_viewer(identity.token) {
            Ok(c) => see_other("/", Some(c)),
            Err(e) => signin_page(StatusCode::INTERNAL_SERVER_ERROR, &e),
        }
    }
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
