//! The current-task pointer is stored bare: a depot-prefixed slug handed to
//! the tools (or to the session) never reaches `(current)` with its prefix.

mod toolfx;

use serde_json::json;
use toolfx::{Fx, TUNE};

#[test]
fn bootstrap_with_a_depot_prefix_stores_the_bare_slug() {
    let mut fx = Fx::new();
    fx.ok("task_create", json!({"name": "tune search"}));
    fx.session.current = None;
    fx.ok("task_bootstrap", json!({"task_id": format!("work:{TUNE}")}));
    assert_eq!(fx.session.current.as_deref(), Some(TUNE));
    assert_eq!(
        fx.ok(
            "task_query",
            json!({"query": "(-> (current) (:select :status))"})
        ),
        format!("1 task:\n- {TUNE}  status=active")
    );
}

#[test]
fn a_depot_prefixed_switch_is_stored_bare_and_current_finds_it() {
    let mut fx = Fx::new();
    fx.ok("task_create", json!({"name": "tune search"}));
    fx.session.switch_to(&format!("depot:{TUNE}"));
    assert_eq!(fx.session.current.as_deref(), Some(TUNE));
    fx.session.current = None;
    fx.session.adopt_if_none(&format!("depot:{TUNE}"));
    assert_eq!(fx.session.current.as_deref(), Some(TUNE));
    assert_eq!(
        fx.ok(
            "task_query",
            json!({"query": "(-> (current) (:select :status))"})
        ),
        format!("1 task:\n- {TUNE}  status=active")
    );
    assert_eq!(
        fx.ok("observe", json!({"text": "pointer is bare"})),
        format!("Observed on {TUNE}.")
    );
}

#[test]
fn fork_from_a_depot_prefixed_parent_switches_to_the_bare_child() {
    let mut fx = Fx::new();
    fx.ok("task_create", json!({"name": "tune search"}));
    assert_eq!(
        fx.ok(
            "task_fork",
            json!({"name": "ranking weights", "from": format!("work:{TUNE}")})
        ),
        format!("Forked 2026-06-22-ranking-weights from {TUNE} (phase-of).")
    );
    assert_eq!(
        fx.session.current.as_deref(),
        Some("2026-06-22-ranking-weights")
    );
}
