//! The statement types of the SQL stage (spec/tq.md §2): a bound
//! [`Param`], one [`Statement`], where a segment starts ([`Start`]), what
//! the final SELECT returns ([`Tail`]), and the fixed statements the
//! executor runs beside compiled queries (the catalog, the counter probe,
//! slug and view look-ups, `EXPLAIN QUERY PLAN`).

use crate::tq::ast::Field;
use crate::tq::ir::Shape;
use crate::tq::plan::Mutation;

/// A bound parameter value.
#[derive(Debug, Clone, PartialEq)]
pub enum Param {
    /// An integer.
    Int(i64),
    /// A real number.
    Real(f64),
    /// Text (always user or registry text).
    Text(String),
}

impl std::fmt::Display for Param {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Param::Int(i) => write!(f, "{i}"),
            Param::Real(r) => write!(f, "{r}"),
            Param::Text(s) => write!(f, "{s:?}"),
        }
    }
}

/// One SQL statement and its parameters; `?N` in `sql` is `params[N-1]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Statement {
    /// The SQL text.
    pub sql: String,
    /// The bound values, in `?N` order.
    pub params: Vec<Param>,
}

/// Where a segment's first set comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum Start {
    /// The pipeline's own source.
    Source,
    /// A set carried over a mutation step: JSON `[[id, ord], ...]`, bound as
    /// one parameter and read with `json_each`.
    Carried(String),
}

/// What the final SELECT returns; column layouts are fixed per variant.
#[derive(Debug, Clone, PartialEq)]
pub enum Tail<'a> {
    /// Task lines: `slug, display, status, obs, edges, meta` (`obs`, `edges`,
    /// `meta` NULL unless `enriched`; `meta` a JSON array of `[key, value]`
    /// sorted by key).
    Tasks {
        /// Attach counts and metadata.
        enriched: bool,
    },
    /// `slug`.
    Ids,
    /// `count`.
    Count,
    /// `slug`, then one column per field.
    Select(&'a [Field]),
    /// The task-line columns, then the key.
    GroupBy(&'a Field),
    /// Mutation targets: `id, ord, live, slug, current` where `live` is 1 for
    /// a real non-reserved task and `current` is the value the mutation
    /// compares against (status; metadata value; 1/0 edge presence).
    Targets(&'a Mutation),
}

impl Tail<'_> {
    /// The IR shape of this tail.
    pub fn shape(&self) -> Shape {
        match self {
            Tail::Tasks { enriched } => Shape::Tasks {
                enriched: *enriched,
                enrich_first: None,
            },
            Tail::Ids => Shape::Ids,
            Tail::Count => Shape::Count,
            Tail::Select(fs) => Shape::Select(fs.to_vec()),
            Tail::GroupBy(f) => Shape::GroupBy((*f).clone()),
            Tail::Targets(m) => Shape::Targets((*m).clone()),
        }
    }
}

/// The statement that reads the catalog the planner needs, in one go:
/// rows `('k', key, NULL)` for each live metadata key and `('v', name, query)`
/// for each user view.
pub fn catalog() -> Statement {
    Statement {
        sql: "SELECT 'k', key, NULL FROM (SELECT DISTINCT key FROM task_metadata) UNION ALL SELECT 'v', name, query FROM named_views".to_string(),
        params: Vec::new(),
    }
}

/// How many of the four counter columns `tasks` has (4 on schema 2; see
/// `exec::has_counter_columns`).
pub fn counter_columns_probe() -> Statement {
    Statement {
        sql: "SELECT count(*) FROM pragma_table_info('tasks') WHERE name IN ('obs_count', 'child_count', 'lateral_out', 'lateral_in')".to_string(),
        params: Vec::new(),
    }
}

/// `SELECT id FROM tasks WHERE slug = ?1` (mutation targets, write path).
pub fn task_id(slug: &str) -> Statement {
    Statement {
        sql: "SELECT id FROM tasks WHERE slug = ?1".to_string(),
        params: vec![Param::Text(slug.to_string())],
    }
}

/// `SELECT query FROM named_views WHERE name = ?1` (define!/undefine!, write path).
pub fn user_view_text(name: &str) -> Statement {
    Statement {
        sql: "SELECT query FROM named_views WHERE name = ?1".to_string(),
        params: vec![Param::Text(name.to_string())],
    }
}

/// `EXPLAIN QUERY PLAN` of `st` (same parameters); rows are
/// `(id, parent, notused, detail)`.
pub fn explain_query_plan(st: &Statement) -> Statement {
    Statement {
        sql: format!("EXPLAIN QUERY PLAN {}", st.sql),
        params: st.params.clone(),
    }
}

/// The name of the SQL function the `(current)` source calls when the
/// current task is gone from the store; the executor registers it.
pub const MISSING_CURRENT_FN: &str = "tq_missing_current";

/// The name of the deterministic SQL function that case-folds text for
/// `(node ...)` and `(matches ...)` (Unicode lower case, unlike SQLite's
/// ASCII-only `lower()`); the executor registers it (`exec::fold`).
pub const FOLD_FN: &str = "tq_fold";

/// The SQLite function `tq_contains(hay, needle)`: 0/1, whether the case
/// fold of `hay` contains the case fold of `needle` (NULL on a NULL
/// `hay`); registered by `tq::exec::register_functions`.
pub const CONTAINS_FN: &str = "tq_contains";
