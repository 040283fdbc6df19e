//! The planner's output (spec/tq.md §3, §5): a [`Plan`] of pipelines, each
//! a source ([`PSource`]), transformer and mutation steps ([`PStep`]) and an
//! optional terminal [`Shaper`], plus the write form run before it.

use super::super::ast::{Dir, EdgeType, Field, Pred, SetOp, Trav};

/// Which reflective source a row set comes from (spec/tq.md §6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ReflKind {
    /// `(schema)`.
    Schema,
    /// `(fields)`.
    Fields,
    /// `(edges)`.
    Edges,
    /// `(views)`.
    Views,
}

impl ReflKind {
    /// The tag stored in the reflection relation's `rk` column.
    pub fn as_str(self) -> &'static str {
        match self {
            ReflKind::Schema => "schema",
            ReflKind::Fields => "fields",
            ReflKind::Edges => "edges",
            ReflKind::Views => "views",
        }
    }
}

/// The producer of a pipeline's first set.
#[derive(Debug, Clone, PartialEq)]
pub enum PSource {
    /// `(all)`.
    All,
    /// `(active)`.
    Active,
    /// `(dormant)`.
    Dormant,
    /// `(current)`, resolved to the session's current slug at plan time.
    Current(String),
    /// `(mine)`, resolved to the session's agent name at plan time.
    Mine(String),
    /// `(node "substr")`.
    Node(String),
    /// `(search "text")`: the raw text (each dialect builds its own index
    /// query from it, `store::search::sanitize` first).
    Search(String),
    /// A reflective source.
    Reflect(ReflKind),
    /// `(query "name")` (or a `define!` body): the view's own pipeline,
    /// inlined; keeps that pipeline's order.
    View(Box<Pipeline>),
    /// The empty set (what `(undefine! "name")` returns).
    Empty,
}

/// A planned mutation step (spec/tq.md §2, kind `mutation`): the checked
/// query's [`crate::tq::ast::Mutation`] with the agent of `(:claim! S)` and
/// `(:release!)` resolved (the session's identity).
pub type Mutation = crate::tq::ast::Mutation<String>;

/// A transformer or mutation step of a planned pipeline.
#[derive(Debug, Clone, PartialEq)]
pub enum PStep {
    /// `(:follow EDGE)` / `(:back EDGE)`.
    Traverse(Trav),
    /// `(:where PRED)`.
    Where(Pred),
    /// `(:sort FIELD DIR)`.
    Sort(Field, Dir),
    /// `(:take N)`, N already clamped to ≥ 0.
    Take(i64),
    /// A set operation with its operand planned on the read surface.
    SetOp(SetOp, Box<Pipeline>),
    /// `(:closure EDGE...)`.
    Closure(Vec<EdgeType>),
    /// A mutation (write surface only).
    Mutate(Mutation),
}

/// The terminal shaper of a pipeline.
#[derive(Debug, Clone, PartialEq)]
pub enum Shaper {
    /// `(:select FIELD...)`.
    Select(Vec<Field>),
    /// `(:group-by FIELD)`.
    GroupBy(Field),
    /// `(:ids)`.
    Ids,
    /// `(:count)`.
    Count,
}

/// A planned pipeline: a source, transformer/mutation steps, and an optional
/// terminal shaper. `enriched` is set once an `(:enrich)` (or an enriched
/// view) was passed and stays set for the rest of the pipeline.
#[derive(Debug, Clone, PartialEq)]
pub struct Pipeline {
    /// The producer.
    pub source: PSource,
    /// Transformers and mutations, in order (`:enrich` is folded into `enriched`).
    pub steps: Vec<PStep>,
    /// The final shaper, if any.
    pub shaper: Option<Shaper>,
    /// Task lines carry `obs=`/`edges=` and metadata lines.
    pub enriched: bool,
}

/// A write form run before the pipeline (spec/tq.md §5).
#[derive(Debug, Clone, PartialEq)]
pub enum WriteForm {
    /// `(define! "name" Q)`: record `view.define` with `text`, the canonical
    /// print of Q; the pipeline then yields Q's set.
    Define {
        /// View name.
        name: String,
        /// `print::print(Q)`.
        text: String,
    },
    /// `(undefine! "name")`: record `view.undefine` when a user view exists.
    Undefine {
        /// View name.
        name: String,
    },
}

/// A planned query.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The write form to record first, if the source is one.
    pub write_form: Option<WriteForm>,
    /// The main pipeline.
    pub main: Pipeline,
    /// True when any source anywhere (views and operands included) is reflective.
    pub reflect: bool,
    /// The clock reading (Unix seconds) claims are judged live against on
    /// the read path (`:claimed-by`, `:claim-until`, `(mine)`); the write
    /// path judges them at its transaction's own reading.
    pub now: i64,
}

impl Plan {
    /// True when running the plan records events (a write form or a mutation step).
    pub fn writes(&self) -> bool {
        self.write_form.is_some()
            || self
                .main
                .steps
                .iter()
                .any(|s| matches!(s, PStep::Mutate(_)))
    }
}
