//! The reducer: one event → the projection (spec/store.md "Event types and
//! what they fold into").
//!
//! Folding is order-independent: every column is a last-writer-wins register
//! compared by the stamp `(ts, event_id)`, a min/max, or a set union, so the
//! live fold (arrival order) and `rebuild` (ordered by `(ts, event_id)`)
//! produce the same projection. The rules:
//!
//! - Any known event naming a task (subject, `child_id`, `target_id`) ensures
//!   its `tasks` row. `created_ts` is the MIN ts and `updated_ts` the MAX ts
//!   of the known events naming the task. A row first made by a reference
//!   has status `active` and no `status_ts` until a status event folds.
//! - `status`, `description`, `project_id`, metadata values and views are
//!   LWW registers. `task.create` writes `status=active` and, when not null,
//!   `description` and `project_id`.
//! - The parent pointer: the newest structural set (fork/link with
//!   `phase-of`/`forked-from`) names the parent, unless a structural sever of
//!   the same pair is newer than that set — then the pointer is empty. This
//!   equals folding sets and conditional severs one by one in stamp order.
//! - A lateral edge is present when its newest link/fork is newer than its
//!   newest sever; `edges.created_ts` is the ts of that newest link/fork.
//! - Observations and handoffs are set-unions keyed by event id.
//! - A task's searchable texts (`task_texts`, `store::texts`): the name of
//!   the earliest creation that kept one, and the description again as an
//!   LWW register, with their identifier parts.
//! - The claim (`task.claim`/`task.release`) is one LWW register per task:
//!   owner and until, or empty; a status event to completed or abandoned
//!   also writes it empty (at its own stamp).
//! - Self-edges are never stored; unknown types fold to nothing.

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;

use super::error::StoreError;
use super::event::{nfc, types};
use super::model::{EdgeClass, EdgeType, Status};
use super::texts::{Field, Stamped, TaskTexts};

/// What a known event does to the projection.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Action {
    Create {
        description: Option<String>,
        project_id: Option<String>,
        /// The typed name (`store::texts::create_name`), searchable.
        name: Option<String>,
    },
    Status(Status),
    Description(String),
    /// Fork (subject → child) and link (subject → target) share this shape:
    /// `other` is the child/target; `fork` says which side a structural edge
    /// gives a parent (fork: `other`'s parent is the subject; link: the
    /// subject's parent is `other`).
    Connect {
        other: String,
        edge: EdgeType,
        fork: bool,
    },
    Sever {
        other: String,
        edge: EdgeType,
    },
    Metadata {
        key: String,
        value: String,
    },
    Observation(String),
    Handoff {
        summary: String,
        path: String,
    },
    ViewDefine {
        name: String,
        query: String,
    },
    ViewUndefine {
        name: String,
    },
    /// `task.claim`: the claim register becomes `owner` until `until`.
    Claim {
        owner: String,
        until: i64,
    },
    /// `task.release`: the claim register becomes empty.
    Release,
    /// An event type this build does not know: kept in the log, folds to nothing.
    Unknown,
}

fn text_field(data: &Value, key: &str) -> Result<String, String> {
    match data.get(key) {
        Some(Value::String(s)) => Ok(s.clone()),
        _ => Err(format!("data.{key} must be a string")),
    }
}

/// A string field that must not be blank (task ids, metadata keys, view names).
fn name_field(data: &Value, key: &str) -> Result<String, String> {
    let s = text_field(data, key)?;
    if s.trim().is_empty() {
        Err(format!("data.{key} must not be blank"))
    } else {
        Ok(s)
    }
}

/// The longest claim owner (an agent name), in characters.
pub(crate) const MAX_OWNER_CHARS: usize = 256;

/// A claim's `owner`: not blank, no control characters, at most
/// [`MAX_OWNER_CHARS`] characters.
fn owner_field(data: &Value) -> Result<String, String> {
    let s = name_field(data, "owner")?;
    if s.chars().any(char::is_control) {
        return Err("data.owner must not contain control characters".to_string());
    }
    if s.chars().count() > MAX_OWNER_CHARS {
        return Err(format!(
            "data.owner must be at most {MAX_OWNER_CHARS} characters"
        ));
    }
    Ok(s)
}

fn opt_text_field(data: &Value, key: &str) -> Result<Option<String>, String> {
    match data.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("data.{key} must be a string or null")),
    }
}

fn edge_field(data: &Value) -> Result<EdgeType, String> {
    let name = text_field(data, "edge_type")?;
    EdgeType::parse(&name).ok_or_else(|| {
        "data.edge_type must be one of phase-of, forked-from, depends-on, related".to_string()
    })
}

/// A metadata key as the projection keeps it: Unicode lower case (Rust
/// `to_lowercase`), the same fold TQ applies to a field keyword, so
/// `task_set_metadata(key="Priority")`, `(:set! :PRIORITY ...)`, `(fields)`
/// and `:priority` all name one key (docs/tq.md "Metadata keys").
pub fn metadata_key(key: &str) -> String {
    key.to_lowercase()
}

/// Reads a known event's data. `Err(reason)` when a known type's data is
/// malformed; `Ok(Action::Unknown)` for unknown types.
pub(crate) fn parse_action(event_type: &str, data: &Value) -> Result<Action, String> {
    Ok(match event_type {
        types::TASK_CREATE => Action::Create {
            description: opt_text_field(data, "description")?,
            project_id: opt_text_field(data, "project_id")?,
            name: super::texts::create_name(data),
        },
        types::UPDATE_STATUS => {
            let s = text_field(data, "status")?;
            Action::Status(Status::parse(&s).ok_or_else(|| {
                "data.status must be one of open, active, completed, abandoned, blocked".to_string()
            })?)
        }
        types::UPDATE_DESCRIPTION => Action::Description(text_field(data, "description")?),
        types::FORK => Action::Connect {
            other: name_field(data, "child_id")?,
            edge: edge_field(data)?,
            fork: true,
        },
        types::LINK => Action::Connect {
            other: name_field(data, "target_id")?,
            edge: edge_field(data)?,
            fork: false,
        },
        types::SEVER => Action::Sever {
            other: name_field(data, "target_id")?,
            edge: edge_field(data)?,
        },
        // Metadata keys are case-insensitive: folded to lower case here,
        // the one place both engines read an event (docs/tq.md "Metadata
        // keys", issue 26), so `Priority` and `priority` are one key.
        types::SET_METADATA => Action::Metadata {
            key: metadata_key(&name_field(data, "key")?),
            value: text_field(data, "value")?,
        },
        types::OBSERVATION => Action::Observation(text_field(data, "text")?),
        types::HANDOFF_CREATE => Action::Handoff {
            summary: text_field(data, "summary")?,
            path: text_field(data, "path")?,
        },
        types::VIEW_DEFINE => Action::ViewDefine {
            name: name_field(data, "name")?,
            query: text_field(data, "query")?,
        },
        types::VIEW_UNDEFINE => Action::ViewUndefine {
            name: name_field(data, "name")?,
        },
        types::CLAIM => Action::Claim {
            owner: owner_field(data)?,
            until: data
                .get("until")
                .and_then(Value::as_i64)
                .filter(|u| (0..=super::event::MAX_TS).contains(u))
                .ok_or_else(|| {
                    format!(
                        "data.until must be an integer in 0..={}",
                        super::event::MAX_TS
                    )
                })?,
        },
        types::RELEASE => {
            owner_field(data)?;
            Action::Release
        }
        types::SPLIT => {
            super::split::parse_split(data)?;
            Action::Unknown
        }
        _ => Action::Unknown,
    })
}

/// The parts of a logged event the reducer reads.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FoldInput<'a> {
    pub event_id: &'a str,
    pub task_id: &'a str,
    pub event_type: &'a str,
    pub ts: i64,
    pub data: &'a Value,
}

/// Folds one event into the projection on `conn` (inside the caller's
/// transaction). A malformed known event folds to nothing, like an unknown one.
pub(crate) fn fold(conn: &Connection, ev: &FoldInput<'_>) -> Result<(), StoreError> {
    let action = match parse_action(ev.event_type, ev.data) {
        Ok(a) => a,
        Err(_) => return Ok(()),
    };
    if action == Action::Unknown {
        return Ok(());
    }
    let st = Stamp {
        ts: ev.ts,
        eid: ev.event_id,
    };
    let subject = ensure_task(conn, ev.task_id, ev.ts)?;
    match action {
        Action::Unknown => {}
        Action::Create {
            description,
            project_id,
            name,
        } => {
            set_status(conn, subject, Status::Active, st)?;
            if let Some(n) = name {
                set_text(conn, subject, Field::Name, &n, st)?;
            }
            if let Some(d) = description {
                set_description(conn, subject, &d, st)?;
            }
            if let Some(p) = project_id {
                set_project(conn, subject, &p, st)?;
            }
        }
        Action::Status(s) => {
            set_status(conn, subject, s, st)?;
            // Completing or abandoning a task ends its claim (spec/tq.md
            // §9): an empty write to the claim register at this stamp, so a
            // reopened task does not get the old claim back.
            if matches!(s, Status::Completed | Status::Abandoned) {
                set_claim(conn, subject, None, st)?;
            }
        }
        Action::Description(d) => set_description(conn, subject, &d, st)?,
        Action::Connect { other, edge, fork } => {
            let other_id = ensure_task(conn, &other, ev.ts)?;
            if other_id != subject {
                match edge.class() {
                    EdgeClass::Structural => {
                        let (child, parent) = if fork {
                            (other_id, subject)
                        } else {
                            (subject, other_id)
                        };
                        set_parent(conn, child, parent, st)?;
                    }
                    EdgeClass::Lateral => set_edge(conn, subject, other_id, edge, true, st)?,
                }
            }
        }
        Action::Sever { other, edge } => {
            let other_id = ensure_task(conn, &other, ev.ts)?;
            if other_id != subject {
                match edge.class() {
                    EdgeClass::Structural => sever_parent(conn, subject, other_id, st)?,
                    EdgeClass::Lateral => set_edge(conn, subject, other_id, edge, false, st)?,
                }
            }
        }
        Action::Metadata { key, value } => {
            conn.prepare_cached(
                "INSERT INTO task_metadata(task_id, key, value, ts, eid) VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT(task_id, key) DO UPDATE SET value = excluded.value, ts = excluded.ts, eid = excluded.eid
                 WHERE excluded.ts > task_metadata.ts
                    OR (excluded.ts = task_metadata.ts AND excluded.eid > task_metadata.eid)",
            )?
            .execute(params![subject, key, value, st.ts, st.eid])?;
        }
        Action::Observation(text) => add_observation(conn, subject, &nfc(&text), st)?,
        Action::Handoff { summary, path } => {
            conn.prepare_cached(
                "INSERT OR IGNORE INTO handoffs(task_id, event_id, path, summary, ts) VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(params![subject, st.eid, path, summary, st.ts])?;
            let text = format!("Handoff: {} → {}", nfc(&summary), path);
            add_observation(conn, subject, &text, st)?;
        }
        Action::ViewDefine { name, query } => set_view(conn, &name, Some(&query), st)?,
        Action::ViewUndefine { name } => set_view(conn, &name, None, st)?,
        Action::Claim { owner, until } => set_claim(conn, subject, Some((&owner, until)), st)?,
        Action::Release => set_claim(conn, subject, None, st)?,
    }
    Ok(())
}

/// The claim register of `task` (spec/tq.md §9 "Events"): `Some((owner,
/// until))` for a claim, `None` for a release, kept when `st` is newer than
/// the register's stamp. Liveness (until in the future, task not dormant)
/// is decided when the register is read, never here.
fn set_claim(
    conn: &Connection,
    task: i64,
    claim: Option<(&str, i64)>,
    st: Stamp<'_>,
) -> Result<(), StoreError> {
    let (owner, until) = match claim {
        Some((o, u)) => (Some(o), Some(u)),
        None => (None, None),
    };
    conn.prepare_cached(
        "UPDATE tasks SET claim_owner = ?2, claim_until = ?3, claim_ts = ?4, claim_eid = ?5
         WHERE id = ?1 AND (claim_ts IS NULL OR claim_ts < ?4 OR (claim_ts = ?4 AND claim_eid < ?5))",
    )?
    .execute(params![task, owner, until, st.ts, st.eid])?;
    Ok(())
}

/// An LWW stamp: `(ts, event_id)`, compared lexicographically.
#[derive(Debug, Clone, Copy)]
struct Stamp<'a> {
    ts: i64,
    eid: &'a str,
}

/// Inserts the task row if missing; widens `created_ts`/`updated_ts` to `ts`.
/// Returns the row id.
fn ensure_task(conn: &Connection, slug: &str, ts: i64) -> Result<i64, StoreError> {
    let id = conn
        .prepare_cached(
            "INSERT INTO tasks(slug, created_ts, updated_ts) VALUES (?1, ?2, ?2)
             ON CONFLICT(slug) DO UPDATE SET
                 created_ts = min(tasks.created_ts, excluded.created_ts),
                 updated_ts = max(tasks.updated_ts, excluded.updated_ts)
             RETURNING id",
        )?
        .query_row(params![slug, ts], |r| r.get(0))?;
    Ok(id)
}

fn set_status(
    conn: &Connection,
    task: i64,
    status: Status,
    st: Stamp<'_>,
) -> Result<(), StoreError> {
    conn.prepare_cached(
        "UPDATE tasks SET status = ?2, status_ts = ?3, status_eid = ?4
         WHERE id = ?1 AND (status_ts IS NULL OR status_ts < ?3 OR (status_ts = ?3 AND status_eid < ?4))",
    )?
    .execute(params![task, status.as_str(), st.ts, st.eid])?;
    Ok(())
}

fn set_description(
    conn: &Connection,
    task: i64,
    text: &str,
    st: Stamp<'_>,
) -> Result<(), StoreError> {
    conn.prepare_cached(
        "UPDATE tasks SET description = ?2, description_ts = ?3, description_eid = ?4
         WHERE id = ?1 AND (description_ts IS NULL OR description_ts < ?3
                            OR (description_ts = ?3 AND description_eid < ?4))",
    )?
    .execute(params![task, text, st.ts, st.eid])?;
    set_text(conn, task, Field::Description, text, st)
}

/// Folds `text` into `task`'s `field` register in `task_texts`
/// (`store::texts`: first name, last description), refreshing the
/// identifier parts; the FTS triggers index the row.
fn set_text(
    conn: &Connection,
    task: i64,
    field: Field,
    text: &str,
    st: Stamp<'_>,
) -> Result<(), StoreError> {
    let mut cur: TaskTexts = conn
        .prepare_cached(
            "SELECT name, name_ts, name_eid, description, description_ts, description_eid
             FROM task_texts WHERE task_id = ?1",
        )?
        .query_row(params![task], |r| {
            let reg = |i: usize| -> rusqlite::Result<Option<Stamped>> {
                Ok(match (r.get(i)?, r.get(i + 1)?, r.get(i + 2)?) {
                    (Some(text), Some(ts), Some(eid)) => Some(Stamped { text, ts, eid }),
                    _ => None,
                })
            };
            Ok(TaskTexts {
                name: reg(0)?,
                description: reg(3)?,
            })
        })
        .optional()?
        .unwrap_or_default();
    if !cur.apply(field, text, st.ts, st.eid) {
        return Ok(());
    }
    let parts = cur.parts();
    let (n, d) = (cur.name.as_ref(), cur.description.as_ref());
    conn.prepare_cached(
        "INSERT INTO task_texts(task_id, name, name_ts, name_eid, description, description_ts,
                                description_eid, parts)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
         ON CONFLICT(task_id) DO UPDATE SET name = excluded.name, name_ts = excluded.name_ts,
             name_eid = excluded.name_eid, description = excluded.description,
             description_ts = excluded.description_ts, description_eid = excluded.description_eid,
             parts = excluded.parts",
    )?
    .execute(params![
        task,
        n.map(|s| &s.text),
        n.map(|s| s.ts),
        n.map(|s| &s.eid),
        d.map(|s| &s.text),
        d.map(|s| s.ts),
        d.map(|s| &s.eid),
        parts
    ])?;
    Ok(())
}

fn ensure_fold_row(conn: &Connection, task: i64) -> Result<(), StoreError> {
    conn.prepare_cached("INSERT OR IGNORE INTO task_fold(task_id) VALUES (?1)")?
        .execute(params![task])?;
    Ok(())
}

fn set_project(
    conn: &Connection,
    task: i64,
    project: &str,
    st: Stamp<'_>,
) -> Result<(), StoreError> {
    ensure_fold_row(conn, task)?;
    let won = conn
        .prepare_cached(
            "UPDATE task_fold SET project_ts = ?2, project_eid = ?3
             WHERE task_id = ?1 AND (project_ts IS NULL OR project_ts < ?2
                                     OR (project_ts = ?2 AND project_eid < ?3))",
        )?
        .execute(params![task, st.ts, st.eid])?;
    if won > 0 {
        conn.prepare_cached("UPDATE tasks SET project_id = ?2 WHERE id = ?1")?
            .execute(params![task, project])?;
    }
    Ok(())
}

/// True when a structural sever of the pair {a, b} is newer than `st`.
fn severed_after(conn: &Connection, a: i64, b: i64, st: Stamp<'_>) -> Result<bool, StoreError> {
    let (lo, hi) = if a < b { (a, b) } else { (b, a) };
    Ok(conn
        .prepare_cached(
            "SELECT 1 FROM sever_state WHERE lo_id = ?1 AND hi_id = ?2
             AND (ts > ?3 OR (ts = ?3 AND eid > ?4))",
        )?
        .query_row(params![lo, hi, st.ts, st.eid], |_| Ok(()))
        .optional()?
        .is_some())
}

/// A structural set: `child`'s parent is `parent` as of `st`.
fn set_parent(conn: &Connection, child: i64, parent: i64, st: Stamp<'_>) -> Result<(), StoreError> {
    ensure_fold_row(conn, child)?;
    let won = conn
        .prepare_cached(
            "UPDATE tasks SET parent_ts = ?2, parent_eid = ?3
             WHERE id = ?1 AND (parent_ts IS NULL OR parent_ts < ?2 OR (parent_ts = ?2 AND parent_eid < ?3))",
        )?
        .execute(params![child, st.ts, st.eid])?;
    if won == 0 {
        return Ok(());
    }
    let visible = if severed_after(conn, child, parent, st)? {
        None
    } else {
        Some(parent)
    };
    conn.prepare_cached("UPDATE task_fold SET parent_target_id = ?2 WHERE task_id = ?1")?
        .execute(params![child, parent])?;
    conn.prepare_cached("UPDATE tasks SET parent_task_id = ?2 WHERE id = ?1")?
        .execute(params![child, visible])?;
    Ok(())
}

/// A structural sever of the pair {a, b} as of `st`: records it, then clears
/// the parent pointer of whichever side's newest set names the other and is
/// older than `st`.
fn sever_parent(conn: &Connection, a: i64, b: i64, st: Stamp<'_>) -> Result<(), StoreError> {
    let (lo, hi) = if a < b { (a, b) } else { (b, a) };
    conn.prepare_cached(
        "INSERT INTO sever_state(lo_id, hi_id, ts, eid) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT(lo_id, hi_id) DO UPDATE SET ts = excluded.ts, eid = excluded.eid
         WHERE excluded.ts > sever_state.ts OR (excluded.ts = sever_state.ts AND excluded.eid > sever_state.eid)",
    )?
    .execute(params![lo, hi, st.ts, st.eid])?;
    for (side, other) in [(a, b), (b, a)] {
        conn.prepare_cached(
            "UPDATE tasks SET parent_task_id = NULL
             WHERE id = ?1
               AND EXISTS (SELECT 1 FROM task_fold f WHERE f.task_id = ?1 AND f.parent_target_id = ?2)
               AND (parent_ts < ?3 OR (parent_ts = ?3 AND parent_eid < ?4))",
        )?
        .execute(params![side, other, st.ts, st.eid])?;
    }
    Ok(())
}

/// A lateral edge src → dst of `edge` becomes present (link/fork) or absent
/// (sever) as of `st`, if `st` is its newest stamp.
fn set_edge(
    conn: &Connection,
    src: i64,
    dst: i64,
    edge: EdgeType,
    present: bool,
    st: Stamp<'_>,
) -> Result<(), StoreError> {
    let won = conn
        .prepare_cached(
            "INSERT INTO edge_state(src_id, dst_id, type, tag, present, ts, eid) VALUES (?1, ?2, ?3, '', ?4, ?5, ?6)
             ON CONFLICT(src_id, dst_id, type, tag) DO UPDATE SET present = excluded.present, ts = excluded.ts, eid = excluded.eid
             WHERE excluded.ts > edge_state.ts OR (excluded.ts = edge_state.ts AND excluded.eid > edge_state.eid)",
        )?
        .execute(params![src, dst, edge.as_str(), present, st.ts, st.eid])?;
    if won == 0 {
        return Ok(());
    }
    if present {
        conn.prepare_cached(
            "INSERT INTO edges(src_id, dst_id, type, tag, created_ts) VALUES (?1, ?2, ?3, '', ?4)
             ON CONFLICT(src_id, dst_id, type, tag) DO UPDATE SET created_ts = excluded.created_ts",
        )?
        .execute(params![src, dst, edge.as_str(), st.ts])?;
    } else {
        conn.prepare_cached(
            "DELETE FROM edges WHERE src_id = ?1 AND dst_id = ?2 AND type = ?3 AND tag = ''",
        )?
        .execute(params![src, dst, edge.as_str()])?;
    }
    Ok(())
}

fn add_observation(
    conn: &Connection,
    task: i64,
    text: &str,
    st: Stamp<'_>,
) -> Result<(), StoreError> {
    conn.prepare_cached(
        "INSERT OR IGNORE INTO observations(event_id, task_id, text, ts, parts) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![
        st.eid,
        task,
        text,
        st.ts,
        super::pg::search::parts_text(text)
    ])?;
    Ok(())
}

/// A user view becomes defined with `query` (Some) or undefined (None) as of
/// `st`, if `st` is its newest stamp.
fn set_view(
    conn: &Connection,
    name: &str,
    query: Option<&str>,
    st: Stamp<'_>,
) -> Result<(), StoreError> {
    let won = conn
        .prepare_cached(
            "INSERT INTO view_state(name, query, present, ts, eid) VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT(name) DO UPDATE SET query = excluded.query, present = excluded.present,
                                             ts = excluded.ts, eid = excluded.eid
             WHERE excluded.ts > view_state.ts OR (excluded.ts = view_state.ts AND excluded.eid > view_state.eid)",
        )?
        .execute(params![name, query, query.is_some(), st.ts, st.eid])?;
    if won == 0 {
        return Ok(());
    }
    match query {
        Some(q) => {
            conn.prepare_cached(
                "INSERT INTO named_views(name, query, ts, eid) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT(name) DO UPDATE SET query = excluded.query, ts = excluded.ts, eid = excluded.eid",
            )?
            .execute(params![name, q, st.ts, st.eid])?;
        }
        None => {
            conn.prepare_cached("DELETE FROM named_views WHERE name = ?1")?
                .execute(params![name])?;
        }
    }
    Ok(())
}
