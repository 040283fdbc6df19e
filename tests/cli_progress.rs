//! Progress on long work (issue 27): `cairn rebuild`, `verify` and
//! `import` draw an indicatif spinner and close with `cairn: WHAT took S s`
//! on a terminal (rexpect gives the child one), and add nothing when piped.

use std::process::Command;

use rexpect::session::spawn_command;

const CAIRN: &str = env!("CARGO_BIN_EXE_cairn");
/// Generous: CI machines are slow.
const TIMEOUT_MS: u64 = 30_000;

/// A store with one task, at DIR/cairn.db.
fn store() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(CAIRN)
        .arg("--db")
        .arg(dir.path().join("cairn.db"))
        .args(["add", "tune search ranking"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    dir
}

#[test]
fn a_terminal_sees_the_spinner_and_the_time() {
    let dir = store();
    for what in ["rebuild", "verify"] {
        let mut cmd = Command::new(CAIRN);
        cmd.arg("--db")
            .arg(dir.path().join("cairn.db"))
            .arg(what)
            .env("TERM", "xterm")
            .env_remove("NO_COLOR");
        let mut p = spawn_command(cmd, Some(TIMEOUT_MS)).unwrap();
        // The spinner's words (`WHAT…`, read byte by byte as chars).
        let spinner: String = format!("{what}…").bytes().map(char::from).collect();
        p.exp_string(&spinner).unwrap();
        p.exp_string(&format!("cairn: {what} took ")).unwrap();
        p.exp_string(" s").unwrap();
        p.exp_eof().unwrap();
    }
}

#[test]
fn a_pipe_sees_no_spinner() {
    let dir = store();
    for what in ["rebuild", "verify"] {
        let out = Command::new(CAIRN)
            .arg("--db")
            .arg(dir.path().join("cairn.db"))
            .arg(what)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0));
        assert!(
            out.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8(out.stdout).unwrap();
        assert!(stdout.starts_with(&format!("{what}: ")), "{stdout}");
        assert!(
            !stdout.contains('…') && !stdout.contains("took"),
            "{stdout}"
        );
    }
}
