//! The current task of each stateless (2026-07-28) HTTP agent of a SQLite
//! store (issue 22: "claims, `(mine)` and the current task of a stateless
//! agent keyed by the token's name and kept in the store"). One row per
//! agent: `agent_current(agent, slug)`. Like the `tokens` table it sits
//! beside the projection, created on first use: it is not an event, never
//! exported, and `rebuild` (which swaps only the projection tables) never
//! touches it. The MCP server reads it at the start of a stateless request
//! and writes it when a tool moves the current task.

use rusqlite::{OptionalExtension, params};

use super::error::StoreError;
use super::handle::Store;

const DDL: &str = "
CREATE TABLE IF NOT EXISTS agent_current (
    agent TEXT PRIMARY KEY,
    slug  TEXT
);
";

impl Store {
    /// The current task kept for `agent`, if any. Errors:
    /// [`StoreError::Sqlite`].
    pub fn agent_current(&self, agent: &str) -> Result<Option<String>, StoreError> {
        self.conn().execute_batch(DDL)?;
        Ok(self
            .conn()
            .query_row(
                "SELECT slug FROM agent_current WHERE agent = ?1",
                params![agent],
                |r| r.get::<_, Option<String>>(0),
            )
            .optional()?
            .flatten())
    }

    /// Keeps `slug` (or no task) as `agent`'s current task. Errors:
    /// [`StoreError::Sqlite`].
    pub fn set_agent_current(&self, agent: &str, slug: Option<&str>) -> Result<(), StoreError> {
        self.conn().execute_batch(DDL)?;
        self.conn().execute(
            "INSERT INTO agent_current (agent, slug) VALUES (?1, ?2)
             ON CONFLICT (agent) DO UPDATE SET slug = excluded.slug",
            params![agent, slug],
        )?;
        Ok(())
    }
}
