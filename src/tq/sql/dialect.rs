//! The dialect seam (COMPILER.md "Dialect seam"; docs/planner.md): every
//! engine-specific spelling the lowering needs goes through [`Dialect`].
//! [`Sqlite`] is the default; [`super::Postgres`] (`postgres.rs`) is the
//! second implementation (issue 21, spec/team.md "The same on both
//! engines").

use super::{CONTAINS_FN, MISSING_CURRENT_FN, Param};

/// Engine-specific SQL spellings. Arguments are SQL expressions or `?N`
/// placeholders already built by the lowering (never user text).
pub trait Dialect: Sync {
    /// The statement prefix that allows recursive CTEs.
    fn with_recursive(&self) -> &'static str;
    /// A hint that a CTE is computed once (`MATERIALIZED `, with its space),
    /// or `""`.
    fn materialized(&self) -> &'static str;
    /// A 1-based rank over `order_by` (a comma-separated ORDER BY list).
    fn row_number(&self, order_by: &str) -> String;
    /// `LIMIT n` for an integer expression `n`.
    fn limit(&self, n: &str) -> String;
    /// Bound value `p` spelled so the engine's planner does not read it:
    /// SQLite re-prepares a statement on every run when a bound value may
    /// change its plan (a `LIMIT ?`, a comparison with an indexed generated
    /// column such as `edge_count`: measured, `sqlite3_stmt_status(…,
    /// REPREPARE)` counts one per run), so those are `+?N` there (the same
    /// value; the index is still used). PostgreSQL: `p`.
    fn plan_blind(&self, p: &str) -> String;
    /// A counter column (`NOT NULL`, indexed) compared with the literal 0,
    /// spelled with `0` in the text rather than a bound parameter: an
    /// emptiness test whose text the value cannot vary (only the literal 0
    /// takes this form). PostgreSQL runs a read's generic plan, which
    /// guesses `edge_count = $1` matches 1/n_distinct of the tasks and
    /// sorts a bitmap scan (`orphans`); with `= 0` it reads the column's
    /// statistics and walks the counter index in slug order, as the hand
    /// SQL does. SQLite plans without values either way: `false` (the
    /// parameter, [`Dialect::plan_blind`]).
    fn counter_zero_inline(&self) -> bool;
    /// The join of a stage that holds at most a `LIMIT`'s rows to `tasks`
    /// (`FROM sK x {join} tasks t ON …`): SQLite `CROSS JOIN`, which keeps
    /// the stage the outer loop (its planner cannot read a `LIMIT +?N`, see
    /// [`Dialect::plan_blind`], and otherwise may walk every task in the
    /// final order probing the stage: measured, claim-one at 100k tasks
    /// 1.5 → 6 ms); PostgreSQL `JOIN` (it estimates a `LIMIT $n`).
    fn bounded_join(&self) -> &'static str;
    /// Rows `(value)` of a JSON array held in parameter `p`, as a FROM item
    /// aliased `j`; [`Dialect::json_item`] reads element `i` of one.
    fn json_rows(&self, p: &str) -> String;
    /// Element `i` (integer) of the current JSON row `j`, as an integer.
    fn json_item(&self, i: usize) -> String;
    /// A JSON array of `[key, value]` pairs aggregated in `order_by` order.
    fn json_pairs(&self, key: &str, value: &str, order_by: &str) -> String;
    /// A JSON array of the SQL values `items`, in order (text).
    fn array(&self, items: &[&str]) -> String;
    /// `hay` contains `needle` after Unicode case folding (0/1, NULL on NULL).
    fn contains_folded(&self, hay: &str, needle: &str) -> String;
    /// The slug `slug` is not a reserved `@` task (0/1).
    fn not_reserved(&self, slug: &str) -> String;
    /// Raises the missing-current-task query error for `slug` when evaluated.
    fn missing_current(&self, slug: &str) -> String;
    /// Column `col` spelled so the engine does not use it to pick an index
    /// (the same value).
    fn no_index(&self, col: &str) -> String;
    /// The placeholder of the `n`-th (1-based) bound parameter `p`.
    fn placeholder(&self, n: usize, p: &Param) -> String;
    /// The truth value `b` as a predicate constant.
    fn truth(&self, b: bool) -> &'static str;
    /// The predicate `e` as an integer 0/1 (NULL on NULL), where a number is
    /// needed (counts, flags a reader takes as integers).
    fn bool_int(&self, e: &str) -> String;
    /// `a` equals `b`, NULL equal to NULL (a non-NULL 0/1).
    fn same(&self, a: &str, b: &str) -> String;
    /// The alias a subquery in FROM needs (with its leading space), or `""`.
    fn subquery_alias(&self) -> &'static str;
    /// A NULL of type text (a field no row has).
    fn null_text(&self) -> &'static str;
    /// The text expression `e` as a sort key in byte order.
    fn sort_text(&self, e: &str) -> String;
    /// `k` in a metadata key's reflection id `-(4000000000 + k)`, in
    /// `SELECT ... FROM task_metadata ... GROUP BY key`: distinct per key
    /// and stable while a write query adds keys.
    fn meta_key_ordinal(&self) -> &'static str;
    /// `k` in a user view's reflection id `-(2000000000 + k)`, in `SELECT
    /// ... FROM named_views`: distinct per view, stable while a write query
    /// defines views, and above every metadata key's id.
    fn view_ordinal(&self) -> &'static str;
    /// True when a recursive CTE may name itself in more than one arm
    /// (SQLite); false when it must name itself once, in the last arm
    /// (PostgreSQL).
    fn multi_recursive_arms(&self) -> bool;
    /// True when a one-hop test over lateral edges is pre-filtered by the
    /// row's maintained counter (`t.lateral_out = 0 OR NOT EXISTS (…)`;
    /// issue 23): SQLite evaluates the `OR` left to right and skips the
    /// probe. PostgreSQL: false — the `OR` would keep its planner from
    /// turning `NOT EXISTS` into an anti-join.
    fn counter_prefilter(&self) -> bool;
    /// The predicate `e` with NULL read as false (a non-NULL truth value).
    fn null_false(&self, e: &str) -> String;
    /// The index query `(search "text")` binds for the raw `text`
    /// (spec/tq.md §10: `task_search`'s sanitiser, `store::search::sanitize`,
    /// then this engine's spelling); `None` when nothing usable remains
    /// (the search matches no task).
    fn search_query(&self, text: &str) -> Option<String>;
    /// The body of a search's hit relation `(id, rel)`: each task whose
    /// name and description, or one of whose observations (handoffs
    /// included), match the bound index query `q` (a placeholder), with
    /// its relevance, the best of those matches' (a real, higher is
    /// better); one row per task.
    fn search_hits(&self, q: &str) -> String;
    /// A NULL real (`:relevance` in a query without a search).
    fn null_real(&self) -> &'static str;
}

/// SQLite (3.35+: `MATERIALIZED`, window functions, JSON1); the registered
/// functions `tq_fold`, `tq_contains` and `tq_missing_current` come from
/// `exec.rs`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Sqlite;

impl Dialect for Sqlite {
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
        format!("LIMIT {}", self.plan_blind(n))
    }

    fn plan_blind(&self, p: &str) -> String {
        format!("+{p}")
    }

    fn counter_zero_inline(&self) -> bool {
        false
    }

    fn bounded_join(&self) -> &'static str {
        "CROSS JOIN"
    }

    fn json_rows(&self, p: &str) -> String {
        format!("json_each({p}) j")
    }

    fn json_item(&self, i: usize) -> String {
        format!("CAST(json_extract(j.value, '$[{i}]') AS INTEGER)")
    }

    fn json_pairs(&self, key: &str, value: &str, order_by: &str) -> String {
        format!("json_group_array(json_array({key}, {value}) ORDER BY {order_by})")
    }

    fn array(&self, items: &[&str]) -> String {
        format!("json_array({})", items.join(", "))
    }

    fn contains_folded(&self, hay: &str, needle: &str) -> String {
        format!("{CONTAINS_FN}({hay}, {needle})")
    }

    fn not_reserved(&self, slug: &str) -> String {
        format!("substr({slug}, 1, 1) <> '@'")
    }

    fn missing_current(&self, slug: &str) -> String {
        format!("{MISSING_CURRENT_FN}({slug})")
    }

    /// SQLite's unary `+` (its documented way to keep a term off an index).
    fn no_index(&self, col: &str) -> String {
        format!("+{col}")
    }

    fn placeholder(&self, n: usize, _p: &Param) -> String {
        format!("?{n}")
    }

    fn truth(&self, b: bool) -> &'static str {
        if b { "1" } else { "0" }
    }

    fn bool_int(&self, e: &str) -> String {
        e.to_string()
    }

    fn same(&self, a: &str, b: &str) -> String {
        format!("{a} IS {b}")
    }

    fn subquery_alias(&self) -> &'static str {
        ""
    }

    fn null_text(&self) -> &'static str {
        "NULL"
    }

    fn sort_text(&self, e: &str) -> String {
        e.to_string()
    }

    /// The key's first rowid (stable while a query adds keys).
    fn meta_key_ordinal(&self) -> &'static str {
        "min(rowid)"
    }

    fn view_ordinal(&self) -> &'static str {
        "rowid"
    }

    fn multi_recursive_arms(&self) -> bool {
        true
    }

    fn counter_prefilter(&self) -> bool {
        true
    }

    fn search_query(&self, text: &str) -> Option<String> {
        crate::store::search::sanitize(text)
    }

    /// FTS5's MATCH on `obs_fts` (observations, handoffs) and on
    /// `task_fts` (names, descriptions), relevance the negated `bm25` (the
    /// same weights as `task_search`'s ranking), the best per task.
    fn search_hits(&self, q: &str) -> String {
        format!(
            "SELECT s.task_id, max(s.rel) FROM (SELECT o.task_id AS task_id, -{} AS rel FROM obs_fts JOIN observations o ON o.obs_id = obs_fts.rowid WHERE obs_fts MATCH {q} UNION ALL SELECT task_fts.rowid, -{} FROM task_fts WHERE task_fts MATCH {q}) s GROUP BY s.task_id",
            crate::store::search::BM25,
            crate::store::search::TASK_BM25
        )
    }

    fn null_real(&self) -> &'static str {
        "CAST(NULL AS REAL)"
    }

    fn null_false(&self, e: &str) -> String {
        format!("COALESCE({e}, 0)")
    }
}

/// The one dialect in use.
pub static SQLITE: Sqlite = Sqlite;
