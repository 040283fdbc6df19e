//! The PostgreSQL engine (spec/team.md; docs/team.md): the same events,
//! projection and answers as the SQLite store, in one PostgreSQL schema per
//! project. Written per engine (no shared trigger or upsert shims): the
//! fold, the write boundary, rebuild and the digest live here; the event
//! model, the split remap and the digest's queries are shared with SQLite.
//!
//! Layers (docs/architecture.md), each importing only those below:
//! 1. `schema`, `target` (URL, schema, TLS mode, password source),
//!    `case_fold` (the SQL functions TQ's statements call);
//! 2. `connect`, `handle` ([`PgStore`], opening and migrating),
//!    `backfill` (what a migration fills from the stored events);
//! 3. `fold`;
//! 4. `write` (THE write boundary on this engine);
//! 5. `rebuild` (refold, verify, digest), `copy` (a push into an empty
//!    schema), `push`.

mod agents;
mod backfill;
pub mod case_fold;
pub mod changes;
pub mod connect;
mod copy;
pub(crate) mod fold;
pub mod handle;
pub mod push;
pub mod read;
mod rebuild;
pub mod schema;
pub mod search;
pub mod target;
pub mod tokens;
pub mod write;

pub use handle::PgStore;
pub use push::{PushReport, source_events};
pub use target::{PgTarget, SslMode, is_pg_url, redact};
