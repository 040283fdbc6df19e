//! The write path of a query on PostgreSQL (issue 21; spec/tq.md §3, §5;
//! spec/team.md "Concurrency and claims"): the same segments, events and
//! carried sets as `mutate.rs`, inside ONE [`PgStore::write_tx`]
//! transaction (target selection, appends and folds, the final rows).
//!
//! Claims: the candidate rows a `(:claim! S)` selects are locked `FOR
//! UPDATE SKIP LOCKED` before their events are appended; a candidate
//! another transaction holds is dropped, so agents claiming at once never
//! claim one task twice. (The store's project write lock already runs
//! writes one at a time; the row locks keep a claim exact should it not.)

use std::collections::BTreeSet;

use postgres::Transaction;

use super::exec::{ExecError, Fetched};
use super::exec_pg;
use super::mutate::{
    Target, WriteClock, Written, change_events, claim_events, count_appended, link_target, no_task,
    segment_with,
};
use super::plan::{Mutation, PStep, Plan, WriteForm};
use super::render::Cell;
use super::sql::{POSTGRES, Start, Statement, Tail};
use crate::session::Session;
use crate::store::NewEvent;
use crate::store::pg::fold::Cx;
use crate::store::pg::write::{TxError, append};

/// Why a PostgreSQL write query failed: a statement's error for the user
/// (query error, time limit, failure), or the transaction's own (retry, or
/// a store failure).
pub(crate) enum PgWriteError {
    /// A statement failed.
    Exec(ExecError),
    /// Retry the transaction, or the store's failure.
    Tx(TxError),
}

impl From<TxError> for PgWriteError {
    fn from(e: TxError) -> Self {
        PgWriteError::Tx(e)
    }
}

/// A statement's error: serialization failures and deadlocks ask for a
/// retry, everything else is classified as on reads.
fn stmt_err(e: postgres::Error) -> PgWriteError {
    use postgres::error::SqlState;
    if e.code().is_some_and(|c| {
        *c == SqlState::T_R_SERIALIZATION_FAILURE || *c == SqlState::T_R_DEADLOCK_DETECTED
    }) {
        return PgWriteError::Tx(TxError::Retry);
    }
    PgWriteError::Exec(exec_pg::classify(e))
}

fn read_targets(cx: &mut Cx<'_, '_>, st: &Statement) -> Result<Vec<Target>, PgWriteError> {
    let rows = cx
        .query_cached(st.sql.as_str(), &exec_pg::params(st))
        .map_err(stmt_err)?;
    let mut out = Vec::with_capacity(rows.len());
    for r in &rows {
        let cells: Result<Vec<Cell>, _> = (0..5)
            .map(|i| exec_pg::cell(r, i, crate::tq::ast::FieldType::Number))
            .collect();
        let mut cells = cells.map_err(stmt_err)?.into_iter();
        let mut next = || cells.next().unwrap_or(Cell::Null);
        let id = match next() {
            Cell::Int(i) => i,
            _ => continue,
        };
        let _ord = next();
        let live = matches!(next(), Cell::Int(1));
        let slug = match next() {
            Cell::Text(s) => Some(s),
            _ => None,
        };
        out.push(Target {
            id,
            live,
            slug,
            current: next(),
        });
    }
    Ok(out)
}

/// Locks the rows of `targets` that are tasks (`FOR UPDATE SKIP LOCKED`)
/// and keeps those this transaction now holds, in their order.
fn lock_targets(
    tx: &mut Transaction<'_>,
    targets: Vec<Target>,
) -> Result<Vec<Target>, PgWriteError> {
    let ids: Vec<i64> = targets.iter().filter(|t| t.live).map(|t| t.id).collect();
    if ids.is_empty() {
        return Ok(targets);
    }
    let rows = tx
        .query(
            "SELECT id FROM tasks WHERE id = ANY($1::bigint[]) FOR UPDATE SKIP LOCKED",
            &[&ids],
        )
        .map_err(stmt_err)?;
    let held: BTreeSet<i64> = rows.iter().map(|r| r.get::<_, i64>(0)).collect();
    Ok(targets
        .into_iter()
        .filter(|t| !t.live || held.contains(&t.id))
        .collect())
}

fn scalar_text(
    tx: &mut Transaction<'_>,
    sql: &str,
    arg: &str,
) -> Result<Option<String>, PgWriteError> {
    Ok(tx
        .query_opt(sql, &[&arg])
        .map_err(stmt_err)?
        .map(|r| r.get::<_, String>(0)))
}

fn task_exists(tx: &mut Transaction<'_>, slug: &str) -> Result<bool, PgWriteError> {
    Ok(tx
        .query_opt("SELECT id FROM tasks WHERE slug = $1::text", &[&slug])
        .map_err(stmt_err)?
        .is_some())
}

fn append_counted(
    tx: &mut Cx<'_, '_>,
    events: &[NewEvent],
    appended: &mut usize,
    subjects: &mut BTreeSet<String>,
) -> Result<(), PgWriteError> {
    if events.is_empty() {
        return Ok(());
    }
    let n = append(tx, events)?.len();
    count_appended(events, n, appended, subjects);
    Ok(())
}

/// Runs a write plan inside `tx` as `mutate::run_write` does on SQLite
/// (the same events, stamps and carried sets), lowered through
/// [`POSTGRES`]. Returns the final rows, unshaped.
pub(crate) fn run_write(
    cx: &mut Cx<'_, '_>,
    plan: &Plan,
    session: &Session,
    clock: WriteClock,
) -> Result<Written, PgWriteError> {
    let sid = session.id.as_str();
    let ts = clock.stamp;
    let judge = clock.claims;
    let mut appended = 0;
    let mut subjects = BTreeSet::new();
    let view_sql = "SELECT query FROM named_views WHERE name = $1::text";
    match &plan.write_form {
        Some(WriteForm::Define { name, text }) => {
            let existing = scalar_text(cx.tx(), view_sql, name)?;
            if existing.as_deref() != Some(text.as_str()) {
                let events = [NewEvent::view_define(sid, ts, name, text)];
                append_counted(cx, &events, &mut appended, &mut subjects)?;
            }
        }
        Some(WriteForm::Undefine { name }) => {
            let events = match scalar_text(cx.tx(), view_sql, name)? {
                Some(_) => vec![NewEvent::view_undefine(sid, ts, name)],
                None => Vec::new(),
            };
            append_counted(cx, &events, &mut appended, &mut subjects)?;
        }
        None => {}
    }
    let steps = &plan.main.steps;
    let mut start = Start::Source;
    let mut from = 0;
    for (i, s) in steps.iter().enumerate() {
        if let PStep::Mutate(m) = s {
            let st = segment_with(
                plan,
                &steps[from..i],
                &start,
                &Tail::Targets(m),
                judge,
                &POSTGRES,
            );
            let mut targets = read_targets(cx, &st)?;
            let events = match m {
                Mutation::Claim { .. } => {
                    let locked = lock_targets(cx.tx(), targets)?;
                    let (events, kept) = claim_events(m, locked, sid, judge);
                    targets = kept;
                    events
                }
                Mutation::Release { .. } => {
                    let (events, kept) = claim_events(m, targets, sid, judge);
                    targets = kept;
                    events
                }
                _ => {
                    if let Some(target) = link_target(m)
                        && !task_exists(cx.tx(), target)?
                    {
                        return Err(PgWriteError::Exec(no_task(target)));
                    }
                    change_events(m, &targets, sid, ts)
                }
            };
            append_counted(cx, &events, &mut appended, &mut subjects)?;
            let carried: Vec<[i64; 2]> = (1..).zip(&targets).map(|(pos, t)| [t.id, pos]).collect();
            start = Start::Carried(serde_json::to_string(&carried).unwrap_or_default());
            from = i + 1;
        }
    }
    let st = segment_with(
        plan,
        &steps[from..],
        &start,
        &super::exec::tail_of(&plan.main),
        judge,
        &POSTGRES,
    );
    let rows = cx
        .query_cached(st.sql.as_str(), &exec_pg::params(&st))
        .map_err(stmt_err)?;
    let fetched: Fetched = exec_pg::rows_fetched(&rows, &plan.main).map_err(PgWriteError::Exec)?;
    Ok(Written {
        fetched,
        appended,
        tasks: subjects.len(),
    })
}
