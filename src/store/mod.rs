//! The event store: an append-only event log and its projection (spec/store.md).
//!
//! Layers, each importing only from the ones below it (docs/architecture.md):
//!
//! 1. model: `error`, `model`, `event` (events, canonical JSON, ULIDs,
//!    content keys, `MAX_TS`), `slug`, `schema` (DDL, migrations, settings),
//!    `location`, `search`, `texts` (a task's name and description as
//!    search registers), `read`, and the log's bottom: `log/mod.rs`
//!    (paths, folder names), `log/line`, `log/safe`, `progress` (the
//!    stages of long work, reported to a sink the CLI installs);
//! 2. handle: `reader` (read-only connections, the warm reader), `handle`
//!    (the [`Store`] and its small lookups), `log/marks` (watermarks);
//! 3. fold: `split`, `fold` (the reducer), `bulk` (a whole refold with
//!    the registers in memory), `refold` (fold the whole log);
//! 4. write and append: `write` (the one write boundary), `log/append`;
//! 5. rebuild and reconcile: `aside`, `rebuild` (verify, digest),
//!    `log/read`, `log/reconcile`, `log/check`, `log/import`, `changes`;
//! 6. open: `open` (opening, migrating, the read-only open).
//!
//! `pg/` is the PostgreSQL engine beside these (spec/team.md), with its own
//! layers (see its module doc).

mod agents;
pub mod aside;
mod bulk;
pub mod changes;
pub mod checkpoint;
pub mod commits;
mod cycle;
pub mod db;
pub mod error;
pub mod event;
mod fold;
pub(crate) mod handle;
pub mod health;
pub mod location;
pub mod log;
pub mod model;
pub mod names;
mod open;
pub mod parts;
pub mod pg;
pub mod progress;
pub mod read;
pub mod reader;
mod rebuild;
mod refold;
pub mod schema;
pub mod search;
pub mod slug;
pub(crate) mod split;
pub mod texts;
pub mod tokens;
mod write;

pub use db::{Db, DbRef, WriteCx};
pub use error::StoreError;
pub use event::MAX_TS;
pub use event::{LoggedEvent, NewEvent, RESERVED_CAIRN, now};
pub use fold::metadata_key;
pub use handle::Store;
pub use location::{Location, Rule};
pub use model::{EdgeClass, EdgeType, Status};
pub use open::{READ_BUSY_WAIT, ReadOpen};
pub use reader::{CatalogData, ReaderGuard, WarmReader};
pub use rebuild::Verification;
pub use schema::BUSY_TIMEOUT;
pub use write::{WriteReport, WriteTx, write};
