//! Opening a store: the file, its SQLite settings, schema creation and
//! forward migration (spec/store.md "SQLite settings"), plus the small
//! read-only lookups other layers call.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior, params};

use super::error::StoreError;
use super::event::LoggedEvent;
use super::log::Logs;
use super::log::reconcile::SyncState;
use super::reader::WarmReader;
use super::schema::{MIGRATIONS, SCHEMA_VERSION, Step};
use super::slug;

/// How long a connection waits for another writer before giving up (30 s).
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// The contents of the `.gitignore` written next to a new `.cairn/cairn.db`.
pub const GITIGNORE: &str = "cairn.db*\n";

/// One project's store: a read-write SQLite connection to `cairn.db` and its
/// path (spec/store.md). Not `Sync`; open one per thread or process.
#[derive(Debug)]
pub struct Store {
    pub(crate) conn: Connection,
    path: PathBuf,
    /// The per-task logs beside the database (`None`: not named `cairn.db`).
    pub(crate) logs: Option<Logs>,
    /// What the per-call reconcile check last saw.
    pub(crate) sync_state: RefCell<SyncState>,
    /// The warm read-only connection, opened on first use (`reader.rs`).
    pub(crate) warm: RefCell<Option<WarmReader>>,
}

impl Store {
    /// Opens the store at `path` (the `cairn.db` file), creating missing
    /// directories, the file, the schema (stamped [`SCHEMA_VERSION`]) and,
    /// when the directory is named `.cairn`, `.cairn/.gitignore` with
    /// `cairn.db*`. An older schema is migrated forward; a current one is
    /// opened without taking the write lock. Settings: WAL, foreign keys,
    /// `synchronous=NORMAL`, 30 s busy timeout.
    ///
    /// A database named `cairn.db` keeps per-task logs beside it
    /// (spec/store.md "The plan travels with the repository"): opening writes
    /// the `.gitattributes` union rule and the `.gitignore` lines when
    /// missing and reconciles — log lines the database lacks are ingested (a
    /// missing `cairn.db` is rebuilt from the logs this way), database events
    /// the logs lack are appended.
    ///
    /// Errors: [`StoreError::Io`] (directories, logs), [`StoreError::NoFts5`],
    /// [`StoreError::SchemaTooNew`], [`StoreError::Sqlite`].
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| StoreError::io(dir, e))?;
            if dir.file_name().is_some_and(|n| n == ".cairn") {
                let ignore = dir.join(".gitignore");
                if !ignore.exists() {
                    std::fs::write(&ignore, GITIGNORE).map_err(|e| StoreError::io(&ignore, e))?;
                }
            }
        }
        let conn = Connection::open(path)?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        require_fts5(&conn)?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        // Switching to WAL and migrating take locks for which SQLite does not
        // always call the busy handler (two processes creating one store at
        // once): retry those on SQLITE_BUSY until the busy timeout.
        retry_busy(|| {
            let mode: String = conn.query_row("PRAGMA journal_mode", [], |r| r.get(0))?;
            if !mode.eq_ignore_ascii_case("wal") {
                let _: String = conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))?;
            }
            migrate(&conn)
        })?;
        let logs = Logs::for_db(path);
        if let Some(logs) = &logs {
            logs.ensure_git_files()?;
        }
        let store = Store {
            conn,
            path: path.to_path_buf(),
            logs,
            sync_state: RefCell::new(SyncState::default()),
            warm: RefCell::new(None),
        };
        store.reconcile(false)?;
        Ok(store)
    }

    /// The per-task logs of this store, if it keeps them.
    pub fn logs(&self) -> Option<&Logs> {
        self.logs.as_ref()
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

/// True when `options` (rows of `PRAGMA compile_options`) include FTS5.
pub fn has_fts5<S: AsRef<str>>(options: &[S]) -> bool {
    options.iter().any(|o| o.as_ref() == "ENABLE_FTS5")
}

fn require_fts5(conn: &Connection) -> Result<(), StoreError> {
    let mut stmt = conn.prepare("PRAGMA compile_options")?;
    let options = stmt
        .query_map([], |r| r.get::<_, String>(0))?
        .collect::<Result<Vec<_>, _>>()?;
    if has_fts5(&options) {
        Ok(())
    } else {
        Err(StoreError::NoFts5)
    }
}

fn read_version(conn: &Connection) -> Result<i64, StoreError> {
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

/// Brings the schema to [`SCHEMA_VERSION`]. Reads the version first and takes
/// the write lock (`BEGIN IMMEDIATE`) only when behind.
/// Runs `f` again while it fails with `SQLITE_BUSY`/`SQLITE_LOCKED`, sleeping
/// 10 ms between tries, for at most [`BUSY_TIMEOUT`]; then returns its last
/// result.
fn retry_busy<T>(mut f: impl FnMut() -> Result<T, StoreError>) -> Result<T, StoreError> {
    let start = std::time::Instant::now();
    loop {
        match f() {
            Err(StoreError::Sqlite(rusqlite::Error::SqliteFailure(e, _)))
                if matches!(
                    e.code,
                    rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
                ) && start.elapsed() < BUSY_TIMEOUT =>
            {
                std::thread::sleep(Duration::from_millis(10));
            }
            other => return other,
        }
    }
}

fn migrate(conn: &Connection) -> Result<(), StoreError> {
    let version = read_version(conn)?;
    if version == SCHEMA_VERSION {
        return Ok(());
    }
    if version > SCHEMA_VERSION {
        return Err(StoreError::SchemaTooNew {
            found: version,
            supported: SCHEMA_VERSION,
        });
    }
    let tx = rusqlite::Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
    // Another process may have migrated while we waited for the lock.
    let version = read_version(&tx)?;
    if version > SCHEMA_VERSION {
        return Err(StoreError::SchemaTooNew {
            found: version,
            supported: SCHEMA_VERSION,
        });
    }
    let from =
        usize::try_from(version).map_err(|_| StoreError::BadSchemaVersion(version.to_string()))?;
    for steps in MIGRATIONS.iter().skip(from) {
        for step in steps.iter() {
            run_step(&tx, step)?;
        }
    }
    tx.execute(
        "INSERT INTO schema_meta(key, value) VALUES ('version', ?1)
         ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        params![SCHEMA_VERSION.to_string()],
    )?;
    tx.commit()?;
    Ok(())
}

/// Runs one migration step on `conn` (inside the migration transaction).
fn run_step(conn: &Connection, step: &Step) -> Result<(), StoreError> {
    match step {
        Step::Sql(batch) => conn.execute_batch(batch)?,
        Step::AddColumns { table, columns } => {
            // `table_xinfo` also lists generated columns.
            let mut stmt = conn.prepare("SELECT name FROM pragma_table_xinfo(?1)")?;
            let have = stmt
                .query_map(params![table], |r| r.get::<_, String>(0))?
                .collect::<Result<Vec<_>, _>>()?;
            for (column, decl) in columns.iter() {
                if !have.iter().any(|h| h == column) {
                    // Identifiers come from `schema.rs`, never from input.
                    conn.execute_batch(&format!("ALTER TABLE {table} ADD COLUMN {column} {decl}"))?;
                }
            }
        }
        Step::Refold(types) => {
            super::rebuild::refold_types(conn, types)?;
        }
    }
    Ok(())
}

/// A read-only connection to the database at `path`
/// (`SQLITE_OPEN_READ_ONLY`, 30 s busy timeout, `query_only`): what every
/// reader of the store opens (`Store::reader`, the warm reader, the change
/// counter). Errors: [`StoreError::Sqlite`].
pub(crate) fn open_read_only(path: &Path) -> Result<Connection, StoreError> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI,
    )?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    conn.pragma_update(None, "query_only", "ON")?;
    Ok(conn)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fts5_detection() {
        assert!(has_fts5(&["THREADSAFE=1", "ENABLE_FTS5"]));
        assert!(!has_fts5(&["THREADSAFE=1", "ENABLE_FTS4"]));
    }
}
