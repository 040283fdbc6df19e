//! Ranked full-text search (seed 000 `task_search`, spec/mcp.md
//! "Decisions beyond the seed", spec/tq.md §10): the FTS5 sanitiser and
//! the BM25-ranked query with snippets, over observations (handoffs
//! included) and the tasks' own names and descriptions (schema version 5).

use rusqlite::{Connection, params};

use crate::store::StoreError;

/// The words FTS5 reads as operators when bare.
const RESERVED: [&str; 4] = ["AND", "OR", "NOT", "NEAR"];

/// The BM25 ranking of an `obs_fts` match (lower is better), the same in
/// `task_search` and TQ's `(search …)` (spec/tq.md §10): FTS5's `rank`
/// column (`bm25` unless the table's `rank` option says otherwise; unlike
/// a call of `bm25()`, usable under an aggregate).
pub const BM25: &str = "obs_fts.rank";

/// The BM25 ranking of a `task_fts` match (a task's name and description;
/// lower is better), as [`BM25`].
pub const TASK_BM25: &str = "task_fts.rank";

/// One ranked match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchHit {
    /// The slug of the task the matching text belongs to.
    pub slug: String,
    /// The matching text's time, Unix seconds UTC: the observation's, or
    /// for a task's own text the event that set the text shown.
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

/// Runs the sanitised MATCH expression `expr` over every searchable text
/// (spec/tq.md §10): each matching observation (handoffs included: a
/// handoff folds to the observation `Handoff: SUMMARY → PATH`) is one hit,
/// and a task whose own name and description match is one hit when none
/// of its observations matches (`task_fts`, `store::texts`; the set of
/// tasks is the same either way, and the seed's rows stay exact). Best BM25 rank first (ties: newest
/// first), at most `limit` hits, optionally only on task `task` (bare
/// slug). An observation's snippet is FTS5's; a task text's is
/// [`crate::store::texts::hit_snippet`] (the name or the description)
/// and its time that text's. Errors: [`StoreError::Sqlite`] (an
/// expression FTS5 cannot parse is reported as such; [`sanitize`] never
/// produces one).
pub fn search(
    conn: &Connection,
    expr: &str,
    task: Option<&str>,
    limit: usize,
) -> Result<Vec<SearchHit>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "WITH oh AS (
             SELECT o.task_id AS task_id, t.slug AS slug, o.ts AS ts,
                    snippet(obs_fts, 0, '[', ']', '…', 12) AS snip,
                    obs_fts.rank AS r, o.obs_id AS k
             FROM obs_fts
             JOIN observations o ON o.obs_id = obs_fts.rowid
             JOIN tasks t ON t.id = o.task_id
             WHERE obs_fts MATCH ?1 AND (?2 IS NULL OR t.slug = ?2)
         )
         SELECT slug, ts, snip, name, description, name_ts, description_ts FROM (
             SELECT slug, ts, snip, NULL AS name, NULL AS description, NULL AS name_ts,
                    NULL AS description_ts, r, k
             FROM oh
             UNION ALL
             SELECT t.slug, coalesce(x.description_ts, x.name_ts), NULL, x.name, x.description,
                    x.name_ts, x.description_ts, task_fts.rank, -x.task_id
             FROM task_fts
             JOIN task_texts x ON x.task_id = task_fts.rowid
             JOIN tasks t ON t.id = x.task_id
             WHERE task_fts MATCH ?1 AND (?2 IS NULL OR t.slug = ?2)
               AND x.task_id NOT IN (SELECT task_id FROM oh)
         )
         ORDER BY r, ts DESC, k DESC
         LIMIT ?3",
    )?;
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let terms = crate::store::pg::search::terms(expr);
    let rows = stmt
        .query_map(params![expr, task, limit], |r| {
            let slug: String = r.get(0)?;
            if let Some(snippet) = r.get::<_, Option<String>>(2)? {
                return Ok(SearchHit {
                    slug,
                    ts: r.get(1)?,
                    snippet,
                });
            }
            let name: Option<String> = r.get(3)?;
            let description: Option<String> = r.get(4)?;
            let (field, snippet) =
                crate::store::texts::hit_snippet(name.as_deref(), description.as_deref(), &terms);
            let ts: Option<i64> = match field {
                crate::store::texts::Field::Name => r.get(5)?,
                crate::store::texts::Field::Description => r.get(6)?,
            };
            Ok(SearchHit {
                slug,
                ts: ts.unwrap_or(0),
                snippet,
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
