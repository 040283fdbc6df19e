//! Write-path, rebuild and reconcile speed with per-task logs (spec/store.md
//! "Write and rebuild speed"). Not criterion: one pass over a generated
//! store, printing one line per measure.
//!
//! `CAIRN_BENCH_TASKS` (default 20000) tasks, each with a `task.create`, ten
//! observations, two status changes and one metadata set (14 events).
//! Run: `cargo bench --bench write` (`CAIRN_BENCH_TASKS=100000` for the
//! spec's store size). `CAIRN_BENCH_PART=logs` runs only the issue-23 rows
//! instead (`write/logs.rs`: the realistic store with its logs in git, the
//! `cairn` binary's open, rebuild and clone-first-answer wall clocks).

use std::path::Path;
use std::time::{Duration, Instant};

use cairn::store::{NewEvent, Status, Store};

#[path = "write/logs.rs"]
mod logs;

/// Total size in bytes and allocated bytes of every file under `dir`.
fn du(dir: &Path) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    let mut total = (0, 0);
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let Ok(meta) = e.metadata() else { continue };
            if meta.is_dir() {
                let (a, b) = du(&e.path());
                total.0 += a;
                total.1 += b;
            } else {
                total.0 += meta.len();
                total.1 += meta.blocks() * 512;
            }
        }
    }
    total
}

fn per_sec(n: usize, d: Duration) -> f64 {
    n as f64 / d.as_secs_f64()
}

/// The floor for the write path: the same 14 events per task appended by
/// raw SQLite (rusqlite, WAL, `synchronous=NORMAL` as the store sets it) to
/// one `events` table with the store's columns and unique keys, batches of
/// 1400 rows per transaction — no fold, no projection, no per-task logs.
fn raw_append(dir: &Path, tasks: usize, base: i64) -> Result<Duration, Box<dyn std::error::Error>> {
    let conn = rusqlite::Connection::open(dir.join("raw.db"))?;
    let _: String = conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.execute_batch(
        "CREATE TABLE events (seq INTEGER PRIMARY KEY AUTOINCREMENT, event_id TEXT NOT NULL UNIQUE,
           event_key TEXT NOT NULL UNIQUE, task_id TEXT NOT NULL, type TEXT NOT NULL,
           ts INTEGER NOT NULL, session_id TEXT NOT NULL, data TEXT NOT NULL);
         CREATE INDEX events_task ON events(task_id, seq);
         CREATE INDEX events_order ON events(ts, event_id);",
    )?;
    let start = Instant::now();
    let mut n = 0usize;
    let mut tx = conn.unchecked_transaction()?;
    for t in 0..tasks {
        let slug = format!("2026-12-01-bench-task-{t}");
        let ts = base + i64::try_from(t)?;
        for k in 0..14i64 {
            tx.prepare_cached(
                "INSERT INTO events(event_id, event_key, task_id, type, ts, session_id, data)
                 VALUES (?1, ?2, ?3, 'observation', ?4, 'bench', ?5)",
            )?
            .execute(rusqlite::params![
                format!("{t:020}{k:06}"),
                format!("key-{t}-{k}"),
                slug,
                ts + k,
                format!("{{\"text\":\"observation {k} about task {t}: tokenizer cache sqlite\"}}"),
            ])?;
            n += 1;
            if n.is_multiple_of(1400) {
                tx.commit()?;
                tx = conn.unchecked_transaction()?;
            }
        }
    }
    tx.commit()?;
    Ok(start.elapsed())
}

/// The floor for a live observe: `n` single-row transactions, each one
/// observation row inserted into raw SQLite's `events` table (the one
/// `raw_append` built, WAL, `synchronous=NORMAL`, autocheckpoint on, as
/// SQLite ships) — the same row, no fold, no index of its text, no log.
/// Returns the latencies (sorted) and the wall time.
fn raw_single(
    dir: &Path,
    n: usize,
) -> Result<(Vec<Duration>, Duration), Box<dyn std::error::Error>> {
    let conn = rusqlite::Connection::open(dir.join("raw.db"))?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    let mut lat = Vec::with_capacity(n);
    let start = Instant::now();
    for i in 0..n {
        let t0 = Instant::now();
        let tx = conn.unchecked_transaction()?;
        tx.prepare_cached(
            "INSERT INTO events(event_id, event_key, task_id, type, ts, session_id, data)
             VALUES (?1, ?2, ?3, 'observation', ?4, 'live', ?5)",
        )?
        .execute(rusqlite::params![
            format!("live{i:022}"),
            format!("live-key-{i}"),
            format!("2026-12-01-bench-task-{i}"),
            1_800_000_000 + i64::try_from(i)?,
            "{\"text\":\"a live observation\"}",
        ])?;
        tx.commit()?;
        lat.push(t0.elapsed());
    }
    let took = start.elapsed();
    lat.sort();
    Ok((lat, took))
}

/// Live observes on `store`, one per transaction, on the generated tasks:
/// the sorted latencies and the wall time.
fn observe_live(
    store: &Store,
    n: usize,
    tasks: usize,
    ts: i64,
    session: &str,
) -> Result<(Vec<Duration>, Duration), Box<dyn std::error::Error>> {
    let mut lat = Vec::with_capacity(n);
    let start = Instant::now();
    for i in 0..n {
        let slug = format!("2026-12-01-bench-task-{}", (i * 7919) % tasks);
        let ev =
            NewEvent::observation(session, ts + i64::try_from(i)?, &slug, "a live observation");
        let t0 = Instant::now();
        store.write(&[ev])?;
        lat.push(t0.elapsed());
    }
    let took = start.elapsed();
    lat.sort();
    Ok((lat, took))
}

fn line(label: &str, lat: &[Duration], took: Duration, raw_rate: Option<f64>) {
    let n = lat.len();
    let rate = per_sec(n, took);
    let ratio = raw_rate.map_or(String::new(), |r| format!("; {:.3}× raw", rate / r));
    println!(
        "{label}: p50 {:.3} ms, p99 {:.3} ms, max {:.2} ms, {rate:.0} events/s ({n} single-event transactions{ratio})",
        lat[n / 2].as_secs_f64() * 1000.0,
        lat[n * 99 / 100].as_secs_f64() * 1000.0,
        lat[n - 1].as_secs_f64() * 1000.0,
    );
}

/// The floor for rebuild: raw SQLite reads every event of the store at
/// `db` in `(ts, event_id)` order and writes each into one plain table
/// (what a fold does at the least), in one transaction.
fn raw_refold(db: &Path) -> Result<Duration, Box<dyn std::error::Error>> {
    let conn = rusqlite::Connection::open(db)?;
    conn.execute_batch("CREATE TEMP TABLE refold(task_id TEXT, type TEXT, ts INTEGER, data TEXT)")?;
    let start = Instant::now();
    let tx = conn.unchecked_transaction()?;
    {
        let mut read =
            tx.prepare("SELECT task_id, type, ts, data FROM events ORDER BY ts, event_id")?;
        let mut write = tx.prepare("INSERT INTO refold VALUES (?1, ?2, ?3, ?4)")?;
        let mut rows = read.query([])?;
        while let Some(r) = rows.next()? {
            let (a, b, c, d): (String, String, i64, String) =
                (r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?);
            write.execute(rusqlite::params![a, b, c, d])?;
        }
    }
    tx.commit()?;
    Ok(start.elapsed())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let tasks: Option<usize> = std::env::var("CAIRN_BENCH_TASKS")
        .ok()
        .and_then(|s| s.parse().ok());
    if std::env::var("CAIRN_BENCH_PART").is_ok_and(|p| p == "logs") {
        return logs::run(tasks.unwrap_or(10_000), raw_refold);
    }
    let tasks = tasks.unwrap_or(20_000);
    let dir = tempfile::tempdir()?;
    let db = dir.path().join(".cairn/cairn.db");
    let store = Store::open(&db)?;
    let base = 1_790_000_000;
    let start = Instant::now();
    let mut batch = Vec::new();
    let mut events = 0usize;
    for t in 0..tasks {
        let slug = format!("2026-12-01-bench-task-{t}");
        let ts = base + i64::try_from(t)?;
        batch.push(NewEvent::task_create(
            "bench",
            ts,
            &slug,
            Some("a generated task"),
            None,
        ));
        for o in 0..10 {
            let text = format!("observation {o} about task {t}: tokenizer cache sqlite");
            batch.push(NewEvent::observation("bench", ts + 1 + o, &slug, &text));
        }
        batch.push(NewEvent::update_status(
            "bench",
            ts + 20,
            &slug,
            Status::Blocked,
        ));
        batch.push(NewEvent::update_status(
            "bench",
            ts + 21,
            &slug,
            Status::Active,
        ));
        batch.push(NewEvent::set_metadata(
            "bench",
            ts + 22,
            &slug,
            "owner",
            "ana",
        ));
        if batch.len() >= 1400 {
            events += batch.len();
            store.write(&batch)?;
            batch.clear();
        }
    }
    events += batch.len();
    store.write(&batch)?;
    let took = start.elapsed();
    println!(
        "build: {tasks} tasks, {events} events in {took:.1?} ({:.0} events/s, batches of 1400)",
        per_sec(events, took)
    );
    let raw_build = raw_append(dir.path(), tasks, base)?;
    println!(
        "raw SQLite append: {events} events in {raw_build:.1?} ({:.0} events/s; ours ÷ raw time {:.1}×)",
        per_sec(events, raw_build),
        took.as_secs_f64() / raw_build.as_secs_f64()
    );
    let (bytes, alloc) = du(&dir.path().join(".cairn/tasks"));
    println!(
        "size: .cairn/tasks/ holds {:.1} MiB of lines ({:.1} MiB allocated on disk, {tasks} files)",
        bytes as f64 / 1048576.0,
        alloc as f64 / 1048576.0
    );

    // Per-call reconcile check on an unchanged store.
    store.sync()?;
    let n = 100_000;
    let start = Instant::now();
    for _ in 0..n {
        store.sync()?;
    }
    let took = start.elapsed();
    println!(
        "sync: unchanged per-call check {:.4} ms ({n} calls)",
        took.as_secs_f64() * 1000.0 / n as f64
    );

    // Live observe, one per transaction, logs on; beside raw SQLite
    // inserting the same row in single-row transactions.
    let n: usize = std::env::var("CAIRN_BENCH_OBSERVES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(4000);
    let (raw_lat, raw_took) = raw_single(dir.path(), n)?;
    let raw_rate = per_sec(n, raw_took);
    line("raw SQLite single-row insert", &raw_lat, raw_took, None);
    let (lat, took) = observe_live(&store, n, tasks, base + 1_000_000, "live")?;
    line("observe (logs on)", &lat, took, Some(raw_rate));
    let total = usize::try_from(store.event_count()?)?;

    let start = Instant::now();
    store.rebuild()?;
    let took = start.elapsed();
    println!(
        "rebuild: {total} events in {took:.1?} ({:.0} events/s)",
        per_sec(total, took)
    );
    let raw_rebuild = raw_refold(&db)?;
    println!(
        "raw SQLite refold: {total} events read in (ts, event_id) order and written to one table in {raw_rebuild:.1?} ({:.0} events/s; ours ÷ raw time {:.1}×)",
        per_sec(total, raw_rebuild),
        took.as_secs_f64() / raw_rebuild.as_secs_f64()
    );
    drop(store);

    let start = Instant::now();
    let store = Store::open(&db)?;
    println!(
        "open: full reconcile of the unchanged store in {:.1?}",
        start.elapsed()
    );
    drop(store);

    for f in ["cairn.db", "cairn.db-wal", "cairn.db-shm"] {
        let _ = std::fs::remove_file(dir.path().join(".cairn").join(f));
    }
    let start = Instant::now();
    let store = Store::open(&db)?;
    let took = start.elapsed();
    println!(
        "recover: deleted cairn.db rebuilt from the logs, {} events in {took:.1?} ({:.0} events/s)",
        store.event_count()?,
        per_sec(total, took)
    );
    drop(store);

    // The same observe without the per-task logs: the same database file
    // opened under a name that keeps none (a hard link; the first store
    // is closed, so its WAL is checkpointed away).
    let bare = dir.path().join(".cairn/bare.db");
    std::fs::hard_link(&db, &bare)?;
    let store = Store::open(&bare)?;
    let (lat, took) = observe_live(&store, n, tasks, base + 2_000_000, "bare")?;
    line("observe (logs off)", &lat, took, Some(raw_rate));
    Ok(())
}
