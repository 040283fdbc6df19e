//! The vocabulary of TQ as data (spec/tq.md §2, §5, §6): every source, step,
//! predicate and write form with its kind tag, signature and one-line doc;
//! the field table; the edge table; the built-in views. This is the single
//! source: the checker dispatches on it, `(schema)`, `(fields)`, `(edges)`
//! and `(views)` render it, and docs/tq.md's reference is generated from it.

use crate::store::model::{EdgeType, Status};
use crate::tq::ast::{Mutation, Step};

/// Unit of timestamp fields, as `(fields)` reports it (spec/tq.md §2 "Clock").
pub const TS_UNIT: &str = "seconds";
/// Epoch of timestamp fields, as `(fields)` reports it (spec/tq.md §2 "Clock").
pub const TS_EPOCH: &str = "1970-01-01 UTC (Unix time)";

mod table;
mod views;
mod vocab;

pub use views::{ViewEntry, builtin_views};
pub use vocab::{
    EdgeEntry, FieldEntry, edges, field_name, field_type, field_type_str, fields, lookup_field,
    status_doc,
};

use table::FORMS;

/// The `:category` of a `(schema)` row (spec/tq.md §6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Category {
    /// A nullary producer of a task set.
    Source,
    /// A `(:keyword ...)` pipeline step.
    Step,
    /// A predicate inside `(:where ...)`.
    Predicate,
    /// A write form (`define!`, `undefine!`).
    Write,
}

impl Category {
    /// `source`, `step`, `predicate` or `write`.
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Source => "source",
            Category::Step => "step",
            Category::Predicate => "predicate",
            Category::Write => "write",
        }
    }
}

/// The `:kind` of a step or predicate (spec/tq.md §1, §2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Step: task set → task set.
    Transformer,
    /// Step: task set → final value; only last.
    Shaper,
    /// Step: records events; write surface only.
    Mutation,
    /// Predicate on one task.
    Leaf,
    /// Predicate combining predicates.
    Combinator,
    /// Predicate over one hop of neighbours.
    Quantifier,
}

impl Kind {
    /// `transformer` `shaper` `mutation` `leaf` `combinator` `quantifier`.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Transformer => "transformer",
            Kind::Shaper => "shaper",
            Kind::Mutation => "mutation",
            Kind::Leaf => "leaf",
            Kind::Combinator => "combinator",
            Kind::Quantifier => "quantifier",
        }
    }
}

/// One argument kind of a form's signature; renders to the §2 token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arg {
    /// An edge keyword: `edge`.
    Edge,
    /// One or more edge keywords: `edge...`.
    Edges,
    /// A predicate: `pred`.
    Pred,
    /// One or more predicates: `pred...`.
    Preds,
    /// A field keyword: `field`.
    Field,
    /// One or more field keywords: `field...`.
    Fields,
    /// A text field: `field-text`.
    FieldText,
    /// A timestamp field: `field-ts`.
    FieldTs,
    /// Optional direction: `[asc|desc]`.
    OptDir,
    /// An integer literal: `int`.
    Int,
    /// A sub-query: `query`.
    Query,
    /// A status: `open|active|completed|abandoned|blocked`.
    Status,
    /// An edge that mutations may add or remove: `phase-of|depends-on|related`.
    LinkEdge,
    /// Any literal: `lit`.
    Lit,
    /// A string literal: `lit-str`.
    LitStr,
    /// A number literal: `lit-real`.
    LitReal,
    /// A `YYYY-MM-DD` string: `lit-date`.
    LitDate,
    /// A field or `(count TRAV)`: `value`.
    Value,
    /// A numeric field or `(count TRAV)`: `value-num`.
    ValueNum,
    /// `(:follow EDGE)` or `(:back EDGE)`: `traversal`.
    Traversal,
}

/// Edges a mutation step may add or remove (`:link!`, `:unlink!`).
pub const LINK_EDGES: [EdgeType; 3] = [EdgeType::PhaseOf, EdgeType::DependsOn, EdgeType::Related];

impl Arg {
    /// The signature token (spec/tq.md §2 tables).
    pub fn token(self) -> String {
        match self {
            Arg::Edge => "edge".into(),
            Arg::Edges => "edge...".into(),
            Arg::Pred => "pred".into(),
            Arg::Preds => "pred...".into(),
            Arg::Field => "field".into(),
            Arg::Fields => "field...".into(),
            Arg::FieldText => "field-text".into(),
            Arg::FieldTs => "field-ts".into(),
            Arg::OptDir => "[asc|desc]".into(),
            Arg::Int => "int".into(),
            Arg::Query => "query".into(),
            Arg::Status => Status::ALL.map(Status::as_str).join("|"),
            Arg::LinkEdge => LINK_EDGES.map(EdgeType::as_str).join("|"),
            Arg::Lit => "lit".into(),
            Arg::LitStr => "lit-str".into(),
            Arg::LitReal => "lit-real".into(),
            Arg::LitDate => "lit-date".into(),
            Arg::Value => "value".into(),
            Arg::ValueNum => "value-num".into(),
            Arg::Traversal => "traversal".into(),
        }
    }

    /// True for the variadic kinds (one or more).
    pub fn is_variadic(self) -> bool {
        matches!(self, Arg::Edges | Arg::Preds | Arg::Fields)
    }
}

/// What the checker builds for a form: the dispatch key of a registry entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    /// `(all)` source.
    All,
    /// `(active)`.
    Active,
    /// `(dormant)`.
    Dormant,
    /// `(current)`.
    Current,
    /// `(node "substr")`.
    Node,
    /// `(search "text")`.
    Search,
    /// `(query "name")`.
    View,
    /// `(schema)`.
    Schema,
    /// `(views)`.
    Views,
    /// `(fields)`.
    Fields,
    /// `(edges)`.
    Edges,
    /// `(define! "name" Q)`.
    Define,
    /// `(undefine! "name")`.
    Undefine,
    /// `(:follow EDGE)`.
    Follow,
    /// `(:back EDGE)`.
    Back,
    /// `(:where PRED)`.
    Where,
    /// `(:sort FIELD [:asc|:desc])`.
    Sort,
    /// `(:take N)`.
    Take,
    /// `(:enrich)`.
    Enrich,
    /// `(:union Q)`.
    Union,
    /// `(:intersect Q)`.
    Intersect,
    /// `(:minus Q)`.
    Minus,
    /// `(:or-else Q)`.
    OrElse,
    /// `(:closure EDGE...)`.
    Closure,
    /// `(:select FIELD...)`.
    Select,
    /// `(:group-by FIELD)`.
    GroupBy,
    /// `(:ids)`.
    Ids,
    /// `(:count)`.
    Count,
    /// `(:set-status! STATUS)`.
    SetStatus,
    /// `(:set! :key "value")`.
    SetMeta,
    /// `(:link! :EDGE "target")`.
    Link,
    /// `(:unlink! :EDGE "target")`.
    Unlink,
    /// `(:claim! SECONDS)`.
    Claim,
    /// `(:release!)`.
    Release,
    /// `(mine)`.
    Mine,
    /// `(= VALUE LIT)`.
    Eq,
    /// `(has FIELD)`.
    Has,
    /// `(matches FIELD "s")`.
    Matches,
    /// `(> VALUE N)`.
    Gt,
    /// `(< VALUE N)`.
    Lt,
    /// `(>= VALUE N)`.
    Ge,
    /// `(<= VALUE N)`.
    Le,
    /// `(on TS "YYYY-MM-DD")`.
    On,
    /// `(since TS "YYYY-MM-DD")`.
    Since,
    /// `(before TS "YYYY-MM-DD")`.
    Before,
    /// `(and PRED...)`.
    And,
    /// `(or PRED...)`.
    Or,
    /// `(not PRED)`.
    Not,
    /// `(all TRAV PRED)`.
    QAll,
    /// `(any TRAV PRED)`.
    QAny,
    /// `(none TRAV PRED)`.
    QNone,
}

/// One form of the language: a `(schema)` row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FormEntry {
    /// The name without colon (`select`, `set-status!`, `>=`, `define!`).
    pub name: &'static str,
    /// Source, step, predicate or write form.
    pub category: Category,
    /// Kind tag for steps and predicates; `None` for sources and write forms.
    pub kind: Option<Kind>,
    /// One line of documentation.
    pub doc: &'static str,
    /// Argument kinds, in order.
    pub args: &'static [Arg],
    /// How the form is written, e.g. `(:sort FIELD [:asc|:desc])`; used in messages.
    pub usage: &'static str,
    /// What the checker builds.
    pub op: Op,
}

impl FormEntry {
    /// The signature tokens joined by spaces (spec/tq.md §2), e.g.
    /// `field-ts lit-date`; `""` for a form without arguments.
    pub fn signature_text(&self) -> String {
        self.args
            .iter()
            .map(|a| a.token())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The name as written in a query: steps get their colon (`:select`).
    pub fn written_name(&self) -> String {
        match self.category {
            Category::Step => format!(":{}", self.name),
            _ => self.name.to_string(),
        }
    }
}

/// Every source, step, predicate and write form, in the stable order of the
/// `(schema)` rows (sources, steps, predicates, write forms).
pub fn forms() -> &'static [FormEntry] {
    FORMS
}

/// The entries of one category, in registry order.
pub fn forms_in(category: Category) -> impl Iterator<Item = &'static FormEntry> {
    FORMS.iter().filter(move |f| f.category == category)
}

/// The entry of `category` named `name` (lower case, no colon).
pub fn lookup(category: Category, name: &str) -> Option<&'static FormEntry> {
    FORMS
        .iter()
        .find(|f| f.category == category && f.name == name)
}

/// The entry that builds `op`.
pub fn entry_of(op: Op) -> Option<&'static FormEntry> {
    FORMS.iter().find(|f| f.op == op)
}

/// The registry op that builds `step`.
pub fn step_op(step: &Step) -> Op {
    use crate::tq::ast::{SetOp, TravDir};
    match step {
        Step::Traverse(t) => match t.dir {
            TravDir::Follow => Op::Follow,
            TravDir::Back => Op::Back,
        },
        Step::Where(_) => Op::Where,
        Step::Sort(..) => Op::Sort,
        Step::Take(_) => Op::Take,
        Step::Enrich => Op::Enrich,
        Step::SetOp(op, _) => match op {
            SetOp::Union => Op::Union,
            SetOp::Intersect => Op::Intersect,
            SetOp::Minus => Op::Minus,
            SetOp::OrElse => Op::OrElse,
        },
        Step::Closure(_) => Op::Closure,
        Step::Select(_) => Op::Select,
        Step::GroupBy(_) => Op::GroupBy,
        Step::Ids => Op::Ids,
        Step::Count => Op::Count,
        Step::Mutate(Mutation::SetStatus(_)) => Op::SetStatus,
        Step::Mutate(Mutation::SetMeta { .. }) => Op::SetMeta,
        Step::Mutate(Mutation::Link { .. }) => Op::Link,
        Step::Mutate(Mutation::Unlink { .. }) => Op::Unlink,
        Step::Mutate(Mutation::Claim { .. }) => Op::Claim,
        Step::Mutate(Mutation::Release { .. }) => Op::Release,
    }
}

/// The kind of `step`, read from its registry entry: transformer, shaper or mutation.
pub fn step_kind(step: &Step) -> Kind {
    entry_of(step_op(step))
        .and_then(|e| e.kind)
        .unwrap_or(Kind::Transformer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_step_and_predicate_has_a_kind_and_sources_none() {
        for f in forms() {
            match f.category {
                Category::Step | Category::Predicate => assert!(f.kind.is_some(), "{}", f.name),
                Category::Source | Category::Write => assert!(f.kind.is_none(), "{}", f.name),
            }
            assert_eq!(entry_of(f.op), Some(f));
        }
        assert_eq!(forms().len(), 51);
        assert_eq!(fields().len(), 24);
    }
}
