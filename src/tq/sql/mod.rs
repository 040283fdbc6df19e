//! Plan → ONE SQL statement plus bound parameters (spec/tq.md §2; design in
//! `docs/planner.md`). The only place that spells SQL for queries.
//!
//! Input: the relational IR (`tq::ir`), optimized or not. Shape: `WITH
//! RECURSIVE` and one CTE per IR node that needs one, each a relation
//! `sK(id, ord)`: `id` a `tasks.id` (or a negative reflection-row id), `ord`
//! a rank only where the node's order is [`Order::Rank`] (else 0; a lazy
//! order is the consumer's `ORDER BY`). The final SELECT is the shape,
//! ordered by the root's order. User text only ever reaches the statement as
//! a numbered parameter `?N`; identifiers and the few literals spelled here
//! come from the registry and the closed vocabularies; engine-specific
//! spellings go through [`Dialect`].

mod dialect;
mod expr;
mod reflect;

pub use dialect::{Dialect, SQLITE, Sqlite};

pub use expr::{UNIVERSAL_ABOVE, UNIVERSAL_SHIFT, clock};

use expr::{Row, edge_lit};

use super::ast::{Dir, EdgeType, Field, SetOp, Status, TravDir};
use super::ir::{self, Base, Cond, Ir, Node, Order, Rel, Shape};
use super::plan::{Mutation, PStep, Pipeline};
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

/// Lowers `steps` of pipeline `p` (starting at `start`) and `tail` to one
/// statement, unoptimized (the write path: mutation targets carry ranks).
/// `reflect` must be true when any source of the whole query is reflective
/// (it adds the `refl` relation). Mutation steps inside `steps` pass their
/// input through (the executor splits the pipeline at them). `now` (Unix
/// seconds) is the clock reading claims are judged live against.
pub fn lower(
    p: &Pipeline,
    steps: &[PStep],
    start: &Start,
    tail: &Tail<'_>,
    reflect: bool,
    now: i64,
) -> Statement {
    let start = match start {
        Start::Source => None,
        Start::Carried(json) => Some(json.as_str()),
    };
    lower_ir(&ir::build(p, steps, start, tail.shape(), reflect, now))
}

/// Lowers an IR (optimized or not) to ONE statement through [`SQLITE`].
pub fn lower_ir(ir: &Ir) -> Statement {
    let mut l = Lower {
        params: Vec::new(),
        ctes: Vec::new(),
        n: 0,
        alias: 0,
        reflect: ir.reflect,
        counters: ir.counters,
        now: ir.now,
        status_off_index: false,
        d: &SQLITE,
    };
    if ir.reflect {
        let refl = l.reflection(&ir.kinds);
        l.ctes.push(refl);
    }
    let stage = l.rel(&ir.root);
    let fin = l.tail(&stage, &ir.root.order, &ir.shape);
    let sql = if l.ctes.is_empty() {
        fin
    } else {
        format!("{}\n{}\n{}", l.d.with_recursive(), l.ctes.join(",\n"), fin)
    };
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

/// The statement builder.
pub(crate) struct Lower {
    params: Vec<Param>,
    ctes: Vec<String>,
    n: usize,
    alias: usize,
    reflect: bool,
    /// Count fields read the counter columns (`Ir::counters`).
    counters: bool,
    /// The clock reading claims are judged live against (`Ir::now`).
    now: i64,
    /// Status tests are kept off `tasks_status` (a top-N walks its key's
    /// index instead; see `Node::TopN`).
    status_off_index: bool,
    d: &'static dyn Dialect,
}

/// See `Lower::cte`: how often a stage is materialized (bounds nesting).
const MATERIALIZE_EVERY: usize = 24;

/// `e` as a non-NULL 0/1 on `row`: as is on a task-only row (slug and status
/// are NOT NULL there, and the bare form keeps indexes usable), wrapped in
/// `COALESCE(e, 0)` where the row may be a reflection row.
fn nonnull(row: &Row, e: String) -> String {
    if row.r.is_some() {
        format!("COALESCE({e}, 0)")
    } else {
        e
    }
}

fn status_list(ss: &[Status]) -> String {
    let names: Vec<String> = ss.iter().map(|s| format!("'{}'", s.as_str())).collect();
    names.join(", ")
}

impl Lower {
    /// `{t}`'s claim has not lapsed at `now` and `{t}` is not dormant
    /// (spec/tq.md §9: a claim is live while its lease runs and the task is
    /// not completed or abandoned). A 0/1 (NULL when `claim_until` is NULL).
    pub(crate) fn claim_live(&mut self, t: &str) -> String {
        let now = self.int(self.now);
        format!(
            "{t}.claim_until > {now} AND {t}.status NOT IN ({})",
            status_list(&[Status::Completed, Status::Abandoned])
        )
    }

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
            self.d.materialized()
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

    /// The ORDER BY list delivering `order` over `row` (stage aliased `x`);
    /// `None` for [`Order::Any`].
    fn order_by(&mut self, order: &Order, row: &Row) -> Option<String> {
        self.order_by_id(order, row, "x.id")
    }

    /// [`Lower::order_by`] with `id` as the row's id. Task slugs are unique,
    /// so the id breaks ties only where reflection rows may share a name; a
    /// key that is never NULL on a task row needs no `IS NULL` term (both
    /// keep an index on `(key, slug)` usable).
    fn order_by_id(&mut self, order: &Order, row: &Row, id: &str) -> Option<String> {
        let tie = if row.r.is_some() {
            format!(", {id}")
        } else {
            String::new()
        };
        match order {
            Order::Rank => Some("x.ord".to_string()),
            Order::Slug => Some(format!("{}{tie}", self.field(&Field::Slug, row))),
            Order::Key(f, dir) => {
                let e = self.field(f, row);
                let slug = self.field(&Field::Slug, row);
                let d = match dir {
                    Dir::Asc => "ASC",
                    Dir::Desc => "DESC",
                };
                let never_null = row.r.is_none()
                    && matches!(
                        f,
                        Field::Slug
                            | Field::Status
                            | Field::CreatedTs
                            | Field::UpdatedTs
                            | Field::ObsCount
                            | Field::EdgeCount
                    );
                if never_null {
                    Some(format!("{e} {d}, {slug}{tie}"))
                } else {
                    Some(format!("({e}) IS NULL, ({e}) {d}, {slug}{tie}"))
                }
            }
            Order::Any => None,
        }
    }

    /// Materializes `natural` (the order stage `s` has lazily) as a rank.
    fn rank(&mut self, s: &str, natural: &Order) -> String {
        if *natural == Order::Rank {
            return s.to_string();
        }
        let (row, join) = self.row_join(s);
        let ob = self
            .order_by(natural, &row)
            .unwrap_or_else(|| "x.id".to_string());
        let rn = self.d.row_number(&ob);
        self.cte(format!("SELECT x.id, {rn} {join}"))
    }

    /// A stage delivering `r`'s rows in `r.order` (a rank column only for
    /// [`Order::Rank`]).
    fn rel(&mut self, r: &Rel) -> String {
        let want_rank = r.order == Order::Rank;
        match &r.node {
            Node::Scan { from, conds } => self.scan(from, conds, want_rank),
            Node::Current(slug) => {
                let a = self.text(slug);
                let missing = self.d.missing_current(&a);
                self.cte(format!(
                    "SELECT id, 1 FROM tasks WHERE slug = {a} UNION ALL SELECT {missing}, 1 WHERE NOT EXISTS (SELECT 1 FROM tasks WHERE slug = {a})"
                ))
            }
            Node::Reflect(k) => {
                let ord = if want_rank {
                    self.d.row_number("slug, id")
                } else {
                    "0".to_string()
                };
                self.cte(format!(
                    "SELECT id, {ord} FROM refl WHERE rk = '{}'",
                    k.as_str()
                ))
            }
            Node::Empty => self.cte("SELECT 0, 0 WHERE 0".to_string()),
            Node::Carried(json) => {
                let j = self.text(json);
                let rows = self.d.json_rows(&j);
                let (a, b) = (self.d.json_item(0), self.d.json_item(1));
                self.cte(format!("SELECT {a}, {b} FROM {rows}"))
            }
            Node::Filter(input, c) => {
                let s = self.rel(input);
                let (row, join) = self.row_join(&s);
                let cond = self.cond(c, &row);
                self.cte(format!("SELECT x.id, x.ord {join} WHERE {cond}"))
            }
            Node::SemiJoin { input, other, anti } => {
                let a = self.rel(input);
                let b = self.rel(other);
                let not = if *anti { "NOT " } else { "" };
                let s = self.cte(format!(
                    "SELECT x.id, 0 FROM {a} x WHERE {not}EXISTS (SELECT 1 FROM {b} o WHERE o.id = x.id)"
                ));
                self.ranked_if(s, want_rank, &Order::Slug)
            }
            Node::SetOp(SetOp::OrElse, a, b) => {
                let a = self.rel(a);
                let b = self.rel(b);
                self.cte(format!(
                    "SELECT id, ord FROM {a} UNION ALL SELECT id, ord FROM {b} WHERE NOT EXISTS (SELECT 1 FROM {a})"
                ))
            }
            Node::SetOp(op, a, b) => {
                let a = self.rel(a);
                let b = self.rel(b);
                let compound = match op {
                    SetOp::Union => "UNION",
                    SetOp::Intersect => "INTERSECT",
                    _ => "EXCEPT",
                };
                let s = self.cte(format!(
                    "SELECT id, 0 FROM (SELECT id FROM {a} {compound} SELECT id FROM {b})"
                ));
                self.ranked_if(s, want_rank, &Order::Slug)
            }
            Node::Sort(input, f, dir) => {
                let s = self.rel(input);
                if want_rank {
                    self.rank(&s, &Order::Key(f.clone(), *dir))
                } else {
                    s
                }
            }
            Node::Take(input, n) => {
                let s = self.rel(input);
                let (row, join) = self.row_join(&s);
                let ob = self.order_by(&input.order, &row);
                let n = self.int(*n);
                let limit = self.d.limit(&n);
                match ob {
                    Some(ob) => {
                        self.cte(format!("SELECT x.id, x.ord {join} ORDER BY {ob} {limit}"))
                    }
                    None => self.cte(format!("SELECT x.id, x.ord {join} {limit}")),
                }
            }
            Node::TopN {
                input,
                field,
                dir,
                n,
            } => {
                let key = Order::Key(field.clone(), *dir);
                let s = if let Node::Scan { from, conds } = &input.node {
                    // Straight on the table: an index on the key serves it.
                    // Where one exists (`(key DESC, slug)` for the counters,
                    // the slug's), keep the status test off `tasks_status`
                    // so SQLite walks the key's index and stops after n rows
                    // instead of sorting every task of the status.
                    let indexed_key = match field {
                        Field::ObsCount | Field::EdgeCount => self.counters,
                        Field::Slug => true,
                        _ => false,
                    };
                    // (Only over the table itself: a traversal's input is
                    // lowered inside the scan and keeps its own plan.)
                    self.status_off_index = indexed_key && matches!(from, Base::Tasks);
                    let body = self.scan_body(from, conds, "0");
                    self.status_off_index = false;
                    let ob = self
                        .order_by_id(&key, &Row::task("t"), "t.id")
                        .unwrap_or_default();
                    let n = self.int(*n);
                    let limit = self.d.limit(&n);
                    self.cte(format!("{body} ORDER BY {ob} {limit}"))
                } else {
                    let s = self.rel(input);
                    let (row, join) = self.row_join(&s);
                    let ob = self.order_by(&key, &row).unwrap_or_default();
                    let n = self.int(*n);
                    let limit = self.d.limit(&n);
                    self.cte(format!("SELECT x.id, 0 {join} ORDER BY {ob} {limit}"))
                };
                self.ranked_if(s, want_rank, &key)
            }
            Node::Pass(input) => {
                let s = self.rel(input);
                self.cte(format!("SELECT id, ord FROM {s}"))
            }
        }
    }

    fn ranked_if(&mut self, s: String, want_rank: bool, natural: &Order) -> String {
        if want_rank { self.rank(&s, natural) } else { s }
    }

    /// A scan of `tasks t` over the candidate rows of `from`, filtered by
    /// `conds`; ranked by slug when `want_rank`.
    fn scan(&mut self, from: &Base, conds: &[Cond], want_rank: bool) -> String {
        let ord = if want_rank {
            self.d.row_number("t.slug")
        } else {
            "0".to_string()
        };
        let body = self.scan_body(from, conds, &ord);
        self.cte(body)
    }

    /// `SELECT t.id, {ord} FROM tasks t WHERE ...` for a scan.
    fn scan_body(&mut self, from: &Base, conds: &[Cond], ord: &str) -> String {
        let mut wh: Vec<String> = Vec::new();
        match from {
            Base::Tasks => {}
            Base::Traverse(input, t) => {
                let cur = self.rel(input);
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
                wh.push(format!("t.id IN ({ids})"));
            }
            Base::Closure(input, edges) => {
                let cur = self.rel(input);
                let c = self.closure(&cur, edges);
                wh.push(format!("t.id IN (SELECT id FROM {c})"));
            }
        }
        let row = Row::task("t");
        for c in conds {
            wh.push(self.cond(c, &row));
        }
        let wh = if wh.is_empty() {
            String::new()
        } else {
            format!(" WHERE {}", wh.join(" AND "))
        };
        format!("SELECT t.id, {ord} FROM tasks t{wh}")
    }

    /// `c` on `row` as a non-NULL 0/1 SQL expression (task columns of a
    /// reflection row are NULL: every form below is 0 there, as the
    /// predicate it replaces).
    fn cond(&mut self, c: &Cond, row: &Row) -> String {
        let t = row.t.clone();
        match c {
            Cond::Pred(p) => self.pred(p, row),
            Cond::Live => nonnull(row, self.d.not_reserved(&format!("{t}.slug"))),
            Cond::Status(ss) => {
                let col = format!("{t}.status");
                let col = if self.status_off_index {
                    self.d.no_index(&col)
                } else {
                    col
                };
                nonnull(row, format!("{col} IN ({})", status_list(ss)))
            }
            Cond::Node(s) => {
                let a = self.text(s);
                nonnull(row, self.d.contains_folded(&format!("{t}.slug"), &a))
            }
            Cond::And(cs) => self.conds(cs, " AND ", "1", row),
            Cond::Or(cs) => self.conds(cs, " OR ", "0", row),
            Cond::Not(c) => format!("(NOT {})", self.cond(c, row)),
            Cond::Exists(trav) => self.exists(trav, &t),
            Cond::Linked => format!(
                "({t}.parent_task_id IS NOT NULL OR EXISTS (SELECT 1 FROM tasks lc WHERE lc.parent_task_id = {t}.id) OR EXISTS (SELECT 1 FROM edges le WHERE le.src_id = {t}.id) OR EXISTS (SELECT 1 FROM edges le WHERE le.dst_id = {t}.id))"
            ),
            Cond::HasParent => format!("({t}.parent_task_id IS NOT NULL)"),
            Cond::HeldBy(agent) => {
                let a = self.text(agent);
                let live = self.claim_live(&t);
                // `IS` keeps the term a non-NULL 0/1 (an unclaimed row's
                // owner and until are both NULL: `0 AND NULL` is 0) and
                // lets SQLite read the index `tasks_claim_owner`.
                nonnull(row, format!("({t}.claim_owner IS {a} AND {live})"))
            }
        }
    }

    fn conds(&mut self, cs: &[Cond], op: &str, empty: &str, row: &Row) -> String {
        if cs.is_empty() {
            return empty.to_string();
        }
        let parts: Vec<String> = cs.iter().map(|c| self.cond(c, row)).collect();
        format!("({})", parts.join(op))
    }

    /// At least one task one hop over `trav` from row `t`.
    fn exists(&mut self, trav: &crate::tq::ast::Trav, t: &str) -> String {
        match (trav.edge.class(), trav.dir) {
            (EdgeClass::Structural, TravDir::Follow) => {
                format!("EXISTS (SELECT 1 FROM tasks xc WHERE xc.parent_task_id = {t}.id)")
            }
            (EdgeClass::Structural, TravDir::Back) => format!("({t}.parent_task_id IS NOT NULL)"),
            (EdgeClass::Lateral, TravDir::Follow) => format!(
                "EXISTS (SELECT 1 FROM edges xe WHERE xe.src_id = {t}.id AND xe.type = {})",
                edge_lit(trav.edge)
            ),
            (EdgeClass::Lateral, TravDir::Back) => format!(
                "EXISTS (SELECT 1 FROM edges xe WHERE xe.dst_id = {t}.id AND xe.type = {})",
                edge_lit(trav.edge)
            ),
        }
    }

    /// `(:closure EDGE...)`: a recursive CTE over task ids with `UNION`
    /// (set semantics: terminates on cycles, exact at any depth): every task
    /// reachable in one or more hops from stage `cur`. Returns its name.
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
        name
    }

    fn task_columns(&mut self, row: &Row, enriched: Option<Option<&str>>) -> String {
        let slug = self.field(&Field::Slug, row);
        let display = self.field(&Field::DisplayName, row);
        let t = row.t.clone();
        match enriched {
            Some(cap) => {
                let obs = self.field(&Field::ObsCount, row);
                let edges = self.field(&Field::EdgeCount, row);
                let pairs = self.d.json_pairs("fm.key", "fm.value", "fm.key");
                let meta =
                    format!("(SELECT {pairs} FROM task_metadata fm WHERE fm.task_id = {t}.id)");
                match cap {
                    None => format!("{slug}, {display}, {t}.status, {obs}, {edges}, {meta}"),
                    Some(k) => format!(
                        "{slug}, {display}, {t}.status, CASE WHEN x.ord <= {k} THEN {obs} END, CASE WHEN x.ord <= {k} THEN {edges} END, CASE WHEN x.ord <= {k} THEN {meta} END"
                    ),
                }
            }
            None => format!("{slug}, {display}, {t}.status, NULL, NULL, NULL"),
        }
    }

    fn tail(&mut self, s: &str, order: &Order, shape: &Shape) -> String {
        // Enrichment capped at the first K rows needs the rank it is cut at.
        let (s, order) = match shape {
            Shape::Tasks {
                enriched: true,
                enrich_first: Some(_),
            } => (self.rank(s, order), Order::Rank),
            _ => (s.to_string(), order.clone()),
        };
        let s = s.as_str();
        if matches!(shape, Shape::Count) {
            // No order, and nothing bound for one (an unused parameter is
            // an error).
            return format!("SELECT count(*) FROM {s}");
        }
        let (row, join) = self.row_join(s);
        let ob = match self.order_by(&order, &row) {
            Some(ob) => format!(" ORDER BY {ob}"),
            None => String::new(),
        };
        match shape {
            Shape::Tasks {
                enriched,
                enrich_first,
            } => {
                let cap = enrich_first.map(|k| self.int(k as i64));
                let cols = if *enriched {
                    self.task_columns(&row, Some(cap.as_deref()))
                } else {
                    self.task_columns(&row, None)
                };
                format!("SELECT {cols} {join}{ob}")
            }
            Shape::Ids => {
                let slug = self.field(&Field::Slug, &row);
                format!("SELECT {slug} {join}{ob}")
            }
            Shape::Count => format!("SELECT count(*) FROM {s}"),
            Shape::Select(fields) => {
                let mut cols = vec![self.field(&Field::Slug, &row)];
                for f in fields.iter() {
                    cols.push(self.field(f, &row));
                }
                format!("SELECT {} {join}{ob}", cols.join(", "))
            }
            Shape::GroupBy(f) => {
                let cols = self.task_columns(&row, None);
                let key = self.field(f, &row);
                format!("SELECT {cols}, {key} {join}{ob}")
            }
            Shape::Targets(m) => {
                let t = row.t.clone();
                let current = match m {
                    Mutation::SetStatus(_) => format!("{t}.status"),
                    Mutation::SetMeta { key, .. } => self.field(&Field::Meta(key.clone()), &row),
                    // The live owner (NULL when unclaimed, lapsed or
                    // dormant), the register's stamp second, and whether
                    // the task is dormant (spec/tq.md §9 "Steps").
                    Mutation::Claim { .. } | Mutation::Release { .. } => {
                        let owner = self.field(&Field::ClaimedBy, &row);
                        let dormant = format!(
                            "{t}.status IN ({})",
                            status_list(&[Status::Completed, Status::Abandoned])
                        );
                        self.d.array(&[&owner, &format!("{t}.claim_ts"), &dormant])
                    }
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
                let live = self.d.not_reserved(&format!("{t}.slug"));
                format!(
                    "SELECT x.id, x.ord, ({t}.id IS NOT NULL AND {live}), {t}.slug, {current} {join}{ob}"
                )
            }
        }
    }
}
