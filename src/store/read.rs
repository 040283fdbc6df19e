//! Read helpers the tools need (spec/mcp.md "Decisions beyond the seed"):
//! the computed state of one task (`task_get`, `task_bootstrap`, the handoff
//! skeleton), pages of a task's event stream (`timeline`), and recent slugs
//! (the `No task SLUG. Recent: ...` hint). Every value is a bound parameter;
//! each function runs a fixed number of statements, never one per row.

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;

use super::slug::strip_depot;

use crate::store::StoreError;

/// The computed state of one task, as `task_get` renders it.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskState {
    /// The bare slug.
    pub slug: String,
    /// `open`, `active`, `completed`, `abandoned` or `blocked`.
    pub status: String,
    /// The description, when one was given.
    pub description: Option<String>,
    /// The name typed at creation (the first `task.create` event's `name`),
    /// when the event kept one (spec/store.md "Slugs and names").
    pub name: Option<String>,
    /// The parent's slug (phase-of / forked-from), if any.
    pub parent: Option<String>,
    /// The children (tasks whose parent is this one): (slug, status), by slug.
    pub children: Vec<(String, String)>,
    /// Outgoing lateral edges: (edge type, destination slug), by type then slug.
    pub edges: Vec<(String, String)>,
    /// Metadata pairs (key, value), by key.
    pub metadata: Vec<(String, String)>,
    /// The newest observation texts, newest first (at most the `recent` asked for).
    pub recent: Vec<String>,
    /// Who wrote each of `recent` and when, in the same order (fenced
    /// text shows them: spec/tq.md §10).
    pub recent_by: Vec<Written>,
    /// How many observations the task has in all.
    pub obs_count: i64,
    /// The newest handoffs, newest first (at most the `handoffs` asked for).
    pub handoffs: Vec<HandoffRow>,
    /// The claim register as folded: (owner, until in Unix seconds), `None`
    /// after a release or before any claim. Whether it is live (until in the
    /// future, task not dormant) is for the reader to judge by its clock:
    /// [`TaskState::live_claim`] (spec/tq.md §9).
    pub claim: Option<(String, i64)>,
}

impl TaskState {
    /// The claim when it is live at `now` (Unix seconds): `until > now` and
    /// the task neither completed nor abandoned (spec/tq.md §9).
    pub fn live_claim(&self, now: i64) -> Option<(&str, i64)> {
        let dormant = matches!(self.status.as_str(), "completed" | "abandoned");
        match &self.claim {
            Some((owner, until)) if *until > now && !dormant => Some((owner.as_str(), *until)),
            _ => None,
        }
    }
}

/// Who wrote a text and when: the writing event's session id and time
/// (Unix seconds, UTC); the session is `""` when the event is not in the
/// log (spec/tq.md §10 "Fenced text": with who wrote it and when).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// The session id of the event that wrote the text.
    pub session: String,
    /// The event's time, Unix seconds UTC.
    pub ts: i64,
}

/// One recorded handoff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandoffRow {
    /// The one-line summary.
    pub summary: String,
    /// The note's path as recorded (relative to the project root when inside it).
    pub path: String,
    /// Unix seconds, UTC.
    pub ts: i64,
    /// The session id of the `handoff.create` (`""` when not in the log).
    pub session: String,
}

/// One event of the log, for `timeline`.
#[derive(Debug, Clone, PartialEq)]
pub struct EventRow {
    /// Local arrival order.
    pub seq: i64,
    /// The event type, e.g. `observation`.
    pub event_type: String,
    /// Unix seconds, UTC.
    pub ts: i64,
    /// The payload (JSON object; `Null` if the stored text does not parse).
    pub data: Value,
    /// The session id of the writer.
    pub session: String,
}

/// The state of task `slug` (bare), with at most `recent` observations and
/// `handoffs` handoffs, newest first. `Ok(None)` when there is no such task.
/// Errors: [`StoreError::Sqlite`].
pub fn task_state(
    conn: &Connection,
    slug: &str,
    recent: usize,
    handoffs: usize,
) -> Result<Option<TaskState>, StoreError> {
    let row = conn
        .query_row(
            "SELECT t.id, t.status, t.description, p.slug, t.claim_owner, t.claim_until
             FROM tasks t LEFT JOIN tasks p ON p.id = t.parent_task_id
             WHERE t.slug = ?1",
            [slug],
            |r| {
                let claim = match (r.get::<_, Option<String>>(4)?, r.get::<_, Option<i64>>(5)?) {
                    (Some(o), Some(u)) => Some((o, u)),
                    _ => None,
                };
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, Option<String>>(2)?,
                    r.get::<_, Option<String>>(3)?,
                    claim,
                ))
            },
        )
        .optional()?;
    let Some((id, status, description, parent, claim)) = row else {
        return Ok(None);
    };
    let children = pairs(
        conn,
        "SELECT slug, status FROM tasks WHERE parent_task_id = ?1 ORDER BY slug",
        params![id],
    )?;
    let edges = pairs(
        conn,
        "SELECT e.type, d.slug FROM edges e JOIN tasks d ON d.id = e.dst_id
         WHERE e.src_id = ?1 ORDER BY e.type, d.slug",
        params![id],
    )?;
    let metadata = pairs(
        conn,
        "SELECT key, value FROM task_metadata WHERE task_id = ?1 ORDER BY key",
        params![id],
    )?;
    let mut stmt = conn.prepare_cached(
        "SELECT o.text, o.ts, coalesce(e.session_id, '') FROM observations o
         LEFT JOIN events e ON e.event_id = o.event_id
         WHERE o.task_id = ?1 ORDER BY o.ts DESC, o.obs_id DESC LIMIT ?2",
    )?;
    let rows = stmt
        .query_map(params![id, to_i64(recent)], |r| {
            Ok((
                r.get::<_, String>(0)?,
                Written {
                    ts: r.get(1)?,
                    session: r.get(2)?,
                },
            ))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    let (recent, recent_by): (Vec<String>, Vec<Written>) = rows.into_iter().unzip();
    let obs_count = conn.query_row(
        "SELECT count(*) FROM observations WHERE task_id = ?1",
        [id],
        |r| r.get(0),
    )?;
    let mut stmt = conn.prepare_cached(
        "SELECT h.summary, h.path, h.ts, coalesce(e.session_id, '') FROM handoffs h
         LEFT JOIN events e ON e.event_id = h.event_id
         WHERE h.task_id = ?1 ORDER BY h.ts DESC, h.event_id DESC LIMIT ?2",
    )?;
    let handoffs = stmt
        .query_map(params![id, to_i64(handoffs)], |r| {
            Ok(HandoffRow {
                summary: r.get(0)?,
                path: r.get(1)?,
                ts: r.get(2)?,
                session: r.get(3)?,
            })
        })?
        .collect::<Result<Vec<_>, _>>()?;
    let name = typed_name(conn, slug)?;
    Ok(Some(TaskState {
        slug: slug.to_string(),
        status,
        description,
        name,
        parent,
        children,
        edges,
        metadata,
        recent,
        recent_by,
        obs_count,
        handoffs,
        claim,
    }))
}

/// The name typed when task `slug` was created: the `name` of its first
/// `task.create` event, `None` when that event kept none (tasks created
/// before wave 2, TQ-created tasks). A creation a `task.split` moved to
/// another slug (docs/store.md "Same name in two clones") names that task,
/// not `slug`: the moved task `SLUG-XXXXXX` finds its create through the
/// split on `SLUG`. Errors: [`StoreError::Sqlite`].
pub fn typed_name(conn: &Connection, slug: &str) -> Result<Option<String>, StoreError> {
    let own: Option<Option<String>> = conn
        .query_row(
            "SELECT json_extract(e.data, '$.name') FROM events e
             WHERE e.task_id = ?1 AND e.type = 'task.create'
               AND NOT EXISTS (SELECT 1 FROM events s, json_each(s.data, '$.events') k
                               WHERE s.task_id = ?1 AND s.type = 'task.split'
                                 AND k.value = e.event_key)
             ORDER BY e.seq LIMIT 1",
            [slug],
            |r| r.get::<_, Option<String>>(0),
        )
        .optional()?;
    let name = match own {
        Some(n) => n,
        None => match super::slug::base_of_moved(slug) {
            Some(base) => conn
                .query_row(
                    "SELECT json_extract(c.data, '$.name')
                     FROM events s, json_each(s.data, '$.events') k
                     JOIN events c ON c.event_key = k.value AND c.type = 'task.create'
                     WHERE s.task_id = ?1 AND s.type = 'task.split'
                       AND json_extract(s.data, '$.into') = ?2
                     ORDER BY c.seq LIMIT 1",
                    [base, slug],
                    |r| r.get::<_, Option<String>>(0),
                )
                .optional()?
                .flatten(),
            None => None,
        },
    };
    Ok(name.filter(|n| !n.trim().is_empty()))
}

/// An open task (status `open`, `active` or `blocked`) and its name, for
/// `task_create`'s `possibleDuplicates`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenTask {
    /// The bare slug.
    pub slug: String,
    /// The status.
    pub status: String,
    /// The typed name when the creating event kept one.
    pub name: Option<String>,
}

/// Every open task (status `open`, `active` or `blocked`; reserved `@`
/// nodes excluded), by slug, each with its typed name.
/// Errors: [`StoreError::Sqlite`].
pub fn open_tasks(conn: &Connection) -> Result<Vec<OpenTask>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT t.slug, t.status,
                (SELECT json_extract(e.data, '$.name') FROM events e
                 WHERE e.task_id = t.slug AND e.type = 'task.create'
                 ORDER BY e.seq LIMIT 1)
         FROM tasks t
         WHERE t.status IN ('open', 'active', 'blocked') AND t.slug NOT LIKE '@%'
         ORDER BY t.slug",
    )?;
    let rows = stmt
        .query_map([], |r| {
            Ok(OpenTask {
                slug: r.get(0)?,
                status: r.get(1)?,
                name: r.get::<_, Option<String>>(2).ok().flatten(),
            })
        })?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rows)
}

/// How many of task `slug`'s events match the timeline filter (`types`,
/// every type when empty; `seq < before`, `seq > after` when given): the
/// `M events remaining` of a truncated `timeline` page counts these.
/// Errors: [`StoreError::Sqlite`].
pub fn timeline_count(
    conn: &Connection,
    slug: &str,
    types: &[String],
    before: Option<i64>,
    after: Option<i64>,
) -> Result<i64, StoreError> {
    let types_json = if types.is_empty() {
        None
    } else {
        Some(Value::from(types.to_vec()).to_string())
    };
    Ok(conn.query_row(
        "SELECT count(*) FROM events
         WHERE task_id = ?1
           AND (?2 IS NULL OR type IN (SELECT value FROM json_each(?2)))
           AND (?3 IS NULL OR seq < ?3)
           AND (?4 IS NULL OR seq > ?4)",
        params![slug, types_json, before, after],
        |r| r.get(0),
    )?)
}

/// The status of task `slug` (bare), `Ok(None)` when there is no such task.
/// Errors: [`StoreError::Sqlite`].
pub fn task_status(conn: &Connection, slug: &str) -> Result<Option<String>, StoreError> {
    Ok(conn
        .query_row("SELECT status FROM tasks WHERE slug = ?1", [slug], |r| {
            r.get(0)
        })
        .optional()?)
}

/// The SQL of [`depends_on_edges`]: every `depends-on` edge as (source
/// slug, target slug), by source then target; the reserved `@` nodes left
/// out. One statement, no parameters; the same text runs on PostgreSQL.
pub const DEPENDS_ON_SQL: &str = "SELECT s.slug, d.slug FROM edges e
 JOIN tasks s ON s.id = e.src_id JOIN tasks d ON d.id = e.dst_id
 WHERE e.type = 'depends-on' AND s.slug NOT LIKE '@%' AND d.slug NOT LIKE '@%'
 ORDER BY s.slug, d.slug";

/// Every `depends-on` edge of the project as (source slug, target slug),
/// by source then target ([`DEPENDS_ON_SQL`]): what `cairn graph` and the
/// board draw as arrows, read in one statement instead of one query per
/// task. Errors: [`StoreError::Sqlite`].
pub fn depends_on_edges(conn: &Connection) -> Result<Vec<(String, String)>, StoreError> {
    let mut stmt = conn.prepare_cached(DEPENDS_ON_SQL)?;
    let rows = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<Vec<(String, String)>, _>>()?;
    Ok(rows)
}

/// Up to `n` task slugs, most recently updated first (ties by slug), the
/// reserved `@` nodes excluded. Errors: [`StoreError::Sqlite`].
pub fn recent_slugs(conn: &Connection, n: usize) -> Result<Vec<String>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT slug FROM tasks WHERE slug NOT LIKE '@%'
         ORDER BY updated_ts DESC, slug LIMIT ?1",
    )?;
    let rows = stmt
        .query_map(params![to_i64(n)], |r| r.get(0))?
        .collect::<Result<Vec<String>, _>>()?;
    Ok(rows)
}

/// The distinct event types present in the log, sorted.
/// Errors: [`StoreError::Sqlite`].
pub fn event_types(conn: &Connection) -> Result<Vec<String>, StoreError> {
    let mut stmt = conn.prepare_cached("SELECT DISTINCT type FROM events ORDER BY type")?;
    let rows = stmt
        .query_map([], |r| r.get(0))?
        .collect::<Result<Vec<String>, _>>()?;
    Ok(rows)
}

/// A page of task `slug`'s events (those whose subject is the task), newest
/// first: types in `types` (every type when empty), `seq < before` and
/// `seq > after` when given, at most `limit` events.
/// Errors: [`StoreError::Sqlite`].
pub fn timeline_page(
    conn: &Connection,
    slug: &str,
    types: &[String],
    before: Option<i64>,
    after: Option<i64>,
    limit: usize,
) -> Result<Vec<EventRow>, StoreError> {
    let types_json = if types.is_empty() {
        None
    } else {
        Some(Value::from(types.to_vec()).to_string())
    };
    let mut stmt = conn.prepare_cached(
        "SELECT seq, type, ts, data, session_id FROM events
         WHERE task_id = ?1
           AND (?2 IS NULL OR type IN (SELECT value FROM json_each(?2)))
           AND (?3 IS NULL OR seq < ?3)
           AND (?4 IS NULL OR seq > ?4)
         ORDER BY seq DESC LIMIT ?5",
    )?;
    let rows = stmt
        .query_map(
            params![slug, types_json, before, after, to_i64(limit)],
            |r| {
                let data: String = r.get(3)?;
                Ok(EventRow {
                    seq: r.get(0)?,
                    event_type: r.get(1)?,
                    ts: r.get(2)?,
                    data: serde_json::from_str(&data).unwrap_or(Value::Null),
                    session: r.get(4)?,
                })
            },
        )?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rows)
}

fn pairs(
    conn: &Connection,
    sql: &str,
    args: impl rusqlite::Params,
) -> Result<Vec<(String, String)>, StoreError> {
    let mut stmt = conn.prepare_cached(sql)?;
    let rows = stmt
        .query_map(args, |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rows)
}

fn to_i64(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Task slugs starting with `prefix` (bound as a parameter; a depot prefix
/// `name:` is stripped), reserved `@` nodes left out: live tasks first
/// (not completed or abandoned), then by slug; at most `limit`, with the
/// number that matched. One statement (a range over the slug index).
/// Errors: [`StoreError::Sqlite`].
pub fn slugs_with_prefix(
    conn: &Connection,
    prefix: &str,
    limit: usize,
) -> Result<(Vec<String>, usize), StoreError> {
    let prefix = strip_depot(prefix.trim());
    // Every slug starting with `prefix` sorts in [prefix, prefix + U+10FFFF).
    let upper = format!("{prefix}\u{10FFFF}");
    let mut stmt = conn.prepare_cached(
        "SELECT slug, count(*) OVER () FROM tasks
         WHERE slug >= ?1 AND slug < ?2 AND slug NOT LIKE '@%'
         ORDER BY status IN ('completed', 'abandoned'), slug
         LIMIT ?3",
    )?;
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let mut total = 0usize;
    let mut out = Vec::new();
    let mut rows = stmt.query(params![prefix, upper, limit])?;
    while let Some(r) = rows.next()? {
        out.push(r.get::<_, String>(0)?);
        total = usize::try_from(r.get::<_, i64>(1)?).unwrap_or(usize::MAX);
    }
    Ok((out, total))
}
