//! The HTTP bearer tokens of a SQLite store, in its own database (issue 22;
//! spec/mcp.md "Wave 3": "tokens move from the side file into a table of
//! the store's database: hashed, with name, grants, created, last used,
//! revoked; never as events, never in the per-task logs"). One row per
//! token ever created: `tokens(name, sha256, grants, created, last_used,
//! revoked)`; a revoked row stays (with its time) and its name may be used
//! again. The table sits beside the projection, created on first use:
//! `rebuild` swaps only the projection tables, so it never touches it, and
//! exports carry events only. The MCP room's `http_tokens` owns the rules
//! (names, grants, sentences); this file only reads and writes rows.

use rusqlite::{OptionalExtension, params};

use super::error::StoreError;
use super::handle::Store;

/// One stored token row (never the token itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenRecord {
    /// Who holds it.
    pub name: String,
    /// SHA-256 of the token text (64 lower-hex).
    pub sha256: String,
    /// The capabilities, in `--grant` order.
    pub grants: Vec<String>,
    /// Creation time, RFC 3339 UTC.
    pub created: String,
    /// When a request last presented it (RFC 3339 UTC; recorded at most once
    /// a minute), if ever.
    pub last_used: Option<String>,
    /// When it was revoked, if it was.
    pub revoked: Option<String>,
}

const DDL: &str = "
CREATE TABLE IF NOT EXISTS tokens (
    id        INTEGER PRIMARY KEY,
    name      TEXT NOT NULL,
    sha256    TEXT NOT NULL UNIQUE,
    grants    TEXT NOT NULL,
    created   TEXT NOT NULL,
    last_used TEXT,
    revoked   TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS tokens_live_name ON tokens(name) WHERE revoked IS NULL;
";

impl Store {
    fn tokens_table(&self) -> Result<(), StoreError> {
        self.conn().execute_batch(DDL)?;
        Ok(())
    }

    /// Every token row, live and revoked, oldest first (ties by name).
    /// Errors: [`StoreError::Sqlite`].
    pub fn token_records(&self) -> Result<Vec<TokenRecord>, StoreError> {
        self.tokens_table()?;
        let mut stmt = self.conn().prepare(
            "SELECT name, sha256, grants, created, last_used, revoked FROM tokens ORDER BY created, name, id",
        )?;
        let rows = stmt.query_map([], |r| {
            let grants: String = r.get(2)?;
            Ok(TokenRecord {
                name: r.get(0)?,
                sha256: r.get(1)?,
                grants: grants
                    .split(',')
                    .filter(|g| !g.is_empty())
                    .map(str::to_string)
                    .collect(),
                created: r.get(3)?,
                last_used: r.get(4)?,
                revoked: r.get(5)?,
            })
        })?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }

    /// Adds a live token; `false` (nothing written) when a live token of that
    /// name, or a row with that hash, exists. One transaction, so two
    /// creates of one name at once keep exactly one. Errors:
    /// [`StoreError::Sqlite`].
    pub fn add_token_record(&self, rec: &TokenRecord) -> Result<bool, StoreError> {
        self.tokens_table()?;
        let n = self.conn().execute(
            "INSERT OR IGNORE INTO tokens (name, sha256, grants, created, last_used, revoked) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                rec.name,
                rec.sha256,
                rec.grants.join(","),
                rec.created,
                rec.last_used,
                rec.revoked
            ],
        )?;
        Ok(n == 1)
    }

    /// Revokes the live token `name` at `when`; `false` when there is none.
    /// Errors: [`StoreError::Sqlite`].
    pub fn revoke_token_record(&self, name: &str, when: &str) -> Result<bool, StoreError> {
        self.tokens_table()?;
        let n = self.conn().execute(
            "UPDATE tokens SET revoked = ?2 WHERE name = ?1 AND revoked IS NULL",
            params![name, when],
        )?;
        Ok(n == 1)
    }

    /// Records that the live token with hash `sha256` was presented at
    /// `when`. Errors: [`StoreError::Sqlite`].
    pub fn touch_token_record(&self, sha256: &str, when: &str) -> Result<(), StoreError> {
        self.tokens_table()?;
        self.conn().execute(
            "UPDATE tokens SET last_used = ?2 WHERE sha256 = ?1 AND revoked IS NULL",
            params![sha256, when],
        )?;
        Ok(())
    }

    /// Whether any token row exists (live or revoked). Errors:
    /// [`StoreError::Sqlite`].
    pub fn has_token_records(&self) -> Result<bool, StoreError> {
        self.tokens_table()?;
        Ok(self
            .conn()
            .query_row("SELECT 1 FROM tokens LIMIT 1", [], |_| Ok(()))
            .optional()?
            .is_some())
    }
}
