//! Folding the whole log again (spec/store.md "Rebuild"): empty the
//! projection and fold every event in `(ts, event_id)` order, with the
//! splits applied (`split.rs`) — what a rebuild, a migration's refold, a
//! bulk ingest and a write that appends a split share. Sits on `fold`;
//! `rebuild` (verify, digest, the aside swap) sits on it.

use rusqlite::{Connection, params};

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

/// Empties the projection and re-folds every event ordered by
/// `(ts, event_id)`, then rebuilds the FTS indexes (`obs_fts`, `task_fts`).
/// Runs on `conn` inside the caller's transaction or savepoint.
pub(crate) fn rebuild_in(conn: &Connection) -> Result<(), StoreError> {
    // Speed (spec/store.md "Write and rebuild speed"): clear the FTS
    // indexes with 'delete-all', fold with their triggers dropped, then
    // restore them (their own stored SQL) and build each index once.
    let triggers: Vec<(String, String)> = conn
        .prepare(
            "SELECT name, sql FROM sqlite_master
             WHERE type = 'trigger'
               AND ((tbl_name = 'observations' AND sql LIKE '%obs_fts%')
                    OR (tbl_name = 'task_texts' AND sql LIKE '%task_fts%'))
             ORDER BY name",
        )?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    conn.execute_batch(
        "INSERT INTO obs_fts(obs_fts) VALUES ('delete-all');
         INSERT INTO task_fts(task_fts) VALUES ('delete-all');",
    )?;
    for (name, _) in &triggers {
        conn.execute_batch(&format!("DROP TRIGGER \"{}\"", name.replace('"', "\"\"")))?;
    }
    conn.execute_batch(CLEAR_PROJECTION)?;
    fold_events_after(conn, 0)?;
    for (_, sql) in &triggers {
        conn.execute_batch(sql)?;
    }
    conn.execute_batch(
        "INSERT INTO obs_fts(obs_fts) VALUES ('rebuild');
         INSERT INTO task_fts(task_fts) VALUES ('rebuild');",
    )?;
    Ok(())
}

/// Folds the events whose `seq` is above `through` (0: every event) on
/// `conn`, ordered by `(ts, event_id)` (the fold is order-independent, so
/// late events land correctly). Returns how many were folded.
pub(crate) fn fold_events_after(conn: &Connection, through: i64) -> Result<usize, StoreError> {
    fold_selected(
        conn,
        "SELECT event_id, task_id, type, ts, data, event_key FROM main.events WHERE seq > ?1
         ORDER BY ts, event_id",
        params![through],
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
) -> Result<usize, StoreError> {
    let remap = super::split::Remap::load(conn)?;
    let mut stmt = conn.prepare(sql)?;
    let mut rows = stmt.query(args)?;
    let mut n = 0;
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
        fold(
            conn,
            &FoldInput {
                event_id: &event_id,
                task_id,
                event_type: &event_type,
                ts,
                data,
            },
        )?;
        n += 1;
    }
    Ok(n)
}

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
    )
}
