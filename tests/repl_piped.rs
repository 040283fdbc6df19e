//! `cairn repl` with stdin not a terminal (issue 6): forms are read one
//! after another, a form ends where its parens balance, and each result is
//! printed; meta commands work the same way.

mod common;

use std::io::Write;
use std::process::{Command, Stdio};

use cairn::store::EdgeType;
use common::Fx;

const CAIRN: &str = env!("CARGO_BIN_EXE_cairn");

fn seed() -> Fx {
    let mut fx = Fx::new();
    fx.create("plan");
    fx.fork("plan", "alpha");
    fx.fork("plan", "beta");
    fx.link("beta", "alpha", EdgeType::DependsOn);
    fx
}

fn repl(fx: &Fx, args: &[&str], input: &str) -> (i32, String, String) {
    repl_bytes(fx, args, input.as_bytes())
}

fn repl_bytes(fx: &Fx, args: &[&str], input: &[u8]) -> (i32, String, String) {
    let mut child = Command::new(CAIRN)
        .arg("--db")
        .arg(fx.dir.path().join("cairn.db"))
        .arg("repl")
        .args(args)
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn three_forms_in_three_results_out() {
    let fx = seed();
    let input = "(-> (all) (:count))\n\
                 (-> (node \"plan\")\n    ; children of the plan\n    (:follow :phase-of)\n    (:ids))\n\
                 \n\
                 (-> (all) (:where (= :slug \"2026-01-01-alpha\")))\n";
    let (code, out, err) = repl(&fx, &[], input);
    assert_eq!((code, err.as_str()), (0, ""));
    assert_eq!(
        out,
        "3\n\
         2 tasks:\n- 2026-01-01-alpha\n- 2026-01-01-beta\n\
         1 task:\n- 2026-01-01-alpha (active)\n"
    );
}

#[test]
fn current_sets_the_session_task_for_plan_and_frontier() {
    let fx = seed();
    let input = "(query \"plan-frontier\")\n\
                 :current 2026-01-01-nope\n\
                 :current 2026-01-01-plan\n\
                 (-> (query \"frontier\") (:ids))\n\
                 (-> (current) (:ids))\n\
                 :current\n";
    let (code, out, err) = repl(&fx, &[], input);
    assert_eq!(code, 1, "a form failed");
    assert_eq!(
        out,
        "Current task: 2026-01-01-plan.\n\
         1 task:\n- 2026-01-01-alpha\n\
         1 task:\n- 2026-01-01-plan\n\
         Current task: 2026-01-01-plan.\n"
    );
    let err: Vec<&str> = err.lines().collect();
    assert_eq!(
        err.first(),
        Some(&"Query error: This query needs a current task; select one first.")
    );
    assert_eq!(err.last(), Some(&"No task 2026-01-01-nope."));
}

#[test]
fn write_on_then_a_mutation_and_off_again() {
    let fx = seed();
    let before = fx.events();
    let input = "(-> (node \"alpha\") (:set-status! :completed) (:count))\n\
                 :write on\n\
                 (-> (node \"alpha\") (:set-status! :completed) (:count))\n\
                 :write off\n\
                 (-> (dormant) (:ids))\n";
    let (code, out, err) = repl(&fx, &[], input);
    assert_eq!(code, 1);
    assert_eq!(
        out,
        "Write surface: mutations are recorded.\n\
         1\n\
         Read surface: mutations are refused.\n\
         1 task:\n- 2026-01-01-alpha\n"
    );
    assert!(
        err.starts_with(
            "Query error: Mutations need the task_query_write surface; task_query is read-only.\n"
        ),
        "{err}"
    );
    assert_eq!(fx.events(), before + 1);
    // `--write` starts on the write surface.
    let (code, out, _) = repl(
        &fx,
        &["--write"],
        "(-> (node \"beta\") (:set! :owner \"ana\") (:count))\n",
    );
    assert_eq!((code, out.as_str()), (0, "1\n"));
}

#[test]
fn errors_carry_a_caret_and_reading_goes_on() {
    let fx = seed();
    let (code, out, err) = repl(
        &fx,
        &[],
        "(-> (all) (:fol :phase-of))\n(-> (all) (:count))\n",
    );
    assert_eq!(code, 1);
    assert_eq!(out, "3\n");
    assert_eq!(
        err,
        "Query error: Unknown step :fol; did you mean :follow?\n   \
         ╭─[ query:1:12 ]\n   \
         │\n \
         1 │ (-> (all) (:fol :phase-of))\n   \
         │            ──┬─  \n   \
         │              ╰─── Unknown step :fol; did you mean :follow?\n\
         ───╯\n"
    );
}

#[test]
fn meta_commands() {
    let fx = seed();
    let input = ":help\n:bogus\n:sql (-> (all) (:count))\n:explain (-> (all) (:count))\n\
                 :schema\n:views\n:quit\n(-> (all) (:count))\n";
    let (code, out, err) = repl(&fx, &[], input);
    assert_eq!(code, 1);
    assert_eq!(err, "Unknown command :bogus; try :help.\n");
    assert!(out.starts_with("Type a TQ query and press Enter;"), "{out}");
    assert!(out.contains("  :current [SLUG]     show or set the current task"));
    assert!(out.contains("SELECT count(*)"), "{out}");
    assert!(out.contains("-- query plan\n"), "{out}");
    assert!(
        out.contains("Steps\n\nname          kind         signature"),
        "{out}"
    );
    assert!(
        out.contains("\n:select       shaper       field...                                 Projection of the named fields.\n"),
        "{out}"
    );
    assert!(
        out.contains("- plan-frontier  origin=builtin  source="),
        "{out}"
    );
    // :quit stops reading: the last count never ran.
    assert!(!out.ends_with("3\n"), "{out}");
}

#[test]
fn a_twenty_thousand_line_form_is_read() {
    // The balance state is kept line by line, so a long form is read in
    // linear time (it used to rescan the whole buffer per line).
    let fx = seed();
    let input = format!("(-> (all)\n{}(:count))\n", ";\n".repeat(19_998));
    assert_eq!(input.lines().count(), 20_000);
    let (code, out, err) = repl(&fx, &[], &input);
    assert_eq!((code, out.as_str(), err.as_str()), (0, "3\n", ""));
}

#[test]
fn a_form_past_64_kib_is_refused_and_the_next_one_runs() {
    let fx = seed();
    // 10 bytes, then 10-byte lines: the buffer passes 65536 bytes at 65540.
    let input = format!(
        "(-> (all)\n{}(:count))\n(-> (all) (:count))\n",
        "; padding\n".repeat(7_000)
    );
    let (code, out, err) = repl(&fx, &[], &input);
    assert_eq!((code, out.as_str()), (1, "3\n"));
    assert!(
        err.starts_with(
            "Parse error: Query text is 65540 bytes; the limit is 65536 bytes (64 KiB).\n"
        ),
        "{err}"
    );
    assert_eq!(err.matches("error").count(), 1, "{err}");
}

#[test]
fn a_line_that_is_not_utf8_is_skipped() {
    let fx = seed();
    let input: &[u8] = b"(-> (all) (:count))\n\xff\xfe\n(-> (all)\n\xc3\n  (:count))\n:quit\n";
    let (code, out, err) = repl_bytes(&fx, &[], input);
    assert_eq!(code, 1);
    assert_eq!(out, "3\n3\n");
    assert_eq!(
        err,
        "line 2 is not valid UTF-8; skipped.\nline 4 is not valid UTF-8; skipped.\n"
    );
}

#[test]
fn meta_commands_without_arguments_refuse_them() {
    let fx = seed();
    let input =
        ":quit now\n:help extra\n:q x\n:schema all\n:views x\n(-> (all) (:count))\n:quit\n(all)\n";
    let (code, out, err) = repl(&fx, &[], input);
    assert_eq!(code, 1);
    assert_eq!(out, "3\n");
    assert_eq!(
        err,
        ":quit takes no arguments.\n:help takes no arguments.\n:q takes no arguments.\n\
         :schema takes no arguments.\n:views takes no arguments.\n"
    );
}
