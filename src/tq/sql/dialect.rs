//! The dialect seam (COMPILER.md "Dialect seam"; docs/planner.md): every
//! engine-specific spelling the lowering needs goes through [`Dialect`].
//! Only [`Sqlite`] exists; a second implementation (PostgreSQL) would add
//! its own spellings here and nothing else in `sql/` changes.

use super::{FOLD_FN, MISSING_CURRENT_FN};

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
}

/// SQLite (3.35+: `MATERIALIZED`, window functions, JSON1); the registered
/// functions `tq_fold` and `tq_missing_current` come from `exec.rs`.
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
        format!("LIMIT {n}")
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
        format!("instr({FOLD_FN}({hay}), {FOLD_FN}({needle})) > 0")
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
}

/// The one dialect in use.
pub static SQLITE: Sqlite = Sqlite;
