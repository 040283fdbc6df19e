//! The PostgreSQL dialect (issue 21; spec/team.md "The same on both
//! engines"): the spellings that give PostgreSQL's answers byte-identical to
//! SQLite's.
//!
//! Where PostgreSQL is strict and SQLite loose:
//! - predicates are booleans (`TRUE`/`FALSE`, not 1/0); a predicate needed as
//!   a number is `(e)::int`;
//! - parameters are `$N` with an explicit type (`$N::bigint`, `$N::float8`,
//!   `$N::text`) so a comparison never guesses;
//! - text sort keys are `COLLATE "C"` (byte order, as SQLite's BINARY);
//! - JSON is built with `json_build_array`/`json_agg` and read with
//!   `jsonb_array_elements`;
//! - a recursive CTE names itself once (the closure's steps are one arm);
//! - no rowid: reflection ids of metadata keys and user views are 60-bit
//!   hashes of their names (stable across a write query's statements);
//! - `tq_fold` and `tq_missing_current` are SQL functions of the project's
//!   schema (`store/pg/schema.rs`, `store/pg/case_fold.rs`).

use super::{Dialect, FOLD_FN, MISSING_CURRENT_FN, Param};

/// PostgreSQL 12+ (`MATERIALIZED`, window functions, `jsonb`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Postgres;

impl Dialect for Postgres {
    fn with_recursive(&self) -> &'static str {
        "WITH RECURSIVE"
    }

    fn materialized(&self) -> &'static str {
        "MATERIALIZED "
    }

    fn row_number(&self, order_by: &str) -> String {
        format!("ROW_NUMBER() OVER (ORDER BY {order_by})")
    }

    fn limit(&self, n: &str) -> String {
        format!("LIMIT {n}")
    }

    fn plan_blind(&self, p: &str) -> String {
        p.to_string()
    }

    fn counter_zero_inline(&self) -> bool {
        true
    }

    fn bounded_join(&self) -> &'static str {
        "JOIN"
    }

    fn json_rows(&self, p: &str) -> String {
        format!("jsonb_array_elements(({p})::jsonb) j")
    }

    fn json_item(&self, i: usize) -> String {
        format!("(j.value->>{i})::bigint")
    }

    fn json_pairs(&self, key: &str, value: &str, order_by: &str) -> String {
        format!("(json_agg(json_build_array({key}, {value}) ORDER BY {order_by}))::text")
    }

    fn array(&self, items: &[&str]) -> String {
        format!("(json_build_array({}))::text", items.join(", "))
    }

    fn contains_folded(&self, hay: &str, needle: &str) -> String {
        // The needle folded once (an InitPlan when it is a parameter, as it
        // is in a generic plan), not once per row.
        format!("strpos({FOLD_FN}({hay}), (SELECT {FOLD_FN}({needle}))) > 0")
    }

    fn not_reserved(&self, slug: &str) -> String {
        format!("substr({slug}, 1, 1) <> '@'")
    }

    fn missing_current(&self, slug: &str) -> String {
        format!("{MISSING_CURRENT_FN}({slug})")
    }

    /// PostgreSQL picks its indexes itself; the column as is.
    fn no_index(&self, col: &str) -> String {
        col.to_string()
    }

    fn placeholder(&self, n: usize, p: &Param) -> String {
        let ty = match p {
            Param::Int(_) => "bigint",
            Param::Real(_) => "float8",
            Param::Text(_) => "text",
        };
        format!("${n}::{ty}")
    }

    fn truth(&self, b: bool) -> &'static str {
        if b { "TRUE" } else { "FALSE" }
    }

    fn bool_int(&self, e: &str) -> String {
        format!("(({e})::int)")
    }

    fn same(&self, a: &str, b: &str) -> String {
        format!("{a} IS NOT DISTINCT FROM {b}")
    }

    fn subquery_alias(&self) -> &'static str {
        " u"
    }

    fn null_text(&self) -> &'static str {
        "CAST(NULL AS text)"
    }

    fn sort_text(&self, e: &str) -> String {
        format!("({e}) COLLATE \"C\"")
    }

    /// PostgreSQL has no rowid: a 60-bit hash of the key, stable across the
    /// statements of one write query (a carried reflection row keeps its
    /// id when a step adds a key), placed below the user views' ids so ties
    /// between kinds order as on SQLite (metadata keys first). Two keys
    /// share an id with probability about n²/2⁶¹.
    fn meta_key_ordinal(&self) -> &'static str {
        "(1152921504606846976 + (hashtextextended(key, 0) & 1152921504606846975))"
    }

    /// A 60-bit hash of the name (as [`Postgres::meta_key_ordinal`]),
    /// between the metadata keys' ids and the built-in views'.
    fn view_ordinal(&self) -> &'static str {
        "((hashtextextended(name, 0) & 1152921504606846975) + 2000000000)"
    }

    fn multi_recursive_arms(&self) -> bool {
        false
    }

    fn counter_prefilter(&self) -> bool {
        false
    }

    /// `IS TRUE` instead of `COALESCE(e, FALSE)` (the same truth value): the
    /// planner estimates `(e) IS TRUE` with `e`'s own selectivity and a
    /// `COALESCE` with a default guess. With the guess, claim-one's
    /// `(NOT COALESCE(t.status = 'blocked', FALSE))` and its `NOT EXISTS`
    /// probes looked selective enough that PostgreSQL ranked every ready
    /// task instead of walking the slug index to the first (11 ms vs 0.19
    /// ms at 10k tasks; docs/performance.md "PostgreSQL (issue 21)").
    /// `task_search`'s PostgreSQL query: the sanitised expression's terms
    /// as a `tsquery` over cairn's own tokens (`store::pg::search`).
    fn search_query(&self, text: &str) -> Option<String> {
        use crate::store::pg::search::{terms, tsquery_of};
        let expr = crate::store::search::sanitize(text)?;
        tsquery_of(&terms(&expr))
    }

    /// The GIN indexes on `observations.tsv` and `task_texts.tsv` (names,
    /// descriptions), relevance `ts_rank`, the best per task.
    fn search_hits(&self, q: &str) -> String {
        let tq = format!("({q})::tsquery");
        format!(
            "SELECT s.task_id, max(s.rel) FROM (SELECT o.task_id AS task_id, {} AS rel FROM observations o WHERE o.tsv @@ {tq} UNION ALL SELECT x.task_id, {} FROM task_texts x WHERE x.tsv @@ {tq}) s GROUP BY s.task_id",
            crate::store::pg::search::rank_expr("o.tsv", &tq),
            crate::store::pg::search::rank_expr("x.tsv", &tq)
        )
    }

    fn null_real(&self) -> &'static str {
        "CAST(NULL AS float8)"
    }

    fn null_false(&self, e: &str) -> String {
        format!("(({e}) IS TRUE)")
    }
}

/// The PostgreSQL dialect.
pub static POSTGRES: Postgres = Postgres;
