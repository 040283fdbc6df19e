//! The event store: an append-only event log and its projection (spec/store.md).

pub mod model;
pub mod schema;

pub use model::{EdgeClass, EdgeType, Status};
pub mod read;
pub mod search;
