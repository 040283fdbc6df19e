//! Opening log files without following links (spec/store.md "The plan
//! travels with the repository", docs/store.md "Symlinks and size caps"): a
//! cloned repository may commit `tasks/`, a task folder or a log file as a
//! symlink to anything outside the project. Every log path is checked with
//! `symlink_metadata` folder by folder, opened with `O_NOFOLLOW |
//! O_NONBLOCK`, and accepted only when the opened file is a regular file no
//! larger than [`MAX_LOG_BYTES`].

use std::fs::{File, OpenOptions};
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// The largest log file read (bytes, 1 GiB); a larger one is skipped
/// (and `rebuild --from-logs` then refuses to drop its events).
pub const MAX_LOG_BYTES: u64 = 1 << 30;

/// The largest size a write may grow a log to (bytes, 224 MiB): a write
/// that would pass it is refused before it is acknowledged
/// ([`crate::store::StoreError::TooLargeToLog`]). The 800 MiB between it and
/// [`MAX_LOG_BYTES`] absorb what a writer cannot see when it checks: writers
/// committed but not yet appended, and the other clones' lines a union
/// merge adds (two full logs merged are 448 MiB), so a log a write grew is
/// always read back (hostile run H1).
pub const MAX_LOG_WRITE_BYTES: u64 = 224 << 20;

/// The longest line parsed (bytes, 8 MiB, the newline excluded); a longer
/// one is malformed. The write boundary refuses an event whose line would be
/// longer ([`crate::store::StoreError::TooLargeToLog`]), so every
/// acknowledged event can be read back: the largest text a tool accepts
/// (1,000,000 characters) escapes to at most 6,000,000 bytes.
pub const MAX_LINE_BYTES: usize = 8 << 20;

/// What reading one log gave.
#[derive(Debug)]
pub enum LogRead {
    /// No such file.
    Missing,
    /// Not read: a symlink, not a regular file, or over the size cap (the
    /// reason, a short phrase).
    Refused(String),
    /// The file's text (lossy UTF-8).
    Text(String),
}

/// `Err(reason)` when `dir` exists and is a symlink or not a folder.
pub(crate) fn check_dir(dir: &Path) -> Result<(), String> {
    match std::fs::symlink_metadata(dir) {
        Ok(m) if m.file_type().is_symlink() => Err(format!("{} is a symlink", dir.display())),
        Ok(m) if !m.is_dir() => Err(format!("{} is not a folder", dir.display())),
        _ => Ok(()),
    }
}

/// Checks the two folders above a log file (`<tasks>/<folder>/FILE`).
fn check_parents(path: &Path) -> Result<(), String> {
    let folder = path.parent();
    if let Some(tasks) = folder.and_then(Path::parent) {
        check_dir(tasks)?;
    }
    if let Some(folder) = folder {
        check_dir(folder)?;
    }
    Ok(())
}

/// Opens `path` (read, or append creating it) without following a symlink
/// at any of its last three components, and checks it is a regular file.
/// `Ok(None)` when reading a missing file. Errors: the reason, a phrase.
pub(crate) fn open_log(path: &Path, append: bool) -> Result<Option<File>, String> {
    check_parents(path)?;
    if append && let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        check_parents(path)?;
    }
    let mut opts = OpenOptions::new();
    opts.read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    if append {
        opts.append(true).create(true);
    }
    let file = match opts.open(path) {
        Ok(f) => f,
        Err(e) if !append && e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(format!("{} is a symlink", path.display()));
        }
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    let meta = file
        .metadata()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if !meta.is_file() {
        return Err(format!("{} is not a regular file", path.display()));
    }
    Ok(Some(file))
}

/// Reads the log at `path` under a shared `flock`: refused when a link,
/// not a regular file, or larger than [`MAX_LOG_BYTES`] (never more than
/// the cap is read, even from a file that grows). Errors: an I/O error
/// while reading, with the path.
pub(crate) fn read_log_file(path: &Path) -> std::io::Result<LogRead> {
    let file = match open_log(path, false) {
        Ok(Some(f)) => f,
        Ok(None) => return Ok(LogRead::Missing),
        Err(reason) => return Ok(LogRead::Refused(reason)),
    };
    file.lock_shared()?;
    let too_big = || {
        LogRead::Refused(format!(
            "{} is larger than {} MiB",
            path.display(),
            MAX_LOG_BYTES >> 20
        ))
    };
    if file.metadata()?.len() > MAX_LOG_BYTES {
        return Ok(too_big());
    }
    let mut bytes = Vec::new();
    file.take(MAX_LOG_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_LOG_BYTES {
        return Ok(too_big());
    }
    Ok(LogRead::Text(String::from_utf8_lossy(&bytes).into_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_and_devices_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside");
        std::fs::write(&outside, "secret\n").unwrap();
        let tasks = dir.path().join("tasks");
        std::fs::create_dir_all(tasks.join("a")).unwrap();
        std::os::unix::fs::symlink(&outside, tasks.join("a/events.ndjson")).unwrap();
        std::os::unix::fs::symlink(dir.path(), tasks.join("b")).unwrap();
        std::fs::create_dir_all(tasks.join("c")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", tasks.join("c/events.ndjson")).unwrap();
        for f in ["a", "b", "c"] {
            let p = tasks.join(f).join("events.ndjson");
            assert!(
                matches!(read_log_file(&p).unwrap(), LogRead::Refused(_)),
                "{f}"
            );
            assert!(open_log(&p, true).is_err(), "{f}");
        }
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "secret\n");
        assert!(!dir.path().join("events.ndjson").exists());
        let big = tasks.join("d/events.ndjson");
        std::fs::create_dir_all(tasks.join("d")).unwrap();
        File::create(&big)
            .unwrap()
            .set_len(MAX_LOG_BYTES + 1)
            .unwrap();
        assert!(
            matches!(read_log_file(&big).unwrap(), LogRead::Refused(r) if r.ends_with("larger than 1024 MiB"))
        );
    }
}
