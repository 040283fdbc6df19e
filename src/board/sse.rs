//! The board's live updates (issue 25): `GET /board/events` is a stream of
//! server-sent events fed by the store's change counter
//! ([`crate::store::changes::ChangeCounter`], the mechanism resource
//! subscriptions and `cairn watch` use): a commit from any process moves it
//! and the stream says `event: change` within [`POLL`]. A comment line every
//! [`KEEPALIVE`] keeps proxies from closing an idle stream; the stream ends
//! when the client goes or when `still_allowed` says no (a revoked token).

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use hyper::body::{Body, Frame};
use tokio::sync::mpsc;

use super::api::Source;
use crate::store::changes::ChangeCounter;

/// How often the change counter is read.
pub const POLL: Duration = Duration::from_millis(250);

/// How often an idle stream gets a keep-alive comment.
pub const KEEPALIVE: Duration = Duration::from_secs(15);

/// How often the stream asks whether its viewer may still read.
const RECHECK: Duration = Duration::from_secs(1);

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

/// Starts a thread that watches `src` and sends `event: change` frames
/// into the returned body; it stops when the body is dropped, the counter
/// fails, or `still_allowed` returns false.
pub fn stream(
    src: &Source,
    still_allowed: impl Fn() -> bool + Send + 'static,
) -> Result<ChannelBody, String> {
    let mut counter = match &src.pg {
        Some(t) => ChangeCounter::open_pg(t),
        None => ChangeCounter::open(&src.db),
    }
    .map_err(|e| e.to_string())?;
    let (tx, rx) = mpsc::channel::<Bytes>(8);
    std::thread::spawn(move || {
        if tx
            .blocking_send(Bytes::from_static(
                b"retry: 1000\nevent: hello\ndata: {}\n\n",
            ))
            .is_err()
        {
            return;
        }
        let (mut last_sent, mut last_check) = (Instant::now(), Instant::now());
        loop {
            std::thread::sleep(POLL);
            if tx.is_closed() {
                return;
            }
            if last_check.elapsed() >= RECHECK {
                last_check = Instant::now();
                if !still_allowed() {
                    return;
                }
            }
            let frame = match counter.moved() {
                Ok(true) => {
                    let mark = counter.high_water().unwrap_or(0);
                    Bytes::from(format!("event: change\ndata: {{\"seq\": {mark}}}\n\n"))
                }
                Ok(false) if last_sent.elapsed() >= KEEPALIVE => Bytes::from_static(b": idle\n\n"),
                Ok(false) => continue,
                Err(e) => {
                    tracing::warn!(error = %e, "board change stream stopped");
                    return;
                }
            };
            last_sent = Instant::now();
            if tx.blocking_send(frame).is_err() {
                return;
            }
        }
    });
    Ok(ChannelBody(rx))
}
