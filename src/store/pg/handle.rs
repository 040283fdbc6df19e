//! The PostgreSQL store handle (spec/team.md "Selecting PostgreSQL"): one
//! connection to one project's schema, opened and migrated under an
//! advisory lock so two servers starting at once do not both migrate.

use std::cell::{RefCell, RefMut};

use super::connect::{connect, pg_err};
use super::schema::{DDL, SCHEMA_VERSION};
use super::target::PgTarget;
use crate::store::error::StoreError;
use crate::store::event::LoggedEvent;
use crate::store::log::LogLine;

/// The connection's prepared TQ read statements by SQL text, hashed with
/// foldhash (a gated statement's text is kilobytes: SipHash of it was a
/// visible part of a cached read).
pub type ReadStmts =
    std::collections::HashMap<String, postgres::Statement, foldhash::fast::RandomState>;

/// At most this many read statements stay prepared per connection (the
/// cache is emptied when full).
pub const STATEMENT_CACHE: usize = 256;

/// Prepared statements by SQL text, kept for the connection's life (one
/// round trip per statement instead of two): the fold's fixed statements,
/// and the statements a write query lowers to (at most
/// [`STATEMENT_CACHE`], emptied when
/// full).
#[derive(Default)]
pub(crate) struct Stmts {
    pub(crate) fixed: std::collections::HashMap<&'static str, postgres::Statement>,
    pub(crate) dynamic: std::collections::HashMap<String, postgres::Statement>,
}

impl Stmts {
    pub(crate) fn new() -> Stmts {
        Stmts::default()
    }
}

/// One project's store on PostgreSQL: a connection whose `search_path` is
/// the project's schema. Not `Sync`; open one per thread.
pub struct PgStore {
    client: std::mem::ManuallyDrop<RefCell<postgres::Client>>,
    stmts: RefCell<Stmts>,
    read_stmts: RefCell<ReadStmts>,
    /// State a higher room keeps with this connection (the TQ compile
    /// cache); see [`PgStore::slot`].
    slot: RefCell<Option<Box<dyn std::any::Any + Send>>>,
    /// `Some(ms)` while the session is in read mode
    /// ([`PgStore::read_client`]): read-only by default, statements
    /// cancelled past `ms` milliseconds.
    read_mode: std::cell::Cell<Option<u64>>,
    target: std::sync::Arc<PgTarget>,
}

impl Drop for PgStore {
    fn drop(&mut self) {
        // SAFETY: `client` is taken once, here, and never used again.
        let client = unsafe { std::mem::ManuallyDrop::take(&mut self.client) };
        super::connect::drop_off_runtime(client.into_inner());
    }
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PgStore({:?})", self.target)
    }
}

/// The schema name quoted as an identifier (checked by `check_schema`, so
/// it holds no quote; quoted anyway).
pub(crate) fn quoted(schema: &str) -> String {
    format!("\"{}\"", schema.replace('"', "\"\""))
}

/// Replaces the SQL functions (`case_fold::functions_ddl`) when the
/// schema's `schema_meta.functions` stamp is below
/// [`super::case_fold::FUNCTIONS_VERSION`] or absent, and stamps it; a
/// schema stamped by a newer cairn keeps its functions. Runs inside the
/// opening transaction, under its advisory lock. Errors:
/// [`StoreError::Postgres`].
fn upgrade_functions(tx: &mut postgres::Transaction<'_>) -> Result<(), StoreError> {
    use super::case_fold::{FUNCTIONS_VERSION, functions_ddl};
    let stamp: Option<i64> = tx
        .query_opt("SELECT value FROM schema_meta WHERE key = 'functions'", &[])
        .map_err(pg_err)?
        .and_then(|r| r.get::<_, String>(0).parse().ok());
    if stamp.is_some_and(|v| v >= FUNCTIONS_VERSION) {
        return Ok(());
    }
    tx.batch_execute(functions_ddl()).map_err(pg_err)?;
    tx.execute(
        "INSERT INTO schema_meta(key, value) VALUES ('functions', $1)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        &[&FUNCTIONS_VERSION.to_string()],
    )
    .map_err(pg_err)?;
    Ok(())
}

impl PgStore {
    /// Connects to `target`, creates its schema and tables when missing
    /// (version [`SCHEMA_VERSION`]), in one transaction under an advisory
    /// lock keyed by the schema name; replaces the SQL functions when their
    /// stamp is older (`upgrade_functions`). Errors: [`StoreError::Postgres`]
    /// (connection, permissions), [`StoreError::SchemaTooNew`] when the
    /// schema was written by a newer cairn, [`StoreError::BadSchemaVersion`].
    pub fn open(target: &PgTarget) -> Result<PgStore, StoreError> {
        let mut client = connect(target)?;
        let schema = quoted(&target.schema);
        client
            .batch_execute(&format!("SET search_path TO {schema}"))
            .map_err(pg_err)?;
        let mut tx = client.transaction().map_err(pg_err)?;
        tx.execute(
            "SELECT pg_advisory_xact_lock(hashtext('cairn.schema.' || $1::text))",
            &[&target.schema],
        )
        .map_err(pg_err)?;
        tx.batch_execute(&format!("CREATE SCHEMA IF NOT EXISTS {schema}"))
            .map_err(pg_err)?;
        let has_meta: bool = tx
            .query_one(
                "SELECT to_regclass(quote_ident($1) || '.schema_meta') IS NOT NULL",
                &[&target.schema],
            )
            .map_err(pg_err)?
            .get(0);
        let found: Option<String> = if has_meta {
            tx.query_opt("SELECT value FROM schema_meta WHERE key = 'version'", &[])
                .map_err(pg_err)?
                .map(|r| r.get(0))
        } else {
            None
        };
        let found = match found {
            Some(v) => v
                .parse::<i64>()
                .map_err(|_| StoreError::BadSchemaVersion(v.clone()))?,
            None => 0,
        };
        if found > SCHEMA_VERSION {
            return Err(StoreError::SchemaTooNew {
                found,
                supported: SCHEMA_VERSION,
            });
        }
        if found < SCHEMA_VERSION {
            tx.batch_execute(DDL).map_err(pg_err)?;
            if (1..4).contains(&found) {
                // Version 4 indexes identifier parts (`store::parts`): the
                // stored tsvectors are rebuilt from the texts.
                let rows = tx
                    .query("SELECT obs_id, text FROM observations", &[])
                    .map_err(pg_err)?;
                let st = tx
                    .prepare("UPDATE observations SET tsv = $1::text::tsvector WHERE obs_id = $2")
                    .map_err(pg_err)?;
                for r in rows {
                    let (id, text): (i64, String) = (r.get(0), r.get(1));
                    let tsv = super::search::tsvector_literal(&text);
                    tx.execute(&st, &[&tsv, &id]).map_err(pg_err)?;
                }
            }
            if (1..5).contains(&found) {
                // Version 5 indexes names and descriptions (`task_texts`).
                super::backfill::task_texts(&mut tx)?;
            }
            tx.execute(
                "INSERT INTO schema_meta(key, value) VALUES ('version', $1)
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                &[&SCHEMA_VERSION.to_string()],
            )
            .map_err(pg_err)?;
        }
        upgrade_functions(&mut tx)?;
        tx.commit().map_err(pg_err)?;
        Ok(PgStore {
            client: std::mem::ManuallyDrop::new(RefCell::new(client)),
            stmts: RefCell::new(Stmts::new()),
            read_stmts: RefCell::new(ReadStmts::default()),
            slot: RefCell::new(None),
            read_mode: std::cell::Cell::new(None),
            target: std::sync::Arc::new(target.clone()),
        })
    }

    /// Where this store lives (the URL is printable: no password).
    pub fn target(&self) -> &PgTarget {
        &self.target
    }

    /// The target, shared (a cancel request's closure keeps it without
    /// copying the client configuration at every statement).
    pub fn target_shared(&self) -> std::sync::Arc<PgTarget> {
        std::sync::Arc::clone(&self.target)
    }

    /// The connection (its `search_path` is the project's schema). Panics
    /// never; a second borrow while one is held is a bug in the caller.
    /// Leaves read mode first ([`PgStore::read_client`]) when the
    /// session is in it: one round trip that restores the connection's own
    /// defaults.
    pub fn client(&self) -> RefMut<'_, postgres::Client> {
        let mut c = self.client.borrow_mut();
        if self.read_mode.take().is_some() {
            // A failure here is a broken connection: the caller's own
            // statement reports it.
            let _ = c.batch_execute(
                "RESET default_transaction_read_only; RESET statement_timeout; RESET plan_cache_mode",
            );
        }
        c
    }

    /// The connection as it is, in read mode or not: for a statement that
    /// sets its own transaction's mode and time limit (the first read of
    /// a text: `tq::exec_pg::begin_read_with_catalog`), so that neither a
    /// read nor a write that follows pays for a change of mode.
    pub fn any_mode_client(&self) -> RefMut<'_, postgres::Client> {
        self.client.borrow_mut()
    }

    /// The connection in read mode, for TQ's reads (spec/team.md "The same
    /// on both engines"; docs/team.md "Reads on PostgreSQL"): every
    /// transaction read-only by default (`default_transaction_read_only`)
    /// and every statement cancelled past `limit` (`statement_timeout`,
    /// whole milliseconds, at least 1), set at session level so that a
    /// read needs no transaction of its own and costs one round trip; and
    /// prepared statements run their generic plan (`plan_cache_mode =
    /// force_generic_plan`): planned once per connection, as SQLite plans
    /// a statement once, instead of planned again at every run because a
    /// generic plan's estimate over unknown parameters looks dearer than
    /// the custom one (that planning was most of a small view's time,
    /// ~0.15 ms of ~0.2). The
    /// settings are sent only when they change (one round trip); the next
    /// [`PgStore::client`] restores the defaults. Errors:
    /// [`StoreError::Postgres`] (the connection is gone).
    pub fn read_client(
        &self,
        limit: std::time::Duration,
    ) -> Result<RefMut<'_, postgres::Client>, StoreError> {
        let ms = u64::try_from(limit.as_millis().clamp(1, i32::MAX as u128)).unwrap_or(1);
        let mut c = self.client.borrow_mut();
        if self.read_mode.get() != Some(ms) {
            self.read_mode.set(None);
            c.batch_execute(&format!(
                "SET default_transaction_read_only = on; SET statement_timeout = {ms}; SET plan_cache_mode = force_generic_plan"
            ))
            .map_err(pg_err)?;
            self.read_mode.set(Some(ms));
        }
        Ok(c)
    }

    /// True once the connection is gone (the cluster restarted, a
    /// failover, the backend was terminated): this store answers nothing
    /// more; open a new one. False while the connection is borrowed.
    pub fn is_closed(&self) -> bool {
        self.client.try_borrow().is_ok_and(|c| c.is_closed())
    }

    /// The connection's prepared-statement cache (the fold's).
    pub(crate) fn stmts(&self) -> RefMut<'_, Stmts> {
        self.stmts.borrow_mut()
    }

    /// The connection's prepared TQ read statements, by SQL text
    /// (`tq::exec_pg::fetch_rows_cached`).
    pub fn read_stmts(&self) -> RefMut<'_, ReadStmts> {
        self.read_stmts.borrow_mut()
    }

    /// Runs `f` on the state of type `T` kept with this connection (created
    /// with `T::default()` on first use; a slot holding another type is
    /// replaced): the TQ engine's compile cache (`tq::cache`) lives as long
    /// as the connection without the store knowing its type. `None` when
    /// the slot is already borrowed (re-entrant use) — callers go without.
    pub fn with_slot<T: Default + Send + 'static, R>(
        &self,
        f: impl FnOnce(&mut T) -> R,
    ) -> Option<R> {
        let mut slot = self.slot.try_borrow_mut().ok()?;
        if !slot.as_ref().is_some_and(|b| b.is::<T>()) {
            *slot = Some(Box::new(T::default()));
        }
        slot.as_mut().and_then(|b| b.downcast_mut::<T>()).map(f)
    }

    /// The number of events in the log. Errors: [`StoreError::Postgres`].
    pub fn event_count(&self) -> Result<i64, StoreError> {
        Ok(self
            .client()
            .query_one("SELECT count(*) FROM events", &[])
            .map_err(pg_err)?
            .get(0))
    }

    /// Every event, in arrival (`seq`) order (for export and for tests that
    /// fold the same events on both engines). Errors: [`StoreError::Postgres`].
    pub fn events(&self) -> Result<Vec<LoggedEvent>, StoreError> {
        let rows = self
            .client()
            .query(
                "SELECT seq, event_id, task_id, type, ts, session_id, prev_session_id, data
                 FROM events ORDER BY seq",
                &[],
            )
            .map_err(pg_err)?;
        Ok(rows
            .iter()
            .map(|r| LoggedEvent {
                seq: r.get(0),
                event_id: r.get(1),
                task_id: r.get(2),
                event_type: r.get(3),
                ts: r.get(4),
                session_id: r.get(5),
                prev_session_id: r.get(6),
                data: serde_json::from_str(r.get(7)).unwrap_or(serde_json::Value::Null),
            })
            .collect())
    }

    /// Every event as its log line (the stored columns verbatim), in
    /// arrival order: what `cairn export --logs` writes. Errors:
    /// [`StoreError::Postgres`].
    pub fn log_lines(&self) -> Result<Vec<LogLine>, StoreError> {
        let rows = self
            .client()
            .query(
                "SELECT event_id, event_key, task_id, type, ts, session_id, prev_session_id, data
                 FROM events ORDER BY seq",
                &[],
            )
            .map_err(pg_err)?;
        Ok(rows
            .iter()
            .map(|r| LogLine {
                event_id: r.get(0),
                event_key: r.get(1),
                task_id: r.get(2),
                event_type: r.get(3),
                ts: r.get(4),
                session_id: r.get(5),
                prev_session_id: r.get(6),
                data: r.get(7),
            })
            .collect())
    }

    /// The schema version stamped in `schema_meta`. Errors:
    /// [`StoreError::Postgres`], [`StoreError::BadSchemaVersion`].
    pub fn schema_version(&self) -> Result<i64, StoreError> {
        let v: String = self
            .client()
            .query_one("SELECT value FROM schema_meta WHERE key = 'version'", &[])
            .map_err(pg_err)?
            .get(0);
        v.parse().map_err(|_| StoreError::BadSchemaVersion(v))
    }
}
