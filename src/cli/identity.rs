//! The CLI's agent identity (spec/tq.md §9 "Agent identity"): `--as NAME`,
//! else `CAIRN_AGENT`, else `USER@HOST`. Every session a `cairn` process
//! opens carries it, so `(:claim! S)`, `(:release!)` and `(mine)` in
//! `cairn query --write` or the REPL act for that name.

use std::sync::OnceLock;

use crate::session::Session;

/// The environment variable naming the CLI's agent when `--as` is absent.
pub const AGENT_ENV: &str = "CAIRN_AGENT";

/// The longest agent name, in characters.
pub const MAX_AGENT_CHARS: usize = 64;

static FLAG: OnceLock<String> = OnceLock::new();

/// Checks an agent name: 1 to 64 characters after trimming, no control
/// characters. Returns the trimmed name. Errors: the sentence `an agent name
/// needs 1 to 64 characters and no control characters.`
pub fn parse_agent(s: &str) -> Result<String, String> {
    let t = s.trim();
    if t.is_empty() || t.chars().count() > MAX_AGENT_CHARS || t.chars().any(char::is_control) {
        return Err("an agent name needs 1 to 64 characters and no control characters.".into());
    }
    Ok(t.to_string())
}

/// Records `--as NAME` for this process (first call wins).
pub fn set_flag(name: Option<&str>) {
    if let Some(n) = name {
        let _ = FLAG.set(n.to_string());
    }
}

/// `--as NAME`, when given.
pub fn flag() -> Option<String> {
    FLAG.get().cloned()
}

/// `CAIRN_AGENT` as set: `None` when unset or empty (`CAIRN_AGENT=` counts
/// as unset, issue 27), else its raw value.
fn env_raw() -> Option<std::ffi::OsString> {
    std::env::var_os(AGENT_ENV).filter(|v| !v.is_empty())
}

/// The agent `CAIRN_AGENT` names, when it is set, not empty and a valid
/// name (checked by [`check_env`] before any command runs).
pub fn env_agent() -> Option<String> {
    env_raw()
        .and_then(|v| v.into_string().ok())
        .and_then(|v| parse_agent(&v).ok())
}

/// Checks `CAIRN_AGENT` when it is set (not empty) and `--as` is not: the error
/// sentence `CAIRN_AGENT: an agent name needs 1 to 64 characters and no
/// control characters.` (so a bad name never falls back to `USER@HOST`).
pub fn check_env() -> Result<(), String> {
    if FLAG.get().is_some() {
        return Ok(());
    }
    match env_raw() {
        None => Ok(()),
        Some(v) => match v.to_str() {
            Some(s) => parse_agent(s)
                .map(|_| ())
                .map_err(|e| format!("{AGENT_ENV}: {e}")),
            None => Err(format!(
                "{AGENT_ENV}: an agent name needs 1 to 64 characters and no control characters."
            )),
        },
    }
}

/// The agent name: `--as`, else `CAIRN_AGENT` (checked by [`check_env`]
/// before any command runs; empty counts as unset), else `USER@HOST`
/// (`USER` or `LOGNAME`, else `user`; the host from `HOSTNAME` or
/// `/etc/hostname`, else `localhost`).
pub fn agent() -> String {
    if let Some(n) = FLAG.get() {
        return n.clone();
    }
    if let Some(n) = env_agent() {
        return n;
    }
    let user = ["USER", "LOGNAME"]
        .iter()
        .find_map(|k| std::env::var(k).ok().filter(|v| !v.trim().is_empty()))
        .unwrap_or_else(|| "user".to_string());
    let host = std::env::var("HOSTNAME")
        .ok()
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".to_string());
    parse_agent(&format!("{}@{}", user.trim(), host)).unwrap_or_else(|_| "user@localhost".into())
}

/// A fresh CLI session (every grant) acting as [`agent`].
pub fn session() -> Session {
    let mut s = Session::new();
    s.agent = Some(agent());
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_names_are_checked() {
        assert_eq!(parse_agent("  ana  ").as_deref(), Ok("ana"));
        let refusal = "an agent name needs 1 to 64 characters and no control characters.";
        assert_eq!(parse_agent(" ").unwrap_err(), refusal);
        assert_eq!(parse_agent("a\u{7}b").unwrap_err(), refusal);
        assert_eq!(parse_agent(&"x".repeat(65)).unwrap_err(), refusal);
        assert!(parse_agent(&"é".repeat(64)).is_ok());
    }
}
