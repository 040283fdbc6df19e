//! The field table, the edge table and the status docs (spec/tq.md §2
//! "Fields", "Edges"; §6 `(fields)`, `(edges)`).

use crate::store::model::Status;
use crate::tq::ast::{Field, FieldType, Prop};

use super::EdgeType;

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

#[rustfmt::skip]
static FIELDS: &[FieldEntry] = &[
    field("slug", Field::Slug, FieldType::Text, "The task's own name."),
    field("status", Field::Status, FieldType::Text, "open, active, completed, abandoned or blocked."),
    field("description", Field::Description, FieldType::Text, "The task's description."),
    field("depot", Field::Depot, FieldType::Text, "The depot prefix the task was addressed with, if any."),
    field("parent", Field::Parent, FieldType::Text, "The parent's slug (phase-of)."),
    field("display-name", Field::DisplayName, FieldType::Text, "Metadata display-name, else the slug."),
    field("created-ts", Field::CreatedTs, FieldType::Timestamp, "When the task was created."),
    field("updated-ts", Field::UpdatedTs, FieldType::Timestamp, "When the task last changed."),
    field("status-ts", Field::StatusTs, FieldType::Timestamp, "When the status last changed."),
    field("obs-count", Field::ObsCount, FieldType::Number, "Observations on the task."),
    field("edge-count", Field::EdgeCount, FieldType::Number, "Lateral edges in and out, plus children, plus 1 with a parent."),
    field("claimed-by", Field::ClaimedBy, FieldType::Text, "The agent holding a live claim on the task, absent otherwise."),
    field("claim-until", Field::ClaimUntil, FieldType::Timestamp, "When the live claim lapses, absent when there is none."),
    field("relevance", Field::Relevance, FieldType::Number, "How well the task matched the query's first (search ...), higher is better; absent elsewhere."),
    field("category", Field::Prop(Prop::Category), FieldType::Text, "Reflection rows: source, step, predicate or write."),
    field("kind", Field::Prop(Prop::Kind), FieldType::Text, "Reflection rows: the kind tag of a step or predicate."),
    field("doc", Field::Prop(Prop::Doc), FieldType::Text, "Reflection rows: one line of documentation."),
    field("signature", Field::Prop(Prop::Signature), FieldType::Text, "Reflection rows: a form's argument tokens."),
    field("type", Field::Prop(Prop::Type), FieldType::Text, "Reflection rows: a field's type (text, number, timestamp)."),
    field("origin", Field::Prop(Prop::Origin), FieldType::Text, "Reflection rows: declared/metadata (fields), builtin/user (views)."),
    field("source", Field::Prop(Prop::Source), FieldType::Text, "Reflection rows: a view's TQ text."),
    field("class", Field::Prop(Prop::Class), FieldType::Text, "Reflection rows: an edge's class (structural, lateral)."),
    field("unit", Field::Prop(Prop::Unit), FieldType::Text, "Reflection rows: a timestamp field's unit."),
    field("epoch", Field::Prop(Prop::Epoch), FieldType::Text, "Reflection rows: a timestamp field's epoch."),
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
