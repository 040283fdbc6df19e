//! The command line (clap): global `--db PATH` (else `CAIRN_DB`, else the
//! location rules of spec/store.md), and one subcommand per face. Store
//! commands live in `store_cmds`; `serve`, `call`, `query`, `repl` are added
//! as further [`Command`] variants with their own files.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod json;
mod mcp_cmds;
mod out;
mod query;
mod repl;
mod store_cmds;

pub use json::output_json;
pub use query::run_json;
pub use repl::balance::{Balance, Balancer, balance};
pub use repl::highlight::highlight;

/// `cairn [--db PATH] COMMAND`.
#[derive(Debug, Parser)]
#[command(
    name = "cairn",
    version,
    about = "A durable task graph for coding agents.",
    long_about = "A durable task graph for coding agents.\n\n\
cairn keeps a plan outside the conversation: tasks, typed edges, statuses,\n\
metadata and observations, stored as an event log folded into SQLite.\n\
Agents reach it over MCP (`cairn serve`); people query it with TQ.",
    after_help = "Examples:\n  \
cairn query '(-> (active) (:ids))'          list the active tasks' slugs\n  \
cairn query --format json '(-> (all) (:count))'\n  \
cairn repl                                  an interactive TQ prompt\n  \
cairn where                                 which store these commands use"
)]
pub struct Cli {
    /// The cairn.db to use (overrides CAIRN_DB and the project lookup).
    #[arg(long, global = true, value_name = "PATH")]
    pub db: Option<PathBuf>,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands. `--help` lists them by `display_order`: serve and call
/// (declared without one) first, then query, repl (30s), then the store
/// commands (40s).
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one TQ query and print its result (exit 0 ok, 1 query error, 2 usage error).
    #[command(
        long_about = "Run one TQ query and print its result.\n\n\
The text is exactly what the MCP tools task_query / task_query_write return.\n\
Errors are printed to stderr with a caret under the offending text.\n\
Exit status: 0 success, 1 query error, 2 usage error.",
        after_help = "Examples:\n  \
cairn query '(-> (active) (:select :status :updated-ts))'\n  \
cairn query --current SLUG '(-> (query \"frontier\") (:ids))'\n  \
echo '(-> (all) (:count))' | cairn query -\n  \
cairn query --explain '(-> (active) (:where (has :priority)))'\n  \
cairn query --write '(-> (node \"old-spike\") (:set-status! :abandoned))'\n\n\
Start with (schema), (fields), (edges) and (views): the language describes itself."
    )]
    #[command(display_order = 30)]
    Query(query::QueryArgs),
    /// Interactive TQ prompt: multi-line forms, completion, history, :help.
    #[command(
        long_about = "Interactive TQ prompt.\n\n\
The prompt shows the surface: `tq>` read-only, `tq!>` when mutations are on.\n\
A form continues over lines until its parens balance. Tab completes sources,\n\
steps, predicates, fields, edges, view names, and task slugs in (node \"...\").\n\
History is kept next to the store (cairn.db.repl_history). Ctrl-C drops\n\
the input, Ctrl-D leaves. With stdin not a terminal, forms are read one\n\
after another and each result is printed (exit 1 if any form failed).",
        after_help = "Meta commands:\n  \
:help               this list\n  \
:write on|off       allow mutations (prompt tq!>) or not (tq>)\n  \
:sql QUERY          the SQL a query compiles to, with its parameters\n  \
:explain QUERY      the SQL, its parameters and SQLite's query plan\n  \
:schema             the vocabulary: sources, steps, predicates, write forms\n  \
:views              the named views and their TQ\n  \
:current [SLUG]     show or set the current task, for (current) and plan\n  \
:quit               leave (as does Ctrl-D)"
    )]
    #[command(display_order = 31)]
    Repl(repl::ReplArgs),
    /// Print the database path, the project root and which rule chose them.
    #[command(display_order = 40)]
    Where,
    /// Re-fold the projection from the event log.
    #[command(display_order = 41)]
    Rebuild {
        /// First replace the database's events with the union of the
        /// per-task logs (.cairn/tasks/*/events.ndjson).
        #[arg(long)]
        from_logs: bool,
    },
    /// Check that the projection is a faithful fold of the log (exit 0/1).
    #[command(display_order = 42)]
    Verify,
    /// Import the original tool's store (its .kli/ directory, or a project
    /// holding one) into this store, once: a second import changes nothing.
    #[command(display_order = 43)]
    Import {
        /// The .kli/ directory (or the project directory containing it).
        path: std::path::PathBuf,
    },
    /// Serve MCP over stdio (the fourteen tools, seven prompts, seven
    /// resources) until the client closes stdin; with --http, over
    /// Streamable HTTP at /mcp until SIGINT/SIGTERM.
    Serve {
        /// Capabilities this server holds: a comma list of read, observe, write.
        /// Over HTTP, the most any token's session gets.
        #[arg(long, default_value = "read,observe,write", value_name = "CAPS")]
        grant: String,
        #[command(flatten)]
        http: mcp_cmds::HttpArgs,
    },
    /// Manage the bearer tokens of `cairn serve --http` (stored hashed in
    /// cairn.db.tokens next to the store, never in git).
    Token {
        /// create, list or revoke.
        #[command(subcommand)]
        action: mcp_cmds::TokenAction,
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
/// 0 success, 1 a negative answer (`verify` found a mismatch, a query
/// failed), 2 an error or a usage error (printed to stderr as
/// `error: MESSAGE`; clap's own usage errors also exit 2).
pub fn run() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Query(args) => query::query_cmd(cli.db.as_deref(), args),
        Command::Repl(args) => repl::repl_cmd(cli.db.as_deref(), args),
        Command::Where => store_cmds::where_cmd(cli.db.as_deref()),
        Command::Rebuild { from_logs } => store_cmds::rebuild_cmd(cli.db.as_deref(), *from_logs),
        Command::Verify => store_cmds::verify_cmd(cli.db.as_deref()),
        Command::Import { path } => store_cmds::import_cmd(cli.db.as_deref(), path),
        Command::Serve { grant, http } => mcp_cmds::serve_cmd(cli.db.as_deref(), grant, http),
        Command::Token { action } => mcp_cmds::token_cmd(cli.db.as_deref(), action),
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
            out::emit_err(&format!("error: {e:#}"));
            ExitCode::from(2)
        }
    }
}
