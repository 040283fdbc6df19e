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
