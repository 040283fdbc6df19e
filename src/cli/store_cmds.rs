//! `cairn where`, `cairn rebuild`, `cairn verify` and the hidden
//! `stress-append` test helper (docs/store.md gives the exact output).

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;

use super::out::emit;
use crate::store::{NewEvent, Store, location, now};

/// Opens the store `flag` (else `CAIRN_DB`, else the project lookup) names.
pub(super) fn open(flag: Option<&Path>) -> anyhow::Result<Store> {
    let loc = location::resolve_from_env(flag)?;
    Store::open(&loc.db).with_context(|| format!("cannot open the store at {}", loc.db.display()))
}

/// Prints `database: PATH`, `project: PATH`, `rule: RULE`. Creates nothing.
pub(super) fn where_cmd(flag: Option<&Path>) -> anyhow::Result<ExitCode> {
    let loc = location::resolve_from_env(flag)?;
    emit(&loc.describe())?;
    Ok(ExitCode::SUCCESS)
}

/// Rebuilds and prints `rebuild: re-folded N events; projection digest HEX`.
pub(super) fn rebuild_cmd(flag: Option<&Path>) -> anyhow::Result<ExitCode> {
    let store = open(flag)?;
    store.rebuild()?;
    let n = store.event_count()?;
    emit(&format!(
        "rebuild: re-folded {n} events; projection digest {}",
        store.digest()?
    ))?;
    Ok(ExitCode::SUCCESS)
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

/// Verifies; exit 0 when faithful, 1 when not.
pub(super) fn verify_cmd(flag: Option<&Path>) -> anyhow::Result<ExitCode> {
    let store = open(flag)?;
    let v = store.verify()?;
    let n = store.event_count()?;
    emit(&verify_line(v.ok, n, &v.before, &v.after))?;
    Ok(if v.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
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
