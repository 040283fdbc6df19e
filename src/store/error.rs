//! The store's error type (spec/store.md): every failure of opening,
//! writing, rebuilding or naming is a value of [`StoreError`].

use std::path::PathBuf;

/// Everything the store can refuse or fail with. The `Display` text is the
/// sentence a user (or an MCP client) reads.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// SQLite reported an error (I/O, corruption, a constraint).
    #[error("store database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// A file or directory of the store could not be created or read.
    #[error("cannot prepare {path}: {source}")]
    Io {
        /// The path involved.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The linked SQLite was built without FTS5 (spec/store.md "SQLite settings").
    #[error(
        "This SQLite was built without FTS5 (ENABLE_FTS5 is missing from PRAGMA compile_options); cairn needs FTS5 for observation search and will not open the store."
    )]
    NoFts5,
    /// The store was written by a newer cairn (its schema version is ahead of ours).
    #[error(
        "The store's schema version {found} is newer than this cairn supports ({supported}); upgrade cairn."
    )]
    SchemaTooNew {
        /// `schema_meta.version` found in the file.
        found: i64,
        /// [`crate::store::schema::SCHEMA_VERSION`].
        supported: i64,
    },
    /// `schema_meta.version` is not an integer.
    #[error("The store's schema version {0:?} is not a number.")]
    BadSchemaVersion(String),
    /// A write named a task the store does not have (spec/store.md "Slugs and names").
    #[error("No task {0}.")]
    NoTask(String),
    /// A blank task name.
    #[error("name is required.")]
    NameRequired,
    /// A name too thin to describe a task (spec/store.md "Slugs and names").
    #[error(
        "name \"{name}\" is too thin to describe a task ({reason}); use a few descriptive words."
    )]
    NameTooThin {
        /// The name as given.
        name: String,
        /// Which rule rejected it, e.g. `a lone letter-number`.
        reason: &'static str,
    },
    /// An event of a known type whose data lacks a field or has a bad value.
    #[error("invalid {event_type} event: {reason}")]
    InvalidEvent {
        /// The event type, e.g. `task.update-status`.
        event_type: String,
        /// What is wrong, e.g. `data.status must be one of open, active, ...`.
        reason: String,
    },
    /// A write whose events could not be written to their task's log, so it
    /// is refused before it is acknowledged (docs/store.md "Limits that
    /// agree"): a line over [`crate::store::log::MAX_LINE_BYTES`] or a log
    /// that would pass [`crate::store::log::MAX_LOG_WRITE_BYTES`].
    #[error("Nothing was recorded: {0}")]
    TooLargeToLog(String),
    /// `rebuild --from-logs` found database events the logs lack and could
    /// not export them; it changed nothing (docs/store.md "Rebuild").
    #[error(
        "rebuild --from-logs changed nothing: {missing} event(s) in the database are missing from the logs and could not be written there (the first for task {first}); fix the log folder (see the lines above) and run it again."
    )]
    RebuildWouldDrop {
        /// How many database events the logs lack.
        missing: usize,
        /// The subject of the first of them.
        first: String,
    },
    /// The log lock (`append.lock`) stayed held past the busy timeout: a
    /// write stopped between its commit and its log append (issue 19).
    #[error(
        "Another cairn process has held the log lock (append.lock) for {seconds} s: a write stopped between its commit and its log append (a suspended or debugged process?). Nothing was changed; resume or end that process and try again."
    )]
    LogLocked {
        /// How long this process waited, in seconds.
        seconds: u64,
    },
    /// The database holds another program's tables and no cairn schema
    /// (`--db` names some application's SQLite file): nothing is added.
    #[error(
        "This database is not a cairn store (it holds another program's table {table:?} and no cairn schema); cairn adds nothing to it. Pass --db a new file or a cairn store."
    )]
    NotAStore {
        /// The first foreign table found.
        table: String,
    },
    /// The global scratch store has no home (neither XDG_DATA_HOME nor HOME is set).
    #[error(
        "cannot place the global scratch store: neither XDG_DATA_HOME nor HOME is set; pass --db PATH or set CAIRN_DB."
    )]
    NoHome,
    /// PostgreSQL refused or failed (connecting, a statement, TLS), with the
    /// server's sentence; never holds a password (spec/team.md "Selecting
    /// PostgreSQL").
    #[error("PostgreSQL: {0}")]
    Postgres(String),
    /// `cairn export --logs DIR` into a directory that already holds task logs.
    #[error("{} already holds task logs; export into an empty directory.", .0.display())]
    ExportNotEmpty(PathBuf),
    /// `cairn push` cannot copy the source's events, with why.
    #[error("{0}")]
    CannotPush(String),
    /// A `postgres://` URL or `--pg-schema` that cannot be used, with why.
    #[error("{0}")]
    PgConfig(String),
    /// A new `phase-of`/`forked-from` edge whose child is already an
    /// ancestor of its parent (issue 26; docs/store.md "Phase-of cycles"):
    /// `a phase-of b would make a cycle: a → b → a. A plan cannot contain
    /// itself.` Nothing is recorded.
    #[error("{}", cycle_text(.edge, .cycle))]
    PhaseCycle {
        /// `phase-of` or `forked-from`.
        edge: String,
        /// The slugs from the child, through its new parent and up, back to
        /// the child (first and last equal).
        cycle: Vec<String>,
    },
}

/// The sentence of [`StoreError::PhaseCycle`]: `a phase-of b would make a
/// cycle: a → b → a. A plan cannot contain itself.`
fn cycle_text(edge: &str, cycle: &[String]) -> String {
    let (child, parent) = match cycle {
        [c, p, ..] => (c.as_str(), p.as_str()),
        _ => ("?", "?"),
    };
    format!(
        "{child} {edge} {parent} would make a cycle: {}. A plan cannot contain itself.",
        cycle.join(" → ")
    )
}

impl StoreError {
    /// An [`StoreError::Io`] for `path`.
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> StoreError {
        StoreError::Io {
            path: path.into(),
            source,
        }
    }
}
