//! One commit signal per store per process (spec/tq.md §9 "Changes";
//! docs/mcp.md "Resources and subscriptions"): a thread that notices every
//! commit to the store — this process's or another's — and bumps a
//! generation on a `tokio::sync::watch` channel, which every subscription
//! watcher of the process waits on. The watchers no longer poll: however
//! many sessions listen, the process reads the store's change signal once.
//!
//! - SQLite: `PRAGMA data_version` on one read-only connection every
//!   [`SQLITE_TICK`] (10 ms; it reads the WAL index, no I/O).
//! - PostgreSQL: one connection `LISTEN`ing on the schema's channel, woken
//!   by the writing transaction's `NOTIFY` at once (no polling). When the
//!   connection breaks, the thread reconnects every [`RETRY`] and bumps the
//!   generation once it is back, and counts the outage in
//!   [`Generation::reconnects`]: a change may have been missed, so every
//!   watcher reads the log since its own mark and tells its clients
//!   (`mcp::subscriptions`: every subscribed URI is notified, and a
//!   2025-11-25 session gets a `notifications/message` saying so).
//!
//! The thread ends when the last receiver is gone (checked every tick, and
//! at least every [`PG_WAIT`] on PostgreSQL).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, Mutex};
use std::time::Duration;

use tokio::sync::watch;

use super::error::StoreError;
use super::pg::changes::Listener;
use super::pg::target::PgTarget;

/// How often the SQLite signal reads `data_version`.
pub const SQLITE_TICK: Duration = Duration::from_millis(10);

/// The longest a PostgreSQL listener blocks before it looks whether anyone
/// still listens.
pub const PG_WAIT: Duration = Duration::from_millis(500);

/// How long a broken signal waits before it reconnects.
pub const RETRY: Duration = Duration::from_secs(1);

/// Which store a signal watches.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Key {
    /// A SQLite file.
    Sqlite(PathBuf),
    /// A PostgreSQL project: the target's display form (schema included).
    Pg(String),
}

/// What a commit signal carries: how many times the store moved, and how
/// many times its listener lost the database and came back (a watcher that
/// sees `reconnects` grow knows changes may have been missed while the
/// connection was down).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Generation {
    /// Bumped at every commit heard (and once per reconnection).
    pub commits: u64,
    /// Bumped each time the listener reconnected after losing the database.
    pub reconnects: u64,
}

static SIGNALS: LazyLock<Mutex<HashMap<Key, watch::Sender<Generation>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

fn signals() -> std::sync::MutexGuard<'static, HashMap<Key, watch::Sender<Generation>>> {
    match SIGNALS.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

/// A receiver of the commit generation of the SQLite store at `db`,
/// starting the process's signal thread for it when none runs. The
/// receiver has seen the current generation: `changed()` fires at the next
/// commit. Errors: [`StoreError::Sqlite`] (the file cannot be opened).
pub fn sqlite(db: &Path) -> Result<watch::Receiver<Generation>, StoreError> {
    subscribe(Key::Sqlite(db.to_path_buf()), || {
        let conn = super::reader::open_read_only(db)?;
        let version = |c: &rusqlite::Connection| -> Result<i64, StoreError> {
            Ok(c.query_row("PRAGMA data_version", [], |r| r.get(0))?)
        };
        let mut seen = version(&conn)?;
        Ok(Box::new(move || {
            std::thread::sleep(SQLITE_TICK);
            let now = version(&conn)?;
            let moved = now != seen;
            seen = now;
            Ok(if moved { Wake::Moved } else { Wake::Idle })
        }) as Wait)
    })
}

/// A receiver of the commit generation of the PostgreSQL project
/// `target` (see [`sqlite`]). Errors: [`StoreError::Postgres`] (the first
/// connection fails; later failures reconnect in the thread).
pub fn postgres(target: &PgTarget) -> Result<watch::Receiver<Generation>, StoreError> {
    let t = target.clone();
    subscribe(
        Key::Pg(format!("{} {}", target.shown, target.schema)),
        move || {
            let mut listener = Some(Listener::open(&t)?);
            Ok(Box::new(move || {
                let Some(l) = listener.as_mut() else {
                    std::thread::sleep(RETRY);
                    listener = Some(Listener::open(&t)?);
                    tracing::warn!("the change listener reconnected; changes may have been missed");
                    // Commits during the outage were not heard.
                    return Ok(Wake::Reconnected);
                };
                match l.wait(PG_WAIT) {
                    Ok(Some(_)) => Ok(Wake::Moved),
                    Ok(None) => Ok(Wake::Idle),
                    Err(e) => {
                        listener = None;
                        Err(e)
                    }
                }
            }) as Wait)
        },
    )
}

/// What one wait of a signal thread saw.
enum Wake {
    /// Nothing committed.
    Idle,
    /// The store moved.
    Moved,
    /// The listener is back after losing the database: anything may have
    /// moved meanwhile.
    Reconnected,
}

/// One wait of a signal thread.
type Wait = Box<dyn FnMut() -> Result<Wake, StoreError> + Send>;

fn subscribe(
    key: Key,
    open: impl FnOnce() -> Result<Wait, StoreError>,
) -> Result<watch::Receiver<Generation>, StoreError> {
    let mut map = signals();
    if let Some(tx) = map.get(&key) {
        return Ok(tx.subscribe());
    }
    let mut wait = open()?;
    let (tx, rx) = watch::channel(Generation::default());
    map.insert(key.clone(), tx.clone());
    drop(map);
    let k = key.clone();
    let spawned = std::thread::Builder::new()
        .name("cairn-commits".into())
        .spawn(move || {
            loop {
                {
                    // Under the map's lock, so a new subscriber either finds
                    // this sender still registered or starts a fresh thread.
                    let mut map = signals();
                    if tx.receiver_count() == 0 {
                        if map.get(&key).is_some_and(|t| t.same_channel(&tx)) {
                            map.remove(&key);
                        }
                        return;
                    }
                }
                match wait() {
                    Ok(Wake::Moved) => tx.send_modify(|g| g.commits = g.commits.wrapping_add(1)),
                    Ok(Wake::Reconnected) => tx.send_modify(|g| {
                        g.commits = g.commits.wrapping_add(1);
                        g.reconnects = g.reconnects.wrapping_add(1);
                    }),
                    Ok(Wake::Idle) => {}
                    Err(e) => {
                        tracing::warn!(error = %e, "the change signal failed; retrying");
                        std::thread::sleep(RETRY);
                    }
                }
            }
        });
    if let Err(e) = spawned {
        signals().remove(&k);
        return Err(StoreError::Io {
            path: PathBuf::from("cairn-commits thread"),
            source: e,
        });
    }
    Ok(rx)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{NewEvent, Store};

    #[tokio::test(flavor = "current_thread")]
    async fn one_thread_per_store_hears_every_commit_and_ends_with_its_last_receiver() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("c.db");
        let store = Store::open(&db).unwrap();
        let mut a = sqlite(&db).unwrap();
        let mut b = sqlite(&db).unwrap();
        assert!(a.same_channel(&b));
        store
            .write(&[NewEvent::task_create("s", 1, "x", None, None)])
            .unwrap();
        tokio::time::timeout(Duration::from_secs(10), a.changed())
            .await
            .unwrap()
            .unwrap();
        tokio::time::timeout(Duration::from_secs(10), b.changed())
            .await
            .unwrap()
            .unwrap();
        let key = Key::Sqlite(db.clone());
        drop((a, b));
        // The thread notices within a tick or two that nobody listens.
        for _ in 0..500 {
            if !signals().contains_key(&key) {
                break;
            }
            std::thread::sleep(SQLITE_TICK);
        }
        assert!(!signals().contains_key(&key));
        let c = sqlite(&db).unwrap();
        assert!(signals().contains_key(&key));
        drop(c);
    }
}
