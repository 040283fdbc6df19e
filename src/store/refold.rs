//! Folding the whole log again (spec/store.md "Rebuild"): empty the
//! projection and fold every event in `(ts, event_id)` order, with the
//! splits applied (`split.rs`) — what a rebuild, a migration's refold, a
//! bulk ingest and a write that appends a split share. Sits on `fold`;
//! `rebuild` (verify, digest, the aside swap) sits on it.

use rusqlite::{Connection, OptionalExtension, params};

use super::bulk::BulkFold;
use super::error::StoreError;
use super::fold::{FoldInput, fold};

/// Empties the projection and fold-state tables (children first).
pub(crate) const CLEAR_PROJECTION: &str = "
    DELETE FROM observations;
    DELETE FROM handoffs;
    DELETE FROM task_metadata;
    DELETE FROM edges;
    DELETE FROM edge_state;
    DELETE FROM sever_state;
    DELETE FROM task_fold;
    DELETE FROM named_views;
    DELETE FROM view_state;
    DELETE FROM task_texts;
    UPDATE tasks SET parent_task_id = NULL;
    DELETE FROM tasks;
";

/// The projection and fold-state tables whose triggers and secondary
/// indexes a whole refold takes off while it folds (rebuilt once after).
const PROJECTION: &str = "'tasks', 'task_texts', 'task_fold', 'edges', 'edge_state', \
     'sever_state', 'observations', 'handoffs', 'task_metadata', 'named_views', 'view_state'";

/// `(name, table, sql)` of the `type` (`trigger`, `index`) objects on the
/// projection tables that a refold takes off (indexes: the non-unique
/// ones declared by `CREATE INDEX`; unique keys stay, the fold's upserts
/// need them).
pub(crate) fn schema_objects(
    conn: &Connection,
    kind: &str,
) -> Result<Vec<(String, String, String)>, StoreError> {
    let sql = format!(
        "SELECT name, tbl_name, sql FROM sqlite_master
         WHERE type = ?1 AND sql IS NOT NULL AND tbl_name IN ({PROJECTION})
           AND sql NOT LIKE 'CREATE UNIQUE%'
         ORDER BY name"
    );
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map(params![kind], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// A quoted SQL identifier.
fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// Empties the projection and re-folds every event ordered by
/// `(ts, event_id)`, then rebuilds the FTS indexes (`obs_fts`, `task_fts`).
/// Runs on `conn` inside the caller's transaction or savepoint.
pub(crate) fn rebuild_in(conn: &Connection) -> Result<(), StoreError> {
    refold_whole(conn, conn)
}

/// Empties the projection on `target` and folds into it every event of
/// `source`'s `main.events` (the same connection, or a read transaction
/// on the live store while `target` is an aside file: `rebuild`), ordered
/// by `(ts, event_id)` with the splits applied, then builds the indexes.
/// Runs inside the caller's transactions.
///
/// Speed (spec/store.md "Write and rebuild speed"; issue 23): every
/// trigger on the projection (the FTS ones and the `counters_*`) and every
/// non-unique index is dropped while the events fold, then restored from
/// its own stored SQL: each index is built once by a sort and the FTS
/// indexes are built once ('rebuild'). The events fold through the bulk
/// fold (`bulk.rs`), which keeps the registers in memory and writes each
/// row once, the counter columns with it. The result is the same
/// projection the live fold and the triggers would have kept row by row.
pub(crate) fn refold_whole(target: &Connection, source: &Connection) -> Result<(), StoreError> {
    let triggers = schema_objects(target, "trigger")?;
    let indexes = schema_objects(target, "index")?;
    target.execute_batch(
        "INSERT INTO obs_fts(obs_fts) VALUES ('delete-all');
         INSERT INTO task_fts(task_fts) VALUES ('delete-all');",
    )?;
    for (name, _, _) in &triggers {
        target.execute_batch(&format!("DROP TRIGGER {}", ident(name)))?;
    }
    // Emptied with the indexes still there: deleting a task checks the
    // foreign keys that point at it, through those indexes.
    target.execute_batch(CLEAR_PROJECTION)?;
    for (name, _, _) in &indexes {
        target.execute_batch(&format!("DROP INDEX {}", ident(name)))?;
    }
    target.set_prepared_statement_cache_capacity(FOLD_STATEMENTS);
    let mut bulk = BulkFold::new();
    let total = if super::progress::wanted() {
        source.query_row("SELECT count(*) FROM main.events", [], |r| {
            r.get::<_, i64>(0)
        })?
    } else {
        0
    };
    each_event(
        source,
        "SELECT event_id, task_id, type, ts, data, event_key FROM main.events
         ORDER BY ts, event_id",
        [],
        u64::try_from(total).unwrap_or(0),
        |ev| bulk.fold(target, ev),
    )?;
    bulk.finish(target)?;
    super::progress::report(super::progress::Stage::Index, 0, 0);
    for (_, _, sql) in &indexes {
        target.execute_batch(sql)?;
    }
    for (_, _, sql) in &triggers {
        target.execute_batch(sql)?;
    }
    for fts in ["obs_fts", "task_fts"] {
        build_fts(target, fts)?;
    }
    super::progress::report(super::progress::Stage::Done, 0, 0);
    Ok(())
}

/// The in-memory term hash an FTS5 'rebuild' fills before it writes a
/// segment (`hashsize`, bytes; FTS5's default is 1 MiB): with the default,
/// 1M observations make a hundred small segments that the automerge then
/// merges and merges again; with 64 MiB a few, and the 'rebuild' of
/// `obs_fts` takes about half the time (4.6 → 2.5 s of CPU at 100k tasks).
const REBUILD_HASH_BYTES: i64 = 64 << 20;

/// Builds the FTS5 index `fts` once from its content table ('rebuild')
/// with a [`REBUILD_HASH_BYTES`] hash, then puts the `hashsize` setting
/// back as it was (a row a migration or a user set is restored through
/// FTS5; none is deleted from `{fts}_config`, so the stored settings are
/// the same as before; this connection's FTS5 may keep the larger hash
/// until it next reads the settings, which only lets one transaction's
/// writes wait longer in memory before a segment is written).
fn build_fts(conn: &Connection, fts: &str) -> Result<(), StoreError> {
    let before: Option<rusqlite::types::Value> = conn
        .query_row(
            &format!("SELECT v FROM {fts}_config WHERE k = 'hashsize'"),
            [],
            |r| r.get(0),
        )
        .optional()?;
    conn.execute(
        &format!("INSERT INTO {fts}({fts}, rank) VALUES ('hashsize', ?1)"),
        params![REBUILD_HASH_BYTES],
    )?;
    conn.execute_batch(&format!("INSERT INTO {fts}({fts}) VALUES ('rebuild')"))?;
    match before {
        Some(v) => conn.execute(
            &format!("INSERT INTO {fts}({fts}, rank) VALUES ('hashsize', ?1)"),
            params![v],
        )?,
        None => conn.execute(
            &format!("DELETE FROM {fts}_config WHERE k = 'hashsize'"),
            [],
        )?,
    };
    Ok(())
}

/// Folds the events whose `seq` is above `through` on `conn` (the few
/// that arrived during a rebuild), ordered by `(ts, event_id)` (the fold
/// is order-independent, so late events land correctly). Returns how many
/// were folded.
pub(crate) fn fold_events_after(conn: &Connection, through: i64) -> Result<usize, StoreError> {
    let total = if super::progress::wanted() {
        conn.query_row(
            "SELECT count(*) FROM main.events WHERE seq > ?1",
            params![through],
            |r| r.get::<_, i64>(0),
        )?
    } else {
        0
    };
    fold_selected(
        conn,
        // `+ts`: the range of `seq` (the rowid) read and sorted, not the
        // whole `events_order` index walked for the few late events (the
        // planner's choice for a bound `?1`: 1.3 s at 100k tasks).
        "SELECT event_id, task_id, type, ts, data, event_key FROM main.events WHERE seq > ?1
         ORDER BY +ts, +event_id",
        params![through],
        u64::try_from(total).unwrap_or(0),
    )
}

/// Folds, in order, the events `sql` selects as `(event_id, task_id, type,
/// ts, data, event_key)` with `args` bound; an event a `task.split` lists
/// folds under its new slug ([`super::split::Remap`]). Returns how many
/// were folded.
fn fold_selected(
    conn: &Connection,
    sql: &str,
    args: impl rusqlite::Params,
    total: u64,
) -> Result<usize, StoreError> {
    // The fold runs about twenty statements in turn: more than rusqlite's
    // default cache of 16 would re-prepare them over and over.
    conn.set_prepared_statement_cache_capacity(FOLD_STATEMENTS);
    each_event(conn, sql, args, total, |ev| fold(conn, ev))
}

/// Calls `f` on each event `sql` selects on `conn` as `(event_id,
/// task_id, type, ts, data, event_key)` with `args` bound, in order, as it
/// folds: an event a `task.split` lists (the splits of `conn`'s
/// `main.events`) under its new slug ([`super::split::Remap`]); malformed
/// data as JSON `null`. Reports [`super::progress::Stage::Fold`] of
/// `total`. Returns how many events it read.
fn each_event(
    conn: &Connection,
    sql: &str,
    args: impl rusqlite::Params,
    total: u64,
    mut f: impl FnMut(&FoldInput<'_>) -> Result<(), StoreError>,
) -> Result<usize, StoreError> {
    let remap = super::split::Remap::load(conn)?;
    let mut stmt = conn.prepare(sql)?;
    let mut rows = stmt.query(args)?;
    let mut n = 0;
    let mut ticker = super::progress::Ticker::new(super::progress::Stage::Fold, total);
    while let Some(row) = rows.next()? {
        let event_id: String = row.get(0)?;
        let task_id: String = row.get(1)?;
        let event_type: String = row.get(2)?;
        let ts: i64 = row.get(3)?;
        let data: String = row.get(4)?;
        let data: serde_json::Value =
            serde_json::from_str(&data).unwrap_or(serde_json::Value::Null);
        let moved = if remap.is_empty() {
            None
        } else {
            let key: String = row.get(5)?;
            remap.apply(&key, &task_id, &data)
        };
        let (task_id, data) = match &moved {
            Some((t, d)) => (t.as_str(), d),
            None => (task_id.as_str(), &data),
        };
        f(&FoldInput {
            event_id: &event_id,
            task_id,
            event_type: &event_type,
            ts,
            data,
        })?;
        n += 1;
        ticker.tick(n as u64);
    }
    Ok(n)
}

/// The statement cache a folding connection keeps (the fold's statements,
/// the write path's and the reads around them).
pub(crate) const FOLD_STATEMENTS: usize = 64;

/// Folds again every logged event whose type is one of `types`, ordered by
/// `(ts, event_id)` (a migration's [`super::schema::Step::Refold`]: events a
/// build that did not know the type kept unfolded). Returns how many.
pub(crate) fn refold_types(conn: &Connection, types: &[&str]) -> Result<usize, StoreError> {
    let list = serde_json::to_string(types).unwrap_or_else(|_| "[]".to_string());
    fold_selected(
        conn,
        "SELECT event_id, task_id, type, ts, data, event_key FROM main.events
         WHERE type IN (SELECT value FROM json_each(?1)) ORDER BY ts, event_id",
        params![list],
        0,
    )
}
