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
    catalog: Option<(i64, Arc<CatalogData>)>,
    catalog_loads: u64,
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
            catalog_loads: 0,
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

    /// The catalog, read again only when `PRAGMA data_version` changed since
    /// the cached copy (some other connection committed). The version is read
    /// BEFORE the catalog, so a commit racing the read can only cause one
    /// extra reload, never a stale cache. Errors: [`StoreError::Sqlite`].
    pub fn catalog(&mut self) -> Result<Arc<CatalogData>, StoreError> {
        let version: i64 = self
            .conn
            .prepare_cached("PRAGMA data_version")?
            .query_row([], |r| r.get(0))?;
        if let Some((v, c)) = &self.catalog
            && *v == version
        {
            return Ok(Arc::clone(c));
        }
        let fresh = read_catalog(&self.conn)?;
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
