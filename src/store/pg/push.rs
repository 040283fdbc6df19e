//! `cairn push` (spec/team.md "Moving between engines"): a project's events
//! copied from its SQLite store into a PostgreSQL schema by `event_id`,
//! idempotent (an event already there is skipped), one transaction per
//! batch, folded there as they land; a `task.split` among them refolds the
//! target once at the end. The caller compares digests. Into an empty
//! schema, [`PgStore::push_store`] copies the events and the projection
//! instead (`copy.rs`).

use super::connect::pg_err;
use super::handle::PgStore;
use super::write::insert_and_fold_batch;
use crate::store::error::StoreError;
use crate::store::event::types;
use crate::store::handle::Store;
use crate::store::log::LogLine;

/// The tables the planner reads, analyzed after a push.
const ANALYZE: &str =
    "VACUUM (ANALYZE) tasks, edges, task_metadata, observations, handoffs, named_views, events";

/// Events per transaction.
pub const PUSH_BATCH: usize = 5000;

/// What a push did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushReport {
    /// Events read from the source.
    pub read: usize,
    /// Events the target did not have (appended and folded).
    pub added: usize,
}

/// Every event of the SQLite store `source`, in arrival (`seq`) order, as
/// stored. Errors: [`StoreError::Sqlite`].
pub fn source_events(source: &Store) -> Result<Vec<LogLine>, StoreError> {
    let mut stmt = source.conn().prepare(
        "SELECT event_id, event_key, task_id, type, ts, session_id, prev_session_id, data
         FROM events ORDER BY seq",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok(LogLine {
            event_id: r.get(0)?,
            event_key: r.get(1)?,
            task_id: r.get(2)?,
            event_type: r.get(3)?,
            ts: r.get(4)?,
            session_id: r.get(5)?,
            prev_session_id: r.get(6)?,
            data: r.get(7)?,
        })
    })?;
    Ok(rows.collect::<Result<Vec<_>, _>>()?)
}

/// The refusal of a push holding event `id` (`kind` on `task`) whose
/// payload has a NUL character.
fn nul_refusal(id: &str, kind: &str, task: &str) -> StoreError {
    StoreError::CannotPush(format!(
        "event {id} ({kind} on {task}) holds a NUL character (U+0000), which PostgreSQL cannot store; nothing was pushed."
    ))
}

/// The first event of `source` whose payload holds a NUL character (id,
/// type, task), found without parsing every payload: JSON spells NUL
/// `\u0000`, so only payloads holding that text are parsed. Errors:
/// [`StoreError::Sqlite`].
fn first_nul_event(source: &Store) -> Result<Option<(String, String, String)>, StoreError> {
    let mut stmt = source.conn().prepare(
        "SELECT event_id, type, task_id, data FROM events WHERE instr(data, '\\u0000') > 0 ORDER BY seq",
    )?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        let data: String = r.get(3)?;
        if serde_json::from_str::<serde_json::Value>(&data)
            .is_ok_and(|v| crate::store::event::holds_nul(&v))
        {
            return Ok(Some((r.get(0)?, r.get(1)?, r.get(2)?)));
        }
    }
    Ok(None)
}

impl PgStore {
    /// Appends the `events` this store lacks (by event id and content key)
    /// and folds them, [`PUSH_BATCH`] per transaction; `progress(done,
    /// total)` is called after each batch. Refolds once at the end when a
    /// `task.split` was added. Errors: [`StoreError::Postgres`] (batches
    /// already committed stay: pushing again resumes).
    pub fn push(
        &self,
        events: &[LogLine],
        mut progress: impl FnMut(usize, usize),
    ) -> Result<PushReport, StoreError> {
        // An old SQLite event with a NUL character cannot be stored here:
        // say which, before anything is written.
        let nul = |l: &&LogLine| {
            serde_json::from_str::<serde_json::Value>(&l.data)
                .is_ok_and(|v| crate::store::event::holds_nul(&v))
        };
        if let Some(l) = events.iter().find(nul) {
            return Err(nul_refusal(&l.event_id, &l.event_type, &l.task_id));
        }
        self.refuse_other_history(events)?;
        let mut added = 0;
        let mut split = false;
        for (i, batch) in events.chunks(PUSH_BATCH).enumerate() {
            let (n, s) = self.write_tx(|cx| insert_and_fold_batch(cx, batch))?;
            added += n;
            split |= s;
            progress(
                (i * PUSH_BATCH + batch.len()).min(events.len()),
                events.len(),
            );
        }
        if split {
            self.rebuild()?;
        }
        if added > 0 {
            // Fresh statistics for the planner: right after a bulk load
            // PostgreSQL has none until autovacuum comes by, and plans
            // made without them (e.g. `plan-frontier` at 10k tasks: 11 ms
            // before, 0.4 ms after) are off by orders of magnitude
            // (docs/performance.md "PostgreSQL (issue 21)"). VACUUM as well:
            // it sets the loaded rows' hint bits and the visibility map
            // now, once, instead of autovacuum doing it while the first
            // readers come (they slowed 2x in the minute after a push).
            self.client().batch_execute(ANALYZE).map_err(pg_err)?;
        }
        Ok(PushReport {
            read: events.len(),
            added,
        })
    }

    /// Pushes the SQLite store `source`: into a schema with no events and
    /// no tasks by copying its events and projection table by table
    /// (`copy.rs`, one transaction under the write lock; `progress(rows
    /// done, rows in all)`), else event by event as [`PgStore::push`]
    /// does (`progress(events done, events in all)`). Errors: as
    /// [`PgStore::push`]; [`StoreError::Sqlite`] reading the source.
    pub fn push_store(
        &self,
        source: &Store,
        mut progress: impl FnMut(usize, usize),
    ) -> Result<PushReport, StoreError> {
        if let Some(l) = first_nul_event(source)? {
            return Err(nul_refusal(&l.0, &l.1, &l.2));
        }
        let copied = self.write_tx(|cx| {
            let empty: bool = cx
                .tx()
                .query_one(
                    "SELECT NOT EXISTS (SELECT 1 FROM events) AND NOT EXISTS (SELECT 1 FROM tasks)",
                    &[],
                )
                .map_err(super::write::tx_err)?
                .get(0);
            if !empty {
                return Ok(None);
            }
            let n = super::copy::copy_store(cx.tx(), source, |done, all| {
                progress(
                    usize::try_from(done).unwrap_or(usize::MAX),
                    usize::try_from(all).unwrap_or(usize::MAX),
                )
            })?;
            Ok(Some(n))
        })?;
        match copied {
            Some(n) => {
                if n > 0 {
                    self.client().batch_execute(ANALYZE).map_err(pg_err)?;
                }
                Ok(PushReport { read: n, added: n })
            }
            None => self.push(&source_events(source)?, progress),
        }
    }

    /// Refuses a push whose tasks the target already holds from another
    /// history: a `task.create` of the same slug that the source does not
    /// have (two unrelated projects, or two clones that each created the
    /// name). Pushing would fold both histories into one task. Errors:
    /// [`StoreError::CannotPush`] naming the first such task (nothing
    /// written), [`StoreError::Postgres`].
    fn refuse_other_history(&self, events: &[LogLine]) -> Result<(), StoreError> {
        use std::collections::{BTreeMap, BTreeSet};
        let mut ours: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for l in events.iter().filter(|l| l.event_type == types::TASK_CREATE) {
            ours.entry(l.task_id.as_str())
                .or_default()
                .insert(l.event_id.as_str());
        }
        if ours.is_empty() {
            return Ok(());
        }
        let slugs: Vec<&str> = ours.keys().copied().collect();
        let rows = self
            .client()
            .query(
                "SELECT task_id, event_id FROM events
                 WHERE type = $1 AND task_id = ANY($2::text[]) ORDER BY task_id, seq",
                &[&types::TASK_CREATE, &slugs],
            )
            .map_err(super::connect::pg_err)?;
        for r in &rows {
            let (slug, id): (&str, &str) = (r.get(0), r.get(1));
            if !ours.get(slug).is_some_and(|s| s.contains(id)) {
                return Err(StoreError::CannotPush(format!(
                    "the target already holds a task {slug} created elsewhere (another project or clone); nothing was pushed. Push into a schema of its own (--pg-schema NAME)."
                )));
            }
        }
        Ok(())
    }
}
