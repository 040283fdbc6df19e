//! The everyday verbs (issue 12) as processes on one store built by the
//! verbs themselves, with the tool clock fixed (`CAIRN_NOW`, 2026-01-01
//! 00:00 UTC): insta snapshots of each verb's text and `--json` output,
//! stderr and exit status. Piped, so no colour; `--color always` shows it.

use std::path::Path;
use std::process::{Command, Stdio};

const CAIRN: &str = env!("CARGO_BIN_EXE_cairn");
/// 2026-01-01 00:00:00 UTC.
const NOW: &str = "1767225600";

/// Runs `cairn --db DIR/cairn.db ARGS` and renders exit status, stdout and
/// stderr as one snapshot text.
fn run(dir: &Path, args: &[&str]) -> String {
    let out = Command::new(CAIRN)
        .arg("--db")
        .arg(dir.join("cairn.db"))
        .args(args)
        .current_dir(dir)
        .env("CAIRN_NOW", NOW)
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let mut s = format!(
        "$ cairn {}\nexit: {}\n",
        args.join(" "),
        out.status.code().unwrap_or(-1)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !stdout.is_empty() {
        s.push_str(&format!("--- stdout\n{stdout}"));
    }
    if !stderr.is_empty() {
        s.push_str(&format!("--- stderr\n{stderr}"));
    }
    s
}

const PLAN: &str = "2026-01-01-tune-search-ranking";
const FIX: &str = "2026-01-01-tokenizer-fix";
const PREFIX: &str = "2026-01-01-add-prefix-query-support";

/// The fixed store: a plan with two phases, the second after the first,
/// and one note. Returns the snapshots of the building steps.
fn build(dir: &Path) -> Vec<String> {
    vec![
        run(
            dir,
            &[
                "add",
                "tune search ranking",
                "-d",
                "better hits for code search",
            ],
        ),
        run(dir, &["add", "tokenizer fix", "--under", PLAN]),
        run(
            dir,
            &[
                "add",
                "add prefix query support",
                "--under",
                PLAN,
                "--after",
                FIX,
            ],
        ),
        run(
            dir,
            &["note", FIX, "splitting on - breaks file.rs:45-78 lookups"],
        ),
    ]
}

#[test]
fn verbs_text() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    insta::assert_snapshot!("build", build(d).join("\n"));
    insta::assert_snapshot!("current", run(d, &["current"]));
    insta::assert_snapshot!("ls", run(d, &["ls"]));
    insta::assert_snapshot!("ls_tree", run(d, &["ls", "--tree"]));
    insta::assert_snapshot!("ls_under", run(d, &["ls", "--under", PLAN]));
    insta::assert_snapshot!("show", run(d, &["show", FIX]));
    insta::assert_snapshot!("ready_before", run(d, &["ready"]));
    insta::assert_snapshot!("start", run(d, &["start", FIX]));
    insta::assert_snapshot!(
        "note_current",
        run(d, &["note", "the current task gets this one"])
    );
    insta::assert_snapshot!("done", run(d, &["done", FIX]));
    insta::assert_snapshot!("ready_after", run(d, &["ready", PLAN]));
    insta::assert_snapshot!("block", run(d, &["block", PREFIX]));
    insta::assert_snapshot!("ls_all", run(d, &["ls", "--all"]));
    insta::assert_snapshot!("ls_dormant", run(d, &["ls", "--dormant"]));
    insta::assert_snapshot!("log", run(d, &["log", FIX]));
    insta::assert_snapshot!("search", run(d, &["search", "splitting"]));
    insta::assert_snapshot!("schema", run(d, &["schema"]));
    // Errors: a tool error on stderr with exit 1.
    insta::assert_snapshot!("show_missing", run(d, &["show", "2026-01-01-nope"]));
    insta::assert_snapshot!("ls_under_missing", run(d, &["ls", "--under", "nope"]));
    // Colour on request, even into a pipe.
    insta::assert_snapshot!(
        "ls_all_color",
        run(d, &["--color", "always", "ls", "--all"])
    );
}

#[test]
fn verbs_json() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    build(d);
    insta::assert_snapshot!(
        "add_json",
        run(d, &["add", "write docs", "--after", FIX, "--json"])
    );
    insta::assert_snapshot!("current_json", run(d, &["current", "--json"]));
    insta::assert_snapshot!("ls_json", run(d, &["ls", "--under", PLAN, "--json"]));
    insta::assert_snapshot!("ls_tree_json", run(d, &["ls", "--tree", "--json"]));
    insta::assert_snapshot!("show_json", run(d, &["show", FIX, "--json"]));
    insta::assert_snapshot!("start_json", run(d, &["start", FIX, "--json"]));
    insta::assert_snapshot!("note_json", run(d, &["note", FIX, "json note", "--json"]));
    insta::assert_snapshot!("done_json", run(d, &["done", FIX, "--json"]));
    insta::assert_snapshot!("block_json", run(d, &["block", PREFIX, "--json"]));
    // `write docs` waits on FIX only (done): ready; PREFIX is blocked: not.
    insta::assert_snapshot!("ready_json", run(d, &["ready", "--json"]));
    insta::assert_snapshot!("log_json", run(d, &["log", FIX, "--limit", "2", "--json"]));
    insta::assert_snapshot!("search_json", run(d, &["search", "splitting", "--json"]));
    insta::assert_snapshot!("schema_json_head", {
        let s = run(d, &["schema", "--json"]);
        s.lines().take(12).collect::<Vec<_>>().join("\n")
    });
    insta::assert_snapshot!(
        "show_missing_json",
        run(d, &["show", "2026-01-01-nope", "--json"])
    );
}

#[test]
fn ready_prefers_a_user_view_named_ready() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    build(d);
    let out = run(
        d,
        &[
            "query",
            "--write",
            "(define! \"ready\" (-> (active) (:where (> :obs-count 0))))",
        ],
    );
    assert!(out.starts_with("$ cairn query"), "{out}");
    // No current task needed: the view decides.
    std::fs::remove_file(d.join("cairn.db.current")).unwrap();
    insta::assert_snapshot!("ready_view", run(d, &["ready"]));
}

/// With no store yet, reads answer as on an empty one, say so on stderr
/// and create nothing (issue 19 item 11; docs/store.md "Reads never wait,
/// never create").
#[test]
fn ready_on_an_empty_store_says_no_tasks() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let here = |s: String| s.replace(&d.display().to_string(), "DIR");
    insta::assert_snapshot!("ready_empty", here(run(d, &["ready"])));
    insta::assert_snapshot!("ls_empty", here(run(d, &["ls"])));
    assert_eq!(std::fs::read_dir(d).unwrap().count(), 0);
}

#[test]
fn the_current_task_is_remembered_next_to_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    build(d);
    // task_fork moved the CLI's session to the last child.
    assert_eq!(
        std::fs::read_to_string(d.join("cairn.db.current")).unwrap(),
        format!("{PREFIX}\n")
    );
    assert_eq!(
        run(d, &["current", PLAN]),
        format!("$ cairn current {PLAN}\nexit: 0\n--- stdout\nCurrent task: {PLAN}.\n")
    );
    assert_eq!(
        std::fs::read_to_string(d.join("cairn.db.current")).unwrap(),
        format!("{PLAN}\n")
    );
    assert_eq!(
        run(d, &["current", "nope"]),
        "$ cairn current nope\nexit: 1\n--- stderr\nNo task nope.\n"
    );
}

/// `cairn add --after` an unknown task creates nothing: the target is
/// checked before the create (newcomer finding: it used to create the task,
/// then fail the link).
#[test]
fn add_after_an_unknown_task_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(
        run(dir.path(), &["add", "write the parser", "--after", "nope"]),
        "$ cairn add write the parser --after nope\nexit: 1\n--- stderr\nNo task nope.\n"
    );
    assert_eq!(
        run(dir.path(), &["ls", "--all"]),
        "$ cairn ls --all\nexit: 0\n--- stdout\nNo tasks.\n"
    );
}
