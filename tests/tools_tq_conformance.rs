//! spec/tq.md §8 conformance cases re-run through the tool layer:
//! `task_query` (read surface) and `task_query_write` (write surface), on a
//! store seeded by the real write tools.

mod toolfx;

use serde_json::json;
use toolfx::{Fx, PREFIX, TOKEN, TUNE};

const READ_ONLY: &str =
    "Query error: Mutations need the task_query_write surface; task_query is read-only.";

fn q(fx: &mut Fx, query: &str) -> String {
    fx.ok("task_query", json!({"query": query}))
}

fn qe(fx: &mut Fx, query: &str) -> String {
    fx.err("task_query", json!({"query": query}))
}

fn w(fx: &mut Fx, query: &str) -> String {
    fx.ok("task_query_write", json!({"query": query}))
}

/// The tool story plus a depends-on link from the phase to the tokenizer fix.
fn story() -> Fx {
    let mut fx = toolfx::story();
    fx.ok(
        "task_link",
        json!({"target_id": TOKEN, "edge_type": "depends-on"}),
    );
    fx
}

#[test]
fn case_1_fork_is_traversable_both_ways() {
    let mut fx = story();
    assert_eq!(
        q(
            &mut fx,
            "(-> (node \"tune-search\") (:follow :phase-of) (:ids))"
        ),
        format!("1 task:\n- {PREFIX}")
    );
    assert_eq!(
        q(
            &mut fx,
            "(-> (node \"add-prefix\") (:back :phase-of) (:ids))"
        ),
        format!("1 task:\n- {TUNE}")
    );
    assert_eq!(
        q(
            &mut fx,
            "(-> (node \"tune-search\") (:follow :forked-from) (:ids))"
        ),
        format!("1 task:\n- {PREFIX}")
    );
}

#[test]
fn case_2_depends_on_forward_and_back() {
    let mut fx = story();
    assert_eq!(
        q(&mut fx, "(-> (current) (:follow :depends-on) (:ids))"),
        format!("1 task:\n- {TOKEN}")
    );
    assert_eq!(
        q(
            &mut fx,
            "(-> (node \"tokenizer\") (:back :depends-on) (:ids))"
        ),
        format!("1 task:\n- {PREFIX}")
    );
}

#[test]
fn case_3_completing_moves_active_to_dormant() {
    let mut fx = story();
    assert_eq!(q(&mut fx, "(-> (dormant) (:ids))"), "No matching tasks.");
    fx.ok(
        "task_update_status",
        json!({"status": "completed", "task_id": TOKEN}),
    );
    assert_eq!(
        q(&mut fx, "(-> (dormant) (:ids))"),
        format!("1 task:\n- {TOKEN}")
    );
    assert_eq!(q(&mut fx, "(-> (active) (:count))"), "2");
}

#[test]
fn case_5_plan_frontier_moves() {
    let mut fx = Fx::new();
    fx.ok("task_create", json!({"name": "ship search feature"}));
    let parent = "2026-06-22-ship-search-feature";
    fx.ok(
        "task_fork",
        json!({"name": "phase ranking work", "from": parent}),
    );
    fx.ok(
        "task_fork",
        json!({"name": "phase tokenizer work", "from": parent}),
    );
    let p1 = "2026-06-22-phase-ranking-work";
    let p2 = "2026-06-22-phase-tokenizer-work";
    fx.ok(
        "task_link",
        json!({"task_id": p2, "target_id": p1, "edge_type": "depends-on"}),
    );
    fx.ok("task_bootstrap", json!({"task_id": parent}));
    assert_eq!(
        q(&mut fx, "(-> (query \"plan-frontier\") (:ids))"),
        format!("1 task:\n- {p1}")
    );
    fx.ok(
        "task_update_status",
        json!({"status": "completed", "task_id": p1}),
    );
    assert_eq!(
        q(&mut fx, "(-> (query \"frontier\") (:ids))"),
        format!("1 task:\n- {p2}")
    );
}

#[test]
fn case_7_unknown_view_lists_builtins() {
    let mut fx = story();
    let e = qe(&mut fx, "(query \"nope\")");
    assert!(
        e.starts_with("Query error: Unknown named query nope."),
        "{e}"
    );
    assert!(e.contains("active-roots"), "{e}");
}

#[test]
fn case_8_and_13_malformed_queries_are_errors() {
    let mut fx = story();
    assert!(qe(&mut fx, "(((").starts_with("Parse error: "));
    for text in [
        "(-> (current) (:complete!))",
        "(activate \"x\")",
        "(-> (all) (:bogus-step))",
        ":all",
        "(-> (all) :ids)",
        "(-> (all) :count)",
    ] {
        let e = fx.err("task_query", json!({"query": text}));
        assert!(
            e.starts_with("Query error: ") || e.starts_with("Parse error: "),
            "{text}: {e}"
        );
    }
}

#[test]
fn case_9_count_and_group_by() {
    let mut fx = Fx::new();
    fx.ok("task_create", json!({"name": "tune search"}));
    fx.ok("task_create", json!({"name": "tokenizer fix"}));
    assert_eq!(q(&mut fx, "(-> (all) (:count))"), "2");
    let g = q(&mut fx, "(-> (active) (:group-by :status))");
    assert!(g.starts_with("1 group:\n\n## active (2)"), "{g}");
}

#[test]
fn case_15_operand_rules_and_nothing_changes() {
    let mut fx = story();
    let e = qe(&mut fx, "(-> (all) (:union (-> (all) (:count))))");
    assert_eq!(
        e,
        "Query error: A set-operation operand must yield a set of tasks, not a final value."
    );
    let before = fx.events();
    let e = fx.err(
        "task_query_write",
        json!({"query": "(-> (active) (:minus (-> (dormant) (:set-status! \"open\"))) (:set-status! \"completed\"))"}),
    );
    assert_eq!(e, READ_ONLY);
    assert_eq!(fx.events(), before);
}

#[test]
fn case_18_views_define_on_write_resolve_on_read() {
    let mut fx = story();
    assert_eq!(
        qe(&mut fx, "(define! \"mine\" (node \"tokenizer\"))"),
        READ_ONLY
    );
    assert_eq!(
        w(&mut fx, "(define! \"mine\" (node \"tokenizer\"))"),
        format!("1 task:\n- {TOKEN} (active)")
    );
    assert_eq!(
        q(&mut fx, "(-> (query \"mine\") (:ids))"),
        format!("1 task:\n- {TOKEN}")
    );
    assert_eq!(
        q(&mut fx, "(-> (node \"@cairn\") (:ids))"),
        "1 task:\n- @cairn"
    );
    assert_eq!(q(&mut fx, "(-> (all) (:count))"), "3");
}

#[test]
fn case_20_mutations_refused_on_read_applied_on_write_and_converge() {
    let mut fx = story();
    let before = fx.events();
    assert_eq!(
        qe(
            &mut fx,
            "(-> (node \"tokenizer\") (:set-status! \"completed\"))"
        ),
        READ_ONLY
    );
    assert_eq!(fx.events(), before);
    assert_eq!(
        w(
            &mut fx,
            "(-> (node \"tokenizer\") (:set-status! \"completed\"))"
        ),
        format!("1 task:\n- {TOKEN} (completed)")
    );
    assert_eq!(fx.events(), before + 1);
    assert_eq!(
        w(
            &mut fx,
            "(-> (node \"tokenizer\") (:set-status! \"completed\") (:count))"
        ),
        "1"
    );
    assert_eq!(fx.events(), before + 1);
    w(&mut fx, "(-> (current) (:set! :objective \"ship it\"))");
    assert!(
        fx.ok("task_get", json!({}))
            .contains("\n    objective = ship it")
    );
}

#[test]
fn case_22_suggestions() {
    let mut fx = story();
    assert!(qe(&mut fx, "(-> (all) (:sort :updated-at))").contains("did you mean :updated-ts?"));
    assert!(qe(&mut fx, "(-> (all) (:zelect :slug))").contains("did you mean :select?"));
    assert!(qe(&mut fx, "(edgez)").contains("did you mean edges?"));
}
