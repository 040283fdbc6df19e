//! Issue 19, items 5, 6 and 11, through the built binary:
//!
//! - a read command never waits on a writer: with a write stopped between
//!   its commit and its log append (holding `append.lock`), or another
//!   connection holding the write lock while the logs hold lines the
//!   database lacks, `cairn show`/`ls`/`query` answer at once with what is
//!   committed and say so once on stderr;
//! - a read on a missing store creates nothing (not the store, not
//!   `.cairn/`), and a read on a store at an unusual `--db` writes nothing
//!   beside it (`epoch`, `append.lock`, `.gitignore`, `.gitattributes`);
//! - `verify`/`rebuild` interrupted by SIGTERM/SIGINT leave no aside copy,
//!   and the next run removes the copies of processes that died unseen.

use std::io::{BufRead, BufReader};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const CAIRN: &str = env!("CARGO_BIN_EXE_cairn");
/// 2026-01-01 00:00:00 UTC.
const NOW: &str = "1767225600";
/// A read must answer well within this (before the fix: 30 s, then
/// `database is locked`, or a 60 s wait on the append lock).
const PROMPT: Duration = Duration::from_secs(10);

const PLAN: &str = "2026-01-01-tune-search-ranking";
const OTHER: &str = "2026-01-01-fix-tokenizer-bug";
const BUSY_NOTE: &str = "cairn: another process is writing; showing what is committed\n";

/// `cairn` with `--db db` (when given), the fixed clock, no colour, in `cwd`.
fn cmd(cwd: &Path, db: Option<&Path>, args: &[&str]) -> Command {
    let mut c = Command::new(CAIRN);
    if let Some(db) = db {
        c.arg("--db").arg(db);
    }
    c.args(args)
        .current_dir(cwd)
        .env("CAIRN_NOW", NOW)
        .env("CAIRN_AGENT", "tester")
        .env_remove("CAIRN_DB")
        .env_remove("CAIRN_TEST_PAUSE_AFTER_COMMIT")
        .env_remove("CAIRN_TEST_PAUSE_IN_ASIDE")
        .env_remove("CLICOLOR_FORCE")
        .stdin(Stdio::null());
    c
}

/// Runs `c` to its end, failing the test when it takes longer than
/// `limit`: `(exit code, stdout, stderr)`.
fn run_within(mut c: Command, limit: Duration) -> (i32, String, String) {
    let mut child = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if start.elapsed() > limit {
            child.kill().unwrap();
            let out = child.wait_with_output().unwrap();
            panic!(
                "still running after {limit:?}; stderr: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn run(cwd: &Path, db: Option<&Path>, args: &[&str]) -> (i32, String, String) {
    run_within(cmd(cwd, db, args), PROMPT)
}

/// Runs a command that must succeed quietly; returns its stdout.
fn ok(cwd: &Path, db: &Path, args: &[&str]) -> String {
    let (code, out, err) = run(cwd, Some(db), args);
    assert_eq!((code, err.as_str()), (0, ""), "{args:?}: {out}");
    out
}

/// The names in `dir`, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Starts `cairn note SLUG TEXT` stopped between its commit and its log
/// append (the test hook), holding `append.lock` shared; returns once it
/// has committed.
fn writer_paused_after_commit(dir: &Path, db: &Path, slug: &str, text: &str) -> Child {
    let mut child = cmd(dir, Some(db), &["note", slug, text])
        .env("CAIRN_TEST_PAUSE_AFTER_COMMIT", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    assert_eq!(line, "cairn-test: committed\n");
    child
}

const SHOW_PLAN_NOTED: &str = "2026-01-01-tune-search-ranking  [active]
  tune search ranking
  recent:
    - paused note
";

#[test]
fn a_read_answers_while_a_write_is_between_commit_and_append() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    let db = dir.join(".cairn/cairn.db");
    ok(dir, &db, &["add", "tune search ranking"]);
    let mut writer = writer_paused_after_commit(dir, &db, PLAN, "paused note");

    // Before: the reconcile on open waited for the exclusive append lock
    // (the writer's 60 s pause), then answered.
    let (code, out, err) = run(dir, Some(&db), &["show", PLAN]);
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (0, SHOW_PLAN_NOTED, BUSY_NOTE)
    );
    let (code, out, err) = run(dir, Some(&db), &["query", "(-> (all) (:count))"]);
    assert_eq!((code, out.as_str(), err.as_str()), (0, "1\n", BUSY_NOTE));
    let (code, out, err) = run(dir, Some(&db), &["ls"]);
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (
            0,
            "slug                            status  name                 obs  updated (UTC)\n\
             2026-01-01-tune-search-ranking  active  tune search ranking  1    2026-01-01 00:00\n",
            BUSY_NOTE
        )
    );
    let log = dir.join(".cairn/tasks").join(PLAN).join("events.ndjson");
    assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 1);

    // The writer dies before its append; with the lock free, the next
    // read reconciles what it can: the committed note reaches the log.
    writer.kill().unwrap();
    writer.wait().unwrap();
    let (code, out, err) = run(dir, Some(&db), &["show", PLAN]);
    assert_eq!((code, out.as_str(), err.as_str()), (0, SHOW_PLAN_NOTED, ""));
    let text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(text.contains("paused note"), "{text}");
}

#[test]
fn a_read_answers_while_another_connection_holds_the_write_lock() {
    let t = tempfile::tempdir().unwrap();
    let a = t.path().join("a");
    let b = t.path().join("b");
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let db = a.join(".cairn/cairn.db");
    let other_db = b.join(".cairn/cairn.db");
    ok(&a, &db, &["add", "tune search ranking"]);
    ok(&b, &other_db, &["add", "fix tokenizer bug"]);
    // Another clone's task arrives in the logs (a pull), so opening the
    // store has lines to ingest, which needs the write lock.
    let from = b.join(".cairn/tasks").join(OTHER);
    let to = a.join(".cairn/tasks").join(OTHER);
    std::fs::create_dir_all(&to).unwrap();
    std::fs::copy(from.join("events.ndjson"), to.join("events.ndjson")).unwrap();

    let holder = rusqlite::Connection::open(&db).unwrap();
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    // Before: `error: cannot open the store at …: database is locked`
    // after the 30 s busy timeout.
    let (code, out, err) = run(&a, Some(&db), &["query", "(-> (all) (:ids))"]);
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (0, "1 task:\n- 2026-01-01-tune-search-ranking\n", BUSY_NOTE)
    );
    let (code, out, err) = run(&a, Some(&db), &["show", PLAN]);
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (
            0,
            "2026-01-01-tune-search-ranking  [active]\n  tune search ranking\n",
            BUSY_NOTE
        )
    );
    holder.execute_batch("ROLLBACK").unwrap();
    drop(holder);

    // The lock released: the next read ingests the pulled task, silently.
    let (code, out, err) = run(&a, Some(&db), &["query", "(-> (all) (:ids))"]);
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (
            0,
            "2 tasks:\n- 2026-01-01-fix-tokenizer-bug\n- 2026-01-01-tune-search-ranking\n",
            ""
        )
    );
}

/// Every read command, as `(args, exit code, stdout)` on a missing store.
fn read_commands() -> Vec<(Vec<&'static str>, i32, &'static str)> {
    vec![
        (vec!["ls"], 0, "No tasks.\n"),
        (vec!["ls", "--all", "--json"], 0, "[]\n"),
        (vec!["show", "x"], 1, ""),
        (vec!["log", "x"], 1, ""),
        (
            vec!["search", "parser"],
            0,
            "No matching observations for \"parser\".\n",
        ),
        (vec!["ready"], 0, "No tasks.\n"),
        (
            vec!["current"],
            0,
            "No current task; choose one with `cairn current SLUG`.\n",
        ),
        (vec!["current", "x"], 1, ""),
        (vec!["query", "(-> (all) (:count))"], 0, "0\n"),
        (vec!["query", "--format", "json", "(all)"], 0, "[]\n"),
    ]
}

#[test]
fn a_read_on_a_missing_store_creates_nothing() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    for name in ["cairn.db", "plan.sqlite"] {
        let db = dir.join(name);
        let note = format!(
            "cairn: no store at {} yet; `cairn init` or any write (`cairn add NAME`) creates one\n",
            db.display()
        );
        for (args, code, stdout) in read_commands() {
            let (c, out, err) = run(dir, Some(&db), &args);
            assert_eq!(c, code, "{args:?}: {out}{err}");
            if !stdout.is_empty() {
                assert_eq!(out, stdout, "{args:?}");
            }
            assert!(err.starts_with(&note), "{args:?}: {err}");
            assert_eq!(listing(dir), Vec::<String>::new(), "{args:?}");
        }
        let (c, out, err) = run(dir, Some(&db), &["schema"]);
        assert_eq!(c, 0);
        assert!(out.starts_with("Sources\n"), "{out}");
        assert_eq!(err, note);
        // Nothing to watch or verify: an error, and still nothing created.
        let refusal = format!(
            "error: no store at {} yet; `cairn init` or any write (`cairn add NAME`) creates one\n",
            db.display()
        );
        for args in [vec!["watch", "--count", "1", "(all)"], vec!["verify"]] {
            let (c, out, err) = run(dir, Some(&db), &args);
            assert_eq!((c, out.as_str(), err.as_str()), (2, "", refusal.as_str()));
        }
        assert_eq!(listing(dir), Vec::<String>::new());
    }
    // In a repository without a store (rule 3): no `.cairn/` appears.
    std::fs::create_dir(dir.join(".git")).unwrap();
    let (c, out, _) = run(dir, None, &["ls"]);
    assert_eq!((c, out.as_str()), (0, "No tasks.\n"));
    assert_eq!(listing(dir), [".git"]);
}

#[test]
fn a_read_on_an_unusual_db_writes_nothing_beside_it() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    let db = dir.join("cairn.db");
    ok(dir, &db, &["add", "tune search ranking"]);
    for f in ["epoch", "append.lock", ".gitignore", ".gitattributes"] {
        std::fs::remove_file(dir.join(f)).unwrap();
    }
    let before = listing(dir);
    assert_eq!(before, ["cairn.db", "cairn.db.current", "tasks"]);
    for (args, _, _) in read_commands() {
        run(dir, Some(&db), &args);
        assert_eq!(listing(dir), before, "{args:?}");
    }
    for args in [
        vec!["show"],
        vec!["schema"],
        vec!["current", PLAN],
        vec!["query", "--explain", "(all)"],
        vec!["watch", "--count", "1", "(all)"],
    ] {
        let (c, _, err) = run(dir, Some(&db), &args);
        assert_eq!((c, err.as_str()), (0, ""), "{args:?}");
        assert_eq!(listing(dir), before, "{args:?}");
    }
    // A database under another name keeps no logs: nothing beside it either.
    let other = dir.join("sub/plan.sqlite");
    std::fs::create_dir(dir.join("sub")).unwrap();
    ok(dir, &other, &["add", "fix tokenizer bug"]);
    let sub = listing(&dir.join("sub"));
    assert_eq!(sub, ["plan.sqlite", "plan.sqlite.current"]);
    for (args, _, _) in read_commands() {
        run(dir, Some(&other), &args);
        assert_eq!(listing(&dir.join("sub")), sub, "{args:?}");
    }
}

/// The aside files beside `db` (`cairn.db.aside-…`).
fn asides(dir: &Path) -> Vec<String> {
    listing(dir)
        .into_iter()
        .filter(|n| n.contains(".aside-"))
        .collect()
}

/// A PID no process has any more.
fn dead_pid() -> u32 {
    let mut child = Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

#[test]
fn the_next_verify_or_rebuild_removes_copies_left_by_dead_processes() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    let store = dir.join(".cairn");
    let db = store.join("cairn.db");
    ok(dir, &db, &["add", "tune search ranking"]);
    for (verb, want) in [
        (
            "verify",
            "verify: ok — projection is a faithful fold of 1 events\n",
        ),
        ("rebuild", "rebuild: re-folded 1 events; projection digest "),
    ] {
        let dead = dead_pid();
        let live = std::process::id();
        let planted: Vec<String> = ["", "-wal", "-shm"]
            .iter()
            .map(|s| format!("cairn.db.aside-{dead}-0{s}"))
            .collect();
        for f in &planted {
            std::fs::write(store.join(f), "stale copy").unwrap();
        }
        let kept = format!("cairn.db.aside-{live}-7");
        std::fs::write(store.join(&kept), "a live process's copy").unwrap();
        // Before: they stayed for good (196 MB each on a 60k store).
        let (code, out, err) = run(dir, Some(&db), &[verb]);
        assert_eq!(code, 0, "{verb}: {err}");
        assert!(out.starts_with(want), "{verb}: {out}");
        let mut said: Vec<String> = planted
            .iter()
            .map(|f| {
                format!(
                    "cairn: removed a copy left by an interrupted verify or rebuild: {}",
                    store.join(f).display()
                )
            })
            .collect();
        said.sort();
        assert_eq!(err.lines().collect::<Vec<_>>(), said, "{verb}");
        assert_eq!(asides(&store), std::slice::from_ref(&kept), "{verb}");
        std::fs::remove_file(store.join(&kept)).unwrap();
    }
}

/// Starts `cairn VERB` paused right after its aside copy is made, and
/// returns it with the copy's path.
fn paused_in_aside(dir: &Path, db: &Path, verb: &str) -> (Child, PathBuf) {
    let mut c = cmd(dir, Some(db), &[verb]);
    // A test run started in the background of a shell without job control
    // inherits SIGINT and SIGQUIT as ignored (POSIX), and an ignored signal
    // stays ignored across exec: give the child the default disposition
    // so the SIGINT below reaches its handler.
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        c.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            libc::signal(libc::SIGTERM, libc::SIG_DFL);
            Ok(())
        });
    }
    let mut child = c
        .env("CAIRN_TEST_PAUSE_IN_ASIDE", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    assert_eq!(line, "cairn-test: aside\n");
    let copy = db.with_file_name(format!("cairn.db.aside-{}-0", child.id()));
    (child, copy)
}

#[test]
fn verify_or_rebuild_stopped_by_a_signal_removes_its_copy() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    let store = dir.join(".cairn");
    let db = store.join("cairn.db");
    ok(dir, &db, &["add", "tune search ranking"]);
    for (verb, sig) in [
        ("verify", libc::SIGTERM),
        ("rebuild", libc::SIGINT),
        ("verify", libc::SIGINT),
        ("rebuild", libc::SIGTERM),
    ] {
        let (mut child, copy) = paused_in_aside(dir, &db, verb);
        assert!(copy.is_file(), "{verb}: {:?}", asides(&store));
        let pid = libc::pid_t::try_from(child.id()).unwrap();
        // SAFETY: signals our own child.
        assert_eq!(unsafe { libc::kill(pid, sig) }, 0);
        let status = child.wait().unwrap();
        // It still dies of the signal, and its copy is gone (before: left
        // behind until someone deleted it by hand).
        assert_eq!(status.signal(), Some(sig), "{verb}");
        assert_eq!(asides(&store), Vec::<String>::new(), "{verb} {sig}");
    }
    let (code, out, _) = run(dir, Some(&db), &["verify"]);
    assert_eq!(code, 0, "{out}");
}

/// Issue 19 (hostile run, H2): a writer stopped between its commit and its
/// log append no longer hangs every other WRITE: the export pass on open
/// gives up on the exclusive log lock after a second (the stopped writer's
/// own append is still to come) and the write goes on; the paused writer's
/// event reaches the log once it is gone.
#[test]
fn a_write_goes_on_while_another_write_is_between_commit_and_append() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    let db = dir.join(".cairn/cairn.db");
    ok(dir, &db, &["add", "tune search ranking"]);
    let mut writer = writer_paused_after_commit(dir, &db, PLAN, "paused note");
    let (code, out, err) = run(dir, Some(&db), &["note", PLAN, "second note"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(out, format!("Observed on {PLAN}.\n"));
    // Answered while the first writer is still paused (before: it waited
    // for the writer's whole pause, or forever for a stopped one).
    assert!(
        writer.try_wait().unwrap().is_none(),
        "the write waited for the paused writer"
    );
    writer.kill().unwrap();
    writer.wait().unwrap();
    let (code, out, err) = run(dir, Some(&db), &["verify"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("logs: ok"), "{out}");
    let log = dir.join(".cairn/tasks").join(PLAN).join("events.ndjson");
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        text.contains("paused note") && text.contains("second note"),
        "{text}"
    );
}

/// Issue 23: `rebuild` reads the events in one read transaction of the
/// live store and writes only its aside file until the swap. Stopped there
/// for good (SIGKILL: no handler runs), it leaves the live store whole:
/// writes went on meanwhile (a WAL writer is not blocked by a reader), the
/// projection is the same plus what they wrote, `verify` is ok, and the
/// next `rebuild` removes the copy and folds everything.
#[test]
fn a_rebuild_killed_before_its_swap_leaves_the_live_store_whole() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    let store = dir.join(".cairn");
    let db = store.join("cairn.db");
    ok(dir, &db, &["add", "tune search ranking"]);
    ok(dir, &db, &["note", PLAN, "first note"]);
    let (_, before, _) = run(dir, Some(&db), &["rebuild"]);
    let (mut child, copy) = paused_in_aside(dir, &db, "rebuild");
    assert!(copy.is_file(), "{:?}", asides(&store));
    // Written while the rebuild holds its snapshot: at once.
    let (code, out, err) = run_within(cmd(dir, Some(&db), &["note", PLAN, "meanwhile"]), PROMPT);
    assert_eq!((code, err.as_str()), (0, ""), "{out}");
    assert_eq!(out, format!("Observed on {PLAN}.\n"));
    child.kill().unwrap();
    assert_eq!(child.wait().unwrap().signal(), Some(libc::SIGKILL));
    assert_eq!(asides(&store).len(), 1, "SIGKILL runs no handler");
    let (code, shown, _) = run(dir, Some(&db), &["show", PLAN]);
    assert_eq!(code, 0);
    assert!(
        shown.contains("first note") && shown.contains("meanwhile"),
        "{shown}"
    );
    // The next run that makes a copy removes the dead one's.
    let (code, verified, err) = run(dir, Some(&db), &["verify"]);
    assert_eq!(code, 0, "{verified}");
    assert_eq!(
        err,
        format!(
            "cairn: removed a copy left by an interrupted verify or rebuild: {}\n",
            copy.display()
        )
    );
    assert!(
        verified.starts_with("verify: ok — projection is a faithful fold of 3 events"),
        "{verified}"
    );
    let (code, after, err) = run(dir, Some(&db), &["rebuild"]);
    assert_eq!((code, err.as_str()), (0, ""));
    assert_eq!(asides(&store), Vec::<String>::new());
    assert!(
        after.starts_with("rebuild: re-folded 3 events; projection digest "),
        "{after}"
    );
    assert_ne!(after, before);
}
