//! Rebuild, verify and digest on PostgreSQL (spec/store.md "Rebuild and
//! verify"; spec/team.md "The same on both engines": `verify`'s digest is
//! byte-identical to SQLite's for the same events).
//!
//! The digest runs SQLite's own digest queries (`store/rebuild.rs`,
//! portable SQL) and hashes each cell with the same tags. A refold empties
//! the projection and folds every event in `(ts, event_id)` order, moving
//! the events a `task.split` lists (`store/split.rs`). `verify` refolds
//! inside a transaction it rolls back, so it never changes the store.

use postgres::Transaction;
use postgres::types::Type;
use sha2::{Digest, Sha256};

use super::connect::pg_err;
use super::fold::{Cx, fold};
use super::handle::PgStore;
use super::write::{TxError, tx_err};
use crate::store::error::StoreError;
use crate::store::event::{hex, types};
use crate::store::fold::FoldInput;
use crate::store::rebuild::{Cell, DIGEST_QUERIES, Verification, hash_cell};
use crate::store::split::Remap;

/// The projection digest (64 lower-hex chars) over the tables visible to
/// `tx`. Errors: [`StoreError::Postgres`].
pub(crate) fn digest_in(tx: &mut Transaction<'_>) -> Result<String, StoreError> {
    let mut h = Sha256::new();
    for (table, sql) in DIGEST_QUERIES {
        h.update(b"#");
        h.update(table.as_bytes());
        h.update(b"\n");
        let rows = tx.query(sql, &[]).map_err(pg_err)?;
        for row in rows {
            for (i, col) in row.columns().iter().enumerate() {
                let t = col.type_();
                if *t == Type::INT8 {
                    let v: Option<i64> = row.get(i);
                    hash_cell(&mut h, v.map_or(Cell::Null, Cell::Int));
                } else if *t == Type::INT4 {
                    let v: Option<i32> = row.get(i);
                    hash_cell(&mut h, v.map_or(Cell::Null, |n| Cell::Int(i64::from(n))));
                } else {
                    let v: Option<&str> = row.get(i);
                    hash_cell(&mut h, v.map_or(Cell::Null, |s| Cell::Text(s.as_bytes())));
                }
            }
            h.update(b"\n");
        }
    }
    Ok(hex(&h.finalize()))
}

/// Empties the projection and folds every event again, in `(ts, event_id)`
/// order, inside `tx`. Returns how many events were folded.
pub(crate) fn refold_in(cx: &mut Cx<'_, '_>) -> Result<usize, TxError> {
    cx.tx()
        .batch_execute(
            "DELETE FROM observations; DELETE FROM handoffs; DELETE FROM task_metadata;
         DELETE FROM edges; DELETE FROM edge_state; DELETE FROM sever_state;
         DELETE FROM task_fold; DELETE FROM named_views; DELETE FROM view_state;
         DELETE FROM task_texts; UPDATE tasks SET parent_task_id = NULL; DELETE FROM tasks;",
        )
        .map_err(tx_err)?;
    let splits = cx
        .tx()
        .query(
            "SELECT task_id, data FROM events WHERE type = $1 ORDER BY ts, event_id",
            &[&types::SPLIT],
        )
        .map_err(tx_err)?;
    let remap = Remap::from_splits(splits.iter().map(|r| (r.get(0), r.get(1))));
    let rows = cx
        .tx()
        .query(
            "SELECT event_id, task_id, type, ts, data, event_key FROM events ORDER BY ts, event_id",
            &[],
        )
        .map_err(tx_err)?;
    let mut n = 0;
    for row in &rows {
        let event_id: &str = row.get(0);
        let task_id: &str = row.get(1);
        let event_type: &str = row.get(2);
        let ts: i64 = row.get(3);
        let data: serde_json::Value =
            serde_json::from_str(row.get(4)).unwrap_or(serde_json::Value::Null);
        let moved = if remap.is_empty() {
            None
        } else {
            remap.apply(row.get(5), task_id, &data)
        };
        let (task_id, data) = match &moved {
            Some((t, d)) => (t.as_str(), d),
            None => (task_id, &data),
        };
        fold(
            cx,
            &FoldInput {
                event_id,
                task_id,
                event_type,
                ts,
                data,
            },
        )?;
        n += 1;
    }
    cx.flush().map_err(tx_err)?;
    Ok(n)
}

impl PgStore {
    /// The projection digest (64 lower-hex chars), read in one transaction;
    /// equal to SQLite's digest for the same events. Errors:
    /// [`StoreError::Postgres`].
    pub fn digest(&self) -> Result<String, StoreError> {
        let mut client = self.client();
        let mut tx = client
            .build_transaction()
            .isolation_level(postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .map_err(pg_err)?;
        let d = digest_in(&mut tx)?;
        tx.commit().map_err(pg_err)?;
        Ok(d)
    }

    /// Empties the projection and folds every event again, in one
    /// transaction under the write lock. Errors: [`StoreError::Postgres`].
    pub fn rebuild(&self) -> Result<(), StoreError> {
        self.write_tx(|tx| refold_in(tx).map(|_| ()))
    }

    /// Digests the projection, refolds every event inside a transaction
    /// that is rolled back, digests again: `ok` when equal. Never changes
    /// the store; holds the project's write lock meanwhile (writes wait,
    /// reads do not). Errors: [`StoreError::Postgres`].
    pub fn verify(&self) -> Result<Verification, StoreError> {
        let schema = self.target().schema.clone();
        let mut client = self.client();
        let mut stmts = self.stmts();
        // The project's write lock first (writers wait, readers do not):
        // the live projection and the refold then see the same events, and
        // no concurrent write can conflict with the trial refold.
        let mut tx = client.transaction().map_err(pg_err)?;
        tx.execute(
            "SELECT pg_advisory_xact_lock(hashtext('cairn.write.' || $1::text))",
            &[&schema],
        )
        .map_err(pg_err)?;
        let before = digest_in(&mut tx)?;
        match refold_in(&mut Cx::new(&mut tx, &mut stmts)) {
            Ok(_) => {}
            Err(TxError::Fail(e)) => return Err(e),
            Err(TxError::Retry) => {
                return Err(StoreError::Postgres(
                    "verify met a concurrent write; nothing changed. Run it again.".to_string(),
                ));
            }
        }
        let after = digest_in(&mut tx)?;
        tx.rollback().map_err(pg_err)?;
        Ok(Verification {
            ok: before == after,
            before,
            after,
            logs: None,
        })
    }
}
