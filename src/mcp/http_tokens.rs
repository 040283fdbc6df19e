//! Bearer tokens for `cairn serve --http` (spec/mcp.md "Wave 2: one server
//! for a team", `cairn token create|list|revoke`).
//!
//! A token is `cairn_` followed by 64 lowercase hex digits (32 random bytes
//! from the operating system). Only its SHA-256 (hex) is kept, with the
//! token's name, grants and creation time, in a JSON file next to the store:
//! `<db>.tokens` (`.cairn/cairn.db.tokens`). That file is outside the event
//! log, outside the per-task logs and outside `cairn.db` (so rebuilding the
//! database from the logs cannot lose it), and the store's `.gitignore`
//! (`cairn.db*`) keeps it out of git. It is written atomically (temporary
//! file + rename) with mode 0600 on Unix.
//!
//! Every change ([`create`], [`revoke`]) is a read-modify-write under an
//! exclusive lock on `<db>.tokens.lock` (an advisory `flock` held for the
//! whole change), so two `cairn token` commands at once never undo each
//! other: a revoke that printed `Revoked the token NAME.` stays revoked and
//! a concurrent create is kept. Readers (the server, `cairn token list`)
//! take no lock: the rename makes every read see a whole file, old or new.
//!
//! On a PostgreSQL store the same entries live in the schema's `tokens`
//! table instead ([`TokenSource::Pg`], `store::pg::tokens`): one row per
//! token ever created, with last use and revocation time as on SQLite, so
//! every server on the database sees a revocation at once.
//!
//! Since issue 22 a SQLite store keeps its tokens in its own database too
//! ([`TokenSource::Sqlite`], `store::tokens`: with last use and revocation
//! time); the side file above is read once, to move it into the table
//! ([`TokenSource::sqlite`]), and renamed `<db>.tokens.migrated`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::session::{Capability, parse_grants};

/// Where a server's tokens live: the `tokens` table of a SQLite store's
/// database (issue 22), the side file beside a `cairn.db` (before issue 22;
/// [`TokenSource::sqlite`] migrates it once), or the `tokens` table of a
/// PostgreSQL schema.
#[derive(Debug, Clone)]
pub enum TokenSource {
    /// `<db>.tokens` (read by the migration; kept for its tests).
    File(PathBuf),
    /// The `tokens` table of the SQLite store (one kept connection).
    Sqlite(std::sync::Arc<SqliteTokens>),
    /// The schema's `tokens` table (reads over one kept connection).
    Pg(std::sync::Arc<PgTokens>),
}

impl TokenSource {
    /// The `tokens` table of the PostgreSQL store `t`.
    pub fn pg(t: &crate::store::pg::PgTarget) -> TokenSource {
        TokenSource::Pg(std::sync::Arc::new(PgTokens {
            table: crate::store::pg::tokens::TokenTable::new(t.clone()),
            touched: Touched::default(),
        }))
    }
}

/// The `tokens` table of a PostgreSQL schema ([`crate::store::pg::tokens`])
/// and when this server last wrote each token's `last_used`.
#[derive(Debug)]
pub struct PgTokens {
    table: crate::store::pg::tokens::TokenTable,
    touched: Touched,
}

/// When each token hash's `last_used` was last written by this server, so
/// it is written at most once a minute per token (a busy agent does not
/// write on every request).
#[derive(Debug, Default)]
struct Touched(std::sync::Mutex<std::collections::HashMap<String, std::time::Instant>>);

impl Touched {
    /// Whether `sha256`'s last use is due to be written now (and notes
    /// that it is being written).
    fn due(&self, sha256: &str) -> bool {
        let mut m = match self.0.lock() {
            Ok(m) => m,
            Err(p) => p.into_inner(),
        };
        if m.get(sha256).is_some_and(|t| t.elapsed() < TOUCH_EVERY) {
            return false;
        }
        m.insert(sha256.to_string(), std::time::Instant::now());
        true
    }
}

/// The `tokens` table of a SQLite store ([`crate::store::tokens`]): one
/// connection, opened on first use, shared by the server's requests.
#[derive(Debug)]
pub struct SqliteTokens {
    db: PathBuf,
    store: std::sync::Mutex<Option<crate::store::Store>>,
    /// When each hash's `last_used` was last written.
    touched: Touched,
}

/// How often a token's `last_used` is written at most.
const TOUCH_EVERY: std::time::Duration = std::time::Duration::from_secs(60);

/// Now, RFC 3339 UTC to the second.
fn now_text() -> String {
    time::OffsetDateTime::now_utc()
        .replace_nanosecond(0)
        .ok()
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_default()
}

impl SqliteTokens {
    fn with<T>(
        &self,
        f: impl FnOnce(&crate::store::Store) -> Result<T, crate::store::StoreError>,
    ) -> Result<T, TokenError> {
        let mut guard = match self.store.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        if guard.is_none() {
            *guard = Some(crate::store::Store::open(&self.db)?);
        }
        match guard.as_ref() {
            Some(store) => Ok(f(store)?),
            None => Ok(f(&crate::store::Store::open(&self.db)?)?),
        }
    }

    /// Moves the side file `<db>.tokens` into the table, once: its live
    /// tokens are added (a name or hash already in the table is kept as it
    /// is) and the file is renamed `<db>.tokens.migrated`. Nothing when
    /// there is no side file. Errors: the file's, the store's.
    fn migrate(&self) -> Result<usize, TokenError> {
        let path = tokens_path(&self.db);
        if !path.exists() {
            return Ok(0);
        }
        let file = load(&path)?;
        let mut moved = 0;
        for t in &file.tokens {
            let rec = crate::store::tokens::TokenRecord {
                name: t.name.clone(),
                sha256: t.sha256.clone(),
                grants: t.grants.clone(),
                created: t.created.clone(),
                last_used: None,
                revoked: None,
            };
            if self.with(|s| s.add_token_record(&rec))? {
                moved += 1;
            }
        }
        let mut done = path.as_os_str().to_owned();
        done.push(".migrated");
        std::fs::rename(&path, PathBuf::from(done))
            .map_err(|source| TokenError::Io { path, source })?;
        tracing::info!(tokens = moved, "moved the token file into the store");
        Ok(moved)
    }

    /// Records that the token with hash `sha256` was presented now, unless
    /// that was recorded less than a minute ago. A failure is logged.
    pub fn touch(&self, sha256: &str) {
        if !self.touched.due(sha256) {
            return;
        }
        if let Err(e) = self.with(|s| s.touch_token_record(sha256, &now_text())) {
            tracing::debug!(error = %e, "could not record a token's last use");
        }
    }
}

impl TokenSource {
    /// The `tokens` table of the SQLite store at `db`, after moving an
    /// existing side file `<db>.tokens` into it (once). Errors: the side
    /// file's, the store's.
    pub fn sqlite(db: &Path) -> Result<TokenSource, TokenError> {
        let t = SqliteTokens {
            db: db.to_path_buf(),
            store: std::sync::Mutex::new(None),
            touched: Touched::default(),
        };
        t.migrate()?;
        Ok(TokenSource::Sqlite(std::sync::Arc::new(t)))
    }

    /// Records a use of the token with hash `sha256` (the table's
    /// `last_used`, at most once a minute per token; nothing for a side
    /// file). A failure is logged. Blocking.
    pub fn touch(&self, sha256: &str) {
        match self {
            TokenSource::File(_) => {}
            TokenSource::Sqlite(t) => t.touch(sha256),
            TokenSource::Pg(t) => {
                if !t.touched.due(sha256) {
                    return;
                }
                if let Err(e) = t.table.touch(sha256, &now_text()) {
                    tracing::debug!(error = %e, "could not record a token's last use");
                }
            }
        }
    }
}

impl TokenSource {
    /// Every token ([`load`] for a file; the table's rows). Blocking: an
    /// async caller runs it on a blocking thread. Errors: the file's, or
    /// [`TokenError::Store`].
    pub fn load(&self) -> Result<TokenFile, TokenError> {
        match self {
            TokenSource::File(p) => load(p),
            TokenSource::Sqlite(t) => Ok(TokenFile {
                tokens: t
                    .with(|s| s.token_records())?
                    .into_iter()
                    .filter(|r| r.revoked.is_none())
                    .map(|r| TokenEntry {
                        name: r.name,
                        sha256: r.sha256,
                        grants: r.grants,
                        created: r.created,
                        last_used: r.last_used,
                    })
                    .collect(),
            }),
            TokenSource::Pg(t) => Ok(TokenFile {
                tokens: t
                    .table
                    .rows()?
                    .into_iter()
                    .filter(|r| r.revoked.is_none())
                    .map(|r| TokenEntry {
                        name: r.name,
                        sha256: r.sha256,
                        grants: r.grants,
                        created: r.created,
                        last_used: r.last_used,
                    })
                    .collect(),
            }),
        }
    }

    /// [`create`] on this source.
    pub fn create(&self, name: &str, grant: &str) -> Result<String, TokenError> {
        match self {
            TokenSource::File(p) => create(p, name, grant),
            TokenSource::Sqlite(t) => {
                let (token, entry) = mint(name, grant)?;
                let rec = crate::store::tokens::TokenRecord {
                    name: entry.name,
                    sha256: entry.sha256,
                    grants: entry.grants,
                    created: entry.created,
                    last_used: None,
                    revoked: None,
                };
                if !t.with(|s| s.add_token_record(&rec))? {
                    return Err(TokenError::Exists(name.to_string()));
                }
                Ok(token)
            }
            TokenSource::Pg(t) => {
                let (token, entry) = mint(name, grant)?;
                let store = crate::store::pg::PgStore::open(t.table.target())?;
                let row = crate::store::pg::tokens::TokenRow {
                    name: entry.name,
                    sha256: entry.sha256,
                    grants: entry.grants,
                    created: entry.created,
                    last_used: None,
                    revoked: None,
                };
                if !store.add_token(&row)? {
                    return Err(TokenError::Exists(name.to_string()));
                }
                Ok(token)
            }
        }
    }

    /// [`revoke`] on this source.
    pub fn revoke(&self, name: &str) -> Result<(), TokenError> {
        match self {
            TokenSource::File(p) => revoke(p, name),
            TokenSource::Sqlite(t) => {
                check_name(name).map_err(|_| TokenError::Unknown(shown_name(name)))?;
                if t.with(|s| s.revoke_token_record(name, &now_text()))? {
                    Ok(())
                } else {
                    Err(TokenError::Unknown(shown_name(name)))
                }
            }
            TokenSource::Pg(t) => {
                check_name(name).map_err(|_| TokenError::Unknown(shown_name(name)))?;
                let store = crate::store::pg::PgStore::open(t.table.target())?;
                if store.revoke_token(name, &now_text())? {
                    Ok(())
                } else {
                    Err(TokenError::Unknown(shown_name(name)))
                }
            }
        }
    }
}

/// The prefix of every token (it makes a leaked token easy to recognise).
pub const TOKEN_PREFIX: &str = "cairn_";

/// Why a token operation failed. Each message is one sentence for the user.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    /// The token file could not be read or written.
    #[error("cannot use the token file {path}: {source}")]
    Io {
        /// The `<db>.tokens` path.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The token file is not the JSON this module writes.
    #[error("the token file {path} is damaged: {reason}")]
    Damaged {
        /// The `<db>.tokens` path.
        path: PathBuf,
        /// serde_json's message.
        reason: String,
    },
    /// A name outside `[A-Za-z0-9._-]{1,64}`.
    /// (The name as shown: quoted, control characters escaped, at most 64
    /// characters then `…`; never echoed raw, hostile run L3.)
    #[error("token name {0} is not valid; use 1 to 64 letters, digits, '.', '_' or '-'.")]
    BadName(String),
    /// `create` with a name already in use.
    #[error("a token named \"{0}\" already exists; revoke it first.")]
    Exists(String),
    /// `revoke` of a name that is not there.
    #[error("no token named {0}.")]
    Unknown(String),
    /// A bad `--grant` list (the message of [`parse_grants`]).
    #[error("{0}")]
    Grants(String),
    /// The PostgreSQL store failed (connecting, a statement).
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    /// The operating system's random source failed.
    #[error("cannot draw random bytes for a token: {0}")]
    Random(String),
}

/// One stored token: never the token itself, only its hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenEntry {
    /// The name: who holds the token (an agent, a reviewer). It is the
    /// agent-identity prefix of every session opened with the token.
    pub name: String,
    /// SHA-256 of the token text, 64 lowercase hex digits.
    pub sha256: String,
    /// The capabilities, a subset of `read`, `observe`, `write`, in
    /// `--grant` order.
    pub grants: Vec<String>,
    /// Creation time, RFC 3339 UTC.
    pub created: String,
    /// When a request last presented it (the store's table, SQLite or
    /// PostgreSQL, recorded at most once a minute); `None` if never, or
    /// unknown (a side file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_used: Option<String>,
}

impl TokenEntry {
    /// The grants as capabilities (unknown words, which only a hand-edited
    /// file could hold, are dropped: they grant nothing).
    pub fn capabilities(&self) -> BTreeSet<Capability> {
        self.grants
            .iter()
            .filter_map(|g| Capability::parse(g))
            .collect()
    }
}

/// The whole token file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenFile {
    /// Every live token, in creation order.
    pub tokens: Vec<TokenEntry>,
}

impl TokenFile {
    /// The entry whose hash matches `presented` (the text after `Bearer `),
    /// if any.
    pub fn lookup(&self, presented: &str) -> Option<&TokenEntry> {
        let h = sha256_hex(presented.trim());
        self.tokens.iter().find(|t| t.sha256 == h)
    }
}

/// `<db>.tokens`: the token file for the store at `db`.
pub fn tokens_path(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push(".tokens");
    PathBuf::from(name)
}

/// SHA-256 of `text` as 64 lowercase hex digits.
pub fn sha256_hex(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// `<db>.tokens.lock`: the lock file beside the token file at `tokens`.
pub fn lock_path(tokens: &Path) -> PathBuf {
    let mut name = tokens.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

/// Runs `change` on the token file at `path` under an exclusive lock on
/// [`lock_path`] and saves the result (temporary file + rename) before the
/// lock is released; `change`'s error leaves the file untouched. Errors:
/// [`TokenError::Io`] (the lock or the file), [`TokenError::Damaged`], and
/// `change`'s own.
fn locked_change<T>(
    path: &Path,
    change: impl FnOnce(&mut TokenFile) -> Result<T, TokenError>,
) -> Result<T, TokenError> {
    let lock = lock_path(path);
    let io = |source| TokenError::Io {
        path: lock.clone(),
        source,
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let guard = open_private(&lock).map_err(io)?;
    // Blocks until every other change has finished; released when `guard`
    // is closed (also if this process dies).
    guard.lock().map_err(io)?;
    let mut file = load(path)?;
    let out = change(&mut file)?;
    save(path, &file)?;
    drop(guard);
    Ok(out)
}

/// Reads the token file at `path`; a missing file is an empty one.
/// Errors: [`TokenError::Io`], [`TokenError::Damaged`].
pub fn load(path: &Path) -> Result<TokenFile, TokenError> {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| TokenError::Damaged {
            path: path.to_path_buf(),
            reason: e.to_string(),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(TokenFile::default()),
        Err(source) => Err(TokenError::Io {
            path: path.to_path_buf(),
            source,
        }),
    }
}

fn save(path: &Path, file: &TokenFile) -> Result<(), TokenError> {
    let io = |source| TokenError::Io {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let mut text = serde_json::to_string_pretty(file).map_err(|e| TokenError::Damaged {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })?;
    text.push('\n');
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp{}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    if let Err(e) = write_private(&tmp, text.as_bytes()) {
        let _ = std::fs::remove_file(&tmp);
        return Err(io(e));
    }
    if let Err(e) = std::fs::rename(&tmp, path) {
        let _ = std::fs::remove_file(&tmp);
        return Err(io(e));
    }
    sync_dir(path);
    Ok(())
}

/// Opens (creating) `path` for writing with mode 0600 on Unix.
fn open_private(path: &Path) -> std::io::Result<std::fs::File> {
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    o.open(path)
}

fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut f = open_private(path)?;
    f.set_len(0)?;
    f.write_all(bytes)?;
    f.sync_all()
}

/// Makes a rename in `path`'s folder durable (best effort; Unix only).
fn sync_dir(path: &Path) {
    #[cfg(unix)]
    if let Some(dir) = path.parent() {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
    }
    #[cfg(not(unix))]
    let _ = path;
}

fn check_name(name: &str) -> Result<(), TokenError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if ok {
        Ok(())
    } else {
        Err(TokenError::BadName(shown_name(name)))
    }
}

/// `cairn token create NAME --grant LIST`: mints a random token, stores its
/// hash under `name` with the grants, and returns the token text (shown to
/// the user once, never stored). Errors: [`TokenError::BadName`],
/// [`TokenError::Grants`], [`TokenError::Exists`], [`TokenError::Random`],
/// and the file errors of [`load`].
pub fn create(path: &Path, name: &str, grant: &str) -> Result<String, TokenError> {
    let (token, entry) = mint(name, grant)?;
    let name = entry.name.clone();
    locked_change(path, |file| {
        if file.tokens.iter().any(|t| t.name == name) {
            return Err(TokenError::Exists(name.clone()));
        }
        file.tokens.push(entry);
        Ok(())
    })?;
    Ok(token)
}

/// A new token for `name` with `grant`, and its stored entry. Errors:
/// [`TokenError::BadName`], [`TokenError::Grants`], [`TokenError::Random`].
fn mint(name: &str, grant: &str) -> Result<(String, TokenEntry), TokenError> {
    check_name(name)?;
    let grants = parse_grants(grant).map_err(TokenError::Grants)?;
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| TokenError::Random(e.to_string()))?;
    let token = format!("{TOKEN_PREFIX}{}", hex::encode(bytes));
    let created = time::OffsetDateTime::now_utc()
        .replace_nanosecond(0)
        .ok()
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_default();
    let entry = TokenEntry {
        name: name.to_string(),
        sha256: sha256_hex(&token),
        grants: Capability::ALL
            .into_iter()
            .filter(|c| grants.contains(c))
            .map(|c| c.as_str().to_string())
            .collect(),
        created,
        last_used: None,
    };
    Ok((token, entry))
}

/// `cairn token revoke NAME`: removes the token; a server refuses it (401)
/// from its next request on. Errors: [`TokenError::Unknown`] and the file
/// errors.
pub fn revoke(path: &Path, name: &str) -> Result<(), TokenError> {
    // No token file: nothing to revoke, and nothing created beside the
    // store (no lock file; hostile run L3).
    if !path.exists() {
        return Err(TokenError::Unknown(shown_name(name)));
    }
    locked_change(path, |file| {
        let before = file.tokens.len();
        file.tokens.retain(|t| t.name != name);
        if file.tokens.len() == before {
            return Err(TokenError::Unknown(shown_name(name)));
        }
        Ok(())
    })
}

/// A token name as an error message shows it: quoted with control and
/// escape characters escaped (`"\u{1b}]0;x\u{7}"`), at most 64 characters
/// then `…`, so a hostile name never reaches a terminal raw or floods it.
fn shown_name(name: &str) -> String {
    let clipped: String = name.chars().take(64).collect();
    let more = if name.chars().count() > 64 { "…" } else { "" };
    format!("{clipped:?}{more}")
}

/// `cairn token list`: one line per live token, `NAME  GRANTS  CREATED`,
/// then `  last used TIME` once a request presented it; names padded to the
/// longest; `No tokens.` when there are none.
pub fn list_text(file: &TokenFile) -> String {
    if file.tokens.is_empty() {
        return "No tokens.".to_string();
    }
    let w = file.tokens.iter().map(|t| t.name.len()).max().unwrap_or(0);
    let g = file
        .tokens
        .iter()
        .map(|t| t.grants.join(",").len())
        .max()
        .unwrap_or(0);
    file.tokens
        .iter()
        .map(|t| {
            let line = format!("{:w$}  {:g$}  {}", t.name, t.grants.join(","), t.created);
            match &t.last_used {
                Some(when) => format!("{line}  last used {when}"),
                None => line,
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_names_are_never_echoed_raw() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cairn.db.tokens");
        let escape = create(&path, "\u{1b}]0;pwned\u{7}", "read").unwrap_err();
        assert_eq!(
            escape.to_string(),
            "token name \"\\u{1b}]0;pwned\\u{7}\" is not valid; use 1 to 64 letters, digits, '.', '_' or '-'."
        );
        let long = create(&path, &"x".repeat(100_000), "read").unwrap_err();
        assert_eq!(
            long.to_string(),
            format!(
                "token name \"{}\"… is not valid; use 1 to 64 letters, digits, '.', '_' or '-'.",
                "x".repeat(64)
            )
        );
        // Revoking from a store with no token file creates nothing.
        assert_eq!(
            revoke(&path, "nobody").unwrap_err().to_string(),
            "no token named \"nobody\"."
        );
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn create_lookup_list_revoke() {
        let dir = tempfile::tempdir().unwrap();
        let path = tokens_path(&dir.path().join("cairn.db"));
        assert!(path.ends_with("cairn.db.tokens"));
        let t = create(&path, "reviewer", "observe, read").unwrap();
        assert!(t.starts_with("cairn_"));
        assert_eq!(t.len(), 6 + 64);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains(&t), "the token itself is never stored");
        let file = load(&path).unwrap();
        let e = file.lookup(&t).unwrap();
        assert_eq!(e.name, "reviewer");
        assert_eq!(e.grants, vec!["read", "observe"]);
        assert_eq!(e.sha256, sha256_hex(&t));
        assert!(file.lookup("cairn_nope").is_none());
        assert_eq!(
            create(&path, "reviewer", "read").unwrap_err().to_string(),
            "a token named \"reviewer\" already exists; revoke it first."
        );
        assert_eq!(
            create(&path, "a b", "read").unwrap_err().to_string(),
            "token name \"a b\" is not valid; use 1 to 64 letters, digits, '.', '_' or '-'."
        );
        assert_eq!(
            create(&path, "x", "root").unwrap_err().to_string(),
            "unknown capability \"root\"; expected read, observe or write."
        );
        let t2 = create(&path, "agent-1", "read,observe,write").unwrap();
        assert_ne!(t, t2);
        let listed = list_text(&load(&path).unwrap());
        let lines: Vec<&str> = listed.lines().collect();
        assert_eq!(lines.len(), 2);
        assert!(
            lines[0].starts_with("reviewer  read,observe        20"),
            "{listed}"
        );
        assert!(
            lines[1].starts_with("agent-1   read,observe,write  20"),
            "{listed}"
        );
        revoke(&path, "reviewer").unwrap();
        assert!(load(&path).unwrap().lookup(&t).is_none());
        assert_eq!(
            revoke(&path, "reviewer").unwrap_err().to_string(),
            "no token named \"reviewer\"."
        );
        revoke(&path, "agent-1").unwrap();
        assert_eq!(list_text(&load(&path).unwrap()), "No tokens.");
    }

    #[cfg(unix)]
    #[test]
    fn token_file_is_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = tokens_path(&dir.path().join("cairn.db"));
        create(&path, "a", "read").unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    /// Issue 19 item 2: changes from many threads at once are each kept
    /// (without the lock, one read-modify-write undid another).
    #[test]
    fn concurrent_changes_are_all_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = tokens_path(&dir.path().join("cairn.db"));
        for i in 0..8 {
            create(&path, &format!("old-{i}"), "read").unwrap();
        }
        std::thread::scope(|s| {
            for i in 0..8 {
                let path = &path;
                s.spawn(move || revoke(path, &format!("old-{i}")).unwrap());
                s.spawn(move || create(path, &format!("new-{i}"), "read").unwrap());
            }
        });
        let names: Vec<String> = load(&path)
            .unwrap()
            .tokens
            .into_iter()
            .map(|t| t.name)
            .collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(
            sorted,
            (0..8).map(|i| format!("new-{i}")).collect::<Vec<_>>(),
            "{names:?}"
        );
        assert!(lock_path(&path).ends_with("cairn.db.tokens.lock"));
    }

    #[test]
    fn damaged_file_is_an_error_not_an_empty_list() {
        let dir = tempfile::tempdir().unwrap();
        let path = tokens_path(&dir.path().join("cairn.db"));
        std::fs::write(&path, "{not json").unwrap();
        assert!(matches!(load(&path), Err(TokenError::Damaged { .. })));
    }
}
