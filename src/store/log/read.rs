//! Reading the per-task logs (spec/store.md "The plan travels with the
//! repository"): every `tasks/<folder>/events.ndjson`, one file read without
//! following links, its lines parsed and checked by the write boundary's
//! validation. What ingest, `cairn verify` and `cairn import` share.

use std::path::{Path, PathBuf};

use super::safe::{LogRead, MAX_LINE_BYTES, read_log_file};
use super::{LOG_FILE, LogLine, Logs, ParsedLine};
use crate::store::error::StoreError;
use crate::store::event::NewEvent;

/// A malformed line: its file, 1-based line number and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed {
    /// The log file.
    pub path: PathBuf,
    /// 1-based line number.
    pub line: usize,
    /// Why it was skipped.
    pub reason: String,
}

impl std::fmt::Display for Malformed {
    /// `FILE:LINE: REASON`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.path.display(), self.line, self.reason)
    }
}

/// Reads the log at `path` under a shared `flock` without following links
/// ([`super::safe::read_log_file`]). Errors: [`StoreError::Io`].
pub(crate) fn read_log(path: &Path) -> Result<LogRead, StoreError> {
    read_log_file(path).map_err(|e| StoreError::io(path, e))
}

/// Parses every line of `text` (the log at `path`): valid events in file
/// order, and the malformed ones. Blank lines are ignored. A line must also
/// pass the write boundary's validation and name a subject.
pub(crate) fn parse_log(path: &Path, text: &str) -> (Vec<ParsedLine>, Vec<Malformed>) {
    let mut good = Vec::new();
    let mut bad = Vec::new();
    for (i, raw) in text.split('\n').enumerate() {
        let raw = raw.strip_suffix('\r').unwrap_or(raw);
        if raw.trim().is_empty() {
            continue;
        }
        if raw.len() > MAX_LINE_BYTES {
            bad.push(Malformed {
                path: path.to_path_buf(),
                line: i + 1,
                reason: format!("line longer than {} MiB", MAX_LINE_BYTES >> 20),
            });
            continue;
        }
        let checked = LogLine::parse(raw).and_then(|p| {
            let ev = NewEvent {
                task_id: p.line.task_id.clone(),
                event_type: p.line.event_type.clone(),
                ts: p.line.ts,
                session_id: p.line.session_id.clone(),
                data: p.data.clone(),
            };
            crate::store::write::validate(&ev).map_err(|e| e.to_string())?;
            Ok(p)
        });
        match checked {
            Ok(p) => good.push(p),
            Err(reason) => bad.push(Malformed {
                path: path.to_path_buf(),
                line: i + 1,
                reason,
            }),
        }
    }
    (good, bad)
}

/// Every `tasks/<folder>/events.ndjson` under the logs: `(folder, path)`.
pub(crate) fn log_files(logs: &Logs) -> Result<Vec<(String, PathBuf)>, StoreError> {
    let tasks = logs.tasks_dir();
    let entries = match std::fs::read_dir(&tasks) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(StoreError::io(&tasks, e)),
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| StoreError::io(&tasks, e))?;
        let folder = entry.file_name().to_string_lossy().into_owned();
        out.push((folder, entry.path().join(LOG_FILE)));
    }
    out.sort();
    Ok(out)
}
