//! Stopping statements in flight when the engine's
//! [`Cancel`](super::Cancel) flag is raised or their deadline passes
//! (spec/tq.md "Limits"; issues 21 and 23): ONE thread per process watches
//! every PostgreSQL statement and every SQLite write query in flight and
//! checks them every [`CANCEL_TICK`](super::CANCEL_TICK), so a query pays a
//! registration (a lock and a map insert), not a thread of its own (~35 µs
//! a PostgreSQL read; a thread spawn per SQLite write before, issue 23).
//! The thread ticks while statements come and go and parks on a condition
//! variable after [`IDLE_AFTER`] without any, so only the first statement
//! after a quiet spell wakes it. What "stopping" does is the registrant's:
//! a cancel request to the PostgreSQL server, an interrupt of the SQLite
//! connection.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, OnceLock, mpsc};
use std::time::Instant;

use super::Cancel;
use crate::store::pg::PgStore;

/// How a statement in flight is stopped (run once; under the registry
/// lock or outside it, see [`Watched::in_lock`]).
type Stop = Arc<dyn Fn() + Send + Sync>;

/// One statement in flight: whose flag, until when, how to stop it.
struct Watched {
    cancel: Cancel,
    deadline: Option<Instant>,
    stop: Stop,
    /// `stop` is cheap and runs under the registry lock (a SQLite
    /// interrupt); else it runs outside (a PostgreSQL cancel request).
    in_lock: bool,
    fired: bool,
}

#[derive(Default)]
struct Registry {
    next: u64,
    live: HashMap<u64, Watched>,
    started: bool,
    /// The watcher sleeps without a timeout (nothing registered for
    /// [`IDLE_AFTER`]): a registration must wake it. While it ticks, a
    /// registration is seen at the next tick and wakes nobody (no thread
    /// switch per statement).
    parked: bool,
    /// When the last statement registered.
    last: Option<Instant>,
}

/// How long the watcher keeps ticking after the last statement left
/// before it parks.
const IDLE_AFTER: std::time::Duration = std::time::Duration::from_secs(2);

struct Shared {
    reg: Mutex<Registry>,
    wake: Condvar,
}

fn shared() -> &'static Shared {
    static S: OnceLock<Shared> = OnceLock::new();
    S.get_or_init(|| Shared {
        reg: Mutex::new(Registry::default()),
        wake: Condvar::new(),
    })
}

/// The watcher thread: waits while nothing is registered, else every tick
/// stops each statement whose flag was newly raised or whose deadline
/// passed (a SQLite interrupt under the lock, a PostgreSQL cancel request
/// outside it).
fn watch_loop() {
    let s = shared();
    loop {
        let fire: Vec<Stop> = {
            let Ok(mut reg) = s.reg.lock() else { return };
            let quiet = reg.last.is_none_or(|t| t.elapsed() >= IDLE_AFTER);
            if reg.live.is_empty() && quiet {
                reg.parked = true;
                while reg.live.is_empty() {
                    reg = match s.wake.wait(reg) {
                        Ok(r) => r,
                        Err(_) => return,
                    };
                }
                reg.parked = false;
            }
            reg = match s.wake.wait_timeout(reg, super::CANCEL_TICK) {
                Ok((r, _)) => r,
                Err(_) => return,
            };

            let now = Instant::now();
            let mut later = Vec::new();
            for w in reg.live.values_mut() {
                if w.fired || !(w.cancel.is_cancelled() || w.deadline.is_some_and(|d| now >= d)) {
                    continue;
                }
                w.fired = true;
                if w.in_lock {
                    // An interrupt only sets a flag: inside the lock, so it
                    // cannot land after the write deregistered (on the
                    // connection's next write).
                    (w.stop)();
                } else {
                    later.push(Arc::clone(&w.stop));
                }
            }
            later
        };
        for stop in fire {
            stop();
        }
    }
}

/// While alive, the statement in flight is stopped when `cancel` is raised
/// (or, for a SQLite write, its deadline passes): a PostgreSQL statement
/// then fails with SQLSTATE 57014, a SQLite one with `SQLITE_INTERRUPT`;
/// both read as the cancellation or time-limit sentence. Dropping it ends
/// the watch.
pub(super) struct Watchdog {
    id: Option<u64>,
}

impl Watchdog {
    /// Watches `store`'s connection (its cancel `token`) for `cancel`
    /// (PostgreSQL's `statement_timeout` holds the time limit). When the
    /// watcher thread cannot be started, nothing is watched.
    pub(super) fn start(
        cancel: &Cancel,
        store: &PgStore,
        token: postgres::CancelToken,
    ) -> Watchdog {
        let target = store.target_shared();
        Self::watch(
            cancel,
            None,
            false,
            Arc::new(move || {
                let _ = crate::store::pg::connect::cancel_query(&target, &token);
            }),
        )
    }

    /// Watches a SQLite connection (its interrupt `handle`) for `cancel`
    /// and `deadline`. When the watcher thread cannot be started, a thread
    /// of this write's own does it (the time limit always holds).
    pub(super) fn start_sqlite(
        cancel: &Cancel,
        deadline: Instant,
        handle: rusqlite::InterruptHandle,
    ) -> SqliteWatch {
        let handle = Arc::new(handle);
        let h = Arc::clone(&handle);
        let dog = Self::watch(
            cancel,
            Some(deadline),
            true,
            Arc::new(move || h.interrupt()),
        );
        if dog.id.is_some() {
            return SqliteWatch::Shared(dog);
        }
        let cancel = cancel.clone();
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            loop {
                let left = deadline.saturating_duration_since(Instant::now());
                match stopped.recv_timeout(left.min(super::CANCEL_TICK)) {
                    Err(mpsc::RecvTimeoutError::Timeout) => {
                        if cancel.is_cancelled() || Instant::now() >= deadline {
                            handle.interrupt();
                            break;
                        }
                    }
                    _ => break,
                }
            }
        });
        SqliteWatch::Own {
            stop,
            thread: Some(thread),
        }
    }

    fn watch(cancel: &Cancel, deadline: Option<Instant>, in_lock: bool, stop: Stop) -> Watchdog {
        let s = shared();
        let Ok(mut reg) = s.reg.lock() else {
            return Watchdog { id: None };
        };
        if !reg.started {
            let spawned = std::thread::Builder::new()
                .name("cairn-cancel".into())
                .spawn(watch_loop);
            if spawned.is_err() {
                return Watchdog { id: None };
            }
            reg.started = true;
        }
        reg.next += 1;
        reg.last = Some(Instant::now());
        let id = reg.next;
        reg.live.insert(
            id,
            Watched {
                cancel: cancel.clone(),
                deadline,
                stop,
                in_lock,
                fired: false,
            },
        );
        if reg.parked {
            s.wake.notify_one();
        }
        Watchdog { id: Some(id) }
    }
}

/// The watch over one SQLite write: the shared watcher's, or (only when it
/// cannot be started) a thread of its own, stopped and joined on drop.
pub(super) enum SqliteWatch {
    /// Registered with the process's watcher thread.
    Shared(#[allow(dead_code)] Watchdog),
    /// A thread of this write's own.
    Own {
        stop: mpsc::Sender<()>,
        thread: Option<std::thread::JoinHandle<()>>,
    },
}

impl Drop for SqliteWatch {
    fn drop(&mut self) {
        if let SqliteWatch::Own { stop, thread } = self {
            let _ = stop.send(());
            if let Some(t) = thread.take() {
                let _ = t.join();
            }
        }
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        if let Some(id) = self.id
            && let Ok(mut reg) = shared().reg.lock()
        {
            reg.live.remove(&id);
        }
    }
}
