//! `cairn init [--client claude|cursor|vscode|codex] [--force]
//! [--agents-md]` (issues 12 and 27; docs/cli.md "cairn init"): creates the
//! project's store (`.cairn/`) and writes the MCP configuration file the
//! client reads, in that client's own format and place, with serde (JSON)
//! or toml. An existing file gets the `cairn` server merged in, every other
//! entry kept byte for byte (`merge`); a different `cairn` entry is
//! replaced only with `--force`; a file that does not parse is refused and
//! nothing is changed. Nothing is written through a symbolic link (the file
//! or a folder on its way). `--agents-md` adds a short section on cairn to
//! `AGENTS.md` (or `CLAUDE.md`); every refusal comes before the first write.
//! `--json` prints what was done as one object.

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

    /// The key the client keeps its servers under (JSON clients).
    pub fn servers_key(self) -> &'static str {
        match self {
            Client::Vscode => "servers",
            _ => "mcpServers",
        }
    }

    /// The `cairn` server entry of a JSON client's file.
    pub fn server_json(self) -> serde_json::Value {
        match self {
            Client::Vscode => json!({ "type": "stdio", "command": "cairn", "args": ["serve"] }),
            _ => json!({ "command": "cairn", "args": ["serve"] }),
        }
    }

    /// The file's text: the `cairn` server started as `cairn serve` (the
    /// client starts it in the project directory, which selects the store).
    /// Errors: serialisation (not expected).
    pub fn config(self) -> anyhow::Result<String> {
        let text = match self {
            Client::Claude | Client::Cursor | Client::Vscode => serde_json::to_string_pretty(
                &json!({ self.servers_key(): { "cairn": self.server_json() } }),
            )?,
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
    /// Replace a different `cairn` entry in the client's configuration file
    /// (the other servers are always kept).
    #[arg(long)]
    pub force: bool,
    /// Also add a short section on using cairn to AGENTS.md (or CLAUDE.md
    /// when only that exists), once.
    #[arg(long)]
    pub agents_md: bool,
    /// Print what was done as JSON (`{"store", "client", "file", "action",
    /// "agents_md"}`) instead of text.
    #[arg(long)]
    pub json: bool,
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
/// file. An existing regular file is not refused: `cairn` is merged into it.
fn refusal(root: &Path, rel: &Path) -> Option<String> {
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
        if last && !meta.is_file() {
            return Some(format!(
                "{shown} is not a regular file; cairn init leaves it as it is."
            ));
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

/// The text `init` writes to the client's file, or `None` when the file
/// already holds this `cairn` entry: the client's whole file when there is
/// none (or it is blank), else the existing text with `cairn` merged in.
/// Errors: the sentence saying why the file is left as it is.
fn new_text(
    a: &InitArgs,
    file: &Path,
    shown: &str,
) -> anyhow::Result<Result<Option<String>, String>> {
    let existing = match std::fs::read(file) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(t) => t,
            Err(_) => {
                return Ok(Err(format!(
                    "{shown} is not UTF-8 text; cairn init leaves it as it is."
                )));
            }
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", file.display())),
    };
    if existing.trim().is_empty() {
        return Ok(Ok(Some(a.client.config()?)));
    }
    let merged = match a.client {
        Client::Codex => super::merge::merge_toml(&existing, a.force, shown),
        c => super::merge::merge_json(&existing, c.servers_key(), &c.server_json(), a.force, shown),
    };
    Ok(merged.map(|m| match m {
        super::merge::Merge::Unchanged => None,
        super::merge::Merge::Text(t) => Some(t),
    }))
}

/// The section `--agents-md` adds: how an agent uses cairn (the method
/// prompt's gist: bootstrap, observe, ready, claim).
pub const AGENTS_SECTION: &str = "## Task graph: cairn

This project keeps its plan in cairn (MCP server `cairn`; `cairn --help` on
the command line). Work from it rather than from memory:

- Start with `task_bootstrap` on your task (or `cairn ready` to see what can
  be started) to read its state, notes and handoffs.
- Claim before you work: `task_query_write` with
  `(-> (query \"ready\") (:take 1) (:claim! 900) (:ids))`, or `cairn claim`.
- Record what you learn as you go with `observe` (`cairn note TEXT`).
- Split work with `task_fork`, order it with `task_link` depends-on, and
  mark it done with `task_update_status` (`cairn done`).
- Ask anything else with `task_query`: `(schema)` lists the language.
";

/// The heading that marks the section as added (so a second `--agents-md`
/// adds nothing).
const AGENTS_HEADING: &str = "## Task graph: cairn";

/// What `--agents-md` will do, decided before anything is written: the file
/// (`AGENTS.md`, or `CLAUDE.md` when only that exists) and its new text, or
/// `None` when it has the section already.
struct AgentsPlan {
    name: &'static str,
    path: PathBuf,
    text: Option<String>,
    exists: bool,
}

/// Plans adding [`AGENTS_SECTION`] to `AGENTS.md` in `root` (or `CLAUDE.md`
/// when only that exists; `AGENTS.md` is created when neither does), unless
/// the file has it already. Refuses (the sentence) a link, a non-regular
/// file or one that is not UTF-8 text. Errors: I/O.
fn plan_agents_md(root: &Path) -> anyhow::Result<Result<AgentsPlan, String>> {
    let claude = root.join("CLAUDE.md");
    let agents_missing = std::fs::symlink_metadata(root.join("AGENTS.md")).is_err();
    let claude_file = std::fs::symlink_metadata(&claude).is_ok_and(|m| m.is_file());
    let name = if agents_missing && claude_file {
        "CLAUDE.md"
    } else {
        "AGENTS.md"
    };
    if let Some(why) = refusal(root, Path::new(name)) {
        return Ok(Err(why));
    }
    let path = root.join(name);
    let (before, exists) = match std::fs::read(&path) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(t) => (t, true),
            Err(_) => {
                return Ok(Err(format!(
                    "{name} is not UTF-8 text; cairn init leaves it as it is."
                )));
            }
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (String::new(), false),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    if before.lines().any(|l| l.trim_end() == AGENTS_HEADING) {
        return Ok(Ok(AgentsPlan {
            name,
            path,
            text: None,
            exists,
        }));
    }
    let sep = match before.as_str() {
        "" => "",
        t if t.ends_with("\n\n") => "",
        t if t.ends_with('\n') => "\n",
        _ => "\n\n",
    };
    Ok(Ok(AgentsPlan {
        name,
        path,
        text: Some(format!("{before}{sep}{AGENTS_SECTION}")),
        exists,
    }))
}

/// Runs `cairn init`: refuses (exit 1, nothing written, no store created)
/// when the file or a folder on its way is a symbolic link or not what it
/// should be (see `refusal`), when the existing file does not parse, when
/// it has a different `cairn` entry and `--force` is not given, or (with
/// `--agents-md`) when `AGENTS.md` cannot take the section; else opens
/// (creating) the store, writes or merges the file and prints what it did:
/// the store path, the file and its text — or with `--json` one object
/// `{"store", "client", "file", "action", "agents_md"}` (docs/cli.md
/// "cairn init"). Paths are shown relative to the project root.
pub(super) fn init_cmd(flag: Option<&Path>, a: &InitArgs) -> anyhow::Result<ExitCode> {
    let (root, db) = project_root(flag)?;
    let rel = a.client.path();
    let file = root.join(&rel);
    let shown = rel.display().to_string();
    if let Some(why) = refusal(&root, &rel) {
        emit_err(&why);
        return Ok(ExitCode::from(1));
    }
    let existed = std::fs::symlink_metadata(&file).is_ok();
    let text = match new_text(a, &file, &shown)? {
        Ok(t) => t,
        Err(why) => {
            emit_err(&why);
            return Ok(ExitCode::from(1));
        }
    };
    // Every refusal comes before the first write: the AGENTS.md one too.
    let agents = if a.agents_md {
        match plan_agents_md(&root)? {
            Ok(plan) => Some(plan),
            Err(why) => {
                emit_err(&why);
                return Ok(ExitCode::from(1));
            }
        }
    } else {
        None
    };
    Store::open(&db).with_context(|| format!("cannot open the store at {}", db.display()))?;
    let store_shown = db
        .strip_prefix(&root)
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| db.display().to_string());
    let mut lines = vec![format!("store: {store_shown}")];
    let action = match &text {
        None => {
            lines.push(format!(
                "{shown} ({}) already has the cairn server; nothing changed.",
                a.client.title()
            ));
            "unchanged"
        }
        Some(t) => {
            if let Some(dir) = file.parent() {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("cannot create {}", dir.display()))?;
            }
            write_config(&file, t, existed)?;
            lines.push(format!(
                "{} {shown} ({}):\n{}",
                if existed {
                    "merged cairn into"
                } else {
                    "wrote"
                },
                a.client.title(),
                t.trim_end()
            ));
            if existed { "merged" } else { "wrote" }
        }
    };
    let agents_json = match &agents {
        None => serde_json::Value::Null,
        Some(plan) => {
            let name = plan.name;
            let added = match &plan.text {
                None => {
                    lines.push(format!("{name} already has the cairn section."));
                    false
                }
                Some(t) => {
                    write_config(&plan.path, t, plan.exists)?;
                    lines.push(format!("added the cairn section to {name}."));
                    true
                }
            };
            json!({ "file": name, "added": added })
        }
    };
    if a.json {
        let client = a
            .client
            .to_possible_value()
            .map(|v| v.get_name().to_string())
            .unwrap_or_default();
        emit(&serde_json::to_string_pretty(&json!({
            "store": store_shown,
            "client": client,
            "file": shown,
            "action": action,
            "agents_md": agents_json,
        }))?)?;
    } else {
        emit(&lines.join("\n"))?;
    }
    Ok(ExitCode::SUCCESS)
}
