//! Opening a store: the file, its SQLite settings, schema creation and
//! forward migration (spec/store.md "SQLite settings"), plus the small
//! read-only lookups other layers call. [`Store::open`] is the writer's
//! open (creates, reconciles, waits for the lock); [`Store::open_read`] is
//! a read command's (docs/store.md "Reads never wait, never create").

use std::cell::RefCell;
use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior, params};

use super::checkpoint::Checkpointer;
use super::error::StoreError;
use super::handle::{Store, SyncState, read_version};
use super::log::Logs;
use super::names::NameIndex;
use super::schema::{BUSY_TIMEOUT, MIGRATIONS, SCHEMA_VERSION, Step};

/// How long [`Store::open_read`] waits for the write lock before it skips
/// the reconcile and reads what is committed (200 ms: a normal write holds
/// the lock for milliseconds; a writer stopped mid-write holds it forever).
pub const READ_BUSY_WAIT: Duration = Duration::from_millis(200);

/// How [`Store::open_read`] found the store: what a read command says on
/// stderr before its answer (docs/store.md "Reads never wait, never create").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadOpen {
    /// The store exists and was reconciled with its logs (or keeps none),
    /// or a missing database was rebuilt from the logs beside it.
    Current,
    /// Another process holds the write lock or the append lock (a write in
    /// flight, an import): the reconcile was skipped without waiting and the
    /// reads see what is committed; the logs may hold events not shown yet.
    Busy,
    /// There is no store: no database file (or one without cairn's schema)
    /// and no task logs beside it. The [`Store`] is an empty one held in
    /// memory; nothing was created on disk.
    Absent,
}

/// The contents of the `.gitignore` written next to a new `.cairn/cairn.db`.
pub const GITIGNORE: &str = "cairn.db*\n";

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
        if let Some(logs) = Logs::for_db(path)
            && !path.try_exists().map_err(|e| StoreError::io(path, e))?
            && holds_logs(&logs)
        {
            build_from_logs(path, &logs)?;
        }
        let mut conn = Connection::open(path)?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        super::schema::stable_plans(&conn)?;
        require_fts5(&conn)?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        // Another program's database: refused before anything (not even the
        // journal mode) changes in it.
        if read_version(&conn)? == 0 {
            refuse_foreign(&conn)?;
        }
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
        // Checkpoints off the write path (issue 23), for a database file.
        let checkpointer = if is_file_db(path) {
            Some(Checkpointer::install(&mut conn, path)?)
        } else {
            None
        };
        let store = Store {
            checkpointer,
            conn,
            path: path.to_path_buf(),
            logs,
            sync_state: RefCell::new(SyncState::default()),
            names: RefCell::new(NameIndex::default()),
            write_init: std::cell::Cell::new(false),
            warm: RefCell::new(None),
        };
        store.reconcile(false)?;
        Ok(store)
    }

    /// Opens the store at `path` for a READ command: never waits on a
    /// writer, never creates a file, never writes `.gitignore`,
    /// `.gitattributes`, `epoch` or `append.lock`.
    ///
    /// - No database at `path` (nor cairn's schema in it) and no task logs
    ///   beside it: an empty store held in memory, [`ReadOpen::Absent`].
    /// - No database but task logs (a fresh clone): [`Store::open`], which
    ///   builds the database from the logs, [`ReadOpen::Current`].
    /// - Otherwise the file is opened without `SQLITE_OPEN_CREATE`, migrated
    ///   when its schema is older (that one-time upgrade waits for the lock
    ///   as [`Store::open`] does), and reconciled with its logs only as far
    ///   as possible without waiting: when another process holds
    ///   `append.lock` (a write between its transaction and its log append)
    ///   or the write lock for more than [`READ_BUSY_WAIT`], the reconcile
    ///   is skipped and the result is [`ReadOpen::Busy`] (WAL readers never
    ///   block, so every committed event is still read). The export pass
    ///   runs only when `append.lock` already exists.
    ///
    /// The returned store is read-only: its connection has `query_only` on
    /// (a write through it fails) and it keeps no logs (the per-call
    /// [`Store::sync`] does nothing).
    ///
    /// Errors: [`StoreError::Io`] (the path cannot be examined, e.g. a
    /// directory on it is a file), [`StoreError::NoFts5`],
    /// [`StoreError::SchemaTooNew`], [`StoreError::BadSchemaVersion`],
    /// [`StoreError::Sqlite`] (not a database, unreadable).
    pub fn open_read(path: &Path) -> Result<(Store, ReadOpen), StoreError> {
        let logs = Logs::for_db(path);
        if !path.try_exists().map_err(|e| StoreError::io(path, e))? {
            if logs.as_ref().is_some_and(holds_logs) {
                return Ok((Store::open(path)?, ReadOpen::Current));
            }
            return Ok((Store::open_absent()?, ReadOpen::Absent));
        }
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        super::schema::stable_plans(&conn)?;
        require_fts5(&conn)?;
        if read_version(&conn)? == 0 && !logs.as_ref().is_some_and(holds_logs) {
            return Ok((Store::open_absent()?, ReadOpen::Absent));
        }
        conn.pragma_update(None, "foreign_keys", "ON")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        retry_busy(|| migrate(&conn))?;
        let mut store = Store {
            checkpointer: None,
            conn,
            path: path.to_path_buf(),
            logs,
            sync_state: RefCell::new(SyncState::default()),
            names: RefCell::new(NameIndex::default()),
            write_init: std::cell::Cell::new(false),
            warm: RefCell::new(None),
        };
        let state = match store.logs.clone() {
            // A database not yet built from the logs beside it (a fresh
            // clone another process is folding right now): wait for the
            // build like a write would, never answer from the empty
            // database (hostile run M4: parallel first reads said `No
            // tasks.`).
            // (No event first: an indexed probe, where `count(*)` read
            // every event and the folder listing reads 10k names; issue 23.)
            Some(logs) if !store.has_events()? && holds_logs(&logs) => {
                store.reconcile(false)?;
                ReadOpen::Current
            }
            Some(logs) => store.reconcile_nowait(&logs)?,
            None => ReadOpen::Current,
        };
        store.logs = None;
        store.conn.pragma_update(None, "query_only", "ON")?;
        Ok((store, state))
    }

    /// True when there is a store at `path`: its database file exists, or
    /// task logs beside it do (a database [`Store::open`] would rebuild).
    /// Errors: [`StoreError::Io`] when the path cannot be examined.
    pub fn exists_at(path: &Path) -> Result<bool, StoreError> {
        if path.try_exists().map_err(|e| StoreError::io(path, e))? {
            return Ok(true);
        }
        Ok(Logs::for_db(path).as_ref().is_some_and(holds_logs))
    }

    /// An empty store in memory (a shared-cache in-memory database, so the
    /// warm reader's second connection sees it): what a read command reads
    /// when there is no store. Creates no file.
    fn open_absent() -> Result<Store, StoreError> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let uri = format!(
            "file:cairn-absent-{}-{}?mode=memory&cache=shared",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let store = Store::open(Path::new(&uri))?;
        store.conn.pragma_update(None, "query_only", "ON")?;
        Ok(store)
    }

    /// The reconcile of [`Store::open_read`]: the ingest scan, the export
    /// pass (only when `append.lock` exists and is free) and the watermark
    /// flush, each write transaction waiting at most [`READ_BUSY_WAIT`].
    /// [`ReadOpen::Busy`] when `append.lock` is held or the write lock was
    /// not had in time. Errors: [`StoreError::Io`], [`StoreError::Sqlite`]
    /// other than busy.
    fn reconcile_nowait(&self, logs: &Logs) -> Result<ReadOpen, StoreError> {
        let export = match probe_append_lock(&logs.lock_path()) {
            LockProbe::Held => return Ok(ReadOpen::Busy),
            LockProbe::Free => true,
            LockProbe::Missing => false,
        };
        self.conn.busy_timeout(READ_BUSY_WAIT)?;
        let result = (|| -> Result<(), StoreError> {
            self.ingest_if_index_moved(logs, super::log::marks::index_stamp(logs))?;
            if export {
                // The lock was free a moment ago; a writer that starts in
                // between makes this wait for its append (milliseconds).
                self.export_logs(logs)?;
            }
            self.flush_watermarks()
        })();
        self.conn.busy_timeout(BUSY_TIMEOUT)?;
        match result {
            Ok(()) => Ok(ReadOpen::Current),
            Err(e) if is_busy(&e) => Ok(ReadOpen::Busy),
            Err(e) => Err(e),
        }
    }
}

/// True when `path` names a database file (not a `file:` URI or
/// `:memory:`, which have no WAL to checkpoint).
fn is_file_db(path: &Path) -> bool {
    let text = path.to_string_lossy();
    !(text.starts_with("file:") || text == ":memory:")
}

/// Builds the missing database at `path` from the task logs beside it (a
/// fresh clone; a deleted `cairn.db`; issue 23): in an aside file
/// (`aside.rs`: removed on error, on a signal, or by the next run) written
/// without a durable journal (`synchronous=OFF`, an in-memory rollback
/// journal: nothing in it matters until it is complete), the whole ingest
/// in one transaction and one refold, then switched to WAL, synced, and
/// linked into place under the name `path` — `link(2)`, which never
/// replaces a file. So no process ever opens a half-built database, and a
/// build killed midway leaves nothing behind but the copy the next run
/// sweeps. Concurrent first opens queue on `<db>.build-lock` (one builds;
/// the others find the database when they get the lock). Errors:
/// [`StoreError::Io`], [`StoreError::Sqlite`], and the ingest's.
fn build_from_logs(path: &Path, logs: &Logs) -> Result<(), StoreError> {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".build-lock");
    let lock_path = path.with_file_name(name);
    let io = |e| StoreError::io(&lock_path, e);
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(io)?;
    lock.lock().map_err(io)?;
    if path.try_exists().map_err(|e| StoreError::io(path, e))? {
        return Ok(());
    }
    let aside = super::aside::Aside::empty(path);
    {
        let conn = Connection::open(&aside.path)?;
        require_fts5(&conn)?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        conn.pragma_update(None, "synchronous", "OFF")?;
        let _: String = conn.query_row("PRAGMA journal_mode=MEMORY", [], |r| r.get(0))?;
        migrate(&conn)?;
        let store = Store {
            conn,
            path: aside.path.clone(),
            logs: Some(logs.clone()),
            sync_state: RefCell::new(SyncState::default()),
            warm: RefCell::new(None),
            checkpointer: None,
            names: RefCell::new(NameIndex::default()),
            write_init: std::cell::Cell::new(false),
        };
        let index = super::log::marks::index_stamp(logs);
        store.ingest_logs(logs, true)?;
        if let Some(stamp) = index {
            super::log::marks::store_index_seen(&store.conn, stamp)?;
        }
        let _: String = store
            .conn
            .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))?;
    }
    let aside_io = |e| StoreError::io(&aside.path, e);
    std::fs::File::open(&aside.path)
        .and_then(|f| f.sync_all())
        .map_err(aside_io)?;
    match std::fs::hard_link(&aside.path, path) {
        Ok(()) => {}
        // Made meanwhile by a process that did not queue here: it stays,
        // and the open reconciles it with the logs as before.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(StoreError::io(path, e)),
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
        && let Ok(d) = std::fs::File::open(dir)
    {
        let _ = d.sync_all();
    }
    drop(aside);
    // Safe to remove while others wait on it: each checks for the
    // database again once it holds the lock, and the link never replaces.
    let _ = std::fs::remove_file(&lock_path);
    drop(lock);
    Ok(())
}

/// True when the store directory of `logs` holds at least one task folder
/// (`tasks/<folder>`): a store whose database is only a missing cache.
fn holds_logs(logs: &Logs) -> bool {
    std::fs::read_dir(logs.tasks_dir()).is_ok_and(|mut d| d.next().is_some())
}

/// What [`probe_append_lock`] found.
enum LockProbe {
    /// No lock file (or it cannot be opened): no writer has logged here.
    Missing,
    /// Free: no write in flight.
    Free,
    /// Held by another process (shared by a writer, or an exporter).
    Held,
}

/// Tries `append.lock` at `path` exclusively WITHOUT waiting and releases
/// it at once. Never creates the file.
fn probe_append_lock(path: &Path) -> LockProbe {
    let Ok(file) = std::fs::File::open(path) else {
        return LockProbe::Missing;
    };
    match file.try_lock() {
        Ok(()) => LockProbe::Free,
        Err(std::fs::TryLockError::WouldBlock) => LockProbe::Held,
        Err(std::fs::TryLockError::Error(_)) => LockProbe::Missing,
    }
}

/// True when `e` is SQLite's `SQLITE_BUSY` or `SQLITE_LOCKED`.
fn is_busy(e: &StoreError) -> bool {
    matches!(
        e,
        StoreError::Sqlite(rusqlite::Error::SqliteFailure(f, _))
            if matches!(
                f.code,
                rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
            )
    )
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
    if version == 0 {
        refuse_foreign(&tx)?;
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

/// [`StoreError::NotAStore`] when the database at `conn` (no cairn schema
/// stamp) holds a table of another program (`--db app.sqlite`, hostile run
/// L3): cairn adds nothing to it. Errors: [`StoreError::Sqlite`].
fn refuse_foreign(conn: &Connection) -> Result<(), StoreError> {
    // cairn's own file, even one stamped 0, has `schema_meta`.
    let ours: bool = conn.query_row(
        "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = 'schema_meta'",
        [],
        |r| r.get(0),
    )?;
    if ours {
        return Ok(());
    }
    let foreign: Option<String> = conn
        .query_row(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'
             ORDER BY name LIMIT 1",
            [],
            |r| r.get(0),
        )
        .optional()?;
    match foreign {
        Some(table) => Err(StoreError::NotAStore { table }),
        None => Ok(()),
    }
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
            super::refold::refold_types(conn, types)?;
        }
        Step::Reindex(batch) => {
            conn.execute_batch(
                "DROP TRIGGER IF EXISTS observations_ai;
                 DROP TRIGGER IF EXISTS observations_ad;
                 DROP TRIGGER IF EXISTS observations_au;
                 DROP TABLE IF EXISTS obs_fts;",
            )?;
            let rows: Vec<(i64, String)> = conn
                .prepare("SELECT obs_id, text FROM observations")?
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<Result<_, _>>()?;
            let mut up = conn.prepare("UPDATE observations SET parts = ?1 WHERE obs_id = ?2")?;
            for (id, text) in rows {
                up.execute(params![super::pg::search::parts_text(&text), id])?;
            }
            conn.execute_batch(batch)?;
        }
    }
    Ok(())
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
