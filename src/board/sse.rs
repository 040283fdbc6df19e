//! The board's live updates (issue 25): `GET /board/events` is a stream of
//! server-sent events fed by the process's commit signal
//! ([`crate::store::commits`], the mechanism resource subscriptions use: a
//! 10 ms `data_version` tick on SQLite, `LISTEN` on PostgreSQL, one per
//! store per process): a commit from any process says `event: change` at
//! once. Each stream is one async task (no thread, no store connection of
//! its own); a viewer holds at most [`PER_VIEWER`] streams and the process
//! [`MAX_STREAMS`] (the board's hostile pass opened 3,000 streams, 3,517
//! threads, 9,017 descriptors, and stalled `/mcp`). A comment line every
//! [`KEEPALIVE`] keeps proxies from closing an idle stream; the stream ends
//! when the client goes or when `still_allowed` says no (a revoked token),
//! asked at most every [`RECHECK`]. When the server stops (SIGTERM, issue
//! 24) each stream says `event: closing` with [`CLOSING`] as its data,
//! then ends; the browser's `EventSource` reconnects by itself (to another
//! server behind a load balancer).

use std::collections::HashMap;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::{Arc, LazyLock, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use hyper::body::{Body, Frame};
use tokio::sync::mpsc;

use super::api::Source;
use crate::store::commits;

/// The last frame of every stream when the server stops.
pub const CLOSING: &str = "event: closing\ndata: {\"reason\": \"This cairn server is shutting down (a restart); the board reconnects by itself.\"}\n\n";

/// How often an idle stream gets a keep-alive comment.
pub const KEEPALIVE: Duration = Duration::from_secs(15);

/// How often the stream asks whether its viewer may still read.
pub const RECHECK: Duration = Duration::from_secs(1);

/// The most live streams one viewer (one sign-in, or one bearer token) may
/// hold at once.
pub const PER_VIEWER: usize = 8;

/// The most live streams a process serves at once.
pub const MAX_STREAMS: usize = 256;

/// Open streams per viewer key (the sum is the process's count).
static OPEN: LazyLock<Mutex<HashMap<String, usize>>> = LazyLock::new(|| Mutex::new(HashMap::new()));

fn open_streams() -> std::sync::MutexGuard<'static, HashMap<String, usize>> {
    match OPEN.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

/// One counted stream of a viewer, released when dropped.
#[derive(Debug)]
struct Slot(String);

impl Slot {
    /// Counts a stream for `viewer`, or the sentence refusing it.
    fn take(viewer: &str) -> Result<Slot, String> {
        let mut open = open_streams();
        let total: usize = open.values().sum();
        if total >= MAX_STREAMS {
            return Err(format!(
                "This server already serves {MAX_STREAMS} live board streams; close a board tab and reload."
            ));
        }
        let n = open.entry(viewer.to_string()).or_insert(0);
        if *n >= PER_VIEWER {
            return Err(format!(
                "This sign-in already holds {PER_VIEWER} live board streams; close a board tab and reload."
            ));
        }
        *n += 1;
        Ok(Slot(viewer.to_string()))
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut open = open_streams();
        if let Some(n) = open.get_mut(&self.0) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                open.remove(&self.0);
            }
        }
    }
}

/// A response body fed by a channel: each message is one chunk.
#[derive(Debug)]
pub struct ChannelBody(pub mpsc::Receiver<Bytes>);

impl Body for ChannelBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.0
            .poll_recv(cx)
            .map(|chunk| chunk.map(|b| Ok(Frame::data(b))))
    }
}

/// Starts a task that waits on the process's commit signal for `src` and
/// sends `event: change` frames into the returned body; it stops when the
/// body is dropped, the signal ends, or `still_allowed` returns false.
/// `viewer` keys the per-viewer cap. Must run inside the server's
/// (multi-threaded) tokio runtime. Errors: the cap's sentence (`Err((true,
/// sentence))`, a 429), or the store's (`Err((false, message))`).
pub fn stream(
    src: &Source,
    viewer: &str,
    still_allowed: impl Fn() -> bool + Send + Sync + 'static,
) -> Result<ChannelBody, (bool, String)> {
    let slot = Slot::take(viewer).map_err(|s| (true, s))?;
    let signal = tokio::task::block_in_place(|| match &src.pg {
        Some(t) => commits::postgres(t),
        None => commits::sqlite(&src.db),
    });
    let mut commits = signal.map_err(|e| (false, e.to_string()))?;
    let (tx, rx) = mpsc::channel::<Bytes>(8);
    let still = Arc::new(still_allowed);
    let closing = src.closing.clone();
    tokio::spawn(async move {
        let _slot = slot;
        let hello = Bytes::from_static(b"retry: 1000\nevent: hello\ndata: {}\n\n");
        if tx.send(hello).await.is_err() {
            return;
        }
        let (mut last_sent, mut last_check) = (Instant::now(), Instant::now());
        loop {
            let changed = tokio::select! {
                r = commits.changed() => {
                    if r.is_err() {
                        return;
                    }
                    true
                }
                _ = tokio::time::sleep(RECHECK) => false,
                _ = tx.closed() => return,
                () = closing.cancelled() => {
                    let _ = tx.send(Bytes::from_static(CLOSING.as_bytes())).await;
                    return;
                }
            };
            if last_check.elapsed() >= RECHECK {
                last_check = Instant::now();
                let s = still.clone();
                if !matches!(tokio::task::spawn_blocking(move || s()).await, Ok(true)) {
                    return;
                }
            }
            let frame = if changed {
                Bytes::from_static(b"event: change\ndata: {}\n\n")
            } else if last_sent.elapsed() >= KEEPALIVE {
                Bytes::from_static(b": idle\n\n")
            } else {
                continue;
            };
            last_sent = Instant::now();
            if tx.send(frame).await.is_err() {
                return;
            }
        }
    });
    Ok(ChannelBody(rx))
}
