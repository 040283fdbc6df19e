//! Which database (spec/store.md "Where the store lives"), as a pure function
//! of the command line, the environment and the file system around the
//! working directory, so every rule is testable in temporary directories.
//!
//! Resolution, first match wins:
//! 1. `--db PATH`, then the `CAIRN_DB` environment variable (relative paths
//!    are taken from the working directory);
//! 2. the nearest `.cairn/` directory at or above the working directory,
//!    walking up no further than the first repository root (a directory
//!    holding a `.git` directory or file);
//! 3. the repository root's `.cairn/` when inside a repository; a linked
//!    git worktree (its `.git` is a file whose git directory has a
//!    `commondir`) resolves to the MAIN worktree's `.cairn/` so parallel
//!    worktrees share one plan (a bare repository's worktrees: the first
//!    non-bare worktree, else rule 4);
//! 4. `$XDG_DATA_HOME/cairn/` (an absolute XDG_DATA_HOME only), else
//!    `$HOME/.local/share/cairn/`: the global scratch project (on macOS
//!    `~/Library/Application Support/cairn/`, on Windows
//!    `%APPDATA%\cairn\`: [`resolve_from_env`] asks `etcetera`).
//!
//! The database file is `cairn.db` in the chosen directory.

use std::fmt;
use std::path::{Path, PathBuf};

use super::error::StoreError;

/// The database file's name inside the store directory.
pub const DB_FILE: &str = "cairn.db";

/// The store directory's name inside a project.
pub const STORE_DIR: &str = ".cairn";

/// Which resolution rule chose the database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rule {
    /// `--db PATH` on the command line.
    Flag,
    /// The `CAIRN_DB` environment variable.
    Env,
    /// A `.cairn/` directory found at or above the working directory (its path).
    CairnDir(PathBuf),
    /// The repository root (the directory holding `.git`).
    RepoRoot(PathBuf),
    /// A linked worktree's repository: the store of the main worktree at
    /// this path, shared by every worktree.
    SharedWorktree(PathBuf),
    /// The global scratch project outside any repository.
    GlobalScratch,
}

impl fmt::Display for Rule {
    /// The `rule:` line of `cairn where` (docs/store.md).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rule::Flag => f.write_str("--db flag"),
            Rule::Env => f.write_str("CAIRN_DB environment variable"),
            Rule::CairnDir(dir) => write!(f, ".cairn directory found ({})", dir.display()),
            Rule::RepoRoot(root) => write!(f, "repository root (.git found at {})", root.display()),
            Rule::SharedWorktree(main) => write!(
                f,
                "repository root, shared by the worktree at {}",
                main.display()
            ),
            Rule::GlobalScratch => f.write_str("global scratch (outside any repository)"),
        }
    }
}

/// A resolved store location: the `cairn.db` path, the project root it
/// belongs to, and the rule that won.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// Absolute path of `cairn.db`.
    pub db: PathBuf,
    /// The project root: the directory holding `.cairn/`, the repository root,
    /// the scratch directory, or for an explicit path the directory holding
    /// its `.cairn/` (else the file's directory).
    pub project: PathBuf,
    /// Which rule chose it.
    pub rule: Rule,
}

impl Location {
    /// The three lines `cairn where` prints (no trailing newline):
    /// `database: PATH`, `project: PATH`, `rule: RULE`.
    pub fn describe(&self) -> String {
        format!(
            "database: {}\nproject: {}\nrule: {}",
            self.db.display(),
            self.project.display(),
            self.rule
        )
    }
}

/// The inputs of resolution. Empty strings count as unset.
#[derive(Debug, Clone)]
pub struct Inputs<'a> {
    /// `--db PATH`.
    pub flag: Option<&'a Path>,
    /// `CAIRN_DB`.
    pub env_db: Option<&'a Path>,
    /// The working directory (absolute).
    pub cwd: &'a Path,
    /// The user data directory the scratch store goes under (`cairn/`
    /// inside it): `XDG_DATA_HOME` in tests; [`resolve_from_env`] passes the
    /// platform's own (etcetera). Ignored unless absolute.
    pub xdg_data_home: Option<&'a Path>,
    /// `HOME`.
    pub home: Option<&'a Path>,
}

/// Resolves the store location (module docs give the rules). Touches the file
/// system only to look for `.cairn` and `.git` entries. Errors:
/// [`StoreError::NoHome`] when rule 4 applies and neither an absolute
/// XDG_DATA_HOME nor HOME is set.
pub fn resolve(inputs: &Inputs<'_>) -> Result<Location, StoreError> {
    let set = |p: Option<&Path>| {
        p.filter(|p| !p.as_os_str().is_empty())
            .map(Path::to_path_buf)
    };
    if let Some(p) = set(inputs.flag) {
        return Ok(explicit(inputs.cwd.join(p), Rule::Flag));
    }
    if let Some(p) = set(inputs.env_db) {
        return Ok(explicit(inputs.cwd.join(p), Rule::Env));
    }
    for dir in inputs.cwd.ancestors() {
        let dot_git = dir.join(".git");
        if dot_git.is_file()
            && let Some(owner) = linked_worktree_owner(&dot_git)
        {
            match owner {
                Some(main) => {
                    return Ok(Location {
                        db: main.join(STORE_DIR).join(DB_FILE),
                        project: main.clone(),
                        rule: Rule::SharedWorktree(main),
                    });
                }
                None => break,
            }
        }
        let cairn = dir.join(STORE_DIR);
        if cairn.is_dir() {
            return Ok(Location {
                db: cairn.join(DB_FILE),
                project: dir.to_path_buf(),
                rule: Rule::CairnDir(cairn),
            });
        }
        if dir.join(".git").exists() {
            return Ok(Location {
                db: cairn.join(DB_FILE),
                project: dir.to_path_buf(),
                rule: Rule::RepoRoot(dir.to_path_buf()),
            });
        }
    }
    let scratch = match (
        set(inputs.xdg_data_home).filter(|p| p.is_absolute()),
        set(inputs.home),
    ) {
        (Some(xdg), _) => xdg.join("cairn"),
        (None, Some(home)) => home.join(".local").join("share").join("cairn"),
        (None, None) => return Err(StoreError::NoHome),
    };
    Ok(Location {
        db: scratch.join(DB_FILE),
        project: scratch,
        rule: Rule::GlobalScratch,
    })
}

/// Resolves from the real process: `flag`, `CAIRN_DB`, the current
/// directory, and for rule 4 the platform's user data directory as the
/// `etcetera` crate's native strategy finds it — on Linux and the BSDs
/// `$XDG_DATA_HOME` (absolute only) else `$HOME/.local/share`, on macOS
/// `~/Library/Application Support`, on Windows `%APPDATA%` — passed to
/// [`resolve`] as its data directory. Errors: [`StoreError::Io`] when the
/// working directory is unreadable, else as [`resolve`] ([`StoreError::NoHome`]
/// when no home directory can be found).
pub fn resolve_from_env(flag: Option<&Path>) -> Result<Location, StoreError> {
    use etcetera::BaseStrategy;
    let cwd = std::env::current_dir().map_err(|e| StoreError::io(".", e))?;
    let env_db = std::env::var_os("CAIRN_DB").map(PathBuf::from);
    let data = etcetera::base_strategy::choose_native_strategy()
        .ok()
        .map(|s| s.data_dir());
    resolve(&Inputs {
        flag,
        env_db: env_db.as_deref(),
        cwd: &cwd,
        xdg_data_home: data.as_deref(),
        home: None,
    })
}

/// The git directory a `.git` file names (`gitdir: PATH`, relative paths
/// taken from the file's directory). `None` when `dot_git` is not such a file.
pub fn read_gitdir_file(dot_git: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(dot_git).ok()?;
    let rel = text.lines().next()?.strip_prefix("gitdir:")?.trim();
    if rel.is_empty() {
        return None;
    }
    Some(dot_git.parent()?.join(rel))
}

/// For a `.git` file of a linked worktree (its git directory holds a
/// `commondir` file): `Some(Some(main worktree))`, or `Some(None)` when the
/// repository is bare and has no non-bare worktree on disk. `None` when the
/// file is not a linked worktree's (a submodule, say): the directory is then
/// its own repository root.
pub fn linked_worktree_owner(dot_git: &Path) -> Option<Option<PathBuf>> {
    let gitdir = read_gitdir_file(dot_git)?;
    let common = std::fs::read_to_string(gitdir.join("commondir")).ok()?;
    let common = gitdir.join(common.trim());
    let common = common.canonicalize().unwrap_or(common);
    if common.file_name().is_some_and(|n| n == ".git")
        && let Some(main) = common.parent()
        && common.is_dir()
    {
        return Some(Some(main.to_path_buf()));
    }
    // A bare repository: its first non-bare worktree (by name) still on disk.
    let mut worktrees: Vec<PathBuf> = std::fs::read_dir(common.join("worktrees"))
        .map(|entries| entries.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    worktrees.sort();
    for wt in worktrees {
        let Ok(text) = std::fs::read_to_string(wt.join("gitdir")) else {
            continue;
        };
        let file = PathBuf::from(text.trim());
        if file.is_file()
            && let Some(root) = file.parent()
        {
            return Some(Some(root.to_path_buf()));
        }
    }
    Some(None)
}

fn explicit(db: PathBuf, rule: Rule) -> Location {
    let dir = db.parent().map(Path::to_path_buf).unwrap_or_default();
    let project = if dir.file_name().is_some_and(|n| n == STORE_DIR) {
        dir.parent().map(Path::to_path_buf).unwrap_or(dir)
    } else {
        dir
    };
    Location { db, project, rule }
}
