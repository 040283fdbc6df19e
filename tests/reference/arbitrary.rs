//! Random graph models and random well-typed read queries over the whole
//! vocabulary (proptest strategies), and seeding a store with a model through
//! `Store::import` (a model may hold a phase-of cycle).

use cairn::store::event::new_event_id;
use cairn::store::{EdgeType, LoggedEvent, NewEvent, Status, Store};
use cairn::tq::ast::*;
use proptest::prelude::*;

pub const BASE_TS: i64 = 1_764_460_800; // 2025-11-30
pub const META_KEYS: [&str; 3] = ["priority", "objective", "display-name"];
pub const META_VALUES: [&str; 4] = ["high", "low", "ship it", "Alpha"];
/// The clock reading the tests plan and evaluate claims at, and the write
/// tests stamp events with: after every seeded event (they end before
/// `BASE_TS + 2 days`), so a mutation's event is the newest.
pub const REF_NOW: i64 = BASE_TS + 3 * 86_400;
/// The agents claims are recorded under; the tests' sessions act as the first.
pub const AGENTS: [&str; 2] = ["ana", "bob"];
/// The tests' own agent (the catalog's and the session's).
pub const REF_AGENT: &str = AGENTS[0];

/// A random graph model: tasks with statuses, parents, metadata,
/// observations and timestamps, plus lateral edges.
#[derive(Debug, Clone)]
pub struct Model {
    pub tasks: Vec<MTask>,
    pub edges: Vec<(usize, usize, EdgeType)>,
}

#[derive(Debug, Clone)]
pub struct MTask {
    pub status: Status,
    pub parent: Option<usize>,
    pub meta: Vec<(usize, usize)>,
    pub obs: usize,
    pub ts: i64,
    /// A claim by `AGENTS[agent]` until `REF_NOW + 600 * offset` (live when
    /// the offset is positive and the task is not dormant).
    pub claim: Option<(usize, i64)>,
}

pub fn slug(i: usize) -> String {
    format!(
        "2025-11-{:02}-task-{}",
        28 + i % 3,
        (b'a' + (i % 26) as u8) as char
    ) + &if i >= 26 {
        format!("-{}", i / 26)
    } else {
        String::new()
    }
}

pub fn model() -> impl Strategy<Value = Model> {
    (1usize..=12).prop_flat_map(|n| {
        let task = (
            prop::sample::select(Status::ALL.to_vec()),
            prop::option::of(0..n),
            prop::collection::vec((0..3usize, 0..4usize), 0..3),
            0usize..3,
            0i64..(4 * 86_400),
            prop::option::of((0..AGENTS.len(), -1i64..3)),
        )
            .prop_map(move |(status, parent, meta, obs, ts, claim)| MTask {
                status,
                parent,
                meta,
                obs,
                ts: BASE_TS - 2 * 86_400 + ts,
                claim,
            });
        let edge = (
            0..n,
            0..n,
            prop::sample::select(vec![EdgeType::DependsOn, EdgeType::Related]),
        );
        (
            prop::collection::vec(task, n),
            prop::collection::vec(edge, 0..(2 * n)),
        )
            .prop_map(|(tasks, edges)| Model { tasks, edges })
    })
}

/// Seeds a fresh store with the model through `Store::import` (one batch).
pub fn seed(m: &Model) -> (tempfile::TempDir, Store) {
    // A RAM-backed directory when there is one: 2,000 stores, no disk syncs.
    let shm = std::path::Path::new("/dev/shm");
    let dir = if shm.is_dir() {
        tempfile::tempdir_in(shm).unwrap()
    } else {
        tempfile::tempdir().unwrap()
    };
    let store = Store::open(&dir.path().join("cairn.db")).unwrap();
    let sid = "prop-session";
    let mut ev = Vec::new();
    for (i, t) in m.tasks.iter().enumerate() {
        ev.push(NewEvent::task_create(sid, t.ts - 100, &slug(i), None, None));
        if t.status != Status::Active {
            ev.push(NewEvent::update_status(sid, t.ts, &slug(i), t.status));
        }
        for (k, v) in &t.meta {
            ev.push(NewEvent::set_metadata(
                sid,
                t.ts,
                &slug(i),
                META_KEYS[*k],
                META_VALUES[*v],
            ));
        }
        if let Some((a, off)) = t.claim {
            ev.push(NewEvent::claim(
                sid,
                t.ts,
                &slug(i),
                AGENTS[a],
                REF_NOW + 600 * off,
            ));
        }
        for o in 0..t.obs {
            ev.push(NewEvent::observation(
                sid,
                t.ts,
                &slug(i),
                &format!("obs {o}"),
            ));
        }
    }
    for (i, t) in m.tasks.iter().enumerate() {
        if let Some(p) = t.parent
            && p != i
        {
            ev.push(NewEvent::fork(
                sid,
                t.ts,
                &slug(p),
                &slug(i),
                EdgeType::PhaseOf,
            ));
        }
    }
    for (a, b, ty) in &m.edges {
        if a != b {
            ev.push(NewEvent::link(sid, BASE_TS, &slug(*a), &slug(*b), *ty));
        }
    }
    // Imported, as another clone's log would be: a model may hold a
    // phase-of cycle, which a new write refuses (docs/store.md "Phase-of
    // cycles") but a merge can still bring; the queries must cope with it.
    let logged: Vec<LoggedEvent> = ev
        .into_iter()
        .map(|e| LoggedEvent {
            seq: 0,
            event_id: new_event_id(),
            task_id: e.task_id,
            event_type: e.event_type,
            ts: e.ts,
            session_id: e.session_id,
            prev_session_id: None,
            data: e.data,
        })
        .collect();
    store.import(&logged).unwrap();
    (dir, store)
}

pub fn sp<T>(t: T) -> Spanned<T> {
    Spanned::new(t, 0..0)
}

pub fn any_edge() -> impl Strategy<Value = EdgeType> {
    prop::sample::select(EdgeType::ALL.to_vec())
}

pub fn trav() -> impl Strategy<Value = Trav> {
    (any_edge(), prop::bool::ANY).prop_map(|(edge, f)| Trav {
        dir: if f { TravDir::Follow } else { TravDir::Back },
        edge,
    })
}

pub fn text_field() -> impl Strategy<Value = Field> {
    prop_oneof![
        Just(Field::Slug),
        Just(Field::Status),
        Just(Field::Description),
        Just(Field::Depot),
        Just(Field::Parent),
        Just(Field::DisplayName),
        Just(Field::ClaimedBy),
        Just(Field::Meta("priority".into())),
        Just(Field::Meta("objective".into())),
        Just(Field::Prop(Prop::Type)),
        Just(Field::Prop(Prop::Origin)),
        Just(Field::Prop(Prop::Category)),
        Just(Field::Prop(Prop::Class)),
    ]
}

pub fn ts_field() -> impl Strategy<Value = Field> {
    prop_oneof![
        Just(Field::CreatedTs),
        Just(Field::UpdatedTs),
        Just(Field::StatusTs),
        Just(Field::ClaimUntil)
    ]
}

pub fn num_field() -> impl Strategy<Value = Field> {
    prop_oneof![Just(Field::ObsCount), Just(Field::EdgeCount)]
}

pub fn any_field() -> impl Strategy<Value = Field> {
    prop_oneof![3 => text_field(), 1 => ts_field(), 1 => num_field()]
}

pub fn text_lit() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "active",
        "completed",
        "open",
        "high",
        "low",
        "Alpha",
        "ship it",
        "text",
        "number",
        "declared",
        "lateral",
        "step",
        "a",
        "task",
        "ana",
        "bob",
    ])
    .prop_map(String::from)
}

pub fn leaf() -> impl Strategy<Value = Pred> {
    let num_value = prop_oneof![
        num_field().prop_map(Value::Field),
        ts_field().prop_map(Value::Field),
        trav().prop_map(Value::Count),
    ];
    let number = prop_oneof![
        (-1i64..4).prop_map(|i| i as f64),
        Just(0.5),
        (BASE_TS - 3 * 86_400..BASE_TS + 3 * 86_400).prop_map(|t| t as f64),
        (BASE_TS - 86_400..BASE_TS + 86_400).prop_map(|t| (t + 2_208_988_800) as f64),
    ];
    let cmp = prop::sample::select(vec![Cmp::Gt, Cmp::Lt, Cmp::Ge, Cmp::Le]);
    let date = (-3i64..3).prop_map(|d| {
        time::OffsetDateTime::from_unix_timestamp(BASE_TS + d * 86_400)
            .unwrap()
            .date()
    });
    prop_oneof![
        (text_field(), text_lit()).prop_map(|(f, s)| Pred::Eq(Value::Field(f), Lit::Str(s))),
        (num_field(), 0i64..4).prop_map(|(f, i)| Pred::Eq(Value::Field(f), Lit::Int(i))),
        (trav(), 0i64..3).prop_map(|(t, i)| Pred::Eq(Value::Count(t), Lit::Int(i))),
        any_field().prop_map(Pred::Has),
        (text_field(), text_lit()).prop_map(|(f, s)| Pred::Matches(f, s)),
        (cmp, num_value, number).prop_map(|(c, v, n)| Pred::Compare(c, v, n)),
        (
            prop::sample::select(vec![DateOp::On, DateOp::Since, DateOp::Before]),
            ts_field(),
            date
        )
            .prop_map(|(o, f, d)| Pred::Date(o, f, d)),
    ]
}

pub fn pred() -> impl Strategy<Value = Pred> {
    leaf().prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 1..3).prop_map(Pred::And),
            prop::collection::vec(inner.clone(), 1..3).prop_map(Pred::Or),
            inner.clone().prop_map(|p| Pred::Not(Box::new(p))),
            (
                prop::sample::select(vec![Quant::All, Quant::Any, Quant::None]),
                trav(),
                inner
            )
                .prop_map(|(q, t, p)| Pred::Quantified(q, t, Box::new(p))),
        ]
    })
}

pub fn source() -> impl Strategy<Value = Source> {
    prop_oneof![
        3 => Just(Source::All),
        2 => Just(Source::Active),
        1 => Just(Source::Dormant),
        1 => Just(Source::Current),
        1 => Just(Source::Mine),
        1 => prop::sample::select(vec!["task-a", "TASK", "-1", "29", "b"]).prop_map(|s| Source::Node(s.into())),
        1 => search_text().prop_map(Source::Search),
        1 => Just(Source::Fields),
        1 => Just(Source::Edges),
        1 => Just(Source::Schema),
        1 => Just(Source::Views),
        2 => prop::sample::select(cairn::tq::registry::builtin_views().iter().map(|v| v.name).collect::<Vec<_>>())
            .prop_map(|n| Source::View(n.to_string())),
    ]
}

pub fn transformer(depth: u32) -> BoxedStrategy<Step> {
    let base = prop_oneof![
        trav().prop_map(Step::Traverse),
        pred().prop_map(Step::Where),
        (any_field(), prop::sample::select(vec![Dir::Asc, Dir::Desc]))
            .prop_map(|(f, d)| Step::Sort(f, d)),
        (-1i64..5).prop_map(Step::Take),
        Just(Step::Enrich),
        prop::collection::vec(any_edge(), 1..3).prop_map(Step::Closure),
    ];
    if depth == 0 {
        return base.boxed();
    }
    prop_oneof![
        6 => base,
        1 => (
            prop::sample::select(vec![SetOp::Union, SetOp::Intersect, SetOp::Minus, SetOp::OrElse]),
            set_query(depth - 1)
        )
            .prop_map(|(op, q)| Step::SetOp(op, Box::new(q))),
    ]
    .boxed()
}

pub fn set_query(depth: u32) -> BoxedStrategy<Query> {
    (source(), prop::collection::vec(transformer(depth), 0..4))
        .prop_map(|(s, steps)| Query {
            source: sp(s),
            steps: steps.into_iter().map(sp).collect(),
        })
        .boxed()
}

pub fn shaper() -> impl Strategy<Value = Option<Step>> {
    prop_oneof![
        2 => Just(None),
        1 => prop::collection::vec(any_field(), 1..3).prop_map(|f| Some(Step::Select(f))),
        1 => any_field().prop_map(|f| Some(Step::GroupBy(f))),
        1 => Just(Some(Step::Ids)),
        1 => Just(Some(Step::Count)),
    ]
}

pub fn query() -> impl Strategy<Value = Query> {
    (set_query(1), shaper()).prop_map(|(mut q, s)| {
        if let Some(s) = s {
            q.steps.push(sp(s));
        }
        q
    })
}

/// Leaves the optimizer rewrites: traversal counts compared with 0 and 1
/// (both spellings of "none" and "some": count-exists), `:edge-count` and
/// `:obs-count` against 0 and 1 (the counter columns, or `linked` without
/// them), `(has :parent)`.
pub fn rule_leaf() -> impl Strategy<Value = Pred> {
    let zero_one = prop_oneof![
        Just((Cmp::Gt, 0.0)),
        Just((Cmp::Ge, 1.0)),
        Just((Cmp::Lt, 1.0)),
        Just((Cmp::Le, 0.0)),
        Just((Cmp::Gt, 1.0)),
    ];
    prop_oneof![
        (trav(), 0i64..2).prop_map(|(t, i)| Pred::Eq(Value::Count(t), Lit::Int(i))),
        (trav(), zero_one.clone()).prop_map(|(t, (c, n))| Pred::Compare(c, Value::Count(t), n)),
        (num_field(), zero_one).prop_map(|(f, (c, n))| Pred::Compare(c, Value::Field(f), n)),
        (num_field(), 0i64..2).prop_map(|(f, i)| Pred::Eq(Value::Field(f), Lit::Int(i))),
        Just(Pred::Has(Field::Parent)),
        leaf(),
    ]
}

/// Predicates built from [`rule_leaf`] (nested under and/or/not, where the
/// rewrites must still reach them).
pub fn rule_pred() -> impl Strategy<Value = Pred> {
    rule_leaf().prop_recursive(2, 6, 2, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 1..3).prop_map(Pred::And),
            prop::collection::vec(inner.clone(), 1..3).prop_map(Pred::Or),
            inner.prop_map(|p| Pred::Not(Box::new(p))),
        ]
    })
}

/// Texts for `(search …)` over the generated observations (`obs N`):
/// words, a phrase, a prefix, nothing matching, nothing usable.
pub fn search_text() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "obs",
        "1",
        "obs 0",
        "\"obs 1\"",
        "ob*",
        "OBS 2",
        "zzz",
        "?",
    ])
    .prop_map(str::to_string)
}

/// Sources the set-operation rewrites inline as predicates (scans of the
/// task table), plus `(current)` and views.
pub fn table_source() -> impl Strategy<Value = Source> {
    prop_oneof![
        3 => Just(Source::All),
        3 => Just(Source::Active),
        3 => Just(Source::Dormant),
        1 => prop::sample::select(vec!["task-a", "TASK", "b"]).prop_map(|s| Source::Node(s.into())),
        1 => search_text().prop_map(Source::Search),
        1 => Just(Source::Current),
        1 => Just(Source::Mine),
        1 => prop::sample::select(cairn::tq::registry::builtin_views().iter().map(|v| v.name).collect::<Vec<_>>())
            .prop_map(|n| Source::View(n.to_string())),
        1 => Just(Source::Fields),
    ]
}

/// Step chunks that reach every rewrite: filters, sort-then-take pairs,
/// set operations over bare sources and over pipelines (nested `depth`
/// deep), traversals, closures, enrichment.
pub fn rule_chunk(depth: u32) -> BoxedStrategy<Vec<Step>> {
    let sort = (any_field(), prop::sample::select(vec![Dir::Asc, Dir::Desc]));
    let base = prop_oneof![
        4 => rule_pred().prop_map(|p| vec![Step::Where(p)]),
        2 => (sort, 0i64..4).prop_map(|((f, d), n)| vec![Step::Sort(f, d), Step::Take(n)]),
        1 => (0i64..4).prop_map(|n| vec![Step::Take(n)]),
        1 => (prop::sample::select(vec![Dir::Asc, Dir::Desc]), 0i64..4)
            .prop_map(|(d, n)| vec![Step::Sort(Field::Relevance, d), Step::Take(n)]),
        1 => trav().prop_map(|t| vec![Step::Traverse(t)]),
        1 => prop::collection::vec(any_edge(), 1..3).prop_map(|e| vec![Step::Closure(e)]),
        1 => Just(vec![Step::Enrich]),
    ];
    if depth == 0 {
        return base.boxed();
    }
    prop_oneof![
        3 => base,
        2 => (
            prop::sample::select(vec![SetOp::Union, SetOp::Intersect, SetOp::Minus, SetOp::OrElse]),
            rule_set_query(depth - 1)
        )
            .prop_map(|(op, q)| vec![Step::SetOp(op, Box::new(q))]),
    ]
    .boxed()
}

/// A set query for the optimizer's tests: a table source and up to three
/// [`rule_chunk`]s.
pub fn rule_set_query(depth: u32) -> BoxedStrategy<Query> {
    (
        table_source(),
        prop::collection::vec(rule_chunk(depth), 0..4),
    )
        .prop_map(|(s, chunks)| Query {
            source: sp(s),
            steps: chunks.into_iter().flatten().map(sp).collect(),
        })
        .boxed()
}

/// A read query for the optimizer's tests (operands nest two deep).
pub fn rule_query() -> impl Strategy<Value = Query> {
    (rule_set_query(2), shaper()).prop_map(|(mut q, s)| {
        if let Some(s) = s {
            q.steps.push(sp(s));
        }
        q
    })
}
