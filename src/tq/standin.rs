//! STAND-IN until the front-end (engineer "front") and the store (engineer
//! "store") land: the minimal shapes of `tq::diagnostic`, `tq::registry`,
//! `tq::front::compile` and `tq::print::print` from the API contract, so the
//! planner compiles and its tests run. Deleted at integration.

#![allow(dead_code, missing_docs)]

pub mod diagnostic {
    use crate::tq::ast::Span;

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum DiagKind {
        Parse,
        Query,
        Execution,
    }

    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct Diagnostic {
        pub kind: DiagKind,
        pub message: String,
        pub span: Option<Span>,
        pub help: Option<String>,
    }

    impl Diagnostic {
        pub fn parse(message: impl Into<String>, span: Span) -> Diagnostic {
            Diagnostic {
                kind: DiagKind::Parse,
                message: message.into(),
                span: Some(span),
                help: None,
            }
        }
        pub fn query(message: impl Into<String>, span: Option<Span>) -> Diagnostic {
            Diagnostic {
                kind: DiagKind::Query,
                message: message.into(),
                span,
                help: None,
            }
        }
        pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
            self.help = Some(help.into());
            self
        }
        pub fn render_plain(&self) -> String {
            match self.kind {
                DiagKind::Parse => format!("Parse error: {}", self.message),
                DiagKind::Query => format!("Query error: {}", self.message),
                DiagKind::Execution => "The query could not be executed.".to_string(),
            }
        }
    }
}

pub mod registry {
    use crate::tq::ast::{Field, FieldType, Prop};
    use crate::store::model::EdgeType;

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Category {
        Source,
        Step,
        Predicate,
        Write,
    }
    impl Category {
        pub fn as_str(self) -> &'static str {
            match self {
                Category::Source => "source",
                Category::Step => "step",
                Category::Predicate => "predicate",
                Category::Write => "write",
            }
        }
    }
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Kind {
        Transformer,
        Shaper,
        Mutation,
        Leaf,
        Combinator,
        Quantifier,
    }
    impl Kind {
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
    pub struct FormEntry {
        pub name: &'static str,
        pub category: Category,
        pub kind: Option<Kind>,
        pub doc: &'static str,
        pub sig: &'static str,
    }
    impl FormEntry {
        pub fn signature_text(&self) -> String {
            self.sig.to_string()
        }
    }
    macro_rules! form {
        ($n:expr, $c:ident, $k:expr, $s:expr, $d:expr) => {
            FormEntry { name: $n, category: Category::$c, kind: $k, sig: $s, doc: $d }
        };
    }
    static FORMS: &[FormEntry] = &[
        form!("all", Source, None, "", "every task"),
        form!("active", Source, None, "", "open, active, blocked tasks"),
        form!("dormant", Source, None, "", "completed and abandoned tasks"),
        form!("current", Source, None, "", "the current task"),
        form!("node", Source, None, "lit-str", "slug contains"),
        form!("query", Source, None, "lit-str", "a named view"),
        form!("schema", Source, None, "", "the grammar as rows"),
        form!("views", Source, None, "", "named views"),
        form!("fields", Source, None, "", "fields"),
        form!("edges", Source, None, "", "edges"),
        form!("follow", Step, Some(Kind::Transformer), "edge", "one hop forward"),
        form!("select", Step, Some(Kind::Shaper), "field...", "projection"),
        form!("group-by", Step, Some(Kind::Shaper), "field", "groups"),
        form!("ids", Step, Some(Kind::Shaper), "", "slugs"),
        form!("count", Step, Some(Kind::Shaper), "", "cardinality"),
        form!("set-status!", Step, Some(Kind::Mutation), "open|active|completed|abandoned|blocked", "set status"),
        form!("set!", Step, Some(Kind::Mutation), "lit lit", "set metadata"),
        form!("link!", Step, Some(Kind::Mutation), "phase-of|depends-on|related lit-str", "add edge"),
        form!("unlink!", Step, Some(Kind::Mutation), "phase-of|depends-on|related lit-str", "remove edge"),
        form!("on", Predicate, Some(Kind::Leaf), "field-ts lit-date", "on that day"),
        form!("since", Predicate, Some(Kind::Leaf), "field-ts lit-date", "since that day"),
        form!("before", Predicate, Some(Kind::Leaf), "field-ts lit-date", "before that day"),
        form!("all", Predicate, Some(Kind::Quantifier), "traversal pred", "every neighbour"),
        form!("define!", Write, None, "lit-str query", "define a view"),
        form!("undefine!", Write, None, "lit-str", "remove a view"),
    ];
    pub fn forms() -> &'static [FormEntry] {
        FORMS
    }
    pub struct FieldEntry {
        pub name: &'static str,
        pub field: Field,
        pub ty: FieldType,
        pub doc: &'static str,
    }
    static FIELDS: &[FieldEntry] = &[
        FieldEntry { name: "slug", field: Field::Slug, ty: FieldType::Text, doc: "slug" },
        FieldEntry { name: "status", field: Field::Status, ty: FieldType::Text, doc: "status" },
        FieldEntry { name: "description", field: Field::Description, ty: FieldType::Text, doc: "d" },
        FieldEntry { name: "parent", field: Field::Parent, ty: FieldType::Text, doc: "p" },
        FieldEntry { name: "display-name", field: Field::DisplayName, ty: FieldType::Text, doc: "d" },
        FieldEntry { name: "updated-ts", field: Field::UpdatedTs, ty: FieldType::Timestamp, doc: "u" },
        FieldEntry { name: "obs-count", field: Field::ObsCount, ty: FieldType::Number, doc: "o" },
        FieldEntry { name: "edge-count", field: Field::EdgeCount, ty: FieldType::Number, doc: "e" },
        FieldEntry { name: "unit", field: Field::Prop(Prop::Unit), ty: FieldType::Text, doc: "unit" },
        FieldEntry { name: "origin", field: Field::Prop(Prop::Origin), ty: FieldType::Text, doc: "origin" },
    ];
    pub fn fields() -> &'static [FieldEntry] {
        FIELDS
    }
    pub fn field_name(f: &Field) -> String {
        match f {
            Field::Meta(k) => k.clone(),
            other => FIELDS
                .iter()
                .find(|e| &e.field == other)
                .map(|e| e.name.to_string())
                .unwrap_or_default(),
        }
    }
    pub fn field_type(f: &Field) -> FieldType {
        match f {
            Field::CreatedTs | Field::UpdatedTs | Field::StatusTs => FieldType::Timestamp,
            Field::ObsCount | Field::EdgeCount => FieldType::Number,
            _ => FieldType::Text,
        }
    }
    pub struct EdgeEntry {
        pub edge: EdgeType,
        pub doc: &'static str,
    }
    static EDGES: &[EdgeEntry] = &[
        EdgeEntry { edge: EdgeType::PhaseOf, doc: "p" },
        EdgeEntry { edge: EdgeType::ForkedFrom, doc: "f" },
        EdgeEntry { edge: EdgeType::DependsOn, doc: "d" },
        EdgeEntry { edge: EdgeType::Related, doc: "r" },
    ];
    pub fn edges() -> &'static [EdgeEntry] {
        EDGES
    }
    pub struct ViewEntry {
        pub name: &'static str,
        pub source: &'static str,
        pub doc: &'static str,
    }
    static VIEWS: &[ViewEntry] = &[
        ViewEntry { name: "active-roots", source: "(-> (active) (:where (not (has :parent))))", doc: "a" },
        ViewEntry { name: "orphans", source: "(-> (all) (:where (= :edge-count 0)))", doc: "o" },
    ];
    pub fn builtin_views() -> &'static [ViewEntry] {
        VIEWS
    }
    pub const TS_UNIT: &str = "seconds";
    pub const TS_EPOCH: &str = "1970-01-01 UTC (Unix time)";
}

pub mod front {
    use super::diagnostic::Diagnostic;
    use crate::tq::ast::Query;
    pub fn compile(text: &str, _meta_keys: &[String]) -> Result<Query, Diagnostic> {
        Err(Diagnostic::query(format!("front-end not merged: {text}"), None))
    }
}

pub mod print {
    use crate::tq::ast::Query;
    pub fn print(q: &Query) -> String {
        format!("{q:?}")
    }
}
