//! The compiled SQL's answers equal the reference evaluator's (tests/reference)
//! on random small graphs (cycles included) and random well-typed read
//! queries over the whole vocabulary (built-in views included), seeded
//! through `Store::write`. 2,000 cases per run, 3 queries each.

mod reference;

use cairn::store::{EdgeType, Status};
use cairn::tq::ast::*;
use cairn::tq::exec;
use cairn::tq::plan::{Catalog, plan};
use proptest::prelude::*;
use proptest::test_runner::Config;
use reference::arbitrary::*;
use reference::{Eval, Graph};

/// Runs `q` both ways on the seeded store; `Err` describes a mismatch.
fn compare(conn: &rusqlite::Connection, g: &Graph, q: &Query, current: &str) -> Result<(), String> {
    let cat = Catalog {
        current: Some(current.to_string()),
        agent: Some(REF_AGENT.to_string()),
        now: REF_NOW,
        ..Default::default()
    };
    let p = plan(q, Surface::Read, &cat).map_err(|d| format!("plan: {}", d.message))?;
    let got = exec::run_read(conn, &p).map_err(|e| format!("exec: {e}"))?;
    let want = Eval {
        g,
        current: Some(current.to_string()),
    }
    .output(&p.main);
    if got == want {
        Ok(())
    } else {
        Err(format!(
            "mismatch\nsql: {}\ngot:  {got:?}\nwant: {want:?}",
            exec::read_statement(&p).sql
        ))
    }
}

proptest! {
    #![proptest_config(Config { cases: 2000, failure_persistence: None, ..Config::default() })]

    #[test]
    fn compiled_equals_reference(m in model(), qs in prop::collection::vec(query(), 3), cur in 0usize..12) {
        let (_dir, store) = seed(&m);
        let g = Graph::load(store.conn());
        let conn = store.reader().unwrap();
        exec::register_functions(&conn).unwrap();
        let current = slug(cur % m.tasks.len());
        for q in &qs {
            if let Err(e) = compare(&conn, &g, q, &current) {
                prop_assert!(false, "{}\nquery: {:?}", e, q);
            }
        }
    }
}

fn q(source: Source, steps: Vec<Step>) -> Query {
    Query {
        source: sp(source),
        steps: steps.into_iter().map(sp).collect(),
    }
}

/// Fixed regression cases: shapes the generator found or that are easy to
/// get wrong (cycles in parent pointers and related edges, reflection rows
/// mixed with tasks, absent values under sort/not, empty or-else).
#[test]
fn fixed_regressions() {
    let t = |status, parent, meta: Vec<(usize, usize)>, obs| MTask {
        status,
        parent,
        meta,
        obs,
        ts: BASE_TS,
        claim: None,
    };
    let m = Model {
        tasks: vec![
            t(Status::Active, Some(1), vec![(2, 3)], 2),
            t(Status::Completed, Some(0), vec![(0, 0)], 0),
            t(Status::Open, None, vec![], 1),
            t(Status::Blocked, Some(2), vec![(0, 1), (1, 2)], 0),
        ],
        edges: vec![
            (0, 1, EdgeType::Related),
            (1, 2, EdgeType::Related),
            (2, 0, EdgeType::Related),
            (3, 0, EdgeType::DependsOn),
        ],
    };
    let (_dir, store) = seed(&m);
    let g = Graph::load(store.conn());
    let conn = store.reader().unwrap();
    exec::register_functions(&conn).unwrap();
    let follow = |edge| Trav {
        dir: TravDir::Follow,
        edge,
    };
    let cases = vec![
        q(
            Source::Current,
            vec![Step::Closure(vec![EdgeType::PhaseOf]), Step::Ids],
        ),
        q(
            Source::All,
            vec![Step::Closure(vec![EdgeType::Related, EdgeType::DependsOn])],
        ),
        q(
            Source::Fields,
            vec![
                Step::SetOp(SetOp::Union, Box::new(q(Source::Active, vec![]))),
                Step::Sort(Field::Meta("priority".into()), Dir::Asc),
                Step::Select(vec![
                    Field::Prop(Prop::Origin),
                    Field::ObsCount,
                    Field::Parent,
                ]),
            ],
        ),
        q(
            Source::All,
            vec![
                Step::Where(Pred::Not(Box::new(Pred::Eq(
                    Value::Field(Field::Meta("priority".into())),
                    Lit::Str("high".into()),
                )))),
                Step::Sort(Field::StatusTs, Dir::Asc),
                Step::Enrich,
            ],
        ),
        q(
            Source::Dormant,
            vec![
                Step::Where(Pred::Has(Field::Depot)),
                Step::SetOp(
                    SetOp::OrElse,
                    Box::new(q(Source::Schema, vec![Step::Take(3)])),
                ),
                Step::GroupBy(Field::Prop(Prop::Category)),
            ],
        ),
        q(
            Source::All,
            vec![
                Step::Where(Pred::Quantified(
                    Quant::All,
                    follow(EdgeType::DependsOn),
                    Box::new(Pred::Compare(
                        Cmp::Ge,
                        Value::Count(follow(EdgeType::Related)),
                        1.0,
                    )),
                )),
                Step::GroupBy(Field::DisplayName),
            ],
        ),
        q(Source::View("plan".into()), vec![Step::Count]),
        q(Source::View("knowledge".into()), vec![]),
    ];
    for c in &cases {
        if let Err(e) = compare(&conn, &g, c, &slug(0)) {
            panic!("{e}\nquery: {c:?}");
        }
    }
}
