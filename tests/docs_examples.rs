//! The command-line examples of README.md, docs/cli.md and docs/connect.md
//! run, so they cannot drift (issue 27).
//!
//! The convention (docs/cli.md "Examples in these documents"): an example
//! is a fenced `console` block right after a line
//! `<!-- example: NAME -->`. In it a line starting with `$ ` is a command
//! (run by `sh -c`, with the built `cairn` first on `PATH`); the lines up
//! to the next command are exactly what it prints, stdout then stderr. A
//! last output line `[exit N]` says it exits N (else it must exit 0); a
//! line `...` stands for any number of lines; trailing spaces are not
//! compared (editors strip them from Markdown). The blocks of one NAME in one
//! file are one session: they run in order in one fresh project — a
//! temporary directory with `.git/`, `HOME` inside it, `CAIRN_NOW` fixed at
//! 2026-01-01 00:00:00 UTC (so slugs and times show the date the docs
//! show), `CAIRN_AGENT=ana` and `D=2026-01-01` (the README's `D=$(date -u
//! +%F)`). The project's path prints as `/path/to/project`. A console
//! block without a name, or a `sh` block with a `cairn` command line,
//! fails the test; examples that cannot run here are skipped by name
//! in SKIPPED, each with its reason.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};

/// 2026-01-01 00:00:00 UTC.
const NOW: &str = "1767225600";
const DATE: &str = "2026-01-01";

/// The documents whose examples run.
const DOCS: [&str; 3] = ["README.md", "docs/cli.md", "docs/connect.md"];

/// Examples that cannot run offline in a test, by (document, name): why.
const SKIPPED: [(&str, &str, &str); 3] = [
    (
        "docs/cli.md",
        "repl-terminal",
        "interactive: the line editor needs a terminal (tests/repl_pty.rs drives one)",
    ),
    (
        "docs/cli.md",
        "watch",
        "runs until Ctrl-C and prints when another process writes (tests/cli_watch.rs)",
    ),
    (
        "docs/connect.md",
        "http-server",
        "starts a server that runs until SIGINT (tests/mcp_http.rs)",
    ),
];

/// One command of an example and what the docs say it does.
#[derive(Debug)]
struct Step {
    line: usize,
    command: String,
    output: Vec<String>,
    exit: i32,
}

/// The examples of `doc` (its text `text`), by name in order of first
/// appearance, each a list of steps; plus the convention's violations.
fn examples(doc: &str, text: &str) -> (Vec<(String, Vec<Step>)>, Vec<String>) {
    let lines: Vec<&str> = text.lines().collect();
    let mut order: Vec<String> = Vec::new();
    let mut by_name: BTreeMap<String, Vec<Step>> = BTreeMap::new();
    let mut faults = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        // A fence: three backticks and at most a one-word info string.
        let Some(lang) = lines[i]
            .strip_prefix("```")
            .filter(|l| !l.starts_with('`') && !l.contains(' '))
        else {
            i += 1;
            continue;
        };
        let start = i;
        let mut end = i + 1;
        while end < lines.len() && lines[end] != "```" {
            end += 1;
        }
        let body = &lines[start + 1..end.min(lines.len())];
        match lang {
            "console" => {
                let name = start
                    .checked_sub(1)
                    .and_then(|p| lines[p].strip_prefix("<!-- example: "))
                    .and_then(|r| r.strip_suffix(" -->"));
                let Some(name) = name else {
                    faults.push(format!(
                        "{doc}:{}: a console block needs a line `<!-- example: NAME -->` right before it",
                        start + 1
                    ));
                    i = end + 1;
                    continue;
                };
                if !by_name.contains_key(name) {
                    order.push(name.to_string());
                }
                let steps = by_name.entry(name.to_string()).or_default();
                for (k, l) in body.iter().enumerate() {
                    if let Some(cmd) = l.strip_prefix("$ ") {
                        steps.push(Step {
                            line: start + 2 + k,
                            command: cmd.to_string(),
                            output: Vec::new(),
                            exit: 0,
                        });
                    } else if let Some(s) = steps.last_mut() {
                        s.output.push(l.trim_end().to_string());
                    } else {
                        faults.push(format!(
                            "{doc}:{}: a console block starts with a `$ ` command line",
                            start + 2 + k
                        ));
                    }
                }
                for s in steps.iter_mut() {
                    if let Some(last) = s.output.last()
                        && let Some(n) = last
                            .strip_prefix("[exit ")
                            .and_then(|r| r.strip_suffix(']'))
                    {
                        s.exit = n.parse().unwrap();
                        s.output.pop();
                    }
                }
            }
            "sh" => {
                for (k, l) in body.iter().enumerate() {
                    if l.starts_with("cairn ") || l.contains("| cairn ") {
                        faults.push(format!(
                            "{doc}:{}: a cairn command in a sh block; make it a console example",
                            start + 2 + k
                        ));
                    }
                }
            }
            _ => {}
        }
        i = end + 1;
    }
    let list = order
        .into_iter()
        .map(|n| {
            let steps = by_name.remove(&n).unwrap_or_default();
            (n, steps)
        })
        .collect();
    (list, faults)
}

/// Whether `actual` is `expected`, where an expected line `...` matches
/// any number of lines.
fn matches(expected: &[String], actual: &[&str]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((e, rest)) if e == "..." => (0..=actual.len()).any(|k| matches(rest, &actual[k..])),
        Some((e, rest)) => actual
            .split_first()
            .is_some_and(|(a, more)| a == e && matches(rest, more)),
    }
}

/// Runs `command` in the project `dir`: (exit status, stdout then stderr
/// with the project's path as `/path/to/project`).
fn run(dir: &Path, command: &str) -> (i32, String) {
    let cairn = Path::new(env!("CARGO_BIN_EXE_cairn"));
    let bin = cairn.parent().unwrap();
    let path = std::env::join_paths(std::iter::once(bin.to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    let out = Command::new("sh")
        .arg("-c")
        .arg(command)
        .current_dir(dir)
        .env("PATH", path)
        .env("HOME", dir.join("home"))
        .env("CAIRN_NOW", NOW)
        .env("CAIRN_AGENT", "ana")
        .env("D", DATE)
        .env_remove("CAIRN_DB")
        .env_remove("XDG_DATA_HOME")
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("CAIRN_PG_SCHEMA")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let root = dir.canonicalize().unwrap();
    let text = text
        .replace(&root.display().to_string(), "/path/to/project")
        .replace(&dir.display().to_string(), "/path/to/project");
    (out.status.code().unwrap_or(-1), text)
}

/// A fresh project: a temporary directory with `.git/` and a home.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    std::fs::create_dir(dir.path().join("home")).unwrap();
    dir
}

#[test]
fn the_examples_run_as_documented() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut failures: Vec<String> = Vec::new();
    let mut ran = Vec::new();
    let mut skipped_seen = Vec::new();
    for doc in DOCS {
        let text = std::fs::read_to_string(root.join(doc)).unwrap();
        let (list, faults) = examples(doc, &text);
        failures.extend(faults);
        for (name, steps) in list {
            if let Some((_, _, why)) = SKIPPED.iter().find(|(d, n, _)| *d == doc && *n == name) {
                eprintln!("skipped {doc} example {name}: {why}");
                skipped_seen.push((doc, name));
                continue;
            }
            let dir = project();
            for s in &steps {
                let (code, out) = run(dir.path(), &s.command);
                let got: Vec<&str> = out.lines().map(str::trim_end).collect();
                if code != s.exit || !matches(&s.output, &got) {
                    failures.push(format!(
                        "{doc}:{}: example {name}: `$ {}`\nexpected (exit {}):\n{}\ngot (exit {code}):\n{out}",
                        s.line,
                        s.command,
                        s.exit,
                        s.output.join("\n"),
                    ));
                }
            }
            ran.push(format!("{doc} {name} ({} commands)", steps.len()));
        }
    }
    for (doc, name, _) in SKIPPED {
        if !skipped_seen.contains(&(doc, name.to_string())) {
            failures.push(format!(
                "SKIPPED names {doc} example {name}, which is not there"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    // Every example ran: none was lost to a broken marker.
    assert_eq!(
        ran,
        [
            "README.md first-session (20 commands)",
            "docs/cli.md verbs (14 commands)",
            "docs/cli.md init (1 commands)",
            "docs/cli.md init-existing (3 commands)",
            "docs/cli.md init-json (1 commands)",
            "docs/cli.md call (6 commands)",
            "docs/cli.md completions (5 commands)",
            "docs/cli.md query (8 commands)",
            "docs/cli.md repl-piped (3 commands)",
            "docs/connect.md call (4 commands)",
            "docs/connect.md tokens (3 commands)",
        ]
    );
}

#[test]
fn the_convention_is_checked() {
    let text = "<!-- example: a -->\n```console\n$ cairn ls\nNo tasks.\n$ false\n[exit 1]\n```\n\n```console\n$ x\n```\n```sh\ncairn ls\n```\n";
    let (list, faults) = examples("t.md", text);
    assert_eq!(list.len(), 1);
    let steps = &list[0].1;
    assert_eq!(steps.len(), 2);
    assert_eq!((steps[0].command.as_str(), steps[0].exit), ("cairn ls", 0));
    assert_eq!(steps[0].output, ["No tasks."]);
    assert_eq!((steps[1].command.as_str(), steps[1].exit), ("false", 1));
    assert!(steps[1].output.is_empty());
    assert_eq!(
        faults,
        [
            "t.md:9: a console block needs a line `<!-- example: NAME -->` right before it",
            "t.md:13: a cairn command in a sh block; make it a console example",
        ]
    );
    let e = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert!(matches(&e(&["a", "...", "d"]), &["a", "b", "c", "d"]));
    assert!(matches(&e(&["a", "..."]), &["a"]));
    assert!(!matches(&e(&["a", "...", "d"]), &["a", "b"]));
    assert!(!matches(&e(&["a"]), &["a", "b"]));
}
