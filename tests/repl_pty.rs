//! The interactive REPL driven through a pseudo-terminal (issue 6): a
//! multi-line query, an error with its caret, `:write on` then a mutation,
//! tab completion of `(:fol` to `(:follow`, Ctrl-C dropping the input, and
//! Ctrl-D leaving with exit 0. rexpect gives the child a terminal, so this
//! runs the same on CI, where the test's own stdin is not one.

mod common;

use std::process::Command;

use cairn::store::EdgeType;
use common::Fx;
use rexpect::session::{PtySession, spawn_command};

const CAIRN: &str = env!("CARGO_BIN_EXE_cairn");
/// Generous: CI machines are slow.
const TIMEOUT_MS: u64 = 30_000;

/// rexpect reads the terminal byte by byte as chars: spell a needle the
/// same way so non-ASCII text (ariadne's box drawing) matches.
fn raw(s: &str) -> String {
    s.bytes().map(char::from).collect()
}

fn spawn(fx: &Fx) -> PtySession {
    let mut cmd = Command::new(CAIRN);
    cmd.arg("--db")
        .arg(fx.dir.path().join("cairn.db"))
        .arg("repl")
        .env("TERM", "xterm")
        .env("NO_COLOR", "1");
    let mut p = spawn_command(cmd, Some(TIMEOUT_MS)).unwrap();
    p.exp_string("Ctrl-D to leave.").unwrap();
    p.exp_string("tq> ").unwrap();
    p
}

#[test]
fn interactive_session() {
    let mut fx = Fx::new();
    fx.create("plan");
    fx.fork("plan", "alpha");
    fx.fork("plan", "beta");
    fx.link("beta", "alpha", EdgeType::DependsOn);
    let mut p = spawn(&fx);

    // A form spans lines until its parens balance.
    p.send_line("(-> (all)").unwrap();
    p.send_line("    (:where (has :parent)) (:count))").unwrap();
    p.exp_string("\r\n2\r\n").unwrap();
    p.exp_string("tq> ").unwrap();

    // An error renders with ariadne: the message and a caret under the span.
    p.send_line("(-> (all) (:zelect :slug))").unwrap();
    p.exp_string("Query error: Unknown step :zelect; did you mean :select?")
        .unwrap();
    p.exp_string(&raw("───┬───")).unwrap();
    p.exp_string(&raw("╰───── Unknown step :zelect")).unwrap();
    p.exp_string("tq> ").unwrap();

    // Tab completes (:fol to (:follow — the query only runs if it did.
    p.send("(-> (node \"2026-01-01-plan\") (:fol").unwrap();
    p.send("\t").unwrap();
    p.send_line(" :phase-of) (:ids))").unwrap();
    p.exp_string("2 tasks:\r\n- 2026-01-01-alpha\r\n- 2026-01-01-beta")
        .unwrap();
    p.exp_string("tq> ").unwrap();

    // Ctrl-C drops the input being typed.
    p.send("(-> (all) (:where").unwrap();
    p.send_control('c').unwrap();
    p.exp_string("tq> ").unwrap();
    p.send_line("(-> (all) (:count))").unwrap();
    p.exp_string("\r\n3\r\n").unwrap();
    p.exp_string("tq> ").unwrap();

    // :write on, then a mutation is recorded.
    let before = fx.events();
    p.send_line(":write on").unwrap();
    p.exp_string("Write surface: mutations are recorded.")
        .unwrap();
    p.exp_string("tq!> ").unwrap();
    p.send_line("(-> (node \"alpha\") (:set-status! :completed) (:count))")
        .unwrap();
    p.exp_string("\r\n1\r\n").unwrap();
    p.exp_string("tq!> ").unwrap();

    // Ctrl-D leaves with exit 0.
    p.send_control('d').unwrap();
    p.exp_eof().unwrap();
    // nix's WaitStatus is not re-exported: read its Debug form.
    let status = format!("{:?}", p.process().wait().unwrap());
    assert!(
        status.starts_with("Exited(") && status.ends_with(", 0)"),
        "{status}"
    );
    assert_eq!(fx.events(), before + 1);
    // History is kept next to the store.
    let history = std::fs::read_to_string(fx.dir.path().join("cairn.db.repl_history")).unwrap();
    assert!(history.contains("(-> (all) (:count))"), "{history}");
    assert!(history.contains(":write on"), "{history}");
}
