//! spec/team.md "The same on both engines": the seed tool reads and writes
//! (`tests/tools_seed_reads.rs`, `tests/tools_seed_writes.rs`: every return
//! and error line of seed 000) compiled a second time in a crate named
//! `pg_*`, which puts the tool fixture (`tests/toolfx`) in twin mode: every
//! call also runs on a PostgreSQL store and must give the same error flag,
//! text and structured result (search: the same set of tasks).
//!
//! Each included file declares its own `mod toolfx;`, so the fixture is
//! compiled once per including module (each copy with its own PostgreSQL
//! cluster; `tests/common/pg.rs` keeps their directories apart).
#![allow(clippy::duplicate_mod)]

#[path = "tools_seed_reads.rs"]
mod reads;
#[path = "tools_seed_writes.rs"]
mod writes;

mod toolfx;

use serde_json::json;

/// Twin mode is on here and compares calls: a call made through the
/// fixture is counted, and a PostgreSQL twin exists.
#[test]
fn twin_mode_compares_every_call() {
    let mut fx = toolfx::Fx::new();
    assert!(fx.twin.is_some(), "no PostgreSQL twin in a pg_* crate");
    let before = toolfx::TWIN_CALLS.load(std::sync::atomic::Ordering::SeqCst);
    fx.ok("task_create", json!({"name": "twin check"}));
    fx.ok("observe", json!({"text": "file.rs:45-78 flaky ranking"}));
    assert_eq!(
        fx.ok("task_search", json!({"query": "flak*"}))
            .lines()
            .next(),
        Some("1. [2026-06-22-twin-check]  (2026-06-22)")
    );
    assert!(toolfx::TWIN_CALLS.load(std::sync::atomic::Ordering::SeqCst) >= before + 3);
    assert_eq!(fx.events(), 2);
}
