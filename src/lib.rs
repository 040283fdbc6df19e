//! cairn: a durable task graph for coding agents.
//!
//! Every write appends one event to an append-only log and folds it into
//! projection tables in SQLite (`store`). TQ, a small s-expression query
//! language, is compiled to one SQL statement over the projection (`tq`).

pub mod board;
pub mod cli;
pub mod clock;
pub mod fence;
pub mod mcp;
pub mod session;
pub mod store;
pub mod tools;
pub mod tq;
