//! WAL checkpoints off the write path (issue 23; docs/store.md "SQLite
//! settings"). SQLite's automatic checkpoint runs inside the COMMIT of the
//! write that takes the WAL past 1000 pages: that write copies the WAL into
//! the database and syncs both before it returns (the 13–38 ms p99 of a
//! live `observe`). The store's read-write connection instead hands the
//! checkpoint to one background thread with its own connection: the commit
//! hook ([`rusqlite::Connection::wal_hook`], which replaces the automatic
//! checkpoint) only wakes it. The thread is started on the first wake (a
//! short CLI call never starts one) and runs `PRAGMA wal_checkpoint(PASSIVE)`,
//! which never waits for readers or writers; it is stopped and joined when
//! the store is dropped, before the read-write connection closes (the last
//! connection still checkpoints the WAL and removes it).
//!
//! A PASSIVE checkpoint copies the WAL but cannot start it over: SQLite
//! rewinds the WAL only when a write begins while every frame is already
//! copied, and under a steady stream of writes the thread always finishes
//! behind the latest commit (measured: the WAL of a tight claim loop grew
//! past 6,000 pages and every commit woke the thread, ~1 checkpoint and 2
//! `fsync`s per 4 writes). So the hook finishes the job itself once the WAL
//! holds [`FINISH_AT_PAGES`], the thread is idle and at most
//! [`FINISH_PAGES`] frames remain uncopied (a PASSIVE checkpoint on the
//! writer's own connection, after its commit: those few frames and the
//! syncs); the next write then starts the WAL over. Errors of that inline
//! checkpoint are ignored (the commit has happened; a later commit tries
//! again).
//!
//! The thread is asked for one round per [`CHECKPOINT_PAGES`] of WAL
//! growth (at 1,000, 2,000, 3,000 and 4,000 pages), not at every commit
//! past the trigger: each round syncs the WAL and the database, and rounds
//! back to back only compete with the writer for the disk. The writer's
//! finish comes once per [`FINISH_AT_PAGES`] of WAL (about one `observe`
//! in 260), where finishing at the first round's end made one write in
//! ~60 pay two syncs: the p99 of a live `observe` (issue 23's ≤ 5 ms).
//!
//! When the thread cannot catch up (its rounds starved of CPU, so every
//! round ends more than [`FINISH_PAGES`] behind), the WAL passes
//! [`BACKSTOP_PAGES`] and the writer checkpoints inline once the thread is
//! idle, then again only after another [`CHECKPOINT_PAGES`] of growth:
//! SQLite's own rate. A backstop on EVERY commit past that size was
//! measured and taken out: with 8 connections writing at once the WAL
//! rarely starts over (some connection is always reading it), so every
//! commit checkpointed (8 writers at 100k tasks: p99 68 → 831 ms).
//!
//! Durability is unchanged: with `synchronous=NORMAL` a commit is durable
//! against a crash of the process when its frames are in the WAL, and
//! against a power cut once the WAL is synced, which SQLite does at a
//! checkpoint: a round every 1000 pages of WAL, SQLite's own trigger.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

use rusqlite::{Connection, OpenFlags};

use super::error::StoreError;

/// WAL pages after a commit that ask for a checkpoint (SQLite's default
/// `wal_autocheckpoint`).
pub const CHECKPOINT_PAGES: i32 = 1000;

/// Uncopied WAL frames the committing writer copies itself (with the
/// syncs) so that the next write starts the WAL over (module doc).
pub const FINISH_PAGES: i32 = 128;

/// WAL pages from which the committing writer finishes what the thread's
/// last round left (module doc): the WAL starts over about once per this
/// many pages.
pub const FINISH_AT_PAGES: i32 = 4 * CHECKPOINT_PAGES;

/// WAL pages past which the committing writer checkpoints itself when the
/// thread is idle, whatever remains uncopied, at most once per
/// [`CHECKPOINT_PAGES`] of growth (module doc: the bound when the thread
/// cannot catch up).
pub const BACKSTOP_PAGES: i32 = 6 * CHECKPOINT_PAGES;

#[derive(Debug, Default)]
struct State {
    wanted: bool,
    stop: bool,
    /// The thread could not open its connection: checkpoint inline.
    failed: bool,
    worker: Option<JoinHandle<()>>,
}

#[derive(Debug, Default)]
struct Shared {
    state: Mutex<State>,
    wake: Condvar,
    /// Checkpoints the thread has run.
    done: AtomicU64,
    /// Frames the last checkpoint left copied (0 once the WAL started over).
    backfilled: AtomicI64,
    /// The thread is inside a checkpoint.
    running: AtomicBool,
    /// The WAL's size in pages when the writer last ran the backstop (0
    /// once the WAL started over).
    backstop_at: AtomicI64,
    /// The WAL's size in pages when the thread was last asked for a round
    /// (0 once the WAL started over).
    round_at: AtomicI64,
}

/// The background checkpointer of one store's read-write connection
/// (module doc). Dropping it stops and joins the thread.
#[derive(Debug)]
pub(crate) struct Checkpointer {
    shared: Arc<Shared>,
}

impl Checkpointer {
    /// Installs the commit hook on `conn` (the read-write connection of the
    /// database at `path`). Errors: [`StoreError::Sqlite`].
    pub(crate) fn install(conn: &mut Connection, path: &Path) -> Result<Checkpointer, StoreError> {
        let shared = Arc::new(Shared::default());
        let hook = shared.clone();
        let path = path.to_path_buf();
        conn.wal_hook(Some(move |wal: &mut rusqlite::hooks::Wal, pages| {
            if pages < CHECKPOINT_PAGES {
                // The WAL started over (or is young): nothing is copied.
                hook.backfilled.store(0, Ordering::Relaxed);
                hook.backstop_at.store(0, Ordering::Relaxed);
                hook.round_at.store(0, Ordering::Relaxed);
                return Ok(());
            }
            let copied = hook.backfilled.load(Ordering::Relaxed);
            let behind = if copied > i64::from(pages) {
                i64::from(pages)
            } else {
                i64::from(pages) - copied
            };
            let idle = !hook.running.load(Ordering::Acquire);
            let finish = idle && pages >= FINISH_AT_PAGES && behind <= i64::from(FINISH_PAGES);
            let backstop = idle
                && pages >= BACKSTOP_PAGES
                && i64::from(pages)
                    >= hook.backstop_at.load(Ordering::Relaxed) + i64::from(CHECKPOINT_PAGES);
            if backstop {
                hook.backstop_at.store(i64::from(pages), Ordering::Relaxed);
            }
            // One round per CHECKPOINT_PAGES of growth (module doc).
            let round_due = idle
                && i64::from(pages)
                    >= hook.round_at.load(Ordering::Relaxed) + i64::from(CHECKPOINT_PAGES);
            if round_due && !finish && !backstop {
                hook.round_at.store(i64::from(pages), Ordering::Relaxed);
            }
            if finish || backstop || (round_due && !hook.request(&path)) {
                // Inline (module doc); its errors leave the commit standing.
                if let Ok((_, copied)) = wal.checkpoint_v2(rusqlite::wal::CheckpointMode::PASSIVE) {
                    hook.backfilled.store(i64::from(copied), Ordering::Relaxed);
                }
            }
            Ok(())
        }))?;
        Ok(Checkpointer { shared })
    }

    /// How many checkpoints the background thread has run.
    pub(crate) fn done(&self) -> u64 {
        self.shared.done.load(Ordering::Relaxed)
    }
}

impl Shared {
    /// Wakes the thread (starting it the first time). False when there is
    /// no thread to wake.
    fn request(self: &Arc<Self>, path: &Path) -> bool {
        let Ok(mut st) = self.state.lock() else {
            return false;
        };
        if st.stop || st.failed {
            return false;
        }
        if st.worker.is_none() {
            let me = self.clone();
            let path: PathBuf = path.to_path_buf();
            st.worker = std::thread::Builder::new()
                .name("cairn-checkpoint".to_string())
                .spawn(move || me.run(&path))
                .ok();
            if st.worker.is_none() {
                return false;
            }
        }
        st.wanted = true;
        self.wake.notify_one();
        true
    }

    fn run(&self, path: &Path) {
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        );
        let Ok(conn) = conn else {
            if let Ok(mut st) = self.state.lock() {
                st.failed = true;
            }
            return;
        };
        loop {
            {
                let Ok(mut st) = self.state.lock() else {
                    return;
                };
                while !st.wanted && !st.stop {
                    st = match self.wake.wait(st) {
                        Ok(st) => st,
                        Err(_) => return,
                    };
                }
                if st.stop {
                    return;
                }
                st.wanted = false;
            }
            // PASSIVE: copies what it can without waiting for anyone; a
            // frame a reader still needs is copied by a later round.
            self.running.store(true, Ordering::Release);
            let copied =
                conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| r.get::<_, i64>(2));
            if let Ok(copied) = copied {
                self.backfilled.store(copied.max(0), Ordering::Relaxed);
                self.done.fetch_add(1, Ordering::Relaxed);
            }
            self.running.store(false, Ordering::Release);
        }
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        let worker = match self.shared.state.lock() {
            Ok(mut st) => {
                st.stop = true;
                st.worker.take()
            }
            Err(_) => None,
        };
        self.shared.wake.notify_all();
        if let Some(w) = worker {
            let _ = w.join();
        }
    }
}
