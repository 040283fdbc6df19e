//! Running lowered statements on a connection and reading their rows into
//! [`Output`] (spec/tq.md §4). Read-side only; the write path is in
//! `mutate.rs`.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use rusqlite::functions::FunctionFlags;
use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{Connection, ToSql};

use super::ast::FieldType;
use super::diagnostic::Diagnostic;
use super::ir::{self, Fired, Ir, Options};
use super::plan::{Pipeline, Plan, Shaper};
use super::registry;
use super::render::{Cell, Output, ProjRow, TaskRow, group_checked};
use super::sql::{self, CONTAINS_FN, FOLD_FN, MISSING_CURRENT_FN, Param, Statement, Tail};

/// Marks an error raised by our own SQL function, carrying a query error text.
const QUERY_ERROR_MARK: &str = "tq-query-error: ";

impl ToSql for Param {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self {
            Param::Int(i) => ToSqlOutput::from(*i),
            Param::Real(r) => ToSqlOutput::from(*r),
            Param::Text(s) => ToSqlOutput::from(s.as_str()),
        })
    }
}

/// Fragments of SQLite's messages for its size limits (expression depth,
/// subquery nesting, compound terms, parameters).
const TOO_COMPLEX: &[&str] = &["too large", "too deep", "too many"];

/// Why a statement failed: our own query error (raised inside SQL), an
/// interrupt (the time limit), or any other SQLite failure.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// A diagnostic to show the user.
    #[error("{}", .0.message)]
    Query(Diagnostic),
    /// The statement was interrupted (time limit).
    #[error("interrupted")]
    Interrupted,
    /// Any other SQLite failure (not the user's fault).
    #[error(transparent)]
    Sqlite(#[from] rusqlite::Error),
    /// Any other PostgreSQL failure (not the user's fault): the server's
    /// message.
    #[error("{0}")]
    Postgres(String),
}

/// The query error of a `(current)` source whose task is gone: `The current
/// task SLUG is not in the store.` (the same sentence on both engines).
pub fn missing_current_message(slug: &str) -> String {
    format!("The current task {slug} is not in the store.")
}

/// The end of a query's time limit, checked by result shaping (grouping)
/// between SQLite's own interrupts (docs/planner.md "Time limit").
#[derive(Debug, Clone, Copy)]
pub struct Deadline {
    at: Option<Instant>,
    pause: Duration,
}

impl Deadline {
    /// The limit ends at `at`.
    pub fn at(at: Instant) -> Deadline {
        Deadline {
            at: Some(at),
            pause: Duration::ZERO,
        }
    }

    /// No limit (tests and reference runs that time nothing).
    pub fn none() -> Deadline {
        Deadline {
            at: None,
            pause: Duration::ZERO,
        }
    }

    /// The same deadline, sleeping `pause` at every check: a deliberately
    /// slow shaping step for tests (see `Engine::with_shaping_pause`).
    pub fn with_pause(self, pause: Duration) -> Deadline {
        Deadline { pause, ..self }
    }

    /// `Err(ExecError::Interrupted)` once the limit has passed.
    pub fn check(&self) -> Result<(), ExecError> {
        if !self.pause.is_zero() {
            std::thread::sleep(self.pause);
        }
        match self.at {
            Some(at) if Instant::now() >= at => Err(ExecError::Interrupted),
            _ => Ok(()),
        }
    }
}

/// Sorts a rusqlite error into [`ExecError`].
pub fn classify(e: rusqlite::Error) -> ExecError {
    if let rusqlite::Error::SqliteFailure(f, msg) = &e {
        if f.code == rusqlite::ErrorCode::OperationInterrupted {
            return ExecError::Interrupted;
        }
        if let Some(m) = msg {
            if let Some(text) = m.strip_prefix(QUERY_ERROR_MARK) {
                return ExecError::Query(Diagnostic::query(text.to_string(), None));
            }
            // SQLite's size limits are the query's shape, not a failure.
            if TOO_COMPLEX.iter().any(|p| m.contains(p)) {
                return ExecError::Query(Diagnostic::query(
                    format!(
                        "the query is too complex to run ({m}); split it into smaller queries."
                    ),
                    None,
                ));
            }
        }
    }
    ExecError::Sqlite(e)
}

/// Registers the SQL functions the lowered statements call on `conn`: the
/// missing current task error ([`MISSING_CURRENT_FN`]), the Unicode case
/// fold ([`FOLD_FN`], see [`fold`]) and the folded containment test
/// ([`CONTAINS_FN`], see [`contains_folded`]).
pub fn register_functions(conn: &Connection) -> rusqlite::Result<()> {
    conn.create_scalar_function(MISSING_CURRENT_FN, 1, FunctionFlags::SQLITE_UTF8, |ctx| {
        let slug: String = ctx.get(0)?;
        Err::<i64, _>(rusqlite::Error::UserFunctionError(
            format!("{QUERY_ERROR_MARK}{}", missing_current_message(&slug)).into(),
        ))
    })?;
    conn.create_scalar_function(
        FOLD_FN,
        1,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| Ok(fold(ctx.get_raw(0))),
    )?;
    conn.create_scalar_function(
        CONTAINS_FN,
        2,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| {
            // The needle is folded once per statement (SQLite keeps it as
            // the argument's auxiliary data while the argument is constant).
            let needle: std::sync::Arc<Option<String>> = ctx
                .get_or_create_aux(1, |v| -> Result<Option<String>, rusqlite::Error> {
                    Ok(fold(v))
                })?;
            Ok(match needle.as_deref() {
                None => None,
                Some(n) => contains_folded(ctx.get_raw(0), n).map(i64::from),
            })
        },
    )
}

/// `tq_contains(hay, needle)`: 1 when the case fold of `hay` ([`fold`])
/// contains `needle_folded` (already folded), 0 when not, `None` when
/// `hay` is NULL: `instr(tq_fold(hay), tq_fold(needle)) > 0` without
/// building the folded text of an ASCII `hay` (ASCII folds byte by byte),
/// so a `(node "…")` scan of every slug allocates nothing per row.
pub fn contains_folded(hay: rusqlite::types::ValueRef<'_>, needle_folded: &str) -> Option<bool> {
    use rusqlite::types::ValueRef;
    let n = needle_folded.as_bytes();
    match hay {
        ValueRef::Text(b) | ValueRef::Blob(b) if b.is_ascii() => {
            if n.is_empty() {
                return Some(true);
            }
            if n.len() > b.len() {
                return Some(false);
            }
            Some(
                b.windows(n.len())
                    .any(|w| w.iter().zip(n).all(|(a, c)| a.to_ascii_lowercase() == *c)),
            )
        }
        v => fold(v).map(|h| h.contains(needle_folded)),
    }
}

/// `tq_fold(x)`: the case fold of `(node ...)` and `(matches ...)`
/// (docs/planner.md "Case folding"). Text is Rust's `str::to_lowercase`
/// (full Unicode: `É` → `é`, `ẞ` → `ß`); NULL stays NULL; a number folds
/// to its decimal text; a blob is read as lossy UTF-8.
pub fn fold(v: rusqlite::types::ValueRef<'_>) -> Option<String> {
    use rusqlite::types::ValueRef;
    match v {
        ValueRef::Null => None,
        ValueRef::Integer(i) => Some(i.to_string()),
        ValueRef::Real(r) => Some(r.to_string()),
        ValueRef::Text(b) | ValueRef::Blob(b) => Some(String::from_utf8_lossy(b).to_lowercase()),
    }
}

/// The planner's catalog read in ONE statement: live metadata keys (sorted,
/// by a loose index scan) and user views (name → text); see
/// [`crate::store::reader::CATALOG_SQL`].
pub fn read_catalog(
    conn: &Connection,
) -> rusqlite::Result<(Vec<String>, BTreeMap<String, String>)> {
    let c = crate::store::reader::read_catalog(conn)?;
    Ok((c.meta_keys, c.user_views))
}

/// True when the store's `tasks` table has the maintained counter columns
/// (`obs_count`, `child_count`, `lateral_out`, `lateral_in`; schema 2), so
/// the `counter-columns` rewrite may read them. A failure reads as false.
pub fn has_counter_columns(conn: &Connection) -> bool {
    let st = sql::counter_columns_probe();
    conn.query_row(&st.sql, [], |r| r.get::<_, i64>(0))
        .map(|n| n == 4)
        .unwrap_or(false)
}

/// The final shape of a pipeline as a [`Tail`].
pub fn tail_of(p: &Pipeline) -> Tail<'_> {
    match &p.shaper {
        None => Tail::Tasks {
            enriched: p.enriched,
        },
        Some(Shaper::Ids) => Tail::Ids,
        Some(Shaper::Count) => Tail::Count,
        Some(Shaper::Select(fs)) => Tail::Select(fs),
        Some(Shaper::GroupBy(f)) => Tail::GroupBy(f),
    }
}

/// The naive IR of a read plan (every producing node ranked): what
/// `--no-optimize` lowers and what the rewrites start from.
pub fn read_ir(plan: &Plan) -> Ir {
    ir::build(
        &plan.main,
        &plan.main.steps,
        None,
        tail_of(&plan.main).shape(),
        plan.reflect,
        plan.now,
    )
}

/// The read plan's IR after the rewrites `opts` allows, with the rules that
/// fired.
pub fn optimized_ir(plan: &Plan, opts: &Options) -> (Ir, Fired) {
    ir::optimize(read_ir(plan), opts)
}

/// The one statement of a read plan, optimized with the default options.
pub fn read_statement(plan: &Plan) -> Statement {
    read_statement_with(plan, &Options::default())
}

/// The one statement of a read plan under `opts` (`opts.enabled` false: the
/// naive lowering).
pub fn read_statement_with(plan: &Plan, opts: &Options) -> Statement {
    sql::lower_ir(&optimized_ir(plan, opts).0)
}

/// Runs the one statement of a read-only plan on `conn` (optimized, default
/// options). (No time limit of its own: the caller sets one on `conn`.)
pub fn run_read(conn: &Connection, plan: &Plan) -> Result<Output, ExecError> {
    run_read_with(conn, plan, &Options::default())
}

/// Runs the one statement of a read-only plan on `conn` under `opts`, with
/// no shaping deadline.
pub fn run_read_with(conn: &Connection, plan: &Plan, opts: &Options) -> Result<Output, ExecError> {
    run_read_within(conn, plan, opts, &Deadline::none())
}

/// Runs the one statement of a read-only plan on `conn` under `opts`, its
/// result shaped under `deadline`.
/// Errors: [`ExecError::Interrupted`] once the deadline has passed.
pub fn run_read_within(
    conn: &Connection,
    plan: &Plan,
    opts: &Options,
    deadline: &Deadline,
) -> Result<Output, ExecError> {
    fetch(conn, &read_statement_with(plan, opts), &plan.main, deadline)
}

fn task_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<TaskRow> {
    let meta: Option<String> = r.get(5)?;
    let meta = match meta {
        Some(j) => serde_json::from_str::<Vec<(String, String)>>(&j).unwrap_or_default(),
        None => Vec::new(),
    };
    Ok(TaskRow {
        slug: r.get(0)?,
        display: r.get(1)?,
        status: r.get(2)?,
        obs: r.get(3)?,
        edges: r.get(4)?,
        meta,
    })
}

fn cell(v: ValueRef<'_>, ty: FieldType) -> Cell {
    match v {
        ValueRef::Null => Cell::Null,
        ValueRef::Integer(i) if ty == FieldType::Timestamp => Cell::Ts(i),
        ValueRef::Integer(i) => Cell::Int(i),
        ValueRef::Real(f) => Cell::Real(f),
        ValueRef::Text(t) | ValueRef::Blob(t) => {
            Cell::Text(String::from_utf8_lossy(t).into_owned())
        }
    }
}

fn key_text(v: ValueRef<'_>, ty: FieldType) -> Option<String> {
    match cell(v, ty) {
        Cell::Null => None,
        c => Some(c.text()),
    }
}

/// A statement's rows read into their final shape, except grouping, which
/// [`shape`] does (for a write query, after its transaction commits).
#[derive(Debug, Clone, PartialEq)]
pub enum Fetched {
    /// Already in its final shape.
    Done(Output),
    /// `(:group-by FIELD)` rows with their key text (`None`: no value), in
    /// pipeline order, not yet grouped.
    Ungrouped {
        /// The grouping field's name.
        field: String,
        /// Each task with its key.
        pairs: Vec<(TaskRow, Option<String>)>,
    },
}

/// Runs `st` and reads its rows as `p`'s final shape, then shapes them
/// under `deadline` ([`fetch_rows`] then [`shape`]).
pub fn fetch(
    conn: &Connection,
    st: &Statement,
    p: &Pipeline,
    deadline: &Deadline,
) -> Result<Output, ExecError> {
    shape(fetch_rows(conn, st, p)?, deadline)
}

/// Groups [`Fetched::Ungrouped`] rows in linear time (hashing; the groups
/// are then sorted, largest first, ties by key), checking `deadline` every
/// [`SHAPING_CHECK_EVERY`] rows and after the sort.
/// Errors: [`ExecError::Interrupted`] once the deadline has passed.
pub fn shape(f: Fetched, deadline: &Deadline) -> Result<Output, ExecError> {
    match f {
        Fetched::Done(o) => Ok(o),
        Fetched::Ungrouped { field, pairs } => {
            let groups = group_checked(pairs, SHAPING_CHECK_EVERY, || deadline.check())?;
            Ok(Output::Groups { field, groups })
        }
    }
}

/// How many rows grouping handles between two deadline checks.
pub const SHAPING_CHECK_EVERY: usize = 4096;

/// Runs `st` and reads its rows as `p`'s final shape (grouping left to
/// [`shape`]). Reading drives SQLite, so its interrupt bounds it.
pub fn fetch_rows(conn: &Connection, st: &Statement, p: &Pipeline) -> Result<Fetched, ExecError> {
    let inner = || -> rusqlite::Result<Fetched> {
        // Cached: a warm reader runs the same statement shapes again and again.
        let mut stmt = conn.prepare_cached(&st.sql)?;
        let mut rows = stmt.query(rusqlite::params_from_iter(st.params.iter()))?;
        Ok(Fetched::Done(match &p.shaper {
            None => {
                let mut tasks = Vec::new();
                while let Some(r) = rows.next()? {
                    tasks.push(task_row(r)?);
                }
                Output::Tasks {
                    tasks,
                    enriched: p.enriched,
                }
            }
            Some(Shaper::Ids) => {
                let mut ids = Vec::new();
                while let Some(r) = rows.next()? {
                    ids.push(r.get(0)?);
                }
                Output::Ids { ids }
            }
            Some(Shaper::Count) => {
                let count = match rows.next()? {
                    Some(r) => r.get(0)?,
                    None => 0,
                };
                Output::Count { count }
            }
            Some(Shaper::Select(fields)) => {
                let types: Vec<FieldType> = fields.iter().map(registry::field_type).collect();
                let mut out = Vec::new();
                while let Some(r) = rows.next()? {
                    let mut cells = Vec::new();
                    for (i, ty) in types.iter().enumerate() {
                        cells.push(cell(r.get_ref(i + 1)?, *ty));
                    }
                    out.push(ProjRow {
                        slug: r.get(0)?,
                        cells,
                    });
                }
                Output::Projection {
                    fields: fields.iter().map(registry::field_name).collect(),
                    rows: out,
                }
            }
            Some(Shaper::GroupBy(f)) => {
                let ty = registry::field_type(f);
                let mut pairs = Vec::new();
                while let Some(r) = rows.next()? {
                    pairs.push((task_row(r)?, key_text(r.get_ref(6)?, ty)));
                }
                return Ok(Fetched::Ungrouped {
                    field: registry::field_name(f),
                    pairs,
                });
            }
        }))
    };
    inner().map_err(classify)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::types::ValueRef;

    #[test]
    fn contains_folded_is_instr_over_the_fold() {
        let t = |s: &'static str| ValueRef::Text(s.as_bytes());
        // ASCII, folded byte by byte.
        assert_eq!(contains_folded(t("2026-01-01-AuTh-x"), "auth"), Some(true));
        assert_eq!(contains_folded(t("2026-01-01-auth"), "autH"), Some(false));
        assert_eq!(contains_folded(t("ab"), "abc"), Some(false));
        assert_eq!(contains_folded(t("ab"), ""), Some(true));
        // A non-ASCII needle never matches inside ASCII text.
        assert_eq!(contains_folded(t("cafe"), "café"), Some(false));
        // Non-ASCII text is folded in full (É → é, ẞ → ß).
        assert_eq!(contains_folded(t("CAFÉ-STRAẞE"), "é-straß"), Some(true));
        assert_eq!(contains_folded(ValueRef::Null, "a"), None);
        assert_eq!(contains_folded(ValueRef::Integer(1234), "23"), Some(true));
        // The same answer as the fold of both sides, on a sample.
        for (hay, needle) in [("Ab-Cd", "b-c"), ("İx", "i̇x"), ("ǅ", "ǆ"), ("x", "X")] {
            let want = hay.to_lowercase().contains(&needle.to_lowercase());
            assert_eq!(
                contains_folded(t(hay), &needle.to_lowercase()),
                Some(want),
                "{hay} / {needle}"
            );
        }
    }
}
