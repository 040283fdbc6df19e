//! The issue-26 edges on the tool surface (seed 000 tools; docs/tq.md
//! "Metadata keys", docs/store.md "Phase-of cycles"): `task_set_metadata`
//! keys are one key whatever their case, the same rule as `(:set! ...)`,
//! `(fields)` and TQ field lookup; a `task_link` phase-of that would close a
//! cycle is refused naming it. `tests/pg_tools_edges.rs` runs every call
//! here on PostgreSQL too (same flag, text and structure).

mod toolfx;

use serde_json::json;
use toolfx::{PREFIX, TOKEN, TUNE, story};

#[test]
fn task_set_metadata_folds_the_key_to_lower_case() {
    let mut fx = story();
    assert_eq!(
        fx.ok("task_set_metadata", json!({"key": "Owner", "value": "ann"})),
        format!("Set owner on {PREFIX}.")
    );
    assert_eq!(
        fx.ok("task_set_metadata", json!({"key": "OWNER", "value": "bob"})),
        format!("Set owner on {PREFIX}.")
    );
    let got = fx.ok("task_get", json!({}));
    assert!(got.contains("\n  metadata:\n    owner = bob"), "{got}");
    assert!(!got.contains("ann") && !got.contains("Owner"), "{got}");
    assert_eq!(
        fx.ok(
            "task_query",
            json!({"query": "(-> (all) (:where (= :OWNER \"bob\")) (:select :owner))"})
        ),
        format!("1 task:\n- {PREFIX}  owner=bob")
    );
    assert_eq!(
        fx.ok(
            "task_query",
            json!({"query": "(-> (fields) (:where (= :origin \"metadata\")) (:ids))"})
        ),
        "1 task:\n- owner"
    );
    // `Description` is the description key too.
    assert_eq!(
        fx.ok(
            "task_set_metadata",
            json!({"key": "Description", "value": "prefix search"})
        ),
        format!("Set description on {PREFIX}.")
    );
    assert!(fx.ok("task_get", json!({})).contains("\n  prefix search"));
}

#[test]
fn task_link_refuses_a_phase_of_cycle_naming_it() {
    let mut fx = story();
    // PREFIX is a phase of TUNE; TUNE phase-of PREFIX would close the loop.
    let e0 = fx.events();
    assert_eq!(
        fx.err(
            "task_link",
            json!({"task_id": TUNE, "target_id": PREFIX, "edge_type": "phase-of"})
        ),
        format!(
            "{TUNE} phase-of {PREFIX} would make a cycle: {TUNE} → {PREFIX} → {TUNE}. A plan cannot contain itself."
        )
    );
    assert_eq!(fx.events(), e0);
    // A longer loop through a third task.
    fx.ok(
        "task_link",
        json!({"task_id": TUNE, "target_id": TOKEN, "edge_type": "phase-of"}),
    );
    assert_eq!(
        fx.err(
            "task_link",
            json!({"task_id": TOKEN, "target_id": PREFIX, "edge_type": "phase-of"})
        ),
        format!(
            "{TOKEN} phase-of {PREFIX} would make a cycle: {TOKEN} → {PREFIX} → {TUNE} → {TOKEN}. A plan cannot contain itself."
        )
    );
    // depends-on loops are a different matter (lateral edges), still allowed.
    fx.ok(
        "task_link",
        json!({"task_id": TOKEN, "target_id": PREFIX, "edge_type": "depends-on"}),
    );
}
