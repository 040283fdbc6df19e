//! spec/team.md "The same on both engines": the issue-26 edge cases
//! (`tests/tq_edges.rs`) compiled again in a crate named `pg_*`, which puts
//! the shared fixture in twin mode: each read query also runs on a
//! PostgreSQL copy of the store, each mutation on a fresh PostgreSQL copy of
//! the events before it, and the texts must be byte-identical (the
//! `phase-of` cycle refusal included).

#[path = "tq_edges.rs"]
mod cases;
