//! `cairn query [--write] [--format text|json] [--explain] [QUERY | -]`
//! (issue 6; docs/cli.md "cairn query"): one TQ query through
//! `tq::Engine`, its result on stdout, its error as an ariadne report on
//! stderr. Exit 0 success, 1 query error, 2 usage error.

use std::io::{IsTerminal, Read};
use std::path::Path;
use std::process::ExitCode;

use clap::{Args, ValueEnum};

use super::out::{emit, emit_err};
use super::store_cmds;
use crate::session::Session;
use crate::store::DbRef;
use crate::store::pg::{PgStore, PgTarget};
use crate::tq::engine::{Engine, Explain};
use crate::tq::json::run_json;
use crate::tq::{Diagnostic, Surface};

/// How `cairn query` prints a result: `text` is spec/tq.md §4, `json` is
/// docs/cli.md "JSON output".
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Exactly the text the MCP tools return.
    Text,
    /// Structured data: arrays of objects, strings, numbers.
    Json,
}

/// The arguments of `cairn query`.
#[derive(Debug, Args)]
pub struct QueryArgs {
    /// Compile for the write surface: mutation steps and define!/undefine!
    /// are allowed and recorded (one transaction).
    #[arg(long)]
    pub write: bool,
    /// text: exactly what MCP returns; json: structured data.
    #[arg(long, value_enum, default_value_t = Format::Text, value_name = "FORMAT")]
    pub format: Format,
    /// Print the IR before and after the rewrites (and the rules that fired),
    /// the SQL, its parameters and SQLite's query plan instead of running.
    #[arg(long)]
    pub explain: bool,
    /// Turn the compiler's rewrites off (the naive lowering; for bug reports:
    /// the answer must not change).
    #[arg(long)]
    pub no_optimize: bool,
    /// The current task for this query, so (current) and the plan,
    /// plan-frontier, frontier and knowledge views work.
    #[arg(long, value_name = "SLUG")]
    pub current: Option<String>,
    /// The TQ query, e.g. '(-> (active) (:ids))'; `-` (or nothing, when stdin
    /// is not a terminal) reads it from stdin.
    #[arg(value_name = "QUERY")]
    pub query: Option<String>,
}

/// True when a report written to `stream_is_terminal` may be coloured:
/// `--color always`, or (`--color auto`) it is a terminal and `NO_COLOR` is
/// unset or empty; never with `--color never`.
pub(super) fn use_color(stream_is_terminal: bool) -> bool {
    match anstream::ColorChoice::global() {
        anstream::ColorChoice::Never => false,
        anstream::ColorChoice::Always | anstream::ColorChoice::AlwaysAnsi => true,
        anstream::ColorChoice::Auto => {
            stream_is_terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    }
}

/// Prints `d` for `source` on stderr as an ariadne report (colour only on a
/// terminal without `NO_COLOR`).
pub(super) fn report(d: &Diagnostic, source: &str) {
    let color = use_color(std::io::stderr().is_terminal());
    emit_err(d.render_ariadne(source, color).trim_end());
}

fn usage(msg: &str) -> ExitCode {
    emit_err(&format!("error: {msg}"));
    ExitCode::from(2)
}

/// Runs `cairn query`. Errors (the store cannot be opened, stdin unreadable)
/// are returned for `cli::run` to print (exit 2).
pub(super) fn query_cmd(flag: Option<&Path>, args: &QueryArgs) -> anyhow::Result<ExitCode> {
    let text = match query_text(args)? {
        Ok(t) => t,
        Err(code) => return Ok(code),
    };
    // A read never waits on a writer and creates nothing (docs/store.md
    // "Reads never wait, never create"); `--write` opens as a writer.
    let store = if args.write {
        store_cmds::open(flag)?
    } else {
        super::context::open_read(flag)?.0
    };
    query_on((&store).into(), args, &text)
}

/// `cairn query` on a PostgreSQL store (`--db postgres://…`).
pub(super) fn query_pg(t: &PgTarget, args: &QueryArgs) -> anyhow::Result<ExitCode> {
    let text = match query_text(args)? {
        Ok(t) => t,
        Err(code) => return Ok(code),
    };
    let db = PgStore::open(t)?;
    query_on((&db).into(), args, &text)
}

/// The query's text (argument, `-` or piped stdin), or the usage exit.
fn query_text(args: &QueryArgs) -> anyhow::Result<Result<String, ExitCode>> {
    let text = match args.query.as_deref() {
        Some("-") => read_stdin()?,
        Some(q) => q.to_string(),
        None if !std::io::stdin().is_terminal() => read_stdin()?,
        None => return Ok(Err(usage("give a QUERY, or - to read it from stdin."))),
    };
    if text.trim().is_empty() {
        return Ok(Err(usage("query is required.")));
    }
    Ok(Ok(text))
}

/// Runs `text` on `store` as `args` say (either engine).
fn query_on(store: DbRef<'_>, args: &QueryArgs, text: &str) -> anyhow::Result<ExitCode> {
    let text = text.to_string();
    let mut session = crate::cli::identity::session();
    if let Some(slug) = &args.current
        && let Err(msg) = select_current(store, &mut session, slug)
    {
        emit_err(&msg);
        return Ok(ExitCode::from(1));
    }
    let mut engine = Engine::new()
        .with_clock(super::context::clock())
        .with_test_hooks();
    engine.optimize = !args.no_optimize;
    let surface = if args.write {
        Surface::Write
    } else {
        Surface::Read
    };
    if args.explain {
        return Ok(match engine.explain_db(store, &session, &text, surface) {
            Ok(ex) => {
                match args.format {
                    Format::Text => emit(&explain_text(&ex))?,
                    Format::Json => emit(&serde_json::to_string_pretty(&ex)?)?,
                };
                ExitCode::SUCCESS
            }
            Err(d) => {
                report(&d, &text);
                ExitCode::from(1)
            }
        });
    }
    let result = match args.format {
        Format::Text => engine.run_db(store, &session, &text, surface),
        Format::Json => run_json(&engine, store, &session, &text, surface).and_then(|v| {
            serde_json::to_string_pretty(&v).map_err(|e| Diagnostic::execution(e.to_string()))
        }),
    };
    Ok(match result {
        Ok(out) => {
            emit(&out)?;
            if matches!(args.format, Format::Text) && out.contains(crate::tq::render::CUT) {
                emit_err(TRUNCATED_HELP);
            }
            ExitCode::SUCCESS
        }
        Err(mut d) => {
            if !args.write && d.message == crate::tq::plan::MUTATION_REFUSED && d.help.is_none() {
                d.help = Some("cairn query --write runs write queries.".to_string());
            }
            if args.current.is_none()
                && d.message == crate::tq::plan::NO_CURRENT
                && d.help.is_none()
            {
                d.help = Some(NO_CURRENT_HELP.to_string());
            }
            report(&d, &text);
            ExitCode::from(1)
        }
    })
}

/// The line `cairn query` adds on stderr under a text cut at its budget
/// (16,000 characters, the MCP text's): the JSON is not cut.
pub(super) const TRUNCATED_HELP: &str =
    "cairn query: the text stops at 16,000 characters; --format json prints every row.";

/// The help line under `This query needs a current task; select one
/// first.` when `cairn query` ran without `--current` (docs/cli.md: each
/// process is a new session; the verbs' remembered task is not a query's).
pub(super) const NO_CURRENT_HELP: &str = "cairn query --current SLUG gives this query a current task (cairn current shows the verbs' one).";

/// Makes `slug` (a depot prefix `name:` stripped) the session's current
/// task. Errors: `No task SLUG.` when the store has no such task.
pub(super) fn select_current(
    store: DbRef<'_>,
    session: &mut Session,
    slug: &str,
) -> Result<(), String> {
    let slug = slug.rsplit(':').next().unwrap_or(slug).trim();
    match store.task_exists(slug) {
        Ok(true) => {
            session.switch_to(slug);
            Ok(())
        }
        Ok(false) => Err(format!("No task {slug}.")),
        Err(e) => Err(e.to_string()),
    }
}

fn read_stdin() -> anyhow::Result<String> {
    let mut s = String::new();
    std::io::stdin().read_to_string(&mut s)?;
    Ok(s)
}

/// The text of `--explain` (and the REPL's `:explain`): per statement a
/// `-- statement K of N` line, the SQL, `-- parameters` with `?N = VALUE`
/// lines, and `-- query plan` with SQLite's rows.
pub fn explain_text(ex: &Explain) -> String {
    let n = ex.statements.len();
    let mut out = Vec::new();
    if let (Some(before), Some(after)) = (&ex.ir, &ex.optimized) {
        out.push("-- IR".to_string());
        out.push(before.clone());
        out.push("-- rules fired".to_string());
        if ex.rules.is_empty() {
            out.push("(none)".to_string());
        }
        out.extend(ex.rules.iter().cloned());
        out.push("-- optimized IR".to_string());
        out.push(after.clone());
    }
    for (k, st) in ex.statements.iter().enumerate() {
        out.push(format!("-- statement {} of {n}", k + 1));
        out.push(st.sql.trim_end().to_string());
        out.push("-- parameters".to_string());
        if st.params.is_empty() {
            out.push("(none)".to_string());
        }
        for (i, p) in st.params.iter().enumerate() {
            out.push(format!("?{} = {p}", i + 1));
        }
        out.push("-- query plan".to_string());
        out.extend(st.plan.iter().cloned());
    }
    out.join("\n")
}

/// The text of the REPL's `:sql`: per statement the SQL and its parameters
/// (no query plan).
pub fn sql_text(ex: &Explain) -> String {
    let mut out = Vec::new();
    for st in &ex.statements {
        out.push(st.sql.trim_end().to_string());
        for (i, p) in st.params.iter().enumerate() {
            out.push(format!("-- ?{} = {p}", i + 1));
        }
    }
    out.join("\n")
}
