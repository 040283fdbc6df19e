//! `cairn export --logs DIR` (spec/team.md "Moving between engines"): the
//! per-task NDJSON logs of a project written from either engine's events,
//! in the layout a project's `.cairn/` holds (`DIR/tasks/<folder>/
//! events.ndjson`, plus `.gitattributes` and `.gitignore`), so a team can
//! commit a backup to git and `cairn import DIR` read it back into a
//! store (SQLite; onto PostgreSQL, `cairn push` from that project).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use super::{LogLine, Logs};
use crate::store::error::StoreError;

/// What an export wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExportReport {
    /// Task logs written (one per subject slug).
    pub tasks: usize,
    /// Lines written (one per event).
    pub lines: usize,
}

/// Writes `lines` (in the order given: arrival order) as per-task logs
/// under `dir`. Refuses a `dir` whose `tasks/` already holds anything, so
/// an export never mixes with other logs. Errors: [`StoreError::ExportNotEmpty`],
/// [`StoreError::Io`].
pub fn export_logs(dir: &Path, lines: &[LogLine]) -> Result<ExportReport, StoreError> {
    let logs = Logs {
        dir: dir.to_path_buf(),
        git_index: None,
    };
    let tasks = logs.tasks_dir();
    if std::fs::read_dir(&tasks).is_ok_and(|mut d| d.next().is_some()) {
        return Err(StoreError::ExportNotEmpty(tasks));
    }
    let mut by_task: BTreeMap<&str, Vec<&LogLine>> = BTreeMap::new();
    for l in lines {
        by_task.entry(l.task_id.as_str()).or_default().push(l);
    }
    for (slug, ls) in &by_task {
        let path = logs.log_path(slug);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| StoreError::io(parent, e))?;
        }
        let mut text = String::new();
        for l in ls {
            text.push_str(&l.encode());
        }
        let mut f = std::fs::File::create(&path).map_err(|e| StoreError::io(&path, e))?;
        f.write_all(text.as_bytes())
            .map_err(|e| StoreError::io(&path, e))?;
    }
    logs.ensure_git_files()?;
    Ok(ExportReport {
        tasks: by_task.len(),
        lines: lines.len(),
    })
}
