//! The store handle (spec/store.md): [`Store`], one project's read-write
//! connection with its path, its per-task logs and what the per-call check
//! last saw, plus the small lookups every layer above calls (events, task
//! existence, slug minting, the schema version, the warm reader). It knows
//! no fold, write, log or reconcile: those layers add their methods to
//! [`Store`] from their own files, and `open.rs`, at the top, opens it.

use std::cell::{RefCell, RefMut};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension, params};

use super::checkpoint::Checkpointer;
use super::error::StoreError;
use super::event::LoggedEvent;
use super::log::Logs;
use super::names::NameIndex;
use super::read::OpenTask;
use super::reader::{ReaderGuard, WarmReader, open_read_only};
use super::slug;

/// One project's store: a read-write SQLite connection to `cairn.db` and its
/// path (spec/store.md). Not `Sync`; open one per thread or process.
#[derive(Debug)]
pub struct Store {
    /// The warm read-only connection, opened on first use (`reader.rs`).
    /// Declared first so it is closed first: the read-write connection,
    /// closed last, checkpoints the WAL and removes `-wal`/`-shm`.
    pub(crate) warm: RefCell<Option<WarmReader>>,
    /// The WAL checkpointer (`checkpoint.rs`; `None` on a read-only or
    /// in-memory store). Declared before `conn` so its thread and
    /// connection are gone when `conn` closes.
    pub(crate) checkpointer: Option<Checkpointer>,
    pub(crate) conn: Connection,
    pub(crate) path: PathBuf,
    /// The per-task logs beside the database (`None`: not named `cairn.db`).
    pub(crate) logs: Option<Logs>,
    /// What the per-call reconcile check last saw.
    pub(crate) sync_state: RefCell<SyncState>,
    /// The open tasks' name words (`names.rs`), built on first use.
    pub(crate) names: RefCell<NameIndex>,
    /// [`WriteTx::init_once`](super::WriteTx::init_once) ran on `conn`.
    pub(crate) write_init: std::cell::Cell<bool>,
}

/// The git index file's identity: `(mtime ns, size, inode)`.
pub(crate) type IndexStamp = (i128, u64, u64);

/// What the per-call check last saw, and the watermark cache.
#[derive(Debug, Default)]
pub(crate) struct SyncState {
    /// The epoch counter last seen (`None`: never reconciled).
    pub epoch: Option<u64>,
    /// The git index stamp last seen (`None` inside: no index file).
    pub index: Option<Option<IndexStamp>>,
    /// Watermarks by folder name (loaded on first scan).
    pub watermarks: Option<HashMap<String, (i128, u64)>>,
    /// Watermarks moved by this process's own appends, not yet stored in
    /// `schema_meta` (stored by the next reconcile or when the store drops).
    pub pending: HashMap<String, (i128, u64)>,
    /// Seq ranges `(first, last)` this process appended to the logs itself;
    /// the export mark moves across them when they are contiguous with it.
    pub exported: Vec<(i64, i64)>,
}

impl Store {
    /// The per-task logs of this store, if it keeps them.
    pub fn logs(&self) -> Option<&Logs> {
        self.logs.as_ref()
    }

    /// Every open task whose name's words (`names.rs`) score at least
    /// `min_score` against `words` (shared / all), by slug: what
    /// `task_create` reports as `possibleDuplicates`, without reading every
    /// open task on each create (issue 23). Errors: [`StoreError::Sqlite`].
    pub fn open_tasks_like(
        &self,
        words: &std::collections::BTreeSet<String>,
        min_score: f64,
    ) -> Result<Vec<OpenTask>, StoreError> {
        let mut names = self.names.borrow_mut();
        names.refresh(&self.conn)?;
        Ok(names.similar(words, min_score))
    }

    /// How many WAL checkpoints the background checkpointer has run
    /// (`checkpoint.rs`; 0 when it never started).
    pub fn background_checkpoints(&self) -> u64 {
        self.checkpointer.as_ref().map_or(0, Checkpointer::done)
    }

    /// The `cairn.db` path this store was opened at.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The read-write connection (store-internal reads, mutation target
    /// selection). Write only through `write`/`write_with`.
    pub fn conn(&self) -> &Connection {
        &self.conn
    }

    /// A NEW read-only connection to the same file (`SQLITE_OPEN_READ_ONLY`,
    /// 30 s busy timeout, `query_only`). Errors: [`StoreError::Sqlite`].
    pub fn reader(&self) -> Result<Connection, StoreError> {
        open_read_only(&self.path)
    }

    /// The number of events in the log.
    pub fn event_count(&self) -> Result<i64, StoreError> {
        Ok(self
            .conn
            .query_row("SELECT count(*) FROM events", [], |r| r.get(0))?)
    }

    /// True when the log holds at least one event (one probe of the
    /// primary key, where [`Store::event_count`] reads them all).
    pub fn has_events(&self) -> Result<bool, StoreError> {
        Ok(self
            .conn
            .query_row("SELECT EXISTS(SELECT 1 FROM events)", [], |r| r.get(0))?)
    }

    /// True when a task row with slug `slug` (depot prefix stripped) exists.
    pub fn task_exists(&self, slug: &str) -> Result<bool, StoreError> {
        task_exists_on(&self.conn, slug)
    }

    /// `Ok(bare slug)` when the task exists, else [`StoreError::NoTask`]
    /// (`No task SLUG.`, spec/store.md "Slugs and names").
    pub fn require_task(&self, slug: &str) -> Result<String, StoreError> {
        let bare = slug::strip_depot(slug);
        if self.task_exists(bare)? {
            Ok(bare.to_string())
        } else {
            Err(StoreError::NoTask(bare.to_string()))
        }
    }

    /// The slug a create of `name` on `today` would mint NOW (spec/store.md
    /// "Slugs and names"): `-2`, `-3`, ... when the slug already names a
    /// task. A preview only: another writer may take it before a later
    /// write; a create mints inside its write transaction with
    /// [`super::WriteTx::mint_slug`] (issue 14).
    /// Errors: [`StoreError::NameRequired`], [`StoreError::NameTooThin`].
    pub fn mint_slug(&self, name: &str, today: time::Date) -> Result<String, StoreError> {
        mint_slug_on(&self.conn, name, today)
    }

    /// Live metadata keys: distinct `task_metadata.key`, sorted (a loose
    /// index scan, see [`super::reader::CATALOG_SQL`]).
    pub fn metadata_keys(&self) -> Result<Vec<String>, StoreError> {
        Ok(super::reader::read_catalog(&self.conn)?.meta_keys)
    }

    /// The whole log in arrival order (`seq`), `data` parsed.
    pub fn events(&self) -> Result<Vec<LoggedEvent>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT seq, event_id, task_id, type, ts, session_id, prev_session_id, data
             FROM events ORDER BY seq",
        )?;
        let rows = stmt.query_map([], |r| {
            let data: String = r.get(7)?;
            Ok(LoggedEvent {
                seq: r.get(0)?,
                event_id: r.get(1)?,
                task_id: r.get(2)?,
                event_type: r.get(3)?,
                ts: r.get(4)?,
                session_id: r.get(5)?,
                prev_session_id: r.get(6)?,
                data: serde_json::from_str(&data).unwrap_or(serde_json::Value::Null),
            })
        })?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }

    /// The schema version stamped in `schema_meta` (0 when unstamped).
    pub fn schema_version(&self) -> Result<i64, StoreError> {
        read_version(&self.conn)
    }

    /// The store's warm read-only connection, opened on first use and kept
    /// for the store's lifetime (see [`WarmReader`]). Errors:
    /// [`StoreError::Sqlite`] when it cannot be opened.
    pub fn warm_reader(&self) -> Result<ReaderGuard<'_>, StoreError> {
        let Ok(mut slot) = self.warm.try_borrow_mut() else {
            return Ok(ReaderGuard::Fresh(Box::new(WarmReader::open(self.path())?)));
        };
        if slot.is_none() {
            *slot = Some(WarmReader::open(self.path())?);
        }
        match RefMut::filter_map(slot, Option::as_mut) {
            Ok(r) => Ok(ReaderGuard::Warm(r)),
            Err(_) => Ok(ReaderGuard::Fresh(Box::new(WarmReader::open(self.path())?))),
        }
    }
}

/// True when a task row with slug `slug` (depot prefix stripped) exists, as
/// seen by `conn` (inside a write transaction: under the write lock).
pub(crate) fn task_exists_on(conn: &Connection, slug: &str) -> Result<bool, StoreError> {
    let bare = slug::strip_depot(slug);
    Ok(conn
        .prepare_cached("SELECT 1 FROM tasks WHERE slug = ?1")?
        .query_row(params![bare], |_| Ok(()))
        .optional()?
        .is_some())
}

/// `YYYY-MM-DD-core[-N]` for `name` on `today`, the suffix the first one no
/// task row on `conn` holds. Errors as [`slug::slug_for`].
pub(crate) fn mint_slug_on(
    conn: &Connection,
    name: &str,
    today: time::Date,
) -> Result<String, StoreError> {
    let base = slug::slug_for(name, today)?;
    if !task_exists_on(conn, &base)? {
        return Ok(base);
    }
    let mut n: u64 = 2;
    loop {
        let candidate = format!("{base}-{n}");
        if !task_exists_on(conn, &candidate)? {
            return Ok(candidate);
        }
        n += 1;
    }
}

pub(crate) fn read_version(conn: &Connection) -> Result<i64, StoreError> {
    let has_meta: bool = conn.query_row(
        "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = 'schema_meta'",
        [],
        |r| r.get(0),
    )?;
    if !has_meta {
        return Ok(0);
    }
    let value: Option<String> = conn
        .query_row(
            "SELECT value FROM schema_meta WHERE key = 'version'",
            [],
            |r| r.get(0),
        )
        .optional()?;
    match value {
        None => Ok(0),
        Some(v) => v
            .trim()
            .parse()
            .map_err(|_| StoreError::BadSchemaVersion(v)),
    }
}
