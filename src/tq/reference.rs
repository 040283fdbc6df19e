//! The generated reference section of docs/tq.md, rendered from the registry
//! (spec/tq.md §2, §5, §6) so the documentation cannot drift from the
//! vocabulary the checker dispatches on. `tests/tq_docs.rs` fails when the
//! file is stale; `CAIRN_BLESS=1 cargo test --test tq_docs` rewrites it.

use std::fmt::Write as _;

use crate::store::model::Status;
use crate::tq::registry::{
    Category, FieldEntry, TS_EPOCH, TS_UNIT, builtin_views, edges, field_type_str, fields,
    forms_in, status_doc,
};

/// Marker line opening the generated section.
pub const BEGIN: &str =
    "<!-- BEGIN GENERATED: registry reference (CAIRN_BLESS=1 cargo test --test tq_docs) -->";
/// Marker line closing the generated section.
pub const END: &str = "<!-- END GENERATED -->";

fn escape_cell(s: &str) -> String {
    s.replace('|', "\\|")
}

/// The Markdown of the reference: one table per category (form, kind,
/// signature, doc), then fields, edges, statuses and built-in views.
pub fn reference_markdown() -> String {
    let mut out = String::new();
    let sections = [
        (Category::Source, "Sources"),
        (Category::Step, "Steps"),
        (Category::Predicate, "Predicates"),
        (Category::Write, "Write forms"),
    ];
    for (cat, title) in sections {
        let _ = writeln!(out, "### {title}\n");
        let with_kind = matches!(cat, Category::Step | Category::Predicate);
        if with_kind {
            out.push_str("| form | kind | signature | doc |\n|---|---|---|---|\n");
        } else {
            out.push_str("| form | signature | doc |\n|---|---|---|\n");
        }
        for f in forms_in(cat) {
            let sig = f.signature_text();
            let sig = if sig.is_empty() {
                String::new()
            } else {
                format!("`{}`", escape_cell(&sig))
            };
            let usage = format!("`{}`", escape_cell(f.usage));
            if with_kind {
                let kind = f.kind.map(|k| k.as_str()).unwrap_or("");
                let _ = writeln!(out, "| {usage} | {kind} | {sig} | {} |", f.doc);
            } else {
                let _ = writeln!(out, "| {usage} | {sig} | {} |", f.doc);
            }
        }
        out.push('\n');
    }
    out.push_str("### Fields\n\n| field | type | doc |\n|---|---|---|\n");
    for FieldEntry { name, ty, doc, .. } in fields() {
        let _ = writeln!(out, "| `:{name}` | {} | {doc} |", field_type_str(*ty));
    }
    let _ = writeln!(
        out,
        "| any live metadata key | text | Discovered from the store, e.g. `:priority`. |\n\nTimestamps are in {TS_UNIT} since {TS_EPOCH}.\n"
    );
    out.push_str("### Edges\n\n| edge | class | doc |\n|---|---|---|\n");
    for e in edges() {
        let _ = writeln!(
            out,
            "| `:{}` | {} | {} |",
            e.edge.as_str(),
            e.edge.class().as_str(),
            e.doc
        );
    }
    out.push_str("\n### Statuses\n\n| status | doc |\n|---|---|\n");
    for s in Status::ALL {
        let _ = writeln!(out, "| `{}` | {} |", s.as_str(), status_doc(s));
    }
    out.push_str("\n### Built-in views\n\n| view | doc | source |\n|---|---|---|\n");
    for v in builtin_views() {
        let _ = writeln!(
            out,
            "| `{}` | {} | `{}` |",
            v.name,
            v.doc,
            escape_cell(v.source)
        );
    }
    out
}

/// Replaces the text between [`BEGIN`] and [`END`] in `doc` with the
/// current reference. `None` when a marker is missing.
pub fn splice(doc: &str) -> Option<String> {
    let start = doc.find(BEGIN)? + BEGIN.len();
    let end = doc[start..].find(END)? + start;
    Some(format!(
        "{}\n\n{}\n{}",
        &doc[..start],
        reference_markdown(),
        &doc[end..]
    ))
}
