//! The vocabulary of TQ as data (spec/tq.md §2, §5, §6): every source, step,
//! predicate and write form with its kind tag, signature and one-line doc;
//! the field table; the edge table; the built-in views. This is the single
//! source: the checker dispatches on it, `(schema)`, `(fields)`, `(edges)`
//! and `(views)` render it, and docs/tq.md's reference is generated from it.

use crate::store::model::{EdgeType, Status};
use crate::tq::ast::{Field, FieldType, Prop, Step};

/// Unit of timestamp fields, as `(fields)` reports it (spec/tq.md §2 "Clock").
pub const TS_UNIT: &str = "seconds";
/// Epoch of timestamp fields, as `(fields)` reports it (spec/tq.md §2 "Clock").
pub const TS_EPOCH: &str = "1970-01-01 UTC (Unix time)";

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

const fn form(
    name: &'static str,
    category: Category,
    kind: Option<Kind>,
    args: &'static [Arg],
    usage: &'static str,
    op: Op,
    doc: &'static str,
) -> FormEntry {
    FormEntry {
        name,
        category,
        kind,
        doc,
        args,
        usage,
        op,
    }
}

use Category as C;

const T: Option<Kind> = Some(Kind::Transformer);
const SH: Option<Kind> = Some(Kind::Shaper);
const MU: Option<Kind> = Some(Kind::Mutation);
const LF: Option<Kind> = Some(Kind::Leaf);
const CO: Option<Kind> = Some(Kind::Combinator);
const QU: Option<Kind> = Some(Kind::Quantifier);

static FORMS: &[FormEntry] = &[
    form(
        "all",
        C::Source,
        None,
        &[],
        "(all)",
        Op::All,
        "Every task, reserved @-prefixed nodes excluded.",
    ),
    form(
        "active",
        C::Source,
        None,
        &[],
        "(active)",
        Op::Active,
        "Tasks whose status is open, active or blocked.",
    ),
    form(
        "dormant",
        C::Source,
        None,
        &[],
        "(dormant)",
        Op::Dormant,
        "Tasks whose status is completed or abandoned.",
    ),
    form(
        "current",
        C::Source,
        None,
        &[],
        "(current)",
        Op::Current,
        "The session's current task.",
    ),
    form(
        "node",
        C::Source,
        None,
        &[Arg::LitStr],
        "(node \"substr\")",
        Op::Node,
        "Tasks whose slug contains the substring, case-insensitive; reserved nodes included.",
    ),
    form(
        "query",
        C::Source,
        None,
        &[Arg::LitStr],
        "(query \"name\")",
        Op::View,
        "The tasks of a named view (built-in or user-defined).",
    ),
    form(
        "schema",
        C::Source,
        None,
        &[],
        "(schema)",
        Op::Schema,
        "Every source, step, predicate and write form as rows.",
    ),
    form(
        "views",
        C::Source,
        None,
        &[],
        "(views)",
        Op::Views,
        "The named views as rows, built-in and user.",
    ),
    form(
        "fields",
        C::Source,
        None,
        &[],
        "(fields)",
        Op::Fields,
        "The queryable fields as rows, declared and metadata.",
    ),
    form(
        "edges",
        C::Source,
        None,
        &[],
        "(edges)",
        Op::Edges,
        "The edge types as rows, with their class.",
    ),
    form(
        "follow",
        C::Step,
        T,
        &[Arg::Edge],
        "(:follow EDGE)",
        Op::Follow,
        "Tasks one EDGE hop forward.",
    ),
    form(
        "back",
        C::Step,
        T,
        &[Arg::Edge],
        "(:back EDGE)",
        Op::Back,
        "Tasks one EDGE hop backward.",
    ),
    form(
        "where",
        C::Step,
        T,
        &[Arg::Pred],
        "(:where PRED)",
        Op::Where,
        "Tasks satisfying PRED.",
    ),
    form(
        "sort",
        C::Step,
        T,
        &[Arg::Field, Arg::OptDir],
        "(:sort FIELD [:asc|:desc])",
        Op::Sort,
        "Order by FIELD, descending by default; ties by slug ascending.",
    ),
    form(
        "take",
        C::Step,
        T,
        &[Arg::Int],
        "(:take N)",
        Op::Take,
        "The first N tasks (negative means 0).",
    ),
    form(
        "enrich",
        C::Step,
        T,
        &[],
        "(:enrich)",
        Op::Enrich,
        "Attach obs-count, edge-count and every metadata key for rendering.",
    ),
    form(
        "union",
        C::Step,
        T,
        &[Arg::Query],
        "(:union Q)",
        Op::Union,
        "Tasks in the pipeline or in Q.",
    ),
    form(
        "intersect",
        C::Step,
        T,
        &[Arg::Query],
        "(:intersect Q)",
        Op::Intersect,
        "Tasks both in the pipeline and in Q.",
    ),
    form(
        "minus",
        C::Step,
        T,
        &[Arg::Query],
        "(:minus Q)",
        Op::Minus,
        "Pipeline tasks not in Q.",
    ),
    form(
        "or-else",
        C::Step,
        T,
        &[Arg::Query],
        "(:or-else Q)",
        Op::OrElse,
        "The pipeline if non-empty, else Q.",
    ),
    form(
        "closure",
        C::Step,
        T,
        &[Arg::Edges],
        "(:closure EDGE...)",
        Op::Closure,
        "Forward transitive closure over the EDGEs, cycle-safe, starting tasks excluded.",
    ),
    form(
        "select",
        C::Step,
        SH,
        &[Arg::Fields],
        "(:select FIELD...)",
        Op::Select,
        "Projection of the named fields.",
    ),
    form(
        "group-by",
        C::Step,
        SH,
        &[Arg::Field],
        "(:group-by FIELD)",
        Op::GroupBy,
        "Buckets by FIELD value, largest first.",
    ),
    form("ids", C::Step, SH, &[], "(:ids)", Op::Ids, "The slugs."),
    form(
        "count",
        C::Step,
        SH,
        &[],
        "(:count)",
        Op::Count,
        "The number of tasks.",
    ),
    form(
        "set-status!",
        C::Step,
        MU,
        &[Arg::Status],
        "(:set-status! STATUS)",
        Op::SetStatus,
        "Set each task's status.",
    ),
    form(
        "set!",
        C::Step,
        MU,
        &[Arg::Lit, Arg::Lit],
        "(:set! :key \"value\")",
        Op::SetMeta,
        "Set a metadata key on each task (not :slug or :status).",
    ),
    form(
        "link!",
        C::Step,
        MU,
        &[Arg::LinkEdge, Arg::LitStr],
        "(:link! :EDGE \"target\")",
        Op::Link,
        "Add EDGE from each task to the target.",
    ),
    form(
        "unlink!",
        C::Step,
        MU,
        &[Arg::LinkEdge, Arg::LitStr],
        "(:unlink! :EDGE \"target\")",
        Op::Unlink,
        "Remove EDGE from each task to the target.",
    ),
    form(
        "=",
        C::Predicate,
        LF,
        &[Arg::Value, Arg::Lit],
        "(= VALUE LIT)",
        Op::Eq,
        "VALUE equals LIT.",
    ),
    form(
        "has",
        C::Predicate,
        LF,
        &[Arg::Field],
        "(has FIELD)",
        Op::Has,
        "FIELD has a value.",
    ),
    form(
        "matches",
        C::Predicate,
        LF,
        &[Arg::FieldText, Arg::LitStr],
        "(matches FIELD \"s\")",
        Op::Matches,
        "FIELD contains s, case-insensitive.",
    ),
    form(
        ">",
        C::Predicate,
        LF,
        &[Arg::ValueNum, Arg::LitReal],
        "(> VALUE N)",
        Op::Gt,
        "VALUE is greater than N.",
    ),
    form(
        "<",
        C::Predicate,
        LF,
        &[Arg::ValueNum, Arg::LitReal],
        "(< VALUE N)",
        Op::Lt,
        "VALUE is less than N.",
    ),
    form(
        ">=",
        C::Predicate,
        LF,
        &[Arg::ValueNum, Arg::LitReal],
        "(>= VALUE N)",
        Op::Ge,
        "VALUE is at least N.",
    ),
    form(
        "<=",
        C::Predicate,
        LF,
        &[Arg::ValueNum, Arg::LitReal],
        "(<= VALUE N)",
        Op::Le,
        "VALUE is at most N.",
    ),
    form(
        "on",
        C::Predicate,
        LF,
        &[Arg::FieldTs, Arg::LitDate],
        "(on TS \"YYYY-MM-DD\")",
        Op::On,
        "TS falls on that UTC day.",
    ),
    form(
        "since",
        C::Predicate,
        LF,
        &[Arg::FieldTs, Arg::LitDate],
        "(since TS \"YYYY-MM-DD\")",
        Op::Since,
        "TS is on or after that UTC day.",
    ),
    form(
        "before",
        C::Predicate,
        LF,
        &[Arg::FieldTs, Arg::LitDate],
        "(before TS \"YYYY-MM-DD\")",
        Op::Before,
        "TS is before that UTC day.",
    ),
    form(
        "and",
        C::Predicate,
        CO,
        &[Arg::Preds],
        "(and PRED...)",
        Op::And,
        "Every PRED holds.",
    ),
    form(
        "or",
        C::Predicate,
        CO,
        &[Arg::Preds],
        "(or PRED...)",
        Op::Or,
        "Some PRED holds.",
    ),
    form(
        "not",
        C::Predicate,
        CO,
        &[Arg::Pred],
        "(not PRED)",
        Op::Not,
        "PRED does not hold.",
    ),
    form(
        "all",
        C::Predicate,
        QU,
        &[Arg::Traversal, Arg::Pred],
        "(all TRAV PRED)",
        Op::QAll,
        "Every task one hop away satisfies PRED (true when none).",
    ),
    form(
        "any",
        C::Predicate,
        QU,
        &[Arg::Traversal, Arg::Pred],
        "(any TRAV PRED)",
        Op::QAny,
        "Some task one hop away satisfies PRED (false when none).",
    ),
    form(
        "none",
        C::Predicate,
        QU,
        &[Arg::Traversal, Arg::Pred],
        "(none TRAV PRED)",
        Op::QNone,
        "No task one hop away satisfies PRED (true when none).",
    ),
    form(
        "define!",
        C::Write,
        None,
        &[Arg::LitStr, Arg::Query],
        "(define! \"name\" Q)",
        Op::Define,
        "Record Q as the named view NAME; returns Q's tasks.",
    ),
    form(
        "undefine!",
        C::Write,
        None,
        &[Arg::LitStr],
        "(undefine! \"name\")",
        Op::Undefine,
        "Remove the user view NAME; a built-in of that name reappears.",
    ),
];

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

/// A declared field: a `(fields)` row with `:origin "declared"`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldEntry {
    /// The name without colon (`updated-ts`).
    pub name: &'static str,
    /// The typed field.
    pub field: Field,
    /// Text, number or timestamp.
    pub ty: FieldType,
    /// One line of documentation.
    pub doc: &'static str,
}

const fn field(name: &'static str, field: Field, ty: FieldType, doc: &'static str) -> FieldEntry {
    FieldEntry {
        name,
        field,
        ty,
        doc,
    }
}

static FIELDS: &[FieldEntry] = &[
    field("slug", Field::Slug, FieldType::Text, "The task's own name."),
    field(
        "status",
        Field::Status,
        FieldType::Text,
        "open, active, completed, abandoned or blocked.",
    ),
    field(
        "description",
        Field::Description,
        FieldType::Text,
        "The task's description.",
    ),
    field(
        "depot",
        Field::Depot,
        FieldType::Text,
        "The depot prefix the task was addressed with, if any.",
    ),
    field(
        "parent",
        Field::Parent,
        FieldType::Text,
        "The parent's slug (phase-of).",
    ),
    field(
        "display-name",
        Field::DisplayName,
        FieldType::Text,
        "Metadata display-name, else the slug.",
    ),
    field(
        "created-ts",
        Field::CreatedTs,
        FieldType::Timestamp,
        "When the task was created.",
    ),
    field(
        "updated-ts",
        Field::UpdatedTs,
        FieldType::Timestamp,
        "When the task last changed.",
    ),
    field(
        "status-ts",
        Field::StatusTs,
        FieldType::Timestamp,
        "When the status last changed.",
    ),
    field(
        "obs-count",
        Field::ObsCount,
        FieldType::Number,
        "Observations on the task.",
    ),
    field(
        "edge-count",
        Field::EdgeCount,
        FieldType::Number,
        "Lateral edges in and out, plus children, plus 1 with a parent.",
    ),
    field(
        "category",
        Field::Prop(Prop::Category),
        FieldType::Text,
        "Reflection rows: source, step, predicate or write.",
    ),
    field(
        "kind",
        Field::Prop(Prop::Kind),
        FieldType::Text,
        "Reflection rows: the kind tag of a step or predicate.",
    ),
    field(
        "doc",
        Field::Prop(Prop::Doc),
        FieldType::Text,
        "Reflection rows: one line of documentation.",
    ),
    field(
        "signature",
        Field::Prop(Prop::Signature),
        FieldType::Text,
        "Reflection rows: a form's argument tokens.",
    ),
    field(
        "type",
        Field::Prop(Prop::Type),
        FieldType::Text,
        "Reflection rows: a field's type (text, number, timestamp).",
    ),
    field(
        "origin",
        Field::Prop(Prop::Origin),
        FieldType::Text,
        "Reflection rows: declared/metadata (fields), builtin/user (views).",
    ),
    field(
        "source",
        Field::Prop(Prop::Source),
        FieldType::Text,
        "Reflection rows: a view's TQ text.",
    ),
    field(
        "class",
        Field::Prop(Prop::Class),
        FieldType::Text,
        "Reflection rows: an edge's class (structural, lateral).",
    ),
    field(
        "unit",
        Field::Prop(Prop::Unit),
        FieldType::Text,
        "Reflection rows: a timestamp field's unit.",
    ),
    field(
        "epoch",
        Field::Prop(Prop::Epoch),
        FieldType::Text,
        "Reflection rows: a timestamp field's epoch.",
    ),
];

/// The declared fields (the `(fields)` rows with origin `declared`), in order.
pub fn fields() -> &'static [FieldEntry] {
    FIELDS
}

/// The declared field named `name` (no colon).
pub fn lookup_field(name: &str) -> Option<&'static FieldEntry> {
    FIELDS.iter().find(|f| f.name == name)
}

/// A field's name as written after the colon: `updated-ts`, or the metadata key.
pub fn field_name(f: &Field) -> String {
    match f {
        Field::Meta(key) => key.clone(),
        other => FIELDS
            .iter()
            .find(|e| &e.field == other)
            .map(|e| e.name.to_string())
            .unwrap_or_default(),
    }
}

/// A field's type; metadata keys and reflection props are text.
pub fn field_type(f: &Field) -> FieldType {
    FIELDS
        .iter()
        .find(|e| &e.field == f)
        .map(|e| e.ty)
        .unwrap_or(FieldType::Text)
}

/// `text`, `number` or `timestamp`, as `(fields)` shows it.
pub fn field_type_str(t: FieldType) -> &'static str {
    match t {
        FieldType::Text => "text",
        FieldType::Number => "number",
        FieldType::Timestamp => "timestamp",
    }
}

/// An edge type with its documentation; name and class come from [`EdgeType`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EdgeEntry {
    /// The edge.
    pub edge: EdgeType,
    /// One line of documentation.
    pub doc: &'static str,
}

static EDGES: &[EdgeEntry] = &[
    EdgeEntry {
        edge: EdgeType::PhaseOf,
        doc: "Child to parent; (:follow :phase-of) goes parent to children.",
    },
    EdgeEntry {
        edge: EdgeType::ForkedFrom,
        doc: "The same parent pointer as phase-of (indistinguishable in the store).",
    },
    EdgeEntry {
        edge: EdgeType::DependsOn,
        doc: "The source needs the target done first; followed forward to the target.",
    },
    EdgeEntry {
        edge: EdgeType::Related,
        doc: "A cross-reference between two tasks.",
    },
];

/// Every edge type with its doc (spec/tq.md §2 "Edges").
pub fn edges() -> &'static [EdgeEntry] {
    EDGES
}

/// Documentation of each status, for docs/tq.md (names come from [`Status`]).
pub fn status_doc(s: Status) -> &'static str {
    match s {
        Status::Open => "Created but not started.",
        Status::Active => "Being worked on; the status a new task gets.",
        Status::Completed => "Done (dormant).",
        Status::Abandoned => "Given up (dormant).",
        Status::Blocked => "Waiting on something outside the graph.",
    }
}

/// A built-in named view (spec/tq.md §5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ViewEntry {
    /// The view name.
    pub name: &'static str,
    /// Its TQ text (compiles with the checker).
    pub source: &'static str,
    /// One line of documentation.
    pub doc: &'static str,
}

static VIEWS: &[ViewEntry] = &[
    ViewEntry {
        name: "active-roots",
        source: "(-> (active) (:where (not (has :parent))))",
        doc: "Active tasks with no parent.",
    },
    ViewEntry {
        name: "orphans",
        source: "(-> (all) (:where (= :edge-count 0)))",
        doc: "Tasks with edge-count 0.",
    },
    ViewEntry {
        name: "leaf-tasks",
        source: "(-> (active) (:where (= (count (:follow :phase-of)) 0)))",
        doc: "Active tasks with no children.",
    },
    ViewEntry {
        name: "stale-phases",
        source: "(-> (active) (:where (any (:back :phase-of) (or (= :status \"completed\") (= :status \"abandoned\")))))",
        doc: "Active tasks whose parent is completed or abandoned.",
    },
    ViewEntry {
        name: "plan",
        source: "(-> (current) (:follow :phase-of) (:or-else (-> (current) (:back :phase-of) (:follow :phase-of))) (:enrich))",
        doc: "The current task's children, or if none, its siblings; enriched.",
    },
    ViewEntry {
        name: "plan-frontier",
        source: "(-> (query \"plan\") (:minus (dormant)) (:where (all (:follow :depends-on) (or (= :status \"completed\") (= :status \"abandoned\")))))",
        doc: "Tasks of plan that are not dormant and whose every depends-on target is dormant.",
    },
    ViewEntry {
        name: "frontier",
        source: "(query \"plan-frontier\")",
        doc: "Alias of plan-frontier.",
    },
    ViewEntry {
        name: "recent",
        source: "(-> (active) (:sort :updated-ts :desc) (:take 20))",
        doc: "Active tasks by updated-ts, newest 20.",
    },
    ViewEntry {
        name: "busy",
        source: "(-> (active) (:sort :obs-count :desc) (:take 20))",
        doc: "Active tasks by obs-count, top 20.",
    },
    ViewEntry {
        name: "hub-tasks",
        source: "(-> (active) (:sort :edge-count :desc) (:take 20))",
        doc: "Active tasks by edge-count, top 20.",
    },
    ViewEntry {
        name: "knowledge",
        source: "(-> (current) (:closure :phase-of :depends-on :related) (:enrich))",
        doc: "The current task's closure over phase-of, depends-on and related; enriched.",
    },
];

/// The built-in views, in the order of spec/tq.md §5.
pub fn builtin_views() -> &'static [ViewEntry] {
    VIEWS
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
        Step::SetStatus(_) => Op::SetStatus,
        Step::SetMeta { .. } => Op::SetMeta,
        Step::Link { .. } => Op::Link,
        Step::Unlink { .. } => Op::Unlink,
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
        assert_eq!(forms().len(), 47);
        assert_eq!(fields().len(), 21);
    }
}
