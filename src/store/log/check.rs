//! The log directions of `cairn verify` (spec/store.md "The plan travels
//! with the repository"): every database event is in its subject's log,
//! every valid log line is in the database, and malformed lines are listed.

use std::collections::{HashMap, HashSet};

use rusqlite::OptionalExtension;

use super::dir_name;
use super::read::{Malformed, log_files, parse_log, read_log};
use super::safe::LogRead;
use crate::store::error::StoreError;
use crate::store::handle::Store;

/// What [`Store::check_logs`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogCheck {
    /// Log files read.
    pub files: usize,
    /// Valid lines read (duplicates counted).
    pub lines: usize,
    /// Database events missing from their subject's log.
    pub missing_from_logs: usize,
    /// Distinct valid log lines whose event the database lacks.
    pub missing_from_db: usize,
    /// The malformed lines, in file order.
    pub malformed: Vec<Malformed>,
}

impl LogCheck {
    /// True when both directions hold (malformed lines are reported, not failed).
    pub fn ok(&self) -> bool {
        self.missing_from_logs == 0 && self.missing_from_db == 0
    }
}

/// The first 128 bits of a hex content key (enough to tell keys apart).
fn key_bits(key: &str) -> u128 {
    key.get(..32)
        .and_then(|h| u128::from_str_radix(h, 16).ok())
        .unwrap_or(0)
}

impl Store {
    /// Checks both directions between the database and the logs, reading
    /// every log file and every event once. `None` for a store without
    /// logs. Changes nothing. Errors: [`StoreError::Io`], [`StoreError::Sqlite`].
    /// When a direction fails, the check runs again holding the append
    /// lock exclusively, so a write between its commit and its append (in
    /// flight) is not counted as a gap.
    pub fn check_logs(&self) -> Result<Option<LogCheck>, StoreError> {
        let Some(logs) = self.logs.as_ref() else {
            return Ok(None);
        };
        let first = self.check_logs_once(logs)?;
        if first.ok() {
            return Ok(Some(first));
        }
        let _guard = super::AppendGuard::take(logs, true)?;
        self.check_logs_once(logs).map(Some)
    }

    /// One pass of [`Store::check_logs`].
    fn check_logs_once(&self, logs: &super::Logs) -> Result<LogCheck, StoreError> {
        let mut check = LogCheck::default();
        let mut by_folder: HashMap<String, HashSet<u128>> = HashMap::new();
        let mut in_logs: HashSet<u128> = HashSet::new();
        for (folder, path) in log_files(logs)? {
            let text = match read_log(&path)? {
                LogRead::Missing => continue,
                LogRead::Refused(reason) => {
                    check.malformed.push(Malformed {
                        path: path.clone(),
                        line: 0,
                        reason,
                    });
                    continue;
                }
                LogRead::Text(t) => t,
            };
            check.files += 1;
            let (good, bad) = parse_log(&path, &text);
            check.lines += good.len();
            check.malformed.extend(bad);
            let keys = by_folder.entry(folder).or_default();
            for p in good {
                let k = key_bits(&p.line.event_key);
                // A line counts for its own subject's log only.
                if dir_name(&p.line.task_id) == path_folder(&path) {
                    keys.insert(k);
                }
                in_logs.insert(k);
            }
        }
        let tx = rusqlite::Transaction::new_unchecked(
            &self.conn,
            rusqlite::TransactionBehavior::Deferred,
        )?;
        let mut in_db: HashSet<u128> = HashSet::new();
        {
            let mut stmt = tx.prepare("SELECT event_key, task_id FROM events")?;
            let mut rows = stmt.query([])?;
            while let Some(r) = rows.next()? {
                let key: String = r.get(0)?;
                let task: String = r.get(1)?;
                let k = key_bits(&key);
                in_db.insert(k);
                if !by_folder
                    .get(&dir_name(&task))
                    .is_some_and(|s| s.contains(&k))
                {
                    check.missing_from_logs += 1;
                }
            }
        }
        let mut missing: HashSet<u128> = in_logs.difference(&in_db).copied().collect();
        if !missing.is_empty() {
            // A line whose event id the database holds with other content
            // is one reconcile skips (hostile run M3): list it as malformed,
            // not as an event the database lacks.
            let mut owner = tx.prepare("SELECT event_key FROM events WHERE event_id = ?1")?;
            for (_, path) in log_files(logs)? {
                let LogRead::Text(text) = read_log(&path)? else {
                    continue;
                };
                let (good, _) = parse_log(&path, &text);
                for p in &good {
                    let k = key_bits(&p.line.event_key);
                    if !missing.contains(&k) {
                        continue;
                    }
                    let held: Option<String> = owner
                        .query_row([&p.line.event_id], |r| r.get(0))
                        .optional()?;
                    if held.is_some_and(|h| h != p.line.event_key) {
                        missing.remove(&k);
                        let line = text
                            .split('\n')
                            .position(|raw| raw.contains(p.line.event_key.as_str()))
                            .map_or(0, |i| i + 1);
                        check.malformed.push(Malformed {
                            path: path.clone(),
                            line,
                            reason: format!(
                                "event id {:?}: the database holds a different event under that id",
                                p.line.event_id
                            ),
                        });
                    }
                }
            }
        }
        tx.rollback()?;
        check.missing_from_db = missing.len();
        Ok(check)
    }
}

/// The folder name of a log path (`tasks/<folder>/events.ndjson`).
fn path_folder(path: &std::path::Path) -> String {
    path.parent()
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}
