//! The commands on a PostgreSQL store (spec/team.md; docs/team.md): `--db
//! postgres://…` (or `CAIRN_DB`) selects it; `--pg-schema NAME` picks the
//! project's schema. `cairn push URL` copies this project's SQLite store
//! there; `cairn export --logs DIR` writes per-task logs from either engine.
//!
//! Which commands run on PostgreSQL today: the verbs (through
//! `context::Cx`), `serve` (stdio and HTTP), `token`, `call`, `query`,
//! `repl`, `watch`, `where`, `verify`, `rebuild`, `push`, `export`. The
//! others (`import`, `init`, `doctor`) answer with a sentence naming that
//! they do not run there yet (docs/team.md "What runs on PostgreSQL").

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::out::emit;
use super::store_cmds::verify_line;
use crate::store::log::export::export_logs;
use crate::store::pg::target::looks_like_pg_url;
use crate::store::pg::{PgStore, PgTarget, is_pg_url, source_events};
use crate::store::{Store, location};

/// The PostgreSQL target `flag` (else `CAIRN_DB`) names, or `None` when it
/// names a SQLite file (or nothing). Errors: a malformed URL or schema.
pub(super) fn target(
    flag: Option<&Path>,
    schema: Option<&str>,
) -> anyhow::Result<Option<PgTarget>> {
    let named = match flag {
        Some(f) => Some(f.to_string_lossy().into_owned()),
        None => std::env::var("CAIRN_DB").ok().filter(|v| !v.is_empty()),
    };
    match named {
        Some(url) if is_pg_url(&url) => Ok(Some(PgTarget::parse(&url, schema)?)),
        Some(url) if looks_like_pg_url(&url) => anyhow::bail!(
            "{} looks like a PostgreSQL URL but is not one; write it as postgres://USER@HOST/DATABASE",
            crate::store::pg::redact(&url)
        ),
        _ => {
            if schema.is_some() {
                anyhow::bail!("--pg-schema needs a postgres:// store (--db or CAIRN_DB)");
            }
            Ok(None)
        }
    }
}

/// Opens (and migrates) the PostgreSQL store `t`.
pub(super) fn open(t: &PgTarget) -> anyhow::Result<PgStore> {
    Ok(PgStore::open(t)?)
}

/// `cairn where` on PostgreSQL: `database: URL` (password as `***`),
/// `schema: NAME`, `rule: --db` or `rule: CAIRN_DB`. Connects to nothing.
pub(super) fn where_cmd(t: &PgTarget, from_flag: bool) -> anyhow::Result<ExitCode> {
    emit(&format!(
        "database: {}\nschema: {}\nrule: {}",
        t.shown,
        t.schema,
        if from_flag { "--db" } else { "CAIRN_DB" }
    ))?;
    Ok(ExitCode::SUCCESS)
}

/// `cairn verify` on PostgreSQL: the projection against a fresh fold of its
/// events (no logs there: the database is the durable record).
pub(super) fn verify_cmd(t: &PgTarget, json: bool) -> anyhow::Result<ExitCode> {
    let store = open(t)?;
    let v = store.verify()?;
    let n = store.event_count()?;
    if json {
        // The shape of SQLite's `verify --json`; no per-task logs here.
        let out = serde_json::json!({
            "ok": v.ok,
            "events": n,
            "projection": { "ok": v.ok, "live": v.before, "rebuilt": v.after },
            "logs": null,
        });
        emit(&serde_json::to_string_pretty(&out)?)?;
    } else {
        emit(&verify_line(v.ok, n, &v.before, &v.after))?;
    }
    Ok(if v.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// `cairn rebuild` on PostgreSQL (`--from-logs` is refused: it keeps no logs).
pub(super) fn rebuild_cmd(t: &PgTarget, from_logs: bool) -> anyhow::Result<ExitCode> {
    if from_logs {
        anyhow::bail!(
            "a PostgreSQL store keeps no per-task logs (the database is the durable record); run `cairn rebuild` without --from-logs"
        );
    }
    let store = open(t)?;
    store.rebuild()?;
    emit(&format!(
        "rebuild: re-folded {} events; projection digest {}",
        store.event_count()?,
        store.digest()?
    ))?;
    Ok(ExitCode::SUCCESS)
}

/// A progress bar on stderr when it is a terminal, hidden otherwise.
fn bar(total: u64, what: &str) -> ProgressBar {
    let pb = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    if let Ok(style) =
        ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} events ({per_sec}, {eta})")
    {
        pb.set_style(style.progress_chars("=> "));
    }
    pb.set_message(what.to_string());
    pb
}

/// `cairn push URL`: copies this project's SQLite store (`--db`/`CAIRN_DB`/
/// the project lookup) into the PostgreSQL schema `URL` (and
/// `--pg-schema`) names, by event id; then compares the two digests.
/// Prints `push: N events read, A added (S already there) into URL schema
/// NAME in T s` and `digest: ok — …` (exit 0) or `digest: DIFFERENT — …`
/// (exit 1: the target holds events the source does not).
pub(super) fn push_cmd(
    flag: Option<&Path>,
    url: &str,
    schema: Option<&str>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    if flag.is_some_and(|f| is_pg_url(&f.to_string_lossy())) {
        anyhow::bail!(
            "push copies a SQLite store into PostgreSQL: --db names the source store (a cairn.db), the URL the target"
        );
    }
    let t = PgTarget::parse(url, schema)?;
    let target = open(&t)?;
    let loc = location::resolve_from_env(flag)?;
    if !Store::exists_at(&loc.db)? {
        anyhow::bail!("no store at {} to push", loc.db.display());
    }
    let source = Store::open(&loc.db)
        .with_context(|| format!("cannot open the store at {}", loc.db.display()))?;
    let started = Instant::now();
    let pb = bar(u64::try_from(source.event_count()?).unwrap_or(0), "push");
    // Into an empty schema the copy counts rows of every table, else
    // events: the bar takes whichever total it is given.
    let report = target.push_store(&source, |done, all| {
        pb.set_length(all as u64);
        pb.set_position(done as u64)
    });
    pb.finish_and_clear();
    let report = report?;
    let secs = started.elapsed().as_secs_f64();
    let (here, there) = (source.digest()?, target.digest()?);
    let ok = here == there;
    if json {
        emit(&serde_json::to_string_pretty(&serde_json::json!({
            "read": report.read,
            "added": report.added,
            "already_there": report.read - report.added,
            "target": t.shown,
            "schema": t.schema,
            "seconds": (secs * 10.0).round() / 10.0,
            "digest_ok": ok,
            "source_digest": here,
            "target_digest": there,
        }))?)?;
        return Ok(if ok {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        });
    }
    emit(&format!(
        "push: {} events read, {} added ({} already there) into {} schema {} in {secs:.1} s",
        report.read,
        report.added,
        report.read - report.added,
        t.shown,
        t.schema
    ))?;
    if ok {
        emit(&format!(
            "digest: ok — both engines fold to {}",
            here.get(..12).unwrap_or(&here)
        ))?;
        Ok(ExitCode::SUCCESS)
    } else {
        emit(&format!(
            "digest: DIFFERENT — {} there ({} events) vs {} here ({} events): the target holds events this store does not",
            there.get(..12).unwrap_or(&there),
            target.event_count()?,
            here.get(..12).unwrap_or(&here),
            source.event_count()?
        ))?;
        Ok(ExitCode::from(1))
    }
}

/// `cairn export --logs DIR` from a PostgreSQL store.
pub(super) fn export_pg(t: &PgTarget, dir: &Path, json: bool) -> anyhow::Result<ExitCode> {
    let store = open(t)?;
    let lines = store.log_lines()?;
    export_line(dir, &lines, json)
}

/// `cairn export --logs DIR` from the SQLite store `flag` names.
pub(super) fn export_sqlite(
    flag: Option<&Path>,
    dir: &Path,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let loc = location::resolve_from_env(flag)?;
    if !Store::exists_at(&loc.db)? {
        anyhow::bail!("no store at {} to export", loc.db.display());
    }
    let store = Store::open(&loc.db)?;
    export_line(dir, &source_events(&store)?, json)
}

fn export_line(
    dir: &Path,
    lines: &[crate::store::log::LogLine],
    json: bool,
) -> anyhow::Result<ExitCode> {
    let report = export_logs(dir, lines)?;
    if json {
        emit(&serde_json::to_string_pretty(&serde_json::json!({
            "events": report.lines,
            "tasks": report.tasks,
            "dir": dir.join("tasks").display().to_string(),
        }))?)?;
        return Ok(ExitCode::SUCCESS);
    }
    emit(&format!(
        "export: wrote {} events into {} task logs under {}",
        report.lines,
        report.tasks,
        dir.join("tasks").display()
    ))?;
    Ok(ExitCode::SUCCESS)
}

/// The sentence for a command that does not run on PostgreSQL yet.
pub(super) fn not_yet(command: &str) -> anyhow::Result<ExitCode> {
    anyhow::bail!(
        "`cairn {command}` does not run on a PostgreSQL store yet (today: the verbs, schema, serve (stdio and --http), board, graph, token, call, query, repl, watch, where, verify, rebuild, push, export; see docs/team.md); use a SQLite store (drop --db/CAIRN_DB) and `cairn push` to copy it"
    )
}
