//! The compile cache (issue 23 "the engine's fixed cost"; docs/planner.md
//! "The compile cache"): a read query's text → its plan and its ONE
//! statement, kept per warm connection, so a repeated query (an agent
//! polling `plan-frontier`, a subscription re-running its view) skips the
//! lexer, parser, checker, planner, rewrites and lowering and goes straight
//! to the statement SQLite (or PostgreSQL) already prepared.
//!
//! An entry is keyed by everything the statement depends on besides the
//! store's rows: the text, the surface, the session's current task and
//! agent name, the optimizer options, and the catalog (metadata keys and
//! user views) it was compiled against — the whole cache is dropped when
//! the catalog changes. The clock reading claims are judged by is not part
//! of the key: the statement records which parameters hold it and they are
//! rebound at each run ([`Compiled::statement_at`]). Write queries and
//! queries that fail to compile are never cached. Bounds: at most
//! [`CACHE_ENTRIES`] entries (the whole cache is dropped when full) and
//! texts of at most [`CACHE_TEXT_MAX`] bytes.

use std::borrow::Cow;
use std::collections::HashMap;

use std::sync::Arc;

use super::ast::Surface;
use super::ir::Options;
use super::plan::Plan;
use super::sql::{Param, Statement};
use crate::store::reader::CatalogData;

/// How many compiled queries one connection keeps.
pub const CACHE_ENTRIES: usize = 256;

/// The longest text (bytes) that is cached; longer ones compile each time.
pub const CACHE_TEXT_MAX: usize = 4096;

/// What a cached statement depends on besides the rows and the clock.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Key {
    text: String,
    surface: Surface,
    current: Option<String>,
    agent: Option<String>,
    enabled: bool,
    text_budget: Option<usize>,
    counters: bool,
}

impl Key {
    /// The key of `text` compiled on `surface` for a session with
    /// `current` and `agent`, under `opts`; `None` when the text is too
    /// long to cache ([`CACHE_TEXT_MAX`]).
    pub fn new(
        text: &str,
        surface: Surface,
        current: Option<&str>,
        agent: Option<&str>,
        opts: &Options,
    ) -> Option<Key> {
        if text.len() > CACHE_TEXT_MAX {
            return None;
        }
        Some(Key {
            text: text.to_string(),
            surface,
            current: current.map(str::to_string),
            agent: agent.map(str::to_string),
            enabled: opts.enabled,
            text_budget: opts.text_budget,
            counters: opts.counters,
        })
    }
}

/// The key of a run of `text` (none for a typed query without text) by
/// `session` on `surface` under `opts`: [`Key::new`] with the session's
/// current task and agent. What both engines' read paths look up.
pub fn key_for(
    text: Option<&str>,
    surface: Surface,
    session: &crate::session::Session,
    opts: &Options,
) -> Option<Key> {
    text.and_then(|t| {
        Key::new(
            t,
            surface,
            session.current.as_deref(),
            session.agent.as_deref(),
            opts,
        )
    })
}

/// A compiled read query: its plan (the pipeline its rows are read by) and
/// its statement, with the parameters that hold the clock reading.
#[derive(Debug, Clone)]
pub struct Compiled {
    /// The read plan.
    pub plan: Plan,
    /// The one statement, as lowered at `plan.now`.
    pub statement: Statement,
    /// Indexes into `statement.params` bound to the clock reading.
    pub now_slots: Vec<usize>,
    /// The metadata keys the compile may have resolved a field to, which
    /// PostgreSQL's one-round-trip read checks are still live
    /// (`tq::exec_pg::named_keys`, `tq::exec_pg::gated`); empty on SQLite,
    /// whose reader compares the whole catalog before a hit.
    pub named_keys: Vec<String>,
    /// How long the last run of the statement took ([`Compiled::ran`]).
    pub last_run: LastRun,
    /// PostgreSQL: the statement gated on the catalog it was compiled
    /// against (`tq::exec_pg::gated`), built once with the entry; its first
    /// parameters are the statement's, so [`Compiled::now_slots`] index
    /// both. `None` on SQLite.
    pub gated: Option<Statement>,
}

/// The longest last run of a cached query that the SQLite read path runs
/// before checking the catalog rather than after (the engine's quick read:
/// when another connection committed in between, that run is thrown away
/// and the query runs again, so only a short one is risked).
pub const QUICK_RUN: std::time::Duration = std::time::Duration::from_micros(200);

/// The duration of a compiled statement's last run, in microseconds
/// (`u64::MAX` before the first), shared by every holder of the entry.
#[derive(Debug)]
pub struct LastRun(std::sync::atomic::AtomicU64);

impl Default for LastRun {
    fn default() -> LastRun {
        LastRun(std::sync::atomic::AtomicU64::new(u64::MAX))
    }
}

impl Clone for LastRun {
    fn clone(&self) -> LastRun {
        LastRun(std::sync::atomic::AtomicU64::new(
            self.0.load(std::sync::atomic::Ordering::Relaxed),
        ))
    }
}

impl Compiled {
    /// Records that a run of the statement took `took`.
    pub fn ran(&self, took: std::time::Duration) {
        let micros = u64::try_from(took.as_micros()).unwrap_or(u64::MAX - 1);
        self.last_run
            .0
            .store(micros, std::sync::atomic::Ordering::Relaxed);
    }

    /// True when the statement has run and its last run took at most
    /// `longest` (the engine's quick-read bound, default [`QUICK_RUN`]).
    pub fn ran_within(&self, longest: std::time::Duration) -> bool {
        let last = self.last_run.0.load(std::sync::atomic::Ordering::Relaxed);
        last != u64::MAX && u128::from(last) <= longest.as_micros()
    }

    /// The statement with its clock parameters bound to `now()` (Unix
    /// seconds); borrowed, and the clock not read, when it reads no clock.
    pub fn statement_at(&self, now: impl FnOnce() -> i64) -> Cow<'_, Statement> {
        bind_now(&self.statement, &self.now_slots, now)
    }

    /// The PostgreSQL one-round-trip statement ([`Compiled::gated`]) with
    /// its clock parameters bound to `now()`; `None` when the entry has
    /// none (SQLite).
    pub fn gated_at(&self, now: impl FnOnce() -> i64) -> Option<Cow<'_, Statement>> {
        self.gated
            .as_ref()
            .map(|g| bind_now(g, &self.now_slots, now))
    }
}

/// `st` with the parameters at `slots` bound to `now()`; borrowed, and the
/// clock not read, when there are none.
fn bind_now<'a>(
    st: &'a Statement,
    slots: &[usize],
    now: impl FnOnce() -> i64,
) -> Cow<'a, Statement> {
    if slots.is_empty() {
        return Cow::Borrowed(st);
    }
    let now = now();
    let mut st = st.clone();
    for &i in slots {
        if let Some(p) = st.params.get_mut(i) {
            *p = Param::Int(now);
        }
    }
    Cow::Owned(st)
}

/// One connection's cache (kept in the warm reader's slot,
/// [`crate::store::WarmReader::slot`]).
#[derive(Debug, Default)]
pub struct CompileCache {
    /// The catalog the entries were compiled against.
    catalog: Option<Arc<CatalogData>>,
    /// foldhash: the default SipHash of a key was a tenth of a cached
    /// read's own instructions (issue 23, callgrind).
    entries: HashMap<Key, Arc<Compiled>, foldhash::fast::RandomState>,
    hits: u64,
}

impl CompileCache {
    /// The entry for `key` compiled against `catalog` (the same `Arc` or
    /// the same content; another catalog drops every entry first).
    pub fn get(&mut self, catalog: &Arc<CatalogData>, key: &Key) -> Option<Arc<Compiled>> {
        let hit = self.find(catalog, key);
        if hit.is_some() {
            self.hits += 1;
        }
        hit
    }

    /// [`CompileCache::get`] without counting a hit: the SQLite quick read
    /// (`Engine`'s catalog-after path) counts one with
    /// [`CompileCache::count_hit`] only when it keeps the answer.
    pub fn find(&mut self, catalog: &Arc<CatalogData>, key: &Key) -> Option<Arc<Compiled>> {
        self.retarget(catalog);
        self.entries.get(key).cloned()
    }

    /// Counts one hit ([`CompileCache::find`]).
    pub fn count_hit(&mut self) {
        self.hits += 1;
    }

    /// Keeps `compiled` under `key` for `catalog`.
    /// The entry for `key` with the catalog it was compiled against,
    /// without a catalog to compare (the PostgreSQL read gates the
    /// statement on that catalog instead: `tq::exec_pg::gated`). Counts a
    /// hit.
    pub fn peek(&mut self, key: &Key) -> Option<(Arc<CatalogData>, Arc<Compiled>)> {
        let catalog = self.catalog.clone()?;
        let hit = self.entries.get(key).cloned()?;
        self.hits += 1;
        Some((catalog, hit))
    }

    pub fn put(&mut self, catalog: &Arc<CatalogData>, key: Key, compiled: Arc<Compiled>) {
        self.retarget(catalog);
        if self.entries.len() >= CACHE_ENTRIES {
            self.entries.clear();
        }
        self.entries.insert(key, compiled);
    }

    /// How many lookups found an entry (tests).
    pub fn hits(&self) -> u64 {
        self.hits
    }

    fn retarget(&mut self, catalog: &Arc<CatalogData>) {
        // The same `Arc` (SQLite's warm reader keeps it while the content
        // is unchanged) or the same content (PostgreSQL reads the catalog
        // with every query).
        let same = self
            .catalog
            .as_ref()
            .is_some_and(|c| Arc::ptr_eq(c, catalog) || **c == **catalog);
        if !same {
            self.entries.clear();
            self.catalog = Some(Arc::clone(catalog));
        }
    }
}
