//! A project's store on either engine (spec/team.md: "the SAME TQ, tools,
//! CLI and answers"): [`Db`] is what the tools, the MCP server and the
//! verbs hold. Each method is the same operation on SQLite ([`Store`],
//! `store/read.rs`, `store/search.rs`) or PostgreSQL ([`PgStore`],
//! `pg/read.rs`); the answers are the same for the same events (search:
//! the same set of tasks, order engine-defined).

use std::path::Path;

use super::error::StoreError;
use super::event::NewEvent;
use super::handle::Store;
use super::pg::PgStore;
use super::pg::fold::Cx;
use super::pg::write::{TxError, mint_slug_in, task_exists_in};
use super::read::{self, EventRow, OpenTask, TaskState};
use super::search::{self, SearchHit};
use super::write::{WriteReport, WriteTx};

/// One project's store: the embedded SQLite file or a PostgreSQL schema.
// One per session or command: its size does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Db {
    /// `cairn.db` (the default).
    Sqlite(Store),
    /// A schema of a PostgreSQL database (`--db postgres://…`).
    Pg(Box<PgStore>),
}

/// What a write closure may do inside [`Db::write_with`]'s one transaction,
/// on either engine.
pub trait WriteCx {
    /// A fresh slug for `name` on `today` (as `Store::mint_slug`).
    fn mint_slug(&mut self, name: &str, today: time::Date) -> Result<String, StoreError>;
    /// True when task `slug` exists (depot prefix stripped).
    fn task_exists(&mut self, slug: &str) -> Result<bool, StoreError>;
    /// Appends and folds `events`; their `seq`s.
    fn append(&mut self, events: &[NewEvent]) -> Result<Vec<i64>, StoreError>;
}

impl WriteCx for WriteTx<'_> {
    fn mint_slug(&mut self, name: &str, today: time::Date) -> Result<String, StoreError> {
        WriteTx::mint_slug(self, name, today)
    }
    fn task_exists(&mut self, slug: &str) -> Result<bool, StoreError> {
        WriteTx::task_exists(self, slug)
    }
    fn append(&mut self, events: &[NewEvent]) -> Result<Vec<i64>, StoreError> {
        WriteTx::append(self, events)
    }
}

struct PgWrite<'a, 't, 'c>(&'a mut Cx<'t, 'c>);

impl WriteCx for PgWrite<'_, '_, '_> {
    fn mint_slug(&mut self, name: &str, today: time::Date) -> Result<String, StoreError> {
        mint_slug_in(self.0, name, today)
    }
    fn task_exists(&mut self, slug: &str) -> Result<bool, StoreError> {
        task_exists_in(self.0, slug)
    }
    fn append(&mut self, events: &[NewEvent]) -> Result<Vec<i64>, StoreError> {
        match super::pg::write::append(self.0, events) {
            Ok(s) => Ok(s),
            Err(TxError::Fail(e)) => Err(e),
            Err(TxError::Retry) => Err(StoreError::Postgres(
                "a concurrent write conflicted; nothing was recorded. Try again.".to_string(),
            )),
        }
    }
}

/// A borrowed [`Db`]: what the tools and the engine take (`Copy`), so a
/// caller holding a plain [`Store`] passes `DbRef::from(&store)`.
#[derive(Debug, Clone, Copy)]
pub enum DbRef<'a> {
    /// A SQLite store.
    Sqlite(&'a Store),
    /// A PostgreSQL store.
    Pg(&'a PgStore),
}

impl<'a> From<&'a Store> for DbRef<'a> {
    fn from(s: &'a Store) -> DbRef<'a> {
        DbRef::Sqlite(s)
    }
}

impl<'a> From<&'a PgStore> for DbRef<'a> {
    fn from(p: &'a PgStore) -> DbRef<'a> {
        DbRef::Pg(p)
    }
}

impl<'a> From<&'a Db> for DbRef<'a> {
    fn from(d: &'a Db) -> DbRef<'a> {
        d.r()
    }
}

impl Db {
    /// This store, borrowed.
    pub fn r(&self) -> DbRef<'_> {
        match self {
            Db::Sqlite(s) => DbRef::Sqlite(s),
            Db::Pg(p) => DbRef::Pg(p),
        }
    }
}

impl<'a> DbRef<'a> {
    /// The current task kept in the store for the stateless agent `agent`
    /// (`agent_current`, outside the event log; issue 22). Errors: the
    /// engine's.
    pub fn agent_current(self, agent: &str) -> Result<Option<String>, StoreError> {
        match self {
            DbRef::Sqlite(s) => s.agent_current(agent),
            DbRef::Pg(p) => p.agent_current(agent),
        }
    }

    /// Keeps `slug` (or no task) as the stateless agent `agent`'s current
    /// task. Errors: the engine's.
    pub fn set_agent_current(self, agent: &str, slug: Option<&str>) -> Result<(), StoreError> {
        match self {
            DbRef::Sqlite(s) => s.set_agent_current(agent, slug),
            DbRef::Pg(p) => p.set_agent_current(agent, slug),
        }
    }

    /// The SQLite store, when this is one.
    pub fn sqlite(self) -> Option<&'a Store> {
        match self {
            DbRef::Sqlite(s) => Some(s),
            DbRef::Pg(_) => None,
        }
    }

    /// The PostgreSQL store, when this is one.
    pub fn pg(self) -> Option<&'a PgStore> {
        match self {
            DbRef::Sqlite(_) => None,
            DbRef::Pg(p) => Some(p),
        }
    }

    /// The SQLite file (`None` on PostgreSQL).
    pub fn path(self) -> Option<&'a Path> {
        self.sqlite().map(Store::path)
    }

    /// Where the store is, as it may be printed: the file's path, or the
    /// URL (password as `***`) and schema.
    pub fn describe(self) -> String {
        match self {
            DbRef::Sqlite(s) => s.path().display().to_string(),
            DbRef::Pg(p) => format!("{} schema {}", p.target().shown, p.target().schema),
        }
    }

    /// THE write boundary on either engine: `events` appended and folded in
    /// one transaction. Errors: [`StoreError`].
    pub fn write(self, events: &[NewEvent]) -> Result<WriteReport, StoreError> {
        match self {
            DbRef::Sqlite(s) => s.write(events),
            DbRef::Pg(p) => p.write(events),
        }
    }

    /// Runs `f` inside one write transaction (slug minting, existence
    /// checks and appends see each other and commit together). On
    /// PostgreSQL `f` may run again when the transaction is retried.
    /// Errors: `f`'s, or the engine's.
    pub fn write_with<T>(
        &self,
        mut f: impl FnMut(&mut dyn WriteCx) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        match self {
            DbRef::Sqlite(s) => s.write_with(|tx| f(tx)),
            DbRef::Pg(p) => p.write_tx(|cx| f(&mut PgWrite(cx)).map_err(TxError::Fail)),
        }
    }

    /// Reconciles with the per-task logs (SQLite); nothing on PostgreSQL,
    /// whose database is the durable record.
    pub fn sync(self) -> Result<(), StoreError> {
        match self {
            DbRef::Sqlite(s) => s.sync(),
            DbRef::Pg(_) => Ok(()),
        }
    }

    /// True when task `slug` exists (depot prefix stripped).
    pub fn task_exists(self, slug: &str) -> Result<bool, StoreError> {
        match self {
            DbRef::Sqlite(s) => s.task_exists(slug),
            DbRef::Pg(p) => p.task_exists(slug),
        }
    }

    /// Live metadata keys, sorted.
    pub fn metadata_keys(self) -> Result<Vec<String>, StoreError> {
        match self {
            DbRef::Sqlite(s) => s.metadata_keys(),
            DbRef::Pg(p) => p.metadata_keys(),
        }
    }

    /// The number of events.
    pub fn event_count(self) -> Result<i64, StoreError> {
        match self {
            DbRef::Sqlite(s) => s.event_count(),
            DbRef::Pg(p) => p.event_count(),
        }
    }

    /// [`read::task_state`].
    pub fn task_state(
        &self,
        slug: &str,
        recent: usize,
        handoffs: usize,
    ) -> Result<Option<TaskState>, StoreError> {
        match self {
            DbRef::Sqlite(s) => read::task_state(s.conn(), slug, recent, handoffs),
            DbRef::Pg(p) => p.task_state(slug, recent, handoffs),
        }
    }

    /// [`read::typed_name`].
    pub fn typed_name(self, slug: &str) -> Result<Option<String>, StoreError> {
        match self {
            DbRef::Sqlite(s) => read::typed_name(s.conn(), slug),
            DbRef::Pg(p) => p.typed_name(slug),
        }
    }

    /// [`read::open_tasks`].
    pub fn open_tasks(self) -> Result<Vec<OpenTask>, StoreError> {
        match self {
            DbRef::Sqlite(s) => read::open_tasks(s.conn()),
            DbRef::Pg(p) => p.open_tasks(),
        }
    }

    /// [`Store::open_tasks_like`] (PostgreSQL: every open task, which the
    /// caller scores).
    pub fn open_tasks_like(
        self,
        words: &std::collections::BTreeSet<String>,
        min_score: f64,
    ) -> Result<Vec<OpenTask>, StoreError> {
        match self {
            DbRef::Sqlite(s) => s.open_tasks_like(words, min_score),
            DbRef::Pg(p) => p.open_tasks(),
        }
    }

    /// [`read::task_status`].
    pub fn task_status(self, slug: &str) -> Result<Option<String>, StoreError> {
        match self {
            DbRef::Sqlite(s) => read::task_status(s.conn(), slug),
            DbRef::Pg(p) => p.task_status(slug),
        }
    }

    /// [`read::depends_on_edges`].
    pub fn depends_on_edges(self) -> Result<Vec<(String, String)>, StoreError> {
        match self {
            DbRef::Sqlite(s) => read::depends_on_edges(s.conn()),
            DbRef::Pg(p) => p.depends_on_edges(),
        }
    }

    /// [`read::recent_slugs`].
    pub fn recent_slugs(self, n: usize) -> Result<Vec<String>, StoreError> {
        match self {
            DbRef::Sqlite(s) => read::recent_slugs(s.conn(), n),
            DbRef::Pg(p) => p.recent_slugs(n),
        }
    }

    /// [`read::event_types`].
    pub fn event_types(self) -> Result<Vec<String>, StoreError> {
        match self {
            DbRef::Sqlite(s) => read::event_types(s.conn()),
            DbRef::Pg(p) => p.event_types(),
        }
    }

    /// [`read::timeline_count`].
    pub fn timeline_count(
        &self,
        slug: &str,
        types: &[String],
        before: Option<i64>,
        after: Option<i64>,
    ) -> Result<i64, StoreError> {
        match self {
            DbRef::Sqlite(s) => read::timeline_count(s.conn(), slug, types, before, after),
            DbRef::Pg(p) => p.timeline_count(slug, types, before, after),
        }
    }

    /// [`read::timeline_page`].
    pub fn timeline_page(
        &self,
        slug: &str,
        types: &[String],
        before: Option<i64>,
        after: Option<i64>,
        limit: usize,
    ) -> Result<Vec<EventRow>, StoreError> {
        match self {
            DbRef::Sqlite(s) => read::timeline_page(s.conn(), slug, types, before, after, limit),
            DbRef::Pg(p) => p.timeline_page(slug, types, before, after, limit),
        }
    }

    /// [`read::slugs_with_prefix`].
    pub fn slugs_with_prefix(
        &self,
        prefix: &str,
        limit: usize,
    ) -> Result<(Vec<String>, usize), StoreError> {
        match self {
            DbRef::Sqlite(s) => read::slugs_with_prefix(s.conn(), prefix, limit),
            DbRef::Pg(p) => p.slugs_with_prefix(prefix, limit),
        }
    }

    /// [`search::search`] (the same set of tasks on both engines; the order
    /// and the snippets are each engine's).
    pub fn search(
        &self,
        expr: &str,
        task: Option<&str>,
        limit: usize,
    ) -> Result<Vec<SearchHit>, StoreError> {
        match self {
            DbRef::Sqlite(s) => search::search(s.conn(), expr, task, limit),
            DbRef::Pg(p) => p.search(expr, task, limit),
        }
    }
}
