//! The HTTP bearer tokens of a PostgreSQL-backed project (spec/team.md:
//! "Tokens, their grants and revocations live in a table of the database
//! (hashed; never as events, never exported), so every server honours a
//! revocation on its next request"). Rows of `tokens(name, sha256, grants,
//! created, last_used, revoked)`, as SQLite's (`store/tokens.rs`, issue
//! 22): one row per token ever created; a revoked row stays (with its
//! time) and its name may be used again. `grants` is a comma-separated
//! list. The token text itself is never stored. The MCP room's `http_tokens` owns the rules (names,
//! grants, the sentences); this file only reads and writes rows.

use std::sync::Mutex;

use super::connect::{connect, pg_err};
use super::handle::{PgStore, quoted};
use super::target::PgTarget;
use crate::store::error::StoreError;

/// One stored token row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenRow {
    /// Who holds it.
    pub name: String,
    /// SHA-256 of the token text (64 lower-hex).
    pub sha256: String,
    /// The capabilities, in `--grant` order.
    pub grants: Vec<String>,
    /// Creation time, RFC 3339 UTC.
    pub created: String,
    /// When a request last presented it (RFC 3339 UTC; the server records
    /// it at most once a minute), if ever.
    pub last_used: Option<String>,
    /// When it was revoked, if it was.
    pub revoked: Option<String>,
}

/// Every row's columns, oldest first (ties by name, then insertion).
const SELECT_ROWS: &str = "SELECT name, sha256, grants, created, last_used, revoked FROM tokens ORDER BY created, name, id";

fn token_row(r: &postgres::Row) -> TokenRow {
    TokenRow {
        name: r.get(0),
        sha256: r.get(1),
        grants: r
            .get::<_, String>(2)
            .split(',')
            .filter(|g| !g.is_empty())
            .map(str::to_string)
            .collect(),
        created: r.get(3),
        last_used: r.get(4),
        revoked: r.get(5),
    }
}

impl PgStore {
    /// Every token row, live and revoked, oldest first (ties by name).
    /// Errors: [`StoreError::Postgres`].
    pub fn tokens(&self) -> Result<Vec<TokenRow>, StoreError> {
        Ok(self
            .client()
            .query(SELECT_ROWS, &[])
            .map_err(pg_err)?
            .iter()
            .map(token_row)
            .collect())
    }

    /// Adds `row`; `false` (nothing written) when a live token of that
    /// name, or a row with that hash, exists. Errors:
    /// [`StoreError::Postgres`].
    pub fn add_token(&self, row: &TokenRow) -> Result<bool, StoreError> {
        let n = self
            .client()
            .execute(
                "INSERT INTO tokens(name, sha256, grants, created, last_used, revoked)
                 VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
                &[
                    &row.name,
                    &row.sha256,
                    &row.grants.join(","),
                    &row.created,
                    &row.last_used,
                    &row.revoked,
                ],
            )
            .map_err(pg_err)?;
        Ok(n == 1)
    }

    /// Revokes the live token `name` at `when` (the row stays); `false`
    /// when there is none. Errors: [`StoreError::Postgres`].
    pub fn revoke_token(&self, name: &str, when: &str) -> Result<bool, StoreError> {
        let n = self
            .client()
            .execute(
                "UPDATE tokens SET revoked = $2 WHERE name = $1 AND revoked IS NULL",
                &[&name, &when],
            )
            .map_err(pg_err)?;
        Ok(n == 1)
    }
}

/// The token table of one schema, read and written over ONE kept
/// connection (a server reads it on every request; opening a store each
/// time would cost a connection and a migration check). A broken
/// connection is reopened on the next call.
pub struct TokenTable {
    target: PgTarget,
    conn: Mutex<Option<postgres::Client>>,
}

impl Drop for TokenTable {
    fn drop(&mut self) {
        let slot = match self.conn.get_mut() {
            Ok(s) => s.take(),
            Err(p) => p.into_inner().take(),
        };
        if let Some(c) = slot {
            super::connect::drop_off_runtime(c);
        }
    }
}

impl std::fmt::Debug for TokenTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TokenTable({:?})", self.target)
    }
}

impl TokenTable {
    /// The table of `target`'s schema (connects on first use).
    pub fn new(target: PgTarget) -> TokenTable {
        TokenTable {
            target,
            conn: Mutex::new(None),
        }
    }

    /// The store this table belongs to.
    pub fn target(&self) -> &PgTarget {
        &self.target
    }

    /// Runs `f` on the kept connection (opened, its `search_path` set, when
    /// missing or broken). Errors: [`StoreError::Postgres`].
    fn with<T>(
        &self,
        f: impl Fn(&mut postgres::Client) -> Result<T, postgres::Error>,
    ) -> Result<T, StoreError> {
        let mut slot = match self.conn.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        if let Some(c) = slot.as_mut() {
            match f(c) {
                Ok(v) => return Ok(v),
                Err(e) if !c.is_closed() => return Err(pg_err(e)),
                // The database went away meanwhile: every connection of
                // this process to it may be dead.
                Err(_) => super::connect::saw_outage(),
            }
        }
        let mut c = connect(&self.target)?;
        c.batch_execute(&format!(
            "SET search_path TO {}",
            quoted(&self.target.schema)
        ))
        .map_err(pg_err)?;
        let v = f(&mut c).map_err(pg_err);
        *slot = Some(c);
        v
    }

    /// Every token row, live and revoked, oldest first. Errors:
    /// [`StoreError::Postgres`].
    pub fn rows(&self) -> Result<Vec<TokenRow>, StoreError> {
        self.with(|c| c.query(SELECT_ROWS, &[]))
            .map(|rows| rows.iter().map(token_row).collect())
    }

    /// Records that the live token with hash `sha256` was presented at
    /// `when`. Errors: [`StoreError::Postgres`].
    pub fn touch(&self, sha256: &str, when: &str) -> Result<(), StoreError> {
        self.with(|c| {
            c.execute(
                "UPDATE tokens SET last_used = $2 WHERE sha256 = $1 AND revoked IS NULL",
                &[&sha256, &when],
            )
        })
        .map(|_| ())
    }
}
