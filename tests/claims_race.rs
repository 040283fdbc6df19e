//! The race of spec/tq.md §9: 8 OS processes (the real `cairn` binary, each
//! its own agent) run the claim-one query at once, 50 rounds, against a
//! store with exactly 3 ready tasks per round. Every round has exactly 3
//! distinct winners, one per ready task; the other 5 answer `No matching
//! tasks.`; nothing fails with `database is locked`; `cairn verify` is ok.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use cairn::store::{NewEvent, Status, Store};

const PROCS: usize = 8;
const ROUNDS: usize = 50;
const READY: usize = 3;
const CLAIM_ONE: &str = "(-> (query \"ready\") (:take 1) (:claim! 900) (:ids))";

fn slug(round: usize, k: usize) -> String {
    format!("2026-12-01-race-r{round:02}-t{k}")
}

fn cairn(db: &Path, args: &[&str], stdin: Stdio) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(args)
        .env("CAIRN_DB", db)
        .env_remove("CAIRN_AGENT")
        .env_remove("CAIRN_NOW")
        .env("NO_COLOR", "1")
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn cairn")
}

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).trim_end().to_string()
}

#[test]
fn eight_processes_fifty_rounds_three_ready_tasks_three_winners_each() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cairn.db");
    let store = Store::open(&db).unwrap();
    let sid = "race-parent";
    let mut winners_total = 0;
    let mut losers_total = 0;
    for round in 0..ROUNDS {
        // Last round's tasks are done (dormant: never ready again); this
        // round's three are created.
        let ts = cairn::store::now();
        let mut ev = Vec::new();
        if round > 0 {
            for k in 0..READY {
                ev.push(NewEvent::update_status(
                    sid,
                    ts,
                    &slug(round - 1, k),
                    Status::Completed,
                ));
            }
        }
        for k in 0..READY {
            ev.push(NewEvent::task_create(sid, ts, &slug(round, k), None, None));
        }
        store.write(&ev).unwrap();
        // Each racer reads the query from stdin (`query -`), so all eight
        // are started and waiting before any of them holds the query: the
        // queries are then handed out back to back and race for the lock.
        let mut children: Vec<_> = (0..PROCS)
            .map(|p| {
                let name = format!("racer-{p}");
                cairn(
                    &db,
                    &["--as", &name, "query", "--write", "-"],
                    Stdio::piped(),
                )
            })
            .collect();
        std::thread::sleep(std::time::Duration::from_millis(30));
        for c in &mut children {
            if let Some(mut stdin) = c.stdin.take() {
                stdin.write_all(CLAIM_ONE.as_bytes()).unwrap();
            }
        }
        let outs: Vec<Output> = children
            .into_iter()
            .map(|c| c.wait_with_output().unwrap())
            .collect();
        let mut won = BTreeSet::new();
        let mut lost = 0;
        for (p, o) in outs.iter().enumerate() {
            let t = text(o);
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(o.status.success(), "round {round} racer {p}: {t}\n{err}");
            if t == "No matching tasks." {
                lost += 1;
                continue;
            }
            let Some(s) = t.strip_prefix("1 task:\n- ") else {
                panic!("round {round} racer {p} answered {t:?}\n{err}");
            };
            assert!(won.insert(s.to_string()), "round {round}: {s} won twice");
        }
        let want: BTreeSet<String> = (0..READY).map(|k| slug(round, k)).collect();
        assert_eq!(won, want, "round {round}: the winners hold the ready tasks");
        assert_eq!(lost, PROCS - READY, "round {round}: losers");
        winners_total += won.len();
        losers_total += lost;
    }
    assert_eq!(winners_total, ROUNDS * READY);
    assert_eq!(losers_total, ROUNDS * (PROCS - READY));
    let claims: i64 = store
        .conn()
        .query_row(
            "SELECT count(*) FROM events WHERE type = 'task.claim'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(claims, (ROUNDS * READY) as i64, "one claim event per win");
    let verify = cairn(&db, &["verify"], Stdio::null())
        .wait_with_output()
        .unwrap();
    assert!(verify.status.success(), "{}", text(&verify));
    assert!(text(&verify).starts_with("verify: ok"), "{}", text(&verify));
    eprintln!(
        "claims race: {ROUNDS} rounds x {PROCS} processes: {winners_total} wins, {losers_total} losses, 0 errors"
    );
}
