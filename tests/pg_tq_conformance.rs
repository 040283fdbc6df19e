//! spec/team.md "The same on both engines": every TQ conformance case
//! (`tests/tq_conformance.rs`, spec/tq.md §8) run on BOTH engines. The cases
//! are compiled here a second time, in a crate named `pg_*`, which puts the
//! shared fixture (`tests/common`, `Fx`) in twin mode: each read query runs
//! on the SQLite store, whose events are then pushed to a PostgreSQL schema,
//! runs there too, and the two texts must be byte-identical (and equal the
//! case's expected text, which the case asserts on SQLite's).

#[path = "tq_conformance.rs"]
mod cases;

/// The same fixture (a second copy, in twin mode as the cases' copy).
mod common;

/// Twin mode is on in this crate and does compare: a read query counts one
/// identical answer (fails when the fixture stops comparing).
#[test]
fn twin_mode_compares_each_read_query() {
    assert!(common::twin_mode());
    let mut f = common::Fx::new();
    f.create("alpha");
    if f.pg_synced().is_none() {
        return; // PostgreSQL cannot start (not CI; the reason is printed).
    }
    let before = common::TWIN_SAME.load(std::sync::atomic::Ordering::SeqCst);
    assert_eq!(
        f.r("(-> (all) (:ids))"),
        format!("1 task:\n- {}", common::s("alpha"))
    );
    let after = common::TWIN_SAME.load(std::sync::atomic::Ordering::SeqCst);
    assert!(after > before, "{before} -> {after}");
}
