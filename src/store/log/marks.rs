//! Watermarks and the export mark (spec/store.md "Writes and reconcile"):
//! the `(mtime, size)` stamps that let reconcile skip a log it has read,
//! the `schema_meta` rows that keep them across processes, and a process's
//! own appends remembered as seen. Below append and reconcile: both record
//! here, neither imports the other for it.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use super::Logs;
use crate::store::error::StoreError;
use crate::store::handle::{IndexStamp, Store};

/// A file's `(mtime ns, size)`.
pub type Stamp = (i128, u64);

/// One file [`append_lines`] wrote: its `(mtime ns, size)` just before and
/// just after the write, both read under the file's lock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Appended {
    /// The task's folder name.
    pub folder: String,
    /// The stamp before the write.
    pub before: (i128, u64),
    /// The stamp after the write.
    pub after: (i128, u64),
}

/// The `schema_meta` key of the git index stamp the last ingest scan saw
/// (`MTIME_NS SIZE INODE`): opening a store whose git index has not moved
/// since needs no scan of every log (issue 23).
pub const INDEX_SEEN: &str = "log.index_seen";

/// The git index stamp stored under [`INDEX_SEEN`] (`None`: never stored or
/// unreadable). Errors: [`StoreError::Sqlite`].
pub(crate) fn index_seen(conn: &Connection) -> Result<Option<IndexStamp>, StoreError> {
    let v: Option<String> = conn
        .query_row(
            "SELECT value FROM schema_meta WHERE key = ?1",
            params![INDEX_SEEN],
            |r| r.get(0),
        )
        .optional()?;
    Ok(v.and_then(|s| {
        let mut p = s.split(' ');
        Some((
            p.next()?.parse().ok()?,
            p.next()?.parse().ok()?,
            p.next()?.parse().ok()?,
        ))
    }))
}

/// Stores `stamp` under [`INDEX_SEEN`] (one short write transaction; nothing
/// when it is already stored). Errors: [`StoreError::Sqlite`].
pub(crate) fn store_index_seen(conn: &Connection, stamp: IndexStamp) -> Result<(), StoreError> {
    if index_seen(conn)? == Some(stamp) {
        return Ok(());
    }
    let tx = rusqlite::Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
    set_meta(
        &tx,
        INDEX_SEEN,
        &format!("{} {} {}", stamp.0, stamp.1, stamp.2),
    )?;
    tx.commit()?;
    Ok(())
}

/// The `schema_meta` key of the export mark.
pub const EXPORT_MARK: &str = "log.exported_seq";

/// The `schema_meta` key prefix of the per-file watermarks.
pub const WATERMARK_PREFIX: &str = "log.wm.";

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

pub(crate) fn load_watermarks(
    conn: &Connection,
) -> Result<HashMap<String, (i128, u64)>, StoreError> {
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

pub(crate) fn set_meta(conn: &Connection, key: &str, value: &str) -> Result<(), StoreError> {
    conn.prepare_cached(
        "INSERT INTO schema_meta(key, value) VALUES (?1, ?2)
         ON CONFLICT(key) DO UPDATE SET value = excluded.value",
    )?
    .execute(params![key, value])?;
    Ok(())
}

impl Drop for Store {
    /// Stores the watermarks of this process's own appends, so the next
    /// open does not re-read the files it wrote (best effort: a failure
    /// only costs that re-read).
    fn drop(&mut self) {
        let _ = self.flush_watermarks();
    }
}

impl Store {
    /// Records this process's own appends as seen: a file whose stamp
    /// before the append equals its known watermark (or was empty) held
    /// nothing unread, so its stamp after the append becomes the watermark
    /// (kept pending until [`Store::flush_watermarks`]). Any other file is
    /// left for the next scan to read.
    pub(crate) fn note_own_appends(&self, files: &[Appended]) {
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
}
