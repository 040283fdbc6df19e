//! Running lowered statements on PostgreSQL (issue 21; spec/team.md "The
//! same on both engines") and reading their rows into the same [`Output`]
//! as SQLite's executor (`exec.rs`), so rendering (`tq::render`,
//! `tq::json`) is shared. Read-side only.
//!
//! A first read runs in ONE `READ ONLY`, `REPEATABLE READ` transaction
//! (the catalog and the query see one snapshot) with `SET LOCAL
//! statement_timeout` as the time limit; a repeated one is ONE gated
//! statement ([`gated`]) under the session's `statement_timeout`: a statement past it is cancelled
//! by the server (SQLSTATE 57014) and answers the same sentence as SQLite's
//! interrupt ([`ExecError::Interrupted`]).

use std::collections::BTreeMap;
use std::time::Duration;

use postgres::types::{ToSql, Type};
use postgres::{Client, IsolationLevel, Transaction};

use super::ast::FieldType;
use super::diagnostic::Diagnostic;
use super::exec::{self, Deadline, ExecError, Fetched, missing_current_message, shape};
use super::ir::Options;
use super::plan::{Pipeline, Plan, Shaper};
use super::registry;
use super::render::{Cell, Output, ProjRow, TaskRow};
use super::sql::{self, POSTGRES, Param, Statement};
use crate::store::pg::case_fold::MISSING_CURRENT_MARK;

/// The parameters of `st` as the `postgres` client binds them (the
/// placeholders carry their types: `$N::bigint`, `$N::float8`, `$N::text`).
pub fn params(st: &Statement) -> Vec<&(dyn ToSql + Sync)> {
    st.params
        .iter()
        .map(|p| -> &(dyn ToSql + Sync) {
            match p {
                Param::Int(i) => i,
                Param::Real(r) => r,
                Param::Text(s) => s,
            }
        })
        .collect()
}

/// Sorts a PostgreSQL error into [`ExecError`]: the statement timeout (and
/// a cancel) is [`ExecError::Interrupted`]; `tq_missing_current`'s raise is
/// the missing-current-task query error, worded as on SQLite.
pub fn classify(e: postgres::Error) -> ExecError {
    if let Some(db) = e.as_db_error() {
        if *db.code() == postgres::error::SqlState::QUERY_CANCELED {
            return ExecError::Interrupted;
        }
        if let Some(slug) = db.message().strip_prefix(MISSING_CURRENT_MARK) {
            return ExecError::Query(Diagnostic::query(missing_current_message(slug), None));
        }
        return ExecError::Postgres(db.message().to_string());
    }
    ExecError::Postgres(e.to_string())
}

/// Starts the read transaction of one query: `READ ONLY`, `REPEATABLE
/// READ`, its statements cancelled past `limit` (`None`: no limit).
/// Errors: [`ExecError::Postgres`].
pub fn read_transaction<'c>(
    client: &'c mut Client,
    limit: Option<Duration>,
) -> Result<Transaction<'c>, ExecError> {
    let mut tx = client
        .build_transaction()
        .isolation_level(IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
        .map_err(classify)?;
    if let Some(limit) = limit {
        set_limit(&mut tx, limit)?;
    }
    Ok(tx)
}

/// Sets the time limit of `tx`'s next statements to `limit` (at least 1 ms).
/// Errors: [`ExecError`].
pub fn set_limit(tx: &mut Transaction<'_>, limit: Duration) -> Result<(), ExecError> {
    // 0 would mean "no limit": the shortest limit is 1 ms.
    let ms = limit.as_millis().clamp(1, i32::MAX as u128);
    tx.batch_execute(&format!("SET LOCAL statement_timeout = {ms}"))
        .map_err(classify)
}

/// The planner's catalog read with the same ONE statement as on SQLite
/// ([`crate::store::reader::CATALOG_SQL`]): live metadata keys (sorted) and
/// user views (name → text). Errors: [`ExecError`].
pub fn read_catalog(
    tx: &mut Transaction<'_>,
) -> Result<(Vec<String>, BTreeMap<String, String>), ExecError> {
    let rows = tx
        .query(crate::store::reader::CATALOG_SQL, &[])
        .map_err(classify)?;
    catalog_of(&rows)
}

/// The catalog statement's rows as (metadata keys sorted, user views).
fn catalog_of(
    rows: &[postgres::Row],
) -> Result<(Vec<String>, BTreeMap<String, String>), ExecError> {
    let mut keys = Vec::new();
    let mut views = BTreeMap::new();
    for r in rows {
        let tag: String = r.try_get(0).map_err(classify)?;
        let name: String = r.try_get(1).map_err(classify)?;
        if tag == "k" {
            keys.push(name);
        } else {
            views.insert(name, r.try_get(2).map_err(classify)?);
        }
    }
    keys.sort();
    Ok((keys, views))
}

/// The one PostgreSQL statement of a read plan under `opts` (`opts.enabled`
/// false: the naive lowering).
pub fn read_statement_with(plan: &Plan, opts: &Options) -> Statement {
    sql::lower_ir_with(&exec::optimized_ir(plan, opts).0, &POSTGRES)
}

/// Runs the one statement of a read plan on `client` under `opts`, in its
/// own read transaction, with no time limit (tests and the differential
/// oracle). Errors: [`ExecError`].
pub fn run_read_with(
    client: &mut Client,
    plan: &Plan,
    opts: &Options,
) -> Result<Output, ExecError> {
    let mut tx = read_transaction(client, None)?;
    let out = fetch(
        &mut tx,
        &read_statement_with(plan, opts),
        &plan.main,
        &Deadline::none(),
    );
    let _ = tx.commit();
    out
}

/// Runs `st` on `tx` and reads its rows as `p`'s final shape, then shapes
/// them under `deadline`.
pub fn fetch(
    tx: &mut Transaction<'_>,
    st: &Statement,
    p: &Pipeline,
    deadline: &Deadline,
) -> Result<Output, ExecError> {
    shape(fetch_rows(tx, st, p)?, deadline)
}

/// One column of `r` as a [`Cell`] (`ty` marks timestamps), whatever its
/// PostgreSQL type: integers, reals, booleans (0/1) and text.
pub(crate) fn cell(r: &postgres::Row, i: usize, ty: FieldType) -> Result<Cell, postgres::Error> {
    let int = |v: Option<i64>| match v {
        None => Cell::Null,
        Some(v) if ty == FieldType::Timestamp => Cell::Ts(v),
        Some(v) => Cell::Int(v),
    };
    let t = r.columns()[i].type_().clone();
    Ok(if t == Type::INT8 {
        int(r.try_get::<_, Option<i64>>(i)?)
    } else if t == Type::INT4 {
        int(r.try_get::<_, Option<i32>>(i)?.map(i64::from))
    } else if t == Type::INT2 {
        int(r.try_get::<_, Option<i16>>(i)?.map(i64::from))
    } else if t == Type::BOOL {
        int(r.try_get::<_, Option<bool>>(i)?.map(i64::from))
    } else if t == Type::FLOAT8 {
        r.try_get::<_, Option<f64>>(i)?
            .map_or(Cell::Null, Cell::Real)
    } else if t == Type::FLOAT4 {
        r.try_get::<_, Option<f32>>(i)?
            .map_or(Cell::Null, |f| Cell::Real(f64::from(f)))
    } else {
        r.try_get::<_, Option<String>>(i)?
            .map_or(Cell::Null, Cell::Text)
    })
}

/// Column `i` as text (`None` for NULL).
fn text(r: &postgres::Row, i: usize) -> Result<Option<String>, postgres::Error> {
    Ok(match cell(r, i, FieldType::Text)? {
        Cell::Null => None,
        c => Some(c.text()),
    })
}

/// Column `i` as an integer (`None` for NULL or a non-integer).
fn int(r: &postgres::Row, i: usize) -> Result<Option<i64>, postgres::Error> {
    Ok(match cell(r, i, FieldType::Number)? {
        Cell::Int(v) | Cell::Ts(v) => Some(v),
        _ => None,
    })
}

fn task_row(r: &postgres::Row) -> Result<TaskRow, postgres::Error> {
    let meta = match text(r, 5)? {
        Some(j) => serde_json::from_str::<Vec<(String, String)>>(&j).unwrap_or_default(),
        None => Vec::new(),
    };
    Ok(TaskRow {
        slug: text(r, 0)?.unwrap_or_default(),
        display: text(r, 1)?.unwrap_or_default(),
        status: text(r, 2)?,
        obs: int(r, 3)?,
        edges: int(r, 4)?,
        meta,
    })
}

/// Runs `st` on `tx` and reads its rows as `p`'s final shape (grouping left
/// to [`shape`]), as `exec::fetch_rows` does on SQLite.
pub fn fetch_rows(
    tx: &mut Transaction<'_>,
    st: &Statement,
    p: &Pipeline,
) -> Result<Fetched, ExecError> {
    let rows = tx.query(st.sql.as_str(), &params(st)).map_err(classify)?;
    rows_fetched(&rows, p)
}

pub use crate::store::pg::handle::STATEMENT_CACHE;

/// Starts a read transaction (`READ ONLY`, `REPEATABLE READ`, its
/// statements cancelled past `limit`) on `client` and reads the catalog
/// ([`read_catalog`]'s statement) in two round trips: the transaction and
/// its time limit in one simple-protocol message, then the catalog
/// statement prepared once per connection (kept in `cache`; sent as
/// simple-protocol text it was parsed and planned at every read, ~0.4 ms).
/// The caller ends the transaction ([`end_read`]); on an error here it is
/// already rolled back. Errors: [`ExecError`].
pub fn begin_read_with_catalog(
    client: &mut Client,
    cache: &mut crate::store::pg::handle::ReadStmts,
    limit: Duration,
) -> Result<(Vec<String>, BTreeMap<String, String>), ExecError> {
    let ms = limit.as_millis().clamp(1, i32::MAX as u128);
    let begun = client.batch_execute(&format!(
        "START TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY; SET LOCAL statement_timeout = {ms}"
    ));
    let rows = begun.and_then(|()| {
        let sql = crate::store::reader::CATALOG_SQL;
        let st = match cache.get(sql) {
            Some(s) => s.clone(),
            None => {
                let s = client.prepare(sql)?;
                cache.insert(sql.to_string(), s.clone());
                s
            }
        };
        client.query(&st, &[])
    });
    let rows = match rows {
        Ok(r) => r,
        Err(e) => {
            let _ = client.batch_execute("ROLLBACK");
            return Err(classify(e));
        }
    };
    catalog_of(&rows).inspect_err(|_| {
        let _ = client.batch_execute("ROLLBACK");
    })
}

/// Ends the read transaction of [`begin_read_with_catalog`]: `COMMIT` when
/// `ok`, else `ROLLBACK`.
pub fn end_read(client: &mut Client, ok: bool) {
    let _ = client.batch_execute(if ok { "COMMIT" } else { "ROLLBACK" });
}

/// The user views as one fingerprint, the same whether Rust computes it
/// ([`views_fingerprint`]) or PostgreSQL from `named_views`
/// ([`VIEWS_FINGERPRINT_SQL`]): the SHA-256, in lowercase hex, of every
/// view as `<characters>:<name><characters>:<query>`, by name in byte
/// order (lengths make the text exact: no separator a name could
/// contain). 64 characters bound with every read, however many views.
pub fn views_fingerprint(views: &BTreeMap<String, String>) -> String {
    use sha2::Digest as _;
    use std::fmt::Write as _;
    let mut text = String::new();
    for (name, q) in views {
        let _ = write!(
            text,
            "{}:{name}{}:{q}",
            name.chars().count(),
            q.chars().count()
        );
    }
    hex::encode(sha2::Sha256::digest(text.as_bytes()))
}

/// [`views_fingerprint`] computed by PostgreSQL, as a scalar subquery.
pub const VIEWS_FINGERPRINT_SQL: &str = "(SELECT encode(sha256(convert_to(coalesce(string_agg(length(name) || ':' || name || length(query) || ':' || query, '' ORDER BY name), ''), 'UTF8')), 'hex') FROM named_views)";

/// The metadata keys of `catalog` a compile of `text` may have resolved a
/// field to (issue 23, the gate of [`gated`]): every key whose `:key`
/// occurs, case-folded, in `text` or in a user view's text. A superset of
/// the keys the compile named, which is what the gate needs.
pub fn named_keys(catalog: &crate::store::CatalogData, text: &str) -> Vec<String> {
    let mut hay = text.to_lowercase();
    for q in catalog.user_views.values() {
        hay.push('\n');
        hay.push_str(&q.to_lowercase());
    }
    catalog
        .meta_keys
        .iter()
        .filter(|k| hay.contains(&format!(":{}", k.to_lowercase())))
        .cloned()
        .collect()
}

/// `st` gated on the catalog it was compiled against (issue 23: one round
/// trip per read): `SELECT * FROM (st) WHERE <the catalog still compiles
/// it the same>`. What a successful compile read of the catalog is the
/// user views (compared whole by their [`views_fingerprint`], bound as
/// one more parameter; a catalog with no user views is `NOT EXISTS` a row
/// of `named_views`, one probe instead of a digest) and, for each field that is a metadata key, that the key is
/// live (`keys`, from [`named_keys`]: one index probe each). Keys are
/// only ever added between rebuilds, and an added key cannot change a
/// compile that succeeded (the registry's fields resolve first), so this
/// is exact. The gate is a one-time filter (uncorrelated subqueries and
/// the `STABLE` `tq_stale_catalog`), evaluated before any row in the
/// statement's own snapshot; when it fails it raises
/// [`STALE_CATALOG_MARK`](crate::store::pg::case_fold::STALE_CATALOG_MARK)
/// ([`is_stale_catalog`]) and the caller compiles again. The subquery's
/// `ORDER BY` keeps its order (a sorted subquery is never pulled up).
pub fn gated(st: &Statement, views: &BTreeMap<String, String>, keys: &[String]) -> Statement {
    use std::fmt::Write as _;
    let mut params = st.params.clone();
    // No user views: one probe of an empty table, not a digest of it.
    let mut test = if views.is_empty() {
        "NOT EXISTS (SELECT 1 FROM named_views)".to_string()
    } else {
        params.push(Param::Text(views_fingerprint(views)));
        format!("{VIEWS_FINGERPRINT_SQL} = ${}::text", params.len())
    };
    for k in keys {
        params.push(Param::Text(k.clone()));
        let _ = write!(
            test,
            " AND EXISTS (SELECT 1 FROM task_metadata WHERE key = ${}::text)",
            params.len()
        );
    }
    Statement {
        sql: format!(
            "SELECT * FROM ({}) AS tq_gated WHERE CASE WHEN {test} THEN true ELSE tq_stale_catalog() END",
            st.sql
        ),
        params,
    }
}

/// True when `e` (as [`classify`] sorts it) is the gate of [`gated`]
/// finding a newer catalog.
pub fn is_stale_catalog(e: &ExecError) -> bool {
    matches!(e, ExecError::Postgres(m) if m == crate::store::pg::case_fold::STALE_CATALOG_MARK)
}

/// Runs `st` on `client` (inside [`begin_read_with_catalog`]'s transaction)
/// as a statement prepared once per connection and kept in `cache` (one
/// round trip instead of two), and reads its rows as `p`'s final shape.
/// Errors: [`ExecError`].
pub fn fetch_rows_cached(
    client: &mut Client,
    cache: &mut crate::store::pg::handle::ReadStmts,
    st: &Statement,
    p: &Pipeline,
) -> Result<Fetched, ExecError> {
    let prepared = match cache.get(&st.sql) {
        Some(s) => s.clone(),
        None => {
            let s = client.prepare(&st.sql).map_err(classify)?;
            if cache.len() >= STATEMENT_CACHE {
                cache.clear();
            }
            cache.insert(st.sql.clone(), s.clone());
            s
        }
    };
    let rows = client.query(&prepared, &params(st)).map_err(classify)?;
    rows_fetched(&rows, p)
}

/// Rows of a read statement as `p`'s final shape (grouping left to
/// [`shape`]).
pub(crate) fn rows_fetched(rows: &[postgres::Row], p: &Pipeline) -> Result<Fetched, ExecError> {
    let inner = || -> Result<Fetched, postgres::Error> {
        Ok(Fetched::Done(match &p.shaper {
            None => Output::Tasks {
                tasks: rows.iter().map(task_row).collect::<Result<_, _>>()?,
                enriched: p.enriched,
            },
            Some(Shaper::Ids) => Output::Ids {
                ids: rows
                    .iter()
                    .map(|r| text(r, 0).map(Option::unwrap_or_default))
                    .collect::<Result<_, _>>()?,
            },
            Some(Shaper::Count) => Output::Count {
                count: match rows.first() {
                    Some(r) => int(r, 0)?.unwrap_or(0),
                    None => 0,
                },
            },
            Some(Shaper::Select(fields)) => {
                let types: Vec<FieldType> = fields.iter().map(registry::field_type).collect();
                let mut out = Vec::with_capacity(rows.len());
                for r in rows {
                    let mut cells = Vec::with_capacity(types.len());
                    for (i, ty) in types.iter().enumerate() {
                        cells.push(cell(r, i + 1, *ty)?);
                    }
                    out.push(ProjRow {
                        slug: text(r, 0)?.unwrap_or_default(),
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
                let mut pairs = Vec::with_capacity(rows.len());
                for r in rows {
                    let key = match cell(r, 6, ty)? {
                        Cell::Null => None,
                        c => Some(c.text()),
                    };
                    pairs.push((task_row(r)?, key));
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

/// PostgreSQL's `EXPLAIN` of `st` (same parameters; nothing is executed):
/// the plan's lines as PostgreSQL prints them. Errors: [`ExecError`].
pub fn query_plan(client: &mut Client, st: &Statement) -> Result<Vec<String>, ExecError> {
    let mut tx = read_transaction(client, None)?;
    let rows = tx
        .query(format!("EXPLAIN {}", st.sql).as_str(), &params(st))
        .map_err(classify)?;
    let mut out = Vec::with_capacity(rows.len());
    for r in &rows {
        out.push(text(r, 0).map_err(classify)?.unwrap_or_default());
    }
    let _ = tx.commit();
    Ok(out)
}
