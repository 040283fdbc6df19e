//! Shared fixture for the integration tests: a fresh store in a temporary
//! directory, seeded through the store's one write boundary; and the built
//! `cairn` run in a project directory.

#![allow(dead_code)]

pub mod pg;
pub mod queries;

use std::cell::RefCell;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use cairn::session::Session;
use cairn::store::{EdgeType, NewEvent, Status, Store};
use cairn::tq::Surface;
use cairn::tq::engine::Engine;

/// A store, a session and an engine.
///
/// Twin mode (when this module is compiled into a test crate whose name
/// starts with `pg_`, e.g. `tests/pg_tq_conformance.rs` including the
/// conformance cases): every read query [`Fx::on`] runs on the SQLite store
/// is also run on a PostgreSQL copy (the store's events pushed to it first)
/// and the two texts must be byte-identical (spec/team.md "The same on both
/// engines").
pub struct Fx {
    pub dir: tempfile::TempDir,
    pub store: Store,
    pub session: Session,
    pub engine: Engine,
    pub ts: i64,
    /// The PostgreSQL twin (twin mode), opened on first use.
    pub pg: RefCell<Option<cairn::store::pg::PgStore>>,
}

/// How many queries twin mode found identical on both engines (this
/// process).
pub static TWIN_SAME: AtomicUsize = AtomicUsize::new(0);

/// True in a test crate named `pg_*` (see [`Fx`]).
pub fn twin_mode() -> bool {
    module_path!().starts_with("pg_")
}

/// Slugs in fixtures are `2026-01-01-<name>`.
pub fn s(name: &str) -> String {
    format!("2026-01-01-{name}")
}

impl Fx {
    pub fn new() -> Fx {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("cairn.db")).unwrap();
        Fx {
            dir,
            store,
            session: Session::new(),
            engine: Engine::new(),
            ts: 1_767_225_600, // 2026-01-01
            pg: RefCell::new(None),
        }
    }

    /// The PostgreSQL twin holding every event of the SQLite store (pushed
    /// now), or `None` when PostgreSQL cannot start outside CI.
    pub fn pg_synced(&self) -> Option<std::cell::RefMut<'_, Option<cairn::store::pg::PgStore>>> {
        let mut slot = self.pg.borrow_mut();
        if slot.is_none() {
            let url = pg::url()?;
            let target = cairn::store::pg::PgTarget::parse(&url, None).unwrap();
            *slot = Some(cairn::store::pg::PgStore::open(&target).unwrap());
        }
        let events = cairn::store::pg::source_events(&self.store).unwrap();
        slot.as_ref().unwrap().push(&events, |_, _| {}).unwrap();
        Some(slot)
    }

    /// Runs `q` on the PostgreSQL twin; the text, or the plain diagnostic.
    pub fn on_pg(&self, surface: Surface, q: &str) -> Option<String> {
        let slot = self.pg_synced()?;
        let pg = slot.as_ref().unwrap();
        Some(match self.engine.run_pg(pg, &self.session, q, surface) {
            Ok(t) => t,
            Err(d) => d.render_plain(),
        })
    }

    fn tick(&mut self) -> i64 {
        self.ts += 1;
        self.ts
    }

    pub fn write(&mut self, events: Vec<NewEvent>) {
        self.store.write(&events).unwrap();
    }

    /// Creates `2026-01-01-<name>` (active).
    pub fn create(&mut self, name: &str) -> String {
        let ts = self.tick();
        let slug = s(name);
        let e = NewEvent::task_create(&self.session.id, ts, &slug, None, None);
        self.write(vec![e]);
        slug
    }

    /// Creates a task with a description.
    pub fn create_described(&mut self, name: &str, description: &str) -> String {
        let ts = self.tick();
        let slug = s(name);
        let e = NewEvent::task_create(&self.session.id, ts, &slug, Some(description), None);
        self.write(vec![e]);
        slug
    }

    /// Creates `child` as a phase-of fork of `parent`.
    pub fn fork(&mut self, parent: &str, child: &str) -> String {
        let c = self.create(child);
        let ts = self.tick();
        let e = NewEvent::fork(&self.session.id, ts, &s(parent), &c, EdgeType::PhaseOf);
        self.write(vec![e]);
        c
    }

    pub fn link(&mut self, from: &str, to: &str, edge: EdgeType) {
        let ts = self.tick();
        let e = NewEvent::link(&self.session.id, ts, &s(from), &s(to), edge);
        self.write(vec![e]);
    }

    pub fn status(&mut self, name: &str, st: Status) {
        let ts = self.tick();
        let e = NewEvent::update_status(&self.session.id, ts, &s(name), st);
        self.write(vec![e]);
    }

    pub fn meta(&mut self, name: &str, key: &str, value: &str) {
        let ts = self.tick();
        let e = NewEvent::set_metadata(&self.session.id, ts, &s(name), key, value);
        self.write(vec![e]);
    }

    pub fn observe(&mut self, name: &str, text: &str) {
        let ts = self.tick();
        let e = NewEvent::observation(&self.session.id, ts, &s(name), text);
        self.write(vec![e]);
    }

    pub fn current(&mut self, name: &str) {
        self.session.current = Some(s(name));
    }

    /// Runs on `surface`; the text, or the plain diagnostic. In twin mode
    /// a query also runs on PostgreSQL and must answer the same text: a
    /// query that writes nothing on the twin holding the same events; a
    /// mutation (`!` on the write surface) on a fresh PostgreSQL copy of
    /// the events from before it ran.
    pub fn on(&self, surface: Surface, q: &str) -> String {
        let mutation = surface == Surface::Write && q.contains('!');
        let twin = twin_mode();
        let before = if twin { self.events() } else { 0 };
        let prior = if twin && mutation {
            Some(cairn::store::pg::source_events(&self.store).unwrap())
        } else {
            None
        };
        let out = match self.engine.run(&self.store, &self.session, q, surface) {
            Ok(t) => t,
            Err(d) => d.render_plain(),
        };
        if let Some(prior) = prior {
            if let Some(url) = pg::url() {
                let target = cairn::store::pg::PgTarget::parse(&url, None).unwrap();
                let copy = cairn::store::pg::PgStore::open(&target).unwrap();
                copy.push(&prior, |_, _| {}).unwrap();
                let pg = match self.engine.run_pg(&copy, &self.session, q, surface) {
                    Ok(t) => t,
                    Err(d) => d.render_plain(),
                };
                assert_eq!(
                    pg, out,
                    "PostgreSQL differs from SQLite on the mutation {q}"
                );
                self.count_twin(q);
            }
        } else if twin
            && self.events() == before
            && let Some(pg) = self.on_pg(surface, q)
        {
            assert_eq!(pg, out, "PostgreSQL differs from SQLite on {q}");
            self.count_twin(q);
        }
        out
    }

    fn count_twin(&self, q: &str) {
        let n = TWIN_SAME.fetch_add(1, Ordering::SeqCst) + 1;
        if std::env::var_os("CAIRN_TWIN_LOG").is_some() {
            eprintln!("twin #{n} identical: {q}");
        }
    }

    /// Runs on the read surface.
    pub fn r(&self, q: &str) -> String {
        self.on(Surface::Read, q)
    }

    /// Runs on the write surface.
    pub fn w(&self, q: &str) -> String {
        self.on(Surface::Write, q)
    }

    pub fn events(&self) -> i64 {
        self.store.event_count().unwrap()
    }
}

/// The exact refusal of §3.
pub const REFUSED: &str =
    "Query error: Mutations need the task_query_write surface; task_query is read-only.";

/// One store holding every shape the §8 read queries need; current task
/// `parent`.
pub fn seeded() -> Fx {
    let mut f = Fx::new();
    f.create("parent");
    f.fork("parent", "child");
    f.create("alpha");
    f.create("beta");
    f.link("alpha", "beta", EdgeType::DependsOn);
    f.create("xray");
    f.meta("xray", "display-name", "X-Ray");
    f.fork("parent", "p1");
    f.fork("parent", "p2");
    f.link("p2", "p1", EdgeType::DependsOn);
    f.create("a");
    f.create("b");
    f.create("c");
    f.link("a", "b", EdgeType::Related);
    f.link("b", "c", EdgeType::Related);
    f.link("c", "a", EdgeType::Related);
    f.create("fan");
    f.create("done");
    f.create("live");
    f.link("fan", "done", EdgeType::DependsOn);
    f.link("fan", "live", EdgeType::DependsOn);
    f.status("done", Status::Completed);
    f.create_described("tokenizer", "Fix the BM25 ranking");
    f.observe("a", "one");
    f.observe("a", "two");
    f.meta("a", "priority", "high");
    assert_eq!(f.w(r#"(-> (define! "mine" (active)) (:count))"#), "13");
    f.current("parent");
    f
}

/// The time-limit fixture: 200 tasks `2026-01-01-h000` .. `h199`, each
/// related to the next 20, so nested `all` over related hops visits 20^k
/// paths per task (seconds of work; `tq_plan_write.rs`, `tq_cancel.rs`,
/// `mcp_wire.rs`).
pub fn heavy_events(sid: &str) -> Vec<NewEvent> {
    let mut events = Vec::new();
    for i in 0..200 {
        events.push(NewEvent::task_create(
            sid,
            1,
            &s(&format!("h{i:03}")),
            None,
            None,
        ));
    }
    for i in 0..200 {
        for d in 1..=20 {
            let j = (i + d) % 200;
            events.push(NewEvent::link(
                sid,
                1,
                &s(&format!("h{i:03}")),
                &s(&format!("h{j:03}")),
                EdgeType::Related,
            ));
        }
    }
    events
}

/// `cairn ARGS` run in `dir` (the store found from the directory, no
/// `CAIRN_DB`, no `CAIRN_NOW`), with `dir` as HOME: (stdout, stderr, exit
/// code).
pub fn cairn_in(dir: &Path, args: &[&str]) -> (String, String, i32) {
    let out = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(args)
        .current_dir(dir)
        .env_remove("CAIRN_DB")
        .env_remove("CAIRN_NOW")
        .env("HOME", dir)
        .output()
        .unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}
