//! Write queries on both engines (issue 21; spec/team.md "The same on both
//! engines"): random stores seeded on SQLite and pushed to a fresh
//! PostgreSQL schema, random pipelines with mutation steps (the generator
//! of `tq_plan_mutate.rs`: set-status!, set!, link!, unlink!, claim!,
//! release!, several per query) run through each engine's one write
//! transaction at the same fixed clock. The outputs, the number of events
//! recorded and the resulting graphs (PostgreSQL's events imported into a
//! fresh SQLite store) must be equal.

mod common;
mod reference;

use std::collections::BTreeSet;

use cairn::clock::Clock;
use cairn::session::Session;
use cairn::store::Store;
use cairn::store::pg::{PgStore, PgTarget, source_events};
use cairn::tq::ast::*;
use cairn::tq::engine::Engine;
use cairn::tq::plan::{Catalog, plan};
use cairn::tq::render::render;
use proptest::prelude::*;
use proptest::test_runner::Config;
use reference::Graph;
use reference::arbitrary::*;

fn mutation() -> impl Strategy<Value = Step> {
    let target = (0usize..14).prop_map(|k| {
        if k >= 12 {
            "2025-11-30-missing".to_string()
        } else {
            slug(k)
        }
    });
    prop_oneof![
        prop::sample::select(Status::ALL.to_vec())
            .prop_map(|s| Step::Mutate(Mutation::SetStatus(s))),
        (
            prop::sample::select(vec!["priority", "objective", "owner"]),
            prop::sample::select(META_VALUES.to_vec())
        )
            .prop_map(|(k, v)| Step::Mutate(Mutation::SetMeta {
                key: k.into(),
                value: v.into()
            })),
        (any_edge(), target.clone())
            .prop_map(|(edge, target)| Step::Mutate(Mutation::Link { edge, target })),
        (any_edge(), target)
            .prop_map(|(edge, target)| Step::Mutate(Mutation::Unlink { edge, target })),
        prop_oneof![Just(1i64), Just(900)]
            .prop_map(|seconds| Step::Mutate(Mutation::Claim { seconds, agent: () })),
        Just(Step::Mutate(Mutation::Release { agent: () })),
    ]
}

/// Steps after a mutation avoid timestamps (the engine stamps events with
/// the wall clock; the reference has no clock).
fn post_step() -> impl Strategy<Value = Step> {
    prop_oneof![
        trav().prop_map(Step::Traverse),
        (-1i64..4).prop_map(Step::Take),
        (
            prop_oneof![text_field(), num_field()],
            prop::sample::select(vec![Dir::Asc, Dir::Desc])
        )
            .prop_map(|(f, d)| Step::Sort(f, d)),
        (prop::sample::select(vec!["active", "completed", "open"]))
            .prop_map(|s| Step::Where(Pred::Eq(Value::Field(Field::Status), Lit::Str(s.into())))),
        Just(Step::Enrich),
        prop::collection::vec(any_edge(), 1..3).prop_map(Step::Closure),
        mutation(),
    ]
}

fn write_query() -> impl Strategy<Value = Query> {
    (
        source(),
        prop::collection::vec(transformer(0), 0..2),
        mutation(),
        prop::collection::vec(post_step(), 0..3),
        prop_oneof![
            Just(None),
            Just(Some(Step::Ids)),
            Just(Some(Step::Count)),
            Just(Some(Step::GroupBy(Field::Status))),
            prop::collection::vec(prop_oneof![text_field(), num_field()], 1..3)
                .prop_map(|f| Some(Step::Select(f))),
        ],
    )
        .prop_map(|(src, pre, m, post, shaper)| {
            let mut steps: Vec<Step> = pre;
            steps.push(m);
            steps.extend(post);
            steps.extend(shaper);
            Query {
                source: Spanned::new(src, 0..0),
                steps: steps.into_iter().map(|s| Spanned::new(s, 0..0)).collect(),
            }
        })
}

type Shape = (
    Vec<(
        String,
        String,
        Option<String>,
        Vec<(String, String)>,
        Option<(String, i64)>,
    )>,
    BTreeSet<(String, String, &'static str)>,
);

/// The graph's structure by slug (statuses, parents, metadata, claim
/// registers, lateral edges).
fn shape(g: &Graph) -> Shape {
    let slug = |id: &i64| g.tasks[id].slug.clone();
    let tasks = g
        .tasks
        .values()
        .map(|t| {
            (
                t.slug.clone(),
                t.status.clone(),
                t.parent.as_ref().map(slug),
                t.meta.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
                // The live claim: the raw register may keep a claim its
                // task's completion (stamped a second earlier) did not clear.
                t.claim.clone().filter(|(_, u)| {
                    *u > g.now && !matches!(t.status.as_str(), "completed" | "abandoned")
                }),
            )
        })
        .collect();
    let edges = g
        .edges
        .iter()
        .map(|(s, d, e)| (slug(s), slug(d), e.as_str()))
        .collect();
    (tasks, edges)
}

fn check(m: &Model, q: &Query, cur: usize) -> Result<(), String> {
    let Some(url) = common::pg::url() else {
        return Ok(());
    };
    let (_dir, store) = seed(m);
    let pg = PgStore::open(&PgTarget::parse(&url, None).unwrap()).unwrap();
    pg.push(&source_events(&store).unwrap(), |_, _| {}).unwrap();
    let current = slug(cur % m.tasks.len());
    let mut session = Session::new();
    session.current = Some(current.clone());
    session.agent = Some(REF_AGENT.to_string());
    let cat = Catalog {
        current: Some(current.clone()),
        agent: Some(REF_AGENT.to_string()),
        now: REF_NOW,
        ..Default::default()
    };
    let p = plan(q, Surface::Write, &cat).map_err(|d| format!("plan: {}", d.message))?;
    let engine = Engine::new().with_clock(Clock::Fixed(REF_NOW));
    let (before_s, before_p) = (store.event_count().unwrap(), pg.event_count().unwrap());
    let text = |o: Result<cairn::tq::render::Output, cairn::tq::Diagnostic>| {
        o.map(|o| render(&o)).unwrap_or_else(|d| d.render_plain())
    };
    let on_sqlite = text(engine.execute_write(&store, &session, &p));
    let on_pg = text(engine.execute_write_pg(&pg, &session, &p));
    if on_sqlite != on_pg {
        return Err(format!("output\nsqlite:   {on_sqlite}\npostgres: {on_pg}"));
    }
    let recorded_s = store.event_count().unwrap() - before_s;
    let recorded_p = pg.event_count().unwrap() - before_p;
    if recorded_s != recorded_p {
        return Err(format!(
            "recorded {recorded_s} events on SQLite, {recorded_p} on PostgreSQL"
        ));
    }
    let dir = tempfile::tempdir().unwrap();
    let copy = Store::open(&dir.path().join("cairn.db")).unwrap();
    copy.import(&pg.events().unwrap()).unwrap();
    let (a, b) = (
        shape(&Graph::load(store.conn())),
        shape(&Graph::load(copy.conn())),
    );
    if a != b {
        return Err(format!("graph\nsqlite:   {a:?}\npostgres: {b:?}"));
    }
    Ok(())
}

proptest! {
    #![proptest_config(Config { cases: 60, failure_persistence: None, ..Config::default() })]

    #[test]
    fn write_queries_answer_and_write_the_same_on_both_engines(m in model(), q in write_query(), cur in 0usize..12) {
        if let Err(e) = check(&m, &q, cur) {
            prop_assert!(false, "{}\nquery: {}", e, cairn::tq::print(&q));
        }
    }
}
