//! The command line (clap): global `--db PATH` (else `CAIRN_DB`, else the
//! location rules of spec/store.md), and one subcommand per face. Store
//! commands live in `store_cmds`; `serve`, `call`, `query`, `repl` are added
//! as further [`Command`] variants with their own files.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod mcp_cmds;
mod store_cmds;

/// `cairn [--db PATH] COMMAND`.
#[derive(Debug, Parser)]
#[command(
    name = "cairn",
    version,
    about = "A durable task graph for coding agents."
)]
pub struct Cli {
    /// The cairn.db to use (overrides CAIRN_DB and the project lookup).
    #[arg(long, global = true, value_name = "PATH")]
    pub db: Option<PathBuf>,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the database path, the project root and which rule chose them.
    Where,
    /// Re-fold the projection from the event log.
    Rebuild,
    /// Check that the projection is a faithful fold of the log (exit 0/1).
    Verify,
    /// Serve MCP over stdio (the fourteen tools, seven prompts, seven
    /// resources) until the client closes stdin.
    Serve {
        /// Capabilities this server holds: a comma list of read, observe, write.
        #[arg(long, default_value = "read,observe,write", value_name = "CAPS")]
        grant: String,
    },
    /// Run one MCP tool through the same registry and print its text
    /// (exit 0, or 1 when the tool returned an error).
    Call {
        /// The tool name, e.g. task_create.
        tool: String,
        /// The arguments as a JSON object, e.g. '{"name": "tune search ranking"}'.
        #[arg(default_value = "{}")]
        json: String,
        /// Start the call's session with this task current (each call is
        /// its own session, which otherwise has no current task).
        #[arg(long, value_name = "SLUG")]
        current: Option<String>,
    },
    /// Test helper: append COUNT observations, one transaction each,
    /// printing each seq after commit.
    #[command(hide = true)]
    StressAppend {
        /// How many events to append.
        #[arg(long)]
        count: u64,
        /// The session id written into each event.
        #[arg(long)]
        session: String,
        /// The subject task's slug.
        #[arg(long, default_value = "stress-task")]
        task: String,
    },
}

/// Parses `std::env::args`, runs the command, and returns its exit code:
/// 0 success, 1 a negative answer (`verify` found a mismatch), 2 an error
/// (printed to stderr as `error: MESSAGE`).
pub fn run() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Where => store_cmds::where_cmd(cli.db.as_deref()),
        Command::Rebuild => store_cmds::rebuild_cmd(cli.db.as_deref()),
        Command::Verify => store_cmds::verify_cmd(cli.db.as_deref()),
        Command::Serve { grant } => mcp_cmds::serve_cmd(cli.db.as_deref(), grant),
        Command::Call {
            tool,
            json,
            current,
        } => mcp_cmds::call_cmd(cli.db.as_deref(), tool, json, current.as_deref()),
        Command::StressAppend {
            count,
            session,
            task,
        } => store_cmds::stress_append(cli.db.as_deref(), *count, session, task),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
