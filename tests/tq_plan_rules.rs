//! One query per rewrite (docs/planner.md "Rewrites"): the rule fires, and
//! an insta snapshot holds the optimized IR, the SQL and SQLite's `EXPLAIN
//! QUERY PLAN`, so a reviewer sees what each rule does to a real statement.

mod common;

use cairn::tq::Surface;
use cairn::tq::ir::rules;

/// (snapshot name, rule that must fire, query).
const CASES: &[(&str, &str, &str)] = &[
    (
        "order_elision",
        rules::order_elision::NAME,
        "(-> (active) (:where (has :priority)) (:count))",
    ),
    (
        "filter_fusion",
        rules::filter_fusion::NAME,
        "(-> (active) (:where (has :priority)) (:where (matches :slug \"a\")) (:ids))",
    ),
    (
        "semi_join",
        rules::semi_join::NAME,
        "(-> (all) (:sort :created-ts :desc) (:intersect (-> (active) (:follow :depends-on))) (:ids))",
    ),
    (
        "inline_source",
        rules::inline_source::NAME,
        "(-> (current) (:follow :phase-of) (:minus (dormant)) (:ids))",
    ),
    (
        "union_or",
        rules::union_or::NAME,
        "(-> (dormant) (:union (-> (active) (:where (has :priority)))) (:ids))",
    ),
    (
        "count_exists",
        rules::count_exists::NAME,
        "(-> (all) (:where (and (= (count (:back :depends-on)) 0) (>= (count (:follow :related)) 1))) (:ids))",
    ),
    (
        "has_parent",
        rules::has_parent::NAME,
        "(-> (all) (:where (has :parent)) (:ids))",
    ),
    (
        "top_n",
        rules::top_n::NAME,
        "(-> (all) (:sort :updated-ts :desc) (:take 3) (:ids))",
    ),
    (
        "counter_columns",
        rules::counter_columns::NAME,
        "(-> (all) (:sort :obs-count :desc) (:take 5) (:ids))",
    ),
    (
        "counter_columns_compare",
        rules::counter_columns::NAME,
        "(query \"orphans\")",
    ),
    (
        "counter_columns_hops",
        rules::counter_columns::NAME,
        "(-> (active) (:where (and (= (count (:follow :phase-of)) 0) (all (:follow :depends-on) (= :status \"completed\")) (>= (count (:back :depends-on)) 2))) (:ids))",
    ),
    (
        "status_complement",
        rules::status_complement::NAME,
        "(-> (all) (:minus (dormant)) (:count))",
    ),
    (
        "enrich_shown",
        rules::enrich_shown::NAME,
        "(-> (active) (:enrich))",
    ),
];

#[test]
fn each_rule_fires_on_its_query_and_its_plan_is_snapshotted() {
    let f = common::seeded();
    for (name, rule, q) in CASES {
        let ex = f
            .engine
            .explain(&f.store, &f.session, q, Surface::Read)
            .unwrap_or_else(|d| panic!("{q}: {}", d.message));
        assert!(
            ex.rules.iter().any(|r| r.starts_with(&format!("{rule} ×"))),
            "{rule} did not fire on {q}: {:?}",
            ex.rules
        );
        let st = &ex.statements[0];
        let text = format!(
            "-- {q}\n-- rules: {}\n-- optimized IR\n{}\n-- SQL\n{}\n-- params: [{}]\n-- query plan\n{}",
            ex.rules.join(", "),
            ex.optimized.clone().unwrap_or_default(),
            st.sql,
            st.params.join(", "),
            st.plan.join("\n")
        );
        insta::assert_snapshot!(format!("rule_{name}"), text);
    }
}

#[test]
fn no_optimize_fires_nothing_and_answers_alike() {
    let f = common::seeded();
    let mut off = cairn::tq::engine::Engine::new();
    off.optimize = false;
    for (_, _, q) in CASES {
        let ex = off
            .explain(&f.store, &f.session, q, Surface::Read)
            .unwrap_or_else(|d| panic!("{q}: {}", d.message));
        assert!(ex.rules.is_empty(), "{q}: {:?}", ex.rules);
        assert_eq!(ex.ir, ex.optimized, "{q}");
        assert_eq!(
            off.run(&f.store, &f.session, q, Surface::Read),
            f.engine.run(&f.store, &f.session, q, Surface::Read),
            "{q}"
        );
    }
}

/// The IR and the lowering recurse once per step: a query past
/// `plan::MAX_STEPS` is refused by the planner, and one just under it runs
/// (or is refused by SQLite as too complex) without exhausting a 2 MiB
/// thread stack (the MCP server's worker threads).
#[test]
fn long_pipelines_are_bounded_on_a_small_stack() {
    let out = std::thread::Builder::new()
        .stack_size(2 * 1024 * 1024)
        .spawn(|| {
            let f = common::seeded();
            let long = format!("(-> (all) {}(:count))", "(:take 5) ".repeat(6400));
            let refused = f.engine.run(&f.store, &f.session, &long, Surface::Read);
            let max = format!("(-> (all) {}(:count))", "(:where (has :slug)) ".repeat(255));
            let ran = f.engine.run(&f.store, &f.session, &max, Surface::Read);
            (refused.map_err(|d| d.message), ran.map_err(|d| d.message))
        })
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(out.0, Err(cairn::tq::plan::STEPS_ERROR.to_string()));
    assert_eq!(out.1, Ok("14".to_string()));
}

/// Found by the reference proptest: under `(:count)` the final SELECT must
/// not bind the parameters of an order nobody reads (a metadata sort key
/// bound but unused is SQLite's "wrong number of parameters").
#[test]
fn count_after_a_take_over_a_metadata_sort_binds_only_what_it_uses() {
    let f = common::seeded();
    for (q, want) in [
        (
            "(-> (all) (:sort :priority :asc) (:take 2) (:take 2) (:count))",
            "2",
        ),
        (
            "(-> (all) (:sort :priority :asc) (:where (= :slug \"active\")) (:take 0) (:count))",
            "0",
        ),
        ("(-> (all) (:sort :priority :desc) (:take 3) (:count))", "3"),
    ] {
        for optimize in [true, false] {
            let mut e = cairn::tq::engine::Engine::new();
            e.optimize = optimize;
            assert_eq!(
                e.run(&f.store, &f.session, q, Surface::Read),
                Ok(want.to_string()),
                "{q} optimize={optimize}"
            );
        }
    }
}

/// The count FIELDS compared with a constant read the counter columns,
/// spelled bare so their index serves them (count-exists does not turn them
/// into probes); traversal counts still become `[NOT] EXISTS`. Answers equal
/// `--no-optimize`'s.
#[test]
fn count_fields_against_constants_use_the_counter_index() {
    let f = common::seeded();
    let mut off = cairn::tq::engine::Engine::new();
    off.optimize = false;
    for (q, rules, term, plan) in [
        (
            "(-> (all) (:where (= :edge-count 0)) (:count))",
            "counter-columns ×1, filter-fusion ×1, order-elision ×1",
            "(t.edge_count = +?1)",
            "SEARCH t USING INDEX tasks_edge_count (edge_count=?)",
        ),
        (
            "(-> (all) (:where (> :obs-count 0)) (:count))",
            "counter-columns ×1, filter-fusion ×1, order-elision ×1",
            "(t.obs_count > +?1)",
            "SEARCH t USING COVERING INDEX tasks_obs_count (obs_count>?)",
        ),
        (
            "(-> (all) (:where (= (count (:follow :depends-on)) 0)) (:count))",
            "count-exists ×1, counter-columns ×1, filter-fusion ×1, order-elision ×1",
            "(NOT (t.lateral_out > 0 AND EXISTS (SELECT 1 FROM edges xe WHERE xe.src_id = t.id AND xe.type = 'depends-on')))",
            "SCAN t",
        ),
    ] {
        let ex = f
            .engine
            .explain(&f.store, &f.session, q, Surface::Read)
            .unwrap_or_else(|d| panic!("{q}: {}", d.message));
        assert_eq!(ex.rules.join(", "), rules, "{q}");
        let st = &ex.statements[0];
        assert!(st.sql.contains(term), "{q}: {}", st.sql);
        assert!(
            st.plan.iter().any(|l| l.trim_start().starts_with(plan)),
            "{q}: {:?}",
            st.plan
        );
        assert_eq!(
            f.engine.run(&f.store, &f.session, q, Surface::Read),
            off.run(&f.store, &f.session, q, Surface::Read),
            "{q}"
        );
    }
}
