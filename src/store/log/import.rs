//! `cairn import PATH`: the original tool's `.kli/` store (spec/store.md
//! "The plan travels with the repository", import).
//!
//! The original keeps `tasks/<slug>/events.ndjson` with lines
//! `{"data":{..},"event_id":..,"event_key":..,"prev_session_id":..,
//! "session_id":..,"task_id":..,"ts":..,"type":..}` (plus optional
//! `legacy_id`, `source_seq`, `imported_at`), `ts` in universal time
//! (seconds since 1900) and data keys spelled with hyphens (`project-id`,
//! `child-id`, `target-id`, `edge-type`). Mapping:
//!
//! - `ts` ≥ 2,208,988,800 has 2,208,988,800 subtracted (smaller values are
//!   already Unix seconds, as the original itself treats them);
//! - a depot prefix `name:` is stripped from the subject, `child-id` and
//!   `target-id`; a null session becomes the empty string;
//! - `task.create`, `task.update-status`, `task.update-description`,
//!   `task.fork` (and its alias `task.spawn`), `task.link`, `task.sever`,
//!   `task.set-metadata`, `observation`, `handoff.create` map to ours with
//!   underscored keys; an absent fork edge is `phase-of`;
//! - edge aliases: `blocks` / `blocked-by` become `depends-on`, any other
//!   unknown lateral name `related`, the original name kept in `data.tag`;
//! - `task.reclassify` becomes a `task.sever` of the old type and a
//!   `task.link` of the new one, whose event id is the line's id followed by
//!   [`RECLASSIFY_SUFFIX`] (so it sorts after the sever); a line whose own id
//!   ends in that suffix is skipped, so the generated id never collides with
//!   a real one;
//! - claims, releases and view definitions (`task.claim`, `task.release`,
//!   `view.define`, `view.undefine`) and any line about the reserved subject
//!   `@cairn` are skipped: the original has none, and an import must not
//!   take a task or change a view (issue 19);
//! - any other type is kept verbatim and folds to nothing.
//!
//! A line in cairn's own form (its content key matches its content: `cairn
//! export --logs` wrote it, or it comes from a `.cairn/tasks/` folder) is
//! taken as it is, under the same exclusions (no claims, releases, views,
//! splits, `@cairn`): `cairn import DIR` restores what `cairn export
//! --logs DIR` wrote (its `DIR/tasks/`): tasks, names, notes, links.
//!
//! Every line's event id is kept; our content key is recomputed. Lines that
//! are not JSON, lack a field, or fail the write boundary's validation are
//! skipped and counted, and so is a line whose event id is already taken by
//! a different event (in the store or earlier in the import). All events go
//! in one transaction; an event already present (same content key, or the
//! same id with the same content) is not appended again, so a second import
//! changes nothing.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use rusqlite::OptionalExtension;
use serde_json::{Map, Value};

use crate::store::error::StoreError;
use crate::store::event::{LoggedEvent, NewEvent, RESERVED_CAIRN, types};
use crate::store::handle::Store;
use crate::store::slug::strip_depot;

/// Seconds between 1900-01-01 (universal time) and 1970-01-01 (Unix).
pub const UNIVERSAL_TO_UNIX: i64 = 2_208_988_800;

/// The suffix of the event id of the `task.link` a `task.reclassify` line
/// becomes (the line's own id is kept by its `task.sever`). A real line
/// whose id ends in it is skipped.
pub const RECLASSIFY_SUFFIX: &str = "~reclassify";

/// The event types an import never brings in: a claim or release would
/// take or free a task, a view definition would change what a query reads,
/// a split would move another task's notes (hostile run M2; splits are
/// written by reconcile only).
pub const NOT_IMPORTED: [&str; 5] = [
    types::CLAIM,
    types::RELEASE,
    types::VIEW_DEFINE,
    types::VIEW_UNDEFINE,
    types::SPLIT,
];

/// What an import did: `Imported N events for M tasks; K lines skipped.`
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportSummary {
    /// Events newly appended.
    pub events: usize,
    /// Distinct subjects of those events.
    pub tasks: usize,
    /// Lines skipped (malformed or refused).
    pub skipped: usize,
}

impl ImportSummary {
    /// The summary line.
    pub fn line(&self) -> String {
        format!(
            "Imported {} events for {} tasks; {} lines skipped.",
            self.events, self.tasks, self.skipped
        )
    }
}

/// The original's `tasks/` folder under `path`: `PATH/tasks` when PATH is
/// the `.kli/` directory itself, else `PATH/.kli/tasks`.
fn tasks_dir(path: &Path) -> Option<PathBuf> {
    [path.join("tasks"), path.join(".kli").join("tasks")]
        .into_iter()
        .find(|p| p.is_dir())
}

/// Maps an original edge name to ours: `(edge_type, tag)`.
fn map_edge(raw: Option<&str>, default: &str) -> (String, Option<String>) {
    let raw = raw.map(str::to_ascii_lowercase);
    match raw.as_deref() {
        None => (default.to_string(), None),
        Some(e @ ("phase-of" | "forked-from" | "depends-on" | "related")) => (e.to_string(), None),
        Some(e @ ("blocks" | "blocked-by")) => ("depends-on".to_string(), Some(e.to_string())),
        Some(e) => ("related".to_string(), Some(e.to_string())),
    }
}

/// One original line mapped to our events (one, or two for
/// `task.reclassify`). Errors: what is wrong with the line.
fn map_line(text: &str) -> Result<Vec<LoggedEvent>, String> {
    let v: Value = serde_json::from_str(text).map_err(|_| "not JSON".to_string())?;
    let obj = v.as_object().ok_or("not a JSON object")?;
    let s = |k: &str| obj.get(k).and_then(Value::as_str);
    let event_id = s("event_id").ok_or("no event_id")?.to_string();
    let task_id = strip_depot(s("task_id").ok_or("no task_id")?).to_string();
    let event_type = s("type").ok_or("no type")?.to_string();
    if event_id.ends_with(RECLASSIFY_SUFFIX) {
        return Err(format!(
            "event id {event_id:?} ends in {RECLASSIFY_SUFFIX}, which import keeps for the link a task.reclassify becomes"
        ));
    }
    if NOT_IMPORTED.contains(&event_type.as_str()) {
        return Err(format!(
            "{event_type} is not imported (an import brings no claims, no view definitions and no splits)"
        ));
    }
    if task_id == RESERVED_CAIRN {
        return Err(format!(
            "the subject {RESERVED_CAIRN} is not imported (it holds cairn's own views)"
        ));
    }
    // cairn's own line (`cairn export --logs`, a `.cairn/tasks/` folder):
    // its content key checks out, so it is taken as it is.
    let raw_ts = obj.get("ts").and_then(Value::as_i64).ok_or("no ts")?;
    match super::line::LogLine::parse(text) {
        Ok(own) => {
            let l = own.line;
            return Ok(vec![LoggedEvent {
                seq: 0,
                event_id: l.event_id,
                task_id: l.task_id,
                event_type: l.event_type,
                ts: l.ts,
                session_id: l.session_id,
                prev_session_id: l.prev_session_id,
                data: own.data,
            }]);
        }
        // A line in cairn's form (a 64-hex key, Unix seconds: the
        // original writes universal time) whose key does not check out
        // was changed after it was written: not mapped as the original's.
        Err(why)
            if why == "event_key does not match the content"
                && raw_ts < UNIVERSAL_TO_UNIX
                && s("event_key").is_some_and(|k| {
                    k.len() == 64 && k.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
                }) =>
        {
            return Err(format!(
                "a cairn log line whose {why} (changed after it was written?)"
            ));
        }
        Err(_) => {}
    }
    let ts = if raw_ts >= UNIVERSAL_TO_UNIX {
        raw_ts - UNIVERSAL_TO_UNIX
    } else {
        raw_ts
    };
    let session_id = s("session_id").unwrap_or("").to_string();
    let empty = Map::new();
    let data = match obj.get("data") {
        Some(Value::Object(m)) => m,
        None | Some(Value::Null) => &empty,
        Some(_) => return Err("data is not an object".to_string()),
    };
    let d = |k: &str| data.get(k).and_then(Value::as_str);
    let slug_of = |k: &str| d(k).map(|v| Value::from(strip_depot(v)));
    let ev = |ty: &str, id: String, data: Value| LoggedEvent {
        seq: 0,
        event_id: id,
        task_id: task_id.clone(),
        event_type: ty.to_string(),
        ts,
        session_id: session_id.clone(),
        prev_session_id: None,
        data,
    };
    let edge_data = |key: &str, other: Option<Value>, edge: (String, Option<String>)| {
        let mut m = Map::new();
        m.insert(key.to_string(), other.unwrap_or(Value::Null));
        m.insert("edge_type".to_string(), Value::from(edge.0));
        if let Some(tag) = edge.1 {
            m.insert("tag".to_string(), Value::from(tag));
        }
        Value::Object(m)
    };
    let one = |ty: &str, data: Value| Ok(vec![ev(ty, event_id.clone(), data)]);
    match event_type.as_str() {
        "task.create" => one(
            "task.create",
            serde_json::json!({"description": data.get("description").cloned().unwrap_or(Value::Null),
                               "project_id": data.get("project-id").or_else(|| data.get("project_id")).cloned().unwrap_or(Value::Null)}),
        ),
        "task.update-status"
        | "task.update-description"
        | "task.set-metadata"
        | "observation"
        | "handoff.create" => one(&event_type, Value::Object(data.clone())),
        "task.fork" | "task.spawn" => one(
            "task.fork",
            edge_data(
                "child_id",
                slug_of("child-id").or_else(|| slug_of("child_id")),
                map_edge(d("edge-type").or_else(|| d("edge_type")), "phase-of"),
            ),
        ),
        "task.link" | "task.sever" => one(
            &event_type,
            edge_data(
                "target_id",
                slug_of("target-id").or_else(|| slug_of("target_id")),
                map_edge(d("edge-type").or_else(|| d("edge_type")), "related"),
            ),
        ),
        "task.reclassify" => {
            let target = slug_of("target-id").or_else(|| slug_of("target_id"));
            Ok(vec![
                ev(
                    "task.sever",
                    event_id.clone(),
                    edge_data(
                        "target_id",
                        target.clone(),
                        map_edge(d("old-type"), "related"),
                    ),
                ),
                ev(
                    "task.link",
                    format!("{event_id}{RECLASSIFY_SUFFIX}"),
                    edge_data("target_id", target, map_edge(d("new-type"), "related")),
                ),
            ])
        }
        _ => one(&event_type, Value::Object(data.clone())),
    }
}

impl Store {
    /// Imports the original tool's store at `path` (its `.kli/` directory,
    /// or a project holding one) in ONE transaction, as the module docs
    /// describe. Errors: [`StoreError::Io`] when no `tasks/` folder is found
    /// or a file is unreadable; [`StoreError::Sqlite`].
    pub fn import_kli(&self, path: &Path) -> Result<ImportSummary, StoreError> {
        let tasks = tasks_dir(path).ok_or_else(|| {
            StoreError::io(
                path,
                std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "no tasks/ folder here (expected the original tool's .kli/ directory)",
                ),
            )
        })?;
        let mut folders: Vec<PathBuf> = std::fs::read_dir(&tasks)
            .map_err(|e| StoreError::io(&tasks, e))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        folders.sort();
        let mut summary = ImportSummary::default();
        let mut events: Vec<LoggedEvent> = Vec::new();
        // Each event id taken so far in this import, with its content key.
        let mut taken: BTreeMap<String, String> = BTreeMap::new();
        for folder in folders {
            let file = folder.join(super::LOG_FILE);
            let text = match super::safe::read_log_file(&file) {
                Ok(super::safe::LogRead::Text(t)) => t,
                Ok(super::safe::LogRead::Missing) => continue,
                Ok(super::safe::LogRead::Refused(reason)) => {
                    eprintln!("cairn import: skipped log file: {reason}");
                    summary.skipped += 1;
                    continue;
                }
                Err(e) => return Err(StoreError::io(&file, e)),
            };
            for (i, raw) in text.lines().enumerate() {
                if raw.trim().is_empty() {
                    continue;
                }
                let mapped = map_line(raw).and_then(|evs| {
                    let mut keys = Vec::with_capacity(evs.len());
                    for e in &evs {
                        let new = NewEvent {
                            task_id: e.task_id.clone(),
                            event_type: e.event_type.clone(),
                            ts: e.ts,
                            session_id: e.session_id.clone(),
                            data: e.data.clone(),
                        };
                        crate::store::write::validate(&new).map_err(|e| e.to_string())?;
                        let key = new.event_key();
                        self.check_id_free(&taken, &e.event_id, &key)?;
                        keys.push(key);
                    }
                    Ok((evs, keys))
                });
                match mapped {
                    Ok((evs, keys)) => {
                        for (e, key) in evs.iter().zip(keys) {
                            taken.entry(e.event_id.clone()).or_insert(key);
                        }
                        events.extend(evs);
                    }
                    Err(reason) => {
                        eprintln!(
                            "cairn import: skipped {}:{}: {reason}",
                            file.display(),
                            i + 1
                        );
                        summary.skipped += 1;
                    }
                }
            }
        }
        let report = self.import(&events)?;
        let mut subjects = BTreeSet::new();
        if !report.seqs.is_empty() {
            let mut stmt = self
                .conn
                .prepare_cached("SELECT task_id FROM events WHERE seq = ?1")?;
            for seq in &report.seqs {
                subjects.insert(stmt.query_row([seq], |r| r.get::<_, String>(0))?);
            }
        }
        summary.events = report.seqs.len();
        summary.tasks = subjects.len();
        Ok(summary)
    }
}

impl Store {
    /// `Err` (the reason a line is skipped) when `event_id` is already taken
    /// by an event whose content key is not `key`: earlier in this import
    /// (`taken`) or in the store. The same id with the same content is a
    /// repeat, appended once. A failing look-up is not a collision (the
    /// write boundary's own unique index still keeps the first event).
    fn check_id_free(
        &self,
        taken: &BTreeMap<String, String>,
        event_id: &str,
        key: &str,
    ) -> Result<(), String> {
        let held = match taken.get(event_id) {
            Some(k) => Some(k.clone()),
            None => self
                .conn
                .prepare_cached("SELECT event_key FROM events WHERE event_id = ?1")
                .and_then(|mut st| {
                    st.query_row([event_id], |r| r.get::<_, String>(0))
                        .optional()
                })
                .unwrap_or(None),
        };
        match held {
            Some(k) if k != key => Err(format!(
                "event id {event_id:?} is already taken by a different event"
            )),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edges_and_times_map() {
        assert_eq!(
            map_edge(Some("Blocks"), "related"),
            ("depends-on".into(), Some("blocks".into()))
        );
        assert_eq!(map_edge(None, "phase-of"), ("phase-of".into(), None));
        assert_eq!(
            map_edge(Some("mentions"), "related"),
            ("related".into(), Some("mentions".into()))
        );
        let evs = map_line(
            r#"{"data":{"child-id":"d:kid","edge-type":"blocks"},"event_id":"E1","event_key":"k","prev_session_id":null,"session_id":null,"task_id":"d:mom","ts":3990000100,"type":"task.spawn"}"#,
        )
        .unwrap();
        assert_eq!(evs.len(), 1);
        assert_eq!(evs[0].task_id, "mom");
        assert_eq!(evs[0].event_type, "task.fork");
        assert_eq!(evs[0].ts, 3_990_000_100 - UNIVERSAL_TO_UNIX);
        assert_eq!(
            evs[0].data,
            serde_json::json!({"child_id": "kid", "edge_type": "depends-on", "tag": "blocks"})
        );
    }
}
