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
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use super::append::{AppendGuard, with_repaired_newline};
use super::line::quick_key;
use super::marks::{
    EXPORT_MARK, WATERMARK_PREFIX, export_mark, index_seen, index_stamp, load_watermarks, set_meta,
    stamp, store_index_seen,
};
use super::read::{log_files, parse_log, read_log};
use super::safe::LogRead;
use super::{LogLine, Logs, ParsedLine};
use crate::store::error::StoreError;
use crate::store::fold::{FoldInput, fold};
use crate::store::handle::Store;
use crate::store::progress::{Stage, Ticker, report as report_progress};
use crate::store::refold::rebuild_in;

/// How long the export pass waits for the exclusive log lock before it
/// leaves the catch-up to the next reconcile (1 s; a normal append holds
/// the lock for milliseconds).
const EXPORT_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

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
    if n == 1 && l.event_type == crate::store::event::types::SPLIT {
        crate::store::split::mark_splits(conn)?;
    }
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
    ///
    /// A database without events (a fresh clone's, being built; issue 23)
    /// is filled as the files are read ([`Store::ingest_streaming`]), so
    /// memory holds a few files' lines at a time instead of every line.
    fn ingest(&self, logs: &Logs, all: bool, clear: bool) -> Result<ReconcileReport, StoreError> {
        let all = all || clear;
        // A database without events (a fresh clone's, being built) holds
        // no key or id a line could collide with.
        let db_empty = !clear
            && !self
                .conn
                .query_row("SELECT EXISTS (SELECT 1 FROM events)", [], |r| {
                    r.get::<_, bool>(0)
                })?;
        let cached = self.sync_state.borrow_mut().watermarks.take();
        let mut marks = match cached {
            Some(m) => m,
            None => load_watermarks(&self.conn)?,
        };
        let mut changed: Vec<(String, (i128, u64))> = Vec::new();
        let streamed = if db_empty || clear {
            self.ingest_streaming(logs, all, clear, &marks, &mut changed)
        } else {
            Ok(None)
        };
        let result = match streamed {
            Ok(None) => self.ingest_collected(logs, all, &marks, &mut changed),
            other => other.map(|r| r.unwrap_or_default()),
        };
        report_progress(Stage::Done, 0, 0);
        match result {
            Ok(report) => {
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

    /// The ingest of a database that holds events: every file read first,
    /// the lines the database lacks collected, the splits a merge calls
    /// for detected against the database's own events, then one
    /// transaction inserts them. (`rebuild --from-logs` goes through
    /// [`Store::ingest_streaming`], which holds no line in memory.) Fills
    /// `changed` with the files read and their stamps.
    fn ingest_collected(
        &self,
        logs: &Logs,
        all: bool,
        marks: &HashMap<String, (i128, u64)>,
        changed: &mut Vec<(String, (i128, u64))>,
    ) -> Result<ReconcileReport, StoreError> {
        let mut report = ReconcileReport::default();
        let mut missing: Vec<ParsedLine> = Vec::new();
        let mut admit = Admit::new(&self.conn, false, false)?;
        scan_each(log_files(logs)?, marks, all, |folder, path, scan| {
            if let Some(good) = admit.file(&mut report, &folder, scan, changed)? {
                for p in good {
                    if admit.line(&mut report, &path, &p)? {
                        missing.push(p);
                    }
                }
            }
            Ok(())
        })?;
        if changed.is_empty() {
            return Ok(report);
        }
        // Two clones created one slug: the split goes to the log first
        // (the log is the record), then in with the lines.
        let (splits, notes) = crate::store::split::detect(&self.conn, &missing)?;
        for split in splits {
            super::append::append_lines(logs, std::slice::from_ref(&split.line))?;
            missing.push(split);
        }
        for note in notes {
            eprintln!("{note}");
        }
        let tx = rusqlite::Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)?;
        let max_before: i64 =
            tx.query_row("SELECT coalesce(max(seq), 0) FROM events", [], |r| r.get(0))?;
        let mark = export_mark(&tx)?;
        let bulk = missing.len() > BULK
            || missing
                .iter()
                .any(|p| p.line.event_type == crate::store::event::types::SPLIT);
        let mut ticker = bulk.then(|| Ticker::new(Stage::Insert, missing.len() as u64));
        for p in &missing {
            if insert_line(&tx, p, !bulk)? {
                report.ingested += 1;
            }
            if let Some(t) = ticker.as_mut() {
                t.tick(report.ingested as u64);
            }
        }
        if bulk {
            rebuild_in(&tx)?;
        }
        finish_ingest(tx, changed, mark, max_before)?;
        Ok(report)
    }

    /// The ingest of a database without events (a fresh clone's build, a
    /// deleted `cairn.db`; issue 23): one transaction from the start, each
    /// file's new lines inserted as the reading threads deliver the files
    /// (in the files' order, [`scan_each`]), with the events table's
    /// secondary indexes dropped meanwhile and built once after; then the
    /// lines fold as [`Store::ingest_collected`] folds them (more than
    /// [`BULK`] or a split: the bulk fold; else one by one in file order).
    /// No split is detected: there is no database side to split from.
    /// Fills `changed` with the files read and their stamps. No log file:
    /// nothing done, no lock taken (with `clear` the run goes on, and its
    /// guard refuses to drop the database's events). `None`
    /// (nothing done) when the database holds events once the write lock
    /// is had (another process ingested meanwhile): the caller runs
    /// [`Store::ingest_collected`].
    ///
    /// With `clear` (`rebuild --from-logs`, issue 23: it held every line,
    /// 3.1 GB at 100k): in the same transaction the database's events are
    /// first copied aside (their seq, id, key and task: the temporary
    /// table [`OLD_EVENTS`]) and deleted; a line whose id an old event
    /// holds with other content is skipped as before, and so is a line
    /// whose content an old event holds under another id (the database's
    /// event keeps its id); the whole
    /// projection is folded again; and if an old event is not among the
    /// lines ([`refuse_to_drop`]) everything rolls back.
    fn ingest_streaming(
        &self,
        logs: &Logs,
        all: bool,
        clear: bool,
        marks: &HashMap<String, (i128, u64)>,
        changed: &mut Vec<(String, (i128, u64))>,
    ) -> Result<Option<ReconcileReport>, StoreError> {
        let mut report = ReconcileReport::default();
        let files = log_files(logs)?;
        if files.is_empty() && !clear {
            return Ok(Some(report));
        }
        let tx = rusqlite::Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)?;
        if clear {
            tx.execute_batch(&format!(
                "DROP TABLE IF EXISTS {OLD_EVENTS};
                 CREATE TEMP TABLE {OLD_EVENTS} (
                   event_key TEXT PRIMARY KEY, event_id TEXT NOT NULL,
                   task_id TEXT NOT NULL, seq INTEGER NOT NULL) WITHOUT ROWID;
                 INSERT INTO {OLD_EVENTS}
                   SELECT event_key, event_id, task_id, seq FROM main.events;
                 CREATE INDEX {OLD_EVENTS}_id ON {OLD_EVENTS_NAME} (event_id);
                 DELETE FROM main.events;"
            ))?;
            tx.execute(
                "DELETE FROM schema_meta WHERE key = ?1",
                params![EXPORT_MARK],
            )?;
        } else if tx.query_row("SELECT EXISTS (SELECT 1 FROM events)", [], |r| {
            // Checked again under the lock: the lines go in without their
            // unique keys' indexes, so no other event may be there.
            r.get::<_, bool>(0)
        })? {
            return Ok(None);
        }
        let mark = export_mark(&tx)?;
        let indexes = event_indexes(&tx)?;
        for (name, _) in &indexes {
            tx.execute_batch(&format!("DROP INDEX \"{}\"", name.replace('"', "\"\"")))?;
        }
        // The lines to fold one by one, while there are few (`BULK`); all
        // of them again after `clear`.
        let mut few: Option<Vec<ParsedLine>> = (!clear).then(Vec::new);
        let mut split = false;
        let mut admit = if clear {
            Admit::against_old(&self.conn)?
        } else {
            Admit::new(&self.conn, false, true)?
        };
        scan_each(files, marks, all, |folder, path, scan| {
            if let Some(good) = admit.file(&mut report, &folder, scan, changed)? {
                for p in good {
                    if !admit.line(&mut report, &path, &p)? {
                        continue;
                    }
                    if insert_line(&tx, &p, false)? {
                        report.ingested += 1;
                        split |= p.line.event_type == crate::store::event::types::SPLIT;
                        few = few
                            .take()
                            .map(|mut v| {
                                v.push(p);
                                v
                            })
                            .filter(|v| v.len() <= BULK);
                    }
                }
            }
            Ok(())
        })?;
        let seen = admit.into_seen();
        if clear {
            refuse_to_drop(&tx, &seen)?;
            tx.execute_batch(&format!("DROP TABLE {OLD_EVENTS}"))?;
        } else if changed.is_empty() {
            return Ok(Some(report));
        }
        drop(seen);
        for (_, sql) in &indexes {
            tx.execute_batch(sql)?;
        }
        match few {
            Some(lines) if !split => {
                for p in &lines {
                    crate::store::fold::fold(
                        &tx,
                        &FoldInput {
                            event_id: &p.line.event_id,
                            task_id: &p.line.task_id,
                            event_type: &p.line.event_type,
                            ts: p.line.ts,
                            data: &p.data,
                        },
                    )?;
                }
            }
            _ => rebuild_in(&tx)?,
        }
        finish_ingest(tx, changed, mark, 0)?;
        Ok(Some(report))
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
        // A catch-up, not a promise: when a writer holds the lock (its own
        // append is coming) or one stopped mid-write holds it, skip; the
        // mark stays and the next reconcile tries again (issue 19: an open
        // never hangs on a stopped writer).
        let Some(_guard) = AppendGuard::take_within(logs, true, EXPORT_WAIT)? else {
            return Ok(0);
        };
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
        let mut report = if all {
            self.ingest_logs(&logs, true)?
        } else {
            self.ingest_if_index_moved(&logs, index)?
        };
        report.exported = self.export_logs(&logs)?;
        self.flush_watermarks()?;
        let mut st = self.sync_state.borrow_mut();
        st.epoch = Some(epoch);
        st.index = Some(index);
        Ok(report)
    }

    /// The ingest scan of an open (issue 23): skipped when the store keeps
    /// its logs in a git work tree whose index has the stamp the last scan
    /// stored ([`super::marks::INDEX_SEEN`]): nothing but a checkout, merge or
    /// pull brings lines in, and each of those moves the index; this
    /// process's and other processes' own writes are in the database
    /// already. Otherwise (no index, a moved one, none stored) the scan runs
    /// and the stamp is stored. Errors: [`StoreError::Io`],
    /// [`StoreError::Sqlite`].
    pub(crate) fn ingest_if_index_moved(
        &self,
        logs: &Logs,
        index: Option<crate::store::handle::IndexStamp>,
    ) -> Result<ReconcileReport, StoreError> {
        if let Some(stamp) = index
            && index_seen(&self.conn)? == Some(stamp)
        {
            return Ok(ReconcileReport::default());
        }
        let report = self.ingest_logs(logs, false)?;
        if let Some(stamp) = index {
            store_index_seen(&self.conn, stamp)?;
        }
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
            if let Some(stamp) = index {
                store_index_seen(&self.conn, stamp)?;
            }
        }
        self.export_logs(&logs)?;
        self.flush_watermarks()?;
        let mut st = self.sync_state.borrow_mut();
        st.epoch = Some(epoch);
        st.index = Some(index);
        Ok(())
    }
}

/// What the scan found in one log file.
enum Scan {
    /// Its stamp equals its watermark: not read.
    Unchanged,
    /// Not read: a link, not a regular file, over the cap (the reason).
    Refused(String),
    /// Read: its stamp, its valid lines in file order, its malformed lines.
    Read {
        stamp: (i128, u64),
        good: Vec<ParsedLine>,
        bad: Vec<super::read::Malformed>,
    },
}

/// What one file's scan gives: `(folder, path, what it found)`.
type Scanned = (String, PathBuf, Scan);

/// Below this many files the scan runs on the calling thread.
const PARALLEL_FILES: usize = 256;

/// How many files a reading thread scans at a time and hands over.
const BATCH_FILES: usize = 64;

/// How many scanned batches a reading thread may have waiting to be
/// taken (what bounds the lines held in memory: threads × this × a batch).
const BATCHES_AHEAD: usize = 2;

/// Stats, reads and parses the log `files` (those whose stamp differs from
/// `marks`, or all when `all`), on up to four threads when there are many
/// (parsing a line checks its JSON, its content key and the write
/// boundary's rules: the bulk of a fresh clone's build), and calls `each`
/// on every file's result in the files' order, on the calling thread, as
/// the threads deliver them: what follows is the same whatever the threads
/// did, and only a few batches of files ([`BATCH_FILES`] ×
/// [`BATCHES_AHEAD`] per thread) are held at once. A vanished file is left
/// out. Errors: [`StoreError::Io`], or `each`'s (the threads stop).
fn scan_each(
    files: Vec<(String, PathBuf)>,
    marks: &HashMap<String, (i128, u64)>,
    all: bool,
    mut each: impl FnMut(String, PathBuf, Scan) -> Result<(), StoreError>,
) -> Result<(), StoreError> {
    let total = files.len() as u64;
    let done = AtomicU64::new(0);
    let every = (total / 200).max(100);
    let progress = crate::store::progress::wanted();
    if progress {
        report_progress(Stage::ReadLogs, 0, total);
    }
    let one = |(folder, path): (String, PathBuf)| -> Result<Option<Scanned>, StoreError> {
        if progress {
            let n = done.fetch_add(1, Ordering::Relaxed) + 1;
            if n.is_multiple_of(every) || n == total {
                report_progress(Stage::ReadLogs, n, total);
            }
        }
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            return Ok(None);
        };
        let st = stamp(&meta);
        if !all && marks.get(&folder) == Some(&st) {
            return Ok(Some((folder, path, Scan::Unchanged)));
        }
        let scan = match read_log(&path)? {
            LogRead::Missing => return Ok(None),
            LogRead::Refused(reason) => Scan::Refused(reason),
            LogRead::Text(text) => {
                let (good, bad) = parse_log(&path, &text);
                Scan::Read {
                    stamp: st,
                    good,
                    bad,
                }
            }
        };
        Ok(Some((folder, path, scan)))
    };
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(4);
    if threads < 2 || files.len() < PARALLEL_FILES {
        for f in files {
            if let Some((folder, path, scan)) = one(f)? {
                each(folder, path, scan)?;
            }
        }
        return Ok(());
    }
    // Batch b goes to thread b % threads, which scans its batches in turn
    // and sends each on its own channel; the caller takes batch b from
    // channel b % threads: the files' order, each thread at most
    // `BATCHES_AHEAD` batches ahead.
    let mut batches: Vec<Vec<Vec<(String, PathBuf)>>> = (0..threads).map(|_| Vec::new()).collect();
    let mut files = files.into_iter();
    let mut count = 0;
    loop {
        let batch: Vec<_> = files.by_ref().take(BATCH_FILES).collect();
        if batch.is_empty() {
            break;
        }
        batches[count % threads].push(batch);
        count += 1;
    }
    let one = &one;
    let failed = || {
        StoreError::io(
            Path::new("tasks"),
            std::io::Error::other("a log-reading thread failed"),
        )
    };
    std::thread::scope(|s| {
        let mut receivers = Vec::with_capacity(threads);
        let mut handles = Vec::with_capacity(threads);
        for mine in batches {
            let (send, receive) =
                std::sync::mpsc::sync_channel::<Result<Vec<Scanned>, StoreError>>(BATCHES_AHEAD);
            receivers.push(receive);
            handles.push(s.spawn(move || {
                for batch in mine {
                    let mut out = Vec::with_capacity(batch.len());
                    let mut result = Ok(());
                    for f in batch {
                        match one(f) {
                            Ok(scanned) => out.extend(scanned),
                            Err(e) => {
                                result = Err(e);
                                break;
                            }
                        }
                    }
                    let stop = result.is_err();
                    // A closed channel: the caller stopped (an error).
                    if send.send(result.map(|()| out)).is_err() || stop {
                        return;
                    }
                }
            }));
        }
        let consumed = (|| -> Result<(), StoreError> {
            let receivers = receivers;
            for b in 0..count {
                let scanned = receivers[b % threads].recv().map_err(|_| failed())??;
                for (folder, path, scan) in scanned {
                    each(folder, path, scan)?;
                }
            }
            Ok(())
        })();
        let mut joined = Ok(());
        for h in handles {
            if h.join().is_err() {
                joined = Err(failed());
            }
        }
        consumed.and(joined)
    })
}

/// The checks one ingest runs on the files and lines it reads, in order:
/// a line whose content key the database or an earlier line holds is
/// skipped silently; one whose event id another event holds is skipped
/// and named (hostile run M3).
struct Admit<'c> {
    /// `SELECT 1 FROM events WHERE event_key = ?`.
    known: rusqlite::CachedStatement<'c>,
    /// `SELECT event_key FROM events WHERE event_id = ?`.
    id_owner: rusqlite::CachedStatement<'c>,
    /// `rebuild --from-logs`: `SELECT event_id FROM` [`OLD_EVENTS`] `WHERE
    /// event_key = ?` (the id the database held the content under).
    key_owner: Option<rusqlite::CachedStatement<'c>>,
    /// The content keys taken so far.
    seen: KeySet,
    /// The event ids taken so far.
    ids: IdSet,
    /// No database event to compare with (a database without events).
    db_empty: bool,
    /// `rebuild --from-logs`: the database's events are replaced.
    clear: bool,
}

impl<'c> Admit<'c> {
    /// The checks against the events of `conn` (none when `db_empty` or
    /// with `clear`). Errors: [`StoreError::Sqlite`].
    fn new(conn: &'c Connection, clear: bool, db_empty: bool) -> Result<Admit<'c>, StoreError> {
        Ok(Admit {
            known: conn.prepare_cached("SELECT 1 FROM events WHERE event_key = ?1")?,
            id_owner: conn.prepare_cached("SELECT event_key FROM events WHERE event_id = ?1")?,
            key_owner: None,
            seen: KeySet::default(),
            ids: IdSet::default(),
            db_empty,
            clear,
        })
    }

    /// The checks of `rebuild --from-logs` streaming (`clear`): the ids of
    /// the events it replaces are read from [`OLD_EVENTS`], the copy taken
    /// before they were deleted. Errors: [`StoreError::Sqlite`].
    fn against_old(conn: &'c Connection) -> Result<Admit<'c>, StoreError> {
        Ok(Admit {
            known: conn.prepare_cached("SELECT 1 FROM events WHERE event_key = ?1")?,
            id_owner: conn.prepare_cached(&format!(
                "SELECT event_key FROM {OLD_EVENTS} WHERE event_id = ?1"
            ))?,
            key_owner: Some(conn.prepare_cached(&format!(
                "SELECT event_id FROM {OLD_EVENTS} WHERE event_key = ?1"
            ))?),
            seen: KeySet::default(),
            ids: IdSet::default(),
            db_empty: false,
            clear: true,
        })
    }

    /// One file's scan: its valid lines to check, or `None` (unchanged or
    /// refused: named on stderr). Counts it in `report` and records its
    /// stamp in `changed`; names its malformed lines on stderr.
    fn file(
        &mut self,
        report: &mut ReconcileReport,
        folder: &str,
        scan: Scan,
        changed: &mut Vec<(String, (i128, u64))>,
    ) -> Result<Option<Vec<ParsedLine>>, StoreError> {
        let (st, good, bad) = match scan {
            Scan::Unchanged => return Ok(None),
            Scan::Refused(reason) => {
                eprintln!("cairn: skipped log file: {reason}");
                report.malformed += 1;
                return Ok(None);
            }
            Scan::Read { stamp, good, bad } => (stamp, good, bad),
        };
        report.files_read += 1;
        for m in &bad {
            eprintln!("cairn: skipped malformed log line {m}");
        }
        report.malformed += bad.len();
        changed.push((folder.to_string(), st));
        Ok(Some(good))
    }

    /// True when the line `p` of the log at `path` is new and may go in
    /// (then its key and id are taken); false for a known line or one
    /// whose id is another event's (named on stderr, counted in `report`).
    fn line(
        &mut self,
        report: &mut ReconcileReport,
        path: &Path,
        p: &ParsedLine,
    ) -> Result<bool, StoreError> {
        let compare = !self.clear && !self.db_empty;
        if self.seen.contains(&p.line.event_key)
            || (compare && self.known.exists(params![p.line.event_key])?)
        {
            return Ok(false);
        }
        // One event id, one event (hostile run M3): a line whose id the
        // database or an earlier line holds with other content is skipped
        // and named; the database's own event is never replaced, not even
        // by `rebuild --from-logs`.
        let taken: Option<String> = if self.db_empty {
            None
        } else {
            self.id_owner
                .query_row(params![p.line.event_id], |r| r.get(0))
                .optional()?
        };
        // `rebuild --from-logs`: the content the database held keeps the
        // id it had (a copy of a line under a new id is not taken).
        let held_as: Option<String> = match self.key_owner.as_mut() {
            Some(stmt) => stmt
                .query_row(params![p.line.event_key], |r| r.get(0))
                .optional()?,
            None => None,
        };
        let why = match taken {
            _ if held_as.as_ref().is_some_and(|id| *id != p.line.event_id) => {
                Some("the database holds the same event under another id")
            }
            Some(k) if k != p.line.event_key => {
                Some("the database holds a different event under that id")
            }
            _ if !self.ids.insert(&p.line.event_id) => {
                Some("an earlier log line holds a different event under that id")
            }
            _ => None,
        };
        if let Some(why) = why {
            eprintln!(
                "cairn: skipped log line in {}: event id {:?}: {why}",
                path.display(),
                p.line.event_id
            );
            report.malformed += 1;
            return Ok(false);
        }
        self.seen.insert(&p.line.event_key);
        Ok(true)
    }

    /// The content keys taken (the statements released).
    fn into_seen(self) -> KeySet {
        self.seen
    }
}

/// The temporary copy of the events `rebuild --from-logs` replaces (seq,
/// id, key, task), in its transaction only.
const OLD_EVENTS: &str = "temp.rebuild_old_events";

/// [`OLD_EVENTS`] without its schema (an index names its table so).
const OLD_EVENTS_NAME: &str = "rebuild_old_events";

/// The end of an ingest's transaction: the files' new watermarks, the
/// export mark moved past the ingested events when every older event
/// (`seq` up to `max_before`) was already exported (`mark`), commit.
/// Errors: [`StoreError::Sqlite`].
fn finish_ingest(
    tx: rusqlite::Transaction<'_>,
    changed: &[(String, (i128, u64))],
    mark: i64,
    max_before: i64,
) -> Result<(), StoreError> {
    for (folder, (m, s)) in changed {
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
}

/// `(name, sql)` of the events table's indexes declared by `CREATE
/// [UNIQUE] INDEX` (not the ones its constraints make): what an ingest
/// into an empty table (a fresh clone's build, `rebuild --from-logs`)
/// drops while it inserts and builds once after (a sort each instead of a
/// random insert per row; the ingest itself keeps every key and id
/// unique, [`Admit`]). Errors: [`StoreError::Sqlite`].
fn event_indexes(conn: &Connection) -> Result<Vec<(String, String)>, StoreError> {
    let mut stmt = conn.prepare(
        "SELECT name, sql FROM main.sqlite_master
         WHERE type = 'index' AND tbl_name = 'events' AND sql IS NOT NULL ORDER BY name",
    )?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The content keys one ingest scan has taken: 64-hex keys as 32 bytes (a
/// 100k-task build holds 1.6M of them), any other key as text.
#[derive(Default)]
struct KeySet {
    hashes: HashSet<[u8; 32]>,
    other: HashSet<String>,
}

impl KeySet {
    /// The 32 bytes of a 64-hex key (lower case only: the form
    /// `event_key` writes; any other text is kept as text).
    fn bytes(key: &str) -> Option<[u8; 32]> {
        let b = key.as_bytes();
        if b.len() != 64 {
            return None;
        }
        let nibble = |c: u8| match c {
            b'0'..=b'9' => Some(c - b'0'),
            b'a'..=b'f' => Some(c - b'a' + 10),
            _ => None,
        };
        let mut out = [0u8; 32];
        for (i, o) in out.iter_mut().enumerate() {
            *o = (nibble(b[2 * i])? << 4) | nibble(b[2 * i + 1])?;
        }
        Some(out)
    }

    /// Adds `key`.
    fn insert(&mut self, key: &str) {
        match KeySet::bytes(key) {
            Some(h) => self.hashes.insert(h),
            None => self.other.insert(key.to_string()),
        };
    }

    /// True when `key` was added.
    fn contains(&self, key: &str) -> bool {
        match KeySet::bytes(key) {
            Some(h) => self.hashes.contains(&h),
            None => self.other.contains(key),
        }
    }
}

/// The event ids one ingest scan has taken: ULIDs as 128-bit numbers (a
/// 100k-task rebuild holds 1.7M of them), any other id as text.
#[derive(Default)]
struct IdSet {
    ulids: HashSet<u128>,
    other: HashSet<String>,
}

impl IdSet {
    /// Adds `id`; false when it was already there.
    fn insert(&mut self, id: &str) -> bool {
        match ulid::Ulid::from_string(id) {
            Ok(u) if u.to_string() == id => self.ulids.insert(u.0),
            _ => self.other.insert(id.to_string()),
        }
    }
}

/// The guard of `rebuild --from-logs` (issue 19): every database event must
/// be among the logs' valid lines (`in_logs`, their content keys) before the
/// events are replaced by those lines. Errors:
/// [`StoreError::RebuildWouldDrop`] naming how many are missing and the
/// first one's task, [`StoreError::Sqlite`].
fn refuse_to_drop(conn: &Connection, in_logs: &KeySet) -> Result<(), StoreError> {
    let mut stmt = conn.prepare(&format!("SELECT event_key, task_id, seq FROM {OLD_EVENTS}"))?;
    let mut rows = stmt.query([])?;
    let mut missing = 0;
    // The first missing event in arrival order (the copy is kept by key).
    let mut first: Option<(i64, String)> = None;
    while let Some(r) = rows.next()? {
        let key: String = r.get(0)?;
        if !in_logs.contains(&key) {
            missing += 1;
            let seq: i64 = r.get(2)?;
            if first.as_ref().is_none_or(|(s, _)| seq < *s) {
                first = Some((seq, r.get::<_, String>(1)?));
            }
        }
    }
    match first {
        Some((_, first)) => Err(StoreError::RebuildWouldDrop { missing, first }),
        None => Ok(()),
    }
}

/// Appends the `lines` whose keys the log at `path` lacks (a line there
/// counts when it parses and its key checks out), in one write under the
/// file's exclusive `flock`. Returns how many were appended.
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
    // A line counts only when it is whole and its key checks out: a torn
    // or edited line that still shows the key is not the event's record.
    let wanted: HashSet<&str> = lines.iter().map(|l| l.event_key.as_str()).collect();
    let have: HashSet<&str> = text
        .split('\n')
        .filter_map(|raw| {
            let k = quick_key(raw)?;
            (wanted.contains(k) && LogLine::parse(raw).is_ok_and(|p| p.line.event_key == k))
                .then_some(k)
        })
        .collect();
    let mut out = String::new();
    let mut n = 0;
    for l in lines {
        if !have.contains(l.event_key.as_str()) {
            out.push_str(&l.encode());
            n += 1;
        }
    }
    if n > 0 {
        let len = file.metadata().map_err(io)?.len();
        let buf = with_repaired_newline(&mut file, len, &out).map_err(io)?;
        file.write_all(buf.as_bytes()).map_err(io)?;
    }
    Ok(n)
}
