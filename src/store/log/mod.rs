//! Per-task NDJSON logs: the durable record git carries (spec/store.md "The
//! plan travels with the repository").
//!
//! Layout, beside `cairn.db` in the store directory (normally `.cairn/`):
//! `tasks/<slug>/events.ndjson`, one canonical-JSON line per event whose
//! subject is that task (views in `tasks/@cairn/`). The database is a cache
//! of these files. Rooms: `line` (the line format), `append` (the locked
//! after-commit append and the epoch counter), `reconcile` (ingest lines the
//! database lacks, export events the logs lack, the O(1) per-call check),
//! `check` (the two directions `cairn verify` checks), `import` (the original
//! tool's `.kli/` store).

pub(crate) mod append;
pub mod check;
pub mod export;
pub mod import;
pub mod line;
pub(crate) mod marks;
pub(crate) mod read;
pub(crate) mod reconcile;
pub mod safe;

use std::path::{Path, PathBuf};

pub(crate) use append::check_loggable;
pub use append::{AppendGuard, append_lines, bump_epoch, read_epoch};
pub use check::LogCheck;
pub use import::ImportSummary;
pub use line::{LogLine, ParsedLine};
pub use reconcile::ReconcileReport;
pub use safe::{MAX_LINE_BYTES, MAX_LOG_BYTES, MAX_LOG_WRITE_BYTES};

use super::error::StoreError;

/// The directory under the store directory holding one folder per task.
pub const TASKS_DIR: &str = "tasks";

/// The log file's name inside a task's folder.
pub const LOG_FILE: &str = "events.ndjson";

/// The epoch counter file (git-ignored): bumped after every append.
pub const EPOCH_FILE: &str = "epoch";

/// The append lock file (git-ignored): writers hold it shared from the
/// start of their transaction until their lines are appended; the exporter
/// holds it exclusively, so it never mistakes an append in flight for a gap.
pub const APPEND_LOCK_FILE: &str = "append.lock";

/// The line `.cairn/.gitattributes` must hold (union merge of the logs).
pub const GITATTRIBUTES_LINE: &str = "tasks/**/events.ndjson merge=union";

/// The lines `.cairn/.gitignore` must hold: the database and cairn's lock
/// and epoch files, nothing else (the logs and handoff notes are committed).
pub const GITIGNORE_LINES: [&str; 3] = ["cairn.db*", EPOCH_FILE, APPEND_LOCK_FILE];

/// Where one store's logs live. Logs are kept for every store whose database
/// file is named `cairn.db` (the name every resolution rule produces); a
/// database under another name (`--db /tmp/x.sqlite`) has none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Logs {
    /// The store directory (holds `cairn.db`, `tasks/`, `epoch`).
    pub dir: PathBuf,
    /// The git index file whose moves trigger a reconcile (`None` outside a
    /// repository or when the store directory is not a project's `.cairn`).
    pub git_index: Option<PathBuf>,
}

impl Logs {
    /// The logs of the database at `db`, or `None` when it is not named
    /// `cairn.db`.
    pub fn for_db(db: &Path) -> Option<Logs> {
        if db.file_name().is_none_or(|n| n != super::location::DB_FILE) {
            return None;
        }
        let dir = db
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        let git_index = dir.parent().and_then(git_index_of);
        Some(Logs { dir, git_index })
    }

    /// `DIR/tasks`.
    pub fn tasks_dir(&self) -> PathBuf {
        self.dir.join(TASKS_DIR)
    }

    /// `DIR/tasks/<dir name of slug>/events.ndjson`.
    pub fn log_path(&self, slug: &str) -> PathBuf {
        self.tasks_dir().join(dir_name(slug)).join(LOG_FILE)
    }

    /// `DIR/epoch`.
    pub fn epoch_path(&self) -> PathBuf {
        self.dir.join(EPOCH_FILE)
    }

    /// `DIR/append.lock`.
    pub fn lock_path(&self) -> PathBuf {
        self.dir.join(APPEND_LOCK_FILE)
    }

    /// Writes `.gitattributes` (the union rule) and `.gitignore` (the
    /// database, epoch and lock files) in the store directory, adding only
    /// the lines that are missing (idempotent; other lines are kept).
    /// Errors: [`StoreError::Io`].
    pub fn ensure_git_files(&self) -> Result<(), StoreError> {
        ensure_lines(&self.dir.join(".gitattributes"), &[GITATTRIBUTES_LINE])?;
        ensure_lines(&self.dir.join(".gitignore"), &GITIGNORE_LINES)
    }
}

/// Appends each of `lines` missing from the file at `path` (creating it).
fn ensure_lines(path: &Path, lines: &[&str]) -> Result<(), StoreError> {
    let old = match std::fs::read_to_string(path) {
        Ok(s) => s,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(StoreError::io(path, e)),
    };
    let missing: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| !old.lines().any(|have| have.trim() == *l))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let mut text = old;
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    for l in missing {
        text.push_str(l);
        text.push('\n');
    }
    std::fs::write(path, text).map_err(|e| StoreError::io(path, e))
}

/// The longest folder name [`dir_name`] returns (bytes): 255 is the limit
/// of ext4, XFS, APFS, NTFS and most other file systems.
pub const MAX_DIR_NAME_BYTES: usize = 255;

/// How many bytes of a long slug's encoding [`dir_name`] keeps before the
/// `~` and the hash (cut at a character boundary).
const LONG_PREFIX_BYTES: usize = 200;

/// The folder name of a slug (docs/store.md "Log folders"): the slug itself
/// when it is made of `A-Z a-z 0-9 . _ - @` and does not start with `.`;
/// otherwise every other byte (and a leading `.`) is written `%XX`, so the
/// mapping is injective and never leaves `tasks/`.
///
/// When that encoding would pass [`MAX_DIR_NAME_BYTES`] bytes (a non-ASCII
/// name: a 4-word Cyrillic slug encodes to ~360 bytes), the name is the
/// encoding of the slug's first characters (at most 200 bytes, never cut
/// inside a character), then `~`, then the first 16 hex digits of the
/// SHA-256 of the whole slug: bounded, stable across machines, readable as
/// far as the slug is ASCII, and still distinct from every short name
/// (those write `~` as `%7E`).
pub fn dir_name(slug: &str) -> String {
    let safe = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b'@');
    let encode_char = |out: &mut String, c: char, first: bool| {
        let mut buf = [0u8; 4];
        for b in c.encode_utf8(&mut buf).bytes() {
            if safe(b) && !(first && b == b'.') {
                out.push(char::from(b));
            } else {
                out.push_str(&format!("%{b:02X}"));
            }
        }
    };
    let mut out = String::with_capacity(slug.len());
    for (i, c) in slug.chars().enumerate() {
        encode_char(&mut out, c, i == 0);
    }
    if out.is_empty() {
        out.push_str("%00");
    }
    if out.len() <= MAX_DIR_NAME_BYTES {
        return out;
    }
    let mut prefix = String::with_capacity(LONG_PREFIX_BYTES + 12);
    for (i, c) in slug.chars().enumerate() {
        let mut one = String::new();
        encode_char(&mut one, c, i == 0);
        if prefix.len() + one.len() > LONG_PREFIX_BYTES {
            break;
        }
        prefix.push_str(&one);
    }
    let digest = {
        use sha2::{Digest, Sha256};
        Sha256::digest(slug.as_bytes())
    };
    prefix.push('~');
    prefix.push_str(&hex::encode(&digest[..8]));
    prefix
}

/// The index file of the git repository whose work tree is `project`: for a
/// `.git` directory `project/.git/index`; for a `.git` file (a linked
/// worktree) the index named by its `gitdir:` line. `None` outside a
/// repository.
pub fn git_index_of(project: &Path) -> Option<PathBuf> {
    let dot_git = project.join(".git");
    if dot_git.is_dir() {
        return Some(dot_git.join("index"));
    }
    let gitdir = super::location::read_gitdir_file(&dot_git)?;
    Some(gitdir.join("index"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dir_names_are_safe_and_injective() {
        assert_eq!(dir_name("2026-01-01-fix-it"), "2026-01-01-fix-it");
        assert_eq!(dir_name("@cairn"), "@cairn");
        assert_eq!(dir_name(".."), "%2E.");
        assert_eq!(dir_name("a/b"), "a%2Fb");
        assert_eq!(dir_name("a%2Fb"), "a%252Fb");
        assert_eq!(dir_name(""), "%00");
        assert_eq!(dir_name("a~b"), "a%7Eb");
    }

    #[test]
    fn long_names_are_bounded_stable_and_distinct() {
        let cyr = "2026-12-01-переосмыслить-архитектуру-распределённого-планировщика";
        let d = dir_name(cyr);
        assert!(d.len() <= MAX_DIR_NAME_BYTES, "{} bytes", d.len());
        assert!(d.starts_with("2026-12-01-%D0%BF%D0%B5"), "{d}");
        let (prefix, hash) = d.rsplit_once('~').unwrap();
        assert!(prefix.len() <= 200, "{}", prefix.len());
        assert_eq!(hash.len(), 16);
        assert_eq!(dir_name(cyr), d, "stable");
        let other = format!("{cyr}-2");
        assert_ne!(dir_name(&other), d, "distinct past the cut");
        // A prefix never ends inside a character's %XX run.
        assert!(
            !prefix.ends_with("%D0") && !prefix.ends_with("%D1"),
            "{prefix}"
        );
        let chinese = "2026-12-01-重新思考分布式调度器的架构设计与实现方案以及测试计划和部署流程";
        assert!(dir_name(chinese).len() <= MAX_DIR_NAME_BYTES);
        let ascii = "a".repeat(255);
        assert_eq!(
            dir_name(&ascii),
            ascii,
            "a 255-byte ASCII slug keeps its name"
        );
        let longer = "a".repeat(256);
        assert_eq!(dir_name(&longer).len(), 200 + 1 + 16);
    }
}
