//! `cairn watch` on PostgreSQL (spec/team.md "Changes"): the write
//! transaction's `NOTIFY` wakes a watcher on another connection at commit,
//! so a write from ANOTHER process is reprinted at once even with a 30 s
//! `--interval` (a poller would wait the interval).

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::pg;

fn cairn(url: &str, dir: &std::path::Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cairn"));
    c.env("CAIRN_DB", url)
        .env("HOME", dir)
        .env("CAIRN_NOW", "1767225600")
        .current_dir(dir);
    c
}

#[test]
fn a_commit_elsewhere_wakes_the_watcher() {
    let Some(url) = pg::url() else { return };
    let dir = tempfile::tempdir().unwrap();
    let out = cairn(&url, dir.path())
        .args(["add", "alpha task"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let mut child = cairn(&url, dir.path())
        .args([
            "watch",
            "--interval",
            "30000",
            "--count",
            "2",
            "(-> (all) (:ids))",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut lines = Vec::new();
    for _ in 0..2 {
        let mut l = String::new();
        out.read_line(&mut l).unwrap();
        lines.push(l);
    }
    assert_eq!(lines.concat(), "1 task:\n- 2026-01-01-alpha-task\n");
    let started = Instant::now();
    let add = cairn(&url, dir.path())
        .args(["add", "beta task"])
        .output()
        .unwrap();
    assert!(add.status.success(), "{add:?}");
    let mut rest = Vec::new();
    for _ in 0..5 {
        let mut l = String::new();
        out.read_line(&mut l).unwrap();
        rest.push(l);
    }
    let waited = started.elapsed();
    assert_eq!(rest[0], "\n");
    assert!(
        rest[1].starts_with("-- ") && rest[1].ends_with(" UTC\n"),
        "{rest:?}"
    );
    assert_eq!(
        rest[2..].concat(),
        "2 tasks:\n- 2026-01-01-alpha-task\n- 2026-01-01-beta-task\n"
    );
    // Woken by the commit: well before the 5 s refresh and the 30 s interval.
    assert!(waited < Duration::from_secs(4), "{waited:?}");
    let status = child.wait().unwrap();
    assert!(status.success());
}
