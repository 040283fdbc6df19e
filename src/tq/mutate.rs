//! The write path of a query (spec/tq.md §3, §5): write forms and mutation
//! steps, all inside ONE store transaction (`Store::write_with`).
//!
//! The pipeline is split at its mutation steps. Each segment's target set is
//! selected by one lowered statement on the transaction's connection; the
//! events for every target that actually changes are appended at once (and
//! folded, so the next segment sees them); the segment's set is carried to
//! the next one as a bound JSON parameter. The final segment's rows are read
//! from the projection inside the same transaction, so tasks carry their new
//! values; grouping them (result shaping) waits until the transaction has
//! committed, so the write lock is held only for the writes (issue 14).
//! Any error rolls the whole transaction back: nothing is recorded.

use std::collections::BTreeSet;

use rusqlite::Connection;

use super::diagnostic::Diagnostic;
use super::exec::{self, ExecError, classify};
use super::ir;
use super::plan::{Mutation, PStep, Plan, WriteForm};
use super::render::Cell;
use super::sql::{self, Start, Statement, Tail};
use crate::session::Session;
use crate::store::{NewEvent, StoreError, WriteTx};

/// Why the write path failed; converts from the store's error so it can be
/// the error type of `Store::write_with`.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// A statement failed (query error, interrupt or SQLite failure).
    #[error(transparent)]
    Exec(#[from] ExecError),
    /// The store refused or failed the append.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// One row of a `Tail::Targets` statement (either engine).
#[derive(Debug, Clone)]
pub(crate) struct Target {
    /// `tasks.id` (or a reflection row's negative id).
    pub(crate) id: i64,
    /// A real, non-reserved task.
    pub(crate) live: bool,
    /// The task's slug (`None` for a reflection row).
    pub(crate) slug: Option<String>,
    /// The value the mutation compares against (see `Tail::Targets`).
    pub(crate) current: Cell,
}

/// An SQLite value as a [`Cell`] (a blob read as lossy UTF-8 text).
fn value_cell(v: rusqlite::types::Value) -> Cell {
    use rusqlite::types::Value;
    match v {
        Value::Null => Cell::Null,
        Value::Integer(i) => Cell::Int(i),
        Value::Real(r) => Cell::Real(r),
        Value::Text(t) => Cell::Text(t),
        Value::Blob(b) => Cell::Text(String::from_utf8_lossy(&b).into_owned()),
    }
}

fn read_targets(conn: &Connection, st: &Statement) -> Result<Vec<Target>, ExecError> {
    let run = || -> rusqlite::Result<Vec<Target>> {
        let mut stmt = conn.prepare(&st.sql)?;
        let mut rows = stmt.query(rusqlite::params_from_iter(st.params.iter()))?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            out.push(Target {
                id: r.get(0)?,
                live: r.get::<_, Option<bool>>(2)?.unwrap_or(false),
                slug: r.get(3)?,
                current: value_cell(r.get(4)?),
            });
        }
        Ok(out)
    };
    run().map_err(classify)
}

fn scalar_i64(conn: &Connection, st: &Statement) -> Result<Option<i64>, ExecError> {
    let run = || -> rusqlite::Result<Option<i64>> {
        let mut stmt = conn.prepare(&st.sql)?;
        let mut rows = stmt.query(rusqlite::params_from_iter(st.params.iter()))?;
        match rows.next()? {
            Some(r) => r.get(0),
            None => Ok(None),
        }
    };
    run().map_err(classify)
}

fn text_of(v: &Cell) -> Option<&str> {
    match v {
        Cell::Text(s) => Some(s.as_str()),
        _ => None,
    }
}

fn truthy(v: &Cell) -> bool {
    matches!(v, Cell::Int(i) if *i != 0)
}

/// The task a link!/unlink! step points at (it must exist).
pub(crate) fn link_target(m: &Mutation) -> Option<&str> {
    match m {
        Mutation::Link { target, .. } | Mutation::Unlink { target, .. } => Some(target),
        _ => None,
    }
}

/// `No task TARGET.`: a link!/unlink! target that does not exist.
pub(crate) fn no_task(target: &str) -> ExecError {
    ExecError::Query(Diagnostic::query(format!("No task {target}."), None))
}

/// The events `m` records over `targets`: only for live tasks whose value
/// actually changes (status or metadata value differs, edge absent for
/// link!/present for unlink!, task not the link target itself).
///
/// Errors: `No task TARGET.` when a link!/unlink! target does not exist.
fn events_for(
    conn: &Connection,
    m: &Mutation,
    targets: &[Target],
    session: &str,
    ts: i64,
) -> Result<Vec<NewEvent>, ExecError> {
    if let Some(target) = link_target(m)
        && scalar_i64(conn, &sql::task_id(target))?.is_none()
    {
        return Err(no_task(target));
    }
    Ok(change_events(m, targets, session, ts))
}

/// The events of a status/metadata/edge step over `targets` whose link
/// target (if any) exists (see [`events_for`]).
pub(crate) fn change_events(
    m: &Mutation,
    targets: &[Target],
    session: &str,
    ts: i64,
) -> Vec<NewEvent> {
    let mut out = Vec::new();
    for t in targets.iter().filter(|t| t.live) {
        let Some(slug) = t.slug.as_deref() else {
            continue;
        };
        match m {
            Mutation::SetStatus(s) => {
                if text_of(&t.current) != Some(s.as_str()) {
                    out.push(NewEvent::update_status(session, ts, slug, *s));
                }
            }
            Mutation::SetMeta { key, value } => {
                if text_of(&t.current) != Some(value.as_str()) {
                    out.push(NewEvent::set_metadata(session, ts, slug, key, value));
                }
            }
            Mutation::Link { edge, target } => {
                if slug != target && !truthy(&t.current) {
                    out.push(NewEvent::link(session, ts, slug, target, *edge));
                }
            }
            Mutation::Unlink { edge, target } => {
                if slug != target && truthy(&t.current) {
                    out.push(NewEvent::sever(session, ts, slug, target, *edge));
                }
            }
            Mutation::Claim { .. } | Mutation::Release { .. } => {
                // `claim_events` handles these (they also filter the set).
            }
        }
    }
    out
}

/// A claim target's state, from the `Tail::Targets` JSON `[live owner,
/// register stamp second, dormant]`.
#[derive(Debug, Default)]
struct ClaimState {
    owner: Option<String>,
    stamp: Option<i64>,
    dormant: bool,
}

fn claim_state(v: &Cell) -> ClaimState {
    let parsed = text_of(v).and_then(|s| serde_json::from_str::<serde_json::Value>(s).ok());
    let Some(serde_json::Value::Array(items)) = parsed else {
        return ClaimState::default();
    };
    ClaimState {
        owner: items.first().and_then(|o| o.as_str()).map(str::to_string),
        stamp: items.get(1).and_then(serde_json::Value::as_i64),
        dormant: items.get(2).and_then(serde_json::Value::as_i64) == Some(1),
    }
}

/// The second a claim-register event is stamped with: `now`, or one past the
/// register's current stamp when that is not older, so the new event is
/// always the register's newest under last-writer-wins (a release recorded
/// earlier in the same second must not outlive the claim that follows it).
/// Never past [`crate::store::MAX_TS`] (year 9999), the largest stamp the
/// store accepts.
fn register_ts(now: i64, stamp: Option<i64>) -> i64 {
    match stamp {
        Some(s) if s >= now => s.saturating_add(1).min(crate::store::MAX_TS),
        _ => now,
    }
}

/// The events of `(:claim! S)` / `(:release!)` over `targets` (spec/tq.md §9
/// "Steps") and the targets the step passes on. Claim: each real task that
/// is unclaimed, lapsed or already held by `agent` and not dormant gets a
/// `task.claim` until `now + S` (a re-claim renews); a task another agent
/// holds live, a dormant task and a reflection row are dropped, so the set
/// passed on is exactly the tasks the agent now holds. Release: each task
/// `agent` holds live gets a `task.release`; every target passes on.
pub(crate) fn claim_events(
    m: &Mutation,
    targets: Vec<Target>,
    session: &str,
    now: i64,
) -> (Vec<NewEvent>, Vec<Target>) {
    let mut events = Vec::new();
    let mut kept = Vec::new();
    for t in targets {
        let state = claim_state(&t.current);
        let slug = t.slug.clone().filter(|_| t.live);
        match (m, slug) {
            (Mutation::Claim { seconds, agent }, Some(slug)) => {
                let free = state.owner.as_deref().is_none_or(|o| o == agent);
                if free && !state.dormant {
                    let until = now.saturating_add(*seconds);
                    let ts = register_ts(now, state.stamp);
                    events.push(NewEvent::claim(session, ts, &slug, agent, until));
                    kept.push(t);
                }
            }
            (Mutation::Release { agent }, Some(slug)) => {
                if state.owner.as_deref() == Some(agent.as_str()) {
                    let ts = register_ts(now, state.stamp);
                    events.push(NewEvent::release(session, ts, &slug, agent));
                }
                kept.push(t);
            }
            (Mutation::Release { .. }, None) => kept.push(t),
            _ => {}
        }
    }
    (events, kept)
}

/// The lowered statements of a write plan's segments, for `explain`: each
/// mutation's target selection, then the final shape. Segments after the
/// first start from the carried set, shown here as the empty JSON array.
/// Claims are judged at the plan's clock reading.
pub fn statements(plan: &Plan) -> Vec<Statement> {
    statements_with(plan, &sql::SQLITE)
}

/// [`statements`] lowered through dialect `d` (`cairn query --explain` on
/// PostgreSQL).
pub fn statements_with(plan: &Plan, d: &'static dyn sql::Dialect) -> Vec<Statement> {
    let steps = &plan.main.steps;
    let mut out = Vec::new();
    let mut start = Start::Source;
    let mut from = 0;
    for (i, s) in steps.iter().enumerate() {
        if let PStep::Mutate(m) = s {
            out.push(segment_with(
                plan,
                &steps[from..i],
                &start,
                &Tail::Targets(m),
                plan.now,
                d,
            ));
            start = Start::Carried("[]".to_string());
            from = i + 1;
        }
    }
    out.push(segment_with(
        plan,
        &steps[from..],
        &start,
        &exec::tail_of(&plan.main),
        plan.now,
        d,
    ));
    out
}

/// One segment of a write plan (`steps` from `start`, shaped by `tail`) as
/// ONE statement, through the same rewrites as a read (issue 23): a
/// `(:take 1)` before `(:claim! S)` becomes a `LIMIT` in the target set, so
/// the write lock is held for the write, not for a scan of every candidate.
/// `now` (Unix seconds) judges claims.
fn segment(plan: &Plan, steps: &[PStep], start: &Start, tail: &Tail<'_>, now: i64) -> Statement {
    segment_with(plan, steps, start, tail, now, &sql::SQLITE)
}

/// [`segment`] lowered through dialect `d`.
pub(crate) fn segment_with(
    plan: &Plan,
    steps: &[PStep],
    start: &Start,
    tail: &Tail<'_>,
    now: i64,
    d: &'static dyn sql::Dialect,
) -> Statement {
    let carried = match start {
        Start::Source => None,
        Start::Carried(json) => Some(json.as_str()),
    };
    let naive = ir::build(&plan.main, steps, carried, tail.shape(), plan.reflect, now);
    let opts = ir::Options {
        counters: true,
        ..ir::Options::default()
    };
    sql::lower_ir_with(&ir::optimize(naive, &opts).0, d)
}

/// What [`run_write`] leaves for after the commit: the final segment's rows
/// (not yet grouped) and how many events the query appended.
#[derive(Debug, Clone, PartialEq)]
pub struct Written {
    /// The final rows, shaped after the commit by [`exec::shape`].
    pub fetched: exec::Fetched,
    /// Events appended (0: the query changed nothing).
    pub appended: usize,
    /// Distinct tasks those events are about (the reserved `@cairn` of a
    /// view definition not counted).
    pub tasks: usize,
}

/// The two clock readings of one write query (both Unix seconds, read
/// inside the transaction): `stamp` dates its events (the tool clock, which
/// `CAIRN_NOW` may fix for reproducible transcripts); `claims` is the
/// store's clock, which alone judges whether a claim is live, sets a new
/// claim's `until` and stamps claim-register events (issue 19; docs/store.md
/// "Claims"). Equal unless the stamp clock is fixed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteClock {
    /// The stamp of the query's events (claim and release excepted).
    pub stamp: i64,
    /// The store clock claims are judged, set and stamped by.
    pub claims: i64,
}

impl WriteClock {
    /// Both readings the same instant `now`.
    pub fn at(now: i64) -> WriteClock {
        WriteClock {
            stamp: now,
            claims: now,
        }
    }
}

/// Appends `events` through `tx`, adding what was appended to `appended`
/// and the subjects named to `subjects` (not `@cairn`).
/// Counts `n` appended events of `events` into `appended` and their
/// subjects into `subjects` (not `@cairn`).
pub(crate) fn count_appended(
    events: &[NewEvent],
    n: usize,
    appended: &mut usize,
    subjects: &mut BTreeSet<String>,
) {
    *appended += n;
    if n > 0 {
        subjects.extend(
            events
                .iter()
                .filter(|e| e.task_id != crate::store::RESERVED_CAIRN)
                .map(|e| e.task_id.clone()),
        );
    }
}

fn append_counted(
    tx: &mut WriteTx<'_>,
    events: &[NewEvent],
    appended: &mut usize,
    subjects: &mut BTreeSet<String>,
) -> Result<(), WriteError> {
    if events.is_empty() {
        return Ok(());
    }
    let n = tx.append(events)?.len();
    count_appended(events, n, appended, subjects);
    Ok(())
}

/// Runs a write plan inside `tx`: the write form first, then each segment.
/// `clock.stamp` stamps every event of the query — all carry the same
/// stamp, never a later one — except a claim-register event, stamped by
/// `clock.claims`, or one past a register already as new (`register_ts`).
/// `clock.claims` is also the reading claims are judged live against and a
/// new claim's `until` counts from. Their order under last-writer-wins is
/// their event ids' (monotonic ULIDs), and a step that repeats an earlier
/// event of the query is salted by the write boundary (`"repeat": N`), not
/// dropped. `session.id` signs them. Returns the final rows, unshaped.
pub fn run_write(
    tx: &mut WriteTx<'_>,
    plan: &Plan,
    session: &Session,
    clock: WriteClock,
) -> Result<Written, WriteError> {
    let sid = session.id.as_str();
    let ts = clock.stamp;
    let judge = clock.claims;
    let mut appended = 0;
    let mut subjects = BTreeSet::new();
    match &plan.write_form {
        Some(WriteForm::Define { name, text }) => {
            let existing = user_view(tx.conn(), name)?;
            if existing.as_deref() != Some(text.as_str()) {
                let events = [NewEvent::view_define(sid, ts, name, text)];
                append_counted(tx, &events, &mut appended, &mut subjects)?;
            }
        }
        Some(WriteForm::Undefine { name }) => {
            let events = match user_view(tx.conn(), name)? {
                Some(_) => vec![NewEvent::view_undefine(sid, ts, name)],
                None => Vec::new(),
            };
            append_counted(tx, &events, &mut appended, &mut subjects)?;
        }
        None => {}
    }
    let steps = &plan.main.steps;
    let mut start = Start::Source;
    let mut from = 0;
    for (i, s) in steps.iter().enumerate() {
        if let PStep::Mutate(m) = s {
            let st = segment(plan, &steps[from..i], &start, &Tail::Targets(m), judge);
            let mut targets = read_targets(tx.conn(), &st)?;
            let events = match m {
                Mutation::Claim { .. } | Mutation::Release { .. } => {
                    let (events, kept) = claim_events(m, targets, sid, judge);
                    targets = kept;
                    events
                }
                _ => events_for(tx.conn(), m, &targets, sid, ts)?,
            };
            append_counted(tx, &events, &mut appended, &mut subjects)?;
            // The statement returns the targets in the segment's order (a
            // lazy order is its ORDER BY, not a rank): carry their positions.
            let carried: Vec<[i64; 2]> = (1..).zip(&targets).map(|(pos, t)| [t.id, pos]).collect();
            start = Start::Carried(serde_json::to_string(&carried).unwrap_or_default());
            from = i + 1;
        }
    }
    let st = segment(
        plan,
        &steps[from..],
        &start,
        &exec::tail_of(&plan.main),
        judge,
    );
    Ok(Written {
        fetched: exec::fetch_rows(tx.conn(), &st, &plan.main)?,
        appended,
        tasks: subjects.len(),
    })
}

fn user_view(conn: &Connection, name: &str) -> Result<Option<String>, ExecError> {
    let st = sql::user_view_text(name);
    let run = || -> rusqlite::Result<Option<String>> {
        let mut stmt = conn.prepare(&st.sql)?;
        let mut rows = stmt.query(rusqlite::params_from_iter(st.params.iter()))?;
        match rows.next()? {
            Some(r) => r.get(0),
            None => Ok(None),
        }
    };
    run().map_err(classify)
}
