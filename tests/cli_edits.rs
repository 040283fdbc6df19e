//! The verbs of issue 27 as processes on one store, with the tool clock
//! fixed (`CAIRN_NOW`, 2026-01-01 00:00 UTC) and the agent named
//! (`CAIRN_AGENT`): claims (`claim`, `release`, `ready --claim`, `mine`),
//! dependencies (`dep add|rm|tree`, `show`'s incoming edges, `ls --tree`'s
//! `waits on`), edits (`edit`, `reopen`, `abandon`), `ls`'s filters and
//! limit, and `--json` on `where`, `verify`, `rebuild`, `token list` —
//! insta snapshots of text and JSON. Claims are stamped and judged by the
//! real clock (docs/store.md "Claims: one clock decides"), so the times
//! they set are replaced by `<now>` / `<until>` before comparing.

use std::path::Path;
use std::process::{Command, Stdio};

const CAIRN: &str = env!("CARGO_BIN_EXE_cairn");
/// 2026-01-01 00:00:00 UTC.
const NOW: &str = "1767225600";

/// Replaces what the real clock wrote: a minute other than the fixed
/// clock's (`YYYY-MM-DD HH:MM` not `2026-01-01 00:00`, kept 16 wide) and
/// timestamps other than NOW in JSON.
fn steady(s: &str) -> String {
    let mut out = String::new();
    for line in s.lines() {
        let chars: Vec<char> = line.chars().collect();
        let mut l = String::new();
        let mut i = 0;
        while i < chars.len() {
            let rest: String = chars[i..].iter().take(16).collect();
            let looks = rest.chars().count() == 16
                && rest.chars().enumerate().all(|(k, c)| match k {
                    4 | 7 => c == '-',
                    10 => c == ' ',
                    13 => c == ':',
                    _ => c.is_ascii_digit(),
                });
            if looks && rest != "2026-01-01 00:00" {
                l.push_str("<minute>        ");
                i += 16;
            } else {
                l.push(chars[i]);
                i += 1;
            }
        }
        for key in ["until", "claim-until", "updated-ts", "status-ts"] {
            let pat = format!("\"{key}\": ");
            if let Some(p) = l.find(&pat) {
                let value = l[p + pat.len()..].trim_end_matches(',');
                if value.parse::<i64>().is_ok() && value != NOW {
                    let comma = if l.ends_with(',') { "," } else { "" };
                    l = format!("{}{pat}\"<now>\"{comma}", &l[..p]);
                }
            }
        }
        out.push_str(&l);
        out.push('\n');
    }
    out
}

/// Runs `cairn --db DIR/cairn.db ARGS` as agent `ana` and renders exit
/// status, stdout and stderr as one snapshot text.
fn run_as(dir: &Path, agent: &str, args: &[&str]) -> String {
    let out = Command::new(CAIRN)
        .arg("--db")
        .arg(dir.join("cairn.db"))
        .args(args)
        .current_dir(dir)
        .env("CAIRN_NOW", NOW)
        .env("CAIRN_AGENT", agent)
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
    steady(&s).replace(&dir.display().to_string(), "DIR")
}

fn run(dir: &Path, args: &[&str]) -> String {
    run_as(dir, "ana", args)
}

const PLAN: &str = "2026-01-01-tune-search-ranking";
const FIX: &str = "2026-01-01-tokenizer-fix";
const PREFIX: &str = "2026-01-01-prefix-queries";
const SPIKE: &str = "2026-01-01-old-spike";

/// The plan: two phases, made without TQ; returns the snapshots.
fn build(d: &Path) -> String {
    [
        run(d, &["add", "tune search ranking"]),
        run(d, &["add", "tokenizer fix", "--under", PLAN]),
        run(d, &["add", "prefix queries", "--under", PLAN]),
        run(d, &["add", "old spike"]),
    ]
    .join("\n")
}

#[test]
fn dependencies_after_creation() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    build(d);
    insta::assert_snapshot!("dep_add", run(d, &["dep", "add", PREFIX, "--on", FIX]));
    insta::assert_snapshot!("dep_tree", run(d, &["dep", "tree", PLAN]));
    insta::assert_snapshot!("dep_tree_all", run(d, &["dep", "tree"]));
    insta::assert_snapshot!("dep_tree_json", run(d, &["dep", "tree", PLAN, "--json"]));
    insta::assert_snapshot!("ls_tree_waits", run(d, &["ls", "--tree"]));
    insta::assert_snapshot!("show_incoming", run(d, &["show", FIX]));
    insta::assert_snapshot!("show_incoming_json", run(d, &["show", FIX, "--json"]));
    // Nothing changes on a task that does not exist.
    insta::assert_snapshot!(
        "dep_add_missing",
        run(d, &["dep", "add", PREFIX, "--on", "2026-01-01-nope"])
    );
    insta::assert_snapshot!(
        "dep_rm_json",
        run(d, &["dep", "rm", PREFIX, "--on", FIX, "--json"])
    );
    insta::assert_snapshot!("ls_tree_after_rm", run(d, &["ls", "--tree"]));
}

#[test]
fn edits() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    insta::assert_snapshot!("build", build(d));
    insta::assert_snapshot!(
        "edit",
        run(
            d,
            &[
                "edit",
                FIX,
                "--name",
                "tokenizer: whitespace split",
                "--description",
                "split on whitespace only",
                "--set",
                "priority=high",
            ]
        )
    );
    insta::assert_snapshot!("edit_show", run(d, &["show", FIX]));
    // task_get over `cairn call` sees the same description.
    insta::assert_snapshot!(
        "edit_task_get",
        run(d, &["call", "task_get", &format!("task_id={FIX}")])
    );
    insta::assert_snapshot!(
        "edit_json",
        run(
            d,
            &[
                "edit",
                FIX,
                "--unset",
                "priority",
                "--description",
                "",
                "--json"
            ]
        )
    );
    insta::assert_snapshot!("edit_bad_set", run(d, &["edit", FIX, "--set", "priority"]));
    insta::assert_snapshot!("edit_missing", run(d, &["edit", "nope", "--set", "a=b"]));
    insta::assert_snapshot!("edit_nothing", run(d, &["edit", FIX]));
    insta::assert_snapshot!(
        "abandon",
        run(
            d,
            &[
                "abandon",
                SPIKE,
                "--reason",
                "superseded by the tokenizer fix"
            ]
        )
    );
    insta::assert_snapshot!("abandon_log", run(d, &["log", SPIKE]));
    insta::assert_snapshot!("reopen", run(d, &["reopen", SPIKE]));
    insta::assert_snapshot!("reopen_json", run(d, &["reopen", SPIKE, "--json"]));
    insta::assert_snapshot!("abandon_json", run(d, &["abandon", SPIKE, "--json"]));
}

#[test]
fn claims() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    build(d);
    run(d, &["dep", "add", PREFIX, "--on", FIX]);
    insta::assert_snapshot!("ready", run(d, &["ready"]));
    // No SLUG: the first ready task (the claim-one query); it becomes current.
    insta::assert_snapshot!("claim_first", run(d, &["claim"]));
    insta::assert_snapshot!("claim_current", run(d, &["current"]));
    insta::assert_snapshot!("mine", run(d, &["mine"]));
    insta::assert_snapshot!("mine_json", run(d, &["mine", "--json"]));
    // Ana holds the old spike: Bob can neither take nor release it.
    insta::assert_snapshot!("claim_taken", run_as(d, "bob", &["claim", SPIKE]));
    insta::assert_snapshot!("release_other", run_as(d, "bob", &["release", SPIKE]));
    insta::assert_snapshot!(
        "claim_slug_json",
        run(d, &["claim", FIX, "--for", "1h", "--json"])
    );
    insta::assert_snapshot!("ls_claimed", run(d, &["ls", "--claimed", "--sort", "slug"]));
    insta::assert_snapshot!("ls_mine_bob", run_as(d, "bob", &["ls", "--mine"]));
    // The claimed task became current: release ends that claim.
    insta::assert_snapshot!("release", run(d, &["release"]));
    insta::assert_snapshot!("release_again", run(d, &["release", FIX, "--json"]));
    insta::assert_snapshot!("ready_claim_json", run(d, &["ready", "--claim", "--json"]));
    insta::assert_snapshot!("claim_none", run_as(d, "bob", &["claim"]));
    insta::assert_snapshot!("claim_bad_duration", run(d, &["claim", "--for", "2d"]));
    run(d, &["done", FIX]);
    insta::assert_snapshot!("claim_done", run(d, &["claim", FIX]));
    insta::assert_snapshot!("claim_missing", run(d, &["claim", "2026-01-01-nope"]));
}

#[test]
fn ls_filters_and_limit() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    build(d);
    run(d, &["edit", FIX, "--set", "priority=high"]);
    run(d, &["done", SPIKE]);
    insta::assert_snapshot!(
        "ls_status",
        run(d, &["ls", "--status", "completed,blocked"])
    );
    insta::assert_snapshot!("ls_where", run(d, &["ls", "--where", "priority=high"]));
    insta::assert_snapshot!(
        "ls_sort_limit",
        run(d, &["ls", "--all", "--sort", "slug", "--limit", "2"])
    );
    insta::assert_snapshot!(
        "ls_sort_desc",
        run(d, &["ls", "--sort", "slug:desc", "--limit", "0"])
    );
    insta::assert_snapshot!("ls_tree_limit", run(d, &["ls", "--tree", "--limit", "2"]));
    insta::assert_snapshot!("ls_limit_json", run(d, &["ls", "--limit", "1", "--json"]));
    insta::assert_snapshot!("ls_bad_where", run(d, &["ls", "--where", "priority"]));
    insta::assert_snapshot!("ls_bad_key", run(d, &["ls", "--where", "a b=c"]));
    insta::assert_snapshot!("ls_bad_status", run(d, &["ls", "--status", "done"]));
}

/// With no `--limit`, a text listing stops at 50 rows and says how many
/// are left; `--json` lists every task.
#[test]
fn ls_default_limit() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let store = cairn::store::Store::open(&d.join("cairn.db")).unwrap();
    let ev: Vec<_> = (0..60)
        .map(|i| {
            cairn::store::NewEvent::task_create(
                "s",
                1_767_225_600,
                &format!("2026-01-01-t{i:02}"),
                None,
                None,
            )
        })
        .collect();
    store.write(&ev).unwrap();
    drop(store);
    let text = run(d, &["ls"]);
    assert_eq!(
        text.lines()
            .filter(|l| l.starts_with("2026-01-01-t"))
            .count(),
        50,
        "{text}"
    );
    assert!(text.ends_with("10 more; --limit 0 for all.\n"), "{text}");
    let json = run(d, &["ls", "--json"]);
    assert_eq!(json.matches("\"slug\": ").count(), 60);
}

#[test]
fn json_on_store_commands() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    build(d);
    insta::assert_snapshot!("where_json", run(d, &["where", "--json"]));
    insta::assert_snapshot!("token_list_json", run(d, &["token", "list", "--json"]));
    let verify = run(d, &["verify", "--json"]);
    assert!(
        verify.starts_with("$ cairn verify --json\nexit: 0\n--- stdout\n{\n"),
        "{verify}"
    );
    let v: serde_json::Value =
        serde_json::from_str(verify.split("--- stdout\n").nth(1).unwrap()).unwrap();
    assert_eq!(v["ok"], true);
    assert_eq!(v["events"], 6);
    assert_eq!(v["projection"]["ok"], true);
    assert_eq!(v["logs"]["ok"], true);
    assert_eq!(v["logs"]["lines"], 6);
    let rebuild = run(d, &["rebuild", "--json"]);
    let r: serde_json::Value =
        serde_json::from_str(rebuild.split("--- stdout\n").nth(1).unwrap()).unwrap();
    assert_eq!(r["events"], 6);
    assert_eq!(r["digest"], v["projection"]["live"]);
    assert_eq!(r["logs_read"], serde_json::Value::Null);
}

/// 8 processes run `cairn claim` (no SLUG) at once over 3 ready tasks:
/// exactly 3 distinct winners, the other 5 told nothing is ready.
#[test]
fn eight_claimers_three_ready_tasks_three_winners() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for name in ["write the parser", "fix the lexer", "tune the planner"] {
        run(d, &["add", name]);
    }
    let children: Vec<_> = (0..8)
        .map(|p| {
            Command::new(CAIRN)
                .arg("--db")
                .arg(d.join("cairn.db"))
                .args(["claim", "--json"])
                .env("CAIRN_AGENT", format!("racer-{p}"))
                .env_remove("CAIRN_NOW")
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut winners = std::collections::BTreeSet::new();
    let mut losers = 0;
    for c in children {
        let out = c.wait_with_output().unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        match out.status.code() {
            Some(0) => {
                assert!(
                    winners.insert(v["claimed"].as_str().unwrap().to_string()),
                    "{v}"
                );
            }
            Some(1) => {
                assert_eq!(
                    v["error"],
                    "Nothing is ready to claim (`cairn ready` is empty)."
                );
                losers += 1;
            }
            other => panic!("exit {other:?}: {}", String::from_utf8_lossy(&out.stderr)),
        }
    }
    assert_eq!(winners.len(), 3, "{winners:?}");
    assert_eq!(losers, 5);
}

/// An empty `CAIRN_AGENT=` is unset: the verbs fall back to USER@HOST.
#[test]
fn an_empty_cairn_agent_is_unset() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    build(d);
    let out = Command::new(CAIRN)
        .arg("--db")
        .arg(d.join("cairn.db"))
        .args(["claim", FIX, "--json"])
        .env("CAIRN_AGENT", "")
        .env("USER", "ana")
        .env("HOSTNAME", "box")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["agent"], "ana@box");
}

/// `cairn call` acts on the verbs' current task and moves it as they do.
#[test]
fn call_follows_the_current_task() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    build(d);
    run(d, &["current", FIX]);
    assert_eq!(
        run(d, &["call", "observe", "text=from call"]),
        format!("$ cairn call observe text=from call\nexit: 0\n--- stdout\nObserved on {FIX}.\n")
    );
    run(d, &["call", "task_fork", "name=sub step"]);
    assert_eq!(
        run(d, &["current"]),
        "$ cairn current\nexit: 0\n--- stdout\nCurrent task: 2026-01-01-sub-step.\n"
    );
}
