//! Cancelling PostgreSQL statements when the engine's
//! [`Cancel`](super::Cancel) flag is raised (spec/tq.md "Limits"; issue
//! 21): ONE thread per process watches every statement in flight and
//! checks the flags every [`CANCEL_TICK`](super::CANCEL_TICK), so a read
//! pays a registration (a lock and a map insert), not a thread of its own
//! (~35 µs a read, issue 23). The thread ticks while statements come and
//! go and parks on a condition variable after [`IDLE_AFTER`] without any,
//! so only the first statement after a quiet spell wakes it.

use std::collections::HashMap;
use std::sync::{Condvar, Mutex, OnceLock};

use super::Cancel;
use crate::store::pg::{PgStore, PgTarget};

/// One statement in flight: whose flag, where to send the cancel.
struct Watched {
    cancel: Cancel,
    target: PgTarget,
    token: postgres::CancelToken,
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
    last: Option<std::time::Instant>,
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
/// sends a cancel request (outside the lock) for each newly raised flag.
fn watch_loop() {
    let s = shared();
    loop {
        let fire: Vec<(PgTarget, postgres::CancelToken)> = {
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

            reg.live
                .values_mut()
                .filter(|w| !w.fired && w.cancel.is_cancelled())
                .map(|w| {
                    w.fired = true;
                    (w.target.clone(), w.token.clone())
                })
                .collect()
        };
        for (target, token) in fire {
            let _ = crate::store::pg::connect::cancel_query(&target, &token);
        }
    }
}

/// While alive, the statement running on a store's connection is
/// cancelled when `cancel` is raised; the statement then fails with
/// SQLSTATE 57014, which reads as the cancellation sentence. Dropping it
/// ends the watch.
pub(super) struct Watchdog {
    id: Option<u64>,
}

impl Watchdog {
    /// Watches `store`'s connection (its cancel `token`) for `cancel`.
    /// When the watcher thread cannot be started, nothing is watched (the
    /// time limit still holds: `statement_timeout`).
    pub(super) fn start(
        cancel: &Cancel,
        store: &PgStore,
        token: postgres::CancelToken,
    ) -> Watchdog {
        let s = shared();
        let Ok(mut reg) = s.reg.lock() else {
            return Watchdog { id: None };
        };
        if !reg.started {
            let spawned = std::thread::Builder::new()
                .name("cairn-pg-cancel".into())
                .spawn(watch_loop);
            if spawned.is_err() {
                return Watchdog { id: None };
            }
            reg.started = true;
        }
        reg.next += 1;
        reg.last = Some(std::time::Instant::now());
        let id = reg.next;
        reg.live.insert(
            id,
            Watched {
                cancel: cancel.clone(),
                target: store.target().clone(),
                token,
                fired: false,
            },
        );
        if reg.parked {
            s.wake.notify_one();
        }
        Watchdog { id: Some(id) }
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
