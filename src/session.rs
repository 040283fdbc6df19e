//! The per-connection session (spec/store.md "The current task pointer",
//! seed 002 for capabilities): who is writing, which task is current, and
//! which capabilities this server was granted. Held in memory, never in the
//! graph.

use std::collections::BTreeSet;
use std::fmt;

/// One of the three capabilities that gate the MCP tools (seed 002).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Capability {
    /// The five read tools.
    Read,
    /// The eight write tools.
    Write,
    /// `observe`.
    Observe,
}

impl Capability {
    /// All three, in the order `--grant` lists them.
    pub const ALL: [Capability; 3] = [Capability::Read, Capability::Observe, Capability::Write];

    /// `read`, `write` or `observe`.
    pub fn as_str(self) -> &'static str {
        match self {
            Capability::Read => "read",
            Capability::Write => "write",
            Capability::Observe => "observe",
        }
    }

    /// Parses `read`, `write` or `observe` (case-insensitive, surrounding
    /// space ignored). `None` for anything else.
    pub fn parse(s: &str) -> Option<Capability> {
        let s = s.trim().to_ascii_lowercase();
        Capability::ALL.into_iter().find(|c| c.as_str() == s)
    }
}

impl fmt::Display for Capability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Parses a `--grant` list such as `read,observe`.
///
/// Errors: `unknown capability "X"; expected read, observe or write.` for any
/// item that is not a capability, and `--grant needs at least one capability.`
/// when the list is empty.
pub fn parse_grants(list: &str) -> Result<BTreeSet<Capability>, String> {
    let mut out = BTreeSet::new();
    for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match Capability::parse(item) {
            Some(c) => {
                out.insert(c);
            }
            None => {
                return Err(format!(
                    "unknown capability \"{item}\"; expected read, observe or write."
                ));
            }
        }
    }
    if out.is_empty() {
        return Err("--grant needs at least one capability.".to_string());
    }
    Ok(out)
}

/// A connection's session: its id (written into every event it records), the
/// current task pointer, and the granted capabilities.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// The session id: a ULID minted when the session starts.
    pub id: String,
    /// The current task's slug, if one is selected.
    pub current: Option<String>,
    /// The capabilities this session may use.
    pub grants: BTreeSet<Capability>,
    /// The agent identity (spec/tq.md §9 "Agent identity"), when the
    /// transport names one: over HTTP the token's name, `/` and
    /// [`Session::short_id`] (`reviewer/7f3a`); over MCP stdio the client's
    /// `clientInfo.name` cleaned by [`client_agent_name`] (`claude-code/7f3a`), set
    /// at `initialize`. `None` elsewhere.
    pub agent: Option<String>,
}

impl Session {
    /// A new session with a fresh ULID id, no current task, and every
    /// capability granted.
    pub fn new() -> Session {
        Session::with_grants(Capability::ALL.into_iter().collect())
    }

    /// A new session with a fresh ULID id, no current task and `grants`.
    pub fn with_grants(grants: BTreeSet<Capability>) -> Session {
        Session {
            id: ulid::Ulid::new().to_string(),
            current: None,
            grants,
            agent: None,
        }
    }

    /// The last four characters of the session id, lowercased: the short
    /// session id of an agent identity (`7f3a`).
    pub fn short_id(&self) -> String {
        let n = self.id.len();
        self.id[n.saturating_sub(4)..].to_ascii_lowercase()
    }

    /// True when `cap` was granted.
    pub fn allows(&self, cap: Capability) -> bool {
        self.grants.contains(&cap)
    }

    /// `task_create`'s rule: adopt `slug` as current only when none is set.
    /// The pointer is stored bare: a depot prefix `name:` is stripped
    /// (spec/store.md "Slugs and names"), so `(current)` finds the task.
    pub fn adopt_if_none(&mut self, slug: &str) {
        if self.current.is_none() {
            self.current = Some(crate::store::slug::strip_depot(slug.trim()).to_string());
        }
    }

    /// `task_fork`'s and an explicit `task_bootstrap`'s rule: switch to
    /// `slug`, stored bare (depot prefix stripped).
    pub fn switch_to(&mut self, slug: &str) {
        self.current = Some(crate::store::slug::strip_depot(slug.trim()).to_string());
    }
}

/// At most this many characters of a client's name are kept in an agent
/// identity ([`client_agent_name`]).
pub const AGENT_NAME_CHARS: usize = 64;

/// The agent identity of a session whose client calls itself `client`
/// (spec/tq.md §9 "Agent identity"): the name cleaned — control characters
/// and `/` dropped, surrounding white space trimmed, cut to
/// [`AGENT_NAME_CHARS`] characters (`agent` when nothing is left) — then
/// `/` and `short` (a [`Session::short_id`]): `claude-code/7f3a`.
pub fn client_agent_name(client: &str, short: &str) -> String {
    let kept: String = client
        .chars()
        .filter(|c| !c.is_control() && *c != '/')
        .collect();
    let cut: String = kept.trim().chars().take(AGENT_NAME_CHARS).collect();
    let name = cut.trim_end();
    let name = if name.is_empty() { "agent" } else { name };
    format!("{name}/{short}")
}

impl Default for Session {
    fn default() -> Self {
        Session::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_session_has_all_grants_and_no_current() {
        let s = Session::new();
        assert_eq!(s.id.len(), 26);
        assert_eq!(s.current, None);
        assert_eq!(s.grants.len(), 3);
        assert!(s.allows(Capability::Read));
        assert!(s.allows(Capability::Write));
        assert!(s.allows(Capability::Observe));
    }

    #[test]
    fn two_sessions_have_distinct_ids() {
        assert_ne!(Session::new().id, Session::new().id);
    }

    #[test]
    fn adopt_only_when_none_switch_always() {
        let mut s = Session::new();
        s.adopt_if_none("a");
        assert_eq!(s.current.as_deref(), Some("a"));
        s.adopt_if_none("b");
        assert_eq!(s.current.as_deref(), Some("a"));
        s.switch_to("c");
        assert_eq!(s.current.as_deref(), Some("c"));
    }

    #[test]
    fn agent_names_are_cleaned_and_capped() {
        assert_eq!(client_agent_name("claude-code", "7f3a"), "claude-code/7f3a");
        assert_eq!(client_agent_name("  my agent \t", "0000"), "my agent/0000");
        assert_eq!(
            client_agent_name("evil/na\u{7}me\n", "ab12"),
            "evilname/ab12"
        );
        assert_eq!(client_agent_name("", "ab12"), "agent/ab12");
        assert_eq!(client_agent_name(" / \u{1b} ", "ab12"), "agent/ab12");
        let long = "é".repeat(70);
        assert_eq!(
            client_agent_name(&long, "ab12"),
            format!("{}/ab12", "é".repeat(64))
        );
        // Cut at 64, then the trailing space the cut left is trimmed.
        let spaced = format!("{} {}", "a".repeat(63), "b".repeat(10));
        assert_eq!(
            client_agent_name(&spaced, "ab12"),
            format!("{}/ab12", "a".repeat(63))
        );
        let s = Session::new();
        let named = client_agent_name("claude-code", &s.short_id());
        assert_eq!(named.len(), "claude-code/".len() + 4);
        assert!(named.ends_with(&s.id[22..].to_ascii_lowercase()));
    }

    #[test]
    fn grants_parse_and_refuse() {
        let g = parse_grants("read, Observe").unwrap();
        assert_eq!(
            g.into_iter().collect::<Vec<_>>(),
            vec![Capability::Read, Capability::Observe]
        );
        assert_eq!(
            parse_grants("read,admin").unwrap_err(),
            "unknown capability \"admin\"; expected read, observe or write."
        );
        assert_eq!(
            parse_grants(" , ").unwrap_err(),
            "--grant needs at least one capability."
        );
        let s = Session::with_grants(parse_grants("read").unwrap());
        assert!(s.allows(Capability::Read));
        assert!(!s.allows(Capability::Write));
    }
}
