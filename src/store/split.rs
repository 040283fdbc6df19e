//! Same name in two clones (issue 19 item 4, docs/store.md "Same name in
//! two clones"): clones A and C each create `2026-12-01-fix-parser-bug`;
//! after a merge one log holds two `task.create` events of that slug. The
//! ingest that first sees both knows which side each event came from (the
//! database's own events versus the lines the merge brought), so it writes
//! one `task.split` event: the later creation's events (and the edges of
//! other tasks that name it) belong to `SLUG-XXXXXX`, the six first hex
//! digits of that creation's content key. The split's content is a function
//! of the two sides alone (ts, session, data), so both clones write the same
//! event and a fresh clone folds the same projection.
//!
//! Every fold of the whole log reads the splits first ([`Remap`]) and folds
//! a listed event as if it named the new slug; appending a split refolds.

use std::collections::{BTreeSet, HashMap};

use rusqlite::{Connection, params};
use serde_json::{Value, json};

use super::error::StoreError;
use super::event::{canonical_json, event_key, types};
use super::log::{LogLine, ParsedLine};

/// The `schema_meta` key set when a store first holds a `task.split` (the
/// events table has no index on the type, so [`Remap::load`] reads this
/// row instead of scanning every event of a store that never had a split:
/// a refold inside `rebuild`'s short write transaction stays as fast as
/// before).
pub const SPLITS_MARK: &str = "log.splits";

/// Records that the store on `conn` holds a split ([`SPLITS_MARK`]).
/// Errors: [`StoreError::Sqlite`].
pub(crate) fn mark_splits(conn: &Connection) -> Result<(), StoreError> {
    conn.prepare_cached(
        "INSERT INTO schema_meta(key, value) VALUES (?1, '1') ON CONFLICT(key) DO NOTHING",
    )?
    .execute(params![SPLITS_MARK])?;
    Ok(())
}

/// The session id of the `task.split` events reconcile writes.
pub const SPLIT_SESSION: &str = "cairn-reconcile";

/// Validates a `task.split`'s data: `into` a non-blank slug without control
/// characters or a leading `@`, `events` a non-empty array of 64-hex
/// content keys. Errors: one phrase saying what is wrong.
pub(crate) fn parse_split(data: &Value) -> Result<(String, Vec<String>), String> {
    let into = match data.get("into") {
        Some(Value::String(s))
            if !s.trim().is_empty() && !s.starts_with('@') && !s.chars().any(char::is_control) =>
        {
            s.clone()
        }
        _ => return Err("data.into must be a task slug".to_string()),
    };
    let keys = data
        .get("events")
        .and_then(Value::as_array)
        .filter(|a| !a.is_empty())
        .ok_or_else(|| "data.events must be a non-empty array of content keys".to_string())?;
    let mut out = Vec::with_capacity(keys.len());
    for k in keys {
        match k.as_str() {
            Some(k) if k.len() == 64 && k.bytes().all(|b| b.is_ascii_hexdigit()) => {
                out.push(k.to_string());
            }
            _ => return Err("data.events must hold 64-hex content keys".to_string()),
        }
    }
    Ok((into, out))
}

/// Which events fold under another slug: content key → (the slug they
/// name, the slug they fold as).
#[derive(Debug, Default)]
pub(crate) struct Remap {
    moved: HashMap<String, (String, String)>,
}

impl Remap {
    /// Reads every `task.split` on `conn` (`main.events`). The earliest
    /// split of an event wins (ordered by ts, event_id). Errors:
    /// [`StoreError::Sqlite`].
    pub(crate) fn load(conn: &Connection) -> Result<Remap, StoreError> {
        let marked: bool = conn.query_row(
            "SELECT count(*) > 0 FROM main.schema_meta WHERE key = ?1",
            params![SPLITS_MARK],
            |r| r.get(0),
        )?;
        if !marked {
            return Ok(Remap::default());
        }
        let mut stmt = conn.prepare(
            "SELECT task_id, data FROM main.events WHERE type = ?1 ORDER BY ts, event_id",
        )?;
        let rows = stmt
            .query_map(params![types::SPLIT], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<Vec<(String, String)>, _>>()?;
        Ok(Remap::from_splits(rows))
    }

    /// The remap of `splits`: each `task.split`'s subject and data text,
    /// ordered by `(ts, event_id)` (the earliest split of an event wins;
    /// malformed ones are skipped). Engine-independent: SQLite's
    /// [`Remap::load`] and PostgreSQL's refold both build it here.
    pub(crate) fn from_splits(splits: impl IntoIterator<Item = (String, String)>) -> Remap {
        let mut moved = HashMap::new();
        for (from, data) in splits {
            let Ok(data) = serde_json::from_str::<Value>(&data) else {
                continue;
            };
            let Ok((into, keys)) = parse_split(&data) else {
                continue;
            };
            for k in keys {
                moved
                    .entry(k)
                    .or_insert_with(|| (from.clone(), into.clone()));
            }
        }
        Remap { moved }
    }

    /// True when no event is moved.
    pub(crate) fn is_empty(&self) -> bool {
        self.moved.is_empty()
    }

    /// The subject and data the event with content `key` folds as: where
    /// it is listed by a split, every mention of the old slug (the subject,
    /// `child_id`, `target_id`) becomes the new one. `None`: unchanged.
    pub(crate) fn apply(&self, key: &str, task_id: &str, data: &Value) -> Option<(String, Value)> {
        let (from, into) = self.moved.get(key)?;
        let subject = if task_id == from { into } else { task_id };
        let mut data = data.clone();
        if let Some(map) = data.as_object_mut() {
            for field in ["child_id", "target_id"] {
                if map.get(field).and_then(Value::as_str) == Some(from.as_str()) {
                    map.insert(field.to_string(), Value::from(into.as_str()));
                }
            }
        }
        Some((subject.to_string(), data))
    }
}

/// True when the event names `slug` as its subject or as the other end of
/// an edge.
fn names(task_id: &str, data: &Value, slug: &str) -> bool {
    task_id == slug
        || ["child_id", "target_id"]
            .iter()
            .any(|f| data.get(*f).and_then(Value::as_str) == Some(slug))
}

/// A creation: `(ts, event_id, content key)`.
type Creation = (i64, String, String);

/// The splits an ingest must add, and the sentences telling the user.
///
/// For each slug that one of `incoming` (lines the database lacks) creates
/// while the database holds another creation of it:
/// - no split (stored or incoming) moved either creation yet: one
///   `task.split` moving the later creation's side (by `(ts, event_id)`)
///   to `SLUG-XXXXXX`, and a sentence;
/// - an incoming split already moved one creation (the other clone saw the
///   conflict first): the moved side's events that split does not list
///   (written after it) are moved by one more split to the same slug, and
///   when the moved side is this database's own, a sentence.
///
/// Errors: [`StoreError::Sqlite`].
pub(crate) fn detect(
    conn: &Connection,
    incoming: &[ParsedLine],
) -> Result<(Vec<ParsedLine>, Vec<String>), StoreError> {
    let mut incoming_creates: HashMap<&str, Vec<Creation>> = HashMap::new();
    let mut incoming_moves: HashMap<String, String> = HashMap::new();
    for p in incoming {
        let l = &p.line;
        if l.event_type == types::TASK_CREATE {
            incoming_creates
                .entry(l.task_id.as_str())
                .or_default()
                .push((l.ts, l.event_id.clone(), l.event_key.clone()));
        } else if l.event_type == types::SPLIT
            && let Ok((into, keys)) = parse_split(&p.data)
        {
            for k in keys {
                incoming_moves.entry(k).or_insert_with(|| into.clone());
            }
        }
    }
    let (mut lines, mut notes) = (Vec::new(), Vec::new());
    if incoming_creates.is_empty() {
        return Ok((lines, notes));
    }
    let remap = Remap::load(conn)?;
    let moved_to = |k: &str| -> Option<String> {
        remap
            .moved
            .get(k)
            .map(|(_, into)| into.clone())
            .or_else(|| incoming_moves.get(k).cloned())
    };
    let is_moved = |k: &str| remap.moved.contains_key(k) || incoming_moves.contains_key(k);
    let mut slugs: Vec<&&str> = incoming_creates.keys().collect();
    slugs.sort();
    for slug in slugs {
        // Several clones' creations may arrive at once (three clones, one
        // of them already resolved against another): the one to resolve is
        // the earliest no split moved yet (hostile run M1).
        let mut candidates = incoming_creates[*slug].clone();
        candidates.sort();
        let Some(theirs) = candidates
            .iter()
            .find(|c| !is_moved(&c.2))
            .or_else(|| candidates.first())
        else {
            continue;
        };
        let ours: Option<Creation> = conn
            .prepare_cached(
                "SELECT ts, event_id, event_key FROM events
                 WHERE task_id = ?1 AND type = ?2 ORDER BY ts, event_id LIMIT 1",
            )?
            .query_row(params![slug, types::TASK_CREATE], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })
            .ok();
        let Some(ours) = ours else { continue };
        if ours.2 == theirs.2 {
            continue;
        }
        let (ours_moved, theirs_moved) = (moved_to(&ours.2), moved_to(&theirs.2));
        let (loser_is_incoming, into, fresh) = match (&ours_moved, &theirs_moved) {
            (Some(into), _) => (false, into.clone(), false),
            (None, Some(into)) => (true, into.clone(), false),
            (None, None) => {
                let incoming_loses = (theirs.0, &theirs.1) > (ours.0, &ours.1);
                let loser = if incoming_loses { theirs } else { &ours };
                (
                    incoming_loses,
                    super::slug::moved_slug(slug, &loser.2),
                    true,
                )
            }
        };
        let loser_ts = if loser_is_incoming { theirs.0 } else { ours.0 };
        let mut keys: BTreeSet<String> = BTreeSet::new();
        if loser_is_incoming {
            for p in incoming {
                if names(&p.line.task_id, &p.data, slug) && p.line.event_type != types::SPLIT {
                    keys.insert(p.line.event_key.clone());
                }
            }
        } else {
            let mut stmt = conn.prepare(
                "SELECT event_key FROM events
                 WHERE (task_id = ?1 AND type <> ?2)
                    OR json_extract(data, '$.child_id') = ?1
                    OR json_extract(data, '$.target_id') = ?1",
            )?;
            let mut rows = stmt.query(params![slug, types::SPLIT])?;
            while let Some(r) = rows.next()? {
                keys.insert(r.get(0)?);
            }
        }
        keys.retain(|k| !is_moved(k));
        if loser_is_incoming && !fresh {
            // The other clone resolved it and moved its own side; lines it
            // wrote later are its to move (a third clone's incoming lines
            // may mix both sides).
            keys.clear();
        }
        if fresh || !loser_is_incoming {
            notes.push(format!(
                "cairn: two clones each created {slug}; the later one is now {into} (its notes, edges and status moved with it)."
            ));
        }
        if !keys.is_empty() {
            lines.push(split_line(slug, &into, loser_ts, keys));
        }
    }
    Ok((lines, notes))
}

/// The `task.split` line moving `keys` from `slug` to `into`, stamped at
/// `ts` (the later creation's) with a ULID derived from its content.
fn split_line(slug: &str, into: &str, ts: i64, keys: BTreeSet<String>) -> ParsedLine {
    let data = json!({ "events": keys.into_iter().collect::<Vec<_>>(), "into": into });
    let text = canonical_json(&data);
    let key = event_key(slug, types::SPLIT, ts, SPLIT_SESSION, &text);
    let random = key
        .get(..32)
        .and_then(|h| u128::from_str_radix(h, 16).ok())
        .unwrap_or(0);
    let ms = u64::try_from(ts).unwrap_or(0).saturating_mul(1000);
    let event_id = ulid::Ulid::from_parts(ms, random).to_string();
    let line = LogLine {
        event_id,
        event_key: key,
        task_id: slug.to_string(),
        event_type: types::SPLIT.to_string(),
        ts,
        session_id: SPLIT_SESSION.to_string(),
        prev_session_id: None,
        data: text,
    };
    ParsedLine { line, data }
}
