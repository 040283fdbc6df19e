//! The after-commit append (spec/store.md "Writes"): each subject's lines go
//! to its log under an exclusive `flock` of that file, `O_APPEND`, ONE
//! `write` per file per batch, a missing final `\n` repaired first (in the
//! same write); then the shared epoch counter is bumped.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

use super::marks::{Appended, Stamp};
use super::{LogLine, Logs};
use crate::store::error::StoreError;
use crate::store::handle::Store;

/// A held `flock` on the store's `append.lock` (released on drop). Writers
/// hold it shared from before their transaction until their lines are
/// appended; the exporter holds it exclusively.
#[derive(Debug)]
pub struct AppendGuard {
    _file: File,
}

impl AppendGuard {
    /// Takes the append lock shared (`exclusive == false`) or exclusive,
    /// waiting at most the busy timeout (30 s; issue 19: a writer stopped
    /// between its commit and its append holds the lock for as long as it
    /// is stopped). Errors: [`StoreError::LogLocked`] after the wait,
    /// [`StoreError::Io`].
    pub fn take(logs: &Logs, exclusive: bool) -> Result<AppendGuard, StoreError> {
        let wait = crate::store::schema::BUSY_TIMEOUT;
        Self::take_within(logs, exclusive, wait)?.ok_or(StoreError::LogLocked {
            seconds: wait.as_secs(),
        })
    }

    /// [`AppendGuard::take`] waiting at most `wait`; `None` when another
    /// process still holds it then. Errors: [`StoreError::Io`].
    pub fn take_within(
        logs: &Logs,
        exclusive: bool,
        wait: std::time::Duration,
    ) -> Result<Option<AppendGuard>, StoreError> {
        let path = logs.lock_path();
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| StoreError::io(&path, e))?;
        let deadline = std::time::Instant::now() + wait;
        let mut pause = std::time::Duration::from_millis(1);
        loop {
            let tried = if exclusive {
                file.try_lock()
            } else {
                file.try_lock_shared()
            };
            match tried {
                Ok(()) => return Ok(Some(AppendGuard { _file: file })),
                Err(std::fs::TryLockError::WouldBlock) => {}
                Err(std::fs::TryLockError::Error(e)) => return Err(StoreError::io(&path, e)),
            }
            let now = std::time::Instant::now();
            if now >= deadline {
                return Ok(None);
            }
            std::thread::sleep(pause.min(deadline - now));
            pause = (pause * 2).min(std::time::Duration::from_millis(50));
        }
    }
}

/// Appends `lines` to their subjects' logs (grouped per file, batch order
/// kept within a file): for each file, `flock` exclusive, read its last byte,
/// and write `[\n]LINES` in one `write` with `O_APPEND`. Creates the task's
/// folder and file when missing. Errors: [`StoreError::Io`].
pub fn append_lines(logs: &Logs, lines: &[LogLine]) -> Result<Vec<Appended>, StoreError> {
    append_lines_into(logs, lines, LogFiles::default())
}

/// The logs a write will append to, opened (and created) by
/// [`check_loggable`] before its commit and written by [`append_lines_into`]
/// after it, so a write opens each of its files once (issue 23).
#[derive(Debug, Default)]
pub(crate) struct LogFiles {
    open: BTreeMap<String, File>,
}

impl LogFiles {
    /// The most files one write holds open between its check and its
    /// append (a write of thousands of subjects must not run out of file
    /// descriptors).
    pub(crate) const HELD: usize = 16;
}

/// [`append_lines`] through the files `files` already holds open (any
/// other subject's log is opened here). A held file that was unlinked
/// meanwhile (replaced by a rename) is opened again by its path.
pub(crate) fn append_lines_into(
    logs: &Logs,
    lines: &[LogLine],
    mut files: LogFiles,
) -> Result<Vec<Appended>, StoreError> {
    let mut per_file: BTreeMap<&str, String> = BTreeMap::new();
    for l in lines {
        per_file
            .entry(l.task_id.as_str())
            .or_default()
            .push_str(&l.encode());
    }
    let mut out = Vec::with_capacity(per_file.len());
    for (slug, text) in per_file {
        let path = logs.log_path(slug);
        let (before, after) = match files.open.remove(slug) {
            Some(file) => append_locked(&path, file, &text, true)?,
            None => append_text(&path, &text)?,
        };
        out.push(Appended {
            folder: super::dir_name(slug),
            before,
            after,
        });
    }
    Ok(out)
}

/// Appends `text` (whole lines) to the log at `path` as [`append_lines`]
/// does for one file. Errors: [`StoreError::Io`].
pub(crate) fn append_text(path: &Path, text: &str) -> Result<(Stamp, Stamp), StoreError> {
    append_locked(path, open_for_append(path)?, text, false)
}

/// Locks `file` (the log at `path`) exclusively and appends `text`;
/// `reopen`: when the file has no link left (a rename replaced it since it
/// was opened), the log at `path` is opened and written instead.
fn append_locked(
    path: &Path,
    mut file: File,
    text: &str,
    reopen: bool,
) -> Result<(Stamp, Stamp), StoreError> {
    use std::os::unix::fs::MetadataExt;
    let io = |e| StoreError::io(path, e);
    file.lock().map_err(io)?;
    let mut meta = file.metadata().map_err(io)?;
    if reopen && meta.nlink() == 0 {
        file = open_for_append(path)?;
        file.lock().map_err(io)?;
        meta = file.metadata().map_err(io)?;
    }
    let before = super::marks::stamp(&meta);
    let buf = with_repaired_newline(&mut file, meta.len(), text).map_err(io)?;
    file.write_all(buf.as_bytes()).map_err(io)?;
    let after = super::marks::stamp(&file.metadata().map_err(io)?);
    Ok((before, after))
}

/// Opens the log at `path` for appending (creating it and its folder),
/// refusing a symlinked file or folder and anything but a regular file
/// (never writes through a link). Errors: [`StoreError::Io`] naming why.
pub(crate) fn open_for_append(path: &Path) -> Result<File, StoreError> {
    match super::safe::open_log(path, true) {
        Ok(Some(f)) => Ok(f),
        Ok(None) => Err(StoreError::io(path, std::io::Error::other("not created"))),
        Err(reason) => Err(StoreError::io(
            path,
            std::io::Error::other(format!("refused: {reason}")),
        )),
    }
}

/// `text`, preceded by `\n` when the (locked) file, `len` bytes long, is
/// non-empty and does not end with one (a torn earlier write).
pub(crate) fn with_repaired_newline(
    file: &mut File,
    len: u64,
    text: &str,
) -> std::io::Result<String> {
    if len == 0 {
        return Ok(text.to_string());
    }
    file.seek(SeekFrom::Start(len - 1))?;
    let mut last = [0u8; 1];
    file.read_exact(&mut last)?;
    Ok(if last[0] == b'\n' {
        text.to_string()
    } else {
        format!("\n{text}")
    })
}

/// The width of the epoch counter's decimal text (fixed, so a rewrite in
/// place never needs a truncate).
const EPOCH_WIDTH: usize = 20;

/// Bumps the epoch counter at `path` under an exclusive `flock` (creating
/// it at 0): returns `(old, new)`. Errors: [`StoreError::Io`].
pub fn bump_epoch(path: &Path) -> Result<(u64, u64), StoreError> {
    let io = |e| StoreError::io(path, e);
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(io)?;
    file.lock().map_err(io)?;
    let mut text = String::new();
    file.read_to_string(&mut text).map_err(io)?;
    let old: u64 = text.trim().parse().unwrap_or(0);
    let new = old.wrapping_add(1);
    file.seek(SeekFrom::Start(0)).map_err(io)?;
    file.write_all(format!("{new:0EPOCH_WIDTH$}\n").as_bytes())
        .map_err(io)?;
    Ok((old, new))
}

/// The epoch counter at `path`: 0 when the file is missing or unreadable.
pub fn read_epoch(path: &Path) -> u64 {
    let mut buf = [0u8; EPOCH_WIDTH + 1];
    let Ok(mut file) = File::open(path) else {
        return 0;
    };
    let n = file.read(&mut buf).unwrap_or(0);
    std::str::from_utf8(&buf[..n])
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0)
}

/// The test hook (environment variable): when set, a write pauses for a
/// minute between its database commit and its log append, after printing
/// `cairn-test: committed` on stderr, so a test can SIGKILL it there.
pub const PAUSE_AFTER_COMMIT: &str = "CAIRN_TEST_PAUSE_AFTER_COMMIT";

/// Checks that `lines` (a write's events, not yet committed) can be logged
/// and read back: each line at most [`super::MAX_LINE_BYTES`] bytes, and,
/// for a store with logs, each subject's log openable for appending (its
/// folder created; a symlink, a non-regular file or an OS error refuses)
/// and not grown past [`super::MAX_LOG_WRITE_BYTES`]. Errors:
/// [`StoreError::TooLargeToLog`], [`StoreError::Io`].
pub(crate) fn check_loggable(
    logs: Option<&Logs>,
    lines: &[(i64, LogLine)],
) -> Result<LogFiles, StoreError> {
    let mut per_file: BTreeMap<&str, u64> = BTreeMap::new();
    for (_, l) in lines {
        let len = l.encode().len();
        if len - 1 > super::MAX_LINE_BYTES {
            return Err(StoreError::TooLargeToLog(format!(
                "the {} event for {} would be a {}-byte log line, over the {} MiB limit of a log line; shorten the text.",
                l.event_type,
                l.task_id,
                len - 1,
                super::MAX_LINE_BYTES >> 20
            )));
        }
        *per_file.entry(l.task_id.as_str()).or_default() += len as u64;
    }
    let mut files = LogFiles::default();
    let Some(logs) = logs else {
        return Ok(files);
    };
    for (slug, add) in per_file {
        let path = logs.log_path(slug);
        let existed = path.exists();
        let file = open_for_append(&path)?;
        let size = file.metadata().map_err(|e| StoreError::io(&path, e))?.len();
        if size + add > super::MAX_LOG_WRITE_BYTES {
            if !existed {
                // Refused: leave no empty log (or folder) behind.
                drop(file);
                let _ = std::fs::remove_file(&path);
                if let Some(dir) = path.parent() {
                    let _ = std::fs::remove_dir(dir);
                }
            }
            return Err(StoreError::TooLargeToLog(format!(
                "the log of task {slug} holds {size} bytes and this write would grow it past {} MiB; record the rest on another task.",
                super::MAX_LOG_WRITE_BYTES >> 20
            )));
        }
        // A write of many subjects (an import) keeps only the first few
        // open: the others are opened again after the commit.
        if files.open.len() < LogFiles::HELD {
            files.open.insert(slug.to_string(), file);
        }
    }
    Ok(files)
}

impl Store {
    /// The append lock a writer holds shared across its transaction and
    /// append (`None` for a store without logs). Errors: [`StoreError::Io`].
    pub(crate) fn append_guard(&self) -> Result<Option<AppendGuard>, StoreError> {
        self.logs
            .as_ref()
            .map(|l| AppendGuard::take(l, false))
            .transpose()
    }

    /// After a commit: appends `lines` to their logs (through `files`, the
    /// logs [`check_loggable`] opened), releases `guard`, and
    /// bumps the epoch (remembering it as seen when nobody else moved it, so
    /// this process's next call does not reconcile its own write). Never
    /// fails the committed write: an append or epoch error is one stderr
    /// line (`cairn: could not append to the task logs ...`) and the gap is
    /// closed by the next reconcile. Returns `Ok(())`.
    pub(crate) fn after_commit(
        &self,
        lines: &[(i64, LogLine)],
        guard: Option<AppendGuard>,
        files: LogFiles,
    ) -> Result<(), StoreError> {
        let Some(logs) = self.logs.as_ref() else {
            return Ok(());
        };
        if lines.is_empty() {
            return Ok(());
        }
        if std::env::var_os(PAUSE_AFTER_COMMIT).is_some() {
            eprintln!("cairn-test: committed");
            std::thread::sleep(std::time::Duration::from_secs(60));
        }
        // The write is committed (acknowledged) whatever happens here: a
        // failed append is a gap the next reconcile closes, so it is
        // reported on stderr, not returned.
        let only: Vec<LogLine> = lines.iter().map(|(_, l)| l.clone()).collect();
        match append_lines_into(logs, &only, files) {
            Ok(files) => {
                self.note_own_appends(&files);
                let first = lines.iter().map(|(s, _)| *s).min().unwrap_or(0);
                let last = lines.iter().map(|(s, _)| *s).max().unwrap_or(0);
                self.sync_state.borrow_mut().exported.push((first, last));
            }
            Err(e) => {
                eprintln!("cairn: could not append to the task logs (reconcile will retry): {e}")
            }
        }
        drop(guard);
        match bump_epoch(&logs.epoch_path()) {
            Ok((old, new)) => {
                let mut st = self.sync_state.borrow_mut();
                if st.epoch == Some(old) {
                    st.epoch = Some(new);
                }
            }
            Err(e) => eprintln!("cairn: could not bump the log epoch: {e}"),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_lock_is_waited_for_a_bounded_time() {
        let dir = tempfile::tempdir().unwrap();
        let logs = Logs {
            dir: dir.path().to_path_buf(),
            git_index: None,
        };
        let held = AppendGuard::take(&logs, true).unwrap();
        let short = std::time::Duration::from_millis(50);
        assert!(
            AppendGuard::take_within(&logs, true, short)
                .unwrap()
                .is_none()
        );
        assert!(
            AppendGuard::take_within(&logs, false, short)
                .unwrap()
                .is_none()
        );
        drop(held);
        let shared = AppendGuard::take_within(&logs, false, short).unwrap();
        assert!(shared.is_some());
        assert!(
            AppendGuard::take_within(&logs, false, short)
                .unwrap()
                .is_some()
        );
        assert_eq!(
            StoreError::LogLocked { seconds: 30 }.to_string(),
            "Another cairn process has held the log lock (append.lock) for 30 s: a write stopped between its commit and its log append (a suspended or debugged process?). Nothing was changed; resume or end that process and try again."
        );
    }

    #[test]
    fn epoch_counts_up_from_zero() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("epoch");
        assert_eq!(read_epoch(&p), 0);
        assert_eq!(bump_epoch(&p).unwrap(), (0, 1));
        assert_eq!(bump_epoch(&p).unwrap(), (1, 2));
        assert_eq!(read_epoch(&p), 2);
    }

    fn line(task: &str, text: &str) -> LogLine {
        LogLine {
            event_id: format!("01J0000000000000000000{task}"),
            event_key: format!("key-{task}-{text}"),
            task_id: task.to_string(),
            event_type: "observation".to_string(),
            ts: 1_767_225_600,
            session_id: "s".to_string(),
            prev_session_id: None,
            data: format!("{{\"text\":\"{text}\"}}"),
        }
    }

    /// The files the pre-commit check opened are the ones written after
    /// the commit; a log replaced by a rename in between (a checkout) gets
    /// the line in its new file, not in the unlinked old one.
    #[test]
    fn the_checked_files_are_written_and_a_replaced_one_is_opened_again() {
        let dir = tempfile::tempdir().unwrap();
        let logs = Logs {
            dir: dir.path().to_path_buf(),
            git_index: None,
        };
        let many: Vec<(i64, LogLine)> = (0..40)
            .map(|i| (i, line(&format!("m{i:02}"), "x")))
            .collect();
        let files = check_loggable(Some(&logs), &many).unwrap();
        assert_eq!(files.open.len(), LogFiles::HELD);
        let only: Vec<LogLine> = many.iter().map(|(_, l)| l.clone()).collect();
        assert_eq!(append_lines_into(&logs, &only, files).unwrap().len(), 40);
        assert_eq!(
            std::fs::read_to_string(logs.log_path("m39")).unwrap(),
            line("m39", "x").encode()
        );
        let first = [(1, line("a", "one")), (2, line("b", "two"))];
        let files = check_loggable(Some(&logs), &first).unwrap();
        assert_eq!(files.open.len(), 2);
        let only: Vec<LogLine> = first.iter().map(|(_, l)| l.clone()).collect();
        let wrote = append_lines_into(&logs, &only, files).unwrap();
        assert_eq!(wrote.len(), 2);
        let a = logs.log_path("a");
        assert_eq!(
            std::fs::read_to_string(&a).unwrap(),
            line("a", "one").encode()
        );

        let second = [(3, line("a", "three"))];
        let files = check_loggable(Some(&logs), &second).unwrap();
        let fresh = dir.path().join("replacement");
        std::fs::write(&fresh, line("a", "one").encode()).unwrap();
        std::fs::rename(&fresh, &a).unwrap();
        let only: Vec<LogLine> = second.iter().map(|(_, l)| l.clone()).collect();
        append_lines_into(&logs, &only, files).unwrap();
        assert_eq!(
            std::fs::read_to_string(&a).unwrap(),
            format!(
                "{}{}",
                line("a", "one").encode(),
                line("a", "three").encode()
            )
        );
    }

    #[test]
    fn a_torn_last_line_is_closed_before_appending() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t").join("events.ndjson");
        append_text(&p, "a\n").unwrap();
        std::fs::write(&p, "a\n{\"torn").unwrap();
        append_text(&p, "b\n").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "a\n{\"torn\nb\n");
    }
}
