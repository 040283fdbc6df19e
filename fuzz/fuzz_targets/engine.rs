//! Fuzz target `engine`: bytes → the whole engine (compile → plan → IR →
//! optimize → lower → run) on a small store, read surface. Never panics;
//! the optimized and unoptimized lowerings give the same answer (or the same
//! error); a read leaves the store unchanged (`PRAGMA data_version`).
//! Seeded from ../grammar/examples.
#![no_main]

use std::time::Duration;

use cairn::session::Session;
use cairn::store::{EdgeType, NewEvent, Status, Store};
use cairn::tq::Surface;
use cairn::tq::engine::Engine;
use libfuzzer_sys::fuzz_target;

struct Fx {
    _dir: tempfile::TempDir,
    store: Store,
    session: Session,
}

fn slug(i: usize) -> String {
    format!("2026-01-01-task-{i}")
}

/// Twelve tasks: a plan of phases, depends-on and related edges (a cycle),
/// metadata, observations, every status, live and lapsed claims.
fn fixture() -> Fx {
    {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let store = Store::open(&dir.path().join("cairn.db")).unwrap_or_else(|e| panic!("{e}"));
        let sid = "fuzz";
        let ts = 1_767_225_600;
        let mut ev = Vec::new();
        for i in 0..12 {
            ev.push(NewEvent::task_create(
                sid,
                ts + i as i64,
                &slug(i),
                None,
                None,
            ));
            let st = Status::ALL[i % Status::ALL.len()];
            if st != Status::Active {
                ev.push(NewEvent::update_status(sid, ts + 50, &slug(i), st));
            }
            for o in 0..(i % 3) {
                ev.push(NewEvent::observation(
                    sid,
                    ts + 60,
                    &slug(i),
                    &format!("obs {o}"),
                ));
            }
        }
        for i in 1..6 {
            ev.push(NewEvent::fork(
                sid,
                ts + 70,
                &slug(0),
                &slug(i),
                EdgeType::PhaseOf,
            ));
        }
        ev.push(NewEvent::fork(
            sid,
            ts + 71,
            &slug(3),
            &slug(7),
            EdgeType::ForkedFrom,
        ));
        for (a, b, e) in [
            (2, 1, EdgeType::DependsOn),
            (3, 2, EdgeType::DependsOn),
            (8, 9, EdgeType::Related),
            (9, 10, EdgeType::Related),
            (10, 8, EdgeType::Related),
        ] {
            ev.push(NewEvent::link(sid, ts + 80, &slug(a), &slug(b), e));
        }
        ev.push(NewEvent::set_metadata(
            sid,
            ts + 90,
            &slug(1),
            "priority",
            "high",
        ));
        ev.push(NewEvent::set_metadata(
            sid,
            ts + 90,
            &slug(2),
            "objective",
            "ship it",
        ));
        ev.push(NewEvent::set_metadata(
            sid,
            ts + 90,
            &slug(4),
            "display-name",
            "Four",
        ));
        // Claims: two live (until 2100), one lapsed, one on a dormant task.
        for (i, owner, until) in [
            (1, "fuzz-agent", 4_102_444_800),
            (4, "other-agent", 4_102_444_800),
            (5, "fuzz-agent", ts + 100),
            (7, "fuzz-agent", 4_102_444_800),
        ] {
            ev.push(NewEvent::claim(sid, ts + 95, &slug(i), owner, until));
        }
        store.write(&ev).unwrap_or_else(|e| panic!("{e}"));
        let mut session = Session::new();
        session.current = Some(slug(0));
        session.agent = Some("fuzz-agent".to_string());
        Fx {
            _dir: dir,
            store,
            session,
        }
    }
}

thread_local! {
    /// The store, built once per fuzzing process (a `Store` is not `Sync`;
    /// libFuzzer runs inputs on one thread).
    static FX: Fx = fixture();
}

fn data_version(store: &Store) -> i64 {
    store
        .conn()
        .query_row("PRAGMA data_version", [], |r| r.get(0))
        .unwrap_or(-1)
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    FX.with(|fx| run(fx, text));
});

fn run(fx: &Fx, text: &str) {
    let mut on = Engine::new();
    on.time_limit = Duration::from_millis(500);
    let mut off = on.clone();
    off.optimize = false;
    let before = data_version(&fx.store);
    let a = on.run(&fx.store, &fx.session, text, Surface::Read);
    let b = off.run(&fx.store, &fx.session, text, Surface::Read);
    assert!(
        data_version(&fx.store) == before,
        "a read changed the store: {text}"
    );
    let timed_out = |r: &Result<String, cairn::tq::Diagnostic>| matches!(r, Err(d) if d.message.contains("limit"));
    if timed_out(&a) || timed_out(&b) {
        return;
    }
    let a = a.map_err(|d| d.message);
    let b = b.map_err(|d| d.message);
    assert!(
        a == b,
        "optimized and unoptimized differ on {text}\n{a:?}\n{b:?}"
    );
}
