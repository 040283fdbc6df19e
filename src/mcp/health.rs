//! `GET /healthz` of `cairn serve --http` (issue 24; docs/team.md "Health
//! checks"), for load balancers: no token, no data. `200` with `ok` when
//! the store's database answers ([`crate::store::health::Probe`]), `503`
//! with a sentence when it does not (within [`HEALTH_LIMIT`]) or when the
//! server is stopping ([`super::drain`]). Only `GET` and `HEAD`; the
//! `Host` allow list does not apply (a balancer names the backend by its
//! address, and the answer holds nothing a page could steal).

use std::sync::Arc;
use std::time::Duration;

use http::{Method, Response, StatusCode};

use super::drain::DRAIN;
use super::http_gate::{Body, text_response};
use crate::store::health::Probe;

/// The path of the health check.
pub const HEALTH_PATH: &str = "/healthz";

/// The longest a health check waits for the database.
pub const HEALTH_LIMIT: Duration = Duration::from_secs(5);

/// The body of a `503` when the database does not answer.
pub const DOWN: &str = "The database does not answer; see the server's log.";

/// The answer to one request for [`HEALTH_PATH`] with `method`.
pub async fn answer(probe: &Arc<Probe>, method: &Method) -> Response<Body> {
    if method != Method::GET && method != Method::HEAD {
        let mut r = text_response(
            StatusCode::METHOD_NOT_ALLOWED,
            "Only GET and HEAD are served at /healthz.",
        );
        r.headers_mut().insert(
            http::header::ALLOW,
            http::HeaderValue::from_static("GET, HEAD"),
        );
        return r;
    }
    if DRAIN.stopping() {
        return super::http::stopping_response();
    }
    let p = probe.clone();
    let job = tokio::task::spawn_blocking(move || p.check());
    let verdict = match tokio::time::timeout(HEALTH_LIMIT, job).await {
        Ok(Ok(Ok(()))) => Ok(()),
        Ok(Ok(Err(e))) => Err(e.to_string()),
        Ok(Err(_)) => Err("the check failed".to_string()),
        Err(_) => Err(format!("no answer within {} s", HEALTH_LIMIT.as_secs())),
    };
    let mut r = match verdict {
        Ok(()) => text_response(StatusCode::OK, "ok"),
        Err(why) => {
            tracing::warn!(why = %why, "health check: the database does not answer");
            text_response(StatusCode::SERVICE_UNAVAILABLE, DOWN)
        }
    };
    r.headers_mut().insert(
        http::header::CACHE_CONTROL,
        http::HeaderValue::from_static("no-store"),
    );
    r
}
