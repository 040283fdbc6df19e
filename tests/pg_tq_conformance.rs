//! spec/team.md "The same on both engines": every TQ conformance case
//! (`tests/tq_conformance.rs`, spec/tq.md §8) run on BOTH engines. The cases
//! are compiled here a second time, in a crate named `pg_*`, which puts the
//! shared fixture (`tests/common`, `Fx`) in twin mode: each read query runs
//! on the SQLite store, whose events are then pushed to a PostgreSQL schema,
//! runs there too, and the two texts must be byte-identical (and equal the
//! case's expected text, which the case asserts on SQLite's).

#[path = "tq_conformance.rs"]
mod cases;
