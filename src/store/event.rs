//! Events: the append-only log's records (spec/store.md "The log").
//!
//! An event names its subject task by bare slug, carries a Unix-second
//! timestamp, the writing session and a JSON `data` object. On append the
//! store canonicalises `data` (keys sorted, no spaces), mints a ULID
//! (monotonic within a process) and computes the content key that makes a
//! duplicate append a no-op.

use std::sync::{Mutex, OnceLock};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use unicode_normalization::UnicodeNormalization;

use super::model::{EdgeType, Status};
use super::slug::strip_depot;

/// The reserved subject of `view.define` / `view.undefine` events: a `tasks`
/// row created by the first of them, hidden from broad sources by TQ
/// (spec/tq.md §5 "Views").
pub const RESERVED_CAIRN: &str = "@cairn";

/// The largest accepted `ts`: 9999-12-31T23:59:59Z in Unix seconds (the
/// write boundary refuses later stamps, the fold refuses later claim ends).
pub const MAX_TS: i64 = 253_402_300_799;

/// Event type names (spec/store.md "Event types and what they fold into").
pub mod types {
    /// `task.create`: data `{description, project_id}`.
    pub const TASK_CREATE: &str = "task.create";
    /// `task.update-status`: data `{status}`.
    pub const UPDATE_STATUS: &str = "task.update-status";
    /// `task.update-description`: data `{description}`.
    pub const UPDATE_DESCRIPTION: &str = "task.update-description";
    /// `task.fork`: data `{child_id, edge_type}`.
    pub const FORK: &str = "task.fork";
    /// `task.link`: data `{target_id, edge_type}`.
    pub const LINK: &str = "task.link";
    /// `task.sever`: data `{target_id, edge_type}`.
    pub const SEVER: &str = "task.sever";
    /// `task.set-metadata`: data `{key, value}`.
    pub const SET_METADATA: &str = "task.set-metadata";
    /// `observation`: data `{text}`.
    pub const OBSERVATION: &str = "observation";
    /// `handoff.create`: data `{summary, path}`.
    pub const HANDOFF_CREATE: &str = "handoff.create";
    /// `view.define`: data `{name, query}`, subject `@cairn`.
    pub const VIEW_DEFINE: &str = "view.define";
    /// `view.undefine`: data `{name}`, subject `@cairn`.
    pub const VIEW_UNDEFINE: &str = "view.undefine";
    /// `task.claim`: data `{owner, until}` (until in Unix seconds; spec/tq.md §9).
    pub const CLAIM: &str = "task.claim";
    /// `task.release`: data `{owner}` (spec/tq.md §9).
    pub const RELEASE: &str = "task.release";
    /// `task.split`: data `{events, into}`, subject the contested slug
    /// (docs/store.md "Same name in two clones"): the listed events (content
    /// keys) belong to another task, `into`, wherever they name the subject.
    /// Written by reconcile, never by a tool; it folds to nothing itself but
    /// steers every later fold of the events it lists.
    pub const SPLIT: &str = "task.split";
    /// Every type the reducer folds; any other type is kept and folds to nothing.
    pub const ALL: [&str; 13] = [
        TASK_CREATE,
        UPDATE_STATUS,
        UPDATE_DESCRIPTION,
        FORK,
        LINK,
        SEVER,
        SET_METADATA,
        OBSERVATION,
        HANDOFF_CREATE,
        VIEW_DEFINE,
        VIEW_UNDEFINE,
        CLAIM,
        RELEASE,
    ];
}

/// An event to append (spec/store.md "The log"). `task_id` is the subject's
/// bare slug; `ts` is Unix seconds UTC; `data` is a JSON object,
/// canonicalised on append. The constructors below build each known type.
#[derive(Debug, Clone, PartialEq)]
pub struct NewEvent {
    /// The subject task's bare slug (depot prefix stripped).
    pub task_id: String,
    /// The event type, e.g. `task.create` (see [`types`]).
    pub event_type: String,
    /// Unix seconds, UTC.
    pub ts: i64,
    /// The writing session's id.
    pub session_id: String,
    /// The payload (a JSON object).
    pub data: Value,
}

impl NewEvent {
    fn new(session: &str, ts: i64, slug: &str, event_type: &str, data: Value) -> NewEvent {
        NewEvent {
            task_id: strip_depot(slug).to_string(),
            event_type: event_type.to_string(),
            ts,
            session_id: session.to_string(),
            data,
        }
    }

    /// `task.create` of `slug`: data `{"description": .., "project_id": ..}`
    /// (JSON null when absent). Folds to the row, status `active`, the description.
    pub fn task_create(
        session: &str,
        ts: i64,
        slug: &str,
        description: Option<&str>,
        project_id: Option<&str>,
    ) -> NewEvent {
        let data = json!({"description": description, "project_id": project_id});
        NewEvent::new(session, ts, slug, types::TASK_CREATE, data)
    }

    /// This event with `"name": NAME` added to its data: the typed name of
    /// a `task.create` (spec/store.md "Slugs and names": the typed name is
    /// kept in the event; `task_get` shows it when there is no description).
    /// A non-object `data` is left unchanged.
    pub fn with_name(mut self, name: &str) -> NewEvent {
        if let Value::Object(m) = &mut self.data {
            m.insert("name".to_string(), Value::from(name));
        }
        self
    }

    /// `task.update-status`: data `{"status": "completed"}`.
    pub fn update_status(session: &str, ts: i64, slug: &str, status: Status) -> NewEvent {
        let data = json!({"status": status.as_str()});
        NewEvent::new(session, ts, slug, types::UPDATE_STATUS, data)
    }

    /// `task.update-description`: data `{"description": ..}`.
    pub fn update_description(session: &str, ts: i64, slug: &str, description: &str) -> NewEvent {
        let data = json!({"description": description});
        NewEvent::new(session, ts, slug, types::UPDATE_DESCRIPTION, data)
    }

    /// `task.fork` with subject `parent`: data `{"child_id", "edge_type"}`.
    /// Structural edges make `parent` the child's parent; lateral ones add
    /// the edge parent → child.
    pub fn fork(session: &str, ts: i64, parent: &str, child: &str, edge: EdgeType) -> NewEvent {
        let data = json!({"child_id": strip_depot(child), "edge_type": edge.as_str()});
        NewEvent::new(session, ts, parent, types::FORK, data)
    }

    /// `task.link`: data `{"target_id", "edge_type"}`. Structural edges make
    /// `target` the subject's parent; lateral ones add the edge subject → target.
    pub fn link(session: &str, ts: i64, slug: &str, target: &str, edge: EdgeType) -> NewEvent {
        let data = json!({"target_id": strip_depot(target), "edge_type": edge.as_str()});
        NewEvent::new(session, ts, slug, types::LINK, data)
    }

    /// `task.sever`: data `{"target_id", "edge_type"}`. Structural: clears
    /// the parent pointer on whichever side holds the other; lateral: removes
    /// the edge subject → target.
    pub fn sever(session: &str, ts: i64, slug: &str, target: &str, edge: EdgeType) -> NewEvent {
        let data = json!({"target_id": strip_depot(target), "edge_type": edge.as_str()});
        NewEvent::new(session, ts, slug, types::SEVER, data)
    }

    /// `task.set-metadata`: data `{"key", "value"}` (LWW per key).
    pub fn set_metadata(session: &str, ts: i64, slug: &str, key: &str, value: &str) -> NewEvent {
        let data = json!({"key": key, "value": value});
        NewEvent::new(session, ts, slug, types::SET_METADATA, data)
    }

    /// `observation`: data `{"text"}`, the text NFC-normalised.
    pub fn observation(session: &str, ts: i64, slug: &str, text: &str) -> NewEvent {
        let data = json!({"text": nfc(text)});
        NewEvent::new(session, ts, slug, types::OBSERVATION, data)
    }

    /// `handoff.create`: data `{"summary", "path"}`; folds to a handoffs row
    /// and the observation `Handoff: SUMMARY → PATH`.
    pub fn handoff_create(
        session: &str,
        ts: i64,
        slug: &str,
        summary: &str,
        path: &str,
    ) -> NewEvent {
        let data = json!({"summary": nfc(summary), "path": path});
        NewEvent::new(session, ts, slug, types::HANDOFF_CREATE, data)
    }

    /// `view.define` on subject `@cairn`: data `{"name", "query"}`.
    pub fn view_define(session: &str, ts: i64, name: &str, query: &str) -> NewEvent {
        let data = json!({"name": name, "query": query});
        NewEvent::new(session, ts, RESERVED_CAIRN, types::VIEW_DEFINE, data)
    }

    /// `view.undefine` on subject `@cairn`: data `{"name"}`.
    pub fn view_undefine(session: &str, ts: i64, name: &str) -> NewEvent {
        let data = json!({"name": name});
        NewEvent::new(session, ts, RESERVED_CAIRN, types::VIEW_UNDEFINE, data)
    }

    /// `task.claim` by agent `owner` until `until` (Unix seconds): data
    /// `{"owner", "until"}` (spec/tq.md §9 "Events").
    pub fn claim(session: &str, ts: i64, slug: &str, owner: &str, until: i64) -> NewEvent {
        let data = json!({"owner": owner, "until": until});
        NewEvent::new(session, ts, slug, types::CLAIM, data)
    }

    /// `task.release` by agent `owner`: data `{"owner"}` (spec/tq.md §9).
    pub fn release(session: &str, ts: i64, slug: &str, owner: &str) -> NewEvent {
        let data = json!({"owner": owner});
        NewEvent::new(session, ts, slug, types::RELEASE, data)
    }

    /// The canonical JSON text of `data` (keys sorted, no spaces).
    pub fn canonical_data(&self) -> String {
        canonical_json(&self.data)
    }

    /// The content key: lower-hex SHA-256 over (subject, type, ts, session,
    /// canonical data), NUL-separated (spec/store.md "The log", `event_key`).
    pub fn event_key(&self) -> String {
        event_key(
            &self.task_id,
            &self.event_type,
            self.ts,
            &self.session_id,
            &self.canonical_data(),
        )
    }
}

/// An event as recorded in the log, with its portable identity. Returned by
/// [`crate::store::Store::events`]; accepted by `WriteTx::import` to replay
/// another log (sync, tests of order independence).
#[derive(Debug, Clone, PartialEq)]
pub struct LoggedEvent {
    /// Local arrival order (ignored on import).
    pub seq: i64,
    /// The ULID.
    pub event_id: String,
    /// The subject's bare slug.
    pub task_id: String,
    /// The event type.
    pub event_type: String,
    /// Unix seconds, UTC.
    pub ts: i64,
    /// The writing session.
    pub session_id: String,
    /// The previous distinct session that wrote this task, if any.
    pub prev_session_id: Option<String>,
    /// The payload.
    pub data: Value,
}

/// Canonical JSON: object keys sorted (serde_json's `Map` is a `BTreeMap`
/// in this build), no insignificant whitespace.
pub fn canonical_json(value: &Value) -> String {
    // serde_json without `preserve_order` keeps maps sorted by key, and
    // `Value`'s Display is compact, so this is canonical.
    sort_keys(value).to_string()
}

fn sort_keys(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k.clone(), sort_keys(v)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(sort_keys).collect()),
        other => other.clone(),
    }
}

/// Lower-hex SHA-256 of `task_id NUL type NUL ts NUL session NUL data`.
pub fn event_key(task_id: &str, event_type: &str, ts: i64, session: &str, data: &str) -> String {
    let mut h = Sha256::new();
    h.update(task_id.as_bytes());
    h.update([0u8]);
    h.update(event_type.as_bytes());
    h.update([0u8]);
    h.update(ts.to_string().as_bytes());
    h.update([0u8]);
    h.update(session.as_bytes());
    h.update([0u8]);
    h.update(data.as_bytes());
    hex(&h.finalize())
}

/// Lower-case hex of `bytes` (the `hex` crate).
pub(crate) fn hex(bytes: &[u8]) -> String {
    ::hex::encode(bytes)
}

/// NFC normalisation of `text` (observation text, handoff summaries).
pub fn nfc(text: &str) -> String {
    text.nfc().collect()
}

/// A fresh ULID (26 chars, Crockford base32), strictly increasing within
/// this process (a shared `ulid::Generator`). Falls back to a random ULID in
/// the astronomically unlikely case the generator's random part overflows
/// within one millisecond.
pub fn new_event_id() -> String {
    static GEN: OnceLock<Mutex<ulid::Generator>> = OnceLock::new();
    let lock = GEN.get_or_init(|| Mutex::new(ulid::Generator::new()));
    let mut generator = match lock.lock() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    };
    match generator.generate() {
        Ok(id) => id.to_string(),
        Err(_) => ulid::Ulid::new().to_string(),
    }
}

/// Now, in Unix seconds (UTC).
pub fn now() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

/// True when a string anywhere in `v` (a value or an object key) holds a
/// NUL character (U+0000). A text that merely spells `\u0000` holds none.
pub fn holds_nul(v: &Value) -> bool {
    match v {
        Value::String(s) => s.contains('\0'),
        Value::Array(a) => a.iter().any(holds_nul),
        Value::Object(o) => o.iter().any(|(k, v)| k.contains('\0') || holds_nul(v)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_json_sorts_keys_without_spaces() {
        let v: Value =
            serde_json::from_str(r#"{ "b": 1, "a": {"z": [1, 2], "y": null} }"#).unwrap();
        assert_eq!(canonical_json(&v), r#"{"a":{"y":null,"z":[1,2]},"b":1}"#);
    }

    #[test]
    fn event_ids_are_monotonic_and_26_chars() {
        let ids: Vec<String> = (0..1000).map(|_| new_event_id()).collect();
        assert!(ids.iter().all(|id| id.len() == 26));
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn event_key_is_content_addressed() {
        let a = NewEvent::observation("s1", 100, "2026-01-01-x", "hello");
        let b = NewEvent::observation("s1", 100, "depot:2026-01-01-x", "hello");
        assert_eq!(a, b);
        assert_eq!(a.event_key(), b.event_key());
        assert_eq!(a.event_key().len(), 64);
        let c = NewEvent::observation("s2", 100, "2026-01-01-x", "hello");
        assert_ne!(a.event_key(), c.event_key());
    }

    #[test]
    fn observation_text_is_nfc() {
        let e = NewEvent::observation("s", 1, "t", "cafe\u{301}");
        assert_eq!(e.data["text"], Value::String("caf\u{e9}".to_string()));
    }
}
