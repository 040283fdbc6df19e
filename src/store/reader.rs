//! The warm read side: one long-lived read-only connection per [`Store`]
//! (so per thread: a `Store` is not `Sync`) with a statement cache, and the
//! planner's catalog (metadata keys and user views) cached on it until
//! `PRAGMA data_version` says another connection committed (docs/store.md
//! "Warm reads"; COMPILER.md rewrites 8 and 9).

use std::cell::RefMut;
use std::collections::BTreeMap;
use std::ops::{Deref, DerefMut};
use std::path::Path;
use std::sync::Arc;

use rusqlite::{Connection, OpenFlags};

use super::error::StoreError;
use super::schema::BUSY_TIMEOUT;

/// How many prepared statements one warm reader keeps (rusqlite's LRU
/// statement cache; the default is 16).
pub const STATEMENT_CACHE: usize = 128;

/// The catalog in ONE statement: every distinct metadata key by a loose
/// index scan of `task_metadata_key` (one index probe per distinct key, not
/// one row per metadata row), then every user view. Rows are
/// `('k', key, NULL)` and `('v', name, query)`.
pub const CATALOG_SQL: &str = "WITH RECURSIVE k(key) AS (
    SELECT (SELECT min(key) FROM task_metadata)
    UNION ALL
    SELECT (SELECT min(m.key) FROM task_metadata m WHERE m.key > k.key) FROM k WHERE k.key IS NOT NULL
)
SELECT 'k', key, NULL FROM k WHERE key IS NOT NULL
UNION ALL
SELECT 'v', name, query FROM named_views";

/// What the planner needs from the store besides rows: the live metadata
/// keys (sorted, distinct) and the user views (name → TQ text).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CatalogData {
    /// Distinct `task_metadata.key`, sorted.
    pub meta_keys: Vec<String>,
    /// `named_views`: name → query text.
    pub user_views: BTreeMap<String, String>,
}

/// Reads the catalog on `conn` with [`CATALOG_SQL`] (one statement).
/// Errors: any SQLite failure.
pub fn read_catalog(conn: &Connection) -> rusqlite::Result<CatalogData> {
    let mut stmt = conn.prepare_cached(CATALOG_SQL)?;
    let mut rows = stmt.query([])?;
    let mut out = CatalogData::default();
    while let Some(r) = rows.next()? {
        let tag: String = r.get(0)?;
        let name: String = r.get(1)?;
        if tag == "k" {
            out.meta_keys.push(name);
        } else {
            out.user_views.insert(name, r.get(2)?);
        }
    }
    // The scan yields keys in index (BINARY) order; keep the contract explicit.
    out.meta_keys.sort();
    Ok(out)
}

/// A long-lived read-only connection (`SQLITE_OPEN_READ_ONLY` and
/// `query_only`: every write through it fails) with a statement cache of
/// [`STATEMENT_CACHE`] and the catalog cached by `PRAGMA data_version`.
#[derive(Debug)]
pub struct WarmReader {
    conn: Connection,
    /// The catalog with the [`WarmReader::snapshot_version`] it was read at.
    catalog: Option<(u32, Arc<CatalogData>)>,
    /// What the connection's progress handler stops statements on
    /// ([`WarmReader::arm`]); the handler is installed on the first arm.
    gate: Arc<std::sync::Mutex<Option<Armed>>>,
    gate_installed: bool,
    catalog_loads: u64,
    catalog_checks: u64,
    initialised: bool,
    /// State a higher room keeps with this connection (the TQ compile
    /// cache), typed by the room that owns it; see [`WarmReader::slot`].
    slot: Option<Box<dyn std::any::Any + Send>>,
}

impl WarmReader {
    /// Opens a read-only connection to `path` (30 s busy timeout).
    /// Errors: [`StoreError::Sqlite`].
    pub fn open(path: &Path) -> Result<WarmReader, StoreError> {
        let conn = super::reader::open_read_only(path)?;
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        Ok(WarmReader {
            conn,
            catalog: None,
            gate: Arc::default(),
            gate_installed: false,
            catalog_loads: 0,
            catalog_checks: 0,
            initialised: false,
            slot: None,
        })
    }

    /// The read-only connection.
    pub fn conn(&self) -> &Connection {
        &self.conn
    }

    /// The read-only connection, mutably (progress handlers).
    pub fn conn_mut(&mut self) -> &mut Connection {
        &mut self.conn
    }

    /// Runs `init` on the connection the first time only (registering SQL
    /// functions: re-registering one expires every cached statement).
    /// Errors: whatever `init` returns.
    pub fn init_once(
        &mut self,
        init: impl FnOnce(&Connection) -> rusqlite::Result<()>,
    ) -> rusqlite::Result<()> {
        if !self.initialised {
            init(&self.conn)?;
            self.initialised = true;
        }
        Ok(())
    }

    /// The catalog, read again only when another connection committed since
    /// the cached copy was read: a `PRAGMA data_version` begins a read
    /// transaction, and the snapshot it read is compared by
    /// [`WarmReader::snapshot_version`] with the snapshot of the cached
    /// copy. A reload records the version of its own snapshot, so the
    /// cached catalog is exactly the one of that version (what
    /// [`WarmReader::cached_catalog`]'s callers rely on). Errors:
    /// [`StoreError::Sqlite`].
    pub fn catalog(&mut self) -> Result<Arc<CatalogData>, StoreError> {
        self.catalog_checks += 1;
        self.conn
            .prepare_cached("PRAGMA data_version")?
            .query_row([], |_| Ok(()))?;
        let version = self.snapshot_version()?;
        if let Some((v, c)) = &self.catalog
            && *v == version
        {
            return Ok(Arc::clone(c));
        }
        let fresh = read_catalog(&self.conn)?;
        let version = self.snapshot_version()?;
        self.catalog_loads += 1;
        // The same content keeps the same `Arc`, so whoever keyed state on
        // the catalog's identity (the compile cache) keeps it across
        // commits that changed no key and no view.
        let c = match &self.catalog {
            Some((_, old)) if **old == fresh => Arc::clone(old),
            _ => Arc::new(fresh),
        };
        self.catalog = Some((version, Arc::clone(&c)));
        Ok(c)
    }

    /// Bounds the statements run until [`WarmReader::disarm`]: SQLite's
    /// progress handler (every 1,000 virtual machine steps) interrupts a
    /// statement once `deadline` has passed or `cancel` is raised (the TQ
    /// engine's time limit and cancellation, spec/tq.md §6). The handler is
    /// installed once per connection and does nothing while disarmed, so a
    /// run pays a lock, not a handler registration (issue 23, the fixed
    /// cost). Errors: [`StoreError::Sqlite`] if the handler cannot be
    /// installed.
    pub fn arm(
        &mut self,
        deadline: std::time::Instant,
        cancel: Arc<std::sync::atomic::AtomicBool>,
    ) -> Result<(), StoreError> {
        if !self.gate_installed {
            let gate = Arc::clone(&self.gate);
            self.conn.progress_handler(
                1000,
                Some(move || match gate.lock() {
                    Ok(g) => g.as_ref().is_some_and(|a| {
                        a.cancel.load(std::sync::atomic::Ordering::SeqCst)
                            || std::time::Instant::now() >= a.deadline
                    }),
                    Err(_) => false,
                }),
            )?;
            self.gate_installed = true;
        }
        if let Ok(mut g) = self.gate.lock() {
            *g = Some(Armed { deadline, cancel });
        }
        Ok(())
    }

    /// Lifts [`WarmReader::arm`]'s bound: later statements run unbounded.
    pub fn disarm(&mut self) {
        if let Ok(mut g) = self.gate.lock() {
            *g = None;
        }
    }

    /// The cached catalog and the version of the snapshot it was read in
    /// (as [`WarmReader::snapshot_version`] counts), without reading
    /// anything: `None` before the first [`WarmReader::catalog`]. A caller
    /// that runs a statement on it and then finds
    /// [`WarmReader::snapshot_version`] unchanged knows that statement read
    /// the same snapshot, so the same catalog (docs/store.md "Warm reads").
    pub fn cached_catalog(&self) -> Option<(u32, Arc<CatalogData>)> {
        self.catalog.as_ref().map(|(v, c)| (*v, Arc::clone(c)))
    }

    /// The version of the snapshot the connection's last read transaction
    /// read (SQLite's `SQLITE_FCNTL_DATA_VERSION`: the pager's counter,
    /// which moves only when a transaction begins on a database another
    /// connection changed, so it is stable between transactions). Two
    /// transactions with the same version read the same committed state.
    /// Errors: [`StoreError::Sqlite`] if SQLite refuses the file control.
    pub fn snapshot_version(&self) -> Result<u32, StoreError> {
        let mut v: std::ffi::c_uint = 0;
        // SAFETY: the handle is this live connection's (owned by `self`,
        // not closed while borrowed); the file control writes one unsigned
        // int through the pointer, which points at `v` for the call.
        let rc = unsafe {
            rusqlite::ffi::sqlite3_file_control(
                self.conn.handle(),
                c"main".as_ptr(),
                rusqlite::ffi::SQLITE_FCNTL_DATA_VERSION,
                (&raw mut v).cast::<std::ffi::c_void>(),
            )
        };
        if rc != rusqlite::ffi::SQLITE_OK {
            return Err(StoreError::Sqlite(rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rc),
                Some("SQLITE_FCNTL_DATA_VERSION".to_string()),
            )));
        }
        Ok(v)
    }

    /// The state of type `T` kept with this connection for its lifetime
    /// (created with `T::default()` on first use; a slot holding another
    /// type is replaced). Lets a higher room (the TQ engine's compile cache,
    /// `tq::cache`) live as long as the warm reader without the store
    /// knowing its type. `None` only if the slot cannot be read as `T`
    /// (never after the replacement; callers then go without).
    pub fn slot<T: Default + Send + 'static>(&mut self) -> Option<&mut T> {
        if !self.slot.as_ref().is_some_and(|b| b.is::<T>()) {
            self.slot = Some(Box::new(T::default()));
        }
        self.slot.as_mut().and_then(|b| b.downcast_mut::<T>())
    }

    /// How many times [`WarmReader::catalog`] read the tables (tests).
    pub fn catalog_loads(&self) -> u64 {
        self.catalog_loads
    }

    /// How many times [`WarmReader::catalog`] was asked, each a read
    /// transaction of its own (tests of the engine's quick reads).
    pub fn catalog_checks(&self) -> u64 {
        self.catalog_checks
    }
}

/// An armed progress gate: the deadline and the cancellation flag.
#[derive(Debug)]
struct Armed {
    deadline: std::time::Instant,
    cancel: Arc<std::sync::atomic::AtomicBool>,
}

/// The store's warm reader, borrowed; or, when it is already borrowed
/// (re-entrant use on one thread), a fresh one for this call only.
#[derive(Debug)]
pub enum ReaderGuard<'a> {
    /// The store's long-lived reader.
    Warm(RefMut<'a, WarmReader>),
    /// A one-off reader.
    Fresh(Box<WarmReader>),
}

impl Deref for ReaderGuard<'_> {
    type Target = WarmReader;
    fn deref(&self) -> &WarmReader {
        match self {
            ReaderGuard::Warm(r) => r,
            ReaderGuard::Fresh(r) => r,
        }
    }
}

impl DerefMut for ReaderGuard<'_> {
    fn deref_mut(&mut self) -> &mut WarmReader {
        match self {
            ReaderGuard::Warm(r) => r,
            ReaderGuard::Fresh(r) => r,
        }
    }
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
    super::schema::stable_plans(&conn)?;
    conn.pragma_update(None, "query_only", "ON")?;
    Ok(conn)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::NewEvent;
    use crate::store::Store;

    fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().expect("tempdir");
        let st = Store::open(&dir.path().join("cairn.db")).expect("open");
        (dir, st)
    }

    #[test]
    fn catalog_is_cached_until_another_connection_commits() {
        let (dir, st) = store();
        st.write(&[
            NewEvent::task_create("s", 1, "a", None, None),
            NewEvent::set_metadata("s", 1, "a", "priority", "high"),
            NewEvent::set_metadata("s", 1, "a", "area", "x"),
        ])
        .expect("write");
        let mut r = st.warm_reader().expect("reader");
        let c = r.catalog().expect("catalog");
        assert_eq!(c.meta_keys, ["area", "priority"]);
        assert_eq!(r.catalog_loads(), 1);
        // Nothing committed: served from the cache.
        r.catalog().expect("catalog");
        r.catalog().expect("catalog");
        assert_eq!(r.catalog_loads(), 1);
        // Another connection (a second process's store) adds a key and a view.
        let other = Store::open(&dir.path().join("cairn.db")).expect("open");
        other
            .write(&[
                NewEvent::set_metadata("s", 2, "a", "owner", "kim"),
                NewEvent::view_define("s", 2, "mine", "(active)"),
            ])
            .expect("write");
        let c = r.catalog().expect("catalog");
        assert_eq!(c.meta_keys, ["area", "owner", "priority"]);
        assert_eq!(
            c.user_views.get("mine").map(String::as_str),
            Some("(active)")
        );
        assert_eq!(r.catalog_loads(), 2);
    }

    #[test]
    fn the_snapshot_version_moves_only_when_a_read_sees_another_commit() {
        let (dir, st) = store();
        st.write(&[NewEvent::task_create("s", 1, "a", None, None)])
            .expect("write");
        let mut r = st.warm_reader().expect("reader");
        let count = |r: &WarmReader| -> i64 {
            r.conn()
                .query_row("SELECT count(*) FROM tasks", [], |x| x.get(0))
                .expect("count")
        };
        assert_eq!(count(&r), 1);
        let v1 = r.snapshot_version().expect("version");
        assert_eq!(count(&r), 1);
        assert_eq!(r.snapshot_version().expect("version"), v1);
        let other = Store::open(&dir.path().join("cairn.db")).expect("open");
        other
            .write(&[NewEvent::task_create("s", 2, "b", None, None)])
            .expect("write");
        // Between transactions the version is the last snapshot's.
        assert_eq!(r.snapshot_version().expect("version"), v1);
        assert_eq!(count(&r), 2);
        let v2 = r.snapshot_version().expect("version");
        assert_ne!(v2, v1);
        // The catalog records the snapshot it was read at.
        r.catalog().expect("catalog");
        assert_eq!(r.cached_catalog().map(|(v, _)| v), Some(v2));
    }

    #[test]
    fn an_armed_gate_interrupts_and_a_disarmed_one_does_not() {
        let (_d, st) = store();
        let mut r = st.warm_reader().expect("reader");
        let heavy = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200000) SELECT count(*) FROM n";
        let cancel = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let past = std::time::Instant::now();
        r.arm(past, Arc::clone(&cancel)).expect("arm");
        let err = r.conn().query_row(heavy, [], |x| x.get::<_, i64>(0));
        assert!(
            matches!(&err, Err(rusqlite::Error::SqliteFailure(e, _)) if e.code == rusqlite::ErrorCode::OperationInterrupted),
            "{err:?}"
        );
        r.disarm();
        let n: i64 = r.conn().query_row(heavy, [], |x| x.get(0)).expect("runs");
        assert_eq!(n, 200_000);
        // Armed with a far deadline, the cancellation flag stops it.
        r.arm(
            past + std::time::Duration::from_secs(3600),
            Arc::clone(&cancel),
        )
        .expect("arm");
        cancel.store(true, std::sync::atomic::Ordering::SeqCst);
        assert!(
            r.conn()
                .query_row(heavy, [], |x| x.get::<_, i64>(0))
                .is_err()
        );
        r.disarm();
        assert_eq!(
            r.conn()
                .query_row(heavy, [], |x| x.get::<_, i64>(0))
                .expect("runs"),
            200_000
        );
    }

    #[test]
    fn the_warm_reader_is_kept_and_read_only() {
        let (_d, st) = store();
        st.write(&[NewEvent::task_create("s", 1, "a", None, None)])
            .expect("write");
        {
            let r = st.warm_reader().expect("reader");
            assert!(matches!(r, ReaderGuard::Warm(_)));
            let n: i64 = r
                .conn()
                .query_row("SELECT count(*) FROM tasks", [], |x| x.get(0))
                .expect("count");
            assert_eq!(n, 1);
            assert!(r.conn().execute("DELETE FROM tasks", []).is_err());
            assert!(
                r.conn()
                    .execute("INSERT INTO schema_meta(key, value) VALUES ('x', 'y')", [])
                    .is_err()
            );
            // Borrowed twice on one thread: the second is a fresh one-off.
            let again = st.warm_reader().expect("reader");
            assert!(matches!(again, ReaderGuard::Fresh(_)));
        }
        // A write through the store is visible to the kept reader.
        st.write(&[NewEvent::task_create("s", 2, "b", None, None)])
            .expect("write");
        let r = st.warm_reader().expect("reader");
        let n: i64 = r
            .conn()
            .query_row("SELECT count(*) FROM tasks", [], |x| x.get(0))
            .expect("count");
        assert_eq!(n, 2);
    }

    #[test]
    fn the_catalog_scan_probes_the_key_index() {
        let (_d, st) = store();
        let mut stmt = st
            .conn()
            .prepare(&format!("EXPLAIN QUERY PLAN {CATALOG_SQL}"))
            .expect("prepare");
        let plan: Vec<String> = stmt
            .query_map([], |r| r.get::<_, String>(3))
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("rows");
        assert!(
            plan.iter()
                .any(|l| l.contains("USING COVERING INDEX task_metadata_key (key>?)")),
            "{plan:?}"
        );
        assert!(
            !plan.iter().any(|l| l.starts_with("SCAN task_metadata")),
            "{plan:?}"
        );
    }
}
