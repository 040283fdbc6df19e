//! The relational IR between the plan and the SQL text (docs/planner.md
//! "The IR"; design in COMPILER.md): a small algebra over task ids.
//!
//! A [`Rel`] is a node plus the ORDER it delivers, a property rather than a
//! column: [`Order::Rank`] (a materialized rank column), [`Order::Slug`]
//! (by slug, then id; the consumer sorts), [`Order::Key`] (by a sort key,
//! absent last, then slug, then id) or [`Order::Any`] (unobservable). The
//! builder ([`build`]) gives every producing node `Rank` (the naive lowering);
//! the rewrites in `rules/` (driven by [`optimize`]) fuse, inline and elide.
//! `sql/` lowers an [`Ir`] to ONE statement.

mod build;
mod display;
mod optimize;
pub mod rules;

pub use build::build;
pub use optimize::{ALL_RULES, Fired, Options, optimize};

use super::ast::{Dir, EdgeType, Field, Pred, SetOp, Status, Trav};
use super::plan::{Mutation, ReflKind};

/// How a relation's rows are ordered when they are delivered.
#[derive(Debug, Clone, PartialEq)]
pub enum Order {
    /// A materialized rank column (`ord`), 1-based; the unoptimized form.
    Rank,
    /// By slug, then id (lazy: the consumer sorts).
    Slug,
    /// By the field's value (absent last) in `Dir`, then slug, then id (lazy).
    Key(Field, Dir),
    /// Nobody observes the order.
    Any,
}

/// A relation: rows of task ids (negative ids are reflection rows).
#[derive(Debug, Clone, PartialEq)]
pub struct Rel {
    /// What produces the rows.
    pub node: Node,
    /// The order the rows are delivered in (see [`Order`]).
    pub order: Order,
}

/// Where a scan of the task table takes its candidate rows from.
#[derive(Debug, Clone, PartialEq)]
pub enum Base {
    /// Every row of `tasks`.
    Tasks,
    /// The tasks one hop from the input over the edge, in the direction.
    Traverse(Box<Rel>, Trav),
    /// The tasks reachable in one or more hops from the input (recursive CTE).
    Closure(Box<Rel>, Vec<EdgeType>),
    /// The plan views' or-else read with one probe (rule `plan-probe`,
    /// issue 23): the children of the task with this slug when it has any
    /// (`child_count > 0`), else the children of its parent; a query error
    /// when the task is gone, as [`Node::Current`]. Needs the counter
    /// columns.
    PlanOf(String),
    /// `(search "text")`: the tasks with an observation matching the raw
    /// text (a join on the full-text index, spec/tq.md §10); its natural
    /// order is relevance, best first, ties by slug (a rank, never lazy).
    Search(String),
}

/// A condition on one row, evaluated as a non-NULL 0/1.
#[derive(Debug, Clone, PartialEq)]
pub enum Cond {
    /// A TQ predicate, lowered as written (`sql/expr.rs`).
    Pred(Pred),
    /// Not a reserved `@` task.
    Live,
    /// `status IN (...)`.
    Status(Vec<Status>),
    /// `(node "s")`: the slug contains s, case-folded.
    Node(String),
    /// All hold (the empty conjunction holds).
    And(Vec<Cond>),
    /// One holds (the empty disjunction fails).
    Or(Vec<Cond>),
    /// Negation.
    Not(Box<Cond>),
    /// At least one task one hop away (`(> (count TRAV) 0)`).
    Exists(Trav),
    /// Any edge or parent/child link at all (`(> :edge-count 0)` on a store
    /// without the counter columns; with them the comparison reads
    /// `edge_count`, see `rules::count_exists`).
    Linked,
    /// `parent_task_id IS NOT NULL` (`(has :parent)`).
    HasParent,
    /// The task has a live claim held by this agent (`(mine)`; spec/tq.md
    /// §9): owner equal, lease not lapsed at [`Ir::now`], not dormant.
    HeldBy(String),
}

impl Cond {
    /// Lifts a predicate's `and`/`or`/`not` structure into conditions so the
    /// rewrites reach nested predicates; leaves stay [`Cond::Pred`]
    /// (quantifier bodies are not entered).
    pub fn lift(p: &Pred) -> Cond {
        match p {
            Pred::And(ps) => Cond::And(ps.iter().map(Cond::lift).collect()),
            Pred::Or(ps) => Cond::Or(ps.iter().map(Cond::lift).collect()),
            Pred::Not(p) => Cond::Not(Box::new(Cond::lift(p))),
            p => Cond::Pred(p.clone()),
        }
    }
}

/// A relational node.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    /// `SELECT id FROM tasks WHERE conds` over the candidate rows of `from`.
    Scan {
        /// Candidate rows.
        from: Base,
        /// Conjunction of conditions.
        conds: Vec<Cond>,
    },
    /// `(current)`: the one task with this slug (a query error when gone).
    Current(String),
    /// A reflective source's rows.
    Reflect(ReflKind),
    /// No rows.
    Empty,
    /// A set carried over a mutation step: JSON `[[id, rank], ...]`.
    Carried(String),
    /// Rows of the input satisfying the condition (keeps the input's order).
    Filter(Box<Rel>, Cond),
    /// Rows of `input` whose id is (`anti`: is not) in `other`.
    SemiJoin {
        /// The rows kept or dropped.
        input: Box<Rel>,
        /// The rows tested against.
        other: Box<Rel>,
        /// `NOT EXISTS` instead of `EXISTS`.
        anti: bool,
    },
    /// A compound set operation (`UNION`/`INTERSECT`/`EXCEPT`) or `:or-else`.
    SetOp(SetOp, Box<Rel>, Box<Rel>),
    /// `(:sort FIELD DIR)`.
    Sort(Box<Rel>, Field, Dir),
    /// `(:take N)` in the input's order.
    Take(Box<Rel>, i64),
    /// `ORDER BY key LIMIT n`: a sort followed by a take.
    TopN {
        /// The rows.
        input: Box<Rel>,
        /// The sort key.
        field: Field,
        /// Its direction.
        dir: Dir,
        /// How many rows.
        n: i64,
    },
    /// The input unchanged (a mutation step inside a lowered segment).
    Pass(Box<Rel>),
}

/// What the final SELECT returns (column layouts in `sql::Tail`).
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    /// Task lines; `enrich_first`: when set, only the first N rows carry
    /// counts and metadata (the rest cannot be shown within the text budget).
    Tasks {
        /// Attach counts and metadata.
        enriched: bool,
        /// Enrich only the first N rows.
        enrich_first: Option<usize>,
    },
    /// Slugs.
    Ids,
    /// One count.
    Count,
    /// Slug plus the fields.
    Select(Vec<Field>),
    /// Task lines plus the key.
    GroupBy(Field),
    /// Mutation targets.
    Targets(Mutation),
}

/// A whole query in IR: the relation, its final shape, and query-wide facts.
#[derive(Debug, Clone, PartialEq)]
pub struct Ir {
    /// The rows.
    pub root: Rel,
    /// The final SELECT.
    pub shape: Shape,
    /// Reflection rows appear somewhere (the lowering adds `refl`).
    pub reflect: bool,
    /// The reflective kinds used (sorted, deduplicated).
    pub kinds: Vec<ReflKind>,
    /// `:obs-count`/`:edge-count` read the maintained counter columns of
    /// `tasks` instead of counting (set by `rules::counter_columns`).
    pub counters: bool,
    /// The clock reading (Unix seconds) claims are judged live against.
    pub now: i64,
}

impl Rel {
    /// A node delivering `order`.
    pub fn new(node: Node, order: Order) -> Rel {
        Rel { node, order }
    }

    /// A scan of the whole task table with `conds`, ranked.
    pub fn scan(conds: Vec<Cond>) -> Rel {
        Rel::new(
            Node::Scan {
                from: Base::Tasks,
                conds,
            },
            Order::Rank,
        )
    }

    /// True for a scan of the whole task table (a "bare source" or a fused
    /// filter over one): its conditions can be inlined as a predicate.
    pub fn is_table_scan(&self) -> bool {
        matches!(
            self.node,
            Node::Scan {
                from: Base::Tasks,
                ..
            }
        )
    }

    /// The direct child relations (traversal/closure inputs, operands).
    pub fn children_mut(&mut self) -> Vec<&mut Rel> {
        match &mut self.node {
            Node::Scan { from, .. } => match from {
                Base::Tasks | Base::Search(_) | Base::PlanOf(_) => vec![],
                Base::Traverse(r, _) | Base::Closure(r, _) => vec![r.as_mut()],
            },
            Node::Current(_) | Node::Reflect(_) | Node::Empty | Node::Carried(_) => vec![],
            Node::Filter(r, _)
            | Node::Sort(r, _, _)
            | Node::Take(r, _)
            | Node::Pass(r)
            | Node::TopN { input: r, .. } => vec![r.as_mut()],
            Node::SemiJoin { input, other, .. } => vec![input.as_mut(), other.as_mut()],
            Node::SetOp(_, a, b) => vec![a.as_mut(), b.as_mut()],
        }
    }

    /// The direct child relations, read-only (see [`Rel::children_mut`]).
    pub fn children(&self) -> Vec<&Rel> {
        match &self.node {
            Node::Scan { from, .. } => match from {
                Base::Tasks | Base::Search(_) | Base::PlanOf(_) => vec![],
                Base::Traverse(r, _) | Base::Closure(r, _) => vec![r.as_ref()],
            },
            Node::Current(_) | Node::Reflect(_) | Node::Empty | Node::Carried(_) => vec![],
            Node::Filter(r, _)
            | Node::Sort(r, _, _)
            | Node::Take(r, _)
            | Node::Pass(r)
            | Node::TopN { input: r, .. } => vec![r.as_ref()],
            Node::SemiJoin { input, other, .. } => vec![input.as_ref(), other.as_ref()],
            Node::SetOp(_, a, b) => vec![a.as_ref(), b.as_ref()],
        }
    }

    /// The raw texts of the `(search …)` scans under and in this relation,
    /// distinct, in reading order (a pipeline's source before its steps'
    /// operands): the first is the one `:relevance` reads.
    pub fn searches(&self) -> Vec<String> {
        fn walk(r: &Rel, out: &mut Vec<String>) {
            for c in r.children() {
                walk(c, out);
            }
            if let Node::Scan {
                from: Base::Search(t),
                ..
            } = &r.node
                && !out.contains(t)
            {
                out.push(t.clone());
            }
        }
        let mut out = Vec::new();
        walk(self, &mut out);
        out
    }

    /// True for a scan over a `(search …)` (its natural order is a rank).
    pub fn is_search_scan(&self) -> bool {
        matches!(
            self.node,
            Node::Scan {
                from: Base::Search(_),
                ..
            }
        )
    }

    /// The conditions owned by this node (not its children's).
    pub fn conds_mut(&mut self) -> Vec<&mut Cond> {
        match &mut self.node {
            Node::Scan { conds, .. } => conds.iter_mut().collect(),
            Node::Filter(_, c) => vec![c],
            _ => vec![],
        }
    }
}
