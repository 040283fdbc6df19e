//! A deterministic generator of REALISTIC stores for `benches/compare.rs`
//! (docs/performance.md "The generated stores"): plans of 3–15 phases (some
//! phases with 1–3 sub-phases), depends-on chains and cross links inside a
//! plan, related links across the store with cycles, ~10 observations and
//! some metadata per task, 77% of plans dormant. At 100k tasks: ~1M
//! observations, ~300k lateral edges, ~93k phase-of. Everything is written
//! through the write boundary (`Store::write`, batches of 20k events), so
//! the projection is exactly what the fold produces. Stores are cached under
//! `target/bench-stores/` (keyed by [`GEN_VERSION`] and size) so a bench run
//! does not regenerate them.

use std::path::{Path, PathBuf};

use cairn::store::{EdgeType, NewEvent, Status, Store};

#[path = "lcg.rs"]
mod lcg;
use lcg::{Batch, Lcg};

/// Bump when the generator's output changes (invalidates the cache).
pub const GEN_VERSION: u32 = 1;

/// The slug of task `i`.
pub fn slug(i: usize) -> String {
    format!("2026-01-01-t{i:06}")
}

const WORDS: &[&str] = &[
    "parser",
    "index",
    "migration",
    "flaky",
    "timeout",
    "schema",
    "cache",
    "retry",
    "deadlock",
    "snapshot",
    "fixture",
    "rollback",
    "benchmark",
    "lint",
    "refactor",
    "review",
];
const AREAS: &[&str] = &["storage", "cli", "mcp", "planner", "docs"];
const PRIORITIES: &[&str] = &["high", "medium", "low"];

/// A generated store on disk: its path and the slug of the `(current)` task
/// (the root of a large in-progress plan).
#[derive(Debug, Clone)]
pub struct Generated {
    /// The `cairn.db` path.
    pub path: PathBuf,
    /// The current task's slug.
    pub current: String,
}

/// The cached store of `n` tasks under `target_dir/bench-stores/`,
/// generating it first when missing. Panics on I/O or store errors (bench
/// code).
pub fn cached(target_dir: &Path, n: usize) -> Generated {
    let dir = target_dir.join("bench-stores");
    std::fs::create_dir_all(&dir).expect("create bench-stores");
    let base = format!("v{GEN_VERSION}-{n}");
    let path = dir.join(format!("{base}.db"));
    let done = dir.join(format!("{base}.current"));
    if let Ok(current) = std::fs::read_to_string(&done)
        && path.exists()
    {
        return Generated {
            path,
            current: current.trim().to_string(),
        };
    }
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(dir.join(format!("{base}.db{suffix}")));
    }
    let started = std::time::Instant::now();
    let current = generate(&path, n);
    eprintln!(
        "generated {n} tasks into {} in {:.1} s",
        path.display(),
        started.elapsed().as_secs_f64()
    );
    std::fs::write(&done, &current).expect("write marker");
    Generated { path, current }
}

/// Writes the store of `n` tasks at `path`; returns the current task's slug.
pub fn generate(path: &Path, n: usize) -> String {
    let store = Store::open(path).expect("open store");
    let mut rng = Lcg(0x5eed_0001);
    let sid = "bench-session";
    let mut ts = 1_767_225_600i64;
    let mut events = Batch::new(&store, 20_000);
    let mut current: Option<usize> = None;
    let mut i = 0usize;
    while i < n {
        // One plan: a root, its phases, some sub-phases.
        let root = i;
        let dormant_plan = rng.pct(77);
        let phases = 3 + rng.below(13) as usize;
        let mut members = vec![root];
        let mut spec: Vec<(usize, usize)> = Vec::new(); // (task, parent)
        let mut next = root + 1;
        for _ in 0..phases {
            if next >= n {
                break;
            }
            let phase = next;
            next += 1;
            spec.push((phase, root));
            members.push(phase);
            if rng.pct(20) {
                for _ in 0..1 + rng.below(3) {
                    if next >= n {
                        break;
                    }
                    spec.push((next, phase));
                    members.push(next);
                    next += 1;
                }
            }
        }
        if !dormant_plan && phases >= 8 && spec.len() >= 8 {
            current = Some(root);
        }
        // Creates, in index order.
        for &t in &members {
            ts += 1;
            events.push(NewEvent::task_create(
                sid,
                ts,
                &slug(t),
                Some(&format!(
                    "{} the {}",
                    WORDS[t % WORDS.len()],
                    WORDS[(t / 7) % WORDS.len()]
                )),
                None,
            ));
        }
        for (k, &(t, parent)) in spec.iter().enumerate() {
            events.push(NewEvent::fork(
                sid,
                ts,
                &slug(parent),
                &slug(t),
                EdgeType::PhaseOf,
            ));
            if k > 0 {
                let prev = spec[k - 1].0;
                events.push(NewEvent::link(
                    sid,
                    ts,
                    &slug(t),
                    &slug(prev),
                    EdgeType::DependsOn,
                ));
                if rng.pct(60) {
                    let other = spec[rng.below(k as u64) as usize].0;
                    if other != prev {
                        events.push(NewEvent::link(
                            sid,
                            ts,
                            &slug(t),
                            &slug(other),
                            EdgeType::DependsOn,
                        ));
                    }
                }
            }
        }
        // Statuses: dormant plans are finished; live plans are part done.
        let done_upto = rng.below(members.len() as u64) as usize;
        for (k, &t) in members.iter().enumerate() {
            let st = if dormant_plan {
                if rng.pct(90) {
                    Some(Status::Completed)
                } else {
                    Some(Status::Abandoned)
                }
            } else if k > 0 && k <= done_upto {
                Some(Status::Completed)
            } else {
                match rng.below(10) {
                    0 => Some(Status::Open),
                    1 => Some(Status::Blocked),
                    _ => None,
                }
            };
            if let Some(st) = st {
                events.push(NewEvent::update_status(sid, ts + 1, &slug(t), st));
            }
        }
        // Per task: related links, observations, metadata.
        for &t in &members {
            for _ in 0..rng.below(4) {
                let other = rng.below(n as u64) as usize;
                if other != t {
                    events.push(NewEvent::link(
                        sid,
                        ts,
                        &slug(t),
                        &slug(other),
                        EdgeType::Related,
                    ));
                }
            }
            if t % 50 == 0 {
                // A related cycle of 3–6 tasks through t.
                let len = 3 + rng.below(4) as usize;
                let mut ring = vec![t];
                for _ in 1..len {
                    ring.push(rng.below(n as u64) as usize);
                }
                for w in 0..len {
                    let (a, b) = (ring[w], ring[(w + 1) % len]);
                    if a != b {
                        events.push(NewEvent::link(
                            sid,
                            ts,
                            &slug(a),
                            &slug(b),
                            EdgeType::Related,
                        ));
                    }
                }
            }
            for k in 0..rng.below(21) {
                let text = format!(
                    "note {k}: {} {} after {} (run {})",
                    WORDS[rng.below(WORDS.len() as u64) as usize],
                    WORDS[rng.below(WORDS.len() as u64) as usize],
                    WORDS[rng.below(WORDS.len() as u64) as usize],
                    rng.below(1000)
                );
                events.push(NewEvent::observation(
                    sid,
                    ts + 2 + k as i64,
                    &slug(t),
                    &text,
                ));
            }
            if rng.pct(30) {
                let p = PRIORITIES[rng.below(3) as usize];
                events.push(NewEvent::set_metadata(sid, ts, &slug(t), "priority", p));
            }
            if rng.pct(20) {
                let a = AREAS[rng.below(AREAS.len() as u64) as usize];
                events.push(NewEvent::set_metadata(sid, ts, &slug(t), "area", a));
            }
            if rng.pct(10) {
                let o = format!("agent-{}", rng.below(10));
                events.push(NewEvent::set_metadata(sid, ts, &slug(t), "owner", &o));
            }
            if rng.pct(5) {
                let d = format!("Task {t}");
                events.push(NewEvent::set_metadata(
                    sid,
                    ts,
                    &slug(t),
                    "display-name",
                    &d,
                ));
            }
        }
        events.flush_full();
        i = next;
    }
    events.finish();
    let current = current.unwrap_or(0);
    slug(current)
}
