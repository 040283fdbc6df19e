//! The board's JSON endpoints (issue 25; docs/board.md): each opens the
//! store for reading, runs read tools (`task_get`, `task_bootstrap`,
//! `timeline`, `task_search`, `task_query`) with a session that holds only
//! the `read` grant, or TQ queries on the read surface, and answers JSON.
//! Nothing here writes: a tool whose capability is not `read` is refused
//! before it runs, and the tools run without the log reconcile `dispatch`
//! does first.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde_json::{Value, json};

use super::graph::{Graph, Scope, collect, plan_root};
use crate::session::{Capability, Session};
use crate::store::pg::{PgStore, PgTarget};
use crate::store::{Db, Store};
use crate::tools::{Clock, ToolCtx, find};
use crate::tq::Surface;
use crate::tq::engine::Engine;
use crate::tq::json::run_json;

/// The most tasks one graph page holds (the board never draws a 100k-task
/// project at once: it pages through a plan, and starts collapsed).
pub const GRAPH_PAGE: usize = 400;

/// The most tasks one board column lists.
pub const COLUMN_PAGE: usize = 100;

/// Where the board reads: the SQLite file or the PostgreSQL store.
#[derive(Debug, Clone)]
pub struct Source {
    /// The `cairn.db` path (unused with `pg`).
    pub db: PathBuf,
    /// The PostgreSQL store, when the server serves one.
    pub pg: Option<PgTarget>,
    /// The project root.
    pub root: PathBuf,
    /// Cancelled when the server stops (issue 24): every live stream
    /// ([`super::sse`]) then says `event: closing` with the reason and ends.
    pub closing: tokio_util::sync::CancellationToken,
}

/// An answer: HTTP status and JSON body.
pub type Answer = (u16, Value);

fn bad(status: u16, sentence: impl Into<String>) -> Answer {
    (status, json!({ "error": sentence.into() }))
}

/// Opens the store for reading. Errors: the store's sentence.
fn open(src: &Source) -> Result<Db, String> {
    match &src.pg {
        Some(t) => PgStore::open(t)
            .map(|s| Db::Pg(Box::new(s)))
            .map_err(|e| e.to_string()),
        None => Store::open_read(&src.db)
            .map(|(s, _)| Db::Sqlite(s))
            .map_err(|e| e.to_string()),
    }
}

/// A session that may only read.
fn reader() -> Session {
    let mut s = Session::with_grants([Capability::Read].into_iter().collect());
    s.agent = Some("board".to_string());
    s
}

/// Runs read tool `name` with `args`; its structured result (or its text
/// as `{"text": ...}`), or its error line as a 400.
fn tool(db: &Db, src: &Source, name: &str, args: Value) -> Answer {
    let Some(spec) = find(name) else {
        return bad(500, format!("no tool {name}"));
    };
    if spec.capability != Capability::Read {
        return bad(403, "The board only reads.");
    }
    let mut session = reader();
    let engine = Engine::new();
    let mut ctx = ToolCtx {
        store: db.r(),
        session: &mut session,
        engine: &engine,
        root: src.root.clone(),
        clock: Clock::System,
    };
    match (spec.run)(&mut ctx, args) {
        Ok(out) if out.is_error => bad(400, out.text),
        Ok(out) => (
            200,
            out.structured
                .unwrap_or_else(|| json!({ "text": out.text })),
        ),
        Err(e) => bad(400, e),
    }
}

fn query(db: &Db, text: &str) -> Result<Value, String> {
    run_json(&Engine::new(), db.r(), &reader(), text, Surface::Read).map_err(|d| d.render_plain())
}

/// A query string's parameter `key`, percent-decoded.
pub fn param(query: Option<&str>, key: &str) -> Option<String> {
    query?.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        (k == key).then(|| {
            let v = v.replace('+', " ");
            percent_encoding::percent_decode_str(&v)
                .decode_utf8_lossy()
                .into_owned()
        })
    })
}

/// Answers `GET /board/api/NAME?QUERY`, or `None` for an unknown NAME.
pub fn answer(src: &Source, name: &str, q: Option<&str>) -> Option<Answer> {
    let db = match open(src) {
        Ok(db) => db,
        Err(e) => return Some(bad(500, e)),
    };
    let arg = |k: &str| param(q, k).filter(|v| !v.trim().is_empty());
    let num = |k: &str| arg(k).and_then(|v| v.trim().parse::<usize>().ok());
    Some(match name {
        "plans" => plans(&db),
        "graph" => graph(&db, arg("plan"), num("offset").unwrap_or(0)),
        "columns" => columns(&db),
        "ready" => match query(
            &db,
            "(-> (query \"ready\") (:sort :updated-ts :desc) (:take 200))",
        ) {
            Ok(v) => (200, json!({ "tasks": v })),
            Err(e) => bad(400, e),
        },
        "task" => {
            let Some(slug) = arg("slug") else {
                return Some(bad(400, "slug is required."));
            };
            task(&db, src, &slug)
        }
        "search" => match arg("q") {
            Some(q) => tool(&db, src, "task_search", json!({ "query": q, "limit": 50 })),
            None => bad(400, "q is required."),
        },
        "query" => match arg("q") {
            Some(q) => tool(&db, src, "task_query", json!({ "query": q })),
            None => bad(400, "q is required."),
        },
        _ => return None,
    })
}

/// The live plans (open, active or blocked tasks without a parent), newest
/// update first, at most 200.
fn plans(db: &Db) -> Answer {
    match query(
        db,
        "(-> (active) (:where (not (has :parent))) (:sort :updated-ts :desc) (:take 200))",
    ) {
        Ok(v) => (200, json!({ "plans": v })),
        Err(e) => bad(400, e),
    }
}

/// One page of a plan's graph (every live plan without `plan`): at most
/// [`GRAPH_PAGE`] tasks from `offset`, the edges among them, and the total.
fn graph(db: &Db, plan: Option<String>, offset: usize) -> Answer {
    let scope = match plan {
        Some(slug) => match db.r().task_exists(&slug) {
            Ok(true) => match plan_root(db.r(), &slug) {
                Ok(root) => Scope::Plan(root),
                Err(e) => return bad(500, e),
            },
            Ok(false) => return bad(404, format!("No task {slug}.")),
            Err(e) => return bad(500, e.to_string()),
        },
        None => Scope::AllLive,
    };
    match collect(&Engine::new(), db.r(), &reader(), &scope) {
        Ok(g) => {
            let total = g.tasks.len();
            let tasks: Vec<_> = g.tasks.into_iter().skip(offset).take(GRAPH_PAGE).collect();
            let inside: BTreeSet<&str> = tasks.iter().map(|t| t.slug.as_str()).collect();
            let edges = g
                .edges
                .into_iter()
                .filter(|e| inside.contains(e.from.as_str()) && inside.contains(e.to.as_str()))
                .collect();
            let page = Graph { tasks, edges };
            (
                200,
                json!({ "graph": page, "total": total, "offset": offset, "page": GRAPH_PAGE }),
            )
        }
        Err(e) => bad(400, e),
    }
}

/// The board columns: for each status, its count and its newest
/// [`COLUMN_PAGE`] tasks.
fn columns(db: &Db) -> Answer {
    let mut cols = Vec::new();
    for status in ["open", "active", "blocked", "completed", "abandoned"] {
        let base = format!("(-> (all) (:where (= :status \"{status}\"))");
        let count = query(db, &format!("{base} (:count))"));
        let list = query(
            db,
            &format!("{base} (:sort :updated-ts :desc) (:take {COLUMN_PAGE}))"),
        );
        match (count, list) {
            (Ok(c), Ok(l)) => cols.push(json!({ "status": status, "count": c, "tasks": l })),
            (Err(e), _) | (_, Err(e)) => return bad(400, e),
        }
    }
    (200, json!({ "columns": cols }))
}

/// A task's page: its state (`task_bootstrap`: description, metadata,
/// edges, children, recent observations, claim, handoffs), its
/// observations and its timeline (`timeline`, newest first).
fn task(db: &Db, src: &Source, slug: &str) -> Answer {
    let (s1, state) = tool(db, src, "task_bootstrap", json!({ "task_id": slug }));
    if s1 != 200 {
        return (if s1 == 400 { 404 } else { s1 }, state);
    }
    let (_, timeline) = tool(
        db,
        src,
        "timeline",
        json!({ "task_id": slug, "full": true }),
    );
    let (_, observations) = tool(
        db,
        src,
        "timeline",
        json!({ "task_id": slug, "types": "observation", "full": true }),
    );
    (
        200,
        json!({ "task": state, "timeline": timeline, "observations": observations }),
    )
}
