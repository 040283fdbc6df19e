//! The canonical printer round-trips (spec/tq.md §5): for generated typed
//! queries, `compile(print(q)) == q`, and printing is a fixpoint.

use cairn::store::model::{EdgeType, Status};
use cairn::tq::ast::{
    Cmp, DateOp, Dir, Field, FieldType, Lit, Mutation, Pred, Quant, Query, SetOp, Source, Spanned,
    Step, Trav, TravDir, Value,
};
use cairn::tq::registry::{self, LINK_EDGES};
use cairn::tq::{compile, print};
use proptest::prelude::*;

const KEYS: [&str; 2] = ["priority", "objective"];

fn keys() -> Vec<String> {
    KEYS.iter().map(|k| k.to_string()).collect()
}

fn field_of(ty: Option<FieldType>) -> BoxedStrategy<Field> {
    let mut all: Vec<Field> = registry::fields()
        .iter()
        .filter(|f| ty.is_none_or(|t| f.ty == t))
        .map(|f| f.field.clone())
        .collect();
    if ty.is_none_or(|t| t == FieldType::Text) {
        all.extend(KEYS.iter().map(|k| Field::Meta(k.to_string())));
    }
    proptest::sample::select(all).boxed()
}

fn edge() -> impl Strategy<Value = EdgeType> {
    proptest::sample::select(EdgeType::ALL.to_vec())
}

fn trav() -> impl Strategy<Value = Trav> {
    (
        prop_oneof![Just(TravDir::Follow), Just(TravDir::Back)],
        edge(),
    )
        .prop_map(|(dir, edge)| Trav { dir, edge })
}

fn text() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9 @\"\\\\:;()é-]{0,8}"
}

fn nonempty() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9 @\"\\\\:;()é-]{1,8}"
}

fn finite() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<f64>().prop_filter("finite", |d| d.is_finite()),
        (-5000i64..5000).prop_map(|i| i as f64 / 4.0)
    ]
}

fn num_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        field_of(Some(FieldType::Number)).prop_map(Value::Field),
        field_of(Some(FieldType::Timestamp)).prop_map(Value::Field),
        trav().prop_map(Value::Count),
    ]
}

fn date() -> impl Strategy<Value = time::Date> {
    (0i32..3_000_000)
        .prop_map(|d| {
            time::Date::from_calendar_date(1000, time::Month::January, 1).unwrap()
                + time::Duration::days(d as i64)
        })
        .prop_filter("4-digit year", |d| d.year() <= 9999)
}

fn leaf() -> impl Strategy<Value = Pred> {
    prop_oneof![
        (
            field_of(Some(FieldType::Text)),
            prop_oneof![
                text().prop_map(Lit::Str),
                any::<i64>().prop_map(Lit::Int),
                finite().prop_map(Lit::Dec)
            ]
        )
            .prop_map(|(f, l)| Pred::Eq(Value::Field(f), l)),
        (
            num_value(),
            prop_oneof![any::<i64>().prop_map(Lit::Int), finite().prop_map(Lit::Dec)]
        )
            .prop_map(|(v, l)| Pred::Eq(v, l)),
        field_of(None).prop_map(Pred::Has),
        (field_of(Some(FieldType::Text)), text()).prop_map(|(f, s)| Pred::Matches(f, s)),
        (
            proptest::sample::select(vec![Cmp::Gt, Cmp::Lt, Cmp::Ge, Cmp::Le]),
            num_value(),
            finite()
        )
            .prop_map(|(c, v, n)| Pred::Compare(c, v, n)),
        (
            proptest::sample::select(vec![DateOp::On, DateOp::Since, DateOp::Before]),
            field_of(Some(FieldType::Timestamp)),
            date()
        )
            .prop_map(|(o, f, d)| Pred::Date(o, f, d)),
    ]
}

fn pred() -> impl Strategy<Value = Pred> {
    leaf().prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 1..3).prop_map(Pred::And),
            proptest::collection::vec(inner.clone(), 1..3).prop_map(Pred::Or),
            inner.clone().prop_map(|p| Pred::Not(Box::new(p))),
            (
                proptest::sample::select(vec![Quant::All, Quant::Any, Quant::None]),
                trav(),
                inner
            )
                .prop_map(|(q, t, p)| Pred::Quantified(q, t, Box::new(p))),
        ]
    })
}

fn simple_source() -> impl Strategy<Value = Source> {
    prop_oneof![
        Just(Source::All),
        Just(Source::Active),
        Just(Source::Dormant),
        Just(Source::Current),
        Just(Source::Schema),
        Just(Source::Views),
        Just(Source::Fields),
        Just(Source::Edges),
        nonempty().prop_map(Source::Node),
        nonempty().prop_map(Source::View),
        nonempty()
            .prop_filter("not blank", |n| !n.trim().is_empty())
            .prop_map(|name| Source::Undefine { name }),
    ]
}

fn sp<T>(t: T) -> Spanned<T> {
    Spanned::new(t, 0..0)
}

fn set_query() -> impl Strategy<Value = Query> {
    (simple_source(), proptest::collection::vec(set_step(), 0..3)).prop_map(|(s, steps)| Query {
        source: sp(s),
        steps: steps.into_iter().map(sp).collect(),
    })
}

fn set_step() -> impl Strategy<Value = Step> {
    prop_oneof![
        trav().prop_map(Step::Traverse),
        pred().prop_map(Step::Where),
        (field_of(None), prop_oneof![Just(Dir::Asc), Just(Dir::Desc)])
            .prop_map(|(f, d)| Step::Sort(f, d)),
        any::<i64>().prop_map(Step::Take),
        Just(Step::Enrich),
        proptest::collection::vec(edge(), 1..4).prop_map(Step::Closure),
        proptest::sample::select(Status::ALL.to_vec())
            .prop_map(|s| Step::Mutate(Mutation::SetStatus(s))),
        (
            // Declared fields other than display-name are refused by (:set! ...).
            "[a-z][a-z0-9-]{0,6}".prop_filter("not a declared field", |k| {
                k == "display-name" || registry::lookup_field(k).is_none()
            }),
            text()
        )
            .prop_map(|(key, value)| Step::Mutate(Mutation::SetMeta { key, value })),
        (
            proptest::sample::select(LINK_EDGES.to_vec()),
            // A depot prefix is stripped and `@` targets are refused.
            nonempty().prop_filter("no depot, not reserved", |t| {
                !t.contains(':') && !t.starts_with('@')
            }),
            any::<bool>()
        )
            .prop_map(|(edge, target, link)| {
                if link {
                    Step::Mutate(Mutation::Link { edge, target })
                } else {
                    Step::Mutate(Mutation::Unlink { edge, target })
                }
            }),
    ]
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => set_step(),
        1 => (proptest::sample::select(vec![SetOp::Union, SetOp::Intersect, SetOp::Minus, SetOp::OrElse]), set_query())
            .prop_map(|(o, q)| Step::SetOp(o, Box::new(q))),
    ]
}

fn shaper() -> impl Strategy<Value = Step> {
    prop_oneof![
        proptest::collection::vec(field_of(None), 1..4).prop_map(Step::Select),
        field_of(None).prop_map(Step::GroupBy),
        Just(Step::Ids),
        Just(Step::Count),
    ]
}

fn query() -> impl Strategy<Value = Query> {
    (
        prop_oneof![
            4 => simple_source(),
            1 => (nonempty().prop_filter("not blank", |n| !n.trim().is_empty()), set_query()).prop_map(|(name, body)| Source::Define { name, body: Box::new(body) }),
        ],
        proptest::collection::vec(step(), 0..4),
        proptest::option::of(shaper()),
    )
        .prop_map(|(s, steps, last)| {
            let mut steps: Vec<Spanned<Step>> = steps.into_iter().map(sp).collect();
            steps.extend(last.map(sp));
            Query { source: sp(s), steps }
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]
    #[test]
    fn print_then_compile_is_identity(q in query()) {
        let text = print(&q);
        let back = compile(&text, &keys());
        prop_assert!(back.is_ok(), "{text}: {:?}", back.err().map(|d| d.render_plain()));
        let back = back.unwrap();
        prop_assert_eq!(&back, &q, "{}", text);
        prop_assert_eq!(print(&back), text);
    }
}

/// Token soup: vocabulary words, literals and parens in any order.
fn soup() -> impl Strategy<Value = String> {
    let mut words: Vec<String> = vec![
        "(".into(),
        ")".into(),
        "(".into(),
        ")".into(),
        "->".into(),
        "count".into(),
    ];
    for f in registry::forms() {
        words.push(f.written_name());
    }
    for f in registry::fields() {
        words.push(format!(":{}", f.name));
    }
    for e in EdgeType::ALL {
        words.push(format!(":{e}"));
    }
    words.extend(
        [
            "\"x\"",
            "\"\"",
            "\"2026-01-01\"",
            "5",
            "-1",
            "1.5",
            ":asc",
            ":up",
            "'",
            "#",
        ]
        .map(String::from),
    );
    proptest::collection::vec(proptest::sample::select(words), 0..24).prop_map(|w| w.join(" "))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]
    #[test]
    fn any_text_compiles_or_errors_without_panic(text in prop_oneof![any::<String>(), soup()]) {
        match compile(&text, &keys()) {
            Ok(q) => {
                let printed = print(&q);
                prop_assert_eq!(compile(&printed, &keys()).ok(), Some(q));
            }
            Err(d) => {
                prop_assert!(!d.message.is_empty());
                let _ = d.render_ariadne(&text, false);
            }
        }
    }
}
