//! The current task of each stateless (2026-07-28) HTTP agent of a
//! PostgreSQL-backed project (issue 22), as SQLite's `store/agents.rs`:
//! rows of the schema's `agent_current(agent, slug)` (`pg/schema.rs`), not
//! events, never exported, untouched by rebuild, so every server on the
//! database sees the same current task for a token's agent.

use super::connect::pg_err;
use super::handle::PgStore;
use crate::store::error::StoreError;

impl PgStore {
    /// The current task kept for `agent`, if any. Errors:
    /// [`StoreError::Postgres`].
    pub fn agent_current(&self, agent: &str) -> Result<Option<String>, StoreError> {
        Ok(self
            .client()
            .query_opt("SELECT slug FROM agent_current WHERE agent = $1", &[&agent])
            .map_err(pg_err)?
            .and_then(|r| r.get::<_, Option<String>>(0)))
    }

    /// Keeps `slug` (or no task) as `agent`'s current task. Errors:
    /// [`StoreError::Postgres`].
    pub fn set_agent_current(&self, agent: &str, slug: Option<&str>) -> Result<(), StoreError> {
        self.client()
            .execute(
                "INSERT INTO agent_current(agent, slug) VALUES ($1, $2)
                 ON CONFLICT (agent) DO UPDATE SET slug = excluded.slug",
                &[&agent, &slug],
            )
            .map_err(pg_err)?;
        Ok(())
    }
}
