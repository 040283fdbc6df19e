//! spec/team.md "The same on both engines": the issue-26 tool edges
//! (`tests/tools_edges.rs`) compiled again in a crate named `pg_*`: every
//! call also runs on a PostgreSQL store and must give the same error flag,
//! text and structured result (the `phase-of` cycle refusal included).

#[path = "tools_edges.rs"]
mod cases;
