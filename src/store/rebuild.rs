//! Rebuild, verify and digest (spec/store.md "Rebuild and verify").

use rusqlite::types::ValueRef;
use rusqlite::{Connection, Transaction, TransactionBehavior};
use sha2::{Digest, Sha256};

use super::error::StoreError;
use super::event::hex;
use super::fold::{FoldInput, fold};
use super::open::Store;

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
}

/// Empties the projection and fold-state tables (children first).
const CLEAR_PROJECTION: &str = "
    DELETE FROM observations;
    DELETE FROM handoffs;
    DELETE FROM task_metadata;
    DELETE FROM edges;
    DELETE FROM edge_state;
    DELETE FROM sever_state;
    DELETE FROM task_fold;
    DELETE FROM named_views;
    DELETE FROM view_state;
    UPDATE tasks SET parent_task_id = NULL;
    DELETE FROM tasks;
";

/// One SELECT per table, surrogate ids mapped to slugs, in a total order.
const DIGEST_QUERIES: [(&str, &str); 10] = [
    (
        "tasks",
        "SELECT t.slug, t.depot, p.slug, t.status, t.description, t.created_ts, t.updated_ts,
                t.status_ts, t.description_ts, t.project_id, t.status_eid, t.description_eid,
                t.parent_ts, t.parent_eid, t.obs_count, t.child_count, t.lateral_out, t.lateral_in
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
        "SELECT min(a.slug, b.slug), max(a.slug, b.slug), s.ts, s.eid
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
];

/// Empties the projection and re-folds every event ordered by
/// `(ts, event_id)`, then rebuilds the FTS index. Runs on `conn` inside the
/// caller's transaction or savepoint.
pub(crate) fn rebuild_in(conn: &Connection) -> Result<(), StoreError> {
    conn.execute_batch(CLEAR_PROJECTION)?;
    let mut stmt =
        conn.prepare("SELECT event_id, task_id, type, ts, data FROM events ORDER BY ts, event_id")?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        let event_id: String = row.get(0)?;
        let task_id: String = row.get(1)?;
        let event_type: String = row.get(2)?;
        let ts: i64 = row.get(3)?;
        let data: String = row.get(4)?;
        let data: serde_json::Value =
            serde_json::from_str(&data).unwrap_or(serde_json::Value::Null);
        fold(
            conn,
            &FoldInput {
                event_id: &event_id,
                task_id: &task_id,
                event_type: &event_type,
                ts,
                data: &data,
            },
        )?;
    }
    conn.execute("INSERT INTO obs_fts(obs_fts) VALUES ('rebuild')", [])?;
    Ok(())
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
                match row.get_ref(i)? {
                    ValueRef::Null => h.update(b"N"),
                    ValueRef::Integer(n) => {
                        h.update(b"I");
                        h.update(n.to_string().as_bytes());
                    }
                    ValueRef::Real(x) => {
                        h.update(b"R");
                        h.update(x.to_string().as_bytes());
                    }
                    ValueRef::Text(t) | ValueRef::Blob(t) => {
                        h.update(b"T");
                        h.update(t.len().to_string().as_bytes());
                        h.update(b":");
                        h.update(t);
                    }
                }
                h.update([0u8]);
            }
            h.update(b"\n");
        }
    }
    Ok(hex(&h.finalize()))
}

/// True when the FTS index agrees with `observations`.
fn fts_consistent(conn: &Connection) -> Result<bool, StoreError> {
    match conn.execute(
        "INSERT INTO obs_fts(obs_fts, rank) VALUES ('integrity-check', 1)",
        [],
    ) {
        Ok(_) => Ok(true),
        Err(rusqlite::Error::SqliteFailure(e, _))
            if e.code == rusqlite::ErrorCode::DatabaseCorrupt =>
        {
            Ok(false)
        }
        Err(e) => Err(e.into()),
    }
}

impl Store {
    /// Rebuilds the projection from the log in one `BEGIN IMMEDIATE`
    /// transaction (spec/store.md "Rebuild and verify"). Errors: [`StoreError::Sqlite`].
    pub fn rebuild(&self) -> Result<(), StoreError> {
        let tx = Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)?;
        rebuild_in(&tx)?;
        tx.commit()?;
        Ok(())
    }

    /// Digests the projection, rebuilds inside a savepoint, digests again and
    /// rolls back: `ok` when the digests are equal and the FTS index is
    /// consistent. Holds the write lock for its duration so no write lands
    /// between the two digests; changes nothing. Errors: [`StoreError::Sqlite`].
    pub fn verify(&self) -> Result<Verification, StoreError> {
        let tx = Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)?;
        let before = digest_of(&tx)?;
        let fts_ok = fts_consistent(&tx)?;
        tx.execute_batch("SAVEPOINT verify_rebuild")?;
        let trial = rebuild_in(&tx).and_then(|()| digest_of(&tx));
        tx.execute_batch("ROLLBACK TO verify_rebuild; RELEASE verify_rebuild")?;
        let after = trial?;
        tx.rollback()?;
        Ok(Verification {
            ok: fts_ok && before == after,
            before,
            after,
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
