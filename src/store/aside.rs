//! The aside copies `verify` and `rebuild` re-fold on (docs/store.md
//! "Verify and rebuild without locking writers out"): `<db>.aside-PID-N`
//! beside the database, and their cleanup (issue 19, item 6).
//!
//! A copy is removed when its [`Aside`] is dropped (success, error, panic
//! unwinding). An interrupted process cannot drop it, so two more paths:
//!
//! - **On a signal** (SIGINT, SIGTERM, SIGHUP) whose disposition was the
//!   default (terminate) when the first copy was made, a handler unlinks
//!   every live copy of the process and its `-journal`/`-wal`/`-shm`
//!   siblings (`unlink` is async-signal-safe; the paths are prepared
//!   beforehand), restores the default disposition and re-raises the
//!   signal, so the process still dies of it. A disposition someone else
//!   set (a server's graceful shutdown, `nohup`'s ignore) is left alone:
//!   that process keeps running and its drop removes the copy.
//! - **On the next run** (SIGKILL, a power cut): [`sweep_stale`], called
//!   before every new copy, removes each `<db>.aside-PID-N` (and its
//!   siblings) whose PID is not a live process (`kill(PID, 0)` fails with
//!   `ESRCH`).

use std::ffi::{CString, c_char, c_int};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::ptr::null_mut;
use std::sync::Once;
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

use rusqlite::{Connection, params};

use super::error::StoreError;

/// The test hook (environment variable): when set, `verify` and `rebuild`
/// pause for a minute right after their aside copy is made, after printing
/// `cairn-test: aside` on stderr, so a test can signal them there.
pub const PAUSE_IN_ASIDE: &str = "CAIRN_TEST_PAUSE_IN_ASIDE";

/// The memory map a whole-store read sets up (`PRAGMA mmap_size`, bytes;
/// SQLite caps it at its compile-time maximum, 2 GiB): a rebuild reads
/// every event and every aside row once, and page reads through `read(2)`
/// cost a system call and a copy each.
pub(crate) const MMAP_SIZE: i64 = 1 << 31;

/// The suffixes of an aside copy's files: the copy and SQLite's siblings.
const SUFFIXES: [&str; 4] = ["", "-journal", "-wal", "-shm"];

/// The signals whose default action would leak a copy.
const SIGNALS: [c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// How many copies of one process the signal handler knows at once (more
/// are still removed on drop and by the next run's sweep).
const SLOTS: usize = 16;

/// The live copies' paths (NUL-terminated, leaked so the handler never
/// reads freed memory); null for a free slot.
static LIVE: [AtomicPtr<c_char>; SLOTS] = [const { AtomicPtr::new(null_mut()) }; SLOTS];

/// A scratch copy of the store beside it (`<db>.aside-<pid>-<n>`, matched
/// by the `cairn.db*` ignore rule), removed when dropped or, the process
/// dying of a signal, by the handler (module docs).
pub(crate) struct Aside {
    /// The copy's path.
    pub(crate) path: PathBuf,
    /// Its slot in [`LIVE`], when it got one.
    slot: Option<usize>,
}

impl Aside {
    /// Removes stale copies ([`sweep_stale`]), then copies a consistent
    /// snapshot of the database at `db` into a new aside file with
    /// `VACUUM INTO` on a fresh connection: SQLite runs it as one read
    /// transaction (no write lock on `db`); writers carry on meanwhile.
    /// Errors: [`StoreError::Sqlite`] (the copy is removed again).
    pub(crate) fn snapshot(db: &Path) -> Result<Aside, StoreError> {
        let aside = Aside::empty(db);
        let target = aside.path.to_string_lossy().into_owned();
        let conn = Connection::open(db)?;
        conn.busy_timeout(super::schema::BUSY_TIMEOUT)?;
        conn.execute("VACUUM INTO ?1", params![target])?;
        drop(conn);
        pause_for_tests();
        Ok(aside)
    }

    /// Removes stale copies ([`sweep_stale`]) and names a new aside file
    /// beside the database at `db`, removed like a snapshot's (drop,
    /// signal, next run), with nothing in it yet: where a fresh clone's
    /// database is built before it is linked into place (issue 23).
    pub(crate) fn empty(db: &Path) -> Aside {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        for removed in sweep_stale(db) {
            eprintln!(
                "cairn: removed a copy left by an interrupted verify or rebuild: {}",
                removed.display()
            );
        }
        let mut name = db.file_name().unwrap_or_default().to_os_string();
        name.push(format!(
            ".aside-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let path = db.with_file_name(name);
        install_handlers();
        let aside = Aside {
            slot: register(&path),
            path,
        };
        aside.remove();
        aside
    }

    /// [`Aside::empty`] made into a database with `conn`'s schema of the
    /// projection (`rebuild`, issue 23: the events stay in the live store,
    /// read in one read transaction, and only the projection is written
    /// here): returns the copy and a connection to it ([`Aside::open`]).
    /// `copy_schema` creates the tables on the new connection. Errors:
    /// [`StoreError::Sqlite`] (the copy is removed again).
    pub(crate) fn for_projection(
        db: &Path,
        copy_schema: impl FnOnce(&Connection) -> Result<(), StoreError>,
    ) -> Result<(Aside, Connection), StoreError> {
        let aside = Aside::empty(db);
        let conn = aside.open()?;
        copy_schema(&conn)?;
        pause_for_tests();
        Ok((aside, conn))
    }

    /// A connection to the copy, tuned for scratch work: nothing durable
    /// (`synchronous=OFF`, an in-memory journal), reads through a memory
    /// map ([`MMAP_SIZE`]), and foreign keys off — a whole refold never
    /// deletes a task (no foreign-key action can fire) and writes only
    /// rows whose tasks it wrote (`bulk.rs`), so the checks would only
    /// cost a lookup per row; the live store keeps them.
    /// Errors: [`StoreError::Sqlite`].
    pub(crate) fn open(&self) -> Result<Connection, StoreError> {
        let conn = Connection::open(&self.path)?;
        conn.pragma_update(None, "synchronous", "OFF")?;
        let _: String = conn.query_row("PRAGMA journal_mode=MEMORY", [], |r| r.get(0))?;
        conn.pragma_update(None, "foreign_keys", "OFF")?;
        conn.execute_batch(&format!("PRAGMA mmap_size={MMAP_SIZE}"))?;
        Ok(conn)
    }

    /// Removes the copy and its siblings (best effort).
    fn remove(&self) {
        for suffix in SUFFIXES {
            let mut p = self.path.clone().into_os_string();
            p.push(suffix);
            let _ = std::fs::remove_file(p);
        }
    }
}

/// The [`PAUSE_IN_ASIDE`] hook: a minute's pause once the aside file exists.
fn pause_for_tests() {
    if std::env::var_os(PAUSE_IN_ASIDE).is_some() {
        eprintln!("cairn-test: aside");
        std::thread::sleep(std::time::Duration::from_secs(60));
    }
}

impl Drop for Aside {
    /// Forgets the copy in the handler's table, then removes its files.
    fn drop(&mut self) {
        if let Some(i) = self.slot {
            // The path stays leaked: a handler running on another thread
            // may still be reading it.
            LIVE[i].store(null_mut(), Ordering::SeqCst);
        }
        self.remove();
    }
}

/// Puts `path` in a free slot of [`LIVE`]; `None` when the path holds a
/// NUL byte or every slot is taken.
fn register(path: &Path) -> Option<usize> {
    let c = CString::new(path.as_os_str().as_bytes()).ok()?;
    let raw = c.into_raw();
    for (i, slot) in LIVE.iter().enumerate() {
        if slot
            .compare_exchange(null_mut(), raw, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            return Some(i);
        }
    }
    // SAFETY: `raw` came from `CString::into_raw` above and was not stored.
    drop(unsafe { CString::from_raw(raw) });
    None
}

/// Installs [`on_signal`] (once per process) for each of [`SIGNALS`] whose
/// disposition is the default.
fn install_handlers() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        for sig in SIGNALS {
            // SAFETY: plain sigaction calls on zeroed structs; the handler
            // only calls async-signal-safe functions.
            unsafe {
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(sig, std::ptr::null(), &mut old) != 0
                    || old.sa_sigaction != libc::SIG_DFL
                {
                    continue;
                }
                let mut new: libc::sigaction = std::mem::zeroed();
                new.sa_sigaction = on_signal as extern "C" fn(c_int) as libc::sighandler_t;
                libc::sigemptyset(&mut new.sa_mask);
                new.sa_flags = libc::SA_RESTART;
                libc::sigaction(sig, &new, std::ptr::null_mut());
            }
        }
    });
}

/// The handler: unlinks every live copy's files, then dies of `sig` as the
/// default disposition would.
extern "C" fn on_signal(sig: c_int) {
    for slot in &LIVE {
        let p = slot.load(Ordering::SeqCst);
        if !p.is_null() {
            unlink_family(p);
        }
    }
    // SAFETY: async-signal-safe calls; `sig` is blocked while the handler
    // runs, so the re-raised signal is delivered (default: terminate) when
    // it returns.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}

/// Unlinks `base` and `base` + each of [`SUFFIXES`], building the names in
/// a stack buffer (no allocation: this runs in a signal handler).
fn unlink_family(base: *const c_char) {
    let mut buf = [0u8; 4200];
    // SAFETY: `base` is a leaked, NUL-terminated CString (see `register`).
    let len = unsafe { libc::strlen(base) };
    if len + 16 > buf.len() {
        // SAFETY: as above.
        unsafe { libc::unlink(base) };
        return;
    }
    // SAFETY: `len` bytes are readable at `base`, and `buf` holds them.
    unsafe { std::ptr::copy_nonoverlapping(base.cast::<u8>(), buf.as_mut_ptr(), len) };
    for suffix in SUFFIXES {
        let s = suffix.as_bytes();
        buf[len..len + s.len()].copy_from_slice(s);
        buf[len + s.len()] = 0;
        // SAFETY: `buf` is NUL-terminated at `len + s.len()`.
        unsafe { libc::unlink(buf.as_ptr().cast::<c_char>()) };
    }
}

/// The PID in an aside file's name: `<db name>.aside-PID-N` optionally
/// followed by one of [`SUFFIXES`]; `None` for any other name.
pub(crate) fn aside_pid(db_name: &str, file: &str) -> Option<u32> {
    let rest = file.strip_prefix(db_name)?.strip_prefix(".aside-")?;
    let (pid, rest) = rest.split_once('-')?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let suffix = &rest[digits..];
    let valid = !pid.is_empty()
        && pid.bytes().all(|b| b.is_ascii_digit())
        && digits > 0
        && SUFFIXES.contains(&suffix);
    if !valid {
        return None;
    }
    pid.parse().ok()
}

/// True unless `pid` names no process (`kill(pid, 0)` fails with `ESRCH`);
/// a PID out of range counts as alive (never swept).
fn alive(pid: u32) -> bool {
    let Ok(p) = libc::pid_t::try_from(pid) else {
        return true;
    };
    if p <= 0 {
        return true;
    }
    // SAFETY: signal 0 sends nothing; it only checks the PID.
    if unsafe { libc::kill(p, 0) } == 0 {
        return true;
    }
    std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// Removes every aside file beside the database at `db` (`<name>.aside-PID-N`
/// and its `-journal`/`-wal`/`-shm` siblings) whose PID is no live process
/// and is not this one. Returns the paths removed, sorted. Best effort: an
/// unreadable directory or a failed removal is skipped.
pub fn sweep_stale(db: &Path) -> Vec<PathBuf> {
    let Some(name) = db.file_name().and_then(|n| n.to_str()) else {
        return Vec::new();
    };
    let dir = db
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let me = std::process::id();
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let file = entry.file_name();
        let Some(pid) = file.to_str().and_then(|f| aside_pid(name, f)) else {
            continue;
        };
        if pid == me || alive(pid) {
            continue;
        }
        let path = entry.path();
        if std::fs::remove_file(&path).is_ok() {
            removed.push(path);
        }
    }
    removed.sort();
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aside_names_are_parsed_strictly() {
        assert_eq!(aside_pid("cairn.db", "cairn.db.aside-123-0"), Some(123));
        assert_eq!(
            aside_pid("cairn.db", "cairn.db.aside-123-17-wal"),
            Some(123)
        );
        assert_eq!(aside_pid("cairn.db", "cairn.db.aside-9-1-shm"), Some(9));
        assert_eq!(aside_pid("cairn.db", "cairn.db.aside-9-1-journal"), Some(9));
        assert_eq!(aside_pid("cairn.db", "cairn.db.aside-9-1-x"), None);
        assert_eq!(aside_pid("cairn.db", "cairn.db.aside-9-"), None);
        assert_eq!(aside_pid("cairn.db", "cairn.db.aside--1"), None);
        assert_eq!(aside_pid("cairn.db", "cairn.db.aside-x-1"), None);
        assert_eq!(aside_pid("cairn.db", "cairn.db-wal"), None);
        assert_eq!(aside_pid("cairn.db", "other.db.aside-1-1"), None);
    }

    #[test]
    fn only_dead_processes_copies_are_swept() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = dir.path().join("cairn.db");
        let mut child = std::process::Command::new("true").spawn().expect("spawn");
        let dead = child.id();
        child.wait().expect("wait");
        let me = std::process::id();
        for f in [
            format!("cairn.db.aside-{dead}-0"),
            format!("cairn.db.aside-{dead}-0-wal"),
            format!("cairn.db.aside-{me}-5"),
            "cairn.db.aside-1-0".to_string(),
            "notes.txt".to_string(),
        ] {
            std::fs::write(dir.path().join(f), "x").expect("write");
        }
        let removed = sweep_stale(&db);
        assert_eq!(
            removed,
            [
                dir.path().join(format!("cairn.db.aside-{dead}-0")),
                dir.path().join(format!("cairn.db.aside-{dead}-0-wal")),
            ]
        );
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .expect("read_dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(
            left,
            [
                "cairn.db.aside-1-0".to_string(),
                format!("cairn.db.aside-{me}-5"),
                "notes.txt".to_string()
            ]
        );
    }
}
