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
//!
//! Rooms: `statement` (the statement types and the fixed statements), this
//! file (the builder: parameters, CTE stages, orders, ranks), `rel` (one
//! stage per IR node), `cond` (conditions, edge tests, closure), `expr`
//! (fields and predicates over one row), `reflect` (the reflection
//! relation), `tail` (the final SELECT), `dialect` (engine spellings).

mod cond;
mod dialect;
mod expr;
mod postgres;
mod reflect;
mod rel;
mod statement;
mod tail;

pub use dialect::{Dialect, SQLITE, Sqlite};
pub use postgres::{POSTGRES, Postgres};
pub use statement::{
    CONTAINS_FN, FOLD_FN, MISSING_CURRENT_FN, Param, Start, Statement, Tail, catalog,
    counter_columns_probe, explain_query_plan, task_id, user_view_text,
};

pub use expr::{UNIVERSAL_ABOVE, UNIVERSAL_SHIFT, clock};

use expr::Row;

use super::ast::{Dir, Field, Status};
use super::ir::{self, Ir, Order};
use super::plan::{PStep, Pipeline};

/// Lowers `steps` of pipeline `p` (starting at `start`) and `tail` to one
/// statement, unoptimized (the naive lowering; the write path optimizes its
/// segments first, `tq::mutate`).
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
    lower_ir_with(ir, &SQLITE)
}

/// Lowers an IR (optimized or not) to ONE statement through dialect `d`
/// ([`SQLITE`] or [`POSTGRES`]); placeholders are `d`'s.
pub fn lower_ir_with(ir: &Ir, d: &'static dyn Dialect) -> Statement {
    lower_ir_clocked(ir, d).0
}

/// [`lower_ir_with`], plus the indexes into `params` of every parameter
/// bound to the clock reading [`Ir::now`] (empty when the statement does not
/// read the clock): a cached statement is re-run at another instant by
/// rebinding exactly those (`tq::cache`).
pub fn lower_ir_clocked(ir: &Ir, d: &'static dyn Dialect) -> (Statement, Vec<usize>) {
    let mut l = Lower {
        params: Vec::new(),
        ctes: Vec::new(),
        n: 0,
        alias: 0,
        reflect: ir.reflect,
        counters: ir.counters,
        now: ir.now,
        status_off_index: false,
        searches: Vec::new(),
        now_slots: Vec::new(),
        bounded: Vec::new(),
        d,
    };
    if ir.reflect {
        let refl = l.reflection(&ir.kinds);
        l.ctes.push(refl);
    }
    for text in ir.root.searches() {
        l.search_hits(text);
    }
    let fin = match l.fused_root(&ir.root, &ir.shape) {
        Some(fin) => fin,
        None => {
            let stage = l.rel(&ir.root);
            l.tail(&stage, &ir.root.order, &ir.shape)
        }
    };
    let sql = if l.ctes.is_empty() {
        fin
    } else {
        format!("{}\n{}\n{}", l.d.with_recursive(), l.ctes.join(",\n"), fin)
    };
    (
        Statement {
            sql,
            params: l.params,
        },
        l.now_slots,
    )
}

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
    /// The hit relation of each `(search …)` text: `(text, CTE name)`, in
    /// reading order (the first is the one `:relevance` reads).
    searches: Vec<(String, String)>,
    /// Indexes into `params` of the clock reading's bindings.
    now_slots: Vec<usize>,
    /// The stages that hold at most a `LIMIT`'s rows (a take, a top-n, a
    /// rank of one): joined to `tasks` through [`Dialect::bounded_join`].
    bounded: Vec<String>,
    d: &'static dyn Dialect,
}

/// See `Lower::cte`: how often a stage is materialized (bounds nesting).
const MATERIALIZE_EVERY: usize = 24;

/// `e` as a non-NULL 0/1 on `row`: as is on a task-only row (slug and status
/// are NOT NULL there, and the bare form keeps indexes usable), wrapped in
/// `COALESCE(e, 0)` (the dialect's false) where the row may be a reflection
/// row.
fn nonnull(d: &dyn Dialect, row: &Row, e: String) -> String {
    if row.r.is_some() {
        format!("COALESCE({e}, {})", d.truth(false))
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
        self.now_slots.push(self.params.len() - 1);
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

    /// The dialect's false (a predicate constant).
    pub(crate) fn no(&self) -> &'static str {
        self.d.truth(false)
    }

    fn bind(&mut self, p: Param) -> String {
        let ph = self.d.placeholder(self.params.len() + 1, &p);
        self.params.push(p);
        ph
    }

    /// Adds the hit relation `hK(id, rel)` of search `text` (spec/tq.md
    /// §10): the dialect's index join with the query bound as a parameter,
    /// or no rows when the text sanitises to nothing.
    fn search_hits(&mut self, text: String) {
        self.n += 1;
        let name = format!("h{}", self.n);
        let body = match self.d.search_query(&text) {
            Some(q) => {
                let p = self.text(&q);
                self.d.search_hits(&p)
            }
            None => format!("SELECT 0, {} WHERE {}", self.d.null_real(), self.no()),
        };
        self.ctes.push(format!("{name}(id, rel) AS ({body})"));
        self.searches.push((text, name));
    }

    /// The hit relation of search `text` (added by [`Lower::search_hits`]).
    fn hits_of(&self, text: &str) -> String {
        self.searches
            .iter()
            .find(|(t, _)| t == text)
            .map(|(_, h)| h.clone())
            .unwrap_or_default()
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

    /// A stage SQLite and PostgreSQL compute once however often it is read
    /// (`AS MATERIALIZED`).
    fn cte_materialized(&mut self, body: String) -> String {
        self.n += 1;
        let name = format!("s{}", self.n);
        let hint = self.d.materialized();
        self.ctes.push(format!("{name}(id, ord) AS {hint}({body})"));
        name
    }

    /// Stage `s` holds at most a `LIMIT`'s rows (`Lower::bounded`).
    fn is_bounded(&self, s: &str) -> bool {
        self.bounded.iter().any(|b| b == s)
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
            let join = if self.is_bounded(s) {
                self.d.bounded_join()
            } else {
                "JOIN"
            };
            (
                Row::task("t"),
                format!("FROM {s} x {join} tasks t ON t.id = x.id"),
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
            Order::Slug => Some(format!("{}{tie}", self.sort_field(&Field::Slug, row))),
            Order::Key(f, dir) => {
                let e = self.sort_field(f, row);
                let slug = self.sort_field(&Field::Slug, row);
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
                if *f == Field::Slug {
                    // Slugs are unique and never NULL: the key is its own tie.
                    Some(format!("{e} {d}{tie}"))
                } else if never_null {
                    Some(format!("{e} {d}, {slug}{tie}"))
                } else {
                    Some(format!("({e}) IS NULL, ({e}) {d}, {slug}{tie}"))
                }
            }
            Order::Any => None,
        }
    }

    /// `f` on `row` as a sort key (text in byte order).
    fn sort_field(&mut self, f: &Field, row: &Row) -> String {
        let e = self.field(f, row);
        if crate::tq::registry::field_type(f) == crate::tq::ast::FieldType::Text {
            self.d.sort_text(&e)
        } else {
            e
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
        let ranked = self.cte(format!("SELECT x.id, {rn} {join}"));
        if self.is_bounded(s) {
            self.bounded.push(ranked.clone());
        }
        ranked
    }
}
