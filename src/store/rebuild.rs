//! Rebuild, verify and digest (spec/store.md "Rebuild and verify";
//! docs/store.md "Verify and rebuild without locking writers out").
//!
//! Neither holds the write lock while it re-folds (issue 14): both re-fold
//! in an aside file next to the database and read the live store in one
//! read transaction. `verify` copies a consistent snapshot of the whole
//! database there (`VACUUM INTO`), compares digests on the copy and never
//! writes the store; `rebuild` (issue 23) gives the aside file only the
//! projection's schema, folds the live snapshot's events into it (the
//! bulk fold, `bulk.rs`), then swaps the aside projection in with one
//! short write transaction that also folds the events that arrived since
//! the snapshot. The aside file and its cleanup (drop, signal, next run)
//! are `aside.rs`.

use rusqlite::types::{Value, ValueRef};
use rusqlite::{Connection, Transaction, TransactionBehavior, params};
use sha2::{Digest, Sha256};

use super::aside::Aside;
use super::error::StoreError;
use super::event::hex;
use super::handle::Store;
use super::progress::{Stage, report};
use super::refold::{fold_events_after, rebuild_in, refold_whole, schema_objects};

/// The outcome of [`Store::verify`]: `ok` when the live projection equals a
/// fresh fold of the log (and the FTS index is consistent); `before`/`after`
/// are the projection digests (64 lower-hex chars) before and after the
/// trial rebuild.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verification {
    /// True when the projection is a faithful fold of the log.
    pub ok: bool,
    /// Digest of the live projection.
    pub before: String,
    /// Digest after re-folding every event (rolled back).
    pub after: String,
    /// The log directions (every event in its log, every line in the
    /// database, malformed lines), filled by callers that check the logs
    /// ([`Store::check_logs`]); `None` when not checked or no logs.
    pub logs: Option<crate::store::log::LogCheck>,
}

/// The projection and fold-state tables a rebuild swaps in, parents first
/// (emptied in reverse). Keep in step with [`CLEAR_PROJECTION`].
const PROJECTION_TABLES: [&str; 11] = [
    "tasks",
    "task_texts",
    "task_fold",
    "edges",
    "edge_state",
    "sever_state",
    "observations",
    "handoffs",
    "task_metadata",
    "named_views",
    "view_state",
];

/// The FTS5 tables over the projection (external content).
const FTS_TABLES: [&str; 2] = ["obs_fts", "task_fts"];

/// The FTS5 shadow tables of `obs_fts` and `task_fts` (external content:
/// no content table). A rebuild copies them from the aside indexes, which
/// it built once.
const FTS_SHADOW_TABLES: [&str; 8] = [
    "obs_fts_data",
    "obs_fts_idx",
    "obs_fts_docsize",
    "obs_fts_config",
    "task_fts_data",
    "task_fts_idx",
    "task_fts_docsize",
    "task_fts_config",
];

/// One SELECT per table, surrogate ids mapped to slugs, in a total order.
/// Portable SQL: PostgreSQL's digest (`pg/rebuild.rs`) runs the same text.
pub(crate) const DIGEST_QUERIES: [(&str, &str); 11] = [
    (
        "tasks",
        "SELECT t.slug, t.depot, p.slug, t.status, t.description, t.created_ts, t.updated_ts,
                t.status_ts, t.description_ts, t.project_id, t.status_eid, t.description_eid,
                t.parent_ts, t.parent_eid, t.obs_count, t.child_count, t.lateral_out, t.lateral_in,
                t.claim_owner, t.claim_until, t.claim_ts, t.claim_eid
         FROM tasks t LEFT JOIN tasks p ON p.id = t.parent_task_id ORDER BY t.slug",
    ),
    (
        "task_fold",
        "SELECT t.slug, pt.slug, f.project_ts, f.project_eid
         FROM task_fold f JOIN tasks t ON t.id = f.task_id
         LEFT JOIN tasks pt ON pt.id = f.parent_target_id ORDER BY t.slug",
    ),
    (
        "edges",
        "SELECT s.slug, d.slug, e.type, e.tag, e.created_ts
         FROM edges e JOIN tasks s ON s.id = e.src_id JOIN tasks d ON d.id = e.dst_id
         ORDER BY 1, 2, 3, 4",
    ),
    (
        "edge_state",
        "SELECT s.slug, d.slug, e.type, e.tag, e.present, e.ts, e.eid
         FROM edge_state e JOIN tasks s ON s.id = e.src_id JOIN tasks d ON d.id = e.dst_id
         ORDER BY 1, 2, 3, 4",
    ),
    (
        "sever_state",
        "SELECT CASE WHEN a.slug < b.slug THEN a.slug ELSE b.slug END,
                CASE WHEN a.slug < b.slug THEN b.slug ELSE a.slug END, s.ts, s.eid
         FROM sever_state s JOIN tasks a ON a.id = s.lo_id JOIN tasks b ON b.id = s.hi_id
         ORDER BY 1, 2",
    ),
    (
        "observations",
        "SELECT o.event_id, t.slug, o.text, o.ts
         FROM observations o JOIN tasks t ON t.id = o.task_id ORDER BY o.event_id",
    ),
    (
        "handoffs",
        "SELECT h.event_id, t.slug, h.path, h.summary, h.ts
         FROM handoffs h JOIN tasks t ON t.id = h.task_id ORDER BY h.event_id",
    ),
    (
        "task_metadata",
        "SELECT t.slug, m.key, m.value, m.ts, m.eid
         FROM task_metadata m JOIN tasks t ON t.id = m.task_id ORDER BY 1, 2",
    ),
    (
        "named_views",
        "SELECT name, query, ts, eid FROM named_views ORDER BY name",
    ),
    (
        "view_state",
        "SELECT name, query, present, ts, eid FROM view_state ORDER BY name",
    ),
    (
        "task_texts",
        "SELECT t.slug, x.name, x.name_ts, x.name_eid, x.description, x.description_ts,
                x.description_eid
         FROM task_texts x JOIN tasks t ON t.id = x.task_id ORDER BY t.slug",
    ),
];

/// One value of a digest row, whatever the engine.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Cell<'a> {
    Null,
    Int(i64),
    Real(f64),
    Text(&'a [u8]),
}

/// Adds one cell to a digest: a type tag, the value, a NUL. The same bytes
/// on every engine (PostgreSQL's `pg/rebuild.rs` calls it too).
pub(crate) fn hash_cell(h: &mut Sha256, cell: Cell<'_>) {
    match cell {
        Cell::Null => h.update(b"N"),
        Cell::Int(n) => {
            h.update(b"I");
            h.update(n.to_string().as_bytes());
        }
        Cell::Real(x) => {
            h.update(b"R");
            h.update(x.to_string().as_bytes());
        }
        Cell::Text(t) => {
            h.update(b"T");
            h.update(t.len().to_string().as_bytes());
            h.update(b":");
            h.update(t);
        }
    }
    h.update([0u8]);
}

/// SHA-256 (lower hex) over every projection and fold-state table, rows
/// rendered with type tags, surrogate ids replaced by slugs.
pub(crate) fn digest_of(conn: &Connection) -> Result<String, StoreError> {
    let mut h = Sha256::new();
    for (table, sql) in DIGEST_QUERIES {
        h.update(b"#");
        h.update(table.as_bytes());
        h.update(b"\n");
        let mut stmt = conn.prepare_cached(sql)?;
        let columns = stmt.column_count();
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            for i in 0..columns {
                let cell = match row.get_ref(i)? {
                    ValueRef::Null => Cell::Null,
                    ValueRef::Integer(n) => Cell::Int(n),
                    ValueRef::Real(x) => Cell::Real(x),
                    ValueRef::Text(t) | ValueRef::Blob(t) => Cell::Text(t),
                };
                hash_cell(&mut h, cell);
            }
            h.update(b"\n");
        }
    }
    Ok(hex(&h.finalize()))
}

/// True when the FTS indexes agree with `observations` and `task_texts`.
fn fts_consistent(conn: &Connection) -> Result<bool, StoreError> {
    for check in [
        "INSERT INTO obs_fts(obs_fts, rank) VALUES ('integrity-check', 1)",
        "INSERT INTO task_fts(task_fts, rank) VALUES ('integrity-check', 1)",
    ] {
        match conn.execute(check, []) {
            Ok(_) => {}
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::DatabaseCorrupt =>
            {
                return Ok(false);
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(true)
}

/// The comma-separated, quoted names of `table`'s stored columns in
/// `main` (generated columns left out: they cannot be inserted).
fn stored_columns(conn: &Connection, table: &str) -> Result<String, StoreError> {
    let mut stmt = conn
        .prepare("SELECT name FROM pragma_table_xinfo(?1, 'main') WHERE hidden = 0 ORDER BY cid")?;
    let names = stmt
        .query_map([table], |r| r.get::<_, String>(0))?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(names
        .iter()
        .map(|n| format!("\"{}\"", n.replace('"', "\"\"")))
        .collect::<Vec<_>>()
        .join(", "))
}

/// True when `table` in `main` has a generated column.
fn has_generated_columns(conn: &Connection, table: &str) -> Result<bool, StoreError> {
    Ok(conn.query_row(
        "SELECT count(*) > 0 FROM pragma_table_xinfo(?1, 'main') WHERE hidden IN (2, 3)",
        [table],
        |r| r.get(0),
    )?)
}

/// The CREATE TRIGGER statements on the projection tables of `schema`.
fn projection_triggers(
    conn: &Connection,
    schema: &str,
) -> Result<Vec<(String, String)>, StoreError> {
    let sql = format!(
        "SELECT name, sql FROM {schema}.sqlite_master WHERE type = 'trigger' AND tbl_name IN ({})",
        PROJECTION_TABLES.map(|t| format!("'{t}'")).join(", ")
    );
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<Result<Vec<_>, _>>()?)
}

/// Creates on `target` (an empty aside file) `source`'s schema of the
/// projection: its tables, the FTS tables over them, their unique indexes
/// and triggers (each from its stored SQL, so the aside has the columns
/// of whatever migrations made the live store), and the FTS tables'
/// settings (the ranking). The FTS shadow tables come with their virtual
/// tables. The non-unique indexes are left out: nothing reads the aside
/// through them (the digest sorts), and the swap builds the live ones.
/// Errors: [`StoreError::Sqlite`].
fn copy_projection_schema(source: &Connection, target: &Connection) -> Result<(), StoreError> {
    let tables = PROJECTION_TABLES.map(|t| format!("'{t}'")).join(", ");
    let sql = format!(
        "SELECT sql FROM main.sqlite_master
         WHERE sql IS NOT NULL AND (tbl_name IN ({tables}) OR name IN ({}))
           AND NOT (type = 'index' AND sql NOT LIKE 'CREATE UNIQUE%')
         ORDER BY CASE type WHEN 'table' THEN 0 WHEN 'index' THEN 1 ELSE 2 END, rowid",
        FTS_TABLES.map(|t| format!("'{t}'")).join(", ")
    );
    let objects = source
        .prepare(&sql)?
        .query_map([], |r| r.get::<_, String>(0))?
        .collect::<Result<Vec<_>, _>>()?;
    for sql in objects {
        target.execute_batch(&sql)?;
    }
    for fts in FTS_TABLES {
        let settings = source
            .prepare(&format!(
                "SELECT k, v FROM main.{fts}_config WHERE k <> 'version' ORDER BY k"
            ))?
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, Value>(1)?)))?
            .collect::<Result<Vec<_>, _>>()?;
        for (k, v) in settings {
            target.execute(
                &format!("INSERT INTO {fts}({fts}, rank) VALUES (?1, ?2)"),
                params![k, v],
            )?;
        }
    }
    Ok(())
}

/// Re-folds the whole log on an aside copy ([`rebuild_in`]: triggers and
/// secondary indexes off while it folds, each index, counter column and
/// FTS index built once at the end). Returns the highest `seq` folded.
fn refold_aside(conn: &Connection) -> Result<i64, StoreError> {
    let tx = Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
    rebuild_in(&tx)?;
    let through: i64 =
        tx.query_row("SELECT coalesce(max(seq), 0) FROM events", [], |r| r.get(0))?;
    tx.commit()?;
    Ok(through)
}

/// The short write transaction of a rebuild, on `conn` (a FRESH connection
/// that has not used `obs_fts`, so FTS5 holds no cached index structure,
/// with foreign keys off: the aside projection is consistent as a whole)
/// with the aside attached as `aside`: the live projection and FTS index
/// are replaced by the aside's (triggers off), then the events after
/// `through` are folded on top.
///
/// The live tables' non-unique indexes are dropped while they refill and
/// built again after (one sort each instead of a random insert per row),
/// inside the same transaction. Returns how many late events it folded.
fn swap_in(conn: &Connection, through: i64) -> Result<usize, StoreError> {
    let tx = Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
    let triggers = projection_triggers(&tx, "main")?;
    for (name, _) in &triggers {
        tx.execute_batch(&format!(
            "DROP TRIGGER main.\"{}\"",
            name.replace('"', "\"\"")
        ))?;
    }
    // With foreign keys and triggers off, an unconditioned DELETE empties a
    // table without visiting its rows (SQLite's truncate optimisation).
    for t in PROJECTION_TABLES.iter().rev() {
        tx.execute_batch(&format!("DELETE FROM main.{t}"))?;
    }
    let indexes = schema_objects(&tx, "index")?;
    for (name, _, _) in &indexes {
        tx.execute_batch(&format!(
            "DROP INDEX main.\"{}\"",
            name.replace('"', "\"\"")
        ))?;
    }
    for t in PROJECTION_TABLES {
        // The aside's tables were made from the live ones' SQL, so their
        // columns match one for one: `INSERT … SELECT *` into the emptied
        // table lets SQLite copy the records and the unique keys' entries
        // as they are (its transfer optimisation: no decoding, appends in
        // order; docs/performance.md). Generated columns
        // (tasks.edge_count) are computed, never inserted: such a table
        // names its stored columns (and is copied row by row).
        let sql = if has_generated_columns(&tx, t)? {
            let cols = stored_columns(&tx, t)?;
            format!("INSERT INTO main.{t} ({cols}) SELECT {cols} FROM aside.{t}")
        } else {
            format!("INSERT INTO main.{t} SELECT * FROM aside.{t}")
        };
        tx.execute_batch(&sql)?;
    }
    for t in FTS_SHADOW_TABLES {
        tx.execute_batch(&format!(
            "DELETE FROM main.{t}; INSERT INTO main.{t} SELECT * FROM aside.{t};"
        ))?;
    }
    for (_, _, sql) in &indexes {
        tx.execute_batch(sql)?;
    }
    for (_, sql) in &triggers {
        tx.execute_batch(sql)?;
    }
    let late = fold_events_after(&tx, through)?;
    tx.commit()?;
    Ok(late)
}

impl Store {
    /// Rebuilds the projection from the log without holding the write lock
    /// while it re-folds (spec/store.md "Rebuild and verify", issue 14):
    /// folds every event of a read snapshot of the live store, ordered by
    /// `(ts, event_id)`, into an aside file holding only the projection
    /// (issue 23: nothing is copied) and builds its FTS index once, then
    /// swaps the aside projection and index in with one short `BEGIN
    /// IMMEDIATE` transaction that also folds the events that arrived
    /// since the snapshot. Writers wait only for the swap.
    /// Errors: [`StoreError::Sqlite`].
    pub fn rebuild(&self) -> Result<(), StoreError> {
        self.rebuild_digest().map(|_| ())
    }

    /// [`Store::rebuild`], returning the projection digest after it
    /// ([`Store::digest`]). Issue 23: the events are read from the live
    /// store in ONE read transaction (its snapshot; WAL writers carry on)
    /// and folded by the bulk fold into an aside file that holds only the
    /// projection's schema ([`copy_projection_schema`]); nothing of the
    /// live store is copied. The digest is taken on the aside copy on a
    /// second thread while the swap runs (the swap copies the aside tables
    /// as they are, so the digests are equal); only when events arrived
    /// after the snapshot (folded on top by the swap) is the live
    /// projection digested again. Errors: [`StoreError::Sqlite`].
    pub fn rebuild_digest(&self) -> Result<String, StoreError> {
        let source = Connection::open(self.path())?;
        source.busy_timeout(super::schema::BUSY_TIMEOUT)?;
        source.execute_batch(&format!("PRAGMA mmap_size={}", super::aside::MMAP_SIZE))?;
        let snapshot = Transaction::new_unchecked(&source, TransactionBehavior::Deferred)?;
        // The first read takes the snapshot every read below sees.
        let through: i64 =
            snapshot.query_row("SELECT coalesce(max(seq), 0) FROM main.events", [], |r| {
                r.get(0)
            })?;
        let (aside, aside_conn) =
            Aside::for_projection(self.path(), |c| copy_projection_schema(&snapshot, c))?;
        {
            let tx = Transaction::new_unchecked(&aside_conn, TransactionBehavior::Immediate)?;
            refold_whole(&tx, &snapshot)?;
            tx.commit()?;
        }
        snapshot.rollback()?;
        drop(source);
        report(Stage::Swap, 0, 0);
        let conn = Connection::open(self.path())?;
        conn.busy_timeout(super::schema::BUSY_TIMEOUT)?;
        conn.pragma_update(None, "foreign_keys", "OFF")?;
        // The store's own setting (spec/store.md "SQLite settings"): in WAL
        // mode a commit is not synced (a checkpoint is), and a crash
        // loses at most the newest commits, never the database's
        // consistency; the swap's commit was the rebuild's one FULL sync.
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.execute(
            "ATTACH DATABASE ?1 AS aside",
            params![aside.path.to_string_lossy().into_owned()],
        )?;
        conn.execute_batch(&format!(
            "PRAGMA aside.mmap_size={}",
            super::aside::MMAP_SIZE
        ))?;
        let (swapped, aside_digest) = std::thread::scope(|s| {
            let digest = s.spawn(move || digest_of(&aside_conn));
            let swapped = swap_in(&conn, through);
            (swapped, digest.join())
        });
        let _ = conn.execute_batch("DETACH DATABASE aside");
        drop(conn);
        report(Stage::Done, 0, 0);
        match (swapped?, aside_digest) {
            (0, Ok(Ok(digest))) => Ok(digest),
            _ => self.digest(),
        }
    }

    /// Checks that the projection is a faithful fold of the log, taking NO
    /// write lock and changing nothing (issue 14): snapshots the database
    /// into an aside file (one read transaction), then on that copy digests
    /// the projection, checks the FTS index, re-folds every event and
    /// digests again: `ok` when the digests are equal and the index is
    /// consistent. Writers carry on meanwhile; what they add after the
    /// snapshot is not checked. Errors: [`StoreError::Sqlite`].
    pub fn verify(&self) -> Result<Verification, StoreError> {
        report(Stage::Snapshot, 0, 0);
        let aside = Aside::snapshot(self.path())?;
        let conn = aside.open()?;
        let before = digest_of(&conn)?;
        let fts_ok = fts_consistent(&conn)?;
        refold_aside(&conn)?;
        let after = digest_of(&conn)?;
        report(Stage::Done, 0, 0);
        Ok(Verification {
            ok: fts_ok && before == after,
            before,
            after,
            logs: None,
        })
    }

    /// The projection digest (64 lower-hex chars), read in one transaction.
    /// Equal digests mean equal projections up to surrogate ids.
    pub fn digest(&self) -> Result<String, StoreError> {
        let tx = Transaction::new_unchecked(&self.conn, TransactionBehavior::Deferred)?;
        let d = digest_of(&tx)?;
        tx.rollback()?;
        Ok(d)
    }
}
