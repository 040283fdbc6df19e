//! What a verb runs against (issue 12; docs/cli.md "The current task"):
//! the store, a session, the engine and the tool clock. A `cairn` process
//! is its own MCP-style session, so the verbs keep the session's current
//! task in a small file next to the store — `cairn.db.current`, beside
//! `cairn.db` (so the store's `.gitignore`, `cairn.db*`, keeps it out of
//! git) — loaded before a tool runs and saved after, when the tool moved it
//! (`task_create` adopts a first task, `task_fork` moves to the child,
//! `task_bootstrap SLUG` and `cairn current SLUG` select one).

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde_json::Value;

use crate::session::Session;
use std::sync::OnceLock;

use crate::store::pg::{PgStore, PgTarget};
use crate::store::{Db, Location, ReadOpen, Store, location};
use crate::tools::registry::dispatch;
use crate::tools::{Clock, ToolCtx, ToolOutcome};
use crate::tq::engine::Engine;

/// The environment variable that fixes the tool clock's stamp (Unix
/// seconds, UTC) for reproducible output — tests and the docs' transcripts.
/// Unset or not an integer: the system clock. It never moves the clock
/// claims are judged by (docs/store.md "Claims: one clock decides").
pub const CLOCK_ENV: &str = "CAIRN_NOW";

/// The tool clock: [`Clock::Stamped`] at [`CLOCK_ENV`] when it holds an
/// integer (events stamped there, claims judged by the system clock), else
/// the system's.
pub fn clock() -> Clock {
    std::env::var(CLOCK_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<i64>().ok())
        .map_or(Clock::System, Clock::Stamped)
}

/// The PostgreSQL store `--db`/`CAIRN_DB` selected for this process, if
/// any (set once by `cli::run` before a verb opens its [`Cx`]).
static PG: OnceLock<PgTarget> = OnceLock::new();

/// Makes the verbs of this process open the PostgreSQL store `t`.
pub fn select_pg(t: &PgTarget) {
    let _ = PG.set(t.clone());
}

/// Where the CLI remembers the verbs' current task on a PostgreSQL store
/// for the project `root`: `DATA/cairn/pg-current/HASH.db` (its
/// `.current` sibling holds the slug), HASH the first 16 hex digits of
/// SHA-256 over the shown URL, the schema and the project path. There is
/// no `cairn.db` to sit beside. Errors: no data directory.
pub fn pg_current_path(t: &PgTarget, root: &Path) -> anyhow::Result<PathBuf> {
    use etcetera::BaseStrategy;
    use sha2::{Digest, Sha256};
    let data = etcetera::base_strategy::choose_native_strategy()
        .map(|s| s.data_dir())
        .map_err(|_| anyhow::anyhow!("no data directory for the current task (set HOME)"))?;
    let dir = data.join("cairn").join("pg-current");
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut h = Sha256::new();
    h.update(t.shown.as_bytes());
    h.update([0]);
    h.update(t.schema.as_bytes());
    h.update([0]);
    h.update(root.to_string_lossy().as_bytes());
    let hash = hex::encode(h.finalize());
    Ok(dir.join(format!("{}.db", &hash[..16])))
}

/// Where the CLI remembers the current task for `store_path`: the database
/// file name plus `.current` (`.cairn/cairn.db.current`).
pub fn current_path(store_path: &Path) -> PathBuf {
    let mut name = store_path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_else(|| "cairn.db".into());
    name.push(".current");
    store_path.with_file_name(name)
}

/// The current task remembered next to the store at `db`, if any.
pub fn load_current(db: &Path) -> Option<String> {
    std::fs::read_to_string(current_path(db))
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// Remembers `current` as the current task next to the store at `db`
/// (removes the file for `None`). Errors: the file cannot be written.
pub fn store_current(db: &Path, current: Option<&str>) -> anyhow::Result<()> {
    let path = current_path(db);
    match current {
        Some(slug) => std::fs::write(&path, format!("{slug}\n"))
            .with_context(|| format!("cannot write {}", path.display()))?,
        None => {
            let _ = std::fs::remove_file(&path);
        }
    }
    Ok(())
}

/// The line a read command prints on stderr (prefixed `cairn: `) when the
/// store at `db` was opened as `state`: `None` for [`ReadOpen::Current`];
/// for [`ReadOpen::Busy`] `another process is writing; showing what is
/// committed`; for [`ReadOpen::Absent`] `no store at DB yet; `cairn init`
/// or any write (`cairn add NAME`) creates one`.
pub fn read_note(state: ReadOpen, db: &Path) -> Option<String> {
    match state {
        ReadOpen::Current => None,
        ReadOpen::Busy => Some("another process is writing; showing what is committed".into()),
        ReadOpen::Absent => Some(format!(
            "no store at {} yet; `cairn init` or any write (`cairn add NAME`) creates one",
            db.display()
        )),
    }
}

/// Opens the store `flag` (else `CAIRN_DB`, else the project lookup) names
/// for a read command with [`Store::open_read`] — never waiting on a
/// writer, creating nothing — and prints its [`read_note`] on stderr.
/// Returns the store, how it was found and where it is. Errors: the
/// location cannot be resolved or the store cannot be opened.
pub fn open_read(flag: Option<&Path>) -> anyhow::Result<(Store, ReadOpen, Location)> {
    let loc = location::resolve_from_env(flag)?;
    let (store, state) = Store::open_read(&loc.db)
        .with_context(|| format!("cannot open the store at {}", loc.db.display()))?;
    if let Some(note) = read_note(state, &loc.db) {
        super::out::emit_err(&format!("cairn: {note}"));
    }
    Ok((store, state, loc))
}

/// An open store with the CLI's session.
pub struct Cx {
    /// The store (SQLite, or PostgreSQL when [`select_pg`] chose it).
    pub store: Db,
    /// The session: current task from the remembered file, every grant.
    pub session: Session,
    /// The TQ engine.
    pub engine: Engine,
    /// The project root (handoff paths resolve against it).
    pub root: PathBuf,
    /// The database path the location rules chose (the current-task file
    /// sits beside it, also when a read found no store).
    db: PathBuf,
    /// The current task as loaded, to save only a change.
    loaded: Option<String>,
}

impl Cx {
    /// Opens the store `flag` (else `CAIRN_DB`, else the project lookup)
    /// names for a write (creating it when missing, [`Store::open`]) and
    /// loads the remembered current task. Errors: the location cannot be
    /// resolved or the store cannot be opened.
    pub fn open(flag: Option<&Path>) -> anyhow::Result<Cx> {
        if let Some(t) = PG.get() {
            return Cx::on_pg(t);
        }
        let loc = location::resolve_from_env(flag)?;
        let store = Store::open(&loc.db)
            .with_context(|| format!("cannot open the store at {}", loc.db.display()))?;
        Ok(Cx::with(Db::Sqlite(store), loc))
    }

    /// Opens the PostgreSQL store `t` for a verb. The current task is
    /// remembered in the user's data directory, per store and project
    /// ([`pg_current_path`]). Errors: the store cannot be opened.
    fn on_pg(t: &PgTarget) -> anyhow::Result<Cx> {
        let store = PgStore::open(t)?;
        let root = match location::resolve_from_env(None) {
            Ok(loc) => loc.project,
            Err(_) => std::env::current_dir()?,
        };
        let db = pg_current_path(t, &root)?;
        let loc = Location {
            db,
            project: root,
            rule: location::Rule::Flag,
        };
        Ok(Cx::with(Db::Pg(Box::new(store)), loc))
    }

    /// Opens the store for a read verb (`show`, `log`, `search`, `ls`,
    /// `ready`, `current`, `schema`) as [`open_read`] does — never waiting
    /// on a writer, creating nothing, its note on stderr — and loads the
    /// remembered current task. Errors: as [`open_read`].
    pub fn open_read(flag: Option<&Path>) -> anyhow::Result<Cx> {
        if let Some(t) = PG.get() {
            return Cx::on_pg(t);
        }
        let (store, _, loc) = open_read(flag)?;
        Ok(Cx::with(Db::Sqlite(store), loc))
    }

    fn with(store: Db, loc: Location) -> Cx {
        let loaded = load_current(&loc.db);
        let mut session = crate::cli::identity::session();
        session.current = loaded.clone();
        Cx {
            store,
            session,
            engine: Engine::new().with_clock(clock()),
            root: loc.project,
            db: loc.db,
            loaded,
        }
    }

    /// Runs tool `name` with `args` through the registry (the same path as
    /// MCP and `cairn call`). A protocol fault (arguments that do not fit)
    /// comes back as an error outcome with its sentence. Saves the current
    /// task when the tool moved it.
    pub fn tool(&mut self, name: &str, args: Value) -> anyhow::Result<ToolOutcome> {
        let mut ctx = ToolCtx {
            store: self.store.r(),
            session: &mut self.session,
            engine: &self.engine,
            root: self.root.clone(),
            clock: clock(),
        };
        let out =
            dispatch(&mut ctx, name, args).unwrap_or_else(|e| ToolOutcome::err(e.to_string()));
        self.save_current()?;
        Ok(out)
    }

    /// Writes the session's current task to [`current_path`] when it differs
    /// from the one loaded (removes the file when there is none).
    pub fn save_current(&mut self) -> anyhow::Result<()> {
        if self.session.current == self.loaded {
            return Ok(());
        }
        store_current(&self.db, self.session.current.as_deref())?;
        self.loaded = self.session.current.clone();
        Ok(())
    }
}
