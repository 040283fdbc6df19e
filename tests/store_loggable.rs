//! Issue 19, item 1: every acknowledged event is representable in the logs.
//! A name whose folder would pass 255 bytes, a note of 999,000 `é`, and the
//! largest note a tool accepts are logged, verified and survive
//! `rebuild --from-logs`; a write whose line could not be read back is
//! refused before it is acknowledged; and a rebuild never drops an event
//! the database holds and the logs lack.

use std::path::{Path, PathBuf};

use cairn::store::log::{MAX_DIR_NAME_BYTES, MAX_LINE_BYTES};
use cairn::store::{NewEvent, Store, StoreError};

mod common;
use common::cairn_in;

/// A project folder with `.git/` and an opened store at `.cairn/cairn.db`.
fn project() -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(t.path().join(".git")).unwrap();
    std::fs::create_dir_all(t.path().join(".cairn")).unwrap();
    let db = t.path().join(".cairn").join("cairn.db");
    (t, db)
}

/// A project whose store holds one task, `slug`: (its folder, the store).
fn with_task(slug: &str) -> (tempfile::TempDir, Store) {
    let (t, db) = project();
    let store = Store::open(&db).unwrap();
    store
        .write(&[NewEvent::task_create("s1", 1, slug, None, None)])
        .unwrap();
    (t, store)
}

/// A project whose store holds task `slug` and one acknowledged note:
/// (its folder, the store, the task's log, the log's two lines).
fn with_note(slug: &str) -> (tempfile::TempDir, Store, PathBuf, [String; 2]) {
    let (t, db) = project();
    let store = Store::open(&db).unwrap();
    store
        .write(&[
            NewEvent::task_create("s1", 1, slug, None, None),
            NewEvent::observation("s1", 2, slug, "the acknowledged text"),
        ])
        .unwrap();
    let log = t
        .path()
        .join(".cairn/tasks")
        .join(slug)
        .join("events.ndjson");
    let text = std::fs::read_to_string(&log).unwrap();
    let mut lines = text.lines().map(str::to_string);
    let first = lines.next().unwrap();
    let real = lines.next().unwrap();
    (t, store, log, [first, real])
}

/// Both directions of `verify` hold with no malformed line, and
/// `rebuild --from-logs` keeps all `events`.
fn assert_round_trip(store: &Store, events: i64) {
    let check = store.check_logs().unwrap().unwrap();
    assert!(check.ok(), "{check:?}");
    assert!(check.malformed.is_empty(), "{:?}", check.malformed);
    let report = store.rebuild_from_logs().unwrap().unwrap();
    assert_eq!(report.malformed, 0);
    assert_eq!(store.event_count().unwrap(), events);
}

/// The names of the folders under `.cairn/tasks`, sorted.
fn folders(root: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(root.join(".cairn/tasks"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn a_long_non_ascii_name_is_logged_verified_and_rebuilt() {
    let (t, _db) = project();
    let root = t.path();
    let (out, err, code) = cairn_in(root, &["add", "short plan task"]);
    assert_eq!(code, 0, "{out}{err}");
    let (out, err, code) = cairn_in(
        root,
        &[
            "add",
            "Переосмыслить архитектуру распределённого планировщика",
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        !err.contains("could not append"),
        "the append failed after the acknowledgement: {err}"
    );
    let names = folders(root);
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(
        names.iter().all(|n| n.len() <= MAX_DIR_NAME_BYTES),
        "{names:?}"
    );
    let (out, err, code) = cairn_in(root, &["verify"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("logs: ok"), "{out}");
    let (out, err, code) = cairn_in(root, &["rebuild", "--from-logs"]);
    assert_eq!(code, 0, "{out}{err}");
    let (out, _, _) = cairn_in(root, &["query", "(-> (all) (:count))"]);
    assert_eq!(out.trim(), "2");
}

#[test]
fn the_largest_notes_are_logged_and_read_back() {
    let slug = "2026-12-01-big-notes";
    let (_t, store) = with_task(slug);
    // 999,000 × é: ~2 MB of UTF-8, over the old 1 MiB read cap.
    let e_acute = "é".repeat(999_000);
    // 1,000,000 control characters (the tools' text limit), each escaped
    // as \u0001: 6,000,000 bytes, the worst a tool can send.
    let controls = "\u{1}".repeat(1_000_000);
    store
        .write(&[NewEvent::observation("s1", 2, slug, &e_acute)])
        .unwrap();
    store
        .write(&[NewEvent::observation("s1", 3, slug, &controls)])
        .unwrap();
    assert_eq!(store.event_count().unwrap(), 3);
    assert_eq!(store.check_logs().unwrap().unwrap().lines, 3);
    assert_round_trip(&store, 3);
}

#[test]
fn a_line_that_could_not_be_read_back_is_refused_before_it_is_recorded() {
    let slug = "2026-12-01-too-big";
    let (_t, store) = with_task(slug);
    // 1,500,000 control characters escape to 9,000,000 bytes: over 8 MiB.
    let huge = "\u{1}".repeat(1_500_000);
    let err = store
        .write(&[
            NewEvent::observation("s1", 2, slug, "a small note in the same batch"),
            NewEvent::observation("s1", 3, slug, &huge),
        ])
        .unwrap_err();
    assert!(matches!(err, StoreError::TooLargeToLog(_)), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!(
            "Nothing was recorded: the observation event for {slug} would be a 9000239-byte log line, over the {} MiB limit of a log line; shorten the text.",
            MAX_LINE_BYTES >> 20
        )
    );
    // All or nothing: the small note of the same batch is not recorded.
    assert_eq!(store.event_count().unwrap(), 1);
    let check = store.check_logs().unwrap().unwrap();
    assert!(check.ok(), "{check:?}");
    assert_eq!(check.lines, 1);
}

#[test]
fn a_log_that_cannot_be_opened_refuses_the_write_before_it_is_recorded() {
    let (t, db) = project();
    let store = Store::open(&db).unwrap();
    let slug = "2026-12-01-linked-log";
    // A hostile clone committed the task's folder as a symlink.
    std::fs::create_dir_all(t.path().join(".cairn/tasks")).unwrap();
    std::os::unix::fs::symlink(t.path(), t.path().join(".cairn/tasks").join(slug)).unwrap();
    let err = store
        .write(&[NewEvent::task_create("s1", 1, slug, None, None)])
        .unwrap_err();
    assert!(err.to_string().contains("is a symlink"), "{err}");
    assert_eq!(store.event_count().unwrap(), 0);
}

#[test]
fn rebuild_from_logs_never_drops_an_event_the_logs_lack() {
    let (t, db) = project();
    let store = Store::open(&db).unwrap();
    let keep = "2026-12-01-kept-task";
    let lost = "2026-12-01-unlogged-task";
    store
        .write(&[
            NewEvent::task_create("s1", 1, keep, None, None),
            NewEvent::task_create("s1", 1, lost, None, None),
        ])
        .unwrap();
    // The second task's log is gone and its folder replaced by a symlink,
    // so the rebuild's export cannot put the event back.
    let folder = t.path().join(".cairn/tasks").join(lost);
    std::fs::remove_dir_all(&folder).unwrap();
    std::os::unix::fs::symlink(t.path(), &folder).unwrap();
    let err = store.rebuild_from_logs().unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "rebuild --from-logs changed nothing: 1 event(s) in the database are missing from the logs and could not be written there (the first for task {lost}); fix the log folder (see the lines above) and run it again."
        )
    );
    assert_eq!(store.event_count().unwrap(), 2);
    // Once the folder is fixed, the rebuild exports the event first and
    // keeps both tasks.
    std::fs::remove_file(&folder).unwrap();
    let report = store.rebuild_from_logs().unwrap().unwrap();
    assert_eq!(report.exported, 1);
    assert_eq!(store.event_count().unwrap(), 2);
}

#[test]
fn an_import_of_a_long_non_ascii_task_is_logged_and_survives_a_rebuild() {
    let (t, _db) = project();
    let root = t.path();
    // The original tool's store with one task whose slug encodes to ~360
    // bytes of folder name.
    let slug = "2026-12-01-переосмыслить-архитектуру-распределённого-планировщика";
    let kli = root.join("old/.kli/tasks/x");
    std::fs::create_dir_all(&kli).unwrap();
    let line = serde_json::json!({
        "data": {"description": "long name"}, "event_id": "01H00000000000000000000001",
        "event_key": "0123abcd", "prev_session_id": null, "session_id": "S1",
        "task_id": slug, "ts": 3_900_000_000i64, "type": "task.create"
    });
    std::fs::write(kli.join("events.ndjson"), format!("{line}\n")).unwrap();
    let (out, err, code) = cairn_in(root, &["import", root.join("old").to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        out.trim_end(),
        "Imported 1 events for 1 tasks; 0 lines skipped."
    );
    assert!(!err.contains("could not append"), "{err}");
    let (out, err, code) = cairn_in(root, &["verify"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("logs: ok"), "{out}");
    let (out, err, code) = cairn_in(root, &["rebuild", "--from-logs"]);
    assert_eq!(code, 0, "{out}{err}");
    let (out, _, _) = cairn_in(root, &["query", "(-> (all) (:select :slug))"]);
    assert_eq!(out, format!("1 task:\n- {slug}  slug={slug}\n"));
}

/// Hostile run H1: a log grown past the old 256 MiB read cap (writers
/// committed but not yet appended, or a union merge of two clones' logs)
/// is still read back: the read cap (1 GiB) leaves 800 MiB above the write
/// cap (224 MiB). Here 300 MiB of blank lines (spaces, which the reader
/// skips) stand for the other writers' lines.
#[test]
fn a_log_past_the_write_cap_is_still_read_back() {
    let slug = "2026-12-01-grown-log";
    let (t, store) = with_task(slug);
    let log = t
        .path()
        .join(".cairn/tasks")
        .join(slug)
        .join("events.ndjson");
    {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
        let mut blank = vec![b' '; (6 << 20) - 1];
        blank.push(b'\n');
        for _ in 0..50 {
            f.write_all(&blank).unwrap();
        }
    }
    assert!(std::fs::metadata(&log).unwrap().len() > 300 << 20);
    assert_round_trip(&store, 1);
}

/// Hostile run M3: a forged line reusing an acknowledged event's id with
/// other content (placed before the real line) never replaces it: reconcile
/// and `rebuild --from-logs` skip and name it, `verify` lists it as
/// malformed instead of failing.
#[test]
fn a_forged_line_with_a_taken_event_id_never_replaces_the_event() {
    let (_t, store, log, [first, real]) = with_note("2026-12-01-forged-target");
    let mut forged = cairn::store::log::LogLine::parse(&real).unwrap().line;
    forged.data = cairn::store::event::canonical_json(&serde_json::json!({"text": "forged text"}));
    forged.event_key = cairn::store::event::event_key(
        &forged.task_id,
        &forged.event_type,
        forged.ts,
        &forged.session_id,
        &forged.data,
    );
    std::fs::write(&log, format!("{first}\n{}{real}\n", forged.encode())).unwrap();
    let check = store.check_logs().unwrap().unwrap();
    assert!(check.ok(), "{check:?}");
    assert_eq!(check.malformed.len(), 1, "{:?}", check.malformed);
    assert_eq!(check.malformed[0].line, 2);
    assert!(
        check.malformed[0]
            .reason
            .ends_with("the database holds a different event under that id"),
        "{:?}",
        check.malformed
    );
    let report = store.rebuild_from_logs().unwrap().unwrap();
    assert_eq!(report.malformed, 1);
    assert_eq!(store.event_count().unwrap(), 2);
    let texts: Vec<String> = store
        .events()
        .unwrap()
        .iter()
        .filter_map(|e| {
            e.data
                .get("text")
                .and_then(|v| v.as_str())
                .map(str::to_string)
        })
        .collect();
    assert_eq!(texts, ["the acknowledged text"]);
}

/// A copy of an acknowledged line under a new event id (its key still
/// checks out: the id is not part of it), placed before the real line:
/// `rebuild --from-logs` keeps the database's id and names the copy.
#[test]
fn a_copied_line_under_a_new_id_never_renames_the_event() {
    let (_t, store, log, [first, real]) = with_note("2026-12-01-copied-target");
    let ids = |store: &Store| -> Vec<String> {
        store
            .events()
            .unwrap()
            .iter()
            .map(|e| e.event_id.clone())
            .collect()
    };
    let before = ids(&store);
    let mut copy = cairn::store::log::LogLine::parse(&real).unwrap().line;
    copy.event_id = "01ZZZZZZZZZZZZZZZZZZZZZZZZ".to_string();
    std::fs::write(&log, format!("{first}\n{}{real}\n", copy.encode())).unwrap();
    let report = store.rebuild_from_logs().unwrap().unwrap();
    assert_eq!(report.malformed, 1);
    assert_eq!(ids(&store), before);
    assert!(store.verify().unwrap().ok);
}

/// Hostile run L3: a handoff note of a task with a long non-ASCII name goes
/// to its bounded log folder (before: the raw slug as a folder name, `File
/// name too long`, nothing recorded).
#[test]
fn a_handoff_of_a_long_non_ascii_task_is_written() {
    let (t, _db) = project();
    let root = t.path();
    let (out, err, code) = cairn_in(
        root,
        &[
            "add",
            "Переосмыслить архитектуру распределённого планировщика",
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    let slug = out
        .trim_end()
        .strip_prefix("Created ")
        .and_then(|s| s.strip_suffix('.'))
        .unwrap()
        .to_string();
    let (out, err, code) = cairn_in(
        root,
        &[
            "call",
            "handoff",
            &serde_json::json!({"task_id": slug, "summary": "state of the rework"}).to_string(),
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    let folder = cairn::store::log::dir_name(&slug);
    assert!(folder.len() <= MAX_DIR_NAME_BYTES);
    let canon = root.canonicalize().unwrap();
    let lead = format!(
        "Handoff scaffolded for {slug} at {}/.cairn/tasks/{folder}/",
        canon.display()
    );
    assert!(out.starts_with(&lead), "{out}");
    let path = out
        .trim_end()
        .strip_prefix(&format!("Handoff scaffolded for {slug} at "))
        .unwrap();
    assert!(std::path::Path::new(path).is_file(), "{path}");
}

/// Hostile run L3: `--db` naming another program's SQLite database is
/// refused with a sentence; cairn adds no table to it.
#[test]
fn another_programs_database_is_not_made_a_store() {
    let t = tempfile::tempdir().unwrap();
    let app = t.path().join("app.sqlite");
    {
        let c = rusqlite::Connection::open(&app).unwrap();
        c.execute_batch("CREATE TABLE invoices (id INTEGER PRIMARY KEY, amount REAL)")
            .unwrap();
    }
    let err = Store::open(&app).unwrap_err();
    assert_eq!(
        err.to_string(),
        "This database is not a cairn store (it holds another program's table \"invoices\" and no cairn schema); cairn adds nothing to it. Pass --db a new file or a cairn store."
    );
    let c = rusqlite::Connection::open(&app).unwrap();
    let tables: Vec<String> = c
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(tables, ["invoices"]);
    let mode: String = c
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "delete", "the journal mode is untouched");
}
