//! `cairn init` for each client (issue 12): the file lands where the
//! client reads it, parses in the client's format with the exact keys, is
//! never overwritten without `--force`; plus `cairn completions` for bash,
//! zsh and fish and `cairn man`.

use std::path::Path;
use std::process::{Command, Output, Stdio};

fn cairn(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(args)
        .current_dir(dir)
        .env_remove("CAIRN_DB")
        .env("HOME", dir.join("home"))
        .env_remove("XDG_DATA_HOME")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    dir
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The sorted keys of a JSON object.
fn keys(v: &serde_json::Value) -> Vec<String> {
    let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
    k.sort();
    k
}

#[test]
fn claude_writes_mcp_json_with_exact_keys() {
    let dir = repo();
    let out = cairn(dir.path(), &["init"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "store: .cairn/cairn.db\nwrote .mcp.json (Claude Code):\n{\n  \"mcpServers\": {\n    \"cairn\": {\n      \"args\": [\n        \"serve\"\n      ],\n      \"command\": \"cairn\"\n    }\n  }\n}\n"
    );
    assert!(dir.path().join(".cairn/cairn.db").exists());
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join(".mcp.json")).unwrap())
            .unwrap();
    assert_eq!(keys(&v), ["mcpServers"]);
    assert_eq!(keys(&v["mcpServers"]), ["cairn"]);
    assert_eq!(keys(&v["mcpServers"]["cairn"]), ["args", "command"]);
    assert_eq!(v["mcpServers"]["cairn"]["command"], "cairn");
    assert_eq!(
        v["mcpServers"]["cairn"]["args"],
        serde_json::json!(["serve"])
    );
}

#[test]
fn cursor_and_vscode_write_their_own_json() {
    let dir = repo();
    let out = cairn(dir.path(), &["init", "--client", "cursor"]);
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join(".cursor/mcp.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(keys(&v), ["mcpServers"]);
    assert_eq!(keys(&v["mcpServers"]["cairn"]), ["args", "command"]);

    let out = cairn(dir.path(), &["init", "--client", "vscode"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stdout).contains("wrote .vscode/mcp.json (VS Code):\n"));
    let v: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join(".vscode/mcp.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(keys(&v), ["servers"]);
    assert_eq!(keys(&v["servers"]["cairn"]), ["args", "command", "type"]);
    assert_eq!(v["servers"]["cairn"]["type"], "stdio");
}

#[test]
fn codex_writes_toml() {
    let dir = repo();
    let out = cairn(dir.path(), &["init", "--client", "codex"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let raw = std::fs::read_to_string(dir.path().join(".codex/config.toml")).unwrap();
    assert_eq!(
        raw,
        "[mcp_servers.cairn]\ncommand = \"cairn\"\nargs = [\"serve\"]\n"
    );
    let v: toml::Table = toml::from_str(&raw).unwrap();
    let cairn = &v["mcp_servers"]["cairn"];
    assert_eq!(cairn["command"].as_str(), Some("cairn"));
    assert_eq!(cairn["args"].as_array().unwrap().len(), 1);
}

#[test]
fn an_existing_file_is_kept_without_force() {
    let dir = repo();
    std::fs::write(dir.path().join(".mcp.json"), "{\"mine\": true}\n").unwrap();
    let out = cairn(dir.path(), &["init"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        ".mcp.json already exists; cairn init leaves it as it is (--force overwrites it).\n"
    );
    assert!(out.stdout.is_empty());
    assert_eq!(
        std::fs::read_to_string(dir.path().join(".mcp.json")).unwrap(),
        "{\"mine\": true}\n"
    );
    // Nothing else was created either.
    assert!(!dir.path().join(".cairn").exists());
    let out = cairn(dir.path(), &["init", "--force"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        text(&out.stdout)
            .starts_with("store: .cairn/cairn.db\noverwrote .mcp.json (Claude Code):\n")
    );
    assert!(
        std::fs::read_to_string(dir.path().join(".mcp.json"))
            .unwrap()
            .contains("\"mcpServers\"")
    );
}

#[test]
fn init_outside_a_project_makes_the_working_directory_one() {
    let dir = tempfile::tempdir().unwrap();
    let out = cairn(dir.path(), &["init", "--client", "cursor"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(dir.path().join(".cairn/cairn.db").exists());
    assert!(dir.path().join(".cursor/mcp.json").exists());
    // …and from then on the store is found there.
    let out = cairn(dir.path(), &["where"]);
    assert!(
        text(&out.stdout).contains("rule: .cairn directory found"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn completions_generate_for_bash_zsh_fish() {
    let dir = repo();
    for (shell, marker) in [
        (
            "bash",
            "complete -F _cairn -o nosort -o bashdefault -o default cairn",
        ),
        ("zsh", "#compdef cairn"),
        (
            "fish",
            "complete -c cairn -n \"__fish_cairn_needs_command\" -f -a \"ls\"",
        ),
    ] {
        let out = cairn(dir.path(), &["completions", shell]);
        assert_eq!(out.status.code(), Some(0), "{shell}");
        let s = text(&out.stdout);
        assert!(s.contains(marker), "{shell}: {marker:?} not in\n{s}");
        // Every verb is offered.
        for verb in ["add", "ready", "done", "init"] {
            assert!(s.contains(verb), "{shell}: {verb}");
        }
    }
    let out = cairn(dir.path(), &["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn man_renders_roff() {
    let dir = repo();
    let out = cairn(dir.path(), &["man"]);
    assert_eq!(out.status.code(), Some(0));
    let s = text(&out.stdout);
    assert!(
        s.starts_with(".ie \\n(.g .ds Aq \\(aq\n"),
        "{}",
        &s[..80.min(s.len())]
    );
    assert!(s.contains(".TH cairn 1"), "{s}");
    assert!(s.contains("cairn\\-ready"), "{s}");
}

#[cfg(unix)]
#[test]
fn symlinks_are_refused_and_never_written_through() {
    use std::os::unix::fs::symlink;
    let dir = repo();
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim");
    std::fs::write(&victim, "precious\n").unwrap();

    // The file itself a link: refused with and without --force.
    symlink(&victim, dir.path().join(".mcp.json")).unwrap();
    for args in [&["init"][..], &["init", "--force"][..]] {
        let out = cairn(dir.path(), args);
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(
            text(&out.stderr),
            ".mcp.json is a symbolic link; cairn init does not write through links.\n"
        );
        assert!(out.stdout.is_empty());
    }
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    assert!(!dir.path().join(".cairn").exists());

    // A dangling link: would create a file outside.
    std::fs::create_dir(dir.path().join(".vscode")).unwrap();
    let target = outside.path().join("created.json");
    symlink(&target, dir.path().join(".vscode/mcp.json")).unwrap();
    let out = cairn(dir.path(), &["init", "--client", "vscode", "--force"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        ".vscode/mcp.json is a symbolic link; cairn init does not write through links.\n"
    );
    assert!(std::fs::symlink_metadata(&target).is_err());

    // A folder on the way linked outside.
    symlink(outside.path(), dir.path().join(".cursor")).unwrap();
    let out = cairn(dir.path(), &["init", "--client", "cursor"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        ".cursor is a symbolic link; cairn init does not write through links.\n"
    );
    assert!(!outside.path().join("mcp.json").exists());

    // Not a regular file: a folder where the file goes, even with --force.
    std::fs::create_dir_all(dir.path().join(".codex/config.toml")).unwrap();
    let out = cairn(dir.path(), &["init", "--client", "codex", "--force"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        ".codex/config.toml is not a regular file; cairn init leaves it as it is.\n"
    );
    assert!(!dir.path().join(".cairn").exists());
}
