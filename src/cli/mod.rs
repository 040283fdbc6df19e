//! The command line (clap): global `--db PATH` (else `CAIRN_DB`, else the
//! location rules of spec/store.md) and `--color WHEN`, and one subcommand
//! per face: the everyday verbs (`verbs`, `views`; issue 12), `init`,
//! `completions`/`man`, `schema`, `serve`/`call`, `query`, `repl`, `watch`, and the
//! store commands (`store_cmds`). docs/cli.md is the reference.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod call_args;
pub mod claims;
pub mod color;
pub mod context;
pub mod doctor;
pub mod edits;
mod generate;
pub mod graph;
pub mod identity;
pub mod init;
mod mcp_cmds;
pub mod memory;
pub mod merge;
mod out;
mod pg_cmds;
pub mod progress;
mod query;
pub mod reference;
mod repl;
mod store_cmds;
pub mod table;
pub mod tree;
pub mod verbs;
pub mod views;
pub mod watch;

use claims::ClaimArgs;
use color::ColorWhen;
use edits::{AbandonArgs, DepAction, EditArgs};
use init::InitArgs;
use verbs::{AddArgs, JsonFlag, LogArgs, NoteArgs, SearchArgs, SlugArgs};
use views::{LsArgs, ReadyArgs};

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
cairn add \"tune search ranking\"             a task (the first one becomes current)\n  \
cairn add \"tokenizer fix\" --under SLUG      a phase of SLUG\n  \
cairn ls --tree                             the open work as a tree\n  \
cairn ready                                 what can be started now, in the whole project\n  \
cairn claim                                 claim the first ready task (it becomes current)\n  \
cairn note \"splitting on - breaks lookups\"  record what you learn on the current task\n  \
cairn dep add SLUG --on OTHER               SLUG waits until OTHER is done\n  \
cairn edit SLUG -d \"new description\"        change a name, description or metadata\n  \
cairn done SLUG                             mark it completed\n  \
cairn query '(-> (active) (:ids))'          list the active tasks' slugs\n  \
cairn query --format json '(-> (all) (:count))'\n  \
cairn repl                                  an interactive TQ prompt\n  \
cairn where                                 which store these commands use"
)]
pub struct Cli {
    /// The store: a cairn.db path or a postgres:// URL (overrides CAIRN_DB and
    /// the project lookup).
    #[arg(long, global = true, value_name = "PATH")]
    pub db: Option<PathBuf>,
    /// The PostgreSQL schema of this project when --db/CAIRN_DB is a
    /// postgres:// URL (default: cairn; docs/team.md).
    #[arg(long = "pg-schema", global = true, value_name = "NAME")]
    pub pg_schema: Option<String>,
    /// Colour: auto (a terminal without NO_COLOR), always or never.
    #[arg(
        long,
        global = true,
        value_enum,
        default_value_t = ColorWhen::Auto,
        value_name = "WHEN",
        hide_possible_values = true
    )]
    pub color: ColorWhen,
    /// The agent name claims are recorded under (else CAIRN_AGENT, else USER@HOST).
    #[arg(long = "as", global = true, value_name = "NAME", value_parser = identity::parse_agent)]
    pub agent: Option<String>,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands. `--help` lists them by `display_order`: the verbs
/// (1–18), init, schema, completions, man (20s), serve and call (25s), query,
/// repl (30s), then the store commands (40s).
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create a task, or with --under a phase of one (task_create / task_fork).
    #[command(display_order = 1)]
    Add(AddArgs),
    /// List tasks as a table: slug, status, name, observations, last update (newest first).
    #[command(display_order = 2)]
    Ls(LsArgs),
    /// Show a task: status, description, parent, children, edges, metadata, recent notes (task_get).
    #[command(display_order = 3)]
    Show(SlugArgs),
    /// Mark a task completed (task_update_status).
    #[command(display_order = 5)]
    Done(SlugArgs),
    /// Mark a task active (task_update_status).
    #[command(display_order = 6)]
    Start(SlugArgs),
    /// Mark a task blocked (task_update_status).
    #[command(display_order = 7)]
    Block(SlugArgs),
    /// Record an observation on a task (observe).
    #[command(
        display_order = 10,
        override_usage = "cairn note [OPTIONS] [SLUG] <TEXT>"
    )]
    Note(NoteArgs),
    /// A task's events, most recent first (timeline).
    #[command(display_order = 11)]
    Log(LogArgs),
    /// Full-text search over observations, handoffs, task names and descriptions (task_search).
    #[command(display_order = 12)]
    Search(SearchArgs),
    /// The board in the browser, read-only, on 127.0.0.1 with a one-time link (docs/board.md).
    #[command(display_order = 28)]
    Board(graph::BoardArgs),
    /// The plan as a graph: Mermaid, Graphviz DOT or JSON (phases nested, depends-on arrows, statuses, claims).
    #[command(display_order = 19)]
    Graph(graph::GraphArgs),
    /// What can be started now: the `ready` view (not done, not blocked, dependencies and phases done, unclaimed).
    #[command(display_order = 13)]
    Ready(ReadyArgs),
    /// Show or set the current task the verbs default to.
    #[command(display_order = 18)]
    Current(SlugArgs),
    /// Claim a task for this agent (default: the first ready one, atomically); it becomes current.
    #[command(display_order = 14)]
    Claim(ClaimArgs),
    /// End this agent's claim on a task (default: the current task).
    #[command(display_order = 15)]
    Release(SlugArgs),
    /// The tasks this agent holds a live claim on.
    #[command(display_order = 16)]
    Mine(JsonFlag),
    /// Change a task: its name, description or metadata (task_set_metadata).
    #[command(display_order = 4)]
    Edit(EditArgs),
    /// Make a completed or abandoned task active again (task_update_status).
    #[command(display_order = 8)]
    Reopen(SlugArgs),
    /// Abandon a task, recording why (observe, task_update_status).
    #[command(display_order = 9)]
    Abandon(AbandonArgs),
    /// Dependencies after creation: add, rm, tree (task_link / task_sever depends-on).
    #[command(display_order = 17)]
    Dep {
        /// add, rm or tree.
        #[command(subcommand)]
        action: DepAction,
    },
    /// Create the project's store and the MCP configuration file of a client.
    #[command(display_order = 21)]
    Init(InitArgs),
    /// The TQ vocabulary as tables by category: name, kind, signature, doc.
    #[command(display_order = 22)]
    Schema(JsonFlag),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    #[command(
        display_order = 23,
        after_help = "Examples:\n  \
cairn completions bash > ~/.local/share/bash-completion/completions/cairn\n  \
cairn completions zsh > ~/.zfunc/_cairn\n  \
cairn completions fish > ~/.config/fish/completions/cairn.fish"
    )]
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page cairn(1) as roff (cairn man | man -l -).
    #[command(display_order = 24)]
    Man,
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
cairn query --explain '(-> (active) (:where (has :parent)))'\n  \
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
:schema             the vocabulary as tables: sources, steps, predicates, write forms\n  \
:views              the named views and their TQ\n  \
:current [SLUG]     show or set the current task, for (current) and plan\n  \
:quit               leave (as does Ctrl-D)"
    )]
    #[command(display_order = 31)]
    Repl(repl::ReplArgs),
    /// Print a query's result, then reprint it whenever it changes (Ctrl-C to stop).
    #[command(
        long_about = "Print a query's result, then reprint it whenever it changes.\n\n\
The query runs on the read surface, as with `cairn query`. cairn then looks\n\
at the store's change counter every --interval milliseconds (any process's\n\
commits move it) and re-runs the query when it moved, and at least every\n\
5 s; a changed result is printed after a blank line and `-- HH:MM:SS UTC`.\n\
Ctrl-C stops it. Exit status: 0 after --count prints, 2 when the query\n\
fails (its error is printed; nothing is watched).",
        after_help = "Examples:\n  \
cairn watch --current SLUG '(query \"plan-frontier\")'\n  \
cairn watch '(-> (active) (:count))'\n  \
cairn watch --count 2 '(-> (all) (:ids))'    print, wait for one change, exit"
    )]
    #[command(display_order = 32)]
    Watch(watch::WatchArgs),
    /// Print the database path, the project root and which rule chose them.
    #[command(display_order = 40)]
    Where(JsonFlag),
    /// Check the setup: the store and its rule, schema, logs vs database, git attributes, MCP files and PATH.
    #[command(display_order = 44)]
    Doctor(JsonFlag),
    /// Re-fold the projection from the event log.
    #[command(display_order = 41)]
    Rebuild {
        /// First replace the database's events with the union of the
        /// per-task logs (.cairn/tasks/*/events.ndjson).
        #[arg(long)]
        from_logs: bool,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Check that the projection is a faithful fold of the log (exit 0/1).
    #[command(display_order = 42)]
    Verify(JsonFlag),
    /// Copy this project's store into PostgreSQL (by event id; idempotent),
    /// then compare digests (docs/team.md).
    #[command(display_order = 46)]
    Push {
        /// The target: postgres://USER@HOST/DB (schema: --pg-schema, else
        /// ?options=-csearch_path%3DNAME, else cairn).
        url: String,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Write the per-task NDJSON logs of the store (SQLite or PostgreSQL)
    /// into DIR (a backup git can hold; `cairn import DIR` reads it back into a store).
    #[command(display_order = 47)]
    Export {
        /// The directory to write DIR/tasks/*/events.ndjson into (its
        /// tasks/ must be empty or missing).
        #[arg(long, value_name = "DIR")]
        logs: PathBuf,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Import the original tool's store (its .kli/ directory, or a project
    /// holding one) into this store, once: a second import changes nothing.
    #[command(display_order = 43)]
    Import {
        /// The .kli/ directory (or the project directory containing it).
        path: std::path::PathBuf,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Serve MCP over stdio (the fourteen tools, seven prompts, seven
    /// resources, tasks and views as subscribable resources) until the
    /// client closes stdin; with --http, over Streamable HTTP at /mcp (and
    /// the read-only board at /, docs/board.md) until
    /// SIGINT/SIGTERM.
    #[command(display_order = 25)]
    Serve {
        /// Capabilities this server holds: a comma list of read, observe, write.
        /// Over HTTP, the most any token's session gets.
        #[arg(
            long,
            value_enum,
            value_delimiter = ',',
            default_value = "read,observe,write",
            value_name = "CAPS"
        )]
        grant: Vec<mcp_cmds::Grant>,
        #[command(flatten)]
        http: mcp_cmds::HttpArgs,
    },
    /// Manage the bearer tokens of `cairn serve --http` (stored hashed in
    /// the store's tokens table, never in git).
    #[command(display_order = 27)]
    Token {
        /// create, list or revoke.
        #[command(subcommand)]
        action: mcp_cmds::TokenAction,
    },
    /// Run one MCP tool through the same registry and print its text
    /// (exit 0, 1 when the tool returned an error, 2 for an unknown tool).
    #[command(display_order = 26, after_help = call_args::tools_help())]
    Call {
        /// The tool name, e.g. task_create.
        tool: String,
        /// The arguments: key=value words (key:=JSON for a JSON value), or
        /// one JSON object, e.g. '{"name": "tune search ranking"}'.
        #[arg(value_name = "ARGS")]
        args: Vec<String>,
        /// Start the call's session with this task current (otherwise the
        /// verbs' current task, `cairn current`, which a tool that moves it
        /// updates; on a PostgreSQL store, none: give --current there).
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
    memory::limit_arenas();
    let cli = Cli::parse();
    progress::install();
    color::apply(cli.color);
    identity::set_flag(cli.agent.as_deref());
    if let Err(msg) = identity::check_env() {
        out::emit_err(&format!("error: {msg}"));
        return ExitCode::from(2);
    }
    let db = cli.db.as_deref();
    // `push URL --pg-schema NAME` names the TARGET's schema, not --db's.
    let db_schema = match &cli.command {
        Command::Push { .. } => None,
        _ => cli.pg_schema.as_deref(),
    };
    let result = match pg_cmds::target(db, db_schema) {
        Ok(Some(t)) => run_pg(&cli, &t),
        Ok(None) => run_sqlite(&cli),
        Err(e) => Err(e),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            out::emit_err(&format!("error: {e:#}"));
            ExitCode::from(2)
        }
    }
}

/// The commands on a PostgreSQL store (`cli::pg_cmds`).
fn run_pg(cli: &Cli, t: &crate::store::pg::PgTarget) -> anyhow::Result<ExitCode> {
    match &cli.command {
        Command::Where(_) => pg_cmds::where_cmd(t, cli.db.is_some()),
        Command::Verify(j) => pg_cmds::verify_cmd(t, j.json),
        Command::Rebuild { from_logs, .. } => pg_cmds::rebuild_cmd(t, *from_logs),
        Command::Export { logs, out } => pg_cmds::export_pg(t, logs, out.json),
        Command::Push { url, out } => {
            pg_cmds::push_cmd(cli.db.as_deref(), url, cli.pg_schema.as_deref(), out.json)
        }
        Command::Serve { grant, http } => mcp_cmds::serve_cmd(None, grant, http, Some(t)),
        Command::Board(a) => graph::board_cmd(None, a, Some(t)),
        Command::Call {
            tool,
            args,
            current,
        } => mcp_cmds::call_cmd(None, tool, args, current.as_deref(), Some(t)),
        Command::Query(args) => query::query_pg(t, args),
        Command::Watch(args) => watch::watch_pg(t, args),
        Command::Repl(args) => repl::repl_pg(t, args),
        Command::Token { action } => mcp_cmds::token_cmd(None, action, Some(t)),
        // The verbs open their store through `context::Cx`, which opens the
        // selected PostgreSQL store.
        Command::Add(_)
        | Command::Ls(_)
        | Command::Show(_)
        | Command::Done(_)
        | Command::Start(_)
        | Command::Block(_)
        | Command::Note(_)
        | Command::Log(_)
        | Command::Search(_)
        | Command::Ready(_)
        | Command::Graph(_)
        | Command::Current(_)
        | Command::Claim(_)
        | Command::Release(_)
        | Command::Mine(_)
        | Command::Edit(_)
        | Command::Reopen(_)
        | Command::Abandon(_)
        | Command::Dep { .. }
        | Command::Schema(_) => {
            context::select_pg(t);
            run_sqlite(cli)
        }
        Command::Completions { shell } => generate::completions_cmd(*shell),
        Command::Man => generate::man_cmd(),
        other => pg_cmds::not_yet(command_name(other)),
    }
}

/// The subcommand's name as typed (for sentences).
fn command_name(c: &Command) -> &'static str {
    match c {
        Command::Add(_) => "add",
        Command::Ls(_) => "ls",
        Command::Show(_) => "show",
        Command::Done(_) => "done",
        Command::Start(_) => "start",
        Command::Block(_) => "block",
        Command::Note(_) => "note",
        Command::Log(_) => "log",
        Command::Search(_) => "search",
        Command::Ready(_) => "ready",
        Command::Graph(_) => "graph",
        Command::Board(_) => "board",
        Command::Current(_) => "current",
        Command::Claim(_) => "claim",
        Command::Release(_) => "release",
        Command::Mine(_) => "mine",
        Command::Edit(_) => "edit",
        Command::Reopen(_) => "reopen",
        Command::Abandon(_) => "abandon",
        Command::Dep { .. } => "dep",
        Command::Doctor(_) => "doctor",
        Command::Init(_) => "init",
        Command::Schema(_) => "schema",
        Command::Completions { .. } => "completions",
        Command::Man => "man",
        Command::Query(_) => "query",
        Command::Repl(_) => "repl",
        Command::Watch(_) => "watch",
        Command::Where(_) => "where",
        Command::Rebuild { .. } => "rebuild",
        Command::Verify(_) => "verify",
        Command::Push { .. } => "push",
        Command::Export { .. } => "export",
        Command::Import { .. } => "import",
        Command::Serve { .. } => "serve",
        Command::Token { .. } => "token",
        Command::Call { .. } => "call",
        Command::StressAppend { .. } => "stress-append",
    }
}

/// The commands on a SQLite store.
fn run_sqlite(cli: &Cli) -> anyhow::Result<ExitCode> {
    let db = cli.db.as_deref();
    match &cli.command {
        Command::Add(a) => verbs::add_cmd(db, a),
        Command::Ls(a) => views::ls_cmd(db, a),
        Command::Show(a) => verbs::show_cmd(db, a),
        Command::Done(a) => verbs::status_cmd(db, a, "completed"),
        Command::Start(a) => verbs::status_cmd(db, a, "active"),
        Command::Block(a) => verbs::status_cmd(db, a, "blocked"),
        Command::Note(a) => verbs::note_cmd(db, a),
        Command::Log(a) => verbs::log_cmd(db, a),
        Command::Search(a) => verbs::search_cmd(db, a),
        Command::Ready(a) => views::ready_cmd(db, a),
        Command::Graph(a) => graph::graph_cmd(db, a),
        Command::Board(a) => graph::board_cmd(db, a, None),
        Command::Current(a) => verbs::current_cmd(db, a),
        Command::Claim(a) => claims::claim_cmd(db, a),
        Command::Release(a) => claims::release_cmd(db, a),
        Command::Mine(a) => claims::mine_cmd(db, a),
        Command::Edit(a) => edits::edit_cmd(db, a),
        Command::Reopen(a) => edits::reopen_cmd(db, a),
        Command::Abandon(a) => edits::abandon_cmd(db, a),
        Command::Dep { action } => edits::dep_cmd(db, action),
        Command::Init(a) => init::init_cmd(db, a),
        Command::Schema(a) => views::schema_cmd(db, a),
        Command::Completions { shell } => generate::completions_cmd(*shell),
        Command::Man => generate::man_cmd(),
        Command::Query(args) => query::query_cmd(cli.db.as_deref(), args),
        Command::Repl(args) => repl::repl_cmd(cli.db.as_deref(), args),
        Command::Watch(args) => watch::watch_cmd(cli.db.as_deref(), args),
        Command::Where(a) => store_cmds::where_cmd(db, a.json),
        Command::Doctor(a) => doctor::doctor_cmd(db, a),
        Command::Rebuild { from_logs, out } => store_cmds::rebuild_cmd(db, *from_logs, out.json),
        Command::Verify(a) => store_cmds::verify_cmd(db, a.json),
        Command::Import { path, out } => store_cmds::import_cmd(db, path, out.json),
        Command::Serve { grant, http } => mcp_cmds::serve_cmd(cli.db.as_deref(), grant, http, None),
        Command::Token { action } => mcp_cmds::token_cmd(cli.db.as_deref(), action, None),
        Command::Call {
            tool,
            args,
            current,
        } => mcp_cmds::call_cmd(cli.db.as_deref(), tool, args, current.as_deref(), None),
        Command::StressAppend {
            count,
            session,
            task,
        } => store_cmds::stress_append(cli.db.as_deref(), *count, session, task),
        Command::Push { url, out } => {
            pg_cmds::push_cmd(db, url, cli.pg_schema.as_deref(), out.json)
        }
        Command::Export { logs, out } => pg_cmds::export_sqlite(db, logs, out.json),
    }
}
