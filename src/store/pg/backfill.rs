//! Filling what a schema migration adds on PostgreSQL from the events
//! already stored (docs/team.md "The schema"): version 5's `task_texts`
//! (`store::texts`, spec/tq.md §10), as the SQLite migration does by
//! refolding `task.create` and `task.update-description`.
//!
//! Sits below the fold (it runs while the store opens), so it reads the
//! registers from what the fold left: the description from `tasks` (the
//! same LWW register), the name from the `task.create` events themselves,
//! each under the slug it folded as (a `task.split` moves the events it
//! lists: `store/split.rs`; the earliest split of an event wins).

use std::collections::HashMap;

use postgres::Transaction;
use serde_json::Value;

use super::connect::pg_err;
use super::search::tsvector_of;
use crate::store::error::StoreError;
use crate::store::event::types;
use crate::store::texts::{Field, TaskTexts, create_name};

/// The `(from, into)` of each event key a well-formed `task.split` lists.
fn moved_keys(tx: &mut Transaction<'_>) -> Result<HashMap<String, (String, String)>, StoreError> {
    let rows = tx
        .query(
            "SELECT task_id, data FROM events WHERE type = $1 ORDER BY ts, event_id",
            &[&types::SPLIT],
        )
        .map_err(pg_err)?;
    let mut moved = HashMap::new();
    for r in rows {
        let from: String = r.get(0);
        let Ok(data) = serde_json::from_str::<Value>(r.get(1)) else {
            continue;
        };
        let Some(into) = data.get("into").and_then(Value::as_str).filter(|s| {
            !s.trim().is_empty() && !s.starts_with('@') && !s.chars().any(char::is_control)
        }) else {
            continue;
        };
        let Some(keys) = data.get("events").and_then(Value::as_array) else {
            continue;
        };
        for k in keys.iter().filter_map(Value::as_str) {
            moved
                .entry(k.to_string())
                .or_insert_with(|| (from.clone(), into.to_string()));
        }
    }
    Ok(moved)
}

/// True when a `task.create`'s data folds (its `description` and
/// `project_id` absent, null or strings; `store::fold::parse_action`).
fn folds(data: &Value) -> bool {
    ["description", "project_id"].iter().all(|k| {
        matches!(
            data.get(*k),
            None | Some(Value::Null) | Some(Value::String(_))
        )
    })
}

/// Fills `task_texts` (emptied first) from the stored events and `tasks`,
/// inside the migration's transaction `tx`. Errors: [`StoreError::Postgres`].
pub(crate) fn task_texts(tx: &mut Transaction<'_>) -> Result<(), StoreError> {
    let moved = moved_keys(tx)?;
    let mut texts: HashMap<String, TaskTexts> = HashMap::new();
    let creates = tx
        .query(
            "SELECT event_id, task_id, ts, data, event_key FROM events
             WHERE type = $1 ORDER BY ts, event_id",
            &[&types::TASK_CREATE],
        )
        .map_err(pg_err)?;
    for r in creates {
        let Ok(data) = serde_json::from_str::<Value>(r.get(3)) else {
            continue;
        };
        let Some(name) = create_name(&data).filter(|_| folds(&data)) else {
            continue;
        };
        let (eid, task, ts, key): (String, String, i64, String) =
            (r.get(0), r.get(1), r.get(2), r.get(4));
        let slug = match moved.get(&key) {
            Some((from, into)) if *from == task => into.clone(),
            _ => task,
        };
        texts
            .entry(slug)
            .or_default()
            .apply(Field::Name, &name, ts, &eid);
    }
    let described = tx
        .query(
            "SELECT slug, description, description_ts, description_eid FROM tasks
             WHERE description IS NOT NULL AND description_ts IS NOT NULL
               AND description_eid IS NOT NULL",
            &[],
        )
        .map_err(pg_err)?;
    for r in described {
        let (slug, d, ts, eid): (String, String, i64, String) =
            (r.get(0), r.get(1), r.get(2), r.get(3));
        texts
            .entry(slug)
            .or_default()
            .apply(Field::Description, &d, ts, &eid);
    }
    tx.batch_execute("DELETE FROM task_texts").map_err(pg_err)?;
    let st = tx
        .prepare(
            "INSERT INTO task_texts(task_id, name, name_ts, name_eid, description,
                                    description_ts, description_eid, tsv)
             SELECT id, $2, $3, $4, $5, $6, $7, $8::text::tsvector FROM tasks WHERE slug = $1",
        )
        .map_err(pg_err)?;
    for (slug, t) in &texts {
        let (n, d) = (t.name.as_ref(), t.description.as_ref());
        let tsv = tsvector_of(&[t.name_text(), t.description_text()]);
        tx.execute(
            &st,
            &[
                slug,
                &n.map(|s| s.text.as_str()),
                &n.map(|s| s.ts),
                &n.map(|s| s.eid.as_str()),
                &d.map(|s| s.text.as_str()),
                &d.map(|s| s.ts),
                &d.map(|s| s.eid.as_str()),
                &tsv,
            ],
        )
        .map_err(pg_err)?;
    }
    Ok(())
}
