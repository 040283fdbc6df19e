//! Shared fixture for the tool tests: a store in a temporary project, a
//! session, the engine, a fixed clock (2026-06-22 14:30:05 UTC).
#![allow(dead_code)]

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
        }
    }

    pub fn root(&self) -> PathBuf {
        self.dir.path().canonicalize().unwrap()
    }

    /// Calls `tool` with JSON `args`; panics on protocol faults.
    pub fn call(&mut self, tool: &str, args: Value) -> ToolOutcome {
        let root = self.root();
        let mut ctx = ToolCtx {
            store: &self.store,
            session: &mut self.session,
            engine: &self.engine,
            root,
            clock: Clock::Fixed(self.clock),
        };
        dispatch(&mut ctx, tool, args).unwrap()
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

    pub fn events(&self) -> i64 {
        self.store
            .conn()
            .query_row("SELECT count(*) FROM events", [], |r| r.get(0))
            .unwrap()
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
