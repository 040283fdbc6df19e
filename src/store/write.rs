//! THE write boundary (spec/store.md: "Every write appends ... and folds it
//! ... in the SAME transaction"): a batch of events is appended and folded in
//! one `BEGIN IMMEDIATE` transaction, all or nothing.

use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};

use super::error::StoreError;
use super::event::{LoggedEvent, NewEvent, canonical_json, event_key, new_event_id};
use super::fold::{FoldInput, fold, parse_action};
use super::open::Store;

/// What a write appended: the `seq` of each event actually appended, in
/// batch order (duplicates — same content key as a logged event — skipped).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WriteReport {
    /// Local sequence numbers of the appended events.
    pub seqs: Vec<i64>,
}

/// A write transaction in progress (`BEGIN IMMEDIATE`). Events appended
/// through it are folded at once, so SQL run on [`WriteTx::conn`] afterwards
/// sees the new projection. Committed when the `write_with` closure returns
/// `Ok`, rolled back (nothing recorded) when it returns `Err`.
pub struct WriteTx<'a> {
    tx: Transaction<'a>,
}

impl WriteTx<'_> {
    /// The connection inside the transaction (reads see appended events folded).
    pub fn conn(&self) -> &Connection {
        &self.tx
    }

    /// Appends and folds `events` in order. Returns the `seq` of each event
    /// actually appended; an event whose content key is already logged is
    /// skipped (not folded again). Errors: [`StoreError::InvalidEvent`] for
    /// an empty subject or malformed data of a known type (the whole
    /// transaction should then be abandoned by returning the error),
    /// [`StoreError::Sqlite`].
    pub fn append(&mut self, events: &[NewEvent]) -> Result<Vec<i64>, StoreError> {
        let mut seqs = Vec::with_capacity(events.len());
        for ev in events {
            let data = canonical_json(&ev.data);
            let key = event_key(&ev.task_id, &ev.event_type, ev.ts, &ev.session_id, &data);
            if let Some(seq) = self.append_one(&new_event_id(), ev, &data, &key)? {
                seqs.push(seq);
            }
        }
        Ok(seqs)
    }

    /// Appends already-logged events (from another store's log, keeping their
    /// `event_id`s) and folds them; `seq` and `prev_session_id` are assigned
    /// here. An event whose content key or event id is already present is
    /// skipped. Returns the new seqs. Errors as [`WriteTx::append`].
    pub fn import(&mut self, events: &[LoggedEvent]) -> Result<Vec<i64>, StoreError> {
        let mut seqs = Vec::with_capacity(events.len());
        for logged in events {
            let ev = NewEvent {
                task_id: logged.task_id.clone(),
                event_type: logged.event_type.clone(),
                ts: logged.ts,
                session_id: logged.session_id.clone(),
                data: logged.data.clone(),
            };
            let data = canonical_json(&ev.data);
            let key = event_key(&ev.task_id, &ev.event_type, ev.ts, &ev.session_id, &data);
            if let Some(seq) = self.append_one(&logged.event_id, &ev, &data, &key)? {
                seqs.push(seq);
            }
        }
        Ok(seqs)
    }

    fn append_one(
        &mut self,
        event_id: &str,
        ev: &NewEvent,
        data: &str,
        key: &str,
    ) -> Result<Option<i64>, StoreError> {
        let invalid = |reason: String| StoreError::InvalidEvent {
            event_type: ev.event_type.clone(),
            reason,
        };
        if ev.task_id.trim().is_empty() {
            return Err(invalid("the subject task_id is empty".to_string()));
        }
        if ev.event_type.trim().is_empty() {
            return Err(invalid("the event type is empty".to_string()));
        }
        parse_action(&ev.event_type, &ev.data).map_err(invalid)?;
        let conn: &Connection = &self.tx;
        // The previous distinct session: the last event's session when it is
        // not ours, else the last event's own previous session (one indexed
        // lookup, not a scan of our own events).
        let last: Option<(String, Option<String>)> = conn
            .prepare_cached(
                "SELECT session_id, prev_session_id FROM events WHERE task_id = ?1
                 ORDER BY seq DESC LIMIT 1",
            )?
            .query_row(params![ev.task_id], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        let prev = match last {
            Some((session, _)) if session != ev.session_id => Some(session),
            Some((_, prev)) => prev,
            None => None,
        };
        let inserted = conn
            .prepare_cached(
                "INSERT OR IGNORE INTO events(event_id, event_key, task_id, type, ts, session_id, prev_session_id, data)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )?
            .execute(params![
                event_id,
                key,
                ev.task_id,
                ev.event_type,
                ev.ts,
                ev.session_id,
                prev,
                data
            ])?;
        if inserted == 0 {
            return Ok(None);
        }
        let seq = conn.last_insert_rowid();
        fold(
            conn,
            &FoldInput {
                event_id,
                task_id: &ev.task_id,
                event_type: &ev.event_type,
                ts: ev.ts,
                data: &ev.data,
            },
        )?;
        Ok(Some(seq))
    }
}

impl Store {
    /// Runs `f` inside one `BEGIN IMMEDIATE` transaction on the read-write
    /// connection: committed when `f` returns `Ok`, rolled back when it
    /// returns `Err` (or the commit fails). Waits up to the busy timeout for
    /// other writers. Used by TQ write queries (several mutation steps, one
    /// transaction). Errors: `f`'s error, or [`StoreError::Sqlite`] converted.
    pub fn write_with<T, E: From<StoreError>>(
        &self,
        f: impl FnOnce(&mut WriteTx<'_>) -> Result<T, E>,
    ) -> Result<T, E> {
        let tx = Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)
            .map_err(StoreError::from)?;
        let mut wtx = WriteTx { tx };
        let value = f(&mut wtx)?;
        wtx.tx.commit().map_err(StoreError::from)?;
        Ok(value)
    }

    /// THE write boundary: appends and folds `events` in ONE `BEGIN
    /// IMMEDIATE` transaction, all or nothing (`write_with(|tx| tx.append(events))`).
    pub fn write(&self, events: &[NewEvent]) -> Result<WriteReport, StoreError> {
        let seqs = self.write_with(|tx| tx.append(events))?;
        Ok(WriteReport { seqs })
    }

    /// Appends another log's events keeping their event ids (see
    /// [`WriteTx::import`]), in one transaction.
    pub fn import(&self, events: &[LoggedEvent]) -> Result<WriteReport, StoreError> {
        let seqs = self.write_with(|tx| tx.import(events))?;
        Ok(WriteReport { seqs })
    }
}

/// Same as [`Store::write`]: `store::write(&store, &events)`.
pub fn write(store: &Store, events: &[NewEvent]) -> Result<WriteReport, StoreError> {
    store.write(events)
}
