//! Plan → ONE SQL statement plus bound parameters (spec/tq.md §2; design in
//! `docs/planner.md`). The only place that spells SQL for queries.
//!
//! Shape: `WITH RECURSIVE` and one CTE per step, each stage a relation
//! `sK(id, ord)`: `id` a `tasks.id` (or a negative reflection-row id), `ord`
//! the rank that carries the order rules of §2. The final SELECT is the
//! shaper (or the task lines) ordered by `ord`. User text only ever reaches
//! the statement as a numbered parameter `?N`; identifiers and the few
//! literals spelled here come from the registry and the closed vocabularies.

mod expr;
mod reflect;

pub use expr::{UNIVERSAL_ABOVE, UNIVERSAL_SHIFT, clock};

use expr::{Row, edge_lit};

use super::ast::{Dir, EdgeType, Field, SetOp, TravDir};
use super::plan::{Mutation, PSource, PStep, Pipeline, ReflKind};
use crate::store::model::EdgeClass;

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

/// Lowers `steps` of pipeline `p` (starting at `start`) and `tail` to one
/// statement. `reflect` must be true when any source of the whole query is
/// reflective (it adds the `refl` relation). Mutation steps inside `steps`
/// pass their input through (the executor splits the pipeline at them).
pub fn lower(
    p: &Pipeline,
    steps: &[PStep],
    start: &Start,
    tail: &Tail<'_>,
    reflect: bool,
) -> Statement {
    let mut l = Lower {
        params: Vec::new(),
        ctes: Vec::new(),
        n: 0,
        alias: 0,
        reflect,
    };
    if reflect {
        let mut kinds = Vec::new();
        collect_kinds(p, &mut kinds);
        kinds.sort();
        kinds.dedup();
        let refl = l.reflection(&kinds);
        l.ctes.push(refl);
    }
    let stage = l.pipeline(p, steps, start);
    let fin = l.tail(&stage, tail);
    let sql = format!("WITH RECURSIVE\n{}\n{}", l.ctes.join(",\n"), fin);
    Statement {
        sql,
        params: l.params,
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

fn collect_kinds(p: &Pipeline, out: &mut Vec<ReflKind>) {
    match &p.source {
        PSource::Reflect(k) => out.push(*k),
        PSource::View(v) => collect_kinds(v, out),
        _ => {}
    }
    for s in &p.steps {
        if let PStep::SetOp(_, sub) = s {
            collect_kinds(sub, out);
        }
    }
}

/// The statement builder.
pub(crate) struct Lower {
    params: Vec<Param>,
    ctes: Vec<String>,
    n: usize,
    alias: usize,
    reflect: bool,
}

/// See `Lower::cte`: how often a stage is materialized (bounds nesting).
const MATERIALIZE_EVERY: usize = 24;

const NOT_RESERVED: &str = "substr(slug, 1, 1) <> '@'";

impl Lower {
    /// Binds text, returns `?N`.
    pub(crate) fn text(&mut self, s: &str) -> String {
        self.bind(Param::Text(s.to_string()))
    }

    /// Binds an integer, returns `?N`.
    pub(crate) fn int(&mut self, i: i64) -> String {
        self.bind(Param::Int(i))
    }

    /// Binds a number (as an integer when it is one), returns `?N`.
    pub(crate) fn num(&mut self, n: f64) -> String {
        if n.fract() == 0.0 && n.abs() < 9.0e15 {
            self.bind(Param::Int(n as i64))
        } else {
            self.bind(Param::Real(n))
        }
    }

    fn bind(&mut self, p: Param) -> String {
        self.params.push(p);
        format!("?{}", self.params.len())
    }

    fn cte(&mut self, body: String) -> String {
        self.n += 1;
        let name = format!("s{}", self.n);
        // SQLite inlines a CTE used once into its user; a long pipeline
        // would nest past SQLite's subquery depth limit. Every
        // MATERIALIZE_EVERY-th stage is materialized to bound the nesting.
        let hint = if self.n.is_multiple_of(MATERIALIZE_EVERY) {
            "MATERIALIZED "
        } else {
            ""
        };
        self.ctes.push(format!("{name}(id, ord) AS {hint}({body})"));
        name
    }

    /// The row aliases and join for stage `s` aliased `x`.
    fn row_join(&self, s: &str) -> (Row, String) {
        if self.reflect {
            (
                Row {
                    t: "t".into(),
                    r: Some("r".into()),
                },
                format!(
                    "FROM {s} x LEFT JOIN tasks t ON t.id = x.id LEFT JOIN refl r ON r.id = x.id"
                ),
            )
        } else {
            (
                Row::task("t"),
                format!("FROM {s} x JOIN tasks t ON t.id = x.id"),
            )
        }
    }

    /// Ranks a set of ids (`ids` selects one column) by slug, then id.
    fn ranked(&mut self, ids: String, tasks_only: bool) -> String {
        if tasks_only || !self.reflect {
            self.cte(format!(
                "SELECT t.id, ROW_NUMBER() OVER (ORDER BY t.slug) FROM tasks t WHERE t.id IN ({ids})"
            ))
        } else {
            self.cte(format!(
                "SELECT u.id, ROW_NUMBER() OVER (ORDER BY COALESCE(t.slug, r.slug), u.id) FROM ({ids}) u LEFT JOIN tasks t ON t.id = u.id LEFT JOIN refl r ON r.id = u.id"
            ))
        }
    }

    fn pipeline(&mut self, p: &Pipeline, steps: &[PStep], start: &Start) -> String {
        let mut cur = match start {
            Start::Source => self.source(&p.source),
            Start::Carried(json) => {
                let j = self.text(json);
                self.cte(format!(
                    "SELECT CAST(json_extract(j.value, '$[0]') AS INTEGER), CAST(json_extract(j.value, '$[1]') AS INTEGER) FROM json_each({j}) j"
                ))
            }
        };
        for s in steps {
            cur = self.step(&cur, s);
        }
        cur
    }

    fn source(&mut self, s: &PSource) -> String {
        match s {
            PSource::All => self.cte(format!(
                "SELECT id, ROW_NUMBER() OVER (ORDER BY slug) FROM tasks WHERE {NOT_RESERVED}"
            )),
            PSource::Active => self.cte(format!(
                "SELECT id, ROW_NUMBER() OVER (ORDER BY slug) FROM tasks WHERE status IN ('open', 'active', 'blocked') AND {NOT_RESERVED}"
            )),
            PSource::Dormant => self.cte(format!(
                "SELECT id, ROW_NUMBER() OVER (ORDER BY slug) FROM tasks WHERE status IN ('completed', 'abandoned') AND {NOT_RESERVED}"
            )),
            PSource::Current(slug) => {
                let a = self.text(slug);
                self.cte(format!(
                    "SELECT id, 1 FROM tasks WHERE slug = {a} UNION ALL SELECT {MISSING_CURRENT_FN}({a}), 1 WHERE NOT EXISTS (SELECT 1 FROM tasks WHERE slug = {a})"
                ))
            }
            PSource::Node(sub) => {
                let a = self.text(sub);
                self.cte(format!(
                    "SELECT id, ROW_NUMBER() OVER (ORDER BY slug) FROM tasks WHERE instr({FOLD_FN}(slug), {FOLD_FN}({a})) > 0"
                ))
            }
            PSource::Reflect(k) => self.cte(format!(
                "SELECT id, ROW_NUMBER() OVER (ORDER BY slug, id) FROM refl WHERE rk = '{}'",
                k.as_str()
            )),
            PSource::View(v) => self.pipeline(v, &v.steps, &Start::Source),
            PSource::Empty => self.cte("SELECT 0, 0 WHERE 0".to_string()),
        }
    }

    fn step(&mut self, cur: &str, s: &PStep) -> String {
        match s {
            PStep::Traverse(t) => {
                let ids = match (t.edge.class(), t.dir) {
                    (EdgeClass::Structural, TravDir::Follow) => {
                        format!("SELECT c.id FROM {cur} x JOIN tasks c ON c.parent_task_id = x.id")
                    }
                    (EdgeClass::Structural, TravDir::Back) => format!(
                        "SELECT c.parent_task_id FROM {cur} x JOIN tasks c ON c.id = x.id WHERE c.parent_task_id IS NOT NULL"
                    ),
                    (EdgeClass::Lateral, TravDir::Follow) => format!(
                        "SELECT e.dst_id FROM {cur} x JOIN edges e ON e.src_id = x.id AND e.type = {}",
                        edge_lit(t.edge)
                    ),
                    (EdgeClass::Lateral, TravDir::Back) => format!(
                        "SELECT e.src_id FROM {cur} x JOIN edges e ON e.dst_id = x.id AND e.type = {}",
                        edge_lit(t.edge)
                    ),
                };
                self.ranked(ids, true)
            }
            PStep::Where(p) => {
                let (row, join) = self.row_join(cur);
                let cond = self.pred(p, &row);
                self.cte(format!("SELECT x.id, x.ord {join} WHERE {cond}"))
            }
            PStep::Sort(f, dir) => {
                let (row, join) = self.row_join(cur);
                let e = self.field(f, &row);
                let slug = self.field(&Field::Slug, &row);
                let d = match dir {
                    Dir::Asc => "ASC",
                    Dir::Desc => "DESC",
                };
                self.cte(format!(
                    "SELECT x.id, ROW_NUMBER() OVER (ORDER BY ({e}) IS NULL, ({e}) {d}, {slug}, x.id) {join}"
                ))
            }
            PStep::Take(n) => {
                let n = self.int(*n);
                self.cte(format!("SELECT id, ord FROM {cur} ORDER BY ord LIMIT {n}"))
            }
            PStep::SetOp(op, sub) => {
                let q = self.pipeline(sub, &sub.steps, &Start::Source);
                let compound = match op {
                    SetOp::Union => "UNION",
                    SetOp::Intersect => "INTERSECT",
                    SetOp::Minus => "EXCEPT",
                    SetOp::OrElse => {
                        return self.cte(format!(
                            "SELECT id, ord FROM {cur} UNION ALL SELECT id, ord FROM {q} WHERE NOT EXISTS (SELECT 1 FROM {cur})"
                        ));
                    }
                };
                self.ranked(
                    format!("SELECT id FROM {cur} {compound} SELECT id FROM {q}"),
                    false,
                )
            }
            PStep::Closure(edges) => self.closure(cur, edges),
            PStep::Mutate(_) => self.cte(format!("SELECT id, ord FROM {cur}")),
        }
    }

    /// `(:closure EDGE...)`: a recursive CTE over task ids with `UNION`
    /// (set semantics: terminates on cycles, exact at any depth). The result
    /// is every task reachable in one or more hops from the input set.
    fn closure(&mut self, cur: &str, edges: &[EdgeType]) -> String {
        self.n += 1;
        let name = format!("c{}", self.n);
        let structural = edges.iter().any(|e| e.class() == EdgeClass::Structural);
        let mut lateral: Vec<String> = edges
            .iter()
            .filter(|e| e.class() == EdgeClass::Lateral)
            .map(|e| edge_lit(*e))
            .collect();
        lateral.sort();
        lateral.dedup();
        let mut arms = Vec::new();
        for from in [cur, name.as_str()] {
            if structural {
                arms.push(format!(
                    "SELECT c.id FROM {from} y JOIN tasks c ON c.parent_task_id = y.id"
                ));
            }
            if !lateral.is_empty() {
                arms.push(format!(
                    "SELECT e.dst_id FROM {from} y JOIN edges e ON e.src_id = y.id AND e.type IN ({})",
                    lateral.join(", ")
                ));
            }
        }
        self.ctes
            .push(format!("{name}(id) AS ({})", arms.join(" UNION ")));
        self.ranked(format!("SELECT id FROM {name}"), true)
    }

    fn task_columns(&mut self, row: &Row, enriched: bool) -> String {
        let slug = self.field(&Field::Slug, row);
        let display = self.field(&Field::DisplayName, row);
        let t = &row.t;
        if enriched {
            let obs = self.field(&Field::ObsCount, row);
            let edges = self.field(&Field::EdgeCount, row);
            format!(
                "{slug}, {display}, {t}.status, {obs}, {edges}, (SELECT json_group_array(json_array(fm.key, fm.value) ORDER BY fm.key) FROM task_metadata fm WHERE fm.task_id = {t}.id)"
            )
        } else {
            format!("{slug}, {display}, {t}.status, NULL, NULL, NULL")
        }
    }

    fn tail(&mut self, s: &str, tail: &Tail<'_>) -> String {
        let (row, join) = self.row_join(s);
        match tail {
            Tail::Tasks { enriched } => {
                let cols = self.task_columns(&row, *enriched);
                format!("SELECT {cols} {join} ORDER BY x.ord")
            }
            Tail::Ids => {
                let slug = self.field(&Field::Slug, &row);
                format!("SELECT {slug} {join} ORDER BY x.ord")
            }
            Tail::Count => format!("SELECT count(*) FROM {s}"),
            Tail::Select(fields) => {
                let mut cols = vec![self.field(&Field::Slug, &row)];
                for f in fields.iter() {
                    cols.push(self.field(f, &row));
                }
                format!("SELECT {} {join} ORDER BY x.ord", cols.join(", "))
            }
            Tail::GroupBy(f) => {
                let cols = self.task_columns(&row, false);
                let key = self.field(f, &row);
                format!("SELECT {cols}, {key} {join} ORDER BY x.ord")
            }
            Tail::Targets(m) => {
                let t = &row.t;
                let current = match m {
                    Mutation::SetStatus(_) => format!("{t}.status"),
                    Mutation::SetMeta { key, .. } => self.field(&Field::Meta(key.clone()), &row),
                    Mutation::Link { edge, target } | Mutation::Unlink { edge, target } => {
                        let tgt = self.text(target);
                        match edge.class() {
                            EdgeClass::Structural => format!(
                                "COALESCE({t}.parent_task_id = (SELECT g.id FROM tasks g WHERE g.slug = {tgt}), 0)"
                            ),
                            EdgeClass::Lateral => format!(
                                "EXISTS (SELECT 1 FROM edges ge WHERE ge.src_id = {t}.id AND ge.type = {} AND ge.dst_id = (SELECT g.id FROM tasks g WHERE g.slug = {tgt}))",
                                edge_lit(*edge)
                            ),
                        }
                    }
                };
                let join = if self.reflect {
                    format!("FROM {s} x LEFT JOIN tasks t ON t.id = x.id")
                } else {
                    join
                };
                format!(
                    "SELECT x.id, x.ord, ({t}.id IS NOT NULL AND substr({t}.slug, 1, 1) <> '@'), {t}.slug, {current} {join} ORDER BY x.ord"
                )
            }
        }
    }
}
