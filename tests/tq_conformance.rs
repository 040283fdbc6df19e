//! spec/tq.md §8: every conformance case, one test each, exact text where the
//! spec gives it. The store is seeded through its one write boundary.

mod common;

use cairn::store::{EdgeType, Status};
use common::{Fx, REFUSED, s};

fn ids(names: &[&str]) -> String {
    let mut out = format!(
        "{} task{}:",
        names.len(),
        if names.len() == 1 { "" } else { "s" }
    );
    for n in names {
        out.push_str(&format!("\n- {}", s(n)));
    }
    out
}

#[test]
fn c01_fork_reachable_both_ways() {
    let mut f = Fx::new();
    f.create("parent");
    f.fork("parent", "child");
    assert_eq!(
        f.r(r#"(-> (node "parent") (:follow :phase-of) (:ids))"#),
        ids(&["child"])
    );
    assert_eq!(
        f.r(r#"(-> (node "child") (:back :phase-of) (:ids))"#),
        ids(&["parent"])
    );
    assert_eq!(
        f.r(r#"(-> (node "parent") (:follow :forked-from) (:ids))"#),
        ids(&["child"])
    );
}

#[test]
fn c02_depends_on_both_ways() {
    let mut f = Fx::new();
    f.create("alpha");
    f.create("beta");
    f.link("alpha", "beta", EdgeType::DependsOn);
    assert_eq!(
        f.r(r#"(-> (node "alpha") (:follow :depends-on) (:ids))"#),
        ids(&["beta"])
    );
    assert_eq!(
        f.r(r#"(-> (node "beta") (:back :depends-on) (:ids))"#),
        ids(&["alpha"])
    );
}

#[test]
fn c03_completing_moves_active_to_dormant() {
    let mut f = Fx::new();
    f.create("alpha");
    f.create("beta");
    assert_eq!(f.r("(-> (active) (:ids))"), ids(&["alpha", "beta"]));
    assert_eq!(f.r("(dormant)"), "No matching tasks.");
    f.status("alpha", Status::Completed);
    assert_eq!(f.r("(-> (active) (:ids))"), ids(&["beta"]));
    assert_eq!(
        f.r("(dormant)"),
        format!("1 task:\n- {} (completed)", s("alpha"))
    );
}

#[test]
fn c04_select_display_name_and_status() {
    let mut f = Fx::new();
    f.create("xray");
    f.meta("xray", "display-name", "X-Ray");
    f.create("other");
    assert_eq!(
        f.r(r#"(-> (node "x") (:select :display-name :status))"#),
        format!(
            "1 task:\n- {}  display-name=X-Ray  status=active",
            s("xray")
        )
    );
}

#[test]
fn c05_plan_frontier() {
    let mut f = Fx::new();
    f.create("parent");
    f.fork("parent", "p1");
    f.fork("parent", "p2");
    f.link("p2", "p1", EdgeType::DependsOn);
    f.current("parent");
    assert_eq!(f.r(r#"(-> (query "plan-frontier") (:ids))"#), ids(&["p1"]));
    assert_eq!(
        f.r(r#"(query "frontier")"#),
        format!("1 task:\n- {} (active) obs=0 edges=2", s("p1"))
    );
    f.status("p1", Status::Completed);
    assert_eq!(
        f.r(r#"(query "frontier")"#),
        format!("1 task:\n- {} (active) obs=0 edges=2", s("p2"))
    );
}

#[test]
fn c06_knowledge_over_related_cycle_terminates() {
    let mut f = Fx::new();
    f.create("a");
    f.create("b");
    f.create("c");
    f.link("a", "b", EdgeType::Related);
    f.link("b", "c", EdgeType::Related);
    f.link("c", "a", EdgeType::Related);
    f.current("a");
    assert_eq!(
        f.r(r#"(-> (query "knowledge") (:ids))"#),
        ids(&["a", "b", "c"])
    );
    f.create("d");
    assert_eq!(f.r(r#"(-> (query "knowledge") (:count))"#), "3");
}

#[test]
fn c07_unknown_view_lists_names() {
    let f = Fx::new();
    assert_eq!(
        f.r(r#"(query "nope")"#),
        "Query error: Unknown named query nope. Available: active-roots, busy, frontier, hub-tasks, knowledge, leaf-tasks, orphans, plan, plan-frontier, ready, recent, stale-phases."
    );
}

#[test]
fn c08_malformed_queries_are_errors() {
    let mut f = Fx::new();
    f.create("a");
    f.current("a");
    assert!(f.r("(((").starts_with("Parse error: "));
    assert!(
        f.r("(-> (current) (:complete!))")
            .starts_with("Query error: Unknown step :complete!.")
    );
    assert!(
        f.r(r#"(activate "x")"#)
            .starts_with("Query error: Unknown source activate")
    );
    assert!(
        f.r("(-> (all) (:bogus-step))")
            .starts_with("Query error: Unknown step :bogus-step")
    );
}

#[test]
fn c09_count_and_group_by() {
    let mut f = Fx::new();
    f.create("a");
    f.create("b");
    assert_eq!(f.r("(-> (all) (:count))"), "2");
    assert_eq!(
        f.r("(-> (active) (:group-by :status))"),
        format!(
            "1 group:\n\n## active (2)\n- {} (active)\n- {} (active)",
            s("a"),
            s("b")
        )
    );
}

#[test]
fn c10_unknown_edge_everywhere() {
    let mut f = Fx::new();
    f.create("a");
    let msg = "Query error: Unknown edge :imaginary-edge.";
    assert!(f.r("(-> (all) (:follow :imaginary-edge))").starts_with(msg));
    assert!(
        f.r("(-> (dormant) (:follow :imaginary-edge))")
            .starts_with(msg)
    );
    assert!(
        f.r("(-> (all) (:where (any (:follow :imaginary-edge) (has :slug))))")
            .starts_with(msg)
    );
}

#[test]
fn c11_numeric_comparison_types() {
    let mut f = Fx::new();
    f.create("a");
    f.create("b");
    assert_eq!(
        f.r("(-> (all) (:where (> :status 3)))"),
        "Query error: > needs a numeric field; :status is text."
    );
    assert_eq!(f.r("(-> (all) (:where (> :obs-count -1)) (:count))"), "2");
}

#[test]
fn c12_matches_slug_and_description() {
    let mut f = Fx::new();
    f.create_described("tokenizer", "Fix the BM25 ranking");
    f.create_described("search", "prefix queries");
    assert_eq!(
        f.r(r#"(-> (all) (:where (matches :slug "TOKEN")) (:ids))"#),
        ids(&["tokenizer"])
    );
    assert_eq!(
        f.r(r#"(-> (all) (:where (matches :description "bm25")) (:ids))"#),
        ids(&["tokenizer"])
    );
    assert_eq!(
        f.r(r#"(-> (all) (:where (matches :description "nothing")) (:ids))"#),
        "No matching tasks."
    );
}

#[test]
fn c13_bare_keywords_are_errors() {
    let f = Fx::new();
    for q in [":all", "(-> (all) :ids)", "(-> (all) :count)"] {
        let out = f.r(q);
        assert!(
            out.starts_with("Parse error: ") || out.starts_with("Query error: "),
            "{q}: {out}"
        );
    }
}

#[test]
fn c14_set_operations() {
    let mut f = Fx::new();
    f.create("a");
    f.create("b");
    f.create("c");
    f.status("c", Status::Completed);
    assert_eq!(f.r("(-> (active) (:union (dormant)) (:count))"), "3");
    assert_eq!(f.r("(-> (active) (:intersect (dormant)) (:count))"), "0");
    assert_eq!(f.r("(-> (all) (:intersect (active)) (:count))"), "2");
    assert_eq!(f.r("(-> (all) (:minus (active)) (:ids))"), ids(&["c"]));
    assert_eq!(f.r("(-> (dormant) (:ids))"), ids(&["c"]));
}

#[test]
fn c15_operands_yield_sets_and_are_read_only() {
    let mut f = Fx::new();
    f.create("a");
    let before = f.events();
    assert_eq!(
        f.r("(-> (all) (:union (-> (all) (:count))))"),
        "Query error: A set-operation operand must yield a set of tasks, not a final value."
    );
    let q = r#"(-> (all) (:union (-> (all) (:set-status! "completed"))))"#;
    assert_eq!(f.r(q), REFUSED);
    assert_eq!(f.w(q), REFUSED);
    let q = r#"(-> (all) (:set-status! "open") (:minus (-> (active) (:set! :k "v"))))"#;
    assert_eq!(f.w(q), REFUSED);
    assert_eq!(f.events(), before);
    assert_eq!(f.r("(-> (active) (:count))"), "1");
}

#[test]
fn c16_quantifiers_over_a_dependency_fan() {
    let mut f = Fx::new();
    f.create("fan");
    f.create("done");
    f.create("live");
    f.create("lone");
    f.link("fan", "done", EdgeType::DependsOn);
    f.link("fan", "live", EdgeType::DependsOn);
    f.status("done", Status::Completed);
    let q = |quant: &str, who: &str| {
        format!(
            r#"(-> (node "{who}") (:where ({quant} (:follow :depends-on) (= :status "completed"))) (:count))"#
        )
    };
    assert_eq!(f.r(&q("all", "fan")), "0");
    assert_eq!(f.r(&q("any", "fan")), "1");
    assert_eq!(f.r(&q("none", "fan")), "0");
    f.status("live", Status::Completed);
    assert_eq!(f.r(&q("all", "fan")), "1");
    assert_eq!(f.r(&q("all", "lone")), "1");
    assert_eq!(f.r(&q("none", "lone")), "1");
    assert_eq!(f.r(&q("any", "lone")), "0");
}

#[test]
fn c17_count_traversal_in_comparisons() {
    let mut f = Fx::new();
    f.create("fan");
    f.create("x1");
    f.create("x2");
    f.link("fan", "x1", EdgeType::DependsOn);
    f.link("fan", "x2", EdgeType::DependsOn);
    assert_eq!(
        f.r("(-> (all) (:where (>= (count (:follow :depends-on)) 2)) (:ids))"),
        ids(&["fan"])
    );
    assert_eq!(
        f.r("(-> (all) (:where (= (count (:back :depends-on)) 1)) (:ids))"),
        ids(&["x1", "x2"])
    );
    assert_eq!(
        f.r("(-> (all) (:where (< (count (:follow :depends-on)) 1)) (:count))"),
        "2"
    );
}

#[test]
fn c18_views_define_shadow_undefine_rebuild() {
    let mut f = Fx::new();
    f.create("a");
    f.create("b");
    f.link("a", "b", EdgeType::Related);
    f.create("c");
    let before = f.events();
    let def = r#"(define! "mine" (-> (active) (:take 1)))"#;
    assert_eq!(f.r(def), REFUSED);
    assert_eq!(f.events(), before);
    assert_eq!(f.w(def), format!("1 task:\n- {} (active)", s("a")));
    assert_eq!(f.events(), before + 1);
    // Shadow a built-in, then restore it.
    assert_eq!(f.r(r#"(-> (query "orphans") (:ids))"#), ids(&["c"]));
    f.w(r#"(define! "orphans" (node "b"))"#);
    assert_eq!(f.r(r#"(-> (query "orphans") (:ids))"#), ids(&["b"]));
    f.w(r#"(undefine! "orphans")"#);
    assert_eq!(f.r(r#"(-> (query "orphans") (:ids))"#), ids(&["c"]));
    // A user view resolves on the read surface and is listed when unknown.
    assert_eq!(f.r(r#"(-> (query "mine") (:ids))"#), ids(&["a"]));
    assert_eq!(
        f.r(r#"(query "nope")"#),
        "Query error: Unknown named query nope. Available: active-roots, busy, frontier, hub-tasks, knowledge, leaf-tasks, mine, orphans, plan, plan-frontier, ready, recent, stale-phases."
    );
    // Views are folds of events: they survive a rebuild, verify holds.
    f.store.rebuild().unwrap();
    assert_eq!(f.r(r#"(-> (query "mine") (:ids))"#), ids(&["a"]));
    assert!(f.store.verify().unwrap().ok);
    // @cairn: hidden from broad sources, found by node.
    assert_eq!(f.r("(-> (all) (:count))"), "3");
    assert_eq!(f.r("(-> (active) (:count))"), "3");
    assert_eq!(f.r(r#"(-> (node "@cairn") (:ids))"#), "1 task:\n- @cairn");
}

#[test]
fn c19_reflection() {
    let mut f = Fx::new();
    f.create("a");
    let shapers = f.r(r#"(-> (schema) (:where (= :kind "shaper")) (:ids))"#);
    assert_eq!(shapers, "4 tasks:\n- count\n- group-by\n- ids\n- select");
    assert_eq!(
        f.r(r#"(-> (schema) (:where (and (= :category "source") (= :slug "schema"))) (:count))"#),
        "1"
    );
    assert_eq!(
        f.r(r#"(-> (schema) (:where (= :slug "define!")) (:select :category))"#),
        "1 task:\n- define!  category=write"
    );
    assert_eq!(
        f.r(r#"(-> (fields) (:where (= :type "number")) (:ids))"#),
        // `:relevance` is a number field since spec/tq.md §10.
        "3 tasks:\n- edge-count\n- obs-count\n- relevance"
    );
    let declared = cairn::tq::registry::fields().len();
    assert_eq!(
        f.r(r#"(-> (fields) (:where (= :origin "declared")) (:count))"#),
        declared.to_string()
    );
    assert_eq!(
        f.r(r#"(-> (edges) (:where (= :class "structural")) (:ids))"#),
        "2 tasks:\n- forked-from\n- phase-of"
    );
    assert!(
        f.r(r#"(-> (views) (:where (= :origin "builtin")) (:ids))"#)
            .contains("\n- plan-frontier")
    );
    f.w(r#"(define! "mine" (active))"#);
    assert_eq!(
        f.r(r#"(-> (views) (:where (= :origin "user")) (:select :source))"#),
        "1 task:\n- mine  source=(active)"
    );
    assert_eq!(
        f.r("(-> (fields) (:follow :phase-of))"),
        "No matching tasks."
    );
}

#[test]
fn c20_mutation_steps() {
    let mut f = Fx::new();
    f.create("a");
    f.create("b");
    let before = f.events();
    let q = r#"(-> (active) (:set-status! "blocked") (:count))"#;
    assert_eq!(f.r(q), REFUSED);
    assert_eq!(f.events(), before);
    assert_eq!(
        f.w(r#"(-> (active) (:set-status! "blocked"))"#),
        format!("2 tasks:\n- {} (blocked)\n- {} (blocked)", s("a"), s("b"))
    );
    assert_eq!(f.events(), before + 2);
    // Re-run converges: the set is still returned, nothing is recorded.
    assert_eq!(f.w(q), "2");
    assert_eq!(f.events(), before + 2);
    // set! shows under enrich; :status refused.
    f.w(r#"(-> (node "a") (:set! :objective "ship it"))"#);
    assert_eq!(
        f.r(r#"(-> (node "a") (:enrich))"#),
        format!(
            "1 task:\n- {} (blocked) obs=0 edges=0\n    objective: ship it",
            s("a")
        )
    );
    assert_eq!(
        f.w(r#"(-> (all) (:set! :status "open"))"#),
        "Query error: (:set! ...) will not set :slug or :status; use (:set-status! STATUS) for status."
    );
    // link!/unlink! add and remove a traversable edge.
    let link = format!(r#"(-> (node "a") (:link! :depends-on "{}"))"#, s("b"));
    f.w(&link);
    assert_eq!(
        f.r(r#"(-> (node "a") (:follow :depends-on) (:ids))"#),
        ids(&["b"])
    );
    let n = f.events();
    f.w(&link);
    assert_eq!(f.events(), n);
    f.w(&format!(
        r#"(-> (node "a") (:unlink! :depends-on "{}"))"#,
        s("b")
    ));
    assert_eq!(
        f.r(r#"(-> (node "a") (:follow :depends-on) (:ids))"#),
        "No matching tasks."
    );
    // A mutation over (fields) mints no task and records nothing.
    let n = f.events();
    assert_eq!(
        f.w(r#"(-> (fields) (:set! :priority "high") (:take 1) (:count))"#),
        "1"
    );
    assert_eq!(f.events(), n);
    assert_eq!(f.r("(-> (all) (:count))"), "2");
}

#[test]
fn c21_schema_kinds_and_signatures() {
    let f = Fx::new();
    assert_eq!(
        f.r(r#"(-> (schema) (:where (= :kind "mutation")) (:ids))"#),
        "6 tasks:\n- claim!\n- link!\n- release!\n- set!\n- set-status!\n- unlink!"
    );
    assert_eq!(
        f.r(r#"(-> (schema) (:where (= :signature "field-ts lit-date")) (:ids))"#),
        "3 tasks:\n- before\n- on\n- since"
    );
}

#[test]
fn c22_suggestions() {
    let f = Fx::new();
    let cases = [
        (
            "(-> (all) (:sort :updated-at))",
            "did you mean :updated-ts?",
        ),
        (
            r#"(-> (all) (:where (matchez :slug "a")))"#,
            "did you mean matches?",
        ),
        ("(-> (all) (:zelect :slug))", "did you mean :select?"),
        ("(edgez)", "did you mean edges?"),
        ("(-> (all) (:follow :phse-of))", "did you mean :phase-of?"),
    ];
    for (q, hint) in cases {
        let out = f.r(q);
        assert!(out.contains(hint), "{q}: {out}");
    }
}

#[test]
fn c23_select_fields() {
    let mut f = Fx::new();
    f.create("root");
    f.observe("root", "one");
    f.observe("root", "two");
    assert!(
        f.r("(-> (all) (:select :nope))")
            .starts_with("Query error: Unknown field :nope")
    );
    assert_eq!(
        f.r("(-> (all) (:select :obs-count))"),
        format!("1 task:\n- {}  obs-count=2", s("root"))
    );
    assert_eq!(
        f.r("(-> (all) (:select :parent))"),
        format!("1 task:\n- {}  parent=∅", s("root"))
    );
}

#[test]
fn c24_clock_rules_and_dates() {
    let mut f = Fx::new();
    f.create("a"); // updated 2026-01-01 (1767225601)
    assert_eq!(
        f.r("(-> (all) (:where (< :updated-ts 2500000000)) (:count))"),
        "1"
    );
    assert_eq!(
        f.r("(-> (all) (:where (>= :updated-ts 2500000000)) (:count))"),
        "0"
    );
    // Universal time: 1767225601 + 2208988800 = 3976214401.
    assert_eq!(
        f.r("(-> (all) (:where (>= :updated-ts 3976214401)) (:count))"),
        "1"
    );
    assert_eq!(
        f.r("(-> (all) (:where (> :updated-ts 3976214401)) (:count))"),
        "0"
    );
    assert_eq!(
        f.r("(-> (all) (:select :updated-ts))"),
        format!("1 task:\n- {}  updated-ts=1767225601 (2026-01-01)", s("a"))
    );
    assert_eq!(
        f.r(r#"(-> (all) (:where (on :updated-ts "2026-01-01")) (:count))"#),
        "1"
    );
    assert_eq!(
        f.r(r#"(-> (all) (:where (on :updated-ts "2025-12-31")) (:count))"#),
        "0"
    );
    assert_eq!(
        f.r(r#"(-> (all) (:where (since :updated-ts "2026-01-01")) (:count))"#),
        "1"
    );
    assert_eq!(
        f.r(r#"(-> (all) (:where (since :updated-ts "2026-01-02")) (:count))"#),
        "0"
    );
    assert_eq!(
        f.r(r#"(-> (all) (:where (before :updated-ts "2026-01-02")) (:count))"#),
        "1"
    );
    assert_eq!(
        f.r(r#"(-> (all) (:where (before :updated-ts "2026-01-01")) (:count))"#),
        "0"
    );
    assert_eq!(
        f.r(r#"(-> (all) (:where (on :updated-ts "not-a-date")))"#),
        "Query error: \"not-a-date\" is not a YYYY-MM-DD date."
    );
    assert!(
        f.r(r#"(-> (all) (:where (on :status "2026-01-01")))"#)
            .starts_with("Query error: ")
    );
}

#[test]
fn c25_sort_directions() {
    let mut f = Fx::new();
    f.create("a");
    f.create("b");
    f.create("c");
    assert_eq!(
        f.r("(-> (all) (:sort :slug :asc) (:ids))"),
        ids(&["a", "b", "c"])
    );
    assert_eq!(
        f.r("(-> (all) (:sort :slug :desc) (:ids))"),
        ids(&["c", "b", "a"])
    );
    assert_eq!(
        f.r("(-> (all) (:sort :slug) (:ids))"),
        ids(&["c", "b", "a"])
    );
    assert_eq!(
        f.r("(-> (all) (:sort :slug :up))"),
        "Query error: (:sort ...) needs :asc or :desc; did you mean :asc?"
    );
}

#[test]
fn c26_metadata_fields_and_units() {
    let mut f = Fx::new();
    f.create("a");
    assert_eq!(
        f.r(r#"(-> (fields) (:where (= :origin "metadata")) (:ids))"#),
        "No matching tasks."
    );
    f.w(r#"(-> (all) (:set! :priority "high"))"#);
    assert_eq!(
        f.r(r#"(-> (fields) (:where (= :origin "metadata")) (:select :type))"#),
        "1 task:\n- priority  type=text"
    );
    assert_eq!(
        f.r(r#"(-> (fields) (:where (= :slug "updated-ts")) (:select :unit :epoch))"#),
        "1 task:\n- updated-ts  unit=seconds  epoch=1970-01-01 UTC (Unix time)"
    );
}

/// spec/tq.md §10: `(search "text")` is a source (task_search's rules),
/// relevance order, composing with `:where`, `:minus`, `:take` and
/// `(:sort :relevance)`; `:relevance` absent off a search; an empty pattern
/// refused with its sentence.
#[test]
fn c27_search_as_a_source() {
    let mut f = Fx::new();
    for n in ["alpha", "beta", "gamma", "delta"] {
        f.create(n);
    }
    f.observe("alpha", "flaky flaky flaky test in the runner");
    f.observe(
        "beta",
        "a flaky test, flaky again, among many other words about the build",
    );
    f.observe(
        "gamma",
        "the build is green and nothing flaky was seen in the whole long nightly run of it, wontfix",
    );
    f.observe("delta", "unrelated note about docs");
    f.status("gamma", Status::Completed);
    // Relevance order: the densest match first.
    assert_eq!(
        f.r(r#"(-> (search "flaky") (:ids))"#),
        ids(&["alpha", "beta", "gamma"])
    );
    // Implicit AND over the terms, as task_search.
    assert_eq!(
        f.r(r#"(-> (search "flaky test") (:sort :slug :asc) (:ids))"#),
        ids(&["alpha", "beta"])
    );
    assert_eq!(
        f.r(r#"(-> (search "flaky") (:where (= :status "active")) (:ids))"#),
        ids(&["alpha", "beta"])
    );
    assert_eq!(
        f.r(r#"(-> (search "flaky") (:where (= :status "completed")) (:ids))"#),
        ids(&["gamma"])
    );
    assert_eq!(
        f.r(r#"(-> (active) (:minus (search "wontfix")) (:ids))"#),
        ids(&["alpha", "beta", "delta"])
    );
    assert_eq!(
        f.r(r#"(-> (search "flaky") (:take 1) (:ids))"#),
        ids(&["alpha"])
    );
    assert_eq!(
        f.r(r#"(-> (search "flaky") (:where (= :status "active")) (:take 1) (:ids))"#),
        ids(&["alpha"])
    );
    // No search in the query: relevance absent everywhere, ties by slug.
    assert_eq!(
        f.r(r#"(-> (all) (:sort :relevance) (:ids))"#),
        ids(&["alpha", "beta", "delta", "gamma"])
    );
    // With one, the search's rows first (best first), the rest after.
    assert_eq!(
        f.r(r#"(-> (all) (:intersect (search "flaky")) (:union (node "delta")) (:sort :relevance) (:ids))"#),
        ids(&["alpha", "beta", "gamma", "delta"])
    );
    assert_eq!(
        f.r(r#"(-> (search "flaky") (:sort :relevance :asc) (:take 2) (:ids))"#),
        ids(&["gamma", "beta"])
    );
    assert_eq!(
        f.r(r#"(-> (search "flaky") (:sort :slug :asc) (:sort :relevance) (:ids))"#),
        ids(&["alpha", "beta", "gamma"])
    );
    // Relevance is absent on rows that did not come from the search.
    assert_eq!(
        f.r(r#"(-> (search "flaky") (:union (node "delta")) (:where (not (has :relevance))) (:ids))"#),
        ids(&["delta"])
    );
    assert_eq!(f.r(r#"(-> (search "nothing-like-this") (:count))"#), "0");
    assert_eq!(f.r(r#"(search "  ? ")"#), "No matching tasks.");
    assert_eq!(
        f.r(r#"(search "")"#),
        "Query error: (search \"\") needs a non-empty pattern."
    );
    // Literal identifiers, as task_search: a path with `:` and `-`.
    f.observe("delta", "see tools.lisp:45-78 for depends-on");
    assert_eq!(
        f.r(r#"(-> (search "tools.lisp:45-78 depends-on") (:ids))"#),
        ids(&["delta"])
    );
}
