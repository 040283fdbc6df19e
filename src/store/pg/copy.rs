//! `cairn push` into an EMPTY schema (issue 21, "push ≥ 20k events/s";
//! spec/team.md "Moving between engines"): instead of folding every event
//! again on PostgreSQL, one event at a time, the source store's events AND
//! its projection are copied table by table, one `COPY … FROM STDIN` (text
//! format) each, in one transaction under the project's write lock; the
//! secondary indexes are dropped first and built once at the end. The source's projection is the fold of exactly
//! those events (SQLite folds in the transaction that appends), and both
//! engines fold the same events to the same projection (the digest suite,
//! `tests/pg_store.rs`), so the result is what the event-by-event push
//! would have built; the caller still compares the two digests.
//!
//! What PostgreSQL holds beyond SQLite's columns is derived here as its
//! fold derives it: the search vectors (`observations.tsv` by
//! `tsvector_literal`, `task_texts.tsv` by `tsvector_of` of the name and
//! the description); `edge_count` is generated. Row ids (`tasks.id`,
//! `observations.obs_id`, `events.seq`) are kept and the identity
//! sequences moved past them.

use postgres::Transaction;
use rusqlite::types::ValueRef;

use super::connect::pg_err;
use super::search::{tsvector_literal, tsvector_of};
use crate::store::error::StoreError;
use crate::store::handle::Store;

/// Rows between two progress reports (and per parent `UPDATE`).
pub const COPY_BATCH: usize = 10_000;

/// One table to copy: SQLite's `SELECT` (rows in a stable order),
/// PostgreSQL's target columns (the derived one last), how many columns
/// the `SELECT` gives (`width`), and which derived column (if any) is
/// appended.
struct Table {
    name: &'static str,
    select: &'static str,
    columns: &'static str,
    width: usize,
    derived: Derived,
}

#[derive(Clone, Copy, PartialEq)]
enum Derived {
    None,
    /// `tsv` from the text column at this index (`observations`).
    ObsTsv(usize),
    /// `tsv` from the name and description columns (`task_texts`).
    TextsTsv(usize, usize),
}

/// The tables in an order the foreign keys accept (`tasks` first, their
/// parents set right after: `copy_parents`).
const TABLES: &[Table] = &[
    Table {
        name: "events",
        select: "SELECT seq, event_id, event_key, task_id, type, ts, session_id, prev_session_id, data FROM events ORDER BY seq",
        columns: "seq, event_id, event_key, task_id, type, ts, session_id, prev_session_id, data",
        width: 9,
        derived: Derived::None,
    },
    Table {
        name: "tasks",
        select: "SELECT id, slug, depot, status, description, created_ts, updated_ts, status_ts, description_ts,
                        project_id, status_eid, description_eid, parent_ts, parent_eid, obs_count, child_count,
                        lateral_out, lateral_in, claim_owner, claim_until, claim_ts, claim_eid
                 FROM tasks ORDER BY id",
        columns: "id, slug, depot, status, description, created_ts, updated_ts, status_ts, description_ts,
                  project_id, status_eid, description_eid, parent_ts, parent_eid, obs_count, child_count,
                  lateral_out, lateral_in, claim_owner, claim_until, claim_ts, claim_eid",
        width: 22,
        derived: Derived::None,
    },
    Table {
        name: "edges",
        select: "SELECT src_id, dst_id, type, tag, created_ts FROM edges ORDER BY rowid",
        columns: "src_id, dst_id, type, tag, created_ts",
        width: 5,
        derived: Derived::None,
    },
    Table {
        name: "observations",
        select: "SELECT obs_id, event_id, task_id, text, ts FROM observations ORDER BY obs_id",
        columns: "obs_id, event_id, task_id, text, ts, tsv",
        width: 5,
        derived: Derived::ObsTsv(3),
    },
    Table {
        name: "task_texts",
        select: "SELECT task_id, name, name_ts, name_eid, description, description_ts, description_eid
                 FROM task_texts ORDER BY task_id",
        columns: "task_id, name, name_ts, name_eid, description, description_ts, description_eid, tsv",
        width: 7,
        derived: Derived::TextsTsv(1, 4),
    },
    Table {
        name: "handoffs",
        select: "SELECT task_id, event_id, path, summary, ts FROM handoffs ORDER BY rowid",
        columns: "task_id, event_id, path, summary, ts",
        width: 5,
        derived: Derived::None,
    },
    Table {
        name: "task_metadata",
        select: "SELECT task_id, key, value, ts, eid FROM task_metadata ORDER BY task_id, key",
        columns: "task_id, key, value, ts, eid",
        width: 5,
        derived: Derived::None,
    },
    Table {
        name: "named_views",
        select: "SELECT name, query, ts, eid FROM named_views ORDER BY name",
        columns: "name, query, ts, eid",
        width: 4,
        derived: Derived::None,
    },
    Table {
        name: "task_fold",
        select: "SELECT task_id, parent_target_id, project_ts, project_eid FROM task_fold ORDER BY task_id",
        columns: "task_id, parent_target_id, project_ts, project_eid",
        width: 4,
        derived: Derived::None,
    },
    Table {
        name: "sever_state",
        select: "SELECT lo_id, hi_id, ts, eid FROM sever_state ORDER BY lo_id, hi_id",
        columns: "lo_id, hi_id, ts, eid",
        width: 4,
        derived: Derived::None,
    },
    Table {
        name: "edge_state",
        select: "SELECT src_id, dst_id, type, tag, present, ts, eid FROM edge_state ORDER BY src_id, dst_id, type, tag",
        columns: "src_id, dst_id, type, tag, present, ts, eid",
        width: 7,
        derived: Derived::None,
    },
    Table {
        name: "view_state",
        select: "SELECT name, query, present, ts, eid FROM view_state ORDER BY name",
        columns: "name, query, present, ts, eid",
        width: 5,
        derived: Derived::None,
    },
];

/// The indexes of `schema::DDL` that are not constraints, dropped during
/// the copy and created again by running the DDL (idempotent) after it.
const SECONDARY: &[&str] = &[
    "events_key",
    "events_task",
    "events_order",
    "events_type",
    "tasks_parent",
    "tasks_status",
    "tasks_obs_count",
    "tasks_edge_count",
    "tasks_claim_owner",
    "edges_dst",
    "edges_src",
    "observations_task",
    "observations_tsv",
    "task_texts_tsv",
    "handoffs_task",
    "task_metadata_key",
];

/// `s` escaped as a field of PostgreSQL's text `COPY` format
/// (backslash, newline, carriage return and tab escaped) onto `line`.
fn push_field(line: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '\\' => line.push_str("\\\\"),
            '\n' => line.push_str("\\n"),
            '\r' => line.push_str("\\r"),
            '\t' => line.push_str("\\t"),
            c => line.push(c),
        }
    }
}

/// One source row as text fields (`None` for NULL).
fn row_fields(r: &rusqlite::Row<'_>, n: usize) -> Result<Vec<Option<String>>, StoreError> {
    let mut out = Vec::with_capacity(n + 1);
    for i in 0..n {
        out.push(match r.get_ref(i)? {
            ValueRef::Null => None,
            ValueRef::Integer(v) => Some(v.to_string()),
            ValueRef::Real(v) => Some(v.to_string()),
            ValueRef::Text(t) | ValueRef::Blob(t) => Some(String::from_utf8_lossy(t).into_owned()),
        });
    }
    Ok(out)
}

/// The field at `i` as text, `""` when NULL.
fn text_at(fields: &[Option<String>], i: usize) -> &str {
    fields.get(i).and_then(|f| f.as_deref()).unwrap_or("")
}

/// Copies the rows of `t` with one `COPY … FROM STDIN` (text format);
/// `tick(rows)` every [`COPY_BATCH`] rows and at the end. Returns the rows
/// copied.
fn copy_table(
    tx: &mut Transaction<'_>,
    source: &Store,
    t: &Table,
    mut tick: impl FnMut(u64),
) -> Result<u64, StoreError> {
    use std::io::Write as _;
    let mut stmt = source.conn().prepare(t.select)?;
    let mut rows = stmt.query([])?;
    let mut writer = tx
        .copy_in(&format!("COPY {}({}) FROM STDIN", t.name, t.columns))
        .map_err(pg_err)?;
    let mut line = String::new();
    let mut n = 0u64;
    let io = |e: std::io::Error| StoreError::Postgres(format!("copying {}: {e}", t.name));
    while let Some(r) = rows.next()? {
        let mut fields = row_fields(r, t.width)?;
        match t.derived {
            Derived::None => {}
            Derived::ObsTsv(i) => fields.push(Some(tsvector_literal(text_at(&fields, i)))),
            Derived::TextsTsv(a, b) => fields.push(Some(tsvector_of(&[
                text_at(&fields, a),
                text_at(&fields, b),
            ]))),
        }
        line.clear();
        for (k, f) in fields.iter().enumerate() {
            if k > 0 {
                line.push('\t');
            }
            match f {
                None => line.push_str("\\N"),
                Some(s) => push_field(&mut line, s),
            }
        }
        line.push('\n');
        writer.write_all(line.as_bytes()).map_err(io)?;
        n += 1;
        if n.is_multiple_of(COPY_BATCH as u64) {
            tick(n);
        }
    }
    writer.finish().map_err(pg_err)?;
    tick(n);
    Ok(n)
}

/// Sets every copied task's parent (after all tasks are in: a parent may
/// come later in id order), [`COPY_BATCH`] per statement. Returns the rows.
fn copy_parents(tx: &mut Transaction<'_>, source: &Store) -> Result<u64, StoreError> {
    let st = tx
        .prepare(
            "UPDATE tasks SET parent_task_id = u.p
             FROM UNNEST($1::bigint[], $2::bigint[]) AS u(id, p) WHERE tasks.id = u.id",
        )
        .map_err(pg_err)?;
    let mut stmt = source.conn().prepare(
        "SELECT id, parent_task_id FROM tasks WHERE parent_task_id IS NOT NULL ORDER BY id",
    )?;
    let mut rows = stmt.query([])?;
    let (mut ids, mut parents): (Vec<i64>, Vec<i64>) = (Vec::new(), Vec::new());
    let mut n = 0u64;
    loop {
        let next = rows.next()?;
        if let Some(r) = next {
            ids.push(r.get(0)?);
            parents.push(r.get(1)?);
        }
        if ids.len() >= COPY_BATCH || (next.is_none() && !ids.is_empty()) {
            tx.execute(&st, &[&ids, &parents]).map_err(pg_err)?;
            n += ids.len() as u64;
            ids.clear();
            parents.clear();
        }
        if next.is_none() {
            return Ok(n);
        }
    }
}

/// The statements that drop, and then add back, the schema's unique and
/// foreign-key constraints (written by PostgreSQL from its catalog, names
/// quoted by `format`): foreign keys dropped first and added last, as
/// they may lean on a unique one. Errors: [`StoreError::Postgres`].
fn constraints(tx: &mut Transaction<'_>) -> Result<(String, String), StoreError> {
    let rows = tx
        .query(
            "SELECT format('ALTER TABLE %s DROP CONSTRAINT %I', c.conrelid::regclass, c.conname),
                    format('ALTER TABLE %s ADD CONSTRAINT %I %s', c.conrelid::regclass, c.conname,
                           pg_get_constraintdef(c.oid))
             FROM pg_constraint c
             WHERE c.connamespace = current_schema()::regnamespace AND c.contype IN ('f', 'u')
             ORDER BY c.contype = 'u', c.conname",
            &[],
        )
        .map_err(pg_err)?;
    let drop: Vec<String> = rows.iter().map(|r| r.get::<_, String>(0)).collect();
    let mut add: Vec<String> = rows.iter().map(|r| r.get::<_, String>(1)).collect();
    add.reverse();
    Ok((
        drop.iter().map(|d| format!("{d};")).collect(),
        add.iter().map(|a| format!("{a};")).collect(),
    ))
}

/// How many rows the copy will send (every table's, and the parents set
/// after the tasks), for the progress bar.
fn row_count(source: &Store) -> Result<u64, StoreError> {
    let mut n: u64 = source
        .conn()
        .query_row(
            "SELECT count(*) FROM tasks WHERE parent_task_id IS NOT NULL",
            [],
            |r| r.get::<_, i64>(0),
        )?
        .try_into()
        .unwrap_or(0);
    for t in TABLES {
        let sql = format!("SELECT count(*) FROM ({})", t.select);
        let c: i64 = source.conn().query_row(&sql, [], |r| r.get(0))?;
        n += u64::try_from(c).unwrap_or(0);
    }
    Ok(n)
}

/// Copies `source`'s events and projection into the (empty) schema of
/// `tx`; `progress(rows done, rows in all)` after each batch. Returns the
/// number of events copied. Errors: [`StoreError::Sqlite`] reading the
/// source, [`StoreError::Postgres`] writing.
pub(crate) fn copy_store(
    tx: &mut Transaction<'_>,
    source: &Store,
    mut progress: impl FnMut(u64, u64),
) -> Result<usize, StoreError> {
    let total = row_count(source)?;
    // Bulk-load order: the secondary indexes, the unique and the foreign
    // key constraints are dropped and built once at the end (an index
    // built by one sort, a constraint checked by one join, instead of a
    // probe per row); the primary keys stay.
    let (drop, add) = constraints(tx)?;
    tx.batch_execute(&drop).map_err(pg_err)?;
    tx.batch_execute(&format!("DROP INDEX IF EXISTS {}", SECONDARY.join(", ")))
        .map_err(pg_err)?;
    let mut done = 0u64;
    let mut events = 0usize;
    for t in TABLES {
        let n = copy_table(tx, source, t, |rows| progress(done + rows, total))?;
        done += n;
        if t.name == "events" {
            events = usize::try_from(n).unwrap_or(usize::MAX);
        }
        if t.name == "tasks" {
            done += copy_parents(tx, source)?;
            progress(done, total);
        }
    }
    tx.batch_execute(&add).map_err(pg_err)?;
    tx.batch_execute(super::schema::DDL).map_err(pg_err)?;
    // The identity sequences past the copied ids; the splits mark.
    tx.batch_execute(
        "SELECT setval(pg_get_serial_sequence('events', 'seq'), (SELECT max(seq) FROM events))
           WHERE EXISTS (SELECT 1 FROM events);
         SELECT setval(pg_get_serial_sequence('tasks', 'id'), (SELECT max(id) FROM tasks))
           WHERE EXISTS (SELECT 1 FROM tasks);
         SELECT setval(pg_get_serial_sequence('observations', 'obs_id'), (SELECT max(obs_id) FROM observations))
           WHERE EXISTS (SELECT 1 FROM observations);",
    )
    .map_err(pg_err)?;
    let split: bool = source
        .conn()
        .query_row(
            "SELECT count(*) > 0 FROM schema_meta WHERE key = ?1",
            [crate::store::split::SPLITS_MARK],
            |r| r.get(0),
        )
        .unwrap_or(false);
    if split {
        tx.execute(
            "INSERT INTO schema_meta(key, value) VALUES ($1, '1') ON CONFLICT DO NOTHING",
            &[&crate::store::split::SPLITS_MARK],
        )
        .map_err(pg_err)?;
    }
    Ok(events)
}
