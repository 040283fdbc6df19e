//! `cairn query` end to end (issue 6): the built binary on a seeded store —
//! text and JSON for every result shape, exit codes, stdin, `--explain`,
//! `--write`.

mod common;

use std::io::Write;
use std::process::{Command, Stdio};

use cairn::store::{EdgeType, Status};
use common::Fx;
use serde_json::{Value, json};

const CAIRN: &str = env!("CARGO_BIN_EXE_cairn");

/// `plan` with phases `alpha` and `beta` (beta depends on alpha), alpha with
/// priority=high and one observation, and a completed `gamma`.
fn seed() -> Fx {
    let mut fx = Fx::new();
    fx.create_described("plan", "the whole plan");
    fx.fork("plan", "alpha");
    fx.fork("plan", "beta");
    fx.link("beta", "alpha", EdgeType::DependsOn);
    fx.meta("alpha", "priority", "high");
    fx.observe("alpha", "found the tokenizer bug");
    fx.create("gamma");
    fx.status("gamma", Status::Completed);
    fx
}

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

fn cairn(fx: &Fx, args: &[&str], stdin: Option<&str>) -> Out {
    let db = fx.dir.path().join("cairn.db");
    let mut cmd = Command::new(CAIRN);
    cmd.arg("--db")
        .arg(&db)
        .args(args)
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut pipe = child.stdin.take().unwrap();
    if let Some(s) = stdin {
        pipe.write_all(s.as_bytes()).unwrap();
    }
    drop(pipe);
    let out = child.wait_with_output().unwrap();
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

fn text(fx: &Fx, q: &str) -> String {
    let o = cairn(fx, &["query", q], None);
    assert_eq!(o.code, 0, "{q}: {}", o.stderr);
    assert_eq!(o.stderr, "");
    o.stdout
}

fn json_of(fx: &Fx, q: &str) -> Value {
    let o = cairn(fx, &["query", "--format", "json", q], None);
    assert_eq!(o.code, 0, "{q}: {}", o.stderr);
    serde_json::from_str(&o.stdout).unwrap()
}

const ALPHA: &str = "2026-01-01-alpha";
const BETA: &str = "2026-01-01-beta";
const GAMMA: &str = "2026-01-01-gamma";
const PLAN: &str = "2026-01-01-plan";

#[test]
fn text_for_every_shape_is_the_mcp_text() {
    let fx = seed();
    assert_eq!(
        text(&fx, "(all)"),
        format!(
            "4 tasks:\n- {ALPHA} (active)\n- {BETA} (active)\n- {GAMMA} (completed)\n- {PLAN} (active)\n"
        )
    );
    assert_eq!(
        text(&fx, "(-> (node \"alpha\") (:enrich))"),
        format!("1 task:\n- {ALPHA} (active) obs=1 edges=2\n    priority: high\n")
    );
    assert_eq!(
        text(&fx, "(-> (active) (:ids))"),
        format!("3 tasks:\n- {ALPHA}\n- {BETA}\n- {PLAN}\n")
    );
    assert_eq!(text(&fx, "(-> (all) (:count))"), "4\n");
    assert_eq!(
        text(
            &fx,
            "(-> (all) (:where (has :parent)) (:select :status :parent :updated-ts))"
        ),
        format!(
            "2 tasks:\n- {ALPHA}  status=active  parent={PLAN}  updated-ts=1767225608 (2026-01-01)\n\
             - {BETA}  status=active  parent={PLAN}  updated-ts=1767225606 (2026-01-01)\n"
        )
    );
    assert_eq!(
        text(&fx, "(-> (all) (:group-by :status))"),
        format!(
            "2 groups:\n\n## active (3)\n- {ALPHA} (active)\n- {BETA} (active)\n- {PLAN} (active)\n\n\
             ## completed (1)\n- {GAMMA} (completed)\n"
        )
    );
    assert_eq!(
        text(&fx, "(-> (all) (:where (= :status \"blocked\")))"),
        "No matching tasks.\n"
    );
    assert_eq!(
        text(&fx, "(-> (dormant) (:ids))"),
        format!("1 task:\n- {GAMMA}\n")
    );
}

#[test]
fn json_task_set_carries_every_field() {
    let fx = seed();
    let v = json_of(
        &fx,
        "(-> (all) (:minus (node \"beta\")) (:sort :created-ts :asc))",
    );
    assert_eq!(
        v,
        json!([
            {
                "slug": PLAN, "status": "active", "description": "the whole plan", "depot": null,
                "parent": null, "display-name": PLAN, "created-ts": 1767225601,
                "updated-ts": 1767225605, "status-ts": 1767225601, "obs-count": 0,
                "edge-count": 2, "claimed-by": null, "claim-until": null, "metadata": {}
            },
            {
                "slug": ALPHA, "status": "active", "description": null, "depot": null,
                "parent": PLAN, "display-name": ALPHA, "created-ts": 1767225602,
                "updated-ts": 1767225608, "status-ts": 1767225602, "obs-count": 1,
                "edge-count": 2, "claimed-by": null, "claim-until": null,
                "metadata": {"priority": "high"}
            },
            {
                "slug": GAMMA, "status": "completed", "description": null, "depot": null,
                "parent": null, "display-name": GAMMA, "created-ts": 1767225609,
                "updated-ts": 1767225610, "status-ts": 1767225610, "obs-count": 0,
                "edge-count": 0, "claimed-by": null, "claim-until": null, "metadata": {}
            }
        ])
    );
}

#[test]
fn json_for_ids_count_projection_groups_and_empty() {
    let fx = seed();
    assert_eq!(
        json_of(&fx, "(-> (active) (:ids))"),
        json!([ALPHA, BETA, PLAN])
    );
    assert_eq!(json_of(&fx, "(-> (all) (:count))"), json!(4));
    assert_eq!(
        json_of(
            &fx,
            "(-> (all) (:where (has :parent)) (:select :status :parent :updated-ts))"
        ),
        json!([
            {"status": "active", "parent": PLAN, "updated-ts": 1767225608},
            {"status": "active", "parent": PLAN, "updated-ts": 1767225606}
        ])
    );
    assert_eq!(
        json_of(&fx, "(-> (node \"a\") (:select :priority))"),
        json!([{"priority": "high"}, {"priority": null}, {"priority": null}, {"priority": null}])
    );
    assert_eq!(
        json_of(&fx, "(-> (all) (:group-by :status))"),
        json!({
            "active": [
                {"slug": ALPHA, "display-name": ALPHA, "status": "active"},
                {"slug": BETA, "display-name": BETA, "status": "active"},
                {"slug": PLAN, "display-name": PLAN, "status": "active"}
            ],
            "completed": [{"slug": GAMMA, "display-name": GAMMA, "status": "completed"}]
        })
    );
    let none = "(all) (:where (= :status \"blocked\"))";
    assert_eq!(json_of(&fx, &format!("(-> {none})")), json!([]));
    assert_eq!(json_of(&fx, &format!("(-> {none} (:ids))")), json!([]));
    assert_eq!(json_of(&fx, &format!("(-> {none} (:count))")), json!(0));
    assert_eq!(
        json_of(&fx, &format!("(-> {none} (:select :slug))")),
        json!([])
    );
    assert_eq!(
        json_of(&fx, &format!("(-> {none} (:group-by :status))")),
        json!({})
    );
}

#[test]
fn json_reflection_rows_carry_their_props() {
    let fx = seed();
    assert_eq!(
        json_of(&fx, "(-> (edges) (:where (= :class \"structural\")))"),
        json!([
            {"slug": "forked-from", "class": "structural", "doc": json_of(&fx, "(-> (edges) (:where (= :slug \"forked-from\")) (:select :doc))")[0]["doc"]},
            {"slug": "phase-of", "class": "structural", "doc": json_of(&fx, "(-> (edges) (:where (= :slug \"phase-of\")) (:select :doc))")[0]["doc"]}
        ])
    );
}

#[test]
fn query_error_exits_1_with_a_caret_on_stderr() {
    let fx = seed();
    let o = cairn(&fx, &["query", "(-> (all) (:zelect :slug))"], None);
    assert_eq!(o.code, 1);
    assert_eq!(o.stdout, "");
    assert_eq!(
        o.stderr,
        "Query error: Unknown step :zelect; did you mean :select?\n   \
         ╭─[ query:1:12 ]\n   \
         │\n \
         1 │ (-> (all) (:zelect :slug))\n   \
         │            ───┬───  \n   \
         │               ╰───── Unknown step :zelect; did you mean :select?\n\
         ───╯\n"
    );
    let o = cairn(&fx, &["query", "((("], None);
    assert_eq!(o.code, 1);
    assert!(o.stderr.starts_with("Parse error: "), "{}", o.stderr);
    assert!(!o.stderr.contains('\x1b'), "NO_COLOR: no ANSI codes");
    // The gate: a mutation on the read surface.
    let o = cairn(&fx, &["query", "(-> (all) (:set-status! :blocked))"], None);
    assert_eq!(o.code, 1);
    assert_eq!(
        o.stderr.lines().next(),
        Some("Query error: Mutations need the task_query_write surface; task_query is read-only.")
    );
    // The same error as JSON output still goes to stderr, exit 1.
    let o = cairn(&fx, &["query", "--format", "json", "(bogus)"], None);
    assert_eq!(o.code, 1);
    assert_eq!(o.stdout, "");
    assert_eq!(
        o.stderr.lines().next(),
        Some("Query error: Unknown source bogus; did you mean edges?")
    );
}

#[test]
fn usage_errors_exit_2() {
    let fx = seed();
    let o = cairn(&fx, &["query", "--format", "yaml", "(all)"], None);
    assert_eq!(o.code, 2);
    assert!(
        o.stderr
            .contains("invalid value 'yaml' for '--format <FORMAT>'"),
        "{}",
        o.stderr
    );
    let o = cairn(&fx, &["query", "  "], None);
    assert_eq!(
        (o.code, o.stderr.as_str()),
        (2, "error: query is required.\n")
    );
    let o = cairn(&fx, &["query", "-"], Some(""));
    assert_eq!(
        (o.code, o.stderr.as_str()),
        (2, "error: query is required.\n")
    );
    let o = cairn(&fx, &["query", "--bogus"], None);
    assert_eq!(o.code, 2);
}

#[test]
fn stdin_input() {
    let fx = seed();
    let o = cairn(
        &fx,
        &["query", "-"],
        Some("(-> (all)\n  ; a comment\n  (:count))\n"),
    );
    assert_eq!(
        (o.code, o.stdout.as_str(), o.stderr.as_str()),
        (0, "4\n", "")
    );
    let o = cairn(
        &fx,
        &["query", "--format", "json", "-"],
        Some("(-> (dormant) (:ids))"),
    );
    assert_eq!(o.code, 0);
    assert_eq!(
        serde_json::from_str::<Value>(&o.stdout).unwrap(),
        json!([GAMMA])
    );
    // No QUERY and stdin not a terminal: read stdin too.
    let o = cairn(&fx, &["query"], Some("(-> (active) (:count))"));
    assert_eq!((o.code, o.stdout.as_str()), (0, "3\n"));
}

#[test]
fn explain_prints_sql_parameters_and_plan() {
    let fx = seed();
    let o = cairn(
        &fx,
        &[
            "query",
            "--explain",
            "(-> (active) (:where (has :priority)))",
        ],
        None,
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let lines: Vec<&str> = o.stdout.lines().collect();
    // The IR before and after the rewrites, and the rules that fired
    // (docs/planner.md "Rewrites").
    assert_eq!(
        lines[..9],
        [
            "-- IR",
            "tasks",
            "  filter (has :priority) [rank]",
            "    scan tasks where status in (open, active, blocked) and live [rank]",
            "-- rules fired",
            "filter-fusion ×1",
            "order-elision ×1",
            "-- optimized IR",
            "tasks",
        ]
    );
    assert_eq!(
        lines[9],
        "  scan tasks where status in (open, active, blocked) and live and (has :priority) [slug]"
    );
    assert_eq!(lines[10], "-- statement 1 of 1");
    // The root is a scan of the table: one SELECT, no stage (issue 23).
    assert_eq!(
        lines[11],
        "SELECT t.slug, COALESCE((SELECT fm.value FROM task_metadata fm WHERE fm.task_id = t.id AND fm.key = 'display-name'), t.slug), t.status, NULL, NULL, NULL FROM tasks t WHERE t.status IN ('open', 'active', 'blocked') AND substr(t.slug, 1, 1) <> '@' AND ((SELECT fm.value FROM task_metadata fm WHERE fm.task_id = t.id AND fm.key = ?1) IS NOT NULL) ORDER BY t.slug"
    );
    assert!(o.stdout.contains("FROM tasks"), "{}", o.stdout);
    assert!(o.stdout.contains("FROM task_metadata"), "{}", o.stdout);
    assert!(lines.contains(&"-- parameters"));
    assert!(lines.contains(&"?1 = \"priority\""), "{}", o.stdout);
    let plan_at = lines.iter().position(|l| *l == "-- query plan").unwrap();
    let plan = &lines[plan_at + 1..];
    assert!(
        plan.iter()
            .any(|l| l.contains("SEARCH t USING INDEX tasks_status")),
        "{plan:?}"
    );
    assert!(plan.iter().any(|l| l.contains("task_metadata")), "{plan:?}");
    // Nothing ran: the store is unchanged and explain of a write query
    // shows its statements without recording.
    let before = fx.events();
    let o = cairn(
        &fx,
        &[
            "query",
            "--write",
            "--explain",
            "(-> (node \"beta\") (:set-status! :blocked))",
        ],
        None,
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(o.stdout.lines().next(), Some("-- statement 1 of 2"));
    assert_eq!(fx.events(), before);
    // JSON explain is the structure.
    let o = cairn(
        &fx,
        &[
            "query",
            "--explain",
            "--format",
            "json",
            "(-> (all) (:count))",
        ],
        None,
    );
    let v: Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(v["statements"].as_array().unwrap().len(), 1);
    assert!(
        v["statements"][0]["sql"]
            .as_str()
            .unwrap()
            .contains("FROM tasks")
    );
}

#[test]
fn write_surface_records_and_returns() {
    let fx = seed();
    let before = fx.events();
    let o = cairn(
        &fx,
        &[
            "query",
            "--write",
            "(-> (node \"beta\") (:set-status! :blocked) (:ids))",
        ],
        None,
    );
    assert_eq!(
        (o.code, o.stdout.as_str()),
        (0, format!("1 task:\n- {BETA}\n").as_str())
    );
    assert_eq!(fx.events(), before + 1);
    assert_eq!(
        text(&fx, "(-> (all) (:where (= :status \"blocked\")) (:ids))"),
        format!("1 task:\n- {BETA}\n")
    );
    // JSON of a write query: one run, the new values.
    let v: Value = {
        let o = cairn(
            &fx,
            &[
                "query",
                "--write",
                "--format",
                "json",
                "(-> (node \"beta\") (:set! :owner \"ana\"))",
            ],
            None,
        );
        assert_eq!(o.code, 0, "{}", o.stderr);
        serde_json::from_str(&o.stdout).unwrap()
    };
    assert_eq!(v[0]["slug"], json!(BETA));
    assert_eq!(v[0]["status"], json!("blocked"));
    assert_eq!(fx.events(), before + 2);
}

#[test]
fn current_selects_the_task_for_views() {
    let fx = seed();
    let o = cairn(&fx, &["query", "(-> (query \"frontier\") (:ids))"], None);
    assert_eq!(o.code, 1);
    assert_eq!(
        o.stderr,
        "Query error: This query needs a current task; select one first.\n   \
         ╭─[ query:1:5 ]\n   \
         │\n \
         1 │ (-> (query \"frontier\") (:ids))\n   \
         │     ─────────┬────────  \n   \
         │              ╰────────── This query needs a current task; select one first.\n   \
         │ \n   \
         │ Help: cairn query --current SLUG gives this query a current task (cairn current shows the verbs' one).\n\
         ───╯\n"
    );
    let o = cairn(
        &fx,
        &[
            "query",
            "--current",
            PLAN,
            "(-> (query \"frontier\") (:ids))",
        ],
        None,
    );
    assert_eq!(
        (o.code, o.stdout.as_str()),
        (0, format!("1 task:\n- {ALPHA}\n").as_str())
    );
    let o = cairn(
        &fx,
        &["query", "--current", "2026-01-01-nope", "(current)"],
        None,
    );
    assert_eq!(
        (o.code, o.stderr.as_str()),
        (1, "No task 2026-01-01-nope.\n")
    );
}

#[test]
fn a_closed_stdout_is_not_a_crash() {
    // `cairn query ... | head`: the reader goes away before the result is
    // written; the write fails with EPIPE and cairn exits 0, quietly.
    let fx = seed();
    for args in [&["query", "(schema)"][..], &["repl"][..]] {
        let mut child = Command::new(CAIRN)
            .arg("--db")
            .arg(fx.dir.path().join("cairn.db"))
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let mut stdin = child.stdin.take().unwrap();
        if args[0] == "repl" {
            stdin.write_all(b"(schema)\n(schema)\n").unwrap();
        }
        drop(stdin);
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert_eq!(String::from_utf8(out.stderr).unwrap(), "", "{args:?}");
    }
}

#[test]
fn json_widening_never_reparses_metadata_keys() {
    // Metadata keys that are not TQ keywords (a space, an emoji, text that
    // would inject steps if printed back into a query) must not break a JSON
    // task-set query, nor change anything.
    let mut fx = Fx::new();
    fx.create("alpha");
    let inject = "slug) (:set-status! \"abandoned\") (:select :slug";
    fx.meta("alpha", "has space", "x");
    fx.meta("alpha", "🎉", "y");
    fx.meta("alpha", inject, "z");
    for args in [
        &["query", "--format", "json", "(all)"][..],
        &["query", "--write", "--format", "json", "(all)"][..],
    ] {
        let o = cairn(&fx, args, None);
        assert_eq!((o.code, o.stderr.as_str()), (0, ""), "{args:?}");
        let v: Value = serde_json::from_str(&o.stdout).unwrap();
        assert_eq!(
            v,
            json!([{
                "slug": ALPHA, "status": "active", "description": null, "depot": null,
                "parent": null, "display-name": ALPHA, "created-ts": 1767225601,
                "updated-ts": 1767225604, "status-ts": 1767225601, "obs-count": 0,
                "edge-count": 0, "claimed-by": null, "claim-until": null,
                "metadata": {"has space": "x", "🎉": "y", inject: "z"}
            }]),
            "{args:?}"
        );
    }
    assert_eq!(
        text(&fx, "(-> (all) (:ids))"),
        format!("1 task:\n- {ALPHA}\n")
    );
    assert_eq!(fx.events(), 4);
}

/// Runs cairn with `args` (no `--db` added), stdin `input`, and the reader
/// of stdout and/or stderr closed at once; returns the exit status and what
/// the other stream got.
fn closed(args: &[&str], input: &str, close_out: bool, close_err: bool) -> (Option<i32>, String) {
    let mut child = Command::new(CAIRN)
        .args(args)
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if close_out {
        drop(child.stdout.take());
    }
    if close_err {
        drop(child.stderr.take());
    }
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let other = if close_out { out.stderr } else { out.stdout };
    (out.status.code(), String::from_utf8(other).unwrap())
}

#[test]
fn closed_pipes_are_quiet_on_every_output_path() {
    // `cairn call ... | head -1`, `cairn query '(all' 2>&1 | head -1`: a
    // reader that went away ends the output quietly, with the status the
    // command would have had (it used to panic, exit 101).
    let fx = seed();
    let db = fx.dir.path().join("cairn.db");
    let db = db.to_str().unwrap();
    let schema = r#"{"query":"(schema)"}"#;
    let cases: Vec<(Vec<&str>, &str, bool, bool, i32)> = vec![
        (vec!["call", "task_query", schema], "", true, false, 0),
        (vec!["call", "task_query", schema], "", true, true, 0),
        (vec!["call", "no_such_tool"], "", true, true, 2),
        // The verbs (issue 12) write through the same quiet path.
        (vec!["ls", "--all"], "", true, false, 0),
        (vec!["ls", "--tree", "--json"], "", true, false, 0),
        (vec!["schema"], "", true, false, 0),
        (vec!["show", "nope"], "", false, true, 1),
        (vec!["completions", "bash"], "", true, false, 0),
        (vec!["man"], "", true, false, 0),
        (vec!["query", "(all"], "", false, true, 1),
        (
            vec!["query", "--format", "json", "(all"],
            "",
            false,
            true,
            1,
        ),
        (vec!["query", "--explain", "(all"], "", false, true, 1),
        (
            vec!["query", "--current", "nope", "(all)"],
            "",
            false,
            true,
            1,
        ),
        (vec!["query", "  "], "", false, true, 2),
        (
            vec!["repl"],
            "(-> (all) (:fol))\n(schema)\n",
            false,
            true,
            1,
        ),
        (vec!["repl"], ":bogus\n", false, true, 1),
        (vec!["repl"], ":bogus\n(schema)\n", true, true, 1),
        // stdout gone: reading stops, so the later :bogus never runs.
        (vec!["repl"], "(schema)\n:bogus\n", true, true, 0),
        (vec!["where"], "", true, false, 0),
        (vec!["verify"], "", true, false, 0),
        (vec!["rebuild"], "", true, false, 0),
    ];
    for (args, input, close_out, close_err, want) in cases {
        let mut full = vec!["--db", db];
        full.extend(&args);
        let (code, other) = closed(&full, input, close_out, close_err);
        assert_eq!(code, Some(want), "{args:?}");
        if close_out != close_err {
            assert!(!other.contains("panicked"), "{args:?}: {other}");
        }
    }
    // The store cannot be opened (its directory is a file): `error: ...`
    // on a closed stderr, exit 2.
    let file = fx.dir.path().join("plain-file");
    std::fs::write(&file, "x").unwrap();
    let bad = file.join("cairn.db");
    let (code, _) = closed(
        &["--db", bad.to_str().unwrap(), "query", "(all)"],
        "",
        false,
        true,
    );
    assert_eq!(code, Some(2));
}

#[test]
fn no_optimize_answers_alike_and_fires_no_rule() {
    let fx = seed();
    for q in [
        "(-> (all) (:minus (dormant)) (:ids))",
        "(-> (all) (:where (= (count (:follow :phase-of)) 0)) (:sort :obs-count :desc) (:take 2))",
        "(query \"plan-frontier\")",
    ] {
        let on = cairn(&fx, &["query", "--current", &common::s("plan"), q], None);
        let off = cairn(
            &fx,
            &["query", "--no-optimize", "--current", &common::s("plan"), q],
            None,
        );
        assert_eq!(on.code, 0, "{q}: {}", on.stderr);
        assert_eq!(
            (off.code, off.stdout.as_str()),
            (0, on.stdout.as_str()),
            "{q}"
        );
    }
    let o = cairn(
        &fx,
        &[
            "query",
            "--no-optimize",
            "--explain",
            "(-> (all) (:minus (dormant)) (:ids))",
        ],
        None,
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let lines: Vec<&str> = o.stdout.lines().collect();
    let at = lines.iter().position(|l| *l == "-- rules fired").unwrap();
    assert_eq!(lines[at + 1], "(none)");
    assert!(o.stdout.contains("EXCEPT"), "{}", o.stdout);
}

/// A mutation without `--write` names the flag; `--as` claims for that
/// agent and `(mine)` answers per agent (spec/tq.md §9 "Agent identity").
#[test]
fn claims_act_for_the_cli_agent_and_a_refused_mutation_names_write() {
    let mut fx = Fx::new();
    fx.create("alpha");
    let o = cairn(&fx, &["query", "(-> (all) (:claim! 60))"], None);
    assert_eq!(o.code, 1);
    assert_eq!(
        o.stderr
            .lines()
            .filter(|l| l.contains("Help:") || l.starts_with("Query error"))
            .map(str::trim)
            .collect::<Vec<_>>(),
        [
            "Query error: Mutations need the task_query_write surface; task_query is read-only.",
            "│ Help: cairn query --write runs write queries."
        ]
    );
    let claim = "(-> (query \"ready\") (:take 1) (:claim! 60) (:ids))";
    let o = cairn(&fx, &["--as", "ana", "query", "--write", claim], None);
    assert_eq!(
        (o.code, o.stdout.as_str()),
        (0, "1 task:\n- 2026-01-01-alpha\n")
    );
    let o = cairn(&fx, &["--as", "bob", "query", "--write", claim], None);
    assert_eq!((o.code, o.stdout.as_str()), (0, "No matching tasks.\n"));
    let o = cairn(
        &fx,
        &["--as", "ana", "query", "(-> (mine) (:select :claimed-by))"],
        None,
    );
    assert_eq!(o.stdout, "1 task:\n- 2026-01-01-alpha  claimed-by=ana\n");
    let o = cairn(&fx, &["--as", "", "query", "(mine)"], None);
    assert_eq!(o.code, 2);
    assert!(
        o.stderr
            .contains("an agent name needs 1 to 64 characters and no control characters."),
        "{}",
        o.stderr
    );
}

/// An invalid `CAIRN_AGENT` is refused, never replaced by `USER@HOST`
/// (two bad names would otherwise both win one claim as the same agent).
/// An empty one counts as unset (issue 27; `cli_edits`).
#[test]
fn an_invalid_cairn_agent_is_refused() {
    let fx = Fx::new();
    let db = fx.dir.path().join("cairn.db");
    for bad in ["a\tb", &"w".repeat(65)] {
        let out = Command::new(CAIRN)
            .arg("--db")
            .arg(&db)
            .args(["query", "(mine)"])
            .env("CAIRN_AGENT", bad)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr).trim_end(),
            "error: CAIRN_AGENT: an agent name needs 1 to 64 characters and no control characters.",
            "{bad:?}"
        );
    }
    let out = Command::new(CAIRN)
        .arg("--db")
        .arg(&db)
        .args(["query", "(-> (mine) (:count))"])
        .env("CAIRN_AGENT", "ana")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "0\n");
}

/// Every CLI path that makes a phase-of edge refuses a cycle with the same
/// sentence and records nothing (issue 26; docs/store.md "Phase-of
/// cycles"): `cairn query --write` with `(:link! :phase-of ...)` and
/// `cairn call task_link`.
#[test]
fn cli_write_paths_refuse_a_phase_of_cycle() {
    let fx = seed();
    let before = fx.events();
    let (plan, alpha, beta) = (common::s("plan"), common::s("alpha"), common::s("beta"));
    let out = cairn(
        &fx,
        &[
            "query",
            "--write",
            &format!(r#"(-> (node "01-plan") (:link! :phase-of "{alpha}"))"#),
        ],
        None,
    );
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert_eq!(out.stdout, "");
    assert_eq!(
        out.stderr.trim_end(),
        format!(
            "Query error: {plan} phase-of {alpha} would make a cycle: {plan} → {alpha} → {plan}. A plan cannot contain itself."
        )
    );
    let out = cairn(
        &fx,
        &[
            "call",
            "task_link",
            &json!({"task_id": plan, "target_id": beta, "edge_type": "phase-of"}).to_string(),
        ],
        None,
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_eq!(
        out.stdout.trim_end(),
        format!(
            "{plan} phase-of {beta} would make a cycle: {plan} → {beta} → {plan}. A plan cannot contain itself."
        )
    );
    assert_eq!(fx.events(), before);
}

/// A text result over its 16,000-character budget ends with the
/// continuation line, and `cairn query` says on stderr how to get every
/// row: `--format json`, which is not cut (all 400 here).
#[test]
fn a_cut_text_names_the_json_that_is_not_cut() {
    let mut fx = Fx::new();
    for i in 0..400 {
        fx.create(&format!(
            "a task with a name long enough to fill the text {i:03}"
        ));
    }
    let o = cairn(&fx, &["query", "(-> (all) (:ids))"], None);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let last = o.stdout.trim_end().lines().last().unwrap_or_default();
    let shown = o.stdout.lines().filter(|l| l.starts_with("- ")).count();
    assert!(shown < 400, "{shown}");
    assert_eq!(
        last,
        format!(
            "… truncated: showing {shown} of 400 tasks; narrow the query or add (:take {shown})."
        )
    );
    assert_eq!(
        o.stderr,
        "cairn query: the text stops at 16,000 characters; --format json prints every row.\n"
    );
    let o = cairn(
        &fx,
        &["query", "--format", "json", "(-> (all) (:ids))"],
        None,
    );
    assert_eq!((o.code, o.stderr.as_str()), (0, ""));
    let v: Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(v.as_array().map(Vec::len), Some(400), "{v}");
    // Under the budget, nothing on stderr.
    let o = cairn(&fx, &["query", "(-> (all) (:take 3) (:ids))"], None);
    assert_eq!((o.code, o.stderr.as_str()), (0, ""));
}
