//! A deterministic generator of a large store for the benches: `n` tasks in
//! trees of 50 (depth ≤ 3), depends-on chains between siblings, related
//! links across trees, ~3 observations and some metadata per task, mixed
//! statuses. Everything is written through `Store::write`.

use std::path::Path;

use cairn::store::{EdgeType, NewEvent, Status, Store};

#[path = "lcg.rs"]
mod lcg;
use lcg::{Batch, Lcg};

/// The slug of task `i`.
pub fn slug(i: usize) -> String {
    format!("2026-01-01-task-{i:05}")
}

/// Creates the store at `path` with `n` tasks; returns it.
pub fn generate(path: &Path, n: usize) -> Store {
    let store = Store::open(path).expect("open store");
    let mut rng = Lcg(42);
    let sid = "bench-session";
    let mut ts = 1_767_225_600i64;
    let mut events = Batch::new(&store, 5_001);
    for i in 0..n {
        ts += 1;
        events.push(NewEvent::task_create(
            sid,
            ts,
            &slug(i),
            Some("generated task"),
            None,
        ));
        if i % 50 != 0 {
            let block = i - i % 50;
            let parent = if i % 50 < 8 {
                block
            } else {
                block + 1 + rng.below(7) as usize
            };
            events.push(NewEvent::fork(
                sid,
                ts,
                &slug(parent),
                &slug(i),
                EdgeType::PhaseOf,
            ));
            if i % 50 > 1 && rng.below(2) == 0 {
                events.push(NewEvent::link(
                    sid,
                    ts,
                    &slug(i),
                    &slug(i - 1),
                    EdgeType::DependsOn,
                ));
            }
        }
        if rng.below(5) == 0 {
            let other = rng.below(n as u64) as usize;
            if other != i {
                events.push(NewEvent::link(
                    sid,
                    ts,
                    &slug(i),
                    &slug(other),
                    EdgeType::Related,
                ));
            }
        }
        for k in 0..rng.below(6) {
            events.push(NewEvent::observation(
                sid,
                ts,
                &slug(i),
                &format!("note {k} on task {i}"),
            ));
        }
        if rng.below(4) == 0 {
            events.push(NewEvent::set_metadata(
                sid,
                ts,
                &slug(i),
                "priority",
                "high",
            ));
        }
        let st = match rng.below(20) {
            0..=3 => Some(Status::Completed),
            4 => Some(Status::Abandoned),
            5 | 6 => Some(Status::Open),
            7 => Some(Status::Blocked),
            _ => None,
        };
        if let Some(st) = st {
            events.push(NewEvent::update_status(sid, ts + 1, &slug(i), st));
        }
        events.flush_full();
    }
    events.finish();
    store
}
