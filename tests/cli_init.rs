//! `cairn init` for each client (issue 12): the file lands where the
//! client reads it, parses in the client's format with the exact keys, and
//! an existing one gets `cairn` merged in, keeping every other entry (issue
//! 27); plus `--agents-md`, `cairn completions` for bash,
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

/// An existing file gets `cairn` merged in; every other byte is kept
/// (issue 27: it used to be refused).
#[test]
fn an_existing_file_gets_cairn_merged_and_keeps_the_rest() {
    let dir = repo();
    let before = "{\n    \"mcpServers\": {\n        \"github\": {\"command\": \"gh-mcp\",   \"args\": [\"--x\"]}\n    },\n    \"other\": [1, 2]\n}\n";
    std::fs::write(dir.path().join(".mcp.json"), before).unwrap();
    let out = cairn(dir.path(), &["init"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let after = std::fs::read_to_string(dir.path().join(".mcp.json")).unwrap();
    // The other server's entry, byte for byte, and everything after it.
    let github = "        \"github\": {\"command\": \"gh-mcp\",   \"args\": [\"--x\"]}";
    assert!(
        after.starts_with(&format!("{{\n    \"mcpServers\": {{\n{github},\n")),
        "{after}"
    );
    assert!(
        after.ends_with("\n    },\n    \"other\": [1, 2]\n}\n"),
        "{after}"
    );
    let v: serde_json::Value = serde_json::from_str(&after).unwrap();
    assert_eq!(keys(&v["mcpServers"]), ["cairn", "github"]);
    assert_eq!(v["mcpServers"]["cairn"]["command"], "cairn");
    assert_eq!(
        text(&out.stdout),
        format!(
            "store: .cairn/cairn.db\nmerged cairn into .mcp.json (Claude Code):\n{}\n",
            after.trim_end()
        )
    );
    // A second init changes nothing.
    let out = cairn(dir.path(), &["init"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        text(&out.stdout),
        "store: .cairn/cairn.db\n.mcp.json (Claude Code) already has the cairn server; nothing changed.\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join(".mcp.json")).unwrap(),
        after
    );
}

/// A file that does not parse is refused with a sentence; nothing changes
/// and no store is created. A different `cairn` entry needs --force.
#[test]
fn a_malformed_file_is_refused_and_nothing_changes() {
    let dir = repo();
    let bad = "{\"mcpServers\": {\"github\": }\n";
    std::fs::write(dir.path().join(".mcp.json"), bad).unwrap();
    let out = cairn(dir.path(), &["init"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        ".mcp.json is not valid JSON (expected value at line 1 column 27); cairn init leaves it as it is.\n"
    );
    assert!(out.stdout.is_empty());
    assert_eq!(
        std::fs::read_to_string(dir.path().join(".mcp.json")).unwrap(),
        bad
    );
    assert!(!dir.path().join(".cairn").exists());

    let theirs =
        "{\"mcpServers\": {\"cairn\": {\"command\": \"/opt/cairn\", \"args\": [\"serve\"]}}}\n";
    std::fs::write(dir.path().join(".mcp.json"), theirs).unwrap();
    let out = cairn(dir.path(), &["init"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        ".mcp.json already has a different cairn server; cairn init leaves it as it is (--force replaces that entry, keeping the others).\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join(".mcp.json")).unwrap(),
        theirs
    );
    assert!(!dir.path().join(".cairn").exists());
    let out = cairn(dir.path(), &["init", "--force"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join(".mcp.json")).unwrap())
            .unwrap();
    assert_eq!(v["mcpServers"]["cairn"]["command"], "cairn");
}

/// Codex's TOML keeps its other tables and comments (toml_edit); a
/// malformed one is refused.
#[test]
fn codex_toml_is_merged() {
    let dir = repo();
    std::fs::create_dir(dir.path().join(".codex")).unwrap();
    let before =
        "# my settings\nmodel = \"o3\"\n\n[mcp_servers.docs]\ncommand = \"docs-mcp\" # keep me\n";
    std::fs::write(dir.path().join(".codex/config.toml"), before).unwrap();
    let out = cairn(dir.path(), &["init", "--client", "codex"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let after = std::fs::read_to_string(dir.path().join(".codex/config.toml")).unwrap();
    assert_eq!(
        after,
        format!("{before}\n[mcp_servers.cairn]\ncommand = \"cairn\"\nargs = [\"serve\"]\n")
    );
    std::fs::write(dir.path().join(".codex/config.toml"), "model = \n").unwrap();
    let out = cairn(dir.path(), &["init", "--client", "codex"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).starts_with(".codex/config.toml is not valid TOML ("),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join(".codex/config.toml")).unwrap(),
        "model = \n"
    );
}

/// `--agents-md` adds the section once, to AGENTS.md, or to CLAUDE.md when
/// only that exists.
#[test]
fn agents_md_gets_a_short_section_once() {
    let dir = repo();
    std::fs::write(dir.path().join("CLAUDE.md"), "# Rules\n\nBe kind.\n").unwrap();
    let out = cairn(dir.path(), &["init", "--agents-md"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).ends_with("\nadded the cairn section to CLAUDE.md.\n"));
    let md = std::fs::read_to_string(dir.path().join("CLAUDE.md")).unwrap();
    assert!(
        md.starts_with("# Rules\n\nBe kind.\n\n## Task graph: cairn\n"),
        "{md}"
    );
    for word in ["task_bootstrap", "observe", "cairn ready", "claim"] {
        assert!(md.contains(word), "{word}");
    }
    let out = cairn(dir.path(), &["init", "--agents-md"]);
    assert!(text(&out.stdout).ends_with("\nCLAUDE.md already has the cairn section.\n"));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("CLAUDE.md")).unwrap(),
        md
    );
    assert!(!dir.path().join("AGENTS.md").exists());
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

/// The JSON of an `init --json` run, after checking it exited 0 with
/// nothing on stderr.
fn json_of(out: &Output) -> serde_json::Value {
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `init --json` (issue 27): one object saying what was done — the store,
/// the client, its file and whether it was written, merged or left
/// unchanged, and the AGENTS.md section (`null` without `--agents-md`).
#[test]
fn init_json_says_what_was_done() {
    use serde_json::json;
    let dir = repo();
    let out = cairn(dir.path(), &["init", "--json"]);
    assert_eq!(
        json_of(&out),
        json!({"store": ".cairn/cairn.db", "client": "claude", "file": ".mcp.json",
               "action": "wrote", "agents_md": null})
    );
    // Pretty-printed, one object, nothing else.
    assert_eq!(
        text(&out.stdout),
        "{\n  \"action\": \"wrote\",\n  \"agents_md\": null,\n  \"client\": \"claude\",\n  \"file\": \".mcp.json\",\n  \"store\": \".cairn/cairn.db\"\n}\n"
    );
    let out = cairn(dir.path(), &["init", "--json", "--agents-md"]);
    assert_eq!(
        json_of(&out),
        json!({"store": ".cairn/cairn.db", "client": "claude", "file": ".mcp.json",
               "action": "unchanged", "agents_md": {"file": "AGENTS.md", "added": true}})
    );
    let out = cairn(dir.path(), &["init", "--json", "--agents-md"]);
    assert_eq!(
        json_of(&out)["agents_md"],
        json!({"file": "AGENTS.md", "added": false})
    );

    std::fs::create_dir(dir.path().join(".codex")).unwrap();
    std::fs::write(dir.path().join(".codex/config.toml"), "model = \"o3\"\n").unwrap();
    let out = cairn(dir.path(), &["init", "--json", "--client", "codex"]);
    assert_eq!(
        json_of(&out),
        json!({"store": ".cairn/cairn.db", "client": "codex", "file": ".codex/config.toml",
               "action": "merged", "agents_md": null})
    );

    // A store given with --db outside the project is shown as its path
    // (temporary path normalised).
    let other = tempfile::tempdir().unwrap();
    let db = other.path().join(".cairn/cairn.db");
    let out = cairn(
        dir.path(),
        &[
            "--db",
            db.to_str().unwrap(),
            "init",
            "--json",
            "--client",
            "vscode",
        ],
    );
    let v = json_of(&out);
    assert_eq!(
        v,
        json!({"store": ".cairn/cairn.db", "client": "vscode", "file": ".vscode/mcp.json",
               "action": "wrote", "agents_md": null}),
        "{}",
        text(&out.stdout).replace(other.path().to_str().unwrap(), "TMP")
    );
}

/// A refusal with `--json` stays a sentence on stderr, exit 1, with nothing
/// on stdout and nothing written.
#[test]
fn init_json_refusals_stay_sentences() {
    let dir = repo();
    std::fs::write(dir.path().join(".mcp.json"), "{,\n").unwrap();
    let out = cairn(dir.path(), &["init", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
    assert!(
        text(&out.stderr).starts_with(".mcp.json is not valid JSON ("),
        "{}",
        text(&out.stderr)
    );
    assert!(!dir.path().join(".cairn").exists());
}

/// `--agents-md` when AGENTS.md cannot take the section (a folder, not
/// UTF-8) is refused before anything is written: no store, no `.mcp.json`
/// (issue 27 hostile pass: the store and the client file used to be
/// written first, then the refusal).
#[test]
fn agents_md_refusal_writes_nothing() {
    let dir = repo();
    std::fs::create_dir(dir.path().join("AGENTS.md")).unwrap();
    for args in [
        &["init", "--agents-md"][..],
        &["init", "--agents-md", "--json"][..],
    ] {
        let out = cairn(dir.path(), args);
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(
            text(&out.stderr),
            "AGENTS.md is not a regular file; cairn init leaves it as it is.\n"
        );
        assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
        assert!(!dir.path().join(".cairn").exists());
        assert!(!dir.path().join(".mcp.json").exists());
    }
    std::fs::remove_dir(dir.path().join("AGENTS.md")).unwrap();
    std::fs::write(dir.path().join("AGENTS.md"), b"\xff\xfe rules\n").unwrap();
    let out = cairn(dir.path(), &["init", "--agents-md"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "AGENTS.md is not UTF-8 text; cairn init leaves it as it is.\n"
    );
    assert!(!dir.path().join(".cairn").exists());
    assert!(!dir.path().join(".mcp.json").exists());
    assert_eq!(
        std::fs::read(dir.path().join("AGENTS.md")).unwrap(),
        b"\xff\xfe rules\n"
    );
}
