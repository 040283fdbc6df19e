//! `cairn push` (spec/team.md "Moving between engines"): a project's events
//! copied from its SQLite store into a PostgreSQL schema by `event_id`,
//! idempotent (an event already there is skipped), one transaction per
//! batch, folded there as they land; a `task.split` among them refolds the
//! target once at the end. The caller compares digests.

use super::connect::pg_err;
use super::handle::PgStore;
use super::write::insert_and_fold_batch;
use crate::store::error::StoreError;
use crate::store::event::types;
use crate::store::handle::Store;
use crate::store::log::LogLine;

/// The tables the planner reads, analyzed after a push.
const ANALYZE: &str =
    "ANALYZE tasks, edges, task_metadata, observations, handoffs, named_views, events";

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
            return Err(StoreError::CannotPush(format!(
                "event {} ({} on {}) holds a NUL character (U+0000), which PostgreSQL cannot store; nothing was pushed.",
                l.event_id, l.event_type, l.task_id
            )));
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
            // (docs/performance.md "PostgreSQL (issue 21)").
            self.client().batch_execute(ANALYZE).map_err(pg_err)?;
        }
        Ok(PushReport {
            read: events.len(),
            added,
        })
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
