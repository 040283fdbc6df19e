//! `cairn graph` (issue 25): the three formats of a fixed graph as insta
//! snapshots (phases nested, depends-on arrows, every status, the ready
//! frontier, a claim, hostile names), the escaping of each format, and the
//! command itself on a store built by the verbs with the tool clock fixed.

use std::path::Path;
use std::process::{Command, Stdio};

use cairn::board::export::{dot, dot_escape, json, mermaid, mermaid_escape};
use cairn::board::graph::{Graph, GraphEdge, GraphTask};

const CAIRN: &str = env!("CARGO_BIN_EXE_cairn");
/// 2026-01-01 00:00:00 UTC.
const NOW: &str = "1767225600";

fn task(slug: &str, name: Option<&str>, status: &str, parent: Option<&str>) -> GraphTask {
    GraphTask {
        slug: slug.to_string(),
        name: name.map(str::to_string),
        status: status.to_string(),
        parent: parent.map(str::to_string),
        ready: false,
        claimed_by: None,
        claim_until: None,
    }
}

fn edge(from: &str, to: &str) -> GraphEdge {
    GraphEdge {
        from: from.to_string(),
        to: to.to_string(),
    }
}

/// A plan with two phases (the second with a phase of its own), every
/// status, one claim, one ready task, two arrows, and a second plan.
fn fixed() -> Graph {
    let mut build = task("b-build", Some("Build it"), "active", Some("plan"));
    build.claimed_by = Some("alice/1a2b".to_string());
    build.claim_until = Some(1_767_229_200); // 2026-01-01 01:00 UTC
    let mut test = task("b-test", None, "open", Some("b-build"));
    test.ready = true;
    Graph {
        tasks: vec![
            task("plan", Some("Ship the board"), "active", None),
            task("a-design", Some("Design"), "completed", Some("plan")),
            build,
            test,
            task("c-old", Some("Old idea"), "abandoned", Some("plan")),
            task("other", Some("Other plan"), "blocked", None),
        ],
        edges: vec![edge("b-build", "a-design"), edge("other", "b-test")],
    }
}

/// The hostile names: quotes, brackets, a newline, markup, `#`, `;`,
/// `&`, a backslash at the end, Mermaid's `end` and a backtick.
fn hostile() -> Graph {
    Graph {
        tasks: vec![
            task(
                "h1",
                Some("say \"hi\" [x] (y) {z} <b>bold</b>\nnext line"),
                "open",
                None,
            ),
            task(
                "h2",
                Some("<script>alert(1)</script> & #amp; a;b `tick` end\\"),
                "blocked",
                Some("h1"),
            ),
            task(
                "h3",
                Some("<img src=x onerror=alert(1)>"),
                "open",
                Some("h1"),
            ),
        ],
        edges: vec![edge("h2", "h3")],
    }
}

#[test]
fn mermaid_of_a_fixed_plan() {
    insta::assert_snapshot!(mermaid(&fixed()));
}

#[test]
fn dot_of_a_fixed_plan() {
    insta::assert_snapshot!(dot(&fixed()));
}

#[test]
fn json_of_a_fixed_plan() {
    insta::assert_snapshot!(json(&fixed()));
}

#[test]
fn hostile_names_in_every_format() {
    insta::assert_snapshot!("hostile_mermaid", mermaid(&hostile()));
    insta::assert_snapshot!("hostile_dot", dot(&hostile()));
    insta::assert_snapshot!("hostile_json", json(&hostile()));
}

#[test]
fn escapes() {
    assert_eq!(
        mermaid_escape("a \"b\" [c] <d>\ne#f;`g`\\"),
        "a #34;b#34; #91;c#93; #60;d#62; e#35;f#59;#96;g#96;#92;"
    );
    assert_eq!(
        dot_escape("a \"b\" [c] <d>\ne&f\\"),
        "a &quot;b&quot; [c] &lt;d&gt; e&amp;f\\"
    );
    // No label of the hostile graph holds a raw quote, bracket or angle
    // bracket besides the `<br/>` line breaks Mermaid reads.
    let m = mermaid(&hostile());
    for line in m.lines().filter(|l| l.contains("t1[") || l.contains("t2[")) {
        let inner = line
            .split_once("[\"")
            .and_then(|(_, r)| r.strip_suffix("\"]"))
            .unwrap_or_default()
            .replace("<br/>", "");
        assert!(!inner.is_empty(), "{line}");
        for bad in ['"', '[', ']', '<', '>', '`', '\n'] {
            assert!(!inner.contains(bad), "{bad} in {line}");
        }
    }
    let d = dot(&hostile());
    assert!(!d.contains("<script"), "{d}");
    assert!(!d.contains("<img"), "{d}");
}

/// Runs `cairn --db DIR/cairn.db ARGS` with the clock fixed: exit, stdout
/// and stderr as one text.
fn run(dir: &Path, args: &[&str]) -> String {
    let out = Command::new(CAIRN)
        .arg("--db")
        .arg(dir.join("cairn.db"))
        .args(args)
        .current_dir(dir)
        .env("CAIRN_NOW", NOW)
        .env("CAIRN_AGENT", "tester")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    format!(
        "$ cairn {}\nexit: {}\n--- stdout\n{}--- stderr\n{}",
        args.join(" "),
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

const PLAN: &str = "2026-01-01-ship-board";
const DESIGN: &str = "2026-01-01-design";
const BUILD: &str = "2026-01-01-build-it";

#[test]
fn the_command_on_a_store() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join(".git")).unwrap();
    for args in [
        vec!["add", "ship the board"],
        vec!["add", "design", "--under", PLAN],
        vec!["add", "build it", "--under", PLAN],
        vec!["dep", "add", BUILD, "--on", DESIGN],
        vec!["done", DESIGN],
        vec!["add", "second plan"],
    ] {
        let out = run(d, &args);
        assert!(out.contains("exit: 0"), "{out}");
    }
    insta::assert_snapshot!(
        "command",
        [
            run(d, &["graph", PLAN]),
            run(d, &["graph", PLAN, "--format", "dot"]),
            run(d, &["graph", "--all", "--format", "json"]),
            run(d, &["graph", "2026-01-01-nope"]),
        ]
        .join("\n")
    );
}
