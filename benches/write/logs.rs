//! Issue 23, opening and rebuilding a store WITH per-task logs in git, the
//! way a user meets them: the realistic store (`support/realistic.rs`)
//! written through the write boundary into `REPO/.cairn/cairn.db` of a git
//! repository, its logs committed; then the `cairn` binary run as a fresh
//! process (wall clock of the whole command):
//!
//! - `open`: `cairn query Q` on the unchanged store (median of 9; Q is
//!   [`FIRST`], an answer that costs nothing), and
//!   `Store::open` / `Store::open_read` in this process (median of 9);
//! - `rebuild`: `cairn rebuild` and `cairn rebuild --from-logs`, events/s
//!   of the command's wall clock, beside the raw SQLite refold;
//! - `clone`: `git clone` of the repository, then the first `cairn show
//!   Q` in the clone (the database built from the logs).
//!
//! The repository is cached under `$CARGO_TARGET_DIR/bench-stores/`
//! (`logs-vG-N`), so a second run does not regenerate it. Run:
//! `CAIRN_BENCH_PART=logs CAIRN_BENCH_TASKS=10000 cargo bench --bench write`.
//! `CAIRN_BENCH_LOGS_ONLY=rebuild` (or `=build`) runs only the in-process
//! `Store::rebuild_digest` (or the in-process build from the logs, on a
//! copy of the repository) with its stages: a quick look while profiling.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use std::sync::Mutex;

use cairn::store::Store;
use cairn::store::progress::{Stage, set_sink};

#[path = "../support/realistic.rs"]
#[allow(dead_code)]
mod realistic;

const CAIRN: &str = env!("CARGO_BIN_EXE_cairn");

/// The query each fresh process answers: one task, so what is timed is
/// starting, opening and reconciling.
const FIRST: &str = "(-> (all) (:take 1) (:ids))";

type R<T> = Result<T, Box<dyn std::error::Error>>;

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("target"))
}

fn git(dir: &Path, args: &[&str]) -> R<()> {
    let out = Command::new("git").current_dir(dir).args(args).output()?;
    if !out.status.success() {
        return Err(format!("git {args:?}: {}", String::from_utf8_lossy(&out.stderr)).into());
    }
    Ok(())
}

/// Runs `cairn ARGS` in `dir` (no `CAIRN_DB`): wall clock and stdout.
fn cairn(dir: &Path, args: &[&str]) -> R<(Duration, String)> {
    let start = Instant::now();
    let out = Command::new(CAIRN)
        .current_dir(dir)
        .args(args)
        .env_remove("CAIRN_DB")
        .output()?;
    let took = start.elapsed();
    if !out.status.success() {
        return Err(format!("cairn {args:?}: {}", String::from_utf8_lossy(&out.stderr)).into());
    }
    Ok((took, String::from_utf8(out.stdout)?))
}

/// The stages the store reported, each with when it began (wall clock
/// and the process's CPU time).
static STAGES: Mutex<Vec<(Stage, Instant, Duration)>> = Mutex::new(Vec::new());

/// The CPU time (user + system, all threads) this process has used.
fn cpu_time() -> Duration {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a plain clock read into a local struct.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut t) };
    Duration::new(
        u64::try_from(t.tv_sec).unwrap_or(0),
        u32::try_from(t.tv_nsec).unwrap_or(0),
    )
}

/// Records the store's stages (`store::progress`) in [`STAGES`].
fn record_stages() {
    set_sink(Box::new(|stage, _, _| {
        if let Ok(mut v) = STAGES.lock()
            && v.last().map(|l| l.0) != Some(stage)
        {
            v.push((stage, Instant::now(), cpu_time()));
        }
    }));
}

/// `stage s (CPU s), …` since the last call: where the time went.
fn stages() -> String {
    let v = STAGES
        .lock()
        .map(|mut v| std::mem::take(&mut *v))
        .unwrap_or_default();
    v.windows(2)
        .map(|w| {
            format!(
                "{} {:.2} s (CPU {:.2} s)",
                w[0].0.label(),
                (w[1].1 - w[0].1).as_secs_f64(),
                (w[1].2.saturating_sub(w[0].2)).as_secs_f64()
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The cached repository of `n` tasks with committed logs; its slug to show.
fn repo(n: usize) -> R<(PathBuf, String)> {
    let dir = target_dir()
        .join("bench-stores")
        .join(format!("logs-v{}-{n}", realistic::GEN_VERSION));
    let done = dir.join("done");
    let slug = realistic::slug(n / 2);
    if done.exists() {
        return Ok((dir, slug));
    }
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    git(&dir, &["init", "-q", "-b", "main"])?;
    git(&dir, &["config", "user.email", "bench@example.com"])?;
    git(&dir, &["config", "user.name", "bench"])?;
    let started = Instant::now();
    realistic::generate(&dir.join(".cairn/cairn.db"), n);
    eprintln!(
        "generated {n} tasks with logs in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    git(&dir, &["add", ".cairn"])?;
    git(&dir, &["commit", "-q", "-m", "plan"])?;
    std::fs::write(&done, "")?;
    Ok((dir, slug))
}

pub fn run(n: usize, raw_refold: impl Fn(&Path) -> R<Duration>) -> R<()> {
    let (dir, slug) = repo(n)?;
    let db = dir.join(".cairn/cairn.db");
    if let Ok(only) = std::env::var("CAIRN_BENCH_LOGS_ONLY") {
        return only_stages(&dir, &only);
    }
    // One open to settle whatever the generation left (stamps, marks).
    cairn(&dir, &["query", FIRST])?;
    let events = Store::open(&db)?.event_count()?;
    println!("logs: {n} tasks, {events} events, logs committed in git");

    let runs = 9;
    let mut cli = Vec::new();
    for _ in 0..runs {
        cli.push(cairn(&dir, &["query", FIRST])?.0);
    }
    let mut open = Vec::new();
    let mut open_read = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        drop(Store::open(&db)?);
        open.push(t.elapsed());
        let t = Instant::now();
        drop(Store::open_read(&db)?);
        open_read.push(t.elapsed());
    }
    println!(
        "open, unchanged: `cairn query` {:.1} ms (fresh process, median of {runs}); Store::open {:.2} ms, Store::open_read {:.2} ms",
        ms(median(cli)),
        ms(median(open)),
        ms(median(open_read))
    );

    let raw = raw_refold(&db)?;
    record_stages();
    let store = Store::open(&db)?;
    let t = Instant::now();
    store.rebuild_digest()?;
    let took = t.elapsed();
    drop(store);
    println!(
        "Store::rebuild_digest in process: {:.2} s ({:.0} events/s): {}",
        took.as_secs_f64(),
        events as f64 / took.as_secs_f64(),
        stages()
    );
    let (took, out) = cairn(&dir, &["rebuild"])?;
    println!(
        "cairn rebuild: {events} events in {:.2} s wall clock ({:.0} events/s; ÷ raw refold time {:.1}×) — {}",
        took.as_secs_f64(),
        events as f64 / took.as_secs_f64(),
        took.as_secs_f64() / raw.as_secs_f64(),
        out.trim()
    );
    let (took, out) = cairn(&dir, &["rebuild", "--from-logs"])?;
    println!(
        "cairn rebuild --from-logs: {:.2} s wall clock ({:.0} events/s; ÷ raw refold time {:.1}×) — {}",
        took.as_secs_f64(),
        events as f64 / took.as_secs_f64(),
        took.as_secs_f64() / raw.as_secs_f64(),
        out.trim()
    );
    println!(
        "raw SQLite refold: {events} events in {:.2} s ({:.0} events/s)",
        raw.as_secs_f64(),
        events as f64 / raw.as_secs_f64()
    );

    let clones = dir.with_extension("clones");
    let _ = std::fs::remove_dir_all(&clones);
    std::fs::create_dir_all(&clones)?;
    let t = Instant::now();
    git(
        &clones,
        &[
            "clone",
            "-q",
            "--no-hardlinks",
            &dir.to_string_lossy(),
            "clone",
        ],
    )?;
    let cloned = t.elapsed();
    let clone = clones.join("clone");
    let (first, out) = cairn(&clone, &["query", FIRST])?;
    if !out.contains(&realistic::slug(0)) {
        return Err(format!("the clone's first answer is wrong: {out}").into());
    }
    let (second, _) = cairn(&clone, &["query", FIRST])?;
    let (_, shown) = cairn(&clone, &["show", &slug])?;
    if !shown.contains(&slug) {
        return Err(format!("the clone does not show {slug}: {shown}").into());
    }
    println!(
        "clone: git clone {:.1} s; first answer in the clone {:.2} s ({:.0} events/s); the next {:.1} ms",
        cloned.as_secs_f64(),
        first.as_secs_f64(),
        events as f64 / first.as_secs_f64(),
        ms(second)
    );
    let clone_db = clone.join(".cairn/cairn.db");
    for f in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{f}", clone_db.display()));
    }
    stages();
    let t = Instant::now();
    drop(Store::open(&clone_db)?);
    let took = t.elapsed();
    println!(
        "build from the logs in process (a fresh clone's open): {:.2} s ({:.0} events/s): {}",
        took.as_secs_f64(),
        events as f64 / took.as_secs_f64(),
        stages()
    );
    let _ = std::fs::remove_dir_all(&clones);
    Ok(())
}

/// `CAIRN_BENCH_LOGS_ONLY`: one in-process run with its stages, `rebuild`
/// on the cached repository in `dir`, `build` (a fresh clone's open) on a
/// copy of its `.cairn` without the database.
fn only_stages(dir: &Path, only: &str) -> R<()> {
    record_stages();
    let db = dir.join(".cairn/cairn.db");
    let events = Store::open(&db)?.event_count()?;
    stages();
    let cpu = cpu_time();
    let (took, used, what) = match only {
        "rebuild" => {
            let store = Store::open(&db)?;
            stages();
            let t = Instant::now();
            store.rebuild_digest()?;
            (t.elapsed(), cpu_time(), "Store::rebuild_digest")
        }
        "build" => {
            let copy = dir.with_extension("build");
            let _ = std::fs::remove_dir_all(&copy);
            std::fs::create_dir_all(copy.join(".cairn"))?;
            let status = Command::new("cp")
                .args(["-r"])
                .arg(dir.join(".cairn/tasks"))
                .arg(copy.join(".cairn/"))
                .status()?;
            if !status.success() {
                return Err("cp failed".into());
            }
            let t = Instant::now();
            drop(Store::open(&copy.join(".cairn/cairn.db"))?);
            let (took, used) = (t.elapsed(), cpu_time());
            let _ = std::fs::remove_dir_all(&copy);
            (took, used, "build from the logs")
        }
        other => return Err(format!("CAIRN_BENCH_LOGS_ONLY={other}: rebuild or build").into()),
    };
    println!(
        "{what} in process: {:.2} s ({:.0} events/s), CPU {:.2} s: {}",
        took.as_secs_f64(),
        events as f64 / took.as_secs_f64(),
        (used.saturating_sub(cpu)).as_secs_f64(),
        stages()
    );
    Ok(())
}
