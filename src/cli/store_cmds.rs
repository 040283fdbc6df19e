//! `cairn where`, `cairn rebuild`, `cairn verify` and the hidden
//! `stress-append` test helper (docs/store.md gives the exact output).

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use serde_json::json;

use super::out::emit;
use super::progress::Progress;
use crate::store::log::LogCheck;
use crate::store::{NewEvent, Store, location, now};

/// Opens the store `flag` (else `CAIRN_DB`, else the project lookup) names.
pub(super) fn open(flag: Option<&Path>) -> anyhow::Result<Store> {
    let loc = location::resolve_from_env(flag)?;
    Store::open(&loc.db).with_context(|| format!("cannot open the store at {}", loc.db.display()))
}

/// Prints `JSON` pretty.
fn emit_json(v: &serde_json::Value) -> anyhow::Result<()> {
    emit(&serde_json::to_string_pretty(v)?)?;
    Ok(())
}

/// Prints `database: PATH`, `project: PATH`, `rule: RULE` (with `json`,
/// `{"database", "project", "rule", "exists"}`). Creates nothing.
pub(super) fn where_cmd(flag: Option<&Path>, json: bool) -> anyhow::Result<ExitCode> {
    let loc = location::resolve_from_env(flag)?;
    if json {
        emit_json(&json!({
            "database": loc.db.display().to_string(),
            "project": loc.project.display().to_string(),
            "rule": loc.rule.to_string(),
            "exists": Store::exists_at(&loc.db)?,
        }))?;
    } else {
        emit(&loc.describe())?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Rebuilds and prints `rebuild: re-folded N events; projection digest HEX`.
/// With `from_logs`, the events are first replaced by the union of the
/// per-task logs (docs/store.md "Recovering"), and the line starts
/// `rebuild: read F task logs (K malformed lines skipped); `.
/// With `json`: `{"events", "digest", "logs_read", "malformed"}` (the
/// last two `null` without `--from-logs`). A spinner on a terminal
/// ([`Progress`]).
pub(super) fn rebuild_cmd(
    flag: Option<&Path>,
    from_logs: bool,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let store = open(flag)?;
    let progress = Progress::start("rebuild");
    let mut prefix = String::new();
    let mut read = None;
    let digest;
    if from_logs {
        let report = store
            .rebuild_from_logs()?
            .context("this store keeps no per-task logs (its file is not named cairn.db)")?;
        prefix = format!(
            "read {} task logs ({} malformed lines skipped); ",
            report.files_read, report.malformed
        );
        read = Some((report.files_read, report.malformed));
        digest = store.digest()?;
    } else {
        digest = store.rebuild_digest()?;
    }
    let n = store.event_count()?;
    progress.finish();
    if json {
        emit_json(&json!({
            "events": n,
            "digest": digest,
            "logs_read": read.map(|r| r.0),
            "malformed": read.map(|r| r.1),
        }))?;
    } else {
        emit(&format!(
            "rebuild: {prefix}re-folded {n} events; projection digest {digest}"
        ))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The lines `cairn verify` prints about the logs: one summary line, then
/// one `malformed: FILE:LINE: REASON` line per malformed line.
pub fn logs_lines(check: &LogCheck) -> String {
    let counts = format!(
        "{} logs, {} lines, {} malformed",
        check.files,
        check.lines,
        check.malformed.len()
    );
    let mut out = if check.ok() {
        format!(
            "logs: ok — every event is in its task's log and every log line is in the database ({counts})"
        )
    } else {
        format!(
            "logs: FAILED — {} database events missing from their task logs, {} log lines missing from the database ({counts}); `cairn rebuild --from-logs` writes the missing lines to the logs and folds every log line into the database",
            check.missing_from_logs, check.missing_from_db
        )
    };
    for m in &check.malformed {
        out.push_str(&format!("\nmalformed: {m}"));
    }
    out
}

/// The line `cairn verify` prints for `ok` over `events` events.
pub fn verify_line(ok: bool, events: i64, before: &str, after: &str) -> String {
    if ok {
        format!("verify: ok — projection is a faithful fold of {events} events")
    } else {
        format!(
            "verify: FAILED — projection differs from a fresh fold of {events} events (live {}, rebuilt {}); run `cairn rebuild`",
            before.get(..12).unwrap_or(before),
            after.get(..12).unwrap_or(after)
        )
    }
}

/// Verifies the projection and, for a store with logs, both directions
/// between the database and its logs; exit 0 when all hold, 1 when not.
/// Where there is no store ([`Store::exists_at`]) it creates none: the
/// error `no store at PATH yet; …` (exit 2).
///
/// With `json`: `{"ok", "events", "projection": {"ok", "live", "rebuilt"},
/// "logs": null | {"ok", "files", "lines", "missing_from_logs",
/// "missing_from_db", "malformed": [TEXT]}}`.
pub(super) fn verify_cmd(flag: Option<&Path>, json: bool) -> anyhow::Result<ExitCode> {
    // Nothing to verify where there is no store: say so, create nothing.
    let loc = location::resolve_from_env(flag)?;
    if !Store::exists_at(&loc.db)? {
        anyhow::bail!(
            "no store at {} yet; `cairn init` or any write (`cairn add NAME`) creates one",
            loc.db.display()
        );
    }
    let store = open(flag)?;
    let progress = Progress::start("verify");
    let mut v = store.verify()?;
    v.logs = store.check_logs()?;
    let n = store.event_count()?;
    progress.finish();
    let ok = v.ok && v.logs.as_ref().is_none_or(LogCheck::ok);
    if json {
        let logs = v.logs.as_ref().map(|c| {
            json!({
                "ok": c.ok(),
                "files": c.files,
                "lines": c.lines,
                "missing_from_logs": c.missing_from_logs,
                "missing_from_db": c.missing_from_db,
                "malformed": c.malformed.iter().map(|m| m.to_string()).collect::<Vec<_>>(),
            })
        });
        emit_json(&json!({
            "ok": ok,
            "events": n,
            "projection": { "ok": v.ok, "live": v.before, "rebuilt": v.after },
            "logs": logs,
        }))?;
    } else {
        emit(&verify_line(v.ok, n, &v.before, &v.after))?;
        if let Some(check) = &v.logs {
            emit(&logs_lines(check))?;
        }
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Imports the original tool's store at `path` and prints
/// `Imported N events for M tasks; K lines skipped.` (each skipped line is
/// named on stderr); with `json`, `{"events", "tasks", "skipped"}`.
pub(super) fn import_cmd(flag: Option<&Path>, path: &Path, json: bool) -> anyhow::Result<ExitCode> {
    let store = open(flag)?;
    let progress = Progress::start("import");
    let summary = store.import_kli(path);
    progress.finish();
    let summary = summary.with_context(|| format!("cannot import {}", path.display()))?;
    if json {
        emit_json(&json!({
            "events": summary.events,
            "tasks": summary.tasks,
            "skipped": summary.skipped,
        }))?;
    } else {
        emit(&summary.line())?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Appends `count` observations on `task`, one transaction each, printing
/// each committed seq on its own line (flushed) — the concurrency and crash
/// tests read them.
pub(super) fn stress_append(
    flag: Option<&Path>,
    count: u64,
    session: &str,
    task: &str,
) -> anyhow::Result<ExitCode> {
    let store = open(flag)?;
    let stdout = std::io::stdout();
    for i in 0..count {
        let ev = NewEvent::observation(session, now(), task, &format!("{session} stress {i}"));
        let report = store.write(&[ev])?;
        let mut out = stdout.lock();
        for seq in report.seqs {
            writeln!(out, "{seq}")?;
        }
        out.flush()?;
    }
    Ok(ExitCode::SUCCESS)
}
