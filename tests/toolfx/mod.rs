//! Shared fixture for the tool tests: a store in a temporary project, a
//! session, the engine, a fixed clock (2026-06-22 14:30:05 UTC).
//!
//! Twin mode (spec/team.md "The same on both engines"): in a test crate
//! named `pg_*` (e.g. `tests/pg_tools.rs`, which compiles the seed tool
//! tests a second time), every call also runs on a PostgreSQL store with
//! its own session and project, and the two answers must be identical:
//! the error flag, the text and the structured result (the twin's project
//! path is read as the SQLite one's). `task_search` answers must name the
//! same SET of tasks (the order within a search is engine-defined).
#![allow(dead_code)]

#[path = "../common/pg.rs"]
mod pg;

use std::sync::atomic::{AtomicUsize, Ordering};

use std::path::PathBuf;

use cairn::session::Session;
use cairn::store::Store;
use cairn::tools::{Clock, ToolCtx, ToolOutcome, dispatch};
use cairn::tq::engine::Engine;
use serde_json::{Value, json};

/// 2026-06-22 14:30:05 UTC.
pub const T0: i64 = 1_782_138_605;

pub struct Fx {
    pub dir: tempfile::TempDir,
    pub store: Store,
    pub session: Session,
    pub engine: Engine,
    pub clock: i64,
    /// The PostgreSQL twin (twin mode only).
    pub twin: Option<Twin>,
}

/// The PostgreSQL side of a twin-mode fixture.
pub struct Twin {
    pub dir: tempfile::TempDir,
    pub store: cairn::store::pg::PgStore,
    pub session: Session,
}

/// Calls compared on both engines in this test process.
pub static TWIN_CALLS: AtomicUsize = AtomicUsize::new(0);

/// True in a test crate named `pg_*`.
pub fn twin_mode() -> bool {
    module_path!().starts_with("pg_")
}

fn new_twin() -> Option<Twin> {
    if !twin_mode() {
        return None;
    }
    let url = pg::url()?;
    let target = cairn::store::pg::PgTarget::parse(&url, None).unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    Some(Twin {
        dir,
        store: cairn::store::pg::PgStore::open(&target).unwrap(),
        session: Session::new(),
    })
}

/// The task slugs a `task_search` structured result names, sorted.
fn hit_slugs(v: &Option<Value>) -> Vec<String> {
    let mut out: Vec<String> = v
        .as_ref()
        .and_then(|v| v.get("hits"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|h| h.get("task").or_else(|| h.get("slug")))
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out.dedup();
    out
}

impl Fx {
    pub fn new() -> Fx {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        let store = Store::open(&dir.path().join(".cairn").join("cairn.db")).unwrap();
        Fx {
            dir,
            store,
            session: Session::new(),
            engine: Engine::new(),
            clock: T0,
            twin: new_twin(),
        }
    }

    pub fn root(&self) -> PathBuf {
        self.dir.path().canonicalize().unwrap()
    }

    /// Calls `tool` with JSON `args`; panics on protocol faults.
    pub fn call(&mut self, tool: &str, args: Value) -> ToolOutcome {
        let root = self.root();
        let before = (
            self.session.grants.clone(),
            self.session.agent.clone(),
            self.session.current.clone(),
        );
        let mut ctx = ToolCtx {
            store: (&self.store).into(),
            session: &mut self.session,
            engine: &self.engine,
            root: root.clone(),
            clock: Clock::Fixed(self.clock),
        };
        let out = dispatch(&mut ctx, tool, args.clone()).unwrap();
        if let Some(twin) = self.twin.as_mut() {
            // What a test set on the session directly, the twin's has too.
            (
                twin.session.grants,
                twin.session.agent,
                twin.session.current,
            ) = before;
            let troot = twin.dir.path().canonicalize().unwrap();
            let mut tctx = ToolCtx {
                store: (&twin.store).into(),
                session: &mut twin.session,
                engine: &self.engine,
                root: troot.clone(),
                clock: Clock::Fixed(self.clock),
            };
            let theirs = dispatch(&mut tctx, tool, args.clone()).unwrap();
            let (a, b) = (troot.display().to_string(), root.display().to_string());
            let text = theirs.text.replace(&a, &b);
            let structured: Option<Value> = theirs
                .structured
                .as_ref()
                .map(|v| serde_json::from_str(&v.to_string().replace(&a, &b)).unwrap());
            assert_eq!(
                out.is_error, theirs.is_error,
                "{tool} {args}: {}\nvs PostgreSQL: {text}",
                out.text
            );
            if tool == "task_search" {
                assert_eq!(
                    hit_slugs(&out.structured),
                    hit_slugs(&structured),
                    "{tool} {args}"
                );
            } else {
                assert_eq!(out.text, text, "{tool} {args}: SQLite vs PostgreSQL text");
                assert_eq!(
                    out.structured, structured,
                    "{tool} {args}: SQLite vs PostgreSQL structure"
                );
            }
            TWIN_CALLS.fetch_add(1, Ordering::SeqCst);
        }
        out
    }

    /// The text of a successful call (panics when it is an error).
    pub fn ok(&mut self, tool: &str, args: Value) -> String {
        let out = self.call(tool, args);
        assert!(!out.is_error, "{tool} failed: {}", out.text);
        out.text
    }

    /// The text of a failed call (panics when it succeeded).
    pub fn err(&mut self, tool: &str, args: Value) -> String {
        let out = self.call(tool, args);
        assert!(out.is_error, "{tool} succeeded: {}", out.text);
        out.text
    }

    /// The number of events (in twin mode, also the twin's: they must agree).
    pub fn events(&self) -> i64 {
        let n = self
            .store
            .conn()
            .query_row("SELECT count(*) FROM events", [], |r| r.get(0))
            .unwrap();
        if let Some(t) = &self.twin {
            assert_eq!(
                t.store.event_count().unwrap(),
                n,
                "events: SQLite vs PostgreSQL"
            );
        }
        n
    }
}

pub const TUNE: &str = "2026-06-22-tune-search";
pub const PREFIX: &str = "2026-06-22-add-prefix-query-support";
pub const TOKEN: &str = "2026-06-22-tokenizer-fix";

/// tune-search with a prefix-query phase (current) and a tokenizer task.
pub fn story() -> Fx {
    let mut fx = Fx::new();
    fx.ok("task_create", json!({"name": "tune search"}));
    fx.ok("task_fork", json!({"name": "add prefix query support"}));
    fx.ok("task_create", json!({"name": "tokenizer fix"}));
    fx
}
