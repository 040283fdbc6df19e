//! `cairn repl [--write]` (issue 6; docs/cli.md "cairn repl"): the TQ REPL.
//! On a terminal: rustyline with completion, highlighting, multi-line forms
//! and history in the store directory. With stdin not a terminal: forms are
//! read one after another (a form ends where its parens balance) and each
//! result printed, for scripts and tests.

pub mod balance;
pub mod complete;
pub mod helper;
pub mod highlight;
pub mod meta;

use std::io::{BufRead, IsTerminal};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use rustyline::Editor;
use rustyline::config::{CompletionType, Config};
use rustyline::error::ReadlineError;
use rustyline::history::FileHistory;

use super::out::{emit, emit_err};
use super::query::use_color;
use super::store_cmds;
use crate::session::Session;
use crate::store::pg::{PgStore, PgTarget};
use crate::store::{DbRef, Store};
use crate::tq::engine::Engine;
use crate::tq::parser::{MAX_BYTES, parse};
use crate::tq::{Diagnostic, Surface};
use balance::{Balancer, balance};
use helper::ReplHelper;

/// The arguments of `cairn repl`.
#[derive(Debug, Args)]
pub struct ReplArgs {
    /// Start on the write surface (as `:write on`): mutations are recorded.
    #[arg(long)]
    pub write: bool,
    /// Start with this current task (as `:current SLUG`).
    #[arg(long, value_name = "SLUG")]
    pub current: Option<String>,
}

/// What one input produced.
#[derive(Debug)]
pub enum Reply {
    /// A result or message for stdout.
    Text(String),
    /// A TQ diagnostic and the query text it points into.
    Diag(Diagnostic, String),
    /// A REPL error line for stderr (`No task SLUG.`, unknown command).
    Error(String),
    /// `:quit`.
    Quit,
    /// Nothing to print (blank input).
    Nothing,
}

/// One REPL session: a store, a session (current task), an engine and the
/// surface queries compile for.
pub struct Repl<'a> {
    store: DbRef<'a>,
    session: Session,
    engine: Engine,
    surface: Surface,
}

impl<'a> Repl<'a> {
    /// A REPL over `store` on `surface`, with a fresh session.
    pub fn new(store: DbRef<'a>, surface: Surface) -> Repl<'a> {
        Repl {
            store,
            session: crate::cli::identity::session(),
            engine: Engine::new().with_clock(crate::cli::context::clock()),
            surface,
        }
    }

    /// `tq> ` on the read surface, `tq!> ` on the write surface.
    pub fn prompt(&self) -> &'static str {
        match self.surface {
            Surface::Read => "tq> ",
            Surface::Write => "tq!> ",
        }
    }

    fn query(&mut self, text: &str) -> Reply {
        match self
            .engine
            .run_db(self.store, &self.session, text, self.surface)
        {
            Ok(t) => Reply::Text(t),
            Err(d) => Reply::Diag(d, text.to_string()),
        }
    }

    /// Evaluates one whole input: a meta command (starts with `:`) or a TQ
    /// query on the current surface.
    pub fn eval(&mut self, input: &str) -> Reply {
        let t = input.trim();
        // Reconcile with the per-task logs first (O(1) when nothing moved).
        if let Err(e) = self.store.sync() {
            eprintln!("cairn: could not reconcile the store with its logs: {e}");
        }
        if !balance(t).content {
            Reply::Nothing
        } else if t.starts_with(':') {
            self.meta(t)
        } else {
            self.query(input)
        }
    }
}

/// Prints `reply` (results on stdout; errors on stderr, as ariadne reports,
/// coloured when `color`). Returns (go on, succeeded): go on is false for
/// `:quit` and when stdout's or stderr's reader went away.
fn show(reply: Reply, color: bool) -> std::io::Result<(bool, bool)> {
    Ok(match reply {
        Reply::Text(t) => (emit(&t)?, true),
        Reply::Diag(d, src) => (emit_err(d.render_ariadne(&src, color).trim_end()), false),
        Reply::Error(e) => (emit_err(&e), false),
        Reply::Quit => (false, true),
        Reply::Nothing => (true, true),
    })
}

/// Where the REPL keeps its history: next to the database, its file name
/// plus `.repl_history` (`.cairn/cairn.db.repl_history`), so the store's
/// `.gitignore` (`cairn.db*`) keeps it out of git too.
pub fn history_path(store: &Store) -> PathBuf {
    with_suffix(store.path())
}

/// `PATH` with `.repl_history` added to its file name.
fn with_suffix(path: &Path) -> PathBuf {
    let mut name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_else(|| "cairn.db".into());
    name.push(".repl_history");
    path.with_file_name(name)
}

/// `cairn repl` on a PostgreSQL store: the same REPL; its history is kept
/// beside the verbs' current task in the data directory
/// (`context::pg_current_path`).
pub(super) fn repl_pg(t: &PgTarget, args: &ReplArgs) -> anyhow::Result<ExitCode> {
    let store = PgStore::open(t)?;
    let root = std::env::current_dir()?;
    let history = with_suffix(&super::context::pg_current_path(t, &root)?);
    let shown = format!("{} schema {}", t.shown, t.schema);
    run_repl((&store).into(), args, &history, &shown)
}

/// Runs `cairn repl`: interactive on a terminal, else the piped reader.
/// Exit 0, or 1 when a piped form failed. Store errors are returned.
pub(super) fn repl_cmd(flag: Option<&Path>, args: &ReplArgs) -> anyhow::Result<ExitCode> {
    let store = store_cmds::open(flag)?;
    let history = history_path(&store);
    let shown = store.path().display().to_string();
    run_repl((&store).into(), args, &history, &shown)
}

/// The REPL over `store` (interactive on a terminal, else piped); `history`
/// is its history file, `shown` where the store is.
fn run_repl(
    store: DbRef<'_>,
    args: &ReplArgs,
    history: &Path,
    shown: &str,
) -> anyhow::Result<ExitCode> {
    let surface = if args.write {
        Surface::Write
    } else {
        Surface::Read
    };
    let mut repl = Repl::new(store, surface);
    if let Some(slug) = &args.current
        && let Err(msg) = super::query::select_current(store, &mut repl.session, slug)
    {
        emit_err(&msg);
        return Ok(ExitCode::from(1));
    }
    if std::io::stdin().is_terminal() {
        interactive(store, &mut repl, history, shown)
    } else {
        piped(&mut repl)
    }
}

/// The error for a line of piped input that is not UTF-8 (`N` counts from 1).
pub fn invalid_utf8_line(n: usize) -> String {
    format!("line {n} is not valid UTF-8; skipped.")
}

/// Reads stdin line by line (as bytes) and feeds each line to a running
/// [`Balancer`]; each time the gathered lines are a complete input it is
/// evaluated and its result printed. A line that is not UTF-8 is reported
/// ([`invalid_utf8_line`]) and skipped. A form that grows past the TQ size
/// limit (64 KiB) is refused with the parser's size error as soon as it
/// does, and the rest of it is skipped up to the line where it ends.
fn piped(repl: &mut Repl<'_>) -> anyhow::Result<ExitCode> {
    let mut failed = false;
    let mut buf = String::new();
    let mut bal = Balancer::new();
    let mut oversized = false;
    let mut bytes = Vec::new();
    let mut n = 0usize;
    let mut stdin = std::io::stdin().lock();
    loop {
        bytes.clear();
        if stdin.read_until(b'\n', &mut bytes)? == 0 {
            break;
        }
        n += 1;
        if bytes.last() == Some(&b'\n') {
            bytes.pop();
            if bytes.last() == Some(&b'\r') {
                bytes.pop();
            }
        }
        let Ok(line) = std::str::from_utf8(&bytes) else {
            failed = true;
            if !emit_err(&invalid_utf8_line(n)) {
                break;
            }
            continue;
        };
        bal.feed(line);
        bal.feed("\n");
        let state = bal.state();
        if !oversized {
            buf.push_str(line);
            buf.push('\n');
            if buf.len() > MAX_BYTES && !state.is_complete() {
                oversized = true;
                failed = true;
                let refused = match parse(&buf) {
                    Err(d) => Reply::Diag(d, std::mem::take(&mut buf)),
                    Ok(_) => Reply::Nothing,
                };
                if !show(refused, false)?.0 {
                    break;
                }
            }
        }
        if state.is_complete() {
            if !oversized {
                let (go_on, ok) = show(repl.eval(&buf), false)?;
                failed |= !ok;
                if !go_on {
                    break;
                }
            }
            buf.clear();
            bal = Balancer::new();
            oversized = false;
        } else if !state.content {
            buf.clear();
            bal = Balancer::new();
        }
    }
    if !oversized && bal.state().content {
        let (_, ok) = show(repl.eval(&buf), false)?;
        failed |= !ok;
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The interactive loop: rustyline with the helper, history loaded from
/// and saved to [`history_path`].
fn interactive(
    store: DbRef<'_>,
    repl: &mut Repl<'_>,
    history: &Path,
    shown: &str,
) -> anyhow::Result<ExitCode> {
    let color = use_color(true);
    let config = Config::builder()
        .auto_add_history(false)
        .completion_type(CompletionType::List)
        .build();
    let mut rl: Editor<ReplHelper<'_>, FileHistory> = Editor::with_config(config)?;
    rl.set_helper(Some(ReplHelper { store, color }));
    let _ = rl.load_history(history);
    emit(&format!(
        "cairn TQ REPL on {shown} — :help for commands, Ctrl-D to leave."
    ))?;
    loop {
        match rl.readline(repl.prompt()) {
            Ok(input) => {
                if balance(&input).content {
                    let _ = rl.add_history_entry(input.as_str());
                    let _ = rl.save_history(history);
                }
                let color = use_color(std::io::stderr().is_terminal());
                let (go_on, _) = show(repl.eval(&input), color)?;
                if !go_on {
                    break;
                }
            }
            Err(ReadlineError::Interrupted) => continue,
            Err(ReadlineError::Eof) => break,
            Err(e) => return Err(e.into()),
        }
    }
    Ok(ExitCode::SUCCESS)
}
