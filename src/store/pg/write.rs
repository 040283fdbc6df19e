//! THE write boundary on PostgreSQL (spec/store.md "Every write appends ...
//! and folds it ... in the SAME transaction"; spec/team.md "Concurrency and
//! claims"): a batch of events is appended and folded in one transaction,
//! all or nothing.
//!
//! Writes to one project take a transaction-scoped advisory lock first, so
//! they run one at a time as on SQLite (one writer): `seq` order is commit
//! order, which a change stream reading "events after seq N" relies on, and
//! two writers never deadlock on each other's rows. Readers never wait. A
//! serialization failure or deadlock (SQLSTATE 40001/40P01) from anything
//! else is retried inside, at most [`WRITE_ATTEMPTS`] times, then reported
//! as a sentence.

use serde_json::Value;

use super::connect::pg_err;
use super::fold::{Cx, fold};
use super::handle::PgStore;
use crate::store::cycle::{parent_link, refuse_cycle};
use crate::store::error::StoreError;
use crate::store::event::{NewEvent, canonical_json, event_key, new_event_id, types};
use crate::store::fold::FoldInput;
use crate::store::log::LogLine;
use crate::store::log::append::check_loggable;
use crate::store::write::{REPEAT_FIELD, WriteReport, refuse_nul, validate};

/// How many times a write transaction is tried when PostgreSQL reports a
/// serialization failure or a deadlock.
pub const WRITE_ATTEMPTS: u32 = 5;

/// The `LISTEN` channel of the project in `schema`: `cairn_SCHEMA`
/// (spec/team.md "Changes"). The payload of each notification is the
/// store's newest `seq`; PostgreSQL delivers it at commit, never for a
/// rolled-back write.
pub fn channel(schema: &str) -> String {
    format!("cairn_{schema}")
}

/// Queues this transaction's change notification (sent at commit).
fn notify(cx: &mut Cx<'_, '_>, schema: &str) -> Result<(), TxError> {
    cx.exec(
        "SELECT pg_notify($1, (SELECT coalesce(max(seq), 0) FROM events)::text)",
        &[&channel(schema)],
    )
    .map_err(tx_err)?;
    Ok(())
}

/// True for SQLSTATE 40001 (serialization failure) and 40P01 (deadlock).
fn retryable(e: &postgres::Error) -> bool {
    e.code().is_some_and(|c| {
        *c == postgres::error::SqlState::T_R_SERIALIZATION_FAILURE
            || *c == postgres::error::SqlState::T_R_DEADLOCK_DETECTED
    })
}

/// A retried transaction's failure: `Retry` asks for another attempt.
pub(crate) enum TxError {
    Retry,
    Fail(StoreError),
}

impl From<StoreError> for TxError {
    fn from(e: StoreError) -> TxError {
        TxError::Fail(e)
    }
}

/// Maps a client error: retryable ones ask for another attempt.
pub(crate) fn tx_err(e: postgres::Error) -> TxError {
    if retryable(&e) {
        TxError::Retry
    } else {
        TxError::Fail(pg_err(e))
    }
}

impl PgStore {
    /// Runs `body` in one write transaction holding the project's write
    /// lock, retrying on serialization failures and deadlocks. Errors: what
    /// `body` returns, or [`StoreError::Postgres`] saying the write was
    /// retried [`WRITE_ATTEMPTS`] times.
    pub(crate) fn write_tx<T>(
        &self,
        mut body: impl FnMut(&mut Cx<'_, '_>) -> Result<T, TxError>,
    ) -> Result<T, StoreError> {
        let schema = self.target().schema.clone();
        let mut client = self.client();
        let mut stmts = self.stmts();
        for attempt in 0..WRITE_ATTEMPTS {
            let mut tx = client.transaction().map_err(pg_err)?;
            // The same key as `hashtext('cairn.write.' || schema)`, in
            // one simple-protocol round trip (no prepare).
            let locked = tx.batch_execute(&format!(
                "SELECT pg_advisory_xact_lock(hashtext('cairn.write.{}'))",
                schema.replace('\'', "''")
            ));
            let result = match locked {
                Ok(_) => {
                    let mut cx = Cx::new(&mut tx, &mut stmts);
                    body(&mut cx)
                        .and_then(|v| cx.flush().map(|()| v).map_err(tx_err))
                        .and_then(|v| notify(&mut cx, &schema).map(|()| v))
                }
                Err(e) => Err(tx_err(e)),
            };
            match result {
                Ok(v) => match tx.commit() {
                    Ok(()) => return Ok(v),
                    Err(e) if retryable(&e) => {}
                    Err(e) => return Err(pg_err(e)),
                },
                Err(TxError::Retry) => {
                    let _ = tx.rollback();
                }
                Err(TxError::Fail(e)) => {
                    let _ = tx.rollback();
                    return Err(e);
                }
            }
            std::thread::sleep(std::time::Duration::from_millis(5 << attempt));
        }
        Err(StoreError::Postgres(format!(
            "the write was retried {WRITE_ATTEMPTS} times after serialization failures or deadlocks; nothing was recorded. Try again."
        )))
    }

    /// Appends `events` and folds each into the projection in one
    /// transaction (a repeat of the subject's newest event is skipped; an
    /// equal older event is salted with `repeat`, as on SQLite). Errors:
    /// [`StoreError::InvalidEvent`] (nothing written),
    /// [`StoreError::Postgres`].
    pub fn write(&self, events: &[NewEvent]) -> Result<WriteReport, StoreError> {
        for ev in events {
            validate(ev)?;
        }
        let seqs = self.write_tx(|tx| append(tx, events))?;
        Ok(WriteReport { seqs })
    }
}

/// Appends `events` inside `tx` (a [`PgStore::write_tx`] transaction) and
/// folds each: the body of [`PgStore::write`], for a write query that
/// selects, appends and reads in one transaction (`tq`). Returns the
/// `seq`s appended (repeats of a subject's newest event are skipped).
/// A fork or structural link that would close a cycle of parent pointers
/// is refused ([`StoreError::PhaseCycle`], docs/store.md "Phase-of cycles").
/// Errors: [`StoreError::InvalidEvent`], a database failure (retried by
/// `write_tx` when retryable).
pub(crate) fn append(tx: &mut Cx<'_, '_>, events: &[NewEvent]) -> Result<Vec<i64>, TxError> {
    let mut seqs = Vec::with_capacity(events.len());
    for ev in events {
        validate(ev)?;
        refuse_nul(ev)?;
        if let Some(link) = parent_link(ev) {
            refuse_cycle(&link, |slug| parent_of(tx, slug))?;
        }
        let Some((ev, data, key, last)) = resolve_repeat(tx, ev)? else {
            continue;
        };
        let prev = match last {
            Some((s, p)) => {
                if s != ev.session_id {
                    Some(s)
                } else {
                    p
                }
            }
            None => None,
        };
        let line = LogLine {
            event_id: new_event_id(),
            event_key: key,
            task_id: ev.task_id.clone(),
            event_type: ev.event_type.clone(),
            ts: ev.ts,
            session_id: ev.session_id.clone(),
            prev_session_id: prev,
            data,
        };
        // The database is the durable record here, but `cairn export
        // --logs` must be able to write every event: the same line limit
        // as SQLite's logs, checked before commit.
        check_loggable(None, &[(0, line.clone())])?;
        if let Some(seq) = insert_and_fold(tx, &line, &ev.data)? {
            seqs.push(seq);
        }
    }
    // What the fold left pending for `tasks` is written now: a caller reads
    // the projection next in the same transaction.
    tx.flush().map_err(tx_err)?;
    Ok(seqs)
}

/// The slug of `slug`'s visible parent, under this transaction (the fold
/// writes `parent_task_id` at once; docs/store.md "Phase-of cycles").
fn parent_of(tx: &mut Cx<'_, '_>, slug: &str) -> Result<Option<String>, TxError> {
    let row = tx
        .opt(
            "SELECT p.slug FROM tasks c JOIN tasks p ON p.id = c.parent_task_id WHERE c.slug = $1",
            &[&slug],
        )
        .map_err(tx_err)?;
    Ok(row.map(|r| r.get(0)))
}

/// The subject's newest event (session, previous session), when it has one.
type Last = Option<(String, Option<String>)>;

/// The event as it will be stored (salted when an older equal event
/// exists), its canonical data and key, and the subject's newest event
/// (for `prev_session_id`); `None` when it repeats the subject's newest
/// event. The subject's newest event and the first key are looked up in
/// ONE statement (the common case: no equal event).
fn resolve_repeat(
    tx: &mut Cx<'_, '_>,
    ev: &NewEvent,
) -> Result<Option<(NewEvent, String, String, Last)>, TxError> {
    let mut candidate = ev.clone();
    let mut repeat: i64 = 0;
    let mut newest: Option<i64> = None;
    let mut last: Last = None;
    let mut first = true;
    loop {
        let data = canonical_json(&candidate.data);
        let key = event_key(
            &candidate.task_id,
            &candidate.event_type,
            candidate.ts,
            &candidate.session_id,
            &data,
        );
        let existing: Option<i64> = if first {
            first = false;
            let r = tx
                .one(
                    "SELECT l.seq, l.session_id, l.prev_session_id,
                            (SELECT seq FROM events WHERE event_key = $2)
                     FROM (SELECT 1) x LEFT JOIN LATERAL (
                         SELECT seq, session_id, prev_session_id FROM events
                         WHERE task_id = $1 ORDER BY seq DESC LIMIT 1) l ON TRUE",
                    &[&ev.task_id, &key],
                )
                .map_err(tx_err)?;
            newest = r.get(0);
            if newest.is_some() {
                last = Some((r.get(1), r.get(2)));
            }
            r.get(3)
        } else {
            tx.opt("SELECT seq FROM events WHERE event_key = $1", &[&key])
                .map_err(tx_err)?
                .map(|r| r.get(0))
        };
        match existing {
            None => return Ok(Some((candidate, data, key, last))),
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
                return Err(TxError::Fail(StoreError::InvalidEvent {
                    event_type: ev.event_type.clone(),
                    reason: "data must be a JSON object".to_string(),
                }));
            }
        }
        candidate = next;
    }
}

/// Inserts the `lines` this store lacks (by event id or content key) in ONE
/// statement, in the order given, and folds each inserted one. Returns how
/// many were inserted, and whether a `task.split` was among them.
pub(crate) fn insert_and_fold_batch(
    cx: &mut Cx<'_, '_>,
    lines: &[LogLine],
) -> Result<(usize, bool), TxError> {
    let col = |f: fn(&LogLine) -> String| lines.iter().map(f).collect::<Vec<String>>();
    let ids = col(|l| l.event_id.clone());
    let keys = col(|l| l.event_key.clone());
    let tasks = col(|l| l.task_id.clone());
    let kinds = col(|l| l.event_type.clone());
    let sessions = col(|l| l.session_id.clone());
    let data = col(|l| l.data.clone());
    let ts: Vec<i64> = lines.iter().map(|l| l.ts).collect();
    let prev: Vec<Option<String>> = lines.iter().map(|l| l.prev_session_id.clone()).collect();
    let rows = cx
        .tx()
        .query(
            "INSERT INTO events(event_id, event_key, task_id, type, ts, session_id, prev_session_id, data)
             SELECT u.i, u.k, u.t, u.y, u.s, u.se, u.p, u.d
             FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::text[], $7::text[], $8::text[])
                  WITH ORDINALITY AS u(i, k, t, y, s, se, p, d, n)
             ORDER BY u.n
             ON CONFLICT DO NOTHING RETURNING event_id",
            &[&ids, &keys, &tasks, &kinds, &ts, &sessions, &prev, &data],
        )
        .map_err(tx_err)?;
    let added: std::collections::HashSet<String> = rows.iter().map(|r| r.get(0)).collect();
    let mut split = false;
    for l in lines.iter().filter(|l| added.contains(&l.event_id)) {
        let value: Value = serde_json::from_str(&l.data).unwrap_or(Value::Null);
        split |= l.event_type == types::SPLIT;
        fold(
            cx,
            &FoldInput {
                event_id: &l.event_id,
                task_id: &l.task_id,
                event_type: &l.event_type,
                ts: l.ts,
                data: &value,
            },
        )?;
    }
    if split {
        cx.exec(
            "INSERT INTO schema_meta(key, value) VALUES ($1, '1') ON CONFLICT DO NOTHING",
            &[&crate::store::split::SPLITS_MARK],
        )
        .map_err(tx_err)?;
    }
    Ok((added.len(), split))
}

/// Inserts `raw` (skipped when its event id or content key is already
/// there) and folds it with payload `data`. Returns its `seq`, or `None`
/// when skipped. A `task.split` is appended but folds only in a refold.
pub(crate) fn insert_and_fold(
    tx: &mut Cx<'_, '_>,
    raw: &LogLine,
    data: &Value,
) -> Result<Option<i64>, TxError> {
    let row = tx
        .opt(
            "INSERT INTO events(event_id, event_key, task_id, type, ts, session_id, prev_session_id, data)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
             ON CONFLICT DO NOTHING RETURNING seq",
            &[
                &raw.event_id,
                &raw.event_key,
                &raw.task_id,
                &raw.event_type,
                &raw.ts,
                &raw.session_id,
                &raw.prev_session_id,
                &raw.data,
            ],
        )
        .map_err(tx_err)?;
    let Some(row) = row else {
        return Ok(None);
    };
    if raw.event_type == types::SPLIT {
        tx.exec(
            "INSERT INTO schema_meta(key, value) VALUES ($1, '1') ON CONFLICT DO NOTHING",
            &[&crate::store::split::SPLITS_MARK],
        )
        .map_err(tx_err)?;
    }
    fold(
        tx,
        &FoldInput {
            event_id: &raw.event_id,
            task_id: &raw.task_id,
            event_type: &raw.event_type,
            ts: raw.ts,
            data,
        },
    )?;
    Ok(Some(row.get(0)))
}

/// True when a task row `slug` (depot prefix stripped) exists, as seen
/// inside the write transaction (under the write lock).
pub(crate) fn task_exists_in(cx: &mut Cx<'_, '_>, slug: &str) -> Result<bool, StoreError> {
    Ok(cx
        .opt(
            "SELECT 1 FROM tasks WHERE slug = $1",
            &[&crate::store::slug::strip_depot(slug)],
        )
        .map_err(crate::store::pg::connect::pg_err)?
        .is_some())
}

/// `YYYY-MM-DD-core[-N]` for `name` on `today`, the first suffix no task
/// row holds (as SQLite's `mint_slug_on`). Errors as `slug::slug_for`.
pub(crate) fn mint_slug_in(
    cx: &mut Cx<'_, '_>,
    name: &str,
    today: time::Date,
) -> Result<String, StoreError> {
    let base = crate::store::slug::slug_for(name, today)?;
    if !task_exists_in(cx, &base)? {
        return Ok(base);
    }
    let mut n: u64 = 2;
    loop {
        let candidate = format!("{base}-{n}");
        if !task_exists_in(cx, &candidate)? {
            return Ok(candidate);
        }
        n += 1;
    }
}
