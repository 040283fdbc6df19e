//! `cairn init [--client claude|cursor|vscode|codex] [--force]` (issue 12;
//! docs/cli.md "cairn init"): creates the project's store (`.cairn/`) and
//! writes the MCP configuration file the client reads, in that client's own
//! format and place, with serde (JSON) or toml — never by string pasting.
//! An existing file is left alone unless `--force`; nothing is written
//! through a symbolic link (the file or a folder on its way).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Args, ValueEnum};
use serde_json::json;

use super::out::{emit, emit_err};
use crate::store::location::{self, Rule};
use crate::store::{Store, location::STORE_DIR};

/// The MCP clients `cairn init` configures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Client {
    /// Claude Code: `.mcp.json` at the project root (`mcpServers`).
    Claude,
    /// Cursor: `.cursor/mcp.json` (`mcpServers`).
    Cursor,
    /// VS Code: `.vscode/mcp.json` (`servers`, `type: stdio`).
    Vscode,
    /// OpenAI Codex: `.codex/config.toml` (`[mcp_servers.cairn]`).
    Codex,
}

impl Client {
    /// The client's name as people write it.
    pub fn title(self) -> &'static str {
        match self {
            Client::Claude => "Claude Code",
            Client::Cursor => "Cursor",
            Client::Vscode => "VS Code",
            Client::Codex => "Codex",
        }
    }

    /// The configuration file, relative to the project root.
    pub fn path(self) -> PathBuf {
        match self {
            Client::Claude => PathBuf::from(".mcp.json"),
            Client::Cursor => Path::new(".cursor").join("mcp.json"),
            Client::Vscode => Path::new(".vscode").join("mcp.json"),
            Client::Codex => Path::new(".codex").join("config.toml"),
        }
    }

    /// The file's text: the `cairn` server started as `cairn serve` (the
    /// client starts it in the project directory, which selects the store).
    /// Errors: serialisation (not expected).
    pub fn config(self) -> anyhow::Result<String> {
        let server = json!({ "command": "cairn", "args": ["serve"] });
        let text = match self {
            Client::Claude | Client::Cursor => {
                serde_json::to_string_pretty(&json!({ "mcpServers": { "cairn": server } }))?
            }
            Client::Vscode => serde_json::to_string_pretty(&json!({
                "servers": { "cairn": { "type": "stdio", "command": "cairn", "args": ["serve"] } }
            }))?,
            Client::Codex => {
                let config = CodexConfig {
                    mcp_servers: CodexServers {
                        cairn: CodexServer {
                            command: "cairn",
                            args: &["serve"],
                        },
                    },
                };
                return Ok(toml::to_string(&config)?);
            }
        };
        Ok(format!("{text}\n"))
    }
}

/// Codex's `config.toml`: `[mcp_servers.cairn]` with `command`, `args`.
#[derive(serde::Serialize)]
struct CodexConfig {
    mcp_servers: CodexServers,
}

#[derive(serde::Serialize)]
struct CodexServers {
    cairn: CodexServer,
}

#[derive(serde::Serialize)]
struct CodexServer {
    command: &'static str,
    args: &'static [&'static str],
}

/// The arguments of `cairn init`.
#[derive(Debug, Args)]
pub struct InitArgs {
    /// The MCP client to configure.
    #[arg(long, value_enum, default_value_t = Client::Claude)]
    pub client: Client,
    /// Overwrite the client's configuration file if it exists.
    #[arg(long)]
    pub force: bool,
}

/// The project root `init` works in: the store location's project, except
/// that with no project found (the global scratch store) it is the working
/// directory — `init` is how a directory becomes a project.
fn project_root(flag: Option<&Path>) -> anyhow::Result<(PathBuf, PathBuf)> {
    let loc = location::resolve_from_env(flag)?;
    if loc.rule == Rule::GlobalScratch {
        let cwd = std::env::current_dir().context("cannot read the working directory")?;
        let db = cwd.join(STORE_DIR).join(location::DB_FILE);
        return Ok((cwd, db));
    }
    Ok((loc.project, loc.db))
}

/// Why `init` will not write the client's file, as one sentence naming the
/// path (relative to the project root), or `None` when it may. Refused: any
/// folder component or the file itself being a symbolic link (checked with
/// `symlink_metadata`, so a dangling link counts: writing through it would
/// land outside the project), and a file that exists but is not a regular
/// file. An existing regular file is refused only without `--force`.
fn refusal(root: &Path, rel: &Path, force: bool) -> Option<String> {
    let mut at = PathBuf::new();
    let parts: Vec<_> = rel.components().collect();
    for (i, part) in parts.iter().enumerate() {
        at.push(part);
        let shown = at.display().to_string();
        let Ok(meta) = std::fs::symlink_metadata(root.join(&at)) else {
            // Missing: nothing below it exists either.
            return None;
        };
        if meta.file_type().is_symlink() {
            return Some(format!(
                "{shown} is a symbolic link; cairn init does not write through links."
            ));
        }
        let last = i + 1 == parts.len();
        if !last && !meta.is_dir() {
            return Some(format!(
                "{shown} is not a folder; cairn init cannot write inside it."
            ));
        }
        if last {
            if !meta.is_file() {
                return Some(format!(
                    "{shown} is not a regular file; cairn init leaves it as it is."
                ));
            }
            if !force {
                return Some(format!(
                    "{shown} already exists; cairn init leaves it as it is (--force overwrites it)."
                ));
            }
        }
    }
    None
}

/// Writes `text` to `file`: a new file with `create_new` (so a link or file
/// appearing meanwhile is refused, not followed), or — when `replace` (the
/// caller checked it is a regular file, `--force`) — truncating it.
fn write_config(file: &Path, text: &str, replace: bool) -> anyhow::Result<()> {
    use std::io::Write as _;
    let mut open = std::fs::OpenOptions::new();
    open.write(true);
    if replace {
        open.truncate(true);
    } else {
        open.create_new(true);
    }
    let mut f = open
        .open(file)
        .with_context(|| format!("cannot write {}", file.display()))?;
    f.write_all(text.as_bytes())
        .with_context(|| format!("cannot write {}", file.display()))?;
    Ok(())
}

/// Runs `cairn init`: refuses (exit 1, nothing written) when the client's
/// file exists and `--force` is not given, or when the file or a folder on
/// its way is a symbolic link or not what it should be (see `refusal`);
/// else opens (creating) the store, writes the file and prints what it did:
/// the store path, the file and its text. Paths are shown relative to the
/// project root.
pub(super) fn init_cmd(flag: Option<&Path>, a: &InitArgs) -> anyhow::Result<ExitCode> {
    let (root, db) = project_root(flag)?;
    let rel = a.client.path();
    let file = root.join(&rel);
    let shown = rel.display().to_string();
    if let Some(why) = refusal(&root, &rel, a.force) {
        emit_err(&why);
        return Ok(ExitCode::from(1));
    }
    let existed = std::fs::symlink_metadata(&file).is_ok();
    Store::open(&db).with_context(|| format!("cannot open the store at {}", db.display()))?;
    let text = a.client.config()?;
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    write_config(&file, &text, existed)?;
    let store_shown = db
        .strip_prefix(&root)
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| db.display().to_string());
    emit(&format!(
        "store: {store_shown}\n{} {shown} ({}):\n{}",
        if existed { "overwrote" } else { "wrote" },
        a.client.title(),
        text.trim_end()
    ))?;
    Ok(ExitCode::SUCCESS)
}
