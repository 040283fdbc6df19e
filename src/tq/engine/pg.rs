//! The engine's doors on PostgreSQL (issue 21; spec/team.md "The same on
//! both engines"): the same compile → plan → IR → rewrites as on SQLite,
//! lowered through [`POSTGRES`](crate::tq::sql::POSTGRES) and run on a
//! [`PgStore`] as ONE statement, its rows read into the same [`Output`]
//! (`exec_pg.rs`), so the text and the structured results are SQLite's.
//!
//! The first read of a text on a connection runs in one `READ ONLY`,
//! `REPEATABLE READ` transaction: the catalog statement (metadata keys,
//! user views; the same statement as on SQLite) and then the query's
//! statement, under `statement_timeout` set to what is left of the time
//! limit; the compiled statement is kept (`tq::cache`). A later read of the
//! same text is ONE round trip: the kept statement gated on its catalog
//! (`exec_pg::gated`) on the connection in read mode
//! ([`PgStore::read_client`]). Past the limit the answer is the same
//! sentence as SQLite's ([`Engine::limit_error`]).

use std::time::Instant;

use super::watch::Watchdog;
use super::{Engine, Explain, ExplainedStatement};
use crate::session::Session;
use crate::store::pg::PgStore;
use crate::tq::ast::{Query, Surface};
use crate::tq::cache;
use crate::tq::diagnostic::Diagnostic;
use crate::tq::exec::{self, Deadline, ExecError};
use crate::tq::exec_pg;
use crate::tq::front;
use crate::tq::ir::Options;
use crate::tq::render::{Output, TEXT_BUDGET, render};

/// A store failure as the executor's PostgreSQL error (the server's
/// sentence, once).
fn store_exec(e: crate::store::StoreError) -> ExecError {
    match e {
        crate::store::StoreError::Postgres(m) => ExecError::Postgres(m),
        other => ExecError::Postgres(other.to_string()),
    }
}

impl Engine {
    /// Compiles and runs `text` on `surface` against the PostgreSQL store
    /// `store`; `Ok` is the text of spec/tq.md §4, byte-identical to
    /// [`Engine::run`] on a SQLite store holding the same events.
    /// Errors: the diagnostic (parse, query, time limit, or execution),
    /// worded as on SQLite.
    pub fn run_pg(
        &self,
        store: &PgStore,
        session: &Session,
        text: &str,
        surface: Surface,
    ) -> Result<String, Diagnostic> {
        let opts = self.options(Some(TEXT_BUDGET));
        self.run_with_pg(store, session, surface, &opts, Some(text), |keys| {
            front::compile(text, keys)
        })
        .map(|o| render(&o))
    }

    /// [`Engine::run_pg`]'s structured result (as [`Engine::run_value`]).
    pub fn run_value_pg(
        &self,
        store: &PgStore,
        session: &Session,
        text: &str,
        surface: Surface,
    ) -> Result<Output, Diagnostic> {
        let opts = self.options(None);
        self.run_with_pg(store, session, surface, &opts, Some(text), |keys| {
            front::compile(text, keys)
        })
    }

    /// Plans and runs an already typed `query` on PostgreSQL (as
    /// [`Engine::run_query_value`]).
    pub fn run_query_value_pg(
        &self,
        store: &PgStore,
        session: &Session,
        query: &Query,
        surface: Surface,
    ) -> Result<Output, Diagnostic> {
        let opts = self.options(None);
        self.run_with_pg(store, session, surface, &opts, None, |_| Ok(query.clone()))
    }

    /// [`Engine::run_value_pg`] under explicit optimizer options (the
    /// differential tests run both `enabled` and not).
    pub fn run_value_pg_with(
        &self,
        store: &PgStore,
        session: &Session,
        text: &str,
        surface: Surface,
        opts: &Options,
    ) -> Result<Output, Diagnostic> {
        self.run_with_pg(store, session, surface, opts, Some(text), |keys| {
            front::compile(text, keys)
        })
    }

    fn run_with_pg(
        &self,
        store: &PgStore,
        session: &Session,
        surface: Surface,
        opts: &Options,
        text: Option<&str>,
        compile: impl FnOnce(&[String]) -> Result<Query, Diagnostic>,
    ) -> Result<Output, Diagnostic> {
        if self.cancel.is_cancelled() {
            return Err(self.cancelled_error());
        }
        let deadline = Instant::now() + self.time_limit;
        let key = cache::key_for(text, surface, session, opts);
        // A query compiled on this connection before: ONE round trip, its
        // statement gated on the catalog it was compiled against, in read
        // mode (read-only, the time limit as `statement_timeout`). A
        // changed catalog falls through to the full read below.
        if let Some(k) = &key
            && let Some((catalog, compiled)) = store
                .with_slot(|c: &mut cache::CompileCache| c.peek(k))
                .flatten()
        {
            let mut client = store
                .read_client(self.time_limit)
                .map_err(|e| self.exec_diag(store_exec(e)))?;
            let _watchdog = Watchdog::start(&self.cancel, store, client.cancel_token());
            let st = match compiled.gated_at(|| self.clock.claims_now()) {
                Some(st) => st,
                None => std::borrow::Cow::Owned(exec_pg::gated(
                    &compiled.statement_at(|| self.clock.claims_now()),
                    &catalog.user_views,
                    &compiled.named_keys,
                )),
            };
            match exec_pg::fetch_rows_cached(
                &mut client,
                &mut store.read_stmts(),
                &st,
                &compiled.plan.main,
            ) {
                Ok(fetched) => {
                    let shaping = Deadline::at(deadline).with_pause(self.shaping_pause);
                    return exec::shape(fetched, &shaping).map_err(|e| self.exec_diag(e));
                }
                Err(e) if exec_pg::is_stale_catalog(&e) => {}
                Err(e) => return Err(self.exec_diag(e)),
            }
        }
        let fetched = {
            // Four round trips: begin + time limit, the catalog statement,
            // the query's statement (both prepared once per connection),
            // commit; in whatever mode the connection is (the transaction
            // sets its own), so a write query found here costs no change.
            let started = Instant::now();
            let mut client = store.any_mode_client();
            let _watchdog = Watchdog::start(&self.cancel, store, client.cancel_token());
            let (keys, views) = exec_pg::begin_read_with_catalog(
                &mut client,
                &mut store.read_stmts(),
                self.time_limit,
            )
            .map_err(|e| self.exec_diag(e))?;
            let catalog = std::sync::Arc::new(crate::store::CatalogData {
                meta_keys: keys,
                user_views: views,
            });
            let hit = key.as_ref().and_then(|k| {
                store
                    .with_slot(|c: &mut cache::CompileCache| c.get(&catalog, k))
                    .flatten()
            });
            let compiled = match hit {
                Some(c) => c,
                None => {
                    let prepared = match self.plan_with(
                        catalog.meta_keys.clone(),
                        catalog.user_views.clone(),
                        session,
                        surface,
                        compile,
                    ) {
                        Ok(p) => p,
                        Err(d) => {
                            exec_pg::end_read(&mut client, false);
                            return Err(d);
                        }
                    };
                    if prepared.plan.writes() {
                        exec_pg::end_read(&mut client, false);
                        drop(_watchdog);
                        drop(client);
                        return self.execute_write_pg(store, session, &prepared.plan);
                    }
                    let (ir, _) = exec::optimized_ir(&prepared.plan, opts);
                    let (statement, now_slots) =
                        crate::tq::sql::lower_ir_clocked(&ir, &crate::tq::sql::POSTGRES);
                    let named_keys = text
                        .map(|t| exec_pg::named_keys(&catalog, t))
                        .unwrap_or_default();
                    let gated = exec_pg::gated(&statement, &catalog.user_views, &named_keys);
                    let c = std::sync::Arc::new(cache::Compiled {
                        plan: prepared.plan,
                        statement,
                        now_slots,
                        named_keys,
                        last_run: cache::LastRun::default(),
                        gated: Some(gated),
                    });
                    if let Some(k) = key {
                        let _ = store.with_slot(|cc: &mut cache::CompileCache| {
                            cc.put(&catalog, k, std::sync::Arc::clone(&c))
                        });
                    }
                    c
                }
            };
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                exec_pg::end_read(&mut client, false);
                return Err(self.limit_error());
            }
            // The limit set at the start stands unless planning took a
            // noticeable part of it: then it is shortened to what is left.
            if started.elapsed() > std::time::Duration::from_millis(5)
                && let Err(e) = client.batch_execute(&format!(
                    "SET LOCAL statement_timeout = {}",
                    left.as_millis().clamp(1, i32::MAX as u128)
                ))
            {
                exec_pg::end_read(&mut client, false);
                return Err(self.exec_diag(exec_pg::classify(e)));
            }
            let st = compiled.statement_at(|| self.clock.claims_now());
            let out = exec_pg::fetch_rows_cached(
                &mut client,
                &mut store.read_stmts(),
                &st,
                &compiled.plan.main,
            );
            exec_pg::end_read(&mut client, out.is_ok());
            out.map_err(|e| self.exec_diag(e))?
        };
        let shaping = Deadline::at(deadline).with_pause(self.shaping_pause);
        exec::shape(fetched, &shaping).map_err(|e| self.exec_diag(e))
    }

    /// Runs a write plan on PostgreSQL in ONE [`PgStore::write_tx`]
    /// transaction (target selection, appends and folds, the final rows;
    /// the project's write lock held, retried on serialization failures),
    /// under the time limit (`statement_timeout`); the rows are shaped
    /// after the commit, as [`Engine::execute_write`] does on SQLite (past
    /// the limit while shaping, the writes stand:
    /// [`Engine::recorded_unshaped`]). Errors: the diagnostic, worded as on
    /// SQLite; nothing is written.
    pub fn execute_write_pg(
        &self,
        store: &PgStore,
        session: &Session,
        plan: &crate::tq::plan::Plan,
    ) -> Result<Output, Diagnostic> {
        use crate::store::StoreError;
        use crate::tq::mutate::WriteClock;
        use crate::tq::mutate_pg::{self, PgWriteError};
        let clock = self.clock;
        let deadline = Instant::now() + self.time_limit;
        let shaping = Deadline::at(deadline).with_pause(self.shaping_pause);
        if self.cancel.is_cancelled() {
            return Err(self.cancelled_error());
        }
        let mut failure: Option<exec::ExecError> = None;
        let token = store.client().cancel_token();
        let _watchdog = Watchdog::start(&self.cancel, store, token);
        let written = store.write_tx(|tx| {
            failure = None;
            let left = deadline.saturating_duration_since(Instant::now());
            let run = exec_pg::set_limit(tx.tx(), left.max(std::time::Duration::from_millis(1)))
                .map_err(PgWriteError::Exec)
                .and_then(|()| {
                    let now = WriteClock {
                        stamp: clock.now(),
                        claims: clock.claims_now(),
                    };
                    mutate_pg::run_write(tx, plan, session, now)
                });
            match run {
                Ok(w) if self.cancel.is_cancelled() => {
                    drop(w);
                    failure = Some(exec::ExecError::Interrupted);
                    Err(crate::store::pg::write::TxError::Fail(
                        StoreError::Postgres(String::new()),
                    ))
                }
                Ok(w) => Ok(w),
                Err(PgWriteError::Exec(e)) => {
                    failure = Some(e);
                    Err(crate::store::pg::write::TxError::Fail(
                        StoreError::Postgres(String::new()),
                    ))
                }
                Err(PgWriteError::Tx(t)) => Err(t),
            }
        });
        drop(_watchdog);
        let written = match written {
            Ok(w) => w,
            Err(e) => {
                return Err(match failure {
                    Some(f) => self.exec_diag(f),
                    // A cancel that reached the server at the commit.
                    None if self.cancel.is_cancelled() => self.cancelled_error(),
                    None => super::store_failure(e),
                });
            }
        };
        match exec::shape(written.fetched, &shaping) {
            Ok(out) => Ok(out),
            Err(exec::ExecError::Interrupted) if written.appended > 0 => {
                Ok(self.recorded_unshaped(written.appended, written.tasks))
            }
            Err(e) => Err(self.exec_diag(e)),
        }
    }

    /// The statement `text` compiles to on `surface` against `store`, with
    /// its parameters and PostgreSQL's `EXPLAIN` lines (nothing is
    /// executed); the IR before and after the rewrites as
    /// [`Engine::explain`]; a write query's segments as on SQLite (the
    /// carried set shown as the empty JSON array). Errors: the diagnostic.
    pub fn explain_pg(
        &self,
        store: &PgStore,
        session: &Session,
        text: &str,
        surface: Surface,
    ) -> Result<Explain, Diagnostic> {
        let (keys, views) = {
            let mut client = store.client();
            let mut tx = exec_pg::read_transaction(&mut client, Some(self.time_limit))
                .map_err(|e| self.exec_diag(e))?;
            let c = exec_pg::read_catalog(&mut tx).map_err(|e| self.exec_diag(e))?;
            let _ = tx.commit();
            c
        };
        let prepared =
            self.plan_with(keys, views, session, surface, |k| front::compile(text, k))?;
        if prepared.plan.writes() {
            return self
                .execute_write_pg(store, session, &prepared.plan)
                .map(|_| Explain {
                    ir: None,
                    optimized: None,
                    rules: Vec::new(),
                    statements: Vec::new(),
                });
        }
        let opts = self.options(Some(TEXT_BUDGET));
        let naive = exec::read_ir(&prepared.plan);
        let (after, fired) = crate::tq::ir::optimize(naive.clone(), &opts);
        let rules = fired.0.iter().map(|(k, v)| format!("{k} ×{v}")).collect();
        let st = crate::tq::sql::lower_ir_with(&after, &crate::tq::sql::POSTGRES);
        let plan = exec_pg::query_plan(&mut store.client(), &st).map_err(|e| self.exec_diag(e))?;
        Ok(Explain {
            ir: Some(naive.to_string()),
            optimized: Some(after.to_string()),
            rules,
            statements: vec![ExplainedStatement {
                params: st.params.iter().map(|p| p.to_string()).collect(),
                sql: st.sql,
                plan,
            }],
        })
    }
}
