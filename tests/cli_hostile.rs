//! The issue-27 verbs given hostile input (the hostile pass): each bad
//! input is one clear sentence, a non-zero exit, and changes nothing — the
//! event count is compared before and after. Runs `cairn --db DIR/cairn.db`
//! with the tool clock fixed and the agent named.

use std::path::Path;
use std::process::{Command, Output, Stdio};

const CAIRN: &str = env!("CARGO_BIN_EXE_cairn");
const A: &str = "2026-01-01-first-task-here";
const B: &str = "2026-01-01-second-task-here";
const C: &str = "2026-01-01-third-task-here";

fn cairn(dir: &Path, args: &[&str]) -> Output {
    Command::new(CAIRN)
        .arg("--db")
        .arg(dir.join("cairn.db"))
        .args(args)
        .current_dir(dir)
        .env("CAIRN_NOW", "1767225600")
        .env("CAIRN_AGENT", "ana")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Runs `args`, expecting exit 0; its stdout.
fn ok(dir: &Path, args: &[&str]) -> String {
    let out = cairn(dir, args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// How many events the store holds.
fn events(dir: &Path) -> u64 {
    let out = ok(dir, &["verify", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    v["events"].as_u64().unwrap()
}

/// Runs `args`, expecting exit `code`, nothing on stdout, exactly `err`
/// on stderr and no new event.
fn refused(dir: &Path, args: &[&str], code: i32, err: &str) {
    let before = events(dir);
    let out = cairn(dir, args);
    assert_eq!(
        out.status.code(),
        Some(code),
        "{args:?}: {}",
        text(&out.stderr)
    );
    assert_eq!(text(&out.stdout), "", "{args:?}");
    assert_eq!(text(&out.stderr), err, "{args:?}");
    assert_eq!(events(dir), before, "{args:?} recorded an event");
}

fn three_tasks() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for n in ["first task here", "second task here", "third task here"] {
        ok(dir.path(), &["add", n]);
    }
    dir
}

/// A blank SLUG used to reach the tools as "no task given": `cairn abandon
/// ""` abandoned the current task. Now a usage error on every verb.
#[test]
fn a_blank_or_control_character_slug_is_a_usage_error() {
    let dir = three_tasks();
    let d = dir.path();
    let blank = |what: &str| {
        format!(
            "error: invalid value '' for '{what}': a SLUG must not be blank.\n\nFor more information, try '--help'.\n"
        )
    };
    refused(d, &["abandon", ""], 2, &blank("<SLUG>"));
    refused(
        d,
        &["abandon", "  "],
        2,
        &blank("<SLUG>").replace("''", "'  '"),
    );
    for verb in [
        "show", "done", "start", "block", "reopen", "claim", "release", "log",
    ] {
        refused(d, &[verb, ""], 2, &blank("[SLUG]"));
    }
    refused(d, &["edit", "", "--set", "a=b"], 2, &blank("[SLUG]"));
    refused(d, &["dep", "add", "", "--on", B], 2, &blank("<SLUG>"));
    refused(d, &["dep", "add", A, "--on", ""], 2, &blank("--on <OTHER>"));
    refused(d, &["ls", "--under", ""], 2, &blank("--under <SLUG>"));
    refused(
        d,
        &["add", "fourth task here", "--after", ""],
        2,
        &blank("--after <SLUG>"),
    );
    let out = cairn(d, &["show", "a\u{1b}[2J"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("\"a\\u{1b}[2J\" is not a slug: it holds a control character."),
        "{}",
        text(&out.stderr)
    );
    assert!(ok(d, &["show", A]).starts_with(&format!("{A}  [active]")));
}

/// `--for`: units largest first and once, digits after a unit refused (is
/// `1h30` 30 seconds or minutes?), out of range said as such.
#[test]
fn claim_durations() {
    let dir = three_tasks();
    let d = dir.path();
    let not = |t: &str| {
        format!(
            "error: invalid value '{t}' for '--for <DURATION>': \"{t}\" is not a duration; use seconds or a number with s, m, h or d (90s, 15m, 1h30m), from 1s to 1d.\n\nFor more information, try '--help'.\n"
        )
    };
    let range = |t: &str| {
        format!(
            "error: invalid value '{t}' for '--for <DURATION>': \"{t}\" is out of range; a claim lasts from 1s to 1d.\n\nFor more information, try '--help'.\n"
        )
    };
    for t in ["1h30", "1h1h", "30m1h", "1e9", "1.5h", ""] {
        refused(d, &["claim", A, "--for", t], 2, &not(t));
    }
    for t in ["0", "99999d", "86401", "18446744073709551616"] {
        refused(d, &["claim", A, "--for", t], 2, &range(t));
    }
    assert_eq!(
        ok(d, &["claim", A, "--for", "1h30m"]),
        format!("Claimed {A} for 1h30m.\n")
    );
}

/// `dep add`: a link already there is said, not recorded again; a cycle
/// is refused; `dep rm` of a link that is not there says so.
#[test]
fn dep_add_rm_say_what_needs_no_change_and_refuse_cycles() {
    let dir = three_tasks();
    let d = dir.path();
    ok(d, &["dep", "add", A, "--on", B]);
    ok(d, &["dep", "add", B, "--on", C]);
    refused(
        d,
        &["dep", "add", C, "--on", A],
        1,
        &format!(
            "{A} already depends on {C} (directly or through other tasks); {C} waiting on it would make both wait forever. Nothing changed.\n"
        ),
    );
    refused(
        d,
        &["dep", "add", A, "--on", A],
        1,
        "A task cannot link to itself.\n",
    );
    let before = events(d);
    assert_eq!(
        ok(
            d,
            &["dep", "add", A, "--on", &format!("main:{B}"), "--on", B]
        ),
        format!("{A} already depends on {B}.\n")
    );
    let v: serde_json::Value =
        serde_json::from_str(&ok(d, &["dep", "add", A, "--on", B, "--json"])).unwrap();
    assert_eq!(
        v,
        serde_json::json!({"task": A, "results": [],
                           "unchanged": [format!("{A} already depends on {B}.")]})
    );
    assert_eq!(
        ok(d, &["dep", "rm", A, "--on", C]),
        format!("{A} does not depend on {C}.\n")
    );
    assert_eq!(events(d), before);
    assert_eq!(
        ok(d, &["dep", "rm", A, "--on", B]),
        format!("Severed {A} -> {B} (depends-on).\n")
    );
    // With the link gone the other way round is no cycle.
    assert_eq!(
        ok(d, &["dep", "add", C, "--on", A]),
        format!("Linked {C} -> {A} (depends-on).\n")
    );
}

/// `edit --set` will not record a computed field as metadata: `status`,
/// `slug`, `obs-count`… would shadow the field in every query (a
/// `--set status=done` made `ls` show `done` and blanked the other
/// tasks' status). `description` and `display-name` are settable.
#[test]
fn edit_refuses_computed_keys() {
    let dir = three_tasks();
    let d = dir.path();
    refused(
        d,
        &["edit", A, "--set", "priority=high", "--set", "Status=done"],
        1,
        "cairn edit will not set status; use cairn done, start, block, reopen or abandon.\n",
    );
    for k in ["slug", "obs-count", "claimed-by", "updated-ts"] {
        refused(
            d,
            &["edit", A, "--set", &format!("{k}=x")],
            1,
            &format!("cairn edit will not set {k}; it is a computed field, not metadata.\n"),
        );
        refused(
            d,
            &["edit", A, "--unset", k],
            1,
            &format!("cairn edit will not set {k}; it is a computed field, not metadata.\n"),
        );
    }
    refused(
        d,
        &["edit", A, "--set", "=v"],
        1,
        "--set takes KEY=VALUE; \"=v\" has no KEY.\n",
    );
    assert_eq!(
        ok(
            d,
            &[
                "edit",
                A,
                "--set",
                "description=new text",
                "--set",
                "display-name=Nice"
            ]
        ),
        format!("Set description on {A}.\nSet display-name on {A}.\n")
    );
}

/// `ls --where`/`--sort` naming a key no task has is a usage error (exit
/// 2, one sentence), as the docs say; it was `Query error: Unknown field
/// :a; did you mean :doc?`, exit 1.
#[test]
fn ls_unknown_where_or_sort_key_is_a_usage_error() {
    let dir = three_tasks();
    let d = dir.path();
    refused(
        d,
        &["ls", "--where", "a=b=c"],
        2,
        "error: --where: no task has a field or metadata key \"a\" (`cairn query '(fields)'` lists them).\n",
    );
    refused(
        d,
        &["ls", "--sort", "bogus:desc"],
        2,
        "error: --sort: no task has a field or metadata key \"bogus\" (`cairn query '(fields)'` lists them).\n",
    );
    refused(
        d,
        &["ls", "--where", "status"],
        2,
        "error: --where takes KEY=VALUE (e.g. priority=high); \"status\" has no =.\n",
    );
    ok(d, &["edit", A, "--set", "priority=high"]);
    assert!(ok(d, &["ls", "--where", "Priority=high"]).contains(A));
    assert!(ok(d, &["ls", "--sort", "priority:desc"]).contains(B));
    assert_eq!(ok(d, &["ls", "--where", "priority=a=b"]), "No tasks.\n");
}

/// `edit --name` with a control or bidi-override character, or a value
/// with an escape sequence, is refused: `show` printed them raw (an
/// `ESC[2J` cleared the screen; U+202E reversed the line).
#[test]
fn edit_refuses_control_and_bidi_characters() {
    let dir = three_tasks();
    let d = dir.path();
    for name in ["a\u{1b}[2Jb", "evil\u{202e}txt.exe", "two\nlines"] {
        refused(
            d,
            &["edit", A, "--name", name],
            1,
            "--name must not contain control or bidirectional-override characters.\n",
        );
    }
    refused(
        d,
        &["edit", A, "--set", "priority=hi\u{1b}[31m"],
        1,
        "the value of priority must not contain control characters (other than newline and tab) or bidirectional overrides.\n",
    );
    refused(
        d,
        &["edit", A, "-d", "x\u{2066}y"],
        1,
        "the value of description must not contain control characters (other than newline and tab) or bidirectional overrides.\n",
    );
    assert_eq!(
        ok(
            d,
            &[
                "edit",
                A,
                "-d",
                "line one\n\tline two",
                "--name",
                "Ünïcödé 名前"
            ]
        ),
        format!("Set display-name on {A}.\nSet description on {A}.\n")
    );
}

/// `CAIRN_ROUTE_ID` exported machine-wide for the HTTP servers does not
/// break a stdio `cairn serve` (stdio has no session ids; hostile pass of
/// issue 24): it serves, and exits 0 when stdin closes.
#[test]
fn a_route_id_in_the_environment_leaves_stdio_serve_alone() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(CAIRN)
        .arg("--db")
        .arg(dir.path().join("cairn.db"))
        .arg("serve")
        .current_dir(dir.path())
        .env("CAIRN_ROUTE_ID", "a")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}
