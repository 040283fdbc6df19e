//! `cairn serve --http --route-id NAME` (issue 24; docs/team.md "Sticky
//! sessions"): session ids that say which server holds the session, so a
//! load balancer without "learn" stickiness (Caddy, open-source nginx) can
//! route a 2025-11-25 session's requests by a prefix of `Mcp-Session-Id`.
//!
//! The server sends `NAME.ID` where rmcp made `ID`, and takes `NAME.ID`
//! back as `ID` before the gate and rmcp see the request; an id with
//! another prefix (a request routed to the wrong server) is passed on as
//! it is, and rmcp answers it `404` (unknown session: the client opens a
//! new one, as Streamable HTTP says). Without `--route-id` ids are
//! rmcp's own.

use http::{HeaderValue, Request, Response};

/// The session header.
const HEADER: &str = "mcp-session-id";

/// The longest `--route-id`, in characters.
pub const MAX_ROUTE_ID: usize = 32;

/// Checks a `--route-id` value: 1 to [`MAX_ROUTE_ID`] ASCII letters,
/// digits, `-` or `_`. Errors: a sentence naming the rule.
pub fn check_route_id(id: &str) -> Result<(), String> {
    let ok = !id.is_empty()
        && id.len() <= MAX_ROUTE_ID
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "--route-id takes 1 to {MAX_ROUTE_ID} ASCII letters, digits, - or _ (it prefixes session ids)."
        ))
    }
}

/// Takes `route.` off the request's `Mcp-Session-Id`, when it has it.
pub fn untag<B>(req: &mut Request<B>, route: &str) {
    let Some(raw) = req
        .headers()
        .get(HEADER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix(route))
        .and_then(|v| v.strip_prefix('.'))
        .and_then(|v| HeaderValue::from_str(v).ok())
    else {
        return;
    };
    req.headers_mut().insert(HEADER, raw);
}

/// Puts `route.` before the response's `Mcp-Session-Id`, when it has one.
pub fn tag<B>(resp: &mut Response<B>, route: &str) {
    let Some(tagged) = resp
        .headers()
        .get(HEADER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| HeaderValue::from_str(&format!("{route}.{v}")).ok())
    else {
        return;
    };
    resp.headers_mut().insert(HEADER, tagged);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_carry_the_route_both_ways() {
        assert!(check_route_id("a").is_ok());
        assert!(check_route_id("east-1_b").is_ok());
        assert!(check_route_id("").is_err());
        assert!(check_route_id("a.b").is_err());
        assert!(check_route_id(&"x".repeat(33)).is_err());
        let mut resp = Response::new(());
        resp.headers_mut()
            .insert(HEADER, HeaderValue::from_static("0f3c"));
        tag(&mut resp, "a");
        assert_eq!(resp.headers()[HEADER], "a.0f3c");
        let mut req = Request::new(());
        req.headers_mut()
            .insert(HEADER, HeaderValue::from_static("a.0f3c"));
        untag(&mut req, "a");
        assert_eq!(req.headers()[HEADER], "0f3c");
        // Another server's id, or an untagged one, is left for rmcp's 404.
        let mut req = Request::new(());
        req.headers_mut()
            .insert(HEADER, HeaderValue::from_static("b.0f3c"));
        untag(&mut req, "a");
        assert_eq!(req.headers()[HEADER], "b.0f3c");
        let mut req = Request::new(());
        req.headers_mut()
            .insert(HEADER, HeaderValue::from_static("ab.0f3c"));
        untag(&mut req, "a");
        assert_eq!(req.headers()[HEADER], "ab.0f3c");
    }
}
