//! Claim-one (issue 23): how long `(-> (query "ready") (:take 1) (:claim!
//! 900) (:ids))` holds the write lock, on a scratch copy of the store (the
//! claim is released after each timed run, untimed). Beside it: the target
//! statement alone as the write path lowers it now (optimized: the `:take 1`
//! is a `LIMIT` in the target set) and as it did before (naive: the whole
//! `ready` set ranked), and the best hand-written claim (one `LIMIT 1`
//! select walking the slug index and one `UPDATE`, committed in a `BEGIN
//! IMMEDIATE` transaction; the claim is reset untimed).

use std::hint::black_box;
use std::path::Path;

use cairn::session::Session;
use cairn::store::Store;
use cairn::tq::Surface;
use cairn::tq::engine::Engine;
use cairn::tq::plan::PStep;
use cairn::tq::sql::{self, Start, Tail};
use rusqlite::{Connection, params};

use super::measure::{median_ms, median_ms_reset};

/// The claim-one query.
pub const CLAIM_ONE: &str = "(-> (query \"ready\") (:take 1) (:claim! 900) (:ids))";

/// Median ms of: ours (the whole claim-one write), the optimized target
/// statement, the naive target statement, and the best hand-written claim.
pub fn claim_one(db: &Path) -> (f64, f64, f64, f64) {
    let dir = tempfile::tempdir().expect("tempdir");
    let copy = dir.path().join("claims.db");
    let src = Connection::open(db).expect("open");
    src.execute("VACUUM INTO ?1", params![copy.to_string_lossy()])
        .expect("copy");
    let store = Store::open(&copy).expect("open copy");
    let engine = Engine::new();
    let mut session = Session::new();
    session.agent = Some("bench/1".to_string());
    let ours = median_ms_reset(
        || {
            black_box(
                engine
                    .run_value(&store, &session, CLAIM_ONE, Surface::Write)
                    .ok(),
            );
        },
        || {
            let _ = engine.run_value(&store, &session, "(-> (mine) (:release!))", Surface::Write);
        },
    );
    let conn = store.reader().expect("reader");
    let prepared = engine
        .prepare(&conn, &session, CLAIM_ONE, Surface::Write)
        .expect("prepare");
    let plan = &prepared.plan;
    let optimized = cairn::tq::mutate::statements(plan).remove(0);
    let at = plan
        .main
        .steps
        .iter()
        .position(|s| matches!(s, PStep::Mutate(_)))
        .expect("a mutation");
    let PStep::Mutate(m) = &plan.main.steps[at] else {
        unreachable!()
    };
    let naive = sql::lower(
        &plan.main,
        &plan.main.steps[..at],
        &Start::Source,
        &Tail::Targets(m),
        plan.reflect,
        plan.now,
    );
    cairn::tq::exec::register_functions(&conn).expect("functions");
    let run = |st: &sql::Statement| {
        let mut stmt = conn.prepare_cached(&st.sql).expect("prepare");
        let params: Vec<rusqlite::types::Value> = st
            .params
            .iter()
            .map(|p| match p {
                sql::Param::Int(i) => rusqlite::types::Value::Integer(*i),
                sql::Param::Real(r) => rusqlite::types::Value::Real(*r),
                sql::Param::Text(t) => rusqlite::types::Value::Text(t.clone()),
            })
            .collect();
        let mut rows = stmt
            .query(rusqlite::params_from_iter(params))
            .expect("query");
        let mut n = 0;
        while rows.next().expect("row").is_some() {
            n += 1;
        }
        n
    };
    assert_eq!(run(&optimized), 1, "{}", optimized.sql);
    let t_opt = median_ms(|| {
        black_box(run(&optimized));
    });
    let t_naive = median_ms(|| {
        black_box(run(&naive));
    });
    let hand = Connection::open(&copy).expect("open hand");
    hand.busy_timeout(std::time::Duration::from_secs(5))
        .expect("busy");
    // The best hand SQL: walk the slug index (`+t.status` keeps SQLite off
    // `tasks_status`), stop at the first ready task.
    let pick = "SELECT t.id, t.slug FROM tasks t
                WHERE +t.status IN ('open', 'active') AND substr(t.slug, 1, 1) <> '@'
                  AND NOT EXISTS (SELECT 1 FROM edges e JOIN tasks d ON d.id = e.dst_id
                                  WHERE e.src_id = t.id AND e.type = 'depends-on'
                                    AND d.status NOT IN ('completed', 'abandoned'))
                  AND NOT EXISTS (SELECT 1 FROM tasks c WHERE c.parent_task_id = t.id
                                    AND c.status NOT IN ('completed', 'abandoned'))
                  AND NOT (t.claim_owner IS NOT NULL AND t.claim_until > unixepoch())
                ORDER BY t.slug LIMIT 1";
    let first: String = hand.query_row(pick, [], |r| r.get(1)).expect("pick");
    let claimed = engine
        .run(&store, &session, CLAIM_ONE, Surface::Write)
        .expect("claim");
    assert_eq!(
        claimed,
        format!("1 task:\n- {first}"),
        "claim-one takes the first ready task"
    );
    let _ = engine.run_value(&store, &session, "(-> (mine) (:release!))", Surface::Write);
    let picked = std::cell::Cell::new(0i64);
    let hand = std::cell::RefCell::new(hand);
    let t_hand = median_ms_reset(
        || {
            let mut hand = hand.borrow_mut();
            let tx = hand
                .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                .expect("begin");
            let id: i64 = tx.query_row(pick, [], |r| r.get(0)).expect("pick");
            tx.execute(
                "UPDATE tasks SET claim_owner = 'hand', claim_until = unixepoch() + 900 WHERE id = ?1",
                params![id],
            )
            .expect("update");
            black_box(id);
            tx.commit().expect("commit");
            picked.set(id);
        },
        || {
            hand.borrow()
                .execute(
                    "UPDATE tasks SET claim_owner = NULL, claim_until = NULL WHERE id = ?1",
                    params![picked.get()],
                )
                .expect("reset");
        },
    );
    (ours, t_opt, t_naive, t_hand)
}
