//! `cairn watch [--interval MS] [--count N] [--current SLUG] QUERY`
//! (spec/tq.md §9 "Changes"; docs/cli.md "cairn watch"): prints a read
//! query's result, then polls the store's change counter
//! ([`crate::store::changes::ChangeCounter`]) and reprints the result — after a
//! blank line and `-- HH:MM:SS UTC` — only when its text changed. Ctrl-C
//! ends it; `--count N` exits 0 after N prints. A query that does not run
//! the first time prints its error and exits 2 without watching.

use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use clap::Args;

use super::out::emit;
use super::query::{report, select_current};
use crate::store::changes::ChangeCounter;
use crate::store::pg::changes::Listener;
use crate::store::pg::{PgStore, PgTarget};
use crate::store::{DbRef, ReadOpen, Store};
use crate::tq::Diagnostic;
use crate::tq::Surface;
use crate::tq::engine::Engine;

/// The default poll interval, milliseconds: the commit signal's tick
/// (`store::commits::SQLITE_TICK`), so `cairn watch` hears a commit as soon
/// as a subscription does (issue 22).
pub const DEFAULT_INTERVAL_MS: u64 = 10;
/// The shortest poll interval `--interval` accepts, milliseconds.
pub const MIN_INTERVAL_MS: u64 = 10;
/// How often the query is re-run even when nothing committed: an answer can
/// change with the clock alone (a claim lapsing, a `since` day passing).
pub const REFRESH: Duration = Duration::from_secs(5);

/// The arguments of `cairn watch`.
#[derive(Debug, Args)]
pub struct WatchArgs {
    /// How often to look for commits, in milliseconds (at least 10; PostgreSQL wakes at once).
    #[arg(
        long,
        value_name = "MS",
        default_value_t = DEFAULT_INTERVAL_MS,
        value_parser = parse_interval
    )]
    pub interval: u64,
    /// Exit (status 0) after printing N results, the first one included.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub count: Option<u64>,
    /// The current task for this query, so (current) and the plan views work.
    #[arg(long, value_name = "SLUG")]
    pub current: Option<String>,
    /// The TQ query to watch (read surface), e.g. '(query "plan-frontier")'.
    #[arg(value_name = "QUERY")]
    pub query: String,
}

/// Parses `--interval`: whole milliseconds, at least [`MIN_INTERVAL_MS`].
/// Errors: `expected whole milliseconds, at least 10.`
pub fn parse_interval(s: &str) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(ms) if ms >= MIN_INTERVAL_MS => Ok(ms),
        _ => Err(format!(
            "expected whole milliseconds, at least {MIN_INTERVAL_MS}."
        )),
    }
}

/// The separator line printed before each reprint (after a blank line):
/// `-- HH:MM:SS UTC` at Unix second `ts`.
pub fn separator(ts: i64) -> String {
    let t = crate::tools::render::datetime(ts);
    format!("-- {:02}:{:02}:{:02} UTC", t.hour(), t.minute(), t.second())
}

/// Runs `cairn watch`. Exit 0 after `--count` prints (or when stdout went
/// away), 2 when the query fails the first time, the store cannot be
/// opened or there is none (`no store at PATH yet; …`, nothing created);
/// otherwise it runs until interrupted. A later failure (a view
/// undefined meanwhile) is printed as the result text.
pub(super) fn watch_cmd(flag: Option<&Path>, args: &WatchArgs) -> anyhow::Result<ExitCode> {
    let text = args.query.as_str();
    if text.trim().is_empty() {
        super::out::emit_err("error: query is required.");
        return Ok(ExitCode::from(2));
    }
    // A read: never waits on a writer, creates nothing (docs/store.md
    // "Reads never wait, never create").
    let loc = crate::store::location::resolve_from_env(flag)?;
    let (store, state) = Store::open_read(&loc.db)
        .with_context(|| format!("cannot open the store at {}", loc.db.display()))?;
    if state == ReadOpen::Busy
        && let Some(note) = super::context::read_note(state, &loc.db)
    {
        super::out::emit_err(&format!("cairn: {note}"));
    }
    let mut session = crate::cli::identity::session();
    if let Some(slug) = &args.current
        && let Err(msg) = select_current((&store).into(), &mut session, slug)
    {
        super::out::emit_err(&msg);
        return Ok(ExitCode::from(2));
    }
    let engine = Engine::new().with_clock(super::context::clock());
    // The counter first: a commit while the first result is computed moves it.
    let mut counter = ChangeCounter::open(store.path())?;
    let first = match engine.run(&store, &session, text, Surface::Read) {
        Ok(out) => out,
        Err(d) => {
            report(&with_current_help(d, args.current.is_none()), text);
            return Ok(ExitCode::from(2));
        }
    };
    // No store: the query is valid, but there is no file whose commits
    // could be watched.
    if state == ReadOpen::Absent {
        anyhow::bail!(
            "no store at {} yet; `cairn init` or any write (`cairn add NAME`) creates one",
            loc.db.display()
        );
    }
    watch_loop(
        (&store).into(),
        &session,
        &engine,
        args,
        first,
        |interval| {
            std::thread::sleep(interval);
            Ok(counter.moved()?)
        },
    )
}

/// `cairn watch` on a PostgreSQL store: the same output, woken by the
/// schema's change notifications (`LISTEN`, spec/team.md "Changes")
/// instead of a file counter.
pub(super) fn watch_pg(t: &PgTarget, args: &WatchArgs) -> anyhow::Result<ExitCode> {
    let text = args.query.as_str();
    if text.trim().is_empty() {
        super::out::emit_err("error: query is required.");
        return Ok(ExitCode::from(2));
    }
    let store = PgStore::open(t)?;
    let mut session = crate::cli::identity::session();
    if let Some(slug) = &args.current
        && let Err(msg) = select_current((&store).into(), &mut session, slug)
    {
        super::out::emit_err(&msg);
        return Ok(ExitCode::from(2));
    }
    let engine = Engine::new().with_clock(super::context::clock());
    // Listening first: a commit while the first result is computed wakes it.
    let mut listener = Listener::open(t)?;
    let first = match engine.run_pg(&store, &session, text, Surface::Read) {
        Ok(out) => out,
        Err(d) => {
            report(&with_current_help(d, args.current.is_none()), text);
            return Ok(ExitCode::from(2));
        }
    };
    watch_loop(
        (&store).into(),
        &session,
        &engine,
        args,
        first,
        |interval| match listener.wait(interval) {
            Ok(seq) => Ok(seq.is_some()),
            Err(e) => {
                listener = relisten(t, &e.to_string());
                Ok(true)
            }
        },
    )
}

/// How long `cairn watch` waits between attempts to listen again.
pub const RELISTEN_EVERY: Duration = Duration::from_secs(1);

/// The line `cairn watch` prints on stderr once it listens again after
/// losing the database (docs/team.md "Changes").
pub const RELISTENED: &str = "cairn watch: listening again; changes made meanwhile may have been missed, so the query runs again.";

/// Listens on `t`'s change channel again after the listener's connection
/// broke (`why`), trying every [`RELISTEN_EVERY`] until it works; says so
/// on stderr, once when the connection is lost and once ([`RELISTENED`])
/// when it is back.
fn relisten(t: &PgTarget, why: &str) -> Listener {
    super::out::emit_err(&format!(
        "cairn watch: lost the database connection ({why}); listening again"
    ));
    loop {
        std::thread::sleep(RELISTEN_EVERY);
        if let Ok(l) = Listener::open(t) {
            super::out::emit_err(RELISTENED);
            return l;
        }
    }
}

/// Prints `first`, then reruns the query whenever `changed(interval)` says
/// a commit happened (or every [`REFRESH`], for claims running out) and
/// prints each new result after a separator.
fn watch_loop(
    store: DbRef<'_>,
    session: &crate::session::Session,
    engine: &Engine,
    args: &WatchArgs,
    first: String,
    mut changed: impl FnMut(Duration) -> anyhow::Result<bool>,
) -> anyhow::Result<ExitCode> {
    let text = args.query.as_str();
    let mut last = first;
    if !emit(&last)? {
        return Ok(ExitCode::SUCCESS);
    }
    let mut printed: u64 = 1;
    let interval = Duration::from_millis(args.interval.max(MIN_INTERVAL_MS));
    let mut ran_at = Instant::now();
    loop {
        if args.count.is_some_and(|n| printed >= n) {
            return Ok(ExitCode::SUCCESS);
        }
        if !changed(interval)? && ran_at.elapsed() < REFRESH {
            continue;
        }
        ran_at = Instant::now();
        let now = match engine.run_db(store, session, text, Surface::Read) {
            Ok(out) => out,
            Err(d) => d.render_plain(),
        };
        if now == last {
            continue;
        }
        let block = format!("\n{}\n{now}", separator(crate::store::now()));
        if !emit(&block)? {
            return Ok(ExitCode::SUCCESS);
        }
        last = now;
        printed += 1;
    }
}

/// `d` with [`super::query::NO_CURRENT_HELP`]'s hint (`--current`, said for
/// `cairn watch`) when it is the no-current-task error and `no_flag`.
fn with_current_help(d: Diagnostic, no_flag: bool) -> Diagnostic {
    if no_flag && d.message == crate::tq::plan::NO_CURRENT && d.help.is_none() {
        d.with_help(super::query::NO_CURRENT_HELP.replace("cairn query", "cairn watch"))
    } else {
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_are_at_least_10_ms() {
        assert_eq!(parse_interval("250"), Ok(250));
        assert_eq!(parse_interval("10"), Ok(10));
        let e = Err("expected whole milliseconds, at least 10.".to_string());
        assert_eq!(parse_interval("9"), e);
        assert_eq!(parse_interval("-1"), e);
        assert_eq!(parse_interval("1.5"), e);
    }

    #[test]
    fn the_separator_is_utc_seconds() {
        assert_eq!(separator(1_764_460_800 + 3_661), "-- 01:01:01 UTC");
        assert_eq!(separator(0), "-- 00:00:00 UTC");
    }
}
