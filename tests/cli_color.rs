//! Colour follows the terminal (issue 12): `cairn ls` in a pseudo-terminal
//! (rexpect) paints the header bold and statuses in colour; the same
//! command piped prints no escape at all, and `NO_COLOR` or `--color never`
//! turn it off on a terminal too.

use std::process::{Command, Stdio};

use rexpect::session::spawn_command;

const CAIRN: &str = env!("CARGO_BIN_EXE_cairn");
const TIMEOUT_MS: u64 = 30_000;

fn cmd(db: &std::path::Path, args: &[&str]) -> Command {
    let mut c = Command::new(CAIRN);
    c.arg("--db")
        .arg(db)
        .args(args)
        .env("CAIRN_NOW", "1767225600")
        .env("TERM", "xterm")
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("CLICOLOR");
    c
}

fn store() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cairn.db");
    let out = cmd(&db, &["add", "tune search ranking"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    (dir, db)
}

/// Everything `cairn ARGS` prints on a terminal, until it exits.
fn on_terminal(c: Command) -> String {
    let mut p = spawn_command(c, Some(TIMEOUT_MS)).unwrap();
    p.exp_eof().unwrap()
}

#[test]
fn ls_on_a_terminal_is_coloured() {
    let (_dir, db) = store();
    let out = on_terminal(cmd(&db, &["ls"]));
    assert!(out.contains("\x1b[1mslug\x1b[0m"), "{out:?}");
    assert!(out.contains("\x1b[32mactive\x1b[0m"), "{out:?}");
}

#[test]
fn ls_piped_has_no_colour() {
    let (_dir, db) = store();
    let out = cmd(&db, &["ls"]).stdin(Stdio::null()).output().unwrap();
    let s = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        s,
        "slug                            status  name                 obs  updated (UTC)\n\
         2026-01-01-tune-search-ranking  active  tune search ranking  0    2026-01-01 00:00\n"
    );
}

#[test]
fn no_color_and_color_never_turn_it_off_on_a_terminal() {
    let (_dir, db) = store();
    let mut c = cmd(&db, &["ls"]);
    c.env("NO_COLOR", "1");
    let out = on_terminal(c);
    assert!(!out.contains('\x1b'), "{out:?}");
    assert!(out.contains("active"), "{out:?}");
    let out = on_terminal(cmd(&db, &["--color", "never", "ls"]));
    assert!(!out.contains('\x1b'), "{out:?}");
    assert!(out.contains("2026-01-01-tune-search-ranking"), "{out:?}");
}
