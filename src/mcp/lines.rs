//! The stdio line transport (spec/mcp.md "Protocol hygiene"; issue 14
//! defect 5): newline-delimited JSON-RPC in, one message per line out. It
//! replaces rmcp's async read/write transport because that one drops lines
//! it cannot type without a word. Here every line is classified first
//! ([`classify`]):
//!
//! - a line that is not JSON (not UTF-8, a syntax error, a lone surrogate
//!   such as `"a\ud800b"`, nesting deeper than 128, two values on one line)
//!   is answered `-32700` (parse error);
//! - JSON that is not a JSON-RPC message (an array, a scalar, an object rmcp
//!   cannot type) is answered `-32600` (invalid request), except an untypable
//!   notification (no `id`), which JSON-RPC forbids answering: it is ignored;
//! - a line longer than [`MAX_LINE_BYTES`] is skipped to its newline and
//!   answered `-32600` (its id read from the first [`HEAD_BYTES`]);
//! - blank lines are ignored; everything else goes to rmcp (a last line
//!   without its newline included).
//!
//! Errors carry the request's `id` whenever it can be read (a lenient second
//! look that skips over what the strict parse refused), else `null`. The
//! connection keeps serving after every one of them.
//!
//! At most [`super::in_flight::MAX_IN_FLIGHT`] requests are in flight
//! ([`super::in_flight`]); past that, requests are held (at most
//! [`HELD_BYTES`]) while the reading goes on, so the client's answers to
//! the server's own requests and its cancellations are read; past that
//! too, no line is read until a held request goes on. A request reusing
//! the id of one in flight is answered `-32600`.
//!
//! Once a write to the output fails (the client closed its end: a broken
//! pipe), the transport reads no further request: the session ends as at
//! the end of input, so no write tool runs whose answer cannot be heard.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{ErrorData, JsonRpcMessage, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::in_flight::InFlight;

/// The longest line read (bytes, newline excluded): 8 MiB, the HTTP body
/// limit too. The largest argument (a 1,000,000-character text) fits even
/// fully `\u`-escaped.
pub const MAX_LINE_BYTES: usize = 8 * 1024 * 1024;

/// How many bytes of requests (their lines) may be held while the bound
/// on requests in flight is reached: 8 MiB (one line at the longest);
/// past it, no line is read until a held request goes on.
pub const HELD_BYTES: usize = 8 * 1024 * 1024;

/// How many requests may be held at most, however short.
pub const HELD_REQUESTS: usize = 4096;

/// How much of an over-long line is kept to read its `id` from.
pub const HEAD_BYTES: usize = 4096;

/// What to do with one line.
#[derive(Debug)]
pub enum Verdict {
    /// A JSON-RPC message for rmcp.
    Message(Box<RxJsonRpcMessage<RoleServer>>),
    /// Nothing to do (a blank line, an untypable notification).
    Skip,
    /// Answer this error (already addressed to the id, when readable).
    Reply(Box<TxJsonRpcMessage<RoleServer>>),
}

/// The request id of a line the strict parse refused, when a lenient look
/// can read it: the first JSON value on the line, its top-level `id` only,
/// everything before it skipped unchecked and everything after it unread (so
/// the id of a truncated line is found when it comes before the damage).
fn probe_id(text: &str) -> Option<RequestId> {
    let mut slot = None;
    let mut de = serde_json::Deserializer::from_str(text);
    let _ = serde::de::DeserializeSeed::deserialize(IdSeed(&mut slot), &mut de);
    slot
}

/// Reads a map's `id` into the slot and stops there (the error the early
/// stop causes is ignored by [`probe_id`]).
struct IdSeed<'a>(&'a mut Option<RequestId>);

impl<'de> serde::de::DeserializeSeed<'de> for IdSeed<'_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> serde::de::Visitor<'de> for IdSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON-RPC object")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            if key == "id" {
                *self.0 = map.next_value::<Option<RequestId>>()?;
                return Ok(());
            }
            map.next_value::<serde::de::IgnoredAny>()?;
        }
        Ok(())
    }
}

fn reply(error: ErrorData, id: Option<RequestId>) -> Verdict {
    Verdict::Reply(Box::new(JsonRpcMessage::error(error, id)))
}

fn parse_error(message: String, id: Option<RequestId>) -> Verdict {
    reply(ErrorData::parse_error(message, None), id)
}

fn invalid_request(message: impl Into<Cow<'static, str>>, id: Option<RequestId>) -> Verdict {
    reply(ErrorData::invalid_request(message, None), id)
}

/// The message of a `serde_json` syntax error, in words a client author can
/// act on (no input is quoted).
fn syntax_message(e: &serde_json::Error) -> String {
    let detail = e.to_string();
    if detail.starts_with("recursion limit exceeded") {
        "Parse error: the message nests deeper than 128 levels.".to_string()
    } else if detail.contains("surrogate") || detail.contains("hex escape") {
        "Parse error: a string holds an invalid \\u escape, such as a lone surrogate.".to_string()
    } else if detail.starts_with("trailing characters") {
        "Parse error: more than one JSON value on the line; send one message per line.".to_string()
    } else {
        format!("Parse error: {detail}.")
    }
}

/// Classifies one line (without its newline). See the module docs.
pub fn classify(line: &[u8]) -> Verdict {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Verdict::Skip;
    }
    let text = match std::str::from_utf8(line) {
        Ok(t) => t,
        Err(e) => {
            let id = probe_id(&String::from_utf8_lossy(line));
            return parse_error(
                format!(
                    "Parse error: the line is not valid UTF-8 (at byte {}).",
                    e.valid_up_to()
                ),
                id,
            );
        }
    };
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => return parse_error(syntax_message(&e), probe_id(text)),
    };
    let Value::Object(obj) = &value else {
        return invalid_request(
            "Invalid Request: a message is one JSON-RPC object (batches are not supported).",
            None,
        );
    };
    let id = obj
        .get("id")
        .and_then(|v| serde_json::from_value::<RequestId>(v.clone()).ok());
    match serde_json::from_str::<RxJsonRpcMessage<RoleServer>>(text) {
        Ok(m) => Verdict::Message(Box::new(m)),
        Err(e) if !obj.contains_key("id") => {
            tracing::debug!(error = %e, "ignoring an untypable notification");
            Verdict::Skip
        }
        Err(_) => invalid_request(
            "Invalid Request: not a JSON-RPC 2.0 request, notification or response.",
            id,
        ),
    }
}

/// One line read: whole, too long (skipped), or the end of input.
enum Read {
    Line,
    TooLong,
    Eof,
}

/// The transport: lines from `R`, lines to `W` (shared by responses and the
/// transport's own error replies).
pub struct LineTransport<R, W> {
    read: BufReader<R>,
    buf: Vec<u8>,
    /// The first [`HEAD_BYTES`] of the last over-long line (to read its id).
    head: Vec<u8>,
    discarding: bool,
    write: Arc<Mutex<W>>,
    replies: JoinSet<()>,
    /// Cancelled when a write to the output failed: `receive` ends.
    broken: CancellationToken,
    in_flight: InFlight,
    /// Requests read while the bound was reached, in order, with their
    /// line's length (bytes).
    held: VecDeque<(Box<RxJsonRpcMessage<RoleServer>>, usize)>,
    held_bytes: usize,
    /// The input ended (or failed): only held requests are left.
    ended: bool,
}

impl<R, W> LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    /// A transport reading `read` and writing `write`.
    pub fn new(read: R, write: W) -> Self {
        LineTransport {
            read: BufReader::new(read),
            buf: Vec::new(),
            head: Vec::new(),
            discarding: false,
            write: Arc::new(Mutex::new(write)),
            replies: JoinSet::new(),
            broken: CancellationToken::new(),
            in_flight: InFlight::default(),
            held: VecDeque::new(),
            held_bytes: 0,
            ended: false,
        }
    }

    /// Reads the next line into `buf`, never holding more than
    /// [`MAX_LINE_BYTES`]. Cancel-safe: a partial line stays in `buf`.
    async fn read_line(&mut self) -> std::io::Result<Read> {
        loop {
            let available = self.read.fill_buf().await?;
            if available.is_empty() {
                return Ok(Read::Eof);
            }
            let newline = available.iter().position(|b| *b == b'\n');
            let take = newline.map_or(available.len(), |i| i + 1);
            let mut outcome = None;
            if self.discarding {
                if newline.is_some() {
                    self.discarding = false;
                }
            } else if self.buf.len() + take > MAX_LINE_BYTES + 1 {
                let from: &[u8] = if self.buf.is_empty() {
                    available
                } else {
                    &self.buf
                };
                self.head = from[..from.len().min(HEAD_BYTES)].to_vec();
                self.buf.clear();
                if newline.is_none() {
                    self.discarding = true;
                }
                outcome = Some(Read::TooLong);
            } else {
                self.buf.extend_from_slice(&available[..take]);
                if newline.is_some() {
                    outcome = Some(Read::Line);
                }
            }
            self.read.consume(take);
            if let Some(o) = outcome {
                return Ok(o);
            }
        }
    }

    /// A message just read: handed on (`Some`), or held or answered here
    /// (`None`). A request whose id is in flight or held is answered
    /// `-32600` (rmcp would answer only one of the two); a request is held
    /// while others are held or [`super::in_flight::MAX_IN_FLIGHT`] are in
    /// flight; a cancellation of a held request drops it (it never
    /// started: no answer, as for any cancelled request). Everything else
    /// (answers to the server's own requests, notifications) goes on at
    /// once.
    fn admit(
        &mut self,
        m: Box<RxJsonRpcMessage<RoleServer>>,
        bytes: usize,
    ) -> Option<Box<RxJsonRpcMessage<RoleServer>>> {
        match m.as_ref() {
            JsonRpcMessage::Request(r) => {
                let taken = self.in_flight.holds(&r.id)
                    || self.held.iter().any(
                        |(h, _)| matches!(h.as_ref(), JsonRpcMessage::Request(q) if q.id == r.id),
                    );
                if taken {
                    let id = r.id.clone();
                    self.answer(JsonRpcMessage::error(
                        ErrorData::invalid_request(
                            format!(
                                "Invalid Request: the id {id} is already used by a request in flight; use a new id for each request."
                            ),
                            None,
                        ),
                        Some(id),
                    ));
                    return None;
                }
                let listen = matches!(
                    r.request,
                    rmcp::model::ClientRequest::SubscriptionsListenRequest(_)
                );
                if !listen && (!self.held.is_empty() || !self.in_flight.has_room()) {
                    self.held_bytes += bytes;
                    self.held.push_back((m, bytes));
                    return None;
                }
            }
            JsonRpcMessage::Notification(n) => {
                if let rmcp::model::ClientNotification::CancelledNotification(c) = &n.notification
                    && let Some(id) = &c.params.request_id
                {
                    let at = self.held.iter().position(
                        |(h, _)| matches!(h.as_ref(), JsonRpcMessage::Request(q) if &q.id == id),
                    );
                    if let Some(at) = at {
                        if let Some((_, b)) = self.held.remove(at) {
                            self.held_bytes -= b;
                        }
                        return None;
                    }
                }
            }
            _ => {}
        }
        self.in_flight.read(&m);
        Some(m)
    }

    fn answer(&mut self, message: TxJsonRpcMessage<RoleServer>) {
        let write = self.write.clone();
        let broken = self.broken.clone();
        self.replies.spawn(async move {
            if let Err(e) = write_message(&write, &message, &broken).await {
                tracing::debug!(error = %e, "could not answer a malformed line");
            }
        });
    }

    async fn drain_replies(&mut self) {
        while self.replies.join_next().await.is_some() {}
    }
}

/// The line of one message, without its newline. An error whose request id
/// could not be read carries `"id": null`, as JSON-RPC 2.0 requires (rmcp
/// omits the member, as the 2026-07-28 revision allows; a 2025-11-25 client
/// needs it).
pub fn encode(message: &TxJsonRpcMessage<RoleServer>) -> serde_json::Result<Vec<u8>> {
    match message {
        JsonRpcMessage::Error(e) if e.id.is_none() => {
            let mut v = serde_json::to_value(message)?;
            if let Value::Object(obj) = &mut v {
                obj.insert("id".to_string(), Value::Null);
            }
            serde_json::to_vec(&v)
        }
        _ => serde_json::to_vec(message),
    }
}

/// Writes one message and its newline; a failed write (not a failed
/// encoding) cancels `broken`, which ends the reading side.
async fn write_message<W: AsyncWrite + Unpin>(
    write: &Mutex<W>,
    message: &TxJsonRpcMessage<RoleServer>,
    broken: &CancellationToken,
) -> std::io::Result<()> {
    let mut line = encode(message).map_err(std::io::Error::other)?;
    line.push(b'\n');
    let mut w = write.lock().await;
    let written = match w.write_all(&line).await {
        Ok(()) => w.flush().await,
        Err(e) => Err(e),
    };
    if written.is_err() {
        broken.cancel();
    }
    written
}

impl<R, W> Transport<RoleServer> for LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let write = self.write.clone();
        let broken = self.broken.clone();
        let in_flight = self.in_flight.clone();
        async move {
            let written = write_message(&write, &item, &broken).await;
            in_flight.written(&item);
            written
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            while self.replies.try_join_next().is_some() {}
            // A held request goes first, once there is room.
            if self.in_flight.has_room()
                && let Some((m, bytes)) = self.held.pop_front()
            {
                self.held_bytes -= bytes;
                self.in_flight.read(&m);
                return Some(*m);
            }
            if self.ended && self.held.is_empty() {
                self.drain_replies().await;
                return None;
            }
            let broken = self.broken.clone();
            let in_flight = self.in_flight.clone();
            let holding = !self.held.is_empty();
            let reading =
                !self.ended && self.held_bytes < HELD_BYTES && self.held.len() < HELD_REQUESTS;
            // `read_line` is cancel-safe: a partial line stays buffered.
            let read = tokio::select! {
                biased;
                () = broken.cancelled() => {
                    tracing::warn!("the client stopped reading (a write failed); ending the session");
                    self.drain_replies().await;
                    return None;
                }
                () = in_flight.room(), if holding => continue,
                r = self.read_line(), if reading => r,
                else => {
                    self.drain_replies().await;
                    return None;
                }
            };
            match read {
                Ok(Read::Line) => {}
                Ok(Read::TooLong) => {
                    let id = probe_id(&String::from_utf8_lossy(&std::mem::take(&mut self.head)));
                    self.answer(JsonRpcMessage::error(
                        ErrorData::invalid_request(
                            format!(
                                "Invalid Request: the line is longer than {MAX_LINE_BYTES} bytes."
                            ),
                            None,
                        ),
                        id,
                    ));
                    continue;
                }
                // A last line without its newline still counts.
                Ok(Read::Eof) if !self.buf.is_empty() && !self.discarding => {}
                Ok(Read::Eof) => {
                    // The requests held still go to the server.
                    self.ended = true;
                    continue;
                }
                Err(e) => {
                    tracing::error!(error = %e, "cannot read stdin");
                    self.ended = true;
                    continue;
                }
            }
            let line = std::mem::take(&mut self.buf);
            let bytes = line.len();
            let verdict = classify(line.strip_suffix(b"\n").unwrap_or(&line));
            self.buf = line;
            self.buf.clear();
            match verdict {
                Verdict::Message(m) => {
                    if let Some(m) = self.admit(m, bytes) {
                        return Some(*m);
                    }
                }
                Verdict::Skip => {}
                Verdict::Reply(r) => self.answer(*r),
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.drain_replies().await;
        self.write.lock().await.flush().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(line: &[u8]) -> Value {
        match classify(line) {
            Verdict::Reply(r) => serde_json::to_value(*r).unwrap_or_default(),
            Verdict::Message(m) => panic!("typed as a message: {m:?}"),
            Verdict::Skip => Value::Null,
        }
    }

    fn code_id(line: &[u8]) -> (i64, Value) {
        let v = answer(line);
        (v["error"]["code"].as_i64().unwrap_or(0), v["id"].clone())
    }

    #[test]
    fn every_malformed_class_is_answered_with_its_code_and_id() {
        assert_eq!(code_id(b"not json"), (-32700, Value::Null));
        assert_eq!(
            code_id(br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"observe","arguments":{"text":"a\ud800b"}}}"#),
            (-32700, Value::from(7))
        );
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":"d","method":"tools/call","params":{{"name":"task_query","arguments":{{"query":{}1{}}}}}}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        assert_eq!(code_id(deep.as_bytes()), (-32700, Value::from("d")));
        assert_eq!(
            code_id(b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\",\"x\":\"\xff\"}"),
            (-32700, Value::from(3))
        );
        assert_eq!(
            code_id(br#"{"jsonrpc":"2.0","id":4,"method":"ping"}{"jsonrpc":"2.0","id":5,"method":"ping"}"#),
            (-32700, Value::from(4))
        );
        assert_eq!(code_id(b"[1,2]"), (-32600, Value::Null));
        assert_eq!(code_id(b"42"), (-32600, Value::Null));
        assert_eq!(
            code_id(br#"{"jsonrpc":"2.0","id":9,"method":5}"#),
            (-32600, Value::from(9))
        );
        assert_eq!(code_id(br#"{"id":10}"#), (-32600, Value::from(10)));
    }

    #[test]
    fn the_id_of_a_truncated_line_is_read_when_it_comes_first() {
        assert_eq!(
            probe_id(r#"{"jsonrpc":"2.0","id":"x1","method":"tools/call","params":{"a":"xxxx"#),
            Some(RequestId::String("x1".into()))
        );
        assert_eq!(probe_id(r#"{"jsonrpc":"2.0","params":{"a":"xxxx"#), None);
        assert_eq!(probe_id(r#"{"id":null}"#), None);
        assert_eq!(probe_id("[1]"), None);
    }

    #[test]
    fn messages_pass_and_blank_lines_and_odd_notifications_are_skipped() {
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
            Verdict::Message(_)
        ));
        assert!(matches!(
            classify(b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r"),
            Verdict::Message(_)
        ));
        assert!(matches!(classify(b"   \r"), Verdict::Skip));
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":5}"#),
            Verdict::Skip
        ));
    }

    fn line(bytes: &[u8]) -> String {
        match classify(bytes) {
            Verdict::Reply(r) => {
                String::from_utf8(encode(&r).unwrap_or_default()).unwrap_or_default()
            }
            other => panic!("not answered: {other:?}"),
        }
    }

    #[test]
    fn an_unreadable_id_is_written_null() {
        assert_eq!(
            line(b"not json"),
            r#"{"error":{"code":-32700,"message":"Parse error: expected ident at line 1 column 2."},"id":null,"jsonrpc":"2.0"}"#
        );
        assert_eq!(
            line(b"[1,2]"),
            r#"{"error":{"code":-32600,"message":"Invalid Request: a message is one JSON-RPC object (batches are not supported)."},"id":null,"jsonrpc":"2.0"}"#
        );
        assert_eq!(
            line(br#"{"jsonrpc":"2.0","id":9,"method":5}"#),
            r#"{"jsonrpc":"2.0","id":9,"error":{"code":-32600,"message":"Invalid Request: not a JSON-RPC 2.0 request, notification or response."}}"#
        );
    }

    #[test]
    fn messages_name_the_problem() {
        let v = answer(br#"{"jsonrpc":"2.0","id":4,"method":"ping"} {}"#);
        assert_eq!(
            v["error"]["message"],
            "Parse error: more than one JSON value on the line; send one message per line."
        );
        let v = answer(b"{\"id\":1,\"x\":\xc3}");
        assert_eq!(
            v["error"]["message"],
            "Parse error: the line is not valid UTF-8 (at byte 12)."
        );
    }

    /// A transport reading `input`; what it writes is read back from the
    /// returned end.
    fn over(
        input: String,
    ) -> (
        LineTransport<&'static [u8], tokio::io::DuplexStream>,
        tokio::io::DuplexStream,
    ) {
        let (ours, theirs) = tokio::io::duplex(1 << 20);
        let input: &'static [u8] = Box::leak(input.into_bytes().into_boxed_slice());
        (LineTransport::new(input, ours), theirs)
    }

    fn request_id(m: &RxJsonRpcMessage<RoleServer>) -> Option<String> {
        match m {
            JsonRpcMessage::Request(r) => Some(r.id.to_string()),
            JsonRpcMessage::Response(r) => Some(format!("response {}", r.id)),
            _ => None,
        }
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_reused_id_in_flight_is_answered_and_never_reaches_the_server() {
        let (mut t, mut out) = over(
            [
                r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#,
                r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#,
                r#"{"jsonrpc":"2.0","id":8,"method":"ping"}"#,
                "",
            ]
            .join("\n"),
        );
        let first = t.receive().await.and_then(|m| request_id(&m));
        assert_eq!(first.as_deref(), Some("7"));
        let next = t.receive().await.and_then(|m| request_id(&m));
        assert_eq!(next.as_deref(), Some("8"));
        assert!(t.receive().await.is_none());
        drop(t);
        let mut text = String::new();
        tokio::io::AsyncReadExt::read_to_string(&mut out, &mut text)
            .await
            .unwrap_or_default();
        assert_eq!(
            text,
            "{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":-32600,\"message\":\"Invalid Request: the id 7 is already used by a request in flight; use a new id for each request.\"}}\n"
        );
    }

    #[tokio::test(flavor = "current_thread")]
    async fn past_the_bound_requests_are_held_and_answers_and_cancels_still_read() {
        let max = super::super::in_flight::MAX_IN_FLIGHT;
        let mut lines: Vec<String> = (0..max)
            .map(|i| format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"ping"}}"#))
            .collect();
        lines.push(r#"{"jsonrpc":"2.0","id":100,"method":"ping"}"#.to_string());
        lines.push(r#"{"jsonrpc":"2.0","id":101,"method":"ping"}"#.to_string());
        // A cancel of a held request, then the client's answer to the
        // server's own request.
        lines.push(
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":100}}"#
                .to_string(),
        );
        lines.push(r#"{"jsonrpc":"2.0","id":"s1","result":{"roots":[]}}"#.to_string());
        lines.push(String::new());
        let (mut t, _out) = over(lines.join("\n"));
        for i in 0..max {
            let m = t.receive().await.and_then(|m| request_id(&m));
            assert_eq!(m, Some(i.to_string()));
        }
        // 100 and 101 were held, the cancel dropped 100, the answer goes on
        // (a reader stopped at the bound would wait here for ever).
        let m = tokio::time::timeout(std::time::Duration::from_secs(10), t.receive())
            .await
            .expect("the answer is read past the bound")
            .and_then(|m| request_id(&m));
        assert_eq!(m.as_deref(), Some("response s1"));
        assert_eq!(t.held.len(), 1);
        // One answer written frees room: 101 goes on, then the end.
        let answer: TxJsonRpcMessage<RoleServer> =
            serde_json::from_str(r#"{"jsonrpc":"2.0","id":0,"result":{}}"#).unwrap();
        t.send(answer).await.unwrap();
        let m = t.receive().await.and_then(|m| request_id(&m));
        assert_eq!(m.as_deref(), Some("101"));
        assert!(t.receive().await.is_none());
    }
}
