//! The plan as a graph (issue 25): the tasks of one plan (or of every live
//! plan) with their phase-of nesting, `depends-on` edges, statuses, live
//! claims and the ready frontier, read through the TQ engine's JSON path on
//! the read surface plus one store read for the edges
//! ([`crate::store::DbRef::depends_on_edges`]). `cairn graph` renders it
//! ([`super::export`]); the board serves it as JSON.

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::Value;

use crate::session::Session;
use crate::store::DbRef;
use crate::tq::Surface;
use crate::tq::engine::Engine;
use crate::tq::json::run_json;

/// One task of a [`Graph`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct GraphTask {
    /// The bare slug.
    pub slug: String,
    /// The display name, or the name typed at creation; `None` when the
    /// task has no name besides its slug.
    pub name: Option<String>,
    /// `open`, `active`, `blocked`, `completed` or `abandoned`.
    pub status: String,
    /// The parent's slug (phase-of), whether or not it is in the graph.
    pub parent: Option<String>,
    /// True when the task is in the `ready` view (the frontier).
    pub ready: bool,
    /// The agent holding a live claim, if any.
    pub claimed_by: Option<String>,
    /// When that claim lapses (Unix seconds, UTC).
    pub claim_until: Option<i64>,
}

/// One `depends-on` edge: `from` depends on `to`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GraphEdge {
    /// The dependent task's slug.
    pub from: String,
    /// The slug of the task it depends on.
    pub to: String,
}

/// A plan as a graph: its tasks (oldest first) and the `depends-on` edges
/// between them (by source, then target).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Graph {
    /// The tasks, oldest first.
    pub tasks: Vec<GraphTask>,
    /// The edges whose both ends are among `tasks`.
    pub edges: Vec<GraphEdge>,
}

/// Which tasks a graph holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// A task and its phase-of descendants, every status.
    Plan(String),
    /// Every live plan: each open, active or blocked task without a parent,
    /// with its descendants.
    AllLive,
}

/// `text` as a TQ string literal (the engine binds it as a parameter).
pub fn tq_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// The TQ query of `scope`'s tasks, oldest first.
pub fn scope_query(scope: &Scope) -> String {
    let seed = match scope {
        Scope::Plan(slug) => format!("(all) (:where (= :slug {}))", tq_string(slug)),
        Scope::AllLive => "(active) (:where (not (has :parent)))".to_string(),
    };
    format!("(-> {seed} (:closure :phase-of) (:union (-> {seed})) (:sort :created-ts :asc))")
}

/// The root of `slug`'s plan: its farthest phase-of ancestor (`slug` itself
/// when it has no parent). Stops on a phase-of cycle. Errors: a store read.
pub fn plan_root(store: DbRef<'_>, slug: &str) -> Result<String, String> {
    let mut seen = BTreeSet::new();
    let mut at = slug.to_string();
    while seen.insert(at.clone()) {
        let state = store.task_state(&at, 0, 0).map_err(|e| e.to_string())?;
        match state.and_then(|s| s.parent) {
            Some(p) => at = p,
            None => break,
        }
    }
    Ok(at)
}

/// Runs `text` on the read surface; a query error as its one-line message.
fn run(engine: &Engine, store: DbRef<'_>, session: &Session, text: &str) -> Result<Value, String> {
    run_json(engine, store, session, text, Surface::Read).map_err(|d| d.render_plain())
}

fn text(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_string)
}

/// The graph of `scope`: one query for the tasks, one for the ready view,
/// one store read for the edges, one name read per task. Errors: a query's
/// or the store's message.
pub fn collect(
    engine: &Engine,
    store: DbRef<'_>,
    session: &Session,
    scope: &Scope,
) -> Result<Graph, String> {
    let rows = run(engine, store, session, &scope_query(scope))?;
    let ready: BTreeSet<String> = run(engine, store, session, "(-> (query \"ready\") (:ids))")?
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let mut tasks = Vec::new();
    for r in rows.as_array().map(Vec::as_slice).unwrap_or(&[]) {
        let Some(slug) = text(r, "slug") else {
            continue;
        };
        let display = text(r, "display-name").filter(|d| *d != slug);
        let name = match display {
            Some(d) => Some(d),
            None => store.typed_name(&slug).map_err(|e| e.to_string())?,
        };
        tasks.push(GraphTask {
            ready: ready.contains(&slug),
            name,
            status: text(r, "status").unwrap_or_default(),
            parent: text(r, "parent"),
            claimed_by: text(r, "claimed-by"),
            claim_until: r.get("claim-until").and_then(Value::as_i64),
            slug,
        });
    }
    let inside: BTreeSet<&str> = tasks.iter().map(|t| t.slug.as_str()).collect();
    let edges = store
        .depends_on_edges()
        .map_err(|e| e.to_string())?
        .into_iter()
        .filter(|(a, b)| inside.contains(a.as_str()) && inside.contains(b.as_str()))
        .map(|(from, to)| GraphEdge { from, to })
        .collect();
    Ok(Graph { tasks, edges })
}
