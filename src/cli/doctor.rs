//! `cairn doctor [--json]` (issue 27; docs/cli.md "cairn doctor"): what a
//! person checks when an agent does not see its tasks — which store the
//! commands use and the rule that chose it, its schema version, whether the
//! per-task logs and the database agree, whether `.cairn/.gitattributes`
//! has the logs' union-merge line, and each client's MCP configuration file
//! in the project: present, holding a `cairn` server, and whether the
//! command it starts is found on PATH. Creates no store (an existing one is opened, as any command opens it, to
//! compare its logs). Exit 0
//! when nothing is wrong, 1 when a check failed (each says why).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::{Value, json};

use super::init::Client;
use super::out::emit;
use super::verbs::JsonFlag;
use crate::store::location::{self, Rule};
use crate::store::{ReadOpen, Store};

/// One check: its name, whether it passed, and what was found.
#[derive(Debug, Clone)]
struct Check {
    name: String,
    ok: bool,
    detail: String,
}

fn check(name: impl Into<String>, ok: bool, detail: impl Into<String>) -> Check {
    Check {
        name: name.into(),
        ok,
        detail: detail.into(),
    }
}

/// The first `name` executable on `PATH`, if any.
pub fn on_path(name: &str) -> Option<PathBuf> {
    if name.contains('/') {
        let p = PathBuf::from(name);
        return p.is_file().then_some(p);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

#[cfg(unix)]
fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(p: &Path) -> bool {
    p.is_file()
}

/// The `cairn` server's command in a client's configuration text, or why
/// there is none.
fn configured_command(client: Client, text: &str) -> Result<String, String> {
    if client == Client::Codex {
        let v: toml::Table = toml::from_str(text).map_err(|_| "not valid TOML".to_string())?;
        return v
            .get("mcp_servers")
            .and_then(|s| s.get("cairn"))
            .and_then(|c| c.get("command"))
            .and_then(|c| c.as_str())
            .map(str::to_string)
            .ok_or_else(|| "no cairn server in it".to_string());
    }
    let v: Value = serde_json::from_str(text).map_err(|_| "not valid JSON".to_string())?;
    v.get(client.servers_key())
        .and_then(|s| s.get("cairn"))
        .and_then(|c| c.get("command"))
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| "no cairn server in it".to_string())
}

/// The MCP configuration checks: one per client file present in `root`
/// (a missing file is not a failure, only noted in the list).
fn config_checks(root: &Path) -> Vec<Check> {
    let mut out = Vec::new();
    for client in [
        Client::Claude,
        Client::Cursor,
        Client::Vscode,
        Client::Codex,
    ] {
        let rel = client.path();
        let shown = rel.display().to_string();
        let Ok(text) = std::fs::read_to_string(root.join(&rel)) else {
            continue;
        };
        let name = format!("mcp {shown}");
        match configured_command(client, &text) {
            Err(why) => out.push(check(
                name,
                false,
                format!(
                    "{why} (`cairn init --client {}` adds it)",
                    client_word(client)
                ),
            )),
            Ok(cmd) => match on_path(&cmd) {
                Some(p) => out.push(check(
                    name,
                    true,
                    format!("cairn server runs `{cmd}` ({})", p.display()),
                )),
                None => out.push(check(
                    name,
                    false,
                    format!("cairn server runs `{cmd}`, which is not on PATH"),
                )),
            },
        }
    }
    if out.is_empty() {
        out.push(check(
            "mcp",
            false,
            "no MCP configuration file here (`cairn init` writes one)",
        ));
    }
    out
}

fn client_word(c: Client) -> &'static str {
    match c {
        Client::Claude => "claude",
        Client::Cursor => "cursor",
        Client::Vscode => "vscode",
        Client::Codex => "codex",
    }
}

/// The store checks: where, schema, logs, git attributes.
fn store_checks(flag: Option<&Path>) -> anyhow::Result<(Vec<Check>, PathBuf)> {
    let loc = location::resolve_from_env(flag)?;
    let mut out = vec![check(
        "store",
        true,
        format!("{} ({})", loc.db.display(), loc.rule),
    )];
    if loc.rule == Rule::GlobalScratch {
        out.push(check(
            "project",
            false,
            "outside any repository: this is the global scratch store (`cairn init` makes this directory a project)",
        ));
    }
    let (store, state) = Store::open_read(&loc.db)?;
    if state == ReadOpen::Absent {
        out.push(check(
            "schema",
            false,
            "no store yet (`cairn init` or any write creates one)",
        ));
        return Ok((out, loc.project));
    }
    let v = store.schema_version()?;
    let current = crate::store::schema::SCHEMA_VERSION;
    out.push(check(
        "schema",
        v == current,
        if v == current {
            format!("version {v}")
        } else {
            format!("version {v}; this cairn writes {current} (any write migrates it)")
        },
    ));
    drop(store);
    if loc.db.file_name().is_none_or(|n| n != location::DB_FILE) {
        out.push(check(
            "logs",
            true,
            "this store keeps no per-task logs (its file is not named cairn.db)",
        ));
        return Ok((out, loc.project));
    }
    // Read before the store is opened for the log check (opening writes
    // the line when it is missing).
    let attrs = loc.db.parent().map_or_else(
        || PathBuf::from(".gitattributes"),
        |d| d.join(".gitattributes"),
    );
    let line = crate::store::log::GITATTRIBUTES_LINE;
    let has = std::fs::read_to_string(&attrs).is_ok_and(|t| t.lines().any(|l| l.trim() == line));
    let store = Store::open(&loc.db)?;
    match store.check_logs()? {
        Some(c) => out.push(check(
            "logs",
            c.ok(),
            format!(
                "{} logs, {} lines, {} malformed; {} events missing from the logs, {} log lines missing from the database{}",
                c.files,
                c.lines,
                c.malformed.len(),
                c.missing_from_logs,
                c.missing_from_db,
                if c.ok() { "" } else { " (`cairn rebuild --from-logs` repairs both; `cairn verify` says more)" }
            ),
        )),
        None => out.push(check("logs", true, "no logs yet")),
    }
    out.push(check(
        "gitattributes",
        has,
        if has {
            format!("{} has `{line}`", attrs.display())
        } else {
            format!(
                "{} lacks `{line}` (added now, by opening the store)",
                attrs.display()
            )
        },
    ));
    Ok((out, loc.project))
}

/// `cairn doctor`: every check as `ok   NAME  DETAIL` / `FAIL NAME  DETAIL`
/// lines (or, with `--json`, `{"ok", "checks": [{"name", "ok",
/// "detail"}]}`); exit 1 when one failed.
pub(super) fn doctor_cmd(flag: Option<&Path>, a: &JsonFlag) -> anyhow::Result<ExitCode> {
    let (mut checks, root) = store_checks(flag)?;
    let binary = on_path("cairn");
    checks.push(check(
        "path",
        binary.is_some(),
        match &binary {
            Some(p) => format!("cairn on PATH is {}", p.display()),
            None => "no cairn on PATH: MCP clients cannot start it".to_string(),
        },
    ));
    checks.extend(config_checks(&root));
    let ok = checks.iter().all(|c| c.ok);
    if a.json {
        let list: Vec<Value> = checks
            .iter()
            .map(|c| json!({ "name": c.name, "ok": c.ok, "detail": c.detail }))
            .collect();
        emit(&serde_json::to_string_pretty(
            &json!({ "ok": ok, "checks": list }),
        )?)?;
    } else {
        let rows: Vec<Vec<String>> = checks
            .iter()
            .map(|c| {
                vec![
                    if c.ok { "ok".into() } else { "FAIL".into() },
                    c.name.clone(),
                    c.detail.clone(),
                ]
            })
            .collect();
        super::out::emit_styled(&super::table::render(&["", "check", "detail"], &rows))?;
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
