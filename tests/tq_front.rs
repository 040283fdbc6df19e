//! The TQ front-end end to end: grammar examples, built-in views, registry
//! signatures, and the exact messages of spec/tq.md §1, §2, §7, §8.

use cairn::tq::ast::{Field, Pred, Query, Source, Step, Value};
use cairn::tq::registry::{self, Category, Kind};
use cairn::tq::{DiagKind, compile, print};

fn examples() -> Vec<(String, String)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("grammar/examples");
    let mut out: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read_to_string(&p).unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

fn round_trips(name: &str, text: &str) -> Query {
    let q = compile(text, &[]).unwrap_or_else(|d| panic!("{name}: {}", d.render_plain()));
    let printed = print(&q);
    let again = compile(&printed, &[])
        .unwrap_or_else(|d| panic!("{name}: {printed}: {}", d.render_plain()));
    assert_eq!(q, again, "{name}: {printed}");
    assert_eq!(print(&again), printed, "{name}: print is not a fixpoint");
    q
}

#[test]
fn every_grammar_example_checks_and_round_trips() {
    let ex = examples();
    assert_eq!(ex.len(), 65);
    for (name, text) in &ex {
        assert!(text.starts_with(";; "), "{name} must open with a comment");
        round_trips(name, text);
    }
}

#[test]
fn every_builtin_view_checks_and_round_trips() {
    let names: Vec<&str> = registry::builtin_views().iter().map(|v| v.name).collect();
    assert_eq!(
        names,
        [
            "active-roots",
            "orphans",
            "leaf-tasks",
            "stale-phases",
            "plan",
            "plan-frontier",
            "frontier",
            "ready",
            "recent",
            "busy",
            "hub-tasks",
            "knowledge"
        ]
    );
    for v in registry::builtin_views() {
        let q = round_trips(v.name, v.source);
        assert_eq!(print(&q), v.source, "{} is not written canonically", v.name);
    }
}

#[test]
fn canonical_print_is_lower_case_single_spaced() {
    let q = compile(
        "(->   (ACTIVE)\n (:WHERE (= :Status :Active)) ; c\n (:Sort :Updated-TS) (:take 5))",
        &[],
    )
    .unwrap();
    assert_eq!(
        print(&q),
        "(-> (active) (:where (= :status \"active\")) (:sort :updated-ts :desc) (:take 5))"
    );
    let q = compile(
        "(-> (node \"a\\\"b\\\\c\") (:where (> :obs-count 1.50)) (:set! :n 2.50))",
        &[],
    )
    .unwrap();
    assert_eq!(
        print(&q),
        "(-> (node \"a\\\"b\\\\c\") (:where (> :obs-count 1.5)) (:set! :n \"2.50\"))"
    );
    let q = compile("(-> (all) (:where (= :obs-count 3.0)))", &[]).unwrap();
    assert_eq!(print(&q), "(-> (all) (:where (= :obs-count 3.0)))");
}

#[test]
fn registry_signature_tokens() {
    let sig = |cat: Category, name: &str| registry::lookup(cat, name).unwrap().signature_text();
    for p in ["on", "since", "before"] {
        assert_eq!(sig(Category::Predicate, p), "field-ts lit-date");
    }
    assert_eq!(sig(Category::Step, "sort"), "field [asc|desc]");
    assert_eq!(
        sig(Category::Step, "set-status!"),
        "open|active|completed|abandoned|blocked"
    );
    assert_eq!(
        sig(Category::Step, "link!"),
        "phase-of|depends-on|related lit-str"
    );
    assert_eq!(
        sig(Category::Step, "unlink!"),
        "phase-of|depends-on|related lit-str"
    );
    assert_eq!(sig(Category::Step, "set!"), "lit lit");
    assert_eq!(sig(Category::Step, "follow"), "edge");
    assert_eq!(sig(Category::Step, "back"), "edge");
    assert_eq!(sig(Category::Step, "where"), "pred");
    assert_eq!(sig(Category::Step, "take"), "int");
    assert_eq!(sig(Category::Step, "enrich"), "");
    assert_eq!(sig(Category::Step, "union"), "query");
    assert_eq!(sig(Category::Step, "closure"), "edge...");
    assert_eq!(sig(Category::Step, "select"), "field...");
    assert_eq!(sig(Category::Step, "group-by"), "field");
    assert_eq!(sig(Category::Step, "ids"), "");
    assert_eq!(sig(Category::Predicate, "="), "value lit");
    assert_eq!(sig(Category::Predicate, "has"), "field");
    assert_eq!(sig(Category::Predicate, "matches"), "field-text lit-str");
    for p in [">", "<", ">=", "<="] {
        assert_eq!(sig(Category::Predicate, p), "value-num lit-real");
    }
    assert_eq!(sig(Category::Predicate, "and"), "pred...");
    assert_eq!(sig(Category::Predicate, "not"), "pred");
    for p in ["all", "any", "none"] {
        assert_eq!(sig(Category::Predicate, p), "traversal pred");
    }
    let date_preds: Vec<&str> = registry::forms()
        .iter()
        .filter(|f| f.signature_text() == "field-ts lit-date")
        .map(|f| f.name)
        .collect();
    assert_eq!(date_preds, ["on", "since", "before"]);
    let mutations: Vec<&str> = registry::forms()
        .iter()
        .filter(|f| f.kind == Some(Kind::Mutation))
        .map(|f| f.name)
        .collect();
    assert_eq!(
        mutations,
        [
            "set-status!",
            "set!",
            "link!",
            "unlink!",
            "claim!",
            "release!"
        ]
    );
    let shapers: Vec<&str> = registry::forms()
        .iter()
        .filter(|f| f.kind == Some(Kind::Shaper))
        .map(|f| f.name)
        .collect();
    assert_eq!(shapers, ["select", "group-by", "ids", "count"]);
    let writes: Vec<&str> = registry::forms_in(Category::Write)
        .map(|f| f.name)
        .collect();
    assert_eq!(writes, ["define!", "undefine!"]);
    assert!(registry::lookup(Category::Source, "schema").is_some());
    let numeric: Vec<&str> = registry::fields()
        .iter()
        .filter(|f| f.ty == cairn::tq::ast::FieldType::Number)
        .map(|f| f.name)
        .collect();
    assert_eq!(numeric, ["obs-count", "edge-count", "relevance"]);
    let structural: Vec<&str> = registry::edges()
        .iter()
        .filter(|e| e.edge.class() == cairn::store::model::EdgeClass::Structural)
        .map(|e| e.edge.as_str())
        .collect();
    assert_eq!(structural, ["phase-of", "forked-from"]);
    assert_eq!(registry::TS_UNIT, "seconds");
    assert_eq!(registry::TS_EPOCH, "1970-01-01 UTC (Unix time)");
}

#[test]
fn step_kinds_come_from_the_registry() {
    let q = compile(
        "(-> (all) (:follow :phase-of) (:where (has :slug)) (:set-status! :open) (:set! :a \"b\") (:link! :related \"x\") (:count))",
        &[],
    )
    .unwrap();
    let kinds: Vec<&str> = q
        .steps
        .iter()
        .map(|s| registry::step_kind(&s.node).as_str())
        .collect();
    assert_eq!(
        kinds,
        [
            "transformer",
            "transformer",
            "mutation",
            "mutation",
            "mutation",
            "shaper"
        ]
    );
}

#[test]
fn metadata_keys_are_text_fields_when_live() {
    let keys = vec!["priority".to_string(), "objective".to_string()];
    let q = compile(
        "(-> (all) (:where (= :priority \"high\")) (:select :objective))",
        &keys,
    )
    .unwrap();
    assert_eq!(
        q.steps[0].node,
        Step::Where(Pred::Eq(
            Value::Field(Field::Meta("priority".into())),
            cairn::tq::ast::Lit::Str("high".into())
        ))
    );
    assert_eq!(
        q.steps[1].node,
        Step::Select(vec![Field::Meta("objective".into())])
    );
    let e = compile("(-> (all) (:where (> :priority 1)))", &keys).unwrap_err();
    assert_eq!(
        e.render_plain(),
        "Query error: > needs a numeric field; :priority is text."
    );
    let e = compile("(-> (all) (:select :priorty))", &keys).unwrap_err();
    assert_eq!(
        e.render_plain(),
        "Query error: Unknown field :priorty; did you mean :priority?"
    );
    assert_eq!(
        compile("(-> (all) (:select :priority))", &[])
            .unwrap_err()
            .render_plain(),
        "Query error: Unknown field :priority. Known fields: :slug, :status, :description, :depot, :parent, :display-name, :created-ts, :updated-ts, :status-ts, :obs-count, :edge-count, :claimed-by, :claim-until, :relevance, :category, :kind, :doc, :signature, :type, :origin, :source, :class, :unit, :epoch."
    );
}

#[test]
fn clock_operand_is_kept_as_written() {
    let q = compile("(-> (all) (:where (>= :updated-ts 3500000000)))", &[]).unwrap();
    assert_eq!(
        q.steps[0].node,
        Step::Where(Pred::Compare(
            cairn::tq::ast::Cmp::Ge,
            Value::Field(Field::UpdatedTs),
            3_500_000_000.0
        ))
    );
}

#[test]
fn define_keeps_its_body() {
    let q = compile("(define! \"mine\" (-> (active) (:take 2)))", &[]).unwrap();
    let Source::Define { name, body } = &q.source.node else {
        panic!("define")
    };
    assert_eq!(name, "mine");
    assert_eq!(print(body), "(-> (active) (:take 2))");
}

/// (query, exact plain rendering, span)
/// An error case: query text, exact plain rendering, expected span.
type Case = (&'static str, &'static str, Option<(usize, usize)>);

const ERRORS: &[Case] = &[
    // §1 and §8.8, 8.13: shape of a query.
    (
        "(((",
        "Parse error: Unclosed '('; expected ')' before the end of the query.",
        Some((2, 3)),
    ),
    (
        "(all))",
        "Parse error: Unexpected ')' with no matching '('.",
        Some((5, 6)),
    ),
    (
        "(all) (all)",
        "Parse error: Expected one form, found a second one.",
        Some((6, 7)),
    ),
    (
        "'(all)",
        "Parse error: Unexpected character '''.",
        Some((0, 1)),
    ),
    (
        "(node #x)",
        "Parse error: Unexpected character '#'.",
        Some((6, 7)),
    ),
    (
        "(node \"a\\tb\")",
        "Parse error: Unknown escape \\t in a string; only \\\" and \\\\ are allowed.",
        Some((8, 10)),
    ),
    (
        "",
        "Parse error: Expected a form, found the end of the query.",
        Some((0, 0)),
    ),
    (
        ":all",
        "Query error: :all is a bare keyword, not a form; every operator is a form: write (all).",
        Some((0, 4)),
    ),
    (
        "(-> (all) :ids)",
        "Query error: :ids is a bare keyword, not a form; every operator is a form: write (:ids).",
        Some((10, 14)),
    ),
    (
        "(-> (all) :count)",
        "Query error: :count is a bare keyword, not a form; every operator is a form: write (:count).",
        Some((10, 16)),
    ),
    (
        "plan",
        "Query error: plan is a bare word, not a source form; a named view runs as (query \"plan\").",
        Some((0, 4)),
    ),
    (
        "(-> (current) (:complete!))",
        "Query error: Unknown step :complete!. Known steps: :follow, :back, :where, :sort, :take, :enrich, :union, :intersect, :minus, :or-else, :closure, :select, :group-by, :ids, :count, :set-status!, :set!, :link!, :unlink!, :claim!, :release!.",
        Some((15, 25)),
    ),
    (
        "(activate \"x\")",
        "Query error: Unknown source activate; did you mean active?",
        Some((1, 9)),
    ),
    (
        "(-> (all) (:bogus-step))",
        "Query error: Unknown step :bogus-step. Known steps: :follow, :back, :where, :sort, :take, :enrich, :union, :intersect, :minus, :or-else, :closure, :select, :group-by, :ids, :count, :set-status!, :set!, :link!, :unlink!, :claim!, :release!.",
        Some((11, 22)),
    ),
    (
        "(-> (all) (:count) (:ids))",
        "Query error: This step expects a set of tasks, but the previous step produced a final value.",
        Some((19, 25)),
    ),
    (
        "(union (active) (dormant))",
        "Query error: Set operations are pipeline steps, e.g. (-> (active) (:union (dormant))).",
        Some((0, 26)),
    ),
    // §2 sources.
    (
        "(node \"\")",
        "Query error: (node \"substr\") needs a non-empty pattern.",
        Some((0, 9)),
    ),
    (
        "(define! \"\" (all))",
        "Query error: (define! \"name\" Q) needs a non-empty string view name.",
        Some((0, 18)),
    ),
    (
        "(define! \"v\" (-> (all) (:count)))",
        "Query error: A view definition must yield a set of tasks, not a final value.",
        Some((13, 32)),
    ),
    (
        "(-> (all) (:union (-> (all) (:count))))",
        "Query error: A set-operation operand must yield a set of tasks, not a final value.",
        Some((18, 37)),
    ),
    // §8.10 unknown edges, also in a quantifier.
    (
        "(-> (all) (:follow :imaginary-edge))",
        "Query error: Unknown edge :imaginary-edge. Known edges: :phase-of, :forked-from, :depends-on, :related.",
        Some((19, 34)),
    ),
    (
        "(-> (all) (:where (all (:follow :imaginary-edge) (has :slug))))",
        "Query error: Unknown edge :imaginary-edge. Known edges: :phase-of, :forked-from, :depends-on, :related.",
        Some((32, 47)),
    ),
    // §8.11, 8.24 field types and dates.
    (
        "(-> (all) (:where (> :status 3)))",
        "Query error: > needs a numeric field; :status is text.",
        Some((21, 28)),
    ),
    (
        "(-> (all) (:where (on :status \"2026-01-01\")))",
        "Query error: on needs a timestamp field; :status is text.",
        Some((22, 29)),
    ),
    (
        "(-> (all) (:where (on :updated-ts \"not-a-date\")))",
        "Query error: \"not-a-date\" is not a YYYY-MM-DD date.",
        Some((34, 46)),
    ),
    (
        "(-> (all) (:where (since :updated-ts \"2026-02-30\")))",
        "Query error: \"2026-02-30\" is not a YYYY-MM-DD date.",
        Some((37, 49)),
    ),
    (
        "(-> (all) (:where (matches :obs-count \"1\")))",
        "Query error: matches needs a text field; :obs-count is number.",
        Some((27, 37)),
    ),
    // §8.22 suggestions.
    (
        "(-> (all) (:sort :updated-at))",
        "Query error: Unknown field :updated-at; did you mean :updated-ts?",
        Some((17, 28)),
    ),
    (
        "(-> (all) (:where (matchez :slug \"x\")))",
        "Query error: Unknown predicate matchez; did you mean matches?",
        Some((19, 26)),
    ),
    (
        "(-> (all) (:zelect :slug))",
        "Query error: Unknown step :zelect; did you mean :select?",
        Some((11, 18)),
    ),
    (
        "(edgez)",
        "Query error: Unknown source edgez; did you mean edges?",
        Some((1, 6)),
    ),
    (
        "(-> (all) (:follow :phse-of))",
        "Query error: Unknown edge :phse-of; did you mean :phase-of?",
        Some((19, 27)),
    ),
    // §7, §8.23, 8.25 arguments.
    (
        "(-> (all) (:take \"5\"))",
        "Query error: :take needs an integer, got \"5\".",
        Some((17, 20)),
    ),
    (
        "(-> (all) (:sort :slug :up))",
        "Query error: (:sort ...) needs :asc or :desc; did you mean :asc?",
        Some((23, 26)),
    ),
    (
        "(-> (all) (:select :nope))",
        "Query error: Unknown field :nope; did you mean :type?",
        Some((19, 24)),
    ),
    (
        "(-> (all) (:set! :status \"x\"))",
        "Query error: (:set! ...) will not set :slug or :status; use (:set-status! STATUS) for status.",
        Some((10, 29)),
    ),
    (
        "(-> (all) (:set! :slug \"x\"))",
        "Query error: (:set! ...) will not set :slug or :status; use (:set-status! STATUS) for status.",
        Some((10, 27)),
    ),
    (
        "(-> (all) (:set-status! :don))",
        "Query error: Unknown status :don; did you mean open?",
        Some((24, 28)),
    ),
    (
        "(-> (all) (:link! :forked-from \"x\"))",
        "Query error: (:link! :EDGE \"target\") takes :phase-of, :depends-on or :related, got :forked-from.",
        Some((18, 30)),
    ),
    (
        "(-> (all) (:take))",
        "Query error: (:take N) takes 1 argument, got 0.",
        Some((10, 17)),
    ),
    (
        "(:ids)",
        "Query error: (:ids) is a step, not a source; steps follow a source, e.g. (-> (all) (:ids)).",
        Some((0, 6)),
    ),
    (
        "(-> (all) (:where (= :obs-count \"3\")))",
        "Query error: = needs a number for :obs-count, got \"3\".",
        Some((32, 35)),
    ),
    (
        "(-> (all) (:where (count (:follow :related))))",
        "Query error: (count TRAV) is a value, not a predicate; compare it, e.g. (> (count (:follow :depends-on)) 0).",
        Some((18, 44)),
    ),
    (
        "(-> (all) (count))",
        "Query error: Steps are keyword forms: write (:count ...), not (count ...).",
        Some((11, 16)),
    ),
    (
        "(all 1)",
        "Query error: (all) takes no arguments.",
        Some((0, 7)),
    ),
    (
        "(-> (all) (:select))",
        "Query error: (:select FIELD...) takes at least 1 argument, got 0.",
        Some((10, 19)),
    ),
];

#[test]
fn every_error_message_is_exact() {
    for (q, want, span) in ERRORS {
        let d = compile(q, &[]).expect_err(q);
        assert_eq!(d.render_plain(), *want, "{q}");
        assert_eq!(d.span.clone().map(|s| (s.start, s.end)), *span, "{q}");
        let kind = if want.starts_with("Parse") {
            DiagKind::Parse
        } else {
            DiagKind::Query
        };
        assert_eq!(d.kind, kind, "{q}");
    }
}

#[test]
fn accepted_spellings() {
    assert!(compile("(-> (all) (:where (> :obs-count -1)))", &[]).is_ok());
    assert!(compile("(-> (all) (:set-status! \"active\"))", &[]).is_ok());
    assert!(compile("(-> (all) (:set-status! completed))", &[]).is_ok());
    assert!(compile("(-> (all) (:set! :points 3))", &[]).is_ok());
    assert!(compile("(-> (all) (:where (on :updated-ts \"2024-02-29\")))", &[]).is_ok());
    assert!(compile("(-> (all) (:where (on :updated-ts \"2025-02-29\")))", &[]).is_err());
}

#[test]
fn nesting_limit_holds_through_the_checker() {
    // (-> (all) (:where PRED)): 2 levels, then one per (not, then (has.
    let nested = |n: usize| {
        format!(
            "(-> (all) (:where {}(has :slug){}))",
            "(not ".repeat(n),
            ")".repeat(n)
        )
    };
    let q = compile(&nested(125), &[]).unwrap();
    assert_eq!(compile(&print(&q), &[]).unwrap(), q);
    let d = compile(&nested(126), &[]).unwrap_err();
    assert_eq!(
        d.render_plain(),
        "Parse error: Nesting deeper than 128 levels."
    );
    let start = 18 + 5 * 126; // the (has that is the 129th level
    assert_eq!(d.span, Some(start..start + 1));
}
