//! The verbs on PostgreSQL (spec/team.md: the same CLI and answers): a
//! person's day — plan, claim, note, a dependency, an edit, done, the tree,
//! search, the log, JSON, `cairn graph` — run command by command on a SQLite project and
//! on a PostgreSQL store (`CAIRN_DB=postgres://…`); every command's stdout,
//! stderr and exit status must be identical.

mod common;

use std::path::Path;
use std::process::Command;

use common::pg;

const DAY: &[&[&str]] = &[
    &["add", "tune search ranking"],
    &[
        "add",
        "tokenizer fix",
        "--under",
        "2026-01-01-tune-search-ranking",
    ],
    &[
        "add",
        "prefix queries",
        "--under",
        "2026-01-01-tune-search-ranking",
    ],
    &[
        "dep",
        "add",
        "2026-01-01-prefix-queries",
        "--on",
        "2026-01-01-tokenizer-fix",
    ],
    &["ready"],
    &["ready", "--json"],
    &["claim"],
    &["note", "splitting on - breaks file.rs:45-78 lookups"],
    &[
        "edit",
        "-d",
        "split on whitespace only",
        "--set",
        "priority=high",
    ],
    &["show"],
    &["show", "--json"],
    &["done"],
    &["ls", "--tree"],
    &["ls", "--status", "completed", "--json"],
    &["dep", "tree", "2026-01-01-tune-search-ranking"],
    &["graph", "2026-01-01-tune-search-ranking", "--format", "dot"],
    &["graph", "--all", "--format", "json"],
    &["graph"],
    &["ready"],
    &["search", "file.rs:45-78"],
    &["log", "2026-01-01-tokenizer-fix"],
    &["reopen", "2026-01-01-tokenizer-fix"],
    &[
        "abandon",
        "2026-01-01-tokenizer-fix",
        "--reason",
        "superseded",
    ],
    &["current"],
    &["release", "2026-01-01-nope"],
    &[
        "dep",
        "add",
        "2026-01-01-nope",
        "--on",
        "2026-01-01-tokenizer-fix",
    ],
    &["schema"],
];

fn run(dir: &Path, db: Option<&str>, args: &[&str]) -> (String, String, Option<i32>) {
    run_in(dir, db, args, None)
}

fn run_in(
    dir: &Path,
    db: Option<&str>,
    args: &[&str],
    stdin: Option<&str>,
) -> (String, String, Option<i32>) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cairn"));
    cmd.args(args)
        .current_dir(dir)
        .env("HOME", dir)
        .env("CAIRN_NOW", "1767225600")
        .env("CAIRN_AGENT", "ana")
        .env("NO_COLOR", "1");
    match db {
        Some(url) => cmd.env("CAIRN_DB", url),
        None => cmd.env_remove("CAIRN_DB"),
    };
    let out = match stdin {
        None => cmd.output().unwrap(),
        Some(text) => {
            use std::io::Write;
            let mut child = cmd
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            child
                .stdin
                .take()
                .unwrap()
                .write_all(text.as_bytes())
                .unwrap();
            child.wait_with_output().unwrap()
        }
    };
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code(),
    )
}

#[test]
fn a_persons_day_is_the_same_on_both_engines() {
    let Some(url) = pg::url() else { return };
    let here = tempfile::tempdir().unwrap();
    let there = tempfile::tempdir().unwrap();
    for d in [&here, &there] {
        std::fs::create_dir(d.path().join(".git")).unwrap();
    }
    let mut nonempty = 0;
    let mut untils = 0;
    for args in DAY {
        let (a, until_a) = without_claim_clock(run(here.path(), None, args));
        let (b, until_b) = without_claim_clock(run(there.path(), Some(&url), args));
        assert_eq!(a, b, "cairn {}", args.join(" "));
        // Each store judges claims by its own system clock (docs/store.md
        // "Claims: one clock decides"), so a claim's end is the moment of
        // the command plus the lease: the two runs are a few ms apart.
        assert_eq!(until_a.len(), until_b.len(), "cairn {}", args.join(" "));
        for (x, y) in until_a.iter().zip(&until_b) {
            assert!(
                (x - y).abs() <= 5,
                "cairn {}: until {x} vs {y}",
                args.join(" ")
            );
        }
        untils += until_a.len();
        nonempty += usize::from(!a.0.is_empty());
    }
    // `show --json` carries the claim's end (claim --json is not in the day).
    assert_eq!(untils, 1);
    assert!(nonempty >= 20, "{nonempty}");
    // The PostgreSQL run wrote there, not to a SQLite file.
    assert!(!there.path().join(".cairn/cairn.db").exists());
    let (out, _, code) = run(there.path(), Some(&url), &["verify"]);
    assert_eq!(code, Some(0), "{out}");
}

/// `out` with each claim end read off the system clock masked: the JSON
/// `"until": SECONDS` becomes `"until": 0` (the seconds returned, in order)
/// and the text's `until YYYY-MM-DD HH:MM UTC` becomes `until <minute> UTC`.
fn without_claim_clock(
    out: (String, String, Option<i32>),
) -> ((String, String, Option<i32>), Vec<i64>) {
    let mut seconds = Vec::new();
    let mut mask = |text: &str| {
        let mut rest = text;
        let mut done = String::new();
        while let Some(at) = rest.find("until") {
            let (head, tail) = rest.split_at(at + "until".len());
            done.push_str(head);
            rest = tail;
            if let Some(num) = rest.strip_prefix("\": ") {
                let digits: String = num.chars().take_while(char::is_ascii_digit).collect();
                if !digits.is_empty() {
                    seconds.push(digits.parse::<i64>().unwrap());
                    done.push_str("\": 0");
                    rest = &num[digits.len()..];
                }
            } else if let Some(stamp) = rest.strip_prefix(' ') {
                let b = stamp.as_bytes();
                let minute = b.len() >= 20
                    && b[..16].iter().enumerate().all(|(i, c)| match i {
                        4 | 7 => *c == b'-',
                        10 => *c == b' ',
                        13 => *c == b':',
                        _ => c.is_ascii_digit(),
                    })
                    && &stamp[16..20] == " UTC";
                if minute {
                    done.push_str(" <minute> UTC");
                    rest = &stamp[20..];
                }
            }
        }
        done.push_str(rest);
        done
    };
    let stdout = mask(&out.0);
    let stderr = mask(&out.1);
    ((stdout, stderr, out.2), seconds)
}

/// `cairn repl` piped: the same forms give the same output on both engines
/// (reads, a write on the write surface, meta commands, an error).
#[test]
fn the_piped_repl_is_the_same_on_both_engines() {
    let Some(url) = pg::url() else { return };
    let here = tempfile::tempdir().unwrap();
    let there = tempfile::tempdir().unwrap();
    for d in [&here, &there] {
        std::fs::create_dir(d.path().join(".git")).unwrap();
    }
    for args in [
        &["add", "alpha task"][..],
        &["add", "beta task", "--under", "2026-01-01-alpha-task"],
    ] {
        assert_eq!(
            run(here.path(), None, args),
            run(there.path(), Some(&url), args)
        );
    }
    let forms = "(-> (all) (:select :slug :status))\n(-> (all)\n  (:count))\n:schema\n(-> (nope))\n:current 2026-01-01-beta-task\n(current)\n";
    let a = run_in(here.path(), None, &["repl"], Some(forms));
    let b = run_in(there.path(), Some(&url), &["repl"], Some(forms));
    assert_eq!(a, b);
    assert!(a.0.contains("2 tasks:"), "{}", a.0);
    let write = "(-> (all) (:set! :priority \"high\") (:count))\n(-> (all) (:where (= :priority \"high\")) (:ids))\n";
    let a = run_in(here.path(), None, &["repl", "--write"], Some(write));
    let b = run_in(there.path(), Some(&url), &["repl", "--write"], Some(write));
    assert_eq!(a, b);
    assert_eq!(
        a.0,
        "2\n2 tasks:\n- 2026-01-01-alpha-task\n- 2026-01-01-beta-task\n"
    );
}

/// `init` and `doctor` on PostgreSQL: one sentence naming what does run
/// there (`board`, `graph` and `schema` included), exit 2.
#[test]
fn the_commands_not_on_postgresql_say_what_runs_there() {
    let Some(url) = pg::url() else { return };
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    for command in ["init", "doctor"] {
        let (out, err, code) = run(dir.path(), Some(&url), &[command]);
        assert_eq!(
            (out.as_str(), err.as_str(), code),
            (
                "",
                format!(
                    "error: `cairn {command}` does not run on a PostgreSQL store yet (today: the verbs, schema, serve (stdio and --http), board, graph, token, call, query, repl, watch, where, verify, rebuild, push, export; see docs/team.md); use a SQLite store (drop --db/CAIRN_DB) and `cairn push` to copy it\n"
                )
                .as_str(),
                Some(2)
            )
        );
    }
}
