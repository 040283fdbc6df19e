//! `cairn doctor` (issue 27) in a fixed project, text and `--json`: before
//! any store, after `cairn init` and a first task, and with a client file
//! that is broken and a PATH without `cairn`. Exact output; the temporary
//! directory prints as `DIR`.

use std::path::Path;
use std::process::{Command, Stdio};

/// A project: a temporary directory with `.git/` and `bin/cairn`, a link
/// to the built binary (the PATH the checks look at).
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    std::fs::create_dir(dir.path().join("bin")).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_cairn"), dir.path().join("bin/cairn")).unwrap();
    dir
}

/// `cairn ARGS` in `dir` with `PATH` set to `path`: (exit, stdout+stderr)
/// with the directory as `DIR`.
fn cairn(dir: &Path, path: &Path, args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(args)
        .current_dir(dir)
        .env("PATH", path)
        .env("HOME", dir.join("home"))
        .env("CAIRN_NOW", "1767225600")
        .env_remove("CAIRN_DB")
        .env_remove("XDG_DATA_HOME")
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let canon = dir.canonicalize().unwrap().display().to_string();
    let text = text
        .replace(&canon, "DIR")
        .replace(&dir.display().to_string(), "DIR");
    (out.status.code().unwrap_or(-1), text)
}

#[test]
fn doctor_before_any_store() {
    let dir = project();
    let d = dir.path();
    let bin = d.join("bin");
    assert_eq!(
        cairn(d, &bin, &["doctor"]),
        (
            1,
            "      check   detail
ok    store   DIR/.cairn/cairn.db (repository root (.git found at DIR))
FAIL  schema  no store yet (`cairn init` or any write creates one)
ok    path    cairn on PATH is DIR/bin/cairn
FAIL  mcp     no MCP configuration file here (`cairn init` writes one)
"
            .to_string()
        )
    );
    // Doctor creates nothing.
    assert!(!d.join(".cairn").exists());
}

#[test]
fn doctor_after_init_all_ok_text_and_json() {
    let dir = project();
    let d = dir.path();
    let bin = d.join("bin");
    assert_eq!(cairn(d, &bin, &["init"]).0, 0);
    assert_eq!(
        cairn(d, &bin, &["add", "tune search ranking"]),
        (0, "Created 2026-01-01-tune-search-ranking.\n".to_string())
    );
    assert_eq!(
        cairn(d, &bin, &["doctor"]),
        (
            0,
            "    check          detail
ok  store          DIR/.cairn/cairn.db (.cairn directory found (DIR/.cairn))
ok  schema         version 5
ok  logs           1 logs, 1 lines, 0 malformed; 0 events missing from the logs, 0 log lines missing from the database
ok  gitattributes  DIR/.cairn/.gitattributes has `tasks/**/events.ndjson merge=union`
ok  path           cairn on PATH is DIR/bin/cairn
ok  mcp .mcp.json  cairn server runs `cairn` (DIR/bin/cairn)
"
            .to_string()
        )
    );
    assert_eq!(
        cairn(d, &bin, &["doctor", "--json"]),
        (
            0,
            r#"{
  "checks": [
    {
      "detail": "DIR/.cairn/cairn.db (.cairn directory found (DIR/.cairn))",
      "name": "store",
      "ok": true
    },
    {
      "detail": "version 5",
      "name": "schema",
      "ok": true
    },
    {
      "detail": "1 logs, 1 lines, 0 malformed; 0 events missing from the logs, 0 log lines missing from the database",
      "name": "logs",
      "ok": true
    },
    {
      "detail": "DIR/.cairn/.gitattributes has `tasks/**/events.ndjson merge=union`",
      "name": "gitattributes",
      "ok": true
    },
    {
      "detail": "cairn on PATH is DIR/bin/cairn",
      "name": "path",
      "ok": true
    },
    {
      "detail": "cairn server runs `cairn` (DIR/bin/cairn)",
      "name": "mcp .mcp.json",
      "ok": true
    }
  ],
  "ok": true
}
"#
            .to_string()
        )
    );
}

#[test]
fn doctor_names_what_fails() {
    let dir = project();
    let d = dir.path();
    let bin = d.join("bin");
    assert_eq!(cairn(d, &bin, &["init", "--client", "vscode"]).0, 0);
    std::fs::create_dir(d.join(".cursor")).unwrap();
    std::fs::write(d.join(".cursor/mcp.json"), "{ not json").unwrap();
    std::fs::write(d.join(".cairn/.gitattributes"), "").unwrap();
    let empty = d.join("empty");
    std::fs::create_dir(&empty).unwrap();
    assert_eq!(
        cairn(d, &empty, &["doctor"]),
        (
            1,
            "      check                 detail
ok    store                 DIR/.cairn/cairn.db (.cairn directory found (DIR/.cairn))
ok    schema                version 5
ok    logs                  0 logs, 0 lines, 0 malformed; 0 events missing from the logs, 0 log lines missing from the database
FAIL  gitattributes         DIR/.cairn/.gitattributes lacks `tasks/**/events.ndjson merge=union` (added now, by opening the store)
FAIL  path                  no cairn on PATH: MCP clients cannot start it
FAIL  mcp .cursor/mcp.json  not valid JSON (`cairn init --client cursor` adds it)
FAIL  mcp .vscode/mcp.json  cairn server runs `cairn`, which is not on PATH
"
            .to_string()
        )
    );
    // The store's opening put the union line back; the rest still fails.
    assert_eq!(
        cairn(d, &empty, &["doctor", "--json"]),
        (
            1,
            r#"{
  "checks": [
    {
      "detail": "DIR/.cairn/cairn.db (.cairn directory found (DIR/.cairn))",
      "name": "store",
      "ok": true
    },
    {
      "detail": "version 5",
      "name": "schema",
      "ok": true
    },
    {
      "detail": "0 logs, 0 lines, 0 malformed; 0 events missing from the logs, 0 log lines missing from the database",
      "name": "logs",
      "ok": true
    },
    {
      "detail": "DIR/.cairn/.gitattributes has `tasks/**/events.ndjson merge=union`",
      "name": "gitattributes",
      "ok": true
    },
    {
      "detail": "no cairn on PATH: MCP clients cannot start it",
      "name": "path",
      "ok": false
    },
    {
      "detail": "not valid JSON (`cairn init --client cursor` adds it)",
      "name": "mcp .cursor/mcp.json",
      "ok": false
    },
    {
      "detail": "cairn server runs `cairn`, which is not on PATH",
      "name": "mcp .vscode/mcp.json",
      "ok": false
    }
  ],
  "ok": false
}
"#
            .to_string()
        )
    );
}
