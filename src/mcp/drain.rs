//! Graceful stops of `cairn serve --http` (issue 24; docs/team.md "Rolling
//! restarts"): on SIGTERM (or SIGINT) the server stops taking work but
//! finishes what it has. Every request that arrives from then on is
//! answered `503` with [`SHUTTING_DOWN`] (and `Connection: close`,
//! `Retry-After: 1`), `GET /healthz` included, so a load balancer takes the
//! process out of rotation; the requests and tool calls already in flight
//! finish ([`Drain::idle`], at most the drain limit); then every session
//! hears [`CLOSING`] and its streams close.
//!
//! What counts as in flight: an HTTP request from its arrival until its
//! response's headers are out (a [`Work`] held by `mcp::http`), and a tool
//! call or resource read from start to end (held by `mcp::handler`; over a
//! 2025-11-25 session its result travels on a stream after the headers).

use std::sync::LazyLock;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::Notify;

/// The body of the `503` every request gets once the server is stopping.
pub const SHUTTING_DOWN: &str =
    "This cairn server is shutting down (a restart); send the request again, to another server.";

/// What every open session hears (a `notifications/message` at level
/// `warning`) before its streams close at a graceful stop.
pub const CLOSING: &str = "This cairn server is shutting down (a restart); its sessions and streams close now. Open a new session (initialize) or send the request again; a load balancer routes it to a server that is up.";

/// The process's count of work in flight and whether it is stopping.
#[derive(Debug, Default)]
pub struct Drain {
    stopping: AtomicBool,
    busy: AtomicUsize,
    idle: Notify,
}

/// One piece of work in flight; the count drops when it is dropped.
#[derive(Debug)]
pub struct Work(&'static Drain);

impl Drop for Work {
    fn drop(&mut self) {
        if self.0.busy.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}

/// The process's drain (one server per process).
pub static DRAIN: LazyLock<Drain> = LazyLock::new(Drain::default);

impl Drain {
    /// From now on new requests are refused ([`Drain::stopping`]).
    pub fn begin(&self) {
        self.stopping.store(true, Ordering::SeqCst);
    }

    /// True once [`Drain::begin`] was called.
    pub fn stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }

    /// How many pieces of work are in flight.
    pub fn busy(&self) -> usize {
        self.busy.load(Ordering::SeqCst)
    }

    /// Counts one piece of work until the returned guard is dropped.
    pub fn work(&'static self) -> Work {
        self.busy.fetch_add(1, Ordering::SeqCst);
        Work(self)
    }

    /// Waits until nothing is in flight, at most `limit`; true when it got
    /// there.
    pub async fn idle(&self, limit: Duration) -> bool {
        let wait = async {
            loop {
                let notified = self.idle.notified();
                tokio::pin!(notified);
                notified.as_mut().enable();
                if self.busy() == 0 {
                    return;
                }
                notified.await;
            }
        };
        tokio::time::timeout(limit, wait).await.is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "current_thread")]
    async fn idle_waits_for_the_last_piece_of_work() {
        static D: LazyLock<Drain> = LazyLock::new(Drain::default);
        assert!(D.idle(Duration::from_millis(1)).await);
        let a = D.work();
        let b = D.work();
        assert_eq!(D.busy(), 2);
        assert!(!D.idle(Duration::from_millis(20)).await);
        drop(a);
        let later = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            drop(b);
        });
        assert!(D.idle(Duration::from_secs(10)).await);
        later.await.unwrap();
        assert!(!D.stopping());
        D.begin();
        assert!(D.stopping());
    }
}
