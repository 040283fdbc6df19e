//! Issue 23: a fresh clone's database is built from the task logs in an
//! aside file and linked into place when complete (docs/store.md
//! "Recovering a lost database"). What a user sees: the same answers as the
//! original, nothing extra on a piped stderr (progress is drawn only on a
//! terminal), and no scratch file left beside the database.

use std::path::Path;
use std::process::{Command, Output};

const CAIRN: &str = env!("CARGO_BIN_EXE_cairn");

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `cairn ARGS` in `dir` with the clock fixed, stderr piped.
fn cairn(dir: &Path, args: &[&str]) -> Output {
    Command::new(CAIRN)
        .args(args)
        .current_dir(dir)
        .env_remove("CAIRN_DB")
        .env("CAIRN_NOW", "1767225600")
        .env("CAIRN_AGENT", "t")
        .output()
        .unwrap()
}

fn ok(dir: &Path, args: &[&str]) -> String {
    let out = cairn(dir, args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "cairn {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The names in `.cairn/` that are not the committed files, the logs or
/// the database itself.
fn scratch(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(dir.join(".cairn"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".aside-") || n.contains("build-lock"))
        .collect();
    out.sort();
    out
}

#[test]
fn a_fresh_clone_answers_from_its_logs_quietly_and_leaves_no_scratch() {
    let t = tempfile::tempdir().unwrap();
    let origin = t.path().join("origin");
    std::fs::create_dir_all(&origin).unwrap();
    git(&origin, &["init", "-q", "-b", "main"]);
    ok(&origin, &["add", "tune search ranking"]);
    ok(
        &origin,
        &[
            "add",
            "tokenizer fix",
            "--under",
            "2026-01-01-tune-search-ranking",
        ],
    );
    ok(
        &origin,
        &[
            "note",
            "2026-01-01-tokenizer-fix",
            "splitting on - breaks file.rs:45-78 lookups",
        ],
    );
    ok(&origin, &["done", "2026-01-01-tokenizer-fix"]);
    git(&origin, &["add", ".cairn"]);
    git(&origin, &["commit", "-q", "-m", "plan"]);
    let ls = ok(&origin, &["ls", "--all"]);
    let before = ok(&origin, &["rebuild"]);
    assert!(before.starts_with("rebuild: re-folded "), "{before}");

    git(t.path(), &["clone", "-q", "origin", "clone"]);
    let clone = t.path().join("clone");
    assert!(!clone.join(".cairn/cairn.db").exists());
    // The first command builds the database: the same answer, and on a
    // pipe not one byte of progress.
    let out = cairn(&clone, &["ls", "--all"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), ls);
    assert_eq!(String::from_utf8(out.stderr).unwrap(), "");
    assert!(clone.join(".cairn/cairn.db").exists());
    assert_eq!(scratch(&clone), Vec::<String>::new());
    assert_eq!(
        ok(&clone, &["search", "lookups"]),
        ok(&origin, &["search", "lookups"])
    );
    // The built projection is the original's, and a faithful fold.
    assert_eq!(ok(&clone, &["rebuild"]), before);
    let verify = ok(&clone, &["verify"]);
    assert!(
        verify.starts_with("verify: ok — projection is a faithful fold of ")
            && verify.contains("\nlogs: ok — "),
        "{verify}"
    );
    assert_eq!(scratch(&clone), Vec::<String>::new());
}

#[test]
fn rebuild_and_rebuild_from_logs_print_the_digest_of_what_they_built() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    git(dir, &["init", "-q", "-b", "main"]);
    ok(dir, &["add", "tune search ranking"]);
    ok(
        dir,
        &[
            "note",
            "2026-01-01-tune-search-ranking",
            "first observation",
        ],
    );
    let digest = |line: &str| line.trim().rsplit(' ').next().unwrap().to_string();
    let a = digest(&ok(dir, &["rebuild"]));
    let b = digest(&ok(dir, &["rebuild", "--from-logs"]));
    let c = digest(&ok(dir, &["rebuild"]));
    assert_eq!(a.len(), 64);
    assert_eq!(a, b);
    assert_eq!(a, c);
    assert_eq!(scratch(dir), Vec::<String>::new());
}

/// The lines of every log under `tasks`, folders in name order, lines in
/// file order: `(event_key, event_id)`.
fn lines_in_order(tasks: &Path) -> Vec<(String, String)> {
    let mut folders: Vec<_> = std::fs::read_dir(tasks)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    folders.sort();
    let mut out = Vec::new();
    for f in folders {
        let text = std::fs::read_to_string(f.join("events.ndjson")).unwrap();
        for l in text.lines().filter(|l| !l.trim().is_empty()) {
            match cairn::store::log::LogLine::parse(l) {
                Ok(p) => out.push((p.line.event_key, p.line.event_id)),
                Err(_) => continue,
            }
        }
    }
    out
}

/// Issue 23: a build from many logs (more than one thread reads them, in
/// batches) inserts each file's lines as the threads deliver them, in the
/// files' order: the events table holds exactly the lines the old build
/// kept (the first of two equal lines, not a second event under a taken
/// id, no malformed line), in file order, its indexes are all there again,
/// and the projection is the original's.
#[test]
fn a_build_from_many_logs_keeps_the_files_order_and_the_checks() {
    use cairn::store::{EdgeType, NewEvent, Store};
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join(".cairn/cairn.db");
    let store = Store::open(&db).unwrap();
    let slug = |i: usize| format!("2026-01-01-t{i:04}");
    let mut events = Vec::new();
    for i in 0..400 {
        events.push(NewEvent::task_create(
            "s",
            10 + i as i64,
            &slug(i),
            Some("d"),
            None,
        ));
        events.push(NewEvent::observation(
            "s",
            5000 - i as i64,
            &slug(i),
            "note file.rs:4",
        ));
        if i > 0 {
            events.push(NewEvent::link(
                "s",
                6000,
                &slug(i),
                &slug(i - 1),
                EdgeType::DependsOn,
            ));
        }
        if i % 7 == 0 {
            events.push(NewEvent::set_metadata("s", 7000, &slug(i), "Area", "cli"));
        }
    }
    store.write(&events).unwrap();
    store.rebuild().unwrap();
    let digest = store.digest().unwrap();
    drop(store);
    let tasks = t.path().join(".cairn/tasks");
    let file = |i: usize| tasks.join(slug(i)).join("events.ndjson");
    let append = |i: usize, line: &str| {
        let mut text = std::fs::read_to_string(file(i)).unwrap();
        text.push_str(line);
        text.push('\n');
        std::fs::write(file(i), text).unwrap();
    };
    // A copy of task 3's first line in task 390's file (batches apart): the
    // same event, kept once. A line of task 395 under task 5's event id
    // with other content: skipped. A line that is not JSON: skipped.
    let first3 = std::fs::read_to_string(file(3)).unwrap();
    let first3 = first3.lines().next().unwrap().to_string();
    append(390, &first3);
    let id5 = lines_in_order(&tasks)
        .into_iter()
        .find(|(_, id)| {
            std::fs::read_to_string(file(5))
                .unwrap()
                .contains(id.as_str())
        })
        .unwrap()
        .1;
    let other = NewEvent::observation("s", 9000, &slug(395), "same id, other event");
    let line = cairn::store::log::LogLine {
        event_id: id5.clone(),
        event_key: other.event_key(),
        task_id: other.task_id.clone(),
        event_type: other.event_type.clone(),
        ts: other.ts,
        session_id: other.session_id.clone(),
        prev_session_id: None,
        data: other.canonical_data(),
    };
    append(395, line.encode().trim_end());
    append(398, "not json");
    for f in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{f}", db.display()));
    }
    // What the build must keep: each key once, the first line of an id.
    let mut want = Vec::new();
    let (mut keys, mut ids) = (
        std::collections::HashSet::new(),
        std::collections::HashSet::new(),
    );
    for (k, id) in lines_in_order(&tasks) {
        if keys.contains(&k) || !ids.insert(id) {
            continue;
        }
        keys.insert(k.clone());
        want.push(k);
    }
    assert_eq!(want.len(), events.len());
    let built = Store::open(&db).unwrap();
    let got: Vec<String> = built
        .conn()
        .prepare("SELECT event_key FROM events ORDER BY seq")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(got, want);
    let indexes: Vec<String> = built
        .conn()
        .prepare(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'events'
             ORDER BY name",
        )
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        indexes,
        [
            "events_key",
            "events_order",
            "events_task",
            "sqlite_autoindex_events_1"
        ]
    );
    assert_eq!(built.digest().unwrap(), digest);
    assert!(built.verify().unwrap().ok);
}
