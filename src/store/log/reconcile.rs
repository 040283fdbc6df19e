//! Reconcile (spec/store.md "The plan travels with the repository"): make
//! the database and the per-task logs hold the same events.
//!
//! - *Ingest*: every valid log line whose `event_key` the database lacks is
//!   inserted and folded (the fold is order-independent). Files whose
//!   `(mtime, size)` equals their watermark (`schema_meta` key
//!   `log.wm.<folder>`, value `MTIME_NS SIZE`) are skipped. Many missing lines
//!   (a deleted `cairn.db`) are inserted first and folded once by the rebuild
//!   path.
//! - *Export*: every database event with `seq` above the mark
//!   `log.exported_seq` is looked up in its log and appended when missing
//!   (a crash between commit and append), under the exclusive append lock
//!   so no append in flight is mistaken for a gap; then the mark moves up.
//! - *Triggers*: [`crate::store::Store::sync`] compares the epoch counter
//!   and the git index file's `(mtime, size, inode)` with what it last saw;
//!   when neither moved it returns at once. An epoch move (another process
//!   wrote) runs the export pass; a git index move (checkout, merge, pull)
//!   also runs the ingest scan.

use std::collections::{HashMap, HashSet};
use std::io::{Read, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use super::append::{AppendGuard, with_repaired_newline};
use super::line::quick_key;
use super::safe::{LogRead, MAX_LINE_BYTES, read_log_file};
use super::{LOG_FILE, LogLine, Logs, ParsedLine};
use crate::store::error::StoreError;
use crate::store::event::NewEvent;
use crate::store::fold::{FoldInput, fold};
use crate::store::open::Store;
use crate::store::rebuild::rebuild_in;

/// The `schema_meta` key of the export mark.
pub const EXPORT_MARK: &str = "log.exported_seq";

/// The `schema_meta` key prefix of the per-file watermarks.
pub const WATERMARK_PREFIX: &str = "log.wm.";

/// More missing lines than this are inserted first and folded once through
/// the rebuild path instead of one fold per line.
const BULK: usize = 2000;

/// What one reconcile did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReconcileReport {
    /// Log lines inserted into the database.
    pub ingested: usize,
    /// Database events appended to their logs.
    pub exported: usize,
    /// Malformed lines skipped (each named on stderr).
    pub malformed: usize,
    /// Log files read (their watermark had moved).
    pub files_read: usize,
}

/// The git index file's identity: `(mtime ns, size, inode)`.
pub(crate) type IndexStamp = (i128, u64, u64);

/// What the per-call check last saw, and the watermark cache.
#[derive(Debug, Default)]
pub(crate) struct SyncState {
    /// The epoch counter last seen (`None`: never reconciled).
    pub epoch: Option<u64>,
    /// The git index stamp last seen (`None` inside: no index file).
    pub index: Option<Option<IndexStamp>>,
    /// Watermarks by folder name (loaded on first scan).
    pub watermarks: Option<HashMap<String, (i128, u64)>>,
    /// Watermarks moved by this process's own appends, not yet stored in
    /// `schema_meta` (stored by the next reconcile or when the store drops).
    pub pending: HashMap<String, (i128, u64)>,
    /// Seq ranges `(first, last)` this process appended to the logs itself;
    /// the export mark moves across them when they are contiguous with it.
    pub exported: Vec<(i64, i64)>,
}

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

/// `(mtime ns, size)` of a file's metadata.
pub(crate) fn stamp(meta: &std::fs::Metadata) -> (i128, u64) {
    (
        i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
        meta.len(),
    )
}

/// The git index stamp, `None` when there is no index file.
pub(crate) fn index_stamp(logs: &Logs) -> Option<IndexStamp> {
    let meta = std::fs::metadata(logs.git_index.as_ref()?).ok()?;
    let (m, s) = stamp(&meta);
    Some((m, s, meta.ino()))
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

fn load_watermarks(conn: &Connection) -> Result<HashMap<String, (i128, u64)>, StoreError> {
    let mut stmt =
        conn.prepare("SELECT key, value FROM schema_meta WHERE key >= ?1 AND key < ?2")?;
    let end = format!("{}\u{10FFFF}", WATERMARK_PREFIX);
    let rows = stmt.query_map(params![WATERMARK_PREFIX, end], |r| {
        Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
    })?;
    let mut out = HashMap::new();
    for row in rows {
        let (key, value) = row?;
        let mut parts = value.split(' ');
        let m = parts.next().and_then(|s| s.parse().ok());
        let s = parts.next().and_then(|s| s.parse().ok());
        if let (Some(folder), Some(m), Some(s)) = (key.strip_prefix(WATERMARK_PREFIX), m, s) {
            out.insert(folder.to_string(), (m, s));
        }
    }
    Ok(out)
}

/// Reads `log.exported_seq` (0 when unset).
pub(crate) fn export_mark(conn: &Connection) -> Result<i64, StoreError> {
    let v: Option<String> = conn
        .query_row(
            "SELECT value FROM schema_meta WHERE key = ?1",
            params![EXPORT_MARK],
            |r| r.get(0),
        )
        .optional()?;
    Ok(v.and_then(|s| s.parse().ok()).unwrap_or(0))
}

fn set_meta(conn: &Connection, key: &str, value: &str) -> Result<(), StoreError> {
    conn.prepare_cached(
        "INSERT INTO schema_meta(key, value) VALUES (?1, ?2)
         ON CONFLICT(key) DO UPDATE SET value = excluded.value",
    )?
    .execute(params![key, value])?;
    Ok(())
}

/// Inserts one logged event (keeping its id and previous session) and folds
/// it unless `fold_now` is false. Returns whether it was new.
pub(crate) fn insert_line(
    conn: &Connection,
    p: &ParsedLine,
    fold_now: bool,
) -> Result<bool, StoreError> {
    let l = &p.line;
    let n = conn
        .prepare_cached(
            "INSERT OR IGNORE INTO events(event_id, event_key, task_id, type, ts, session_id, prev_session_id, data)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        )?
        .execute(params![
            l.event_id,
            l.event_key,
            l.task_id,
            l.event_type,
            l.ts,
            l.session_id,
            l.prev_session_id,
            l.data
        ])?;
    if n == 1 && fold_now {
        fold(
            conn,
            &FoldInput {
                event_id: &l.event_id,
                task_id: &l.task_id,
                event_type: &l.event_type,
                ts: l.ts,
                data: &p.data,
            },
        )?;
    }
    Ok(n == 1)
}

impl Store {
    /// Records this process's own appends as seen: a file whose stamp
    /// before the append equals its known watermark (or was empty) held
    /// nothing unread, so its stamp after the append becomes the watermark
    /// (kept pending until [`Store::flush_watermarks`]). Any other file is
    /// left for the next scan to read.
    pub(crate) fn note_own_appends(&self, files: &[super::append::Appended]) {
        let mut st = self.sync_state.borrow_mut();
        let st = &mut *st;
        let Some(marks) = st.watermarks.as_mut() else {
            return;
        };
        for f in files {
            if f.before.1 == 0 || marks.get(&f.folder) == Some(&f.before) {
                marks.insert(f.folder.clone(), f.after);
                st.pending.insert(f.folder.clone(), f.after);
            }
        }
    }

    /// Stores the pending watermarks in `schema_meta` in one transaction
    /// (nothing when none are pending). Errors: [`StoreError::Sqlite`].
    /// Also moves the export mark across the seq ranges this process
    /// appended itself while they are contiguous with it (a range of another
    /// process in between stops it: the export pass checks from there).
    pub(crate) fn flush_watermarks(&self) -> Result<(), StoreError> {
        let (pending, mut ranges) = {
            let mut st = self.sync_state.borrow_mut();
            (
                std::mem::take(&mut st.pending),
                std::mem::take(&mut st.exported),
            )
        };
        if pending.is_empty() && ranges.is_empty() {
            return Ok(());
        }
        let tx = rusqlite::Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)?;
        for (folder, (m, s)) in &pending {
            set_meta(
                &tx,
                &format!("{WATERMARK_PREFIX}{folder}"),
                &format!("{m} {s}"),
            )?;
        }
        ranges.sort_unstable();
        let mark = export_mark(&tx)?;
        let mut top = mark;
        for (first, last) in ranges {
            if first > top + 1 {
                break;
            }
            top = top.max(last);
        }
        if top > mark {
            set_meta(&tx, EXPORT_MARK, &top.to_string())?;
        }
        tx.commit()?;
        Ok(())
    }

    /// The ingest scan: reads every log whose watermark moved (all of them
    /// when `all`), inserts and folds the lines the database lacks in one
    /// `BEGIN IMMEDIATE` transaction, records the new watermarks, and names
    /// each malformed line on stderr (`cairn: skipped malformed log line
    /// FILE:LINE: REASON`). Errors: [`StoreError::Io`], [`StoreError::Sqlite`].
    pub(crate) fn ingest_logs(
        &self,
        logs: &Logs,
        all: bool,
    ) -> Result<ReconcileReport, StoreError> {
        self.ingest(logs, all, false)
    }

    /// [`Store::ingest_logs`]; with `clear`, the database's events are
    /// deleted first in the same transaction and every file is read, so the
    /// log becomes exactly the union of the files' valid lines.
    fn ingest(&self, logs: &Logs, all: bool, clear: bool) -> Result<ReconcileReport, StoreError> {
        let all = all || clear;
        let mut report = ReconcileReport::default();
        let cached = self.sync_state.borrow_mut().watermarks.take();
        let mut marks = match cached {
            Some(m) => m,
            None => load_watermarks(&self.conn)?,
        };
        let mut changed: Vec<(String, (i128, u64))> = Vec::new();
        let mut missing: Vec<ParsedLine> = Vec::new();
        let mut seen: HashSet<String> = HashSet::new();
        let result = (|| -> Result<(), StoreError> {
            let mut known = self
                .conn
                .prepare_cached("SELECT 1 FROM events WHERE event_key = ?1")?;
            for (folder, path) in log_files(logs)? {
                let Ok(meta) = std::fs::symlink_metadata(&path) else {
                    continue;
                };
                let st = stamp(&meta);
                if !all && marks.get(&folder) == Some(&st) {
                    continue;
                }
                let text = match read_log(&path)? {
                    LogRead::Missing => continue,
                    LogRead::Refused(reason) => {
                        eprintln!("cairn: skipped log file: {reason}");
                        report.malformed += 1;
                        continue;
                    }
                    LogRead::Text(t) => t,
                };
                report.files_read += 1;
                let (good, bad) = parse_log(&path, &text);
                for m in &bad {
                    eprintln!("cairn: skipped malformed log line {m}");
                }
                report.malformed += bad.len();
                for p in good {
                    if seen.contains(&p.line.event_key)
                        || (!clear && known.exists(params![p.line.event_key])?)
                    {
                        continue;
                    }
                    seen.insert(p.line.event_key.clone());
                    missing.push(p);
                }
                changed.push((folder, st));
            }
            if changed.is_empty() && !clear {
                return Ok(());
            }
            if clear {
                drop(known);
                refuse_to_drop(&self.conn, &seen)?;
            } else {
                // Two clones created one slug: the split goes to the log
                // first (the log is the record), then in with the lines.
                let (splits, notes) = crate::store::split::detect(&self.conn, &missing)?;
                for split in splits {
                    super::append::append_lines(logs, std::slice::from_ref(&split.line))?;
                    missing.push(split);
                }
                for note in notes {
                    eprintln!("{note}");
                }
            }
            let tx =
                rusqlite::Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)?;
            if clear {
                tx.execute("DELETE FROM events", [])?;
                tx.execute(
                    "DELETE FROM schema_meta WHERE key = ?1",
                    params![EXPORT_MARK],
                )?;
            }
            let max_before: i64 =
                tx.query_row("SELECT coalesce(max(seq), 0) FROM events", [], |r| r.get(0))?;
            let mark = export_mark(&tx)?;
            let bulk = clear
                || missing.len() > BULK
                || missing
                    .iter()
                    .any(|p| p.line.event_type == crate::store::event::types::SPLIT);
            for p in &missing {
                if insert_line(&tx, p, !bulk)? {
                    report.ingested += 1;
                }
            }
            if bulk {
                rebuild_in(&tx)?;
            }
            for (folder, (m, s)) in &changed {
                set_meta(
                    &tx,
                    &format!("{WATERMARK_PREFIX}{folder}"),
                    &format!("{m} {s}"),
                )?;
            }
            // Ingested events came from the logs: when every older event was
            // already exported, the mark may move past them too.
            if mark >= max_before {
                let max_after: i64 =
                    tx.query_row("SELECT coalesce(max(seq), 0) FROM events", [], |r| r.get(0))?;
                set_meta(&tx, EXPORT_MARK, &max_after.to_string())?;
            }
            tx.commit()?;
            Ok(())
        })();
        match result {
            Ok(()) => {
                let mut state = self.sync_state.borrow_mut();
                for (folder, st) in changed {
                    state.pending.remove(&folder);
                    marks.insert(folder, st);
                }
                state.watermarks = Some(marks);
                Ok(report)
            }
            Err(e) => Err(e),
        }
    }

    /// The export pass: appends every database event above the export mark
    /// that its log lacks (under the exclusive append lock and each file's
    /// `flock`), then moves the mark to the newest `seq`. Returns how many
    /// lines were appended. Errors: [`StoreError::Io`], [`StoreError::Sqlite`].
    pub(crate) fn export_logs(&self, logs: &Logs) -> Result<usize, StoreError> {
        let max: i64 =
            self.conn
                .query_row("SELECT coalesce(max(seq), 0) FROM events", [], |r| r.get(0))?;
        if max <= export_mark(&self.conn)? {
            return Ok(0);
        }
        let _guard = AppendGuard::take(logs, true)?;
        let mark = export_mark(&self.conn)?;
        self.export_from(logs, mark)
    }

    /// The export pass's body, the caller holding the exclusive append
    /// lock: appends every event with `seq > mark` its log lacks and moves
    /// the mark. Errors: [`StoreError::Io`], [`StoreError::Sqlite`].
    fn export_from(&self, logs: &Logs, mark: i64) -> Result<usize, StoreError> {
        let mut per_task: HashMap<String, Vec<LogLine>> = HashMap::new();
        let mut top = mark;
        {
            let mut stmt = self.conn.prepare_cached(
                "SELECT seq, event_id, event_key, task_id, type, ts, session_id, prev_session_id, data
                 FROM events WHERE seq > ?1 ORDER BY seq",
            )?;
            let mut rows = stmt.query(params![mark])?;
            while let Some(r) = rows.next()? {
                top = top.max(r.get(0)?);
                let line = LogLine {
                    event_id: r.get(1)?,
                    event_key: r.get(2)?,
                    task_id: r.get(3)?,
                    event_type: r.get(4)?,
                    ts: r.get(5)?,
                    session_id: r.get(6)?,
                    prev_session_id: r.get(7)?,
                    data: r.get(8)?,
                };
                per_task.entry(line.task_id.clone()).or_default().push(line);
            }
        }
        let mut exported = 0;
        for (slug, lines) in per_task {
            // A refused (symlinked, non-regular) log fails only its own
            // export; `verify` keeps reporting the gap.
            match export_file(&logs.log_path(&slug), &lines) {
                Ok(n) => exported += n,
                Err(e) => eprintln!("cairn: could not append to the task logs: {e}"),
            }
        }
        let tx = rusqlite::Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)?;
        if export_mark(&tx)? < top {
            set_meta(&tx, EXPORT_MARK, &top.to_string())?;
        }
        tx.commit()?;
        Ok(exported)
    }

    /// `cairn rebuild --from-logs`: holding the append lock exclusively
    /// for its whole run, first appends any database event its log lacks (so nothing only the database holds is lost), then, in one
    /// transaction, replaces the database's events with the union of the
    /// logs' valid lines and re-folds the projection. `None` for a store
    /// without logs. Errors: [`StoreError::Io`], [`StoreError::Sqlite`].
    pub fn rebuild_from_logs(&self) -> Result<Option<ReconcileReport>, StoreError> {
        let Some(logs) = self.logs.clone() else {
            return Ok(None);
        };
        // Exclusive for the whole run: writers hold the lock shared from
        // before their transaction until their append, so this waits for
        // writes in flight and no acknowledged event can be dropped.
        let _guard = AppendGuard::take(&logs, true)?;
        let exported = self.export_from(&logs, 0)?;
        let mut report = self.ingest(&logs, true, true)?;
        report.exported = exported;
        Ok(Some(report))
    }

    /// Full reconcile: the ingest scan (every file whose watermark moved;
    /// every file when `all`) and the export pass. Run on open.
    /// Errors: [`StoreError::Io`], [`StoreError::Sqlite`].
    pub fn reconcile(&self, all: bool) -> Result<ReconcileReport, StoreError> {
        let Some(logs) = self.logs.clone() else {
            return Ok(ReconcileReport::default());
        };
        let epoch = super::read_epoch(&logs.epoch_path());
        let index = index_stamp(&logs);
        let mut report = self.ingest_logs(&logs, all)?;
        report.exported = self.export_logs(&logs)?;
        self.flush_watermarks()?;
        let mut st = self.sync_state.borrow_mut();
        st.epoch = Some(epoch);
        st.index = Some(index);
        Ok(report)
    }

    /// The per-call check (spec: before each tool call and query): O(1) —
    /// one read of the epoch file and one `stat` of the git index — when
    /// nothing moved. An epoch move runs the export pass; a git index move
    /// runs the ingest scan too. A store without logs does nothing.
    /// Errors: [`StoreError::Io`], [`StoreError::Sqlite`].
    pub fn sync(&self) -> Result<(), StoreError> {
        let Some(logs) = self.logs.as_ref() else {
            return Ok(());
        };
        let epoch = super::read_epoch(&logs.epoch_path());
        let index = index_stamp(logs);
        let (epoch_moved, index_moved) = {
            let st = self.sync_state.borrow();
            (st.epoch != Some(epoch), st.index != Some(index))
        };
        if !epoch_moved && !index_moved {
            return Ok(());
        }
        let logs = logs.clone();
        if index_moved {
            self.ingest_logs(&logs, false)?;
        }
        self.export_logs(&logs)?;
        self.flush_watermarks()?;
        let mut st = self.sync_state.borrow_mut();
        st.epoch = Some(epoch);
        st.index = Some(index);
        Ok(())
    }
}

impl Drop for Store {
    /// Stores the watermarks of this process's own appends, so the next
    /// open does not re-read the files it wrote (best effort: a failure
    /// only costs that re-read).
    fn drop(&mut self) {
        let _ = self.flush_watermarks();
    }
}

/// The guard of `rebuild --from-logs` (issue 19): every database event must
/// be among the logs' valid lines (`in_logs`, their content keys) before the
/// events are replaced by those lines. Errors:
/// [`StoreError::RebuildWouldDrop`] naming how many are missing and the
/// first one's task, [`StoreError::Sqlite`].
fn refuse_to_drop(conn: &Connection, in_logs: &HashSet<String>) -> Result<(), StoreError> {
    let mut stmt = conn.prepare("SELECT event_key, task_id FROM events ORDER BY seq")?;
    let mut rows = stmt.query([])?;
    let mut missing = 0;
    let mut first = None;
    while let Some(r) = rows.next()? {
        let key: String = r.get(0)?;
        if !in_logs.contains(&key) {
            missing += 1;
            if first.is_none() {
                first = Some(r.get::<_, String>(1)?);
            }
        }
    }
    match first {
        Some(first) => Err(StoreError::RebuildWouldDrop { missing, first }),
        None => Ok(()),
    }
}

/// Appends the `lines` whose keys the log at `path` lacks, in one write
/// under the file's exclusive `flock`. Returns how many were appended.
fn export_file(path: &Path, lines: &[LogLine]) -> Result<usize, StoreError> {
    let io = |e| StoreError::io(path, e);
    let mut file = super::append::open_for_append(path)?;
    file.lock().map_err(io)?;
    let mut bytes = Vec::new();
    (&mut file)
        .take(super::MAX_LOG_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > super::MAX_LOG_BYTES {
        return Err(io(std::io::Error::other("larger than the log size cap")));
    }
    let text = String::from_utf8_lossy(&bytes);
    let have: HashSet<&str> = text.split('\n').filter_map(quick_key).collect();
    let mut out = String::new();
    let mut n = 0;
    for l in lines {
        if !have.contains(l.event_key.as_str()) {
            out.push_str(&l.encode());
            n += 1;
        }
    }
    if n > 0 {
        let buf = with_repaired_newline(&mut file, &out).map_err(io)?;
        file.write_all(buf.as_bytes()).map_err(io)?;
    }
    Ok(n)
}
