//! Does the store's database answer? The probe behind `GET /healthz` of
//! `cairn serve --http` (issue 24; docs/team.md "Health checks"): one
//! small read of the project's `schema_meta`, so a stopped cluster, a lost
//! network, a dropped schema or a revoked role all read as "down".
//!
//! On PostgreSQL the probe keeps one connection of its own
//! (`application_name` [`HEALTH_APP`], a 2 s `statement_timeout`) and
//! opens it again after a failure; on SQLite it opens the file read-only
//! for each check. Checks never overlap: one that finds another running
//! answers with that one's last verdict.

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use super::error::StoreError;
use super::pg::connect::{connect, drop_off_runtime, pg_err};
use super::pg::target::PgTarget;

/// The `application_name` of the probe's PostgreSQL connection.
pub const HEALTH_APP: &str = "cairn-health";

/// The probe's `statement_timeout`, milliseconds.
pub const HEALTH_TIMEOUT_MS: u32 = 2000;

/// A health probe of one store (cheap to share behind an `Arc`).
pub struct Probe {
    kind: Kind,
    conn: Mutex<Option<postgres::Client>>,
    last_up: AtomicBool,
}

#[derive(Debug)]
enum Kind {
    Sqlite(PathBuf),
    Pg(Box<PgTarget>),
}

impl std::fmt::Debug for Probe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Probe").field("kind", &self.kind).finish()
    }
}

impl Drop for Probe {
    fn drop(&mut self) {
        let held = match self.conn.get_mut() {
            Ok(c) => c.take(),
            Err(p) => p.into_inner().take(),
        };
        if let Some(c) = held {
            drop_off_runtime(c);
        }
    }
}

impl Probe {
    /// A probe of the SQLite store at `db`.
    pub fn sqlite(db: PathBuf) -> Probe {
        Probe {
            kind: Kind::Sqlite(db),
            conn: Mutex::new(None),
            last_up: AtomicBool::new(true),
        }
    }

    /// A probe of the PostgreSQL project `target` (connects at the first
    /// check).
    pub fn pg(target: &PgTarget) -> Probe {
        Probe {
            kind: Kind::Pg(Box::new(target.clone())),
            conn: Mutex::new(None),
            last_up: AtomicBool::new(true),
        }
    }

    /// One check: `Ok(())` when the database answered with the project's
    /// schema version. Blocking: call it off the async workers. When
    /// another check is running, that one's last verdict is answered
    /// (`Err` with a sentence when it was down). Errors: the store's.
    pub fn check(&self) -> Result<(), StoreError> {
        let Ok(mut slot) = self.conn.try_lock() else {
            return if self.last_up.load(Ordering::SeqCst) {
                Ok(())
            } else {
                Err(StoreError::Postgres(
                    "the previous health check failed".to_string(),
                ))
            };
        };
        let result = match &self.kind {
            Kind::Sqlite(db) => check_sqlite(db),
            Kind::Pg(t) => check_pg(t, &mut slot),
        };
        self.last_up.store(result.is_ok(), Ordering::SeqCst);
        result
    }
}

fn check_sqlite(db: &std::path::Path) -> Result<(), StoreError> {
    let conn = super::reader::open_read_only(db)?;
    let _: String = conn.query_row(
        "SELECT value FROM schema_meta WHERE key = 'version'",
        [],
        |r| r.get(0),
    )?;
    Ok(())
}

fn check_pg(target: &PgTarget, slot: &mut Option<postgres::Client>) -> Result<(), StoreError> {
    if slot.as_ref().is_none_or(postgres::Client::is_closed) {
        if let Some(old) = slot.take() {
            drop_off_runtime(old);
        }
        let mut c = connect(target)?;
        c.batch_execute(&format!(
            "SET application_name TO '{HEALTH_APP}'; SET statement_timeout TO {HEALTH_TIMEOUT_MS}; SET search_path TO {}",
            super::pg::handle::quoted(&target.schema)
        ))
        .map_err(pg_err)?;
        *slot = Some(c);
    }
    let Some(c) = slot.as_mut() else {
        return Err(StoreError::Postgres("no connection".to_string()));
    };
    match c.query_one("SELECT value FROM schema_meta WHERE key = 'version'", &[]) {
        Ok(_) => Ok(()),
        Err(e) => {
            if c.is_closed() {
                super::pg::connect::saw_outage();
            }
            if let Some(old) = slot.take() {
                drop_off_runtime(old);
            }
            Err(pg_err(e))
        }
    }
}
