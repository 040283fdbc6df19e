//! The optimizer's oracle on both engines (spec/team.md "The same on both
//! engines"; docs/planner.md "Testing the rewrites"): on random small stores
//! (seeded on SQLite, their events pushed to a fresh PostgreSQL schema) and
//! random queries (the rule-reaching generator of `tq_plan_optimizer.rs`
//! and the whole-vocabulary one of `tq_plan_reference.rs`), PostgreSQL's
//! answer optimized and unoptimized equals SQLite's optimized and
//! unoptimized answer and the reference evaluator's.

mod common;
mod reference;

use cairn::store::pg::{PgStore, PgTarget, source_events};
use cairn::tq::ast::*;
use cairn::tq::exec;
use cairn::tq::exec_pg;
use cairn::tq::ir::Options;
use cairn::tq::plan::{Catalog, Plan, plan};
use cairn::tq::render::Output;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use reference::arbitrary::*;
use reference::{Eval, Graph};

/// Stores per property (each a fresh PostgreSQL schema).
const CASES: u32 = 40;

fn planned(q: &Query, current: &str) -> Result<Plan, String> {
    let cat = Catalog {
        current: Some(current.to_string()),
        agent: Some(REF_AGENT.to_string()),
        now: REF_NOW,
        ..Default::default()
    };
    plan(q, Surface::Read, &cat).map_err(|d| format!("plan: {}", d.message))
}

/// The four runs of `q` (SQLite and PostgreSQL, optimized and not) and the
/// reference evaluator's answer; `Err` describes the first difference.
fn compare(
    conn: &rusqlite::Connection,
    pg: &PgStore,
    g: &Graph,
    q: &Query,
    current: &str,
) -> Result<(), String> {
    let p = planned(q, current)?;
    let on = Options {
        enabled: true,
        text_budget: Some(cairn::tq::render::TEXT_BUDGET),
        counters: true,
    };
    let off = Options {
        enabled: false,
        ..on
    };
    let want = Eval {
        g,
        current: Some(current.to_string()),
    }
    .output(&p.main);
    let run_sqlite = |o: &Options| -> Result<Output, String> {
        exec::run_read_with(conn, &p, o).map_err(|e| format!("sqlite: {e}"))
    };
    let run_pg = |o: &Options| -> Result<Output, String> {
        exec_pg::run_read_with(&mut pg.client(), &p, o).map_err(|e| {
            format!(
                "postgres: {e}\nsql: {}",
                exec_pg::read_statement_with(&p, o).sql
            )
        })
    };
    for (name, o) in [("optimized", &on), ("unoptimized", &off)] {
        let s = run_sqlite(o)?;
        let pgo = run_pg(o)?;
        if s != pgo || pgo != want {
            return Err(format!(
                "{name}: engines differ\nsql (postgres): {}\nsqlite:    {s:?}\npostgres:  {pgo:?}\nreference: {want:?}",
                exec_pg::read_statement_with(&p, o).sql
            ));
        }
    }
    Ok(())
}

/// Seeds SQLite with `m`, pushes its events to a fresh PostgreSQL schema and
/// runs `qs` through [`compare`]. `None`: PostgreSQL cannot start (not CI).
fn check_model(m: &Model, qs: &[Query], cur: usize) -> Option<Result<(), String>> {
    let url = common::pg::url()?;
    let (_dir, store) = seed(m);
    let pg = PgStore::open(&PgTarget::parse(&url, None).unwrap()).unwrap();
    pg.push(&source_events(&store).unwrap(), |_, _| {}).unwrap();
    assert_eq!(pg.digest().unwrap(), store.digest().unwrap());
    let g = Graph::load(store.conn());
    let conn = store.reader().unwrap();
    exec::register_functions(&conn).unwrap();
    let current = slug(cur % m.tasks.len());
    for q in qs {
        if let Err(e) = compare(&conn, &pg, &g, q, &current) {
            return Some(Err(format!("{e}\nquery: {}", cairn::tq::print(q))));
        }
    }
    Some(Ok(()))
}

fn run_property(queries: impl Strategy<Value = Vec<Query>>) {
    let mut runner = TestRunner::new(Config {
        cases: CASES,
        failure_persistence: None,
        ..Config::default()
    });
    let result = runner.run(&(model(), queries, 0usize..12), |(m, qs, cur)| {
        if let Some(Err(e)) = check_model(&m, &qs, cur) {
            prop_assert!(false, "{}", e);
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

#[test]
fn rule_reaching_queries_answer_the_same_on_both_engines() {
    run_property(prop::collection::vec(rule_query(), 4));
}

#[test]
fn whole_vocabulary_queries_answer_the_same_on_both_engines() {
    run_property(prop::collection::vec(query(), 4));
}
