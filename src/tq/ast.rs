//! The typed query: what the checker produces from s-expressions and the
//! planner lowers to SQL (spec/tq.md §1, §2). Names of the vocabulary live in
//! `registry.rs`; this file only gives them types.
//!
//! Spans are byte ranges into the query text. Equality ignores spans, so a
//! query re-parsed from its canonical print compares equal to the original.

use std::ops::Range;

pub use crate::store::model::{EdgeType, Status};

/// A byte range into the query text.
pub type Span = Range<usize>;

/// A node with the byte span of the text it came from. `PartialEq` compares
/// the node only.
#[derive(Debug, Clone)]
pub struct Spanned<T> {
    /// The node.
    pub node: T,
    /// Where it came from in the query text (bytes).
    pub span: Span,
}

impl<T> Spanned<T> {
    /// Wraps `node` with `span`.
    pub fn new(node: T, span: Span) -> Self {
        Spanned { node, span }
    }
}

impl<T: PartialEq> PartialEq for Spanned<T> {
    fn eq(&self, other: &Self) -> bool {
        self.node == other.node
    }
}

/// The surface a query is compiled for (spec/tq.md §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Surface {
    /// `task_query`, the REPL default, `cairn query`: no mutation, no write form.
    Read,
    /// `task_query_write`, REPL `:write on`, `cairn query --write`.
    Write,
}

/// One query: a source threaded through steps (`(-> SOURCE STEP...)`, or a
/// bare source with no steps).
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    /// The producer of the first task set.
    pub source: Spanned<Source>,
    /// The steps, in order.
    pub steps: Vec<Spanned<Step>>,
}

/// A source: a nullary producer of a task set, or a write form (spec/tq.md §2
/// "Sources").
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// `(all)`: every task, reserved `@` nodes excluded.
    All,
    /// `(active)`: status open, active or blocked.
    Active,
    /// `(dormant)`: status completed or abandoned.
    Dormant,
    /// `(current)`: the session's current task.
    Current,
    /// `(mine)`: the tasks this agent holds a live claim on (spec/tq.md §9).
    Mine,
    /// `(node "substr")`: slugs containing the (non-empty) substring, case-insensitive.
    Node(String),
    /// `(search "text")`: the tasks with an observation matching the
    /// (non-empty) text under `task_search`'s rules (spec/tq.md §10).
    Search(String),
    /// `(query "name")`: a named view, resolved by the planner.
    View(String),
    /// `(schema)`: the vocabulary as rows.
    Schema,
    /// `(views)`: the named views as rows.
    Views,
    /// `(fields)`: the queryable fields as rows.
    Fields,
    /// `(edges)`: the edge vocabulary as rows.
    Edges,
    /// `(define! "name" Q)`: write form; records a view (spec/tq.md §5).
    Define {
        /// The view name (non-empty).
        name: String,
        /// The view body; must yield a task set.
        body: Box<Query>,
    },
    /// `(undefine! "name")`: write form; removes a user view.
    Undefine {
        /// The view name (non-empty).
        name: String,
    },
}

/// Sort direction for `(:sort FIELD [:asc|:desc])`; descending by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    /// Smallest first.
    Asc,
    /// Largest first (the default).
    Desc,
}

/// One hop along an edge: `(:follow EDGE)` or `(:back EDGE)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trav {
    /// `Follow` goes forward (parent → children for phase-of; a task → what it
    /// depends on for depends-on); `Back` goes the other way.
    pub dir: TravDir,
    /// The edge followed.
    pub edge: EdgeType,
}

/// Direction of a traversal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TravDir {
    /// `:follow`.
    Follow,
    /// `:back`.
    Back,
}

/// A step of a pipeline (spec/tq.md §2 "Steps"). Its kind (transformer,
/// shaper, mutation) is in the registry; `Step::kind` reads it from there.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// `(:follow EDGE)` / `(:back EDGE)`.
    Traverse(Trav),
    /// `(:where PRED)`.
    Where(Pred),
    /// `(:sort FIELD [:asc|:desc])`.
    Sort(Field, Dir),
    /// `(:take N)`; negative means 0.
    Take(i64),
    /// `(:enrich)`.
    Enrich,
    /// `(:union Q)`, `(:intersect Q)`, `(:minus Q)`, `(:or-else Q)`.
    SetOp(SetOp, Box<Query>),
    /// `(:closure EDGE...)`: at least one edge.
    Closure(Vec<EdgeType>),
    /// `(:select FIELD...)`: at least one field.
    Select(Vec<Field>),
    /// `(:group-by FIELD)`.
    GroupBy(Field),
    /// `(:ids)`.
    Ids,
    /// `(:count)`.
    Count,
    /// A mutation step (kind `mutation`): `(:set-status! ...)`, `(:set! ...)`,
    /// `(:link! ...)`, `(:unlink! ...)`, `(:claim! S)`, `(:release!)`.
    Mutate(Mutation),
}

/// A mutation step (spec/tq.md §2, kind `mutation`; §9 for claims). One
/// declaration for both stages: the checked query holds `Mutation` (`A =
/// ()`, no agent yet); the plan holds `plan::Mutation` (`A = String`, the
/// agent resolved at plan time, see [`Mutation::with_agent`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Mutation<A = ()> {
    /// `(:set-status! STATUS)`.
    SetStatus(Status),
    /// `(:set! :key "value")`; key never `slug` or `status`.
    SetMeta {
        /// Metadata key, lower case, without the colon.
        key: String,
        /// The value (kept as written).
        value: String,
    },
    /// `(:link! :EDGE "target")`.
    Link {
        /// The edge to add from each task.
        edge: EdgeType,
        /// The target slug.
        target: String,
    },
    /// `(:unlink! :EDGE "target")`.
    Unlink {
        /// The edge to remove from each task.
        edge: EdgeType,
        /// The target slug.
        target: String,
    },
    /// `(:claim! SECONDS)`: claim each task for the agent for 1 to 86,400
    /// seconds; keeps only the tasks the agent now holds.
    Claim {
        /// The lease, 1 to 86,400 seconds.
        seconds: i64,
        /// The claiming agent (`()` until planned).
        agent: A,
    },
    /// `(:release!)`: release the tasks the agent holds.
    Release {
        /// The releasing agent (`()` until planned).
        agent: A,
    },
}

impl Mutation {
    /// This mutation with its agent: `agent` is called only for `(:claim!
    /// S)` and `(:release!)` (the other four need none). Errors: `agent`'s.
    pub fn with_agent<E>(
        &self,
        agent: impl FnOnce() -> Result<String, E>,
    ) -> Result<Mutation<String>, E> {
        Ok(match self {
            Mutation::SetStatus(s) => Mutation::SetStatus(*s),
            Mutation::SetMeta { key, value } => Mutation::SetMeta {
                key: key.clone(),
                value: value.clone(),
            },
            Mutation::Link { edge, target } => Mutation::Link {
                edge: *edge,
                target: target.clone(),
            },
            Mutation::Unlink { edge, target } => Mutation::Unlink {
                edge: *edge,
                target: target.clone(),
            },
            Mutation::Claim { seconds, .. } => Mutation::Claim {
                seconds: *seconds,
                agent: agent()?,
            },
            Mutation::Release { .. } => Mutation::Release { agent: agent()? },
        })
    }
}

/// The four set-operation steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetOp {
    /// Tasks in the pipeline or in the operand.
    Union,
    /// Tasks in both.
    Intersect,
    /// Pipeline tasks not in the operand.
    Minus,
    /// The pipeline if non-empty, else the operand.
    OrElse,
}

/// A field a predicate, `:sort`, `:select` or `:group-by` names (spec/tq.md §2
/// "Fields").
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Field {
    /// `:slug` (text).
    Slug,
    /// `:status` (text).
    Status,
    /// `:description` (text).
    Description,
    /// `:depot` (text).
    Depot,
    /// `:parent` (text): the parent's slug.
    Parent,
    /// `:display-name` (text): metadata `display-name`, else the slug.
    DisplayName,
    /// `:created-ts` (timestamp, Unix seconds).
    CreatedTs,
    /// `:updated-ts` (timestamp, Unix seconds).
    UpdatedTs,
    /// `:status-ts` (timestamp, Unix seconds).
    StatusTs,
    /// `:obs-count` (number).
    ObsCount,
    /// `:edge-count` (number).
    EdgeCount,
    /// `:claimed-by` (text): the live claim's owner, absent otherwise
    /// (spec/tq.md §9 "Fields").
    ClaimedBy,
    /// `:claim-until` (timestamp, Unix seconds): when the live claim lapses,
    /// absent when there is none.
    ClaimUntil,
    /// `:relevance` (number, higher is better): how well the task matched
    /// the query's first `(search …)`; absent on rows that did not come
    /// from one (spec/tq.md §10).
    Relevance,
    /// A prop of reflection rows (`:category :kind :doc :signature :type
    /// :origin :source :class :unit :epoch`), text; absent on tasks.
    Prop(Prop),
    /// A metadata key discovered live from the store (text), lower case,
    /// without the colon.
    Meta(String),
}

/// The props of reflection rows (spec/tq.md §6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Prop {
    /// `:category`.
    Category,
    /// `:kind`.
    Kind,
    /// `:doc`.
    Doc,
    /// `:signature`.
    Signature,
    /// `:type`.
    Type,
    /// `:origin`.
    Origin,
    /// `:source`.
    Source,
    /// `:class`.
    Class,
    /// `:unit`.
    Unit,
    /// `:epoch`.
    Epoch,
}

/// The type of a field's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FieldType {
    /// Compared as strings.
    Text,
    /// Integer counts.
    Number,
    /// Unix seconds (UTC).
    Timestamp,
}

/// A literal operand.
#[derive(Debug, Clone, PartialEq)]
pub enum Lit {
    /// A string, case kept (a keyword literal like `:active` is read as the
    /// text `active`).
    Str(String),
    /// An integer.
    Int(i64),
    /// A decimal.
    Dec(f64),
}

/// What a comparison's left side reads: a field or a one-hop count.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A field of the task.
    Field(Field),
    /// `(count TRAV)`: how many tasks are one hop away.
    Count(Trav),
}

/// Numeric comparison operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmp {
    /// `>`.
    Gt,
    /// `<`.
    Lt,
    /// `>=`.
    Ge,
    /// `<=`.
    Le,
}

/// Date predicates over a timestamp field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DateOp {
    /// `(on TS "YYYY-MM-DD")`: within that UTC day.
    On,
    /// `(since TS "YYYY-MM-DD")`: on or after the start of that UTC day.
    Since,
    /// `(before TS "YYYY-MM-DD")`: before the start of that UTC day.
    Before,
}

/// Quantifiers over one hop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quant {
    /// Every neighbour satisfies (vacuously true).
    All,
    /// Some neighbour satisfies (false when none).
    Any,
    /// No neighbour satisfies (vacuously true).
    None,
}

/// A predicate (spec/tq.md §2 "Predicates").
#[derive(Debug, Clone, PartialEq)]
pub enum Pred {
    /// `(= VALUE LIT)`.
    Eq(Value, Lit),
    /// `(has FIELD)`.
    Has(Field),
    /// `(matches FIELD "s")`: FIELD (text) contains s, case-insensitive.
    Matches(Field, String),
    /// `(> VALUE N)` etc. on a numeric or timestamp value. The operand is
    /// kept as written; for a timestamp value the planner applies the clock
    /// rule of §2 (above 3,000,000,000 is universal time, shifted by
    /// 2,208,988,800), so the canonical print round-trips.
    Compare(Cmp, Value, f64),
    /// `(on|since|before TS "YYYY-MM-DD")`.
    Date(DateOp, Field, time::Date),
    /// `(and PRED...)`.
    And(Vec<Pred>),
    /// `(or PRED...)`.
    Or(Vec<Pred>),
    /// `(not PRED)`.
    Not(Box<Pred>),
    /// `(all|any|none TRAV PRED)`.
    Quantified(Quant, Trav, Box<Pred>),
}
