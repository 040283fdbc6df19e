//! The stdio transport's bound on requests in flight (a hostile run: a
//! client that pipelined 40,000 `tools/list` without reading the answers
//! took the server to 7.7 GB). A request counts from the moment it is
//! handed to the server until its answer is written (or it is cancelled).
//! While [`MAX_IN_FLIGHT`] count, the transport holds further requests
//! (at most `lines::HELD_BYTES` of them) and keeps reading, so the
//! client's answers to the server's own requests (`roots/list`) and its
//! cancellations still arrive; past that it reads no further line, so a
//! client that does not read its answers meets a full pipe, not a server
//! that grows. `subscriptions/listen` is not counted: it is answered only
//! when the client ends it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::RoleServer;
use rmcp::model::{ClientNotification, ClientRequest, JsonRpcMessage, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use tokio::sync::Notify;

/// How many requests may be in flight on one stdio session (a request
/// waiting for the client's `roots/list` answer counts, and waits at most
/// `ROOTS_TIMEOUT`).
pub const MAX_IN_FLIGHT: usize = 64;

/// The requests read and not yet answered, by id (a client may reuse an
/// id: each use counts). Cheap to clone: the clones share the count.
#[derive(Clone, Debug, Default)]
pub struct InFlight {
    ids: Arc<Mutex<HashMap<RequestId, usize>>>,
    room: Arc<Notify>,
}

impl InFlight {
    /// How many requests are in flight.
    pub fn count(&self) -> usize {
        self.ids
            .lock()
            .map(|m| m.values().sum())
            .unwrap_or_default()
    }

    /// True while fewer than [`MAX_IN_FLIGHT`] requests are in flight.
    pub fn has_room(&self) -> bool {
        self.count() < MAX_IN_FLIGHT
    }

    /// True when a request with this id is in flight.
    pub fn holds(&self, id: &RequestId) -> bool {
        self.ids.lock().is_ok_and(|m| m.contains_key(id))
    }

    /// Returns once fewer than [`MAX_IN_FLIGHT`] requests are in flight.
    pub async fn room(&self) {
        loop {
            let freed = self.room.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            if self.count() < MAX_IN_FLIGHT {
                return;
            }
            freed.await;
        }
    }

    /// Counts a message just read: a request (not `subscriptions/listen`)
    /// adds its id; `notifications/cancelled` takes its request's id away
    /// (rmcp sends no answer for a cancelled request).
    pub fn read(&self, message: &RxJsonRpcMessage<RoleServer>) {
        match message {
            JsonRpcMessage::Request(r)
                if !matches!(r.request, ClientRequest::SubscriptionsListenRequest(_)) =>
            {
                if let Ok(mut ids) = self.ids.lock() {
                    *ids.entry(r.id.clone()).or_default() += 1;
                }
            }
            JsonRpcMessage::Notification(n) => {
                if let ClientNotification::CancelledNotification(c) = &n.notification
                    && let Some(id) = &c.params.request_id
                {
                    self.done(id);
                }
            }
            _ => {}
        }
    }

    /// Counts a message just written (or that failed to be): an answer
    /// takes its request's id away.
    pub fn written(&self, message: &TxJsonRpcMessage<RoleServer>) {
        let id = match message {
            JsonRpcMessage::Response(r) => Some(&r.id),
            JsonRpcMessage::Error(e) => e.id.as_ref(),
            _ => None,
        };
        if let Some(id) = id {
            self.done(id);
        }
    }

    fn done(&self, id: &RequestId) {
        let Ok(mut ids) = self.ids.lock() else { return };
        if let Some(n) = ids.get_mut(id) {
            *n -= 1;
            if *n == 0 {
                ids.remove(id);
            }
            drop(ids);
            self.room.notify_waiters();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rx(line: &str) -> RxJsonRpcMessage<RoleServer> {
        serde_json::from_str(line).unwrap()
    }

    fn answer(id: i64) -> TxJsonRpcMessage<RoleServer> {
        serde_json::from_value(serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {}}))
            .unwrap()
    }

    #[tokio::test(flavor = "current_thread")]
    async fn reading_stops_at_the_bound_and_an_answer_or_a_cancel_frees_room() {
        let f = InFlight::default();
        for i in 0..MAX_IN_FLIGHT {
            f.read(&rx(&format!(
                r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/list"}}"#
            )));
        }
        // A listen and a notification do not count.
        f.read(&rx(
            r#"{"jsonrpc":"2.0","id":"l","method":"subscriptions/listen","params":{"notifications":{}}}"#,
        ));
        f.read(&rx(
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        ));
        assert_eq!(f.count(), MAX_IN_FLIGHT);
        let blocked = tokio::time::timeout(std::time::Duration::from_millis(20), f.room()).await;
        assert!(blocked.is_err(), "room while full");
        f.written(&answer(3));
        assert_eq!(f.count(), MAX_IN_FLIGHT - 1);
        f.room().await;
        f.read(&rx(r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#));
        assert_eq!(f.count(), MAX_IN_FLIGHT);
        f.read(&rx(
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}"#,
        ));
        assert_eq!(f.count(), MAX_IN_FLIGHT - 1);
        // An answer to nothing counted changes nothing.
        f.written(&answer(5));
        f.written(&answer(999));
        assert_eq!(f.count(), MAX_IN_FLIGHT - 1);
    }
}
