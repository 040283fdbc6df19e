//! `Engine`, the one door into `tq` (spec/tq.md; docs/planner.md): text →
//! compile → plan → one SQL statement → rows → text.
//!
//! Read plans run on the store's warm read-only connection
//! (`Store::warm_reader`: statement cache, catalog cached by
//! `PRAGMA data_version`; read-only as defence in depth) under SQLite's
//! progress handler for the time limit. Write plans
//! run inside one `Store::write_with` transaction under a watchdog that
//! interrupts the connection at the limit (the store's connection is shared,
//! so its progress handler is not ours to set); either way an interrupted
//! statement changes nothing. Result shaping (grouping) checks the same
//! deadline; a write query's result is shaped after its commit.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rusqlite::Connection;
use serde::Serialize;

mod db;
mod pg;
mod watch;

use super::ast::{Query, Surface};
use super::cache;
use super::diagnostic::{DiagKind, Diagnostic};
use super::exec::{self, ExecError};
use super::front;
use super::ir::Options;
use super::mutate::{self, WriteError};
use super::plan::{self, Catalog, Plan};
use super::render::{Output, TEXT_BUDGET, render};
use super::sql::{self, Statement};
use crate::session::Session;
use crate::store::{Store, StoreError};

/// Default time limit of one query (spec/tq.md; issue 4).
pub const DEFAULT_TIME_LIMIT: Duration = Duration::from_secs(10);

/// The test hook (environment variable) read by [`Engine::with_test_hooks`]:
/// a time limit in milliseconds and a result-shaping step slower than it.
pub const SLOW_SHAPING_ENV: &str = "CAIRN_TEST_SLOW_SHAPING_MS";

/// A cancellation flag shared between a running query and whoever may
/// cancel it (the MCP adapter on `notifications/cancelled`, spec/mcp.md
/// "Serving"). Raising it interrupts the running statement at SQLite's next
/// progress check (reads) or the write watchdog's next tick (writes, within
/// [`CANCEL_TICK`]); an interrupted query changes nothing. Clones share the
/// flag.
#[derive(Debug, Clone, Default)]
pub struct Cancel(Arc<AtomicBool>);

/// How often the write watchdog looks at the cancellation flag.
pub const CANCEL_TICK: Duration = Duration::from_millis(20);

impl Cancel {
    /// A fresh, lowered flag.
    pub fn new() -> Cancel {
        Cancel::default()
    }

    /// Raises the flag: the query running under it stops.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    /// Whether the flag is raised.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }

    /// The shared flag itself (the warm reader's progress gate reads it).
    pub fn flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.0)
    }
}

/// The query engine. `time_limit` bounds each query's execution (default 10 s);
/// `cancel` stops it early.
#[derive(Debug, Clone)]
pub struct Engine {
    /// How long one query may run before it is interrupted with
    /// `Query error: the query ran past its N s limit.`
    pub time_limit: Duration,
    /// Raised to interrupt the running query (an MCP cancellation); the
    /// interrupted query answers [`Engine::cancelled_error`] and writes
    /// nothing.
    pub cancel: Cancel,
    /// A pause at every shaping deadline check (zero outside tests).
    shaping_pause: Duration,
    /// Run the IR rewrites (default true; `cairn query --no-optimize` turns
    /// them off, for bug reports and the differential tests; docs/planner.md).
    pub optimize: bool,
    /// The clock write events are stamped with ([`crate::clock::Clock::now`])
    /// and claims are judged by ([`crate::clock::Clock::claims_now`]): the
    /// system clock; a fixed stamp under `CAIRN_NOW`; a fixed instant for
    /// both in tests (spec/tq.md §9).
    pub clock: crate::clock::Clock,
    /// The longest last run of a cached SQLite read that runs before its
    /// catalog check instead of after it (default [`cache::QUICK_RUN`];
    /// [`Engine::with_quick_reads`]).
    quick_run: Duration,
}

impl Default for Engine {
    fn default() -> Self {
        Engine::new()
    }
}

/// A compiled and planned query, ready to execute.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The typed query.
    pub query: Query,
    /// Its plan for the surface it was prepared on.
    pub plan: Plan,
}

/// `explain` output: for each statement the query runs (one for a read
/// query; one per mutation segment plus the final one for a write query),
/// its SQL, parameters and SQLite's `EXPLAIN QUERY PLAN` rows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Explain {
    /// A read query's IR before the rewrites (docs/planner.md "The IR");
    /// `None` for a write query (its segments go through the same rewrites;
    /// their IR is not shown).
    pub ir: Option<String>,
    /// The IR after the rewrites (`None` for a write query).
    pub optimized: Option<String>,
    /// The rules that fired, `rule ×N` in name order (empty: none or write).
    pub rules: Vec<String>,
    /// The statements, in execution order.
    pub statements: Vec<ExplainedStatement>,
}

/// One explained statement.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExplainedStatement {
    /// The SQL text.
    pub sql: String,
    /// The bound parameters, rendered (`?N` is the N-th).
    pub params: Vec<String>,
    /// `EXPLAIN QUERY PLAN` rows, indented by depth (`  ` per level).
    pub plan: Vec<String>,
}

fn seconds_text(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{}", d.as_secs())
    } else {
        let t = format!("{s:.3}");
        t.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// A store error met while recording a write query's events: a refusal
/// that is the query's own doing (a `phase-of` cycle, docs/store.md
/// "Phase-of cycles") is a query error with the store's sentence; anything
/// else an [`execution_failure`].
pub fn store_failure(e: StoreError) -> Diagnostic {
    match e {
        StoreError::PhaseCycle { .. } => Diagnostic::query(e.to_string(), None),
        e => execution_failure(e),
    }
}

/// An SQLite failure that is not the user's fault: logged to stderr, shown
/// as `The query could not be executed.`
pub fn execution_failure(detail: impl std::fmt::Display) -> Diagnostic {
    if tracing::dispatcher::has_been_set() {
        // `cairn serve`: stderr and, during an MCP call, the client's log.
        tracing::error!("query execution failed: {detail}");
    } else {
        // Not eprintln!: a closed stderr must not panic a query (docs/cli.md).
        let _ = writeln!(std::io::stderr(), "cairn: query execution failed: {detail}");
    }
    Diagnostic {
        kind: DiagKind::Execution,
        message: detail.to_string(),
        span: None,
        help: None,
    }
}

impl Engine {
    /// An engine with the default 10 s time limit.
    pub fn new() -> Engine {
        Engine {
            time_limit: DEFAULT_TIME_LIMIT,
            cancel: Cancel::new(),
            shaping_pause: Duration::ZERO,
            optimize: true,
            clock: crate::clock::Clock::System,
            quick_run: cache::QUICK_RUN,
        }
    }

    /// The same engine with SQLite's quick reads for cached queries whose
    /// last run took at most `longest` (docs/planner.md "The compile
    /// cache": the statement runs first and the catalog is checked after,
    /// by the snapshot it read). `Duration::ZERO` turns them off;
    /// `Duration::MAX` makes every cached read quick (the tests of both
    /// paths).
    pub fn with_quick_reads(self, longest: Duration) -> Engine {
        Engine {
            quick_run: longest,
            ..self
        }
    }

    /// Test hook: the same engine with a deliberately slow result-shaping
    /// step (it sleeps `pause` at every deadline check while grouping), to
    /// show the time limit and the write lock's release around shaping.
    #[doc(hidden)]
    pub fn with_shaping_pause(self, pause: Duration) -> Engine {
        Engine {
            shaping_pause: pause,
            ..self
        }
    }

    /// Test hook: when [`SLOW_SHAPING_ENV`] holds a number of milliseconds
    /// MS, the same engine with an MS time limit and a shaping pause of MS +
    /// 300 ms ([`Engine::with_shaping_pause`]), so a process test sees a
    /// write query's shaping pass the limit after its commit. Unset or not a
    /// number: the engine unchanged. Read by `cairn query` and `cairn call`.
    #[doc(hidden)]
    pub fn with_test_hooks(self) -> Engine {
        let ms = std::env::var(SLOW_SHAPING_ENV)
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok());
        match ms {
            Some(ms) => Engine {
                time_limit: Duration::from_millis(ms),
                shaping_pause: Duration::from_millis(ms + 300),
                ..self
            },
            None => self,
        }
    }

    /// The same engine judging claims by, and stamping write events with,
    /// `clock` (a fixed instant in tests; spec/tq.md §9).
    pub fn with_clock(self, clock: crate::clock::Clock) -> Engine {
        Engine { clock, ..self }
    }

    /// The time-limit diagnostic: `the query ran past its N s limit.`
    pub fn limit_error(&self) -> Diagnostic {
        Diagnostic::query(
            format!(
                "the query ran past its {} s limit.",
                seconds_text(self.time_limit)
            ),
            None,
        )
    }

    /// The cancellation diagnostic: `the query was cancelled; nothing was written.`
    pub fn cancelled_error(&self) -> Diagnostic {
        Diagnostic::query("the query was cancelled; nothing was written.", None)
    }

    /// The time limit passed while a write query's result was shaped, after
    /// its transaction committed (issue 19): not an error — the writes
    /// stand, and an agent that retried would repeat them — but
    /// [`Output::Recorded`] with what was written and the sentence `The
    /// result was too slow to shape within the N s limit; run a read query
    /// to see it.`
    pub fn recorded_unshaped(&self, events: usize, tasks: usize) -> Output {
        Output::Recorded {
            events,
            tasks,
            note: format!(
                "The result was too slow to shape within the {} s limit; run a read query to see it.",
                seconds_text(self.time_limit)
            ),
        }
    }

    fn exec_diag(&self, e: ExecError) -> Diagnostic {
        match e {
            ExecError::Query(d) => d,
            ExecError::Interrupted if self.cancel.is_cancelled() => self.cancelled_error(),
            ExecError::Interrupted => self.limit_error(),
            ExecError::Sqlite(e) => execution_failure(e),
            ExecError::Postgres(e) => execution_failure(e),
        }
    }

    fn write_diag(&self, e: WriteError) -> Diagnostic {
        match e {
            WriteError::Exec(e) => self.exec_diag(e),
            WriteError::Store(StoreError::Sqlite(e)) => self.exec_diag(exec::classify(e)),
            WriteError::Store(e) => store_failure(e),
        }
    }

    /// Compiles and runs `text` on `surface`; `Ok` is the text of §4.
    /// Errors: the diagnostic (parse, query, or execution).
    pub fn run(
        &self,
        store: &Store,
        session: &Session,
        text: &str,
        surface: Surface,
    ) -> Result<String, Diagnostic> {
        let opts = self.options(Some(TEXT_BUDGET));
        self.run_with(store, session, surface, &opts, Some(text), |keys| {
            front::compile(text, keys)
        })
        .map(|o| render(&o))
    }

    /// The optimizer options of this engine; `text_budget` when the caller
    /// renders text (rows that cannot be shown are not enriched).
    pub fn options(&self, text_budget: Option<usize>) -> Options {
        Options {
            enabled: self.optimize,
            text_budget,
            // Every store this build opens is migrated to schema 2, which
            // keeps the counter columns (`store::schema::V2_COUNTERS`).
            counters: true,
        }
    }

    /// Compiles and runs `text` on `surface`; the structured result.
    pub fn run_value(
        &self,
        store: &Store,
        session: &Session,
        text: &str,
        surface: Surface,
    ) -> Result<Output, Diagnostic> {
        let opts = self.options(None);
        self.run_with(store, session, surface, &opts, Some(text), |keys| {
            front::compile(text, keys)
        })
    }

    /// Plans and runs an already typed `query` on `surface` (no text is
    /// parsed, so field names and metadata keys in it need not be valid TQ
    /// keywords); the structured result. Used by `cairn query --format json`
    /// to run a query widened with `(:select EVERY-FIELD)` (docs/cli.md
    /// "JSON output"). Errors: planning (spec/tq.md §7) and execution
    /// diagnostics, as [`Engine::run_value`].
    pub fn run_query_value(
        &self,
        store: &Store,
        session: &Session,
        query: &Query,
        surface: Surface,
    ) -> Result<Output, Diagnostic> {
        let opts = self.options(None);
        self.run_with(store, session, surface, &opts, None, |_| Ok(query.clone()))
    }

    /// Opens a reader, prepares the query `compile` yields (given the live
    /// metadata keys) and executes it on the read or write path. A read
    /// query given by its `text` goes through the warm reader's compile
    /// cache (`tq::cache`): a repeat skips compiling, planning and lowering.
    fn run_with(
        &self,
        store: &Store,
        session: &Session,
        surface: Surface,
        opts: &Options,
        text: Option<&str>,
        compile: impl FnOnce(&[String]) -> Result<Query, Diagnostic>,
    ) -> Result<Output, Diagnostic> {
        let mut reader = store.warm_reader().map_err(execution_failure)?;
        let key = cache::key_for(text, surface, session, opts);
        if let Some(k) = &key
            && let Some(out) = self.run_quick(&mut reader, k)
        {
            return out;
        }
        let catalog = reader.catalog().map_err(execution_failure)?;
        let hit = key.as_ref().and_then(|k| {
            reader
                .slot::<cache::CompileCache>()
                .and_then(|c| c.get(&catalog, k))
        });
        let compiled = match hit {
            Some(c) => c,
            None => {
                let prepared = self.plan_with(
                    catalog.meta_keys.clone(),
                    catalog.user_views.clone(),
                    session,
                    surface,
                    compile,
                )?;
                if prepared.plan.writes() {
                    drop(reader);
                    return self.execute_write(store, session, &prepared.plan);
                }
                let (ir, _) = exec::optimized_ir(&prepared.plan, opts);
                let (statement, now_slots) = sql::lower_ir_clocked(&ir, &sql::SQLITE);
                let c = Arc::new(cache::Compiled {
                    plan: prepared.plan,
                    statement,
                    now_slots,
                    named_keys: Vec::new(),
                    last_run: cache::LastRun::default(),
                    gated: None,
                });
                if let (Some(k), Some(slot)) = (key, reader.slot::<cache::CompileCache>()) {
                    slot.put(&catalog, k, Arc::clone(&c));
                }
                c
            }
        };
        reader
            .init_once(exec::register_functions)
            .map_err(execution_failure)?;
        self.run_compiled(&mut reader, &compiled)
    }

    /// The read of a quick cached query without the catalog check before it
    /// (issue 23, the engine's fixed cost: that check is a read
    /// transaction of its own). Runs `key`'s compiled statement when the
    /// warm reader holds a catalog and the entry's last run took at most
    /// the engine's quick-read bound ([`Engine::with_quick_reads`]; default
    /// [`cache::QUICK_RUN`]), then keeps the answer only if the statement
    /// read the snapshot the catalog was read at
    /// ([`crate::store::WarmReader::snapshot_version`] unchanged: nobody
    /// committed in between, so the catalog is the statement's). `None`
    /// when the path does not apply or another connection committed (the
    /// caller then checks the catalog and runs again: at most one quick
    /// run is wasted per commit).
    fn run_quick(
        &self,
        reader: &mut crate::store::WarmReader,
        key: &cache::Key,
    ) -> Option<Result<Output, Diagnostic>> {
        let (version, catalog) = reader.cached_catalog()?;
        let compiled = reader
            .slot::<cache::CompileCache>()?
            .find(&catalog, key)
            .filter(|c| c.ran_within(self.quick_run))?;
        let out = self.run_compiled(reader, &compiled);
        match reader.snapshot_version() {
            Ok(v) if v == version => {
                if let Some(c) = reader.slot::<cache::CompileCache>() {
                    c.count_hit();
                }
                Some(out)
            }
            _ => None,
        }
    }

    /// Runs a compiled read on the warm reader under the time limit (its
    /// SQL functions registered), recording how long the run took.
    fn run_compiled(
        &self,
        reader: &mut crate::store::WarmReader,
        compiled: &cache::Compiled,
    ) -> Result<Output, Diagnostic> {
        let started = Instant::now();
        let st = compiled.statement_at(|| self.clock.claims_now());
        let deadline = started + self.time_limit;
        reader
            .arm(deadline, self.cancel.flag())
            .map_err(execution_failure)?;
        let shaping = exec::Deadline::at(deadline).with_pause(self.shaping_pause);
        let out = exec::fetch(reader.conn(), &st, &compiled.plan.main, &shaping);
        reader.disarm();
        compiled.ran(started.elapsed());
        out.map_err(|e| self.exec_diag(e))
    }

    /// Reads the catalog (ONE statement: metadata keys and user views) on
    /// `conn`, compiles `text` and plans it for `surface`.
    pub fn prepare(
        &self,
        conn: &Connection,
        session: &Session,
        text: &str,
        surface: Surface,
    ) -> Result<Prepared, Diagnostic> {
        self.prepare_with(conn, session, surface, |keys| front::compile(text, keys))
    }

    /// Reads the catalog on `conn`, builds the typed query with `compile`
    /// (given the live metadata keys) and plans it for `surface`.
    fn prepare_with(
        &self,
        conn: &Connection,
        session: &Session,
        surface: Surface,
        compile: impl FnOnce(&[String]) -> Result<Query, Diagnostic>,
    ) -> Result<Prepared, Diagnostic> {
        let (meta_keys, user_views) = exec::read_catalog(conn).map_err(execution_failure)?;
        self.plan_with(meta_keys, user_views, session, surface, compile)
    }

    /// Builds the typed query with `compile` (given the live metadata keys)
    /// and plans it for `surface` against that catalog.
    fn plan_with(
        &self,
        meta_keys: Vec<String>,
        user_views: std::collections::BTreeMap<String, String>,
        session: &Session,
        surface: Surface,
        compile: impl FnOnce(&[String]) -> Result<Query, Diagnostic>,
    ) -> Result<Prepared, Diagnostic> {
        let query = compile(&meta_keys)?;
        let cat = Catalog {
            user_views,
            meta_keys,
            current: session.current.clone(),
            agent: session.agent.clone(),
            now: self.clock.claims_now(),
        };
        let plan = plan::plan(&query, surface, &cat)?;
        Ok(Prepared { query, plan })
    }

    /// Runs a prepared read plan on `conn` (a read-only connection) as ONE
    /// statement, under the time limit.
    pub fn execute_read(
        &self,
        conn: &mut Connection,
        prepared: &Prepared,
    ) -> Result<Output, Diagnostic> {
        let opts = self.options(None);
        self.execute_read_with(conn, prepared, &opts)
    }

    /// [`Engine::execute_read`] under explicit optimizer options.
    pub fn execute_read_with(
        &self,
        conn: &mut Connection,
        prepared: &Prepared,
        opts: &Options,
    ) -> Result<Output, Diagnostic> {
        exec::register_functions(conn).map_err(execution_failure)?;
        self.run_read_limited(conn, prepared, opts)
    }

    /// Runs a read plan on `conn`, whose SQL functions are registered, under
    /// the time limit.
    fn run_read_limited(
        &self,
        conn: &mut Connection,
        prepared: &Prepared,
        opts: &Options,
    ) -> Result<Output, Diagnostic> {
        let st = exec::read_statement_with(&prepared.plan, opts);
        self.run_statement_limited(conn, &prepared.plan, &st)
    }

    /// Runs read plan `plan`'s lowered statement `st` on `conn` (SQL
    /// functions registered) under the time limit; its rows shaped under
    /// the same deadline.
    fn run_statement_limited(
        &self,
        conn: &mut Connection,
        plan: &Plan,
        st: &Statement,
    ) -> Result<Output, Diagnostic> {
        let deadline = Instant::now() + self.time_limit;
        let cancel = self.cancel.clone();
        conn.progress_handler(
            1000,
            Some(move || cancel.is_cancelled() || Instant::now() >= deadline),
        )
        .map_err(execution_failure)?;
        let shaping = exec::Deadline::at(deadline).with_pause(self.shaping_pause);
        let out = exec::fetch(conn, st, &plan.main, &shaping);
        let _ = conn.progress_handler(0, None::<fn() -> bool>);
        out.map_err(|e| self.exec_diag(e))
    }

    /// Runs a write plan in ONE store transaction: all its events or none.
    /// The transaction holds the write lock for the writes and the final
    /// statement's rows only; grouping the rows (result shaping) runs after
    /// the commit, under the same time limit (issue 14). Past the limit
    /// during that shaping, when the query appended events, the answer is
    /// still a success: [`Engine::recorded_unshaped`] (they stay recorded;
    /// issue 19).
    pub fn execute_write(
        &self,
        store: &Store,
        session: &Session,
        plan: &Plan,
    ) -> Result<Output, Diagnostic> {
        let clock = self.clock;
        let deadline = Instant::now() + self.time_limit;
        let shaping = exec::Deadline::at(deadline).with_pause(self.shaping_pause);
        let cancel = self.cancel.clone();
        if cancel.is_cancelled() {
            return Err(self.cancelled_error());
        }
        let cancelled = self.cancel.clone();
        let written = store
            .write_with(|tx| -> Result<mutate::Written, WriteError> {
                // Read inside BEGIN IMMEDIATE: claims are judged at the
                // moment this transaction holds the write lock, by the
                // store's clock (never a caller's fixed stamp).
                let now = mutate::WriteClock {
                    stamp: clock.now(),
                    claims: clock.claims_now(),
                };
                tx.init_once(exec::register_functions)
                    .map_err(ExecError::from)?;
                let watch = watch::Watchdog::start_sqlite(
                    &cancel,
                    deadline,
                    tx.conn().get_interrupt_handle(),
                );
                let out = mutate::run_write(tx, plan, session, now);
                drop(watch);
                // A cancellation that landed between statements (where SQLite's
                // interrupt is a no-op) still rolls the whole write back.
                if out.is_ok() && cancelled.is_cancelled() {
                    return Err(WriteError::Exec(ExecError::Interrupted));
                }
                out
            })
            .map_err(|e| self.write_diag(e))?;
        match exec::shape(written.fetched, &shaping) {
            Ok(out) => Ok(out),
            // Cancelled or past the limit after the commit: the writes stand.
            Err(ExecError::Interrupted) if written.appended > 0 => {
                Ok(self.recorded_unshaped(written.appended, written.tasks))
            }
            Err(e) => Err(self.exec_diag(e)),
        }
    }

    /// The statements `text` compiles to on `surface`, with their
    /// parameters and `EXPLAIN QUERY PLAN` rows (nothing is executed).
    pub fn explain(
        &self,
        store: &Store,
        session: &Session,
        text: &str,
        surface: Surface,
    ) -> Result<Explain, Diagnostic> {
        let conn = store.reader().map_err(execution_failure)?;
        let prepared = self.prepare(&conn, session, text, surface)?;
        exec::register_functions(&conn).map_err(execution_failure)?;
        let (statements, ir, optimized, rules) = if prepared.plan.writes() {
            (mutate::statements(&prepared.plan), None, None, Vec::new())
        } else {
            let opts = self.options(Some(TEXT_BUDGET));
            let naive = exec::read_ir(&prepared.plan);
            let (after, fired) = crate::tq::ir::optimize(naive.clone(), &opts);
            let rules = fired.0.iter().map(|(k, v)| format!("{k} ×{v}")).collect();
            (
                vec![sql::lower_ir(&after)],
                Some(naive.to_string()),
                Some(after.to_string()),
                rules,
            )
        };
        let mut out = Vec::new();
        for st in statements {
            let plan = query_plan(&conn, &st).map_err(execution_failure)?;
            out.push(ExplainedStatement {
                params: st.params.iter().map(|p| p.to_string()).collect(),
                sql: st.sql,
                plan,
            });
        }
        Ok(Explain {
            ir,
            optimized,
            rules,
            statements: out,
        })
    }
}

/// `EXPLAIN QUERY PLAN` rows of `st` on `conn`, indented two spaces per level.
pub fn query_plan(conn: &Connection, st: &Statement) -> rusqlite::Result<Vec<String>> {
    let eqp = sql::explain_query_plan(st);
    let mut stmt = conn.prepare(&eqp.sql)?;
    let mut rows = stmt.query(rusqlite::params_from_iter(eqp.params.iter()))?;
    let mut depth: Vec<(i64, usize)> = Vec::new();
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        let id: i64 = r.get(0)?;
        let parent: i64 = r.get(1)?;
        let detail: String = r.get(3)?;
        let level = depth
            .iter()
            .find(|(i, _)| *i == parent)
            .map(|(_, l)| l + 1)
            .unwrap_or(0);
        depth.push((id, level));
        out.push(format!("{}{detail}", "  ".repeat(level)));
    }
    Ok(out)
}
