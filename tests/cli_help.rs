//! insta snapshots of `--help` for `cairn` and each subcommand (issue 6):
//! any change to the command line's text shows up in review.

use std::process::Command;

const CAIRN: &str = env!("CARGO_BIN_EXE_cairn");

fn help(args: &[&str]) -> String {
    let out = Command::new(CAIRN).args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{args:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn help_texts() {
    insta::assert_snapshot!("cairn", help(&["--help"]));
    for sub in ["query", "repl", "where", "rebuild", "verify"] {
        insta::assert_snapshot!(sub, help(&[sub, "--help"]));
    }
}

#[test]
fn version() {
    assert_eq!(
        help(&["--version"]),
        format!("cairn {}\n", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn usage_error_exits_2() {
    let out = Command::new(CAIRN).arg("bogus").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = Command::new(CAIRN).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}
