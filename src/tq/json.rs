//! Query results as JSON (issue 6; docs/cli.md "JSON output"), beside the
//! text rendering in `render`: `cairn query --format json`, the REPL and the
//! `task_query` tool's `structuredContent` all shape results here, built
//! with serde_json.
//!
//! Shapes: a task set is an array of task objects; `(:ids)` an array of
//! strings; `(:count)` a number; a projection an array of objects of the
//! selected fields; `(:group-by F)` an object `{KEY: [task objects]}`; a
//! write query whose result was too slow to shape after its writes were
//! recorded `{"recorded": {"events": N, "tasks": M}, "note": SENTENCE}`.
//! Timestamps are numbers (Unix seconds), absent values `null`.

use serde_json::{Map, Value, json};

use crate::session::Session;
use crate::store::DbRef;
use crate::tq::ast::{Field, Query, Source, Spanned, Step};
use crate::tq::engine::Engine;
use crate::tq::registry::{self, Kind};
use crate::tq::render::{Cell, Output, ProjRow, TaskRow};
use crate::tq::{Diagnostic, Surface, front};

/// The JSON of one projected cell: `null`, a string, or a number
/// (timestamps as Unix seconds).
fn cell_json(c: &Cell) -> Value {
    match c {
        Cell::Null => Value::Null,
        Cell::Text(s) => Value::String(s.clone()),
        Cell::Int(i) | Cell::Ts(i) => json!(i),
        Cell::Real(r) => json!(r),
    }
}

/// A task line as an object: `slug`, `display-name`, `status` (absent on
/// reflection rows), and when enriched `obs-count`, `edge-count` and
/// `metadata` (an object of the task's metadata).
fn task_row_json(t: &TaskRow, enriched: bool) -> Value {
    let mut m = Map::new();
    m.insert("slug".into(), json!(t.slug));
    m.insert("display-name".into(), json!(t.display));
    if let Some(st) = &t.status {
        m.insert("status".into(), json!(st));
    }
    if enriched {
        m.insert("obs-count".into(), json!(t.obs.unwrap_or(0)));
        m.insert("edge-count".into(), json!(t.edges.unwrap_or(0)));
        let meta: Map<String, Value> = t.meta.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
        m.insert("metadata".into(), Value::Object(meta));
    }
    Value::Object(m)
}

/// The structured form of `o` (no widening: a task set carries what its
/// task lines carry). Shapes as in the module doc; an empty set, id list or
/// projection is `[]`, no groups `{}`.
pub fn output_json(o: &Output) -> Value {
    match o {
        Output::Tasks { tasks, enriched } => {
            Value::Array(tasks.iter().map(|t| task_row_json(t, *enriched)).collect())
        }
        Output::Ids { ids } => json!(ids),
        Output::Count { count } => json!(count),
        Output::Recorded {
            events,
            tasks,
            note,
        } => json!({"recorded": {"events": events, "tasks": tasks}, "note": note}),
        Output::Projection { fields, rows } => Value::Array(
            rows.iter()
                .map(|r| {
                    let m: Map<String, Value> = fields
                        .iter()
                        .zip(&r.cells)
                        .map(|(f, c)| (f.clone(), cell_json(c)))
                        .collect();
                    Value::Object(m)
                })
                .collect(),
        ),
        Output::Groups { groups, .. } => {
            let m: Map<String, Value> = groups
                .iter()
                .map(|g| {
                    let tasks = g.tasks.iter().map(|t| task_row_json(t, false)).collect();
                    (g.key.clone(), Value::Array(tasks))
                })
                .collect();
            Value::Object(m)
        }
    }
}

/// The fields a widened task set selects: every declared field (task
/// fields, then reflection props), then every live metadata key.
fn all_fields(meta_keys: &[String]) -> Vec<Field> {
    let mut out: Vec<Field> = registry::fields().iter().map(|f| f.field.clone()).collect();
    out.extend(meta_keys.iter().map(|k| Field::Meta(k.clone())));
    out
}

/// When `q` yields a task set (no shaper, not a write form), the same query
/// with `(:select EVERY-FIELD)` appended, so the JSON of a task set can carry
/// every field of each task. `None` when `q` already ends in a shaper or is
/// `define!`/`undefine!`.
fn widen(q: &Query, meta_keys: &[String], first: Option<usize>) -> Option<Query> {
    if matches!(
        q.source.node,
        Source::Define { .. } | Source::Undefine { .. }
    ) {
        return None;
    }
    if q.steps
        .iter()
        .any(|s| registry::step_kind(&s.node) == Kind::Shaper)
    {
        return None;
    }
    let mut w = q.clone();
    if let Some(n) = first {
        let n = i64::try_from(n).unwrap_or(i64::MAX);
        w.steps.push(Spanned::new(Step::Take(n), 0..0));
    }
    w.steps
        .push(Spanned::new(Step::Select(all_fields(meta_keys)), 0..0));
    Some(w)
}

/// The `:relevance` field's name: a task object carries it only when the
/// task came from the query's search (spec/tq.md §10).
const RELEVANCE: &str = "relevance";

/// The JSON of a widened task set (the projection [`widen`] asked for): per
/// task, every declared task field (absent ones `null`, but `relevance`
/// only when present) and `metadata`, an
/// object of its metadata; per reflection row (no status), `slug` and the
/// props it has.
fn widened_json(fields: &[String], rows: &[ProjRow]) -> Value {
    let prop_names: Vec<String> = registry::fields()
        .iter()
        .filter(|f| matches!(f.field, Field::Prop(_)))
        .map(|f| f.name.to_string())
        .collect();
    let task_names: Vec<String> = registry::fields()
        .iter()
        .filter(|f| !matches!(f.field, Field::Prop(_)))
        .map(|f| f.name.to_string())
        .collect();
    let out = rows
        .iter()
        .map(|r| {
            let cells: Vec<(&String, &Cell)> = fields.iter().zip(&r.cells).collect();
            let is_task = cells
                .iter()
                .any(|(f, c)| f.as_str() == "status" && **c != Cell::Null);
            let mut m = Map::new();
            if is_task {
                let mut meta = Map::new();
                for (f, c) in &cells {
                    if f.as_str() == RELEVANCE && **c == Cell::Null {
                        // Absent off a search (spec/tq.md §10): no key.
                        continue;
                    } else if task_names.contains(f) {
                        m.insert((*f).clone(), cell_json(c));
                    } else if !prop_names.contains(f) && **c != Cell::Null {
                        meta.insert((*f).clone(), cell_json(c));
                    }
                }
                m.insert("metadata".into(), Value::Object(meta));
            } else {
                m.insert("slug".into(), json!(r.slug));
                for (f, c) in &cells {
                    if prop_names.contains(f) && **c != Cell::Null {
                        m.insert((*f).clone(), cell_json(c));
                    }
                }
            }
            Value::Object(m)
        })
        .collect();
    Value::Array(out)
}

/// Runs `text` and returns its JSON (docs/cli.md "JSON output"). A query
/// yielding a task set is run once with `(:select EVERY-FIELD)` appended, so
/// each task object carries every field; errors are those of `text` itself.
/// The widened query is run typed ([`Engine::run_query_value`]), never
/// printed and re-parsed, so any metadata key (spaces, emoji, parens) is
/// read as a bound value.
pub fn run_json(
    engine: &Engine,
    store: DbRef<'_>,
    session: &Session,
    text: &str,
    surface: Surface,
) -> Result<serde_json::Value, Diagnostic> {
    run_json_first(engine, store, session, text, surface, None)
}

/// [`run_json`] of only the first `first` tasks of a task set (the widened
/// query takes them before it selects every field), so a structured result
/// cut to what its text shows never fetches the rest (issue 23). `None`:
/// every task. Errors: those of `text`.
pub fn run_json_first(
    engine: &Engine,
    store: DbRef<'_>,
    session: &Session,
    text: &str,
    surface: Surface,
    first: Option<usize>,
) -> Result<serde_json::Value, Diagnostic> {
    let keys = store
        .metadata_keys()
        .map_err(|e| Diagnostic::execution(e.to_string()))?;
    let widened = front::compile(text, &keys)
        .ok()
        .and_then(|q| widen(&q, &keys, first));
    if let Some(w) = widened {
        match engine.run_query_value_db(store, session, &w, surface)? {
            Output::Projection { fields, rows } => return Ok(widened_json(&fields, &rows)),
            other => return Ok(output_json(&other)),
        }
    }
    engine
        .run_value_db(store, session, text, surface)
        .map(|o| output_json(&o))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tq::render::Group;

    fn row(slug: &str) -> TaskRow {
        TaskRow {
            slug: slug.into(),
            display: slug.into(),
            status: Some("active".into()),
            obs: Some(2),
            edges: Some(1),
            meta: vec![("priority".into(), "high".into())],
        }
    }

    #[test]
    fn shapes() {
        assert_eq!(output_json(&Output::Count { count: 3 }).to_string(), "3");
        assert_eq!(
            output_json(&Output::Ids {
                ids: vec!["a".into(), "b".into()]
            })
            .to_string(),
            r#"["a","b"]"#
        );
        assert_eq!(
            output_json(&Output::Tasks {
                tasks: vec![row("a")],
                enriched: true
            })
            .to_string(),
            r#"[{"display-name":"a","edge-count":1,"metadata":{"priority":"high"},"obs-count":2,"slug":"a","status":"active"}]"#
        );
        let groups = Output::Groups {
            field: "status".into(),
            groups: vec![Group {
                key: "active".into(),
                tasks: vec![row("a")],
            }],
        };
        assert_eq!(
            output_json(&groups).to_string(),
            r#"{"active":[{"display-name":"a","slug":"a","status":"active"}]}"#
        );
        let proj = Output::Projection {
            fields: vec!["parent".into(), "updated-ts".into()],
            rows: vec![ProjRow {
                slug: "a".into(),
                cells: vec![Cell::Null, Cell::Ts(5)],
            }],
        };
        assert_eq!(
            output_json(&proj).to_string(),
            r#"[{"parent":null,"updated-ts":5}]"#
        );
    }
}
