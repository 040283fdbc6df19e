//! Write queries on PostgreSQL (issue 21; spec/team.md "Concurrency and
//! claims"): N agents running the claim-one query at once, each on its own
//! connection to one PostgreSQL schema, get N different tasks; with more
//! agents than ready tasks, exactly one agent wins each task and the rest
//! get none. A failed write records nothing.

mod common;

use std::sync::{Arc, Barrier};

use cairn::session::Session;
use cairn::store::NewEvent;
use cairn::store::pg::{PgStore, PgTarget};
use cairn::tq::Surface;
use cairn::tq::engine::Engine;

const AGENTS: usize = 8;
const ROUNDS: usize = 50;
const READY: usize = 3;
const CLAIM_ONE: &str = "(-> (query \"ready\") (:take 1) (:claim! 600) (:ids))";

fn open(url: &str) -> PgStore {
    PgStore::open(&PgTarget::parse(url, None).unwrap()).unwrap()
}

fn slug(round: usize, i: usize) -> String {
    format!("2026-01-01-r{round:02}-t{i}")
}

/// 8 agents × 50 rounds over 3 ready tasks: each round exactly 3 agents
/// win, each a different one of the round's tasks, and the other 5 get
/// `No matching tasks.`
#[test]
fn agents_claiming_at_once_get_different_tasks() {
    let Some(url) = common::pg::url() else { return };
    let setup = open(&url);
    let start = Arc::new(Barrier::new(AGENTS + 1));
    let done = Arc::new(Barrier::new(AGENTS + 1));
    let mut handles = Vec::new();
    for a in 0..AGENTS {
        let (url, start, done) = (url.clone(), start.clone(), done.clone());
        handles.push(std::thread::spawn(move || {
            let store = open(&url);
            let mut session = Session::new();
            session.agent = Some(format!("agent-{a}"));
            let engine = Engine::new();
            let mut answers = Vec::new();
            for _ in 0..ROUNDS {
                start.wait();
                let out = match engine.run_pg(&store, &session, CLAIM_ONE, Surface::Write) {
                    Ok(t) => t,
                    Err(d) => d.render_plain(),
                };
                answers.push(out);
                done.wait();
            }
            answers
        }));
    }
    let sid = "setup";
    for round in 0..ROUNDS {
        let ts = 1_767_225_600 + round as i64;
        let events: Vec<NewEvent> = (0..READY)
            .map(|i| NewEvent::task_create(sid, ts, &slug(round, i), None, None))
            .collect();
        setup.write(&events).unwrap();
        start.wait();
        done.wait();
        // Retire the round's tasks so the next round starts with 3 ready.
        let retire: Vec<NewEvent> = (0..READY)
            .map(|i| {
                NewEvent::update_status(sid, ts, &slug(round, i), cairn::store::Status::Completed)
            })
            .collect();
        setup.write(&retire).unwrap();
    }
    let answers: Vec<Vec<String>> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    for round in 0..ROUNDS {
        let mut won: Vec<String> = Vec::new();
        let mut lost = 0;
        for agent in &answers {
            let out = &agent[round];
            if out == "No matching tasks." {
                lost += 1;
            } else {
                let slug = out
                    .strip_prefix("1 task:\n- ")
                    .unwrap_or_else(|| panic!("round {round}: {out}"));
                won.push(slug.to_string());
            }
        }
        won.sort();
        let want: Vec<String> = (0..READY).map(|i| slug(round, i)).collect();
        assert_eq!(won, want, "round {round}");
        assert_eq!(lost, AGENTS - READY, "round {round}");
    }
    // Every claim is recorded once: 3 claim events per round.
    let claims: i64 = setup
        .client()
        .query_one("SELECT count(*) FROM events WHERE type = 'task.claim'", &[])
        .unwrap()
        .get(0);
    assert_eq!(claims, (ROUNDS * READY) as i64);
}

/// A write query that fails (a link to a task that does not exist) records
/// nothing on PostgreSQL and answers SQLite's sentence.
#[test]
fn a_failed_write_records_nothing() {
    let mut f = common::Fx::new();
    f.create("a");
    let Some(slot) = f.pg_synced() else { return };
    let pg = slot.as_ref().unwrap();
    let before = pg.event_count().unwrap();
    let q = "(-> (all) (:set! :priority \"high\") (:link! :depends-on \"2026-01-01-nope\"))";
    let got = match f.engine.run_pg(pg, &f.session, q, Surface::Write) {
        Ok(t) => t,
        Err(d) => d.render_plain(),
    };
    assert_eq!(got, "Query error: No task 2026-01-01-nope.");
    assert_eq!(pg.event_count().unwrap(), before);
    drop(slot);
    assert_eq!(f.w(q), got);
}
