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
//! Durability is unchanged: with `synchronous=NORMAL` a commit is durable
//! against a crash of the process when its frames are in the WAL, and
//! against a power cut once the WAL is synced, which SQLite does at a
//! checkpoint, on the same 1000-page trigger as before.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

use rusqlite::{Connection, OpenFlags};

use super::error::StoreError;

/// WAL pages after a commit that ask for a checkpoint (SQLite's default
/// `wal_autocheckpoint`).
pub const CHECKPOINT_PAGES: i32 = 1000;

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
            if pages >= CHECKPOINT_PAGES && !hook.request(&path) {
                // No thread (it could not be started): as SQLite would.
                wal.checkpoint()?;
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
            if conn
                .query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))
                .is_ok()
            {
                self.done.fetch_add(1, Ordering::Relaxed);
            }
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
