//! Ranked full-text search over observations (seed 000 `task_search`,
//! spec/mcp.md "Decisions beyond the seed"): the FTS5 sanitiser and the
//! BM25-ranked query with snippets.

use rusqlite::{Connection, params};

use crate::store::StoreError;

/// The words FTS5 reads as operators when bare.
const RESERVED: [&str; 4] = ["AND", "OR", "NOT", "NEAR"];

/// The BM25 ranking of an `obs_fts` match (lower is better), the same in
/// `task_search` and TQ's `(search …)` (spec/tq.md §10): FTS5's `rank`
/// column (`bm25` unless the table's `rank` option says otherwise; unlike
/// a call of `bm25()`, usable under an aggregate).
pub const BM25: &str = "obs_fts.rank";

/// One ranked match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchHit {
    /// The slug of the task the observation is on.
    pub slug: String,
    /// The observation's time, Unix seconds UTC.
    pub ts: i64,
    /// The snippet: up to 12 tokens around the match, matches in `[`brackets`]`,
    /// elisions as `…`.
    pub snippet: String,
}

/// Turns free text into an FTS5 MATCH expression that searches literally.
///
/// Tokens are split on whitespace and control characters (C0, DEL, C1 —
/// FTS5 would stop reading at a NUL) and joined with implicit AND. A trailing
/// `*` stays a prefix query. A token that is a plain bareword (letters,
/// digits, `_`, non-ASCII) and not one of `AND OR NOT NEAR` (any case) is kept
/// bare; every other token is phrase-quoted with `"` doubled inside. A token
/// without any letter or digit is dropped. `None` when nothing usable remains
/// (the caller prints the no-match line).
pub fn sanitize(query: &str) -> Option<String> {
    let mut parts = Vec::new();
    for token in query
        .split(|c: char| c.is_whitespace() || c.is_control())
        .filter(|t| !t.is_empty())
    {
        let core = token.trim_end_matches('*');
        let prefix = core.len() != token.len();
        if !core.chars().any(char::is_alphanumeric) {
            continue;
        }
        let bare = core
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || !c.is_ascii())
            && !RESERVED.iter().any(|r| r.eq_ignore_ascii_case(core));
        let mut part = if bare {
            core.to_string()
        } else {
            format!("\"{}\"", core.replace('"', "\"\""))
        };
        if prefix {
            part.push('*');
        }
        parts.push(part);
    }
    if parts.is_empty() {
        None
    } else {
        Some(parts.join(" "))
    }
}

/// Runs the sanitised MATCH expression `expr`, best BM25 rank first (ties:
/// newest observation first), at most `limit` hits, optionally only on task
/// `task` (bare slug). Errors: [`StoreError::Sqlite`] (an expression FTS5
/// cannot parse is reported as such; [`sanitize`] never produces one).
pub fn search(
    conn: &Connection,
    expr: &str,
    task: Option<&str>,
    limit: usize,
) -> Result<Vec<SearchHit>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT t.slug, o.ts, snippet(obs_fts, 0, '[', ']', '…', 12)
         FROM obs_fts
         JOIN observations o ON o.obs_id = obs_fts.rowid
         JOIN tasks t ON t.id = o.task_id
         WHERE obs_fts MATCH ?1 AND (?2 IS NULL OR t.slug = ?2)
         ORDER BY obs_fts.rank, o.ts DESC, o.obs_id DESC
         LIMIT ?3",
    )?;
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let rows = stmt
        .query_map(params![expr, task, limit], |r| {
            Ok(SearchHit {
                slug: r.get(0)?,
                ts: r.get(1)?,
                snippet: r.get(2)?,
            })
        })?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::sanitize;

    #[test]
    fn sanitiser_quotes_everything_but_barewords() {
        assert_eq!(sanitize("prefix query*").as_deref(), Some("prefix query*"));
        assert_eq!(
            sanitize("tools.lisp:45-78 depends-on").as_deref(),
            Some("\"tools.lisp:45-78\" \"depends-on\"")
        );
        assert_eq!(sanitize("OR and").as_deref(), Some("\"OR\" \"and\""));
        assert_eq!(sanitize("it's").as_deref(), Some("\"it's\""));
        assert_eq!(sanitize("say\"hi\"").as_deref(), Some("\"say\"\"hi\"\"\""));
        assert_eq!(sanitize("C++ @x").as_deref(), Some("\"C++\" \"@x\""));
        assert_eq!(sanitize("depends-on*").as_deref(), Some("\"depends-on\"*"));
        assert_eq!(sanitize("  \" ? * "), None);
        assert_eq!(sanitize("café").as_deref(), Some("café"));
        assert_eq!(sanitize("bm25\u{0}").as_deref(), Some("bm25"));
        assert_eq!(sanitize("ranking x\u{0}y").as_deref(), Some("ranking x y"));
        assert_eq!(sanitize("a\u{7f}b\u{85}c").as_deref(), Some("a b c"));
        assert_eq!(sanitize("\u{0}\u{1b}"), None);
    }
}
