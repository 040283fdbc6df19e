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
    // Every visible subcommand, as clap knows them (serve and call too).
    let cli = <cairn::cli::Cli as clap::CommandFactory>::command();
    let subs: Vec<String> = cli
        .get_subcommands()
        .filter(|c| !c.is_hide_set())
        .map(|c| c.get_name().to_string())
        .collect();
    for must in ["query", "repl", "where", "rebuild", "verify"] {
        assert!(subs.iter().any(|s| s == must), "{must} in {subs:?}");
    }
    for sub in &subs {
        insta::assert_snapshot!(sub.as_str(), help(&[sub, "--help"]));
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
