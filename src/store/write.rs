//! THE write boundary (spec/store.md: "Every write appends ... and folds it
//! ... in the SAME transaction"): a batch of events is appended and folded in
//! one `BEGIN IMMEDIATE` transaction, all or nothing.

use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};

use super::cycle::{parent_link, refuse_cycle};
use super::error::StoreError;
use super::event::{LoggedEvent, NewEvent, canonical_json, event_key, new_event_id};
use super::fold::{FoldInput, fold, parse_action};
use super::handle::Store;
use super::log::LogLine;
use serde_json::Value;

/// The data field that salts a legitimate repeat of an older event (same
/// subject, type, second, session and data) so it gets a fresh content key;
/// the fold ignores it (docs/store.md "Events").
pub const REPEAT_FIELD: &str = "repeat";

use super::event::MAX_TS;

/// Refuses hostile events before they reach the log: an empty subject or
/// type, a subject starting with `@` other than [`super::RESERVED_CAIRN`]
/// (and any `child_id`/`target_id` starting with `@`),
/// control characters in the subject, a referenced slug (`child_id`,
/// `target_id`), a metadata/view key or a claim owner, a `ts` outside
/// `0..=MAX_TS`, and
/// malformed data of a known type. Old timestamps are legal (imports).
/// Errors: [`StoreError::InvalidEvent`] whose reason is one sentence.
pub(crate) fn validate(ev: &NewEvent) -> Result<(), StoreError> {
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
    if ev.task_id.starts_with('@') && ev.task_id != super::RESERVED_CAIRN {
        return Err(invalid(format!(
            "the subject {:?} is reserved (only {} may start with @)",
            ev.task_id,
            super::RESERVED_CAIRN
        )));
    }
    if ev.task_id.chars().any(char::is_control) {
        return Err(invalid(format!(
            "the subject {:?} contains control characters",
            ev.task_id
        )));
    }
    for field in ["child_id", "target_id"] {
        if let Some(Value::String(v)) = ev.data.get(field)
            && v.starts_with('@')
        {
            return Err(invalid(format!(
                "data.{field} {v:?} is a reserved subject (tasks cannot start with @)"
            )));
        }
    }
    for field in ["child_id", "target_id", "key", "name", "owner"] {
        if let Some(Value::String(v)) = ev.data.get(field)
            && v.chars().any(char::is_control)
        {
            return Err(invalid(format!(
                "data.{field} {v:?} contains control characters"
            )));
        }
    }
    if !(0..=MAX_TS).contains(&ev.ts) {
        return Err(invalid(format!(
            "ts {} is outside 0..={MAX_TS} (year 9999)",
            ev.ts
        )));
    }
    parse_action(&ev.event_type, &ev.data).map_err(invalid)?;
    Ok(())
}

/// What a write appended: the `seq` of each event actually appended, in
/// batch order (duplicates — same content key as a logged event — skipped).
/// Refuses a NEW event whose data holds a NUL character (U+0000): no
/// engine-neutral store can keep it (PostgreSQL's text cannot), so neither
/// engine records one from now on. Events already in a log are still read
/// and folded (import and rebuild never call this). Errors:
/// [`StoreError::InvalidEvent`].
pub(crate) fn refuse_nul(ev: &NewEvent) -> Result<(), StoreError> {
    if crate::store::event::holds_nul(&ev.data) {
        return Err(StoreError::InvalidEvent {
            event_type: ev.event_type.clone(),
            reason: "its text holds a NUL character (U+0000), which cairn does not store"
                .to_string(),
        });
    }
    Ok(())
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WriteReport {
    /// Local sequence numbers of the appended events.
    pub seqs: Vec<i64>,
}

/// What [`WriteTx::append`] appends for one event: the salted copy when it
/// is a repeat (else the event itself), its canonical data and content key.
struct Resolved {
    salted: Option<NewEvent>,
    data: String,
    key: String,
}

/// A write transaction in progress (`BEGIN IMMEDIATE`). Events appended
/// through it are folded at once, so SQL run on [`WriteTx::conn`] afterwards
/// sees the new projection. Committed when the `write_with` closure returns
/// `Ok`, rolled back (nothing recorded) when it returns `Err`.
pub struct WriteTx<'a> {
    tx: Transaction<'a>,
    /// The store's "functions registered on the read-write connection".
    init: &'a std::cell::Cell<bool>,
    /// The seq and log line of each event appended so far (spec/store.md "Writes").
    lines: Vec<(i64, LogLine)>,
    /// A `task.split` was appended: the projection is folded again before
    /// the commit (docs/store.md "Same name in two clones").
    refold: bool,
}

impl WriteTx<'_> {
    /// Runs `init` on the store's read-write connection the first time
    /// only (the TQ engine registers its SQL functions: registering one
    /// again expires every prepared statement of the connection, so each
    /// write would parse its statements anew). Errors: whatever `init`
    /// returns (then it runs again next time).
    pub fn init_once(
        &self,
        init: impl FnOnce(&Connection) -> rusqlite::Result<()>,
    ) -> rusqlite::Result<()> {
        if !self.init.get() {
            init(&self.tx)?;
            self.init.set(true);
        }
        Ok(())
    }

    /// The connection inside the transaction (reads see appended events folded).
    pub fn conn(&self) -> &Connection {
        &self.tx
    }

    /// True when a task row with slug `slug` (depot prefix stripped) exists,
    /// read under this transaction's write lock.
    pub fn task_exists(&self, slug: &str) -> Result<bool, StoreError> {
        super::handle::task_exists_on(&self.tx, slug)
    }

    /// Mints `YYYY-MM-DD-core[-N]` for `name` on `today` under the write
    /// lock (spec/store.md "Slugs and names", issue 14): the existence check
    /// and the `-2`, `-3`, ... suffix see every committed create, and no
    /// other writer can take the slug before this transaction commits, so
    /// a create appended in the same transaction never merges into another
    /// task. Errors: [`StoreError::NameRequired`], [`StoreError::NameTooThin`],
    /// [`StoreError::Sqlite`].
    pub fn mint_slug(&self, name: &str, today: time::Date) -> Result<String, StoreError> {
        super::handle::mint_slug_on(&self.tx, name, today)
    }

    /// Appends and folds `events` in order. Returns the `seq` of each event
    /// actually appended.
    ///
    /// A content key already in the log is a *retry* only when its event is
    /// the newest (max `seq`) event of the subject task: the event is then
    /// skipped (not logged, not folded, no seq). Otherwise the event is a
    /// legitimate repeat of an older one (completed → open → completed in
    /// one second) and is appended with the salt `"repeat": N` added to its
    /// data — N = 1, 2, ... the smallest whose key is unused; when that
    /// salted key's event is itself the subject's newest, the event is a
    /// retry of that repeat and is skipped. The fold ignores `repeat`
    /// (docs/store.md "Events").
    ///
    /// A fork or structural link that would close a cycle of parent
    /// pointers is refused before it is appended (docs/store.md "Phase-of
    /// cycles").
    ///
    /// Errors: [`StoreError::PhaseCycle`],
    /// [`StoreError::InvalidEvent`] for an empty or reserved subject,
    /// control characters in a slug or metadata key, a `ts` outside
    /// `0..=253402300799`, or malformed data of a known type (the whole
    /// transaction should then be abandoned by returning the error),
    /// [`StoreError::Sqlite`].
    pub fn append(&mut self, events: &[NewEvent]) -> Result<Vec<i64>, StoreError> {
        let mut seqs = Vec::with_capacity(events.len());
        for ev in events {
            validate(ev)?;
            refuse_nul(ev)?;
            if let Some(link) = parent_link(ev) {
                refuse_cycle(&link, |slug| self.parent_of(slug))?;
            }
            let Some(resolved) = self.resolve_repeat(ev)? else {
                continue;
            };
            let ev = resolved.salted.as_ref().unwrap_or(ev);
            let (data, key) = (resolved.data, resolved.key);
            if let Some(seq) = self.append_one(&new_event_id(), ev, &data, &key)? {
                seqs.push(seq);
            }
        }
        Ok(seqs)
    }

    /// The slug of `slug`'s visible parent (`tasks.parent_task_id`), under
    /// this transaction (events appended so far are folded).
    fn parent_of(&self, slug: &str) -> Result<Option<String>, StoreError> {
        Ok(self
            .tx
            .prepare_cached(
                "SELECT p.slug FROM tasks c JOIN tasks p ON p.id = c.parent_task_id WHERE c.slug = ?1",
            )?
            .query_row(params![slug], |r| r.get(0))
            .optional()?)
    }

    /// Decides whether `ev` is new, a retry (`None`: skip it) or a repeat
    /// (`Some` with `salted` set).
    fn resolve_repeat(&self, ev: &NewEvent) -> Result<Option<Resolved>, StoreError> {
        let conn: &Connection = &self.tx;
        let newest: Option<i64> = conn
            .prepare_cached("SELECT max(seq) FROM events WHERE task_id = ?1")?
            .query_row(params![ev.task_id], |r| r.get(0))?;
        let mut salted: Option<NewEvent> = None;
        let mut repeat: i64 = 0;
        loop {
            let candidate = salted.as_ref().unwrap_or(ev);
            let data = canonical_json(&candidate.data);
            let key = event_key(
                &candidate.task_id,
                &candidate.event_type,
                candidate.ts,
                &candidate.session_id,
                &data,
            );
            let existing: Option<i64> = conn
                .prepare_cached("SELECT seq FROM events WHERE event_key = ?1")?
                .query_row(params![key], |r| r.get(0))
                .optional()?;
            match existing {
                None => return Ok(Some(Resolved { salted, data, key })),
                Some(seq) if Some(seq) == newest => return Ok(None),
                Some(_) => {}
            }
            repeat += 1;
            let mut next = ev.clone();
            match next.data.as_object_mut() {
                Some(map) => {
                    map.insert(REPEAT_FIELD.to_string(), Value::from(repeat));
                }
                None => {
                    return Err(StoreError::InvalidEvent {
                        event_type: ev.event_type.clone(),
                        reason: "data must be a JSON object".to_string(),
                    });
                }
            }
            salted = Some(next);
        }
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
            validate(&ev)?;
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
        // Callers (`append`, `import`) have run `validate(ev)`.
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
        let line = LogLine {
            event_id: event_id.to_string(),
            event_key: key.to_string(),
            task_id: ev.task_id.clone(),
            event_type: ev.event_type.clone(),
            ts: ev.ts,
            session_id: ev.session_id.clone(),
            prev_session_id: prev,
            data: data.to_string(),
        };
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
        if ev.event_type == super::event::types::SPLIT {
            super::split::mark_splits(conn)?;
            self.refold = true;
        }
        self.lines.push((seq, line));
        Ok(Some(seq))
    }
}

impl Store {
    /// Runs `f` inside one `BEGIN IMMEDIATE` transaction on the read-write
    /// connection: committed when `f` returns `Ok`, rolled back when it
    /// returns `Err` (or the commit fails). Waits up to the busy timeout for
    /// other writers. Used by TQ write queries (several mutation steps, one
    /// transaction). After the commit the appended events' lines go to their
    /// per-task logs ([`Store::after_commit`], spec/store.md "Writes").
    /// Errors: `f`'s error, or [`StoreError::Sqlite`] converted; a failed log
    /// append after the commit is [`StoreError::Io`] (the write stands;
    /// reconcile appends the lines later).
    pub fn write_with<T, E: From<StoreError>>(
        &self,
        f: impl FnOnce(&mut WriteTx<'_>) -> Result<T, E>,
    ) -> Result<T, E> {
        let guard = self.append_guard()?;
        let tx = Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)
            .map_err(StoreError::from)?;
        let mut wtx = WriteTx {
            tx,
            init: &self.write_init,
            lines: Vec::new(),
            refold: false,
        };
        let value = f(&mut wtx)?;
        if wtx.refold {
            super::refold::rebuild_in(&wtx.tx)?;
        }
        // Refused before it is acknowledged when a line could not be logged
        // or read back (issue 19): dropping `wtx` rolls the transaction back.
        let files = super::log::check_loggable(self.logs.as_ref(), &wtx.lines)?;
        wtx.tx.commit().map_err(StoreError::from)?;
        self.after_commit(&wtx.lines, guard, files)?;
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
