//! The event store: an append-only event log and its projection (spec/store.md).
//!
//! Rooms: `location` (which database), `schema` (DDL, migrations), `open`
//! (the [`Store`] and its settings), `event` (events, canonical JSON, ULIDs,
//! content keys), `fold` (the reducer), `write` (the one write boundary),
//! `rebuild` (rebuild, verify, digest), `aside` (their scratch copies),
//! `slug` (minting and validation), `log` (the per-task NDJSON logs git
//! carries, reconcile, import), `changes` (the change counter subscriptions
//! and `cairn watch` poll).

pub mod aside;
pub mod changes;
pub mod error;
pub mod event;
mod fold;
pub mod location;
pub mod log;
pub mod model;
mod open;
pub mod read;
pub mod reader;
mod rebuild;
pub mod schema;
pub mod search;
pub mod slug;
pub(crate) mod split;
mod write;

pub use error::StoreError;
pub use event::{LoggedEvent, NewEvent, RESERVED_CAIRN, now};
pub use location::{Location, Rule};
pub use model::{EdgeClass, EdgeType, Status};
pub use open::{BUSY_TIMEOUT, READ_BUSY_WAIT, ReadOpen, Store};
pub use reader::{CatalogData, ReaderGuard, WarmReader};
pub use rebuild::Verification;
pub use write::{MAX_TS, WriteReport, WriteTx, write};
