//! WAL checkpoints off the write path (issue 23; docs/store.md "SQLite
//! settings"): the write that takes the WAL past 1000 pages only wakes the
//! store's background checkpointer; dropping the store joins it first, so
//! the read-write connection is still the last one and removes the WAL.
//! Also the open's one-probe "any event?" (`Store::has_events`).

use std::time::{Duration, Instant};

use cairn::store::{NewEvent, Store};

/// A store at `dir/.cairn/cairn.db` holding one task `slug`; its path.
fn store_with_task(dir: &tempfile::TempDir, slug: &str) -> (Store, std::path::PathBuf) {
    let db = dir.path().join(".cairn").join("cairn.db");
    let store = Store::open(&db).unwrap();
    store
        .write(&[NewEvent::task_create("s", 1_790_000_000, slug, None, None)])
        .unwrap();
    (store, db)
}

/// Writes observation number `n` (`text` after it) on `slug`.
fn observe(store: &Store, slug: &str, n: i64, text: &str) {
    store
        .write(&[NewEvent::observation(
            "s",
            1_790_000_000 + n,
            slug,
            &format!("{n} {text}"),
        )])
        .unwrap();
}

#[test]
fn checkpoints_run_in_the_background_and_the_wal_is_gone_after_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let slug = "2026-12-01-checkpoint-target";
    let (store, db) = store_with_task(&dir, slug);
    assert_eq!(store.background_checkpoints(), 0);
    let text = "a longer observation about the write path ".repeat(40);
    let mut n = 0i64;
    let deadline = Instant::now() + Duration::from_secs(60);
    while store.background_checkpoints() == 0 && Instant::now() < deadline {
        n += 1;
        observe(&store, slug, n, &text);
        if n > 3000 {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    assert!(
        store.background_checkpoints() > 0,
        "no checkpoint after {n} writes"
    );
    let wal = dir.path().join(".cairn").join("cairn.db-wal");
    assert!(wal.exists());
    drop(store);
    assert!(!wal.exists(), "the last connection removes the WAL");
    let store = Store::open(&db).unwrap();
    assert_eq!(store.event_count().unwrap(), n + 1);
}

/// A steady stream of writes keeps the WAL bounded: the writer finishes
/// what the background round left, so
/// the next write starts the WAL over. Before, a PASSIVE round always ended
/// behind the latest commit, the WAL never started over (3,000 writes here
/// left ~50,000 pages) and every commit woke the thread.
#[test]
fn a_burst_of_writes_keeps_the_wal_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let slug = "2026-12-02-burst-target";
    let (store, db) = store_with_task(&dir, slug);
    let text = "an observation in a burst of writes ".repeat(8);
    let writes = 3000i64;
    for n in 1..=writes {
        observe(&store, slug, n, &text);
    }
    let wal = dir.path().join(".cairn").join("cairn.db-wal");
    let pages = std::fs::metadata(&wal).unwrap().len() / 4096;
    let bound = u64::try_from(cairn::store::checkpoint::BACKSTOP_PAGES).unwrap() + 2000;
    assert!(
        pages <= bound,
        "the WAL holds {pages} pages after {writes} writes (bound {bound})"
    );
    assert!(store.background_checkpoints() > 0);
    drop(store);
    let store = Store::open(&db).unwrap();
    assert_eq!(store.event_count().unwrap(), writes + 1);
}

#[test]
fn a_short_session_starts_no_checkpointer() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join(".cairn").join("cairn.db")).unwrap();
    store
        .write(&[NewEvent::task_create(
            "s",
            1_790_000_000,
            "2026-12-01-short-session",
            None,
            None,
        )])
        .unwrap();
    assert_eq!(store.background_checkpoints(), 0);
}

/// Issue 23: a read command's open asks "any event?" with one probe
/// (`has_events`) where it counted every event.
#[test]
fn has_events_is_false_only_for_an_empty_log() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join(".cairn").join("cairn.db")).unwrap();
    assert!(!store.has_events().unwrap());
    store
        .write(&[NewEvent::task_create(
            "s",
            1_790_000_000,
            "2026-12-01-any-event-here",
            None,
            None,
        )])
        .unwrap();
    assert!(store.has_events().unwrap());
    assert_eq!(store.event_count().unwrap(), 1);
}
