//! The engine's cancellation flag (issue 14 defect 4; docs/mcp.md
//! "Cancellation"): raising it stops a running read or write query long
//! before its time limit, and a cancelled write records nothing.

mod common;

use std::time::{Duration, Instant};

use common::Fx;

/// The time-limit fixture of `tq_plan_write.rs`, one hop deeper: 200 tasks,
/// each related to the next 20; a predicate over it runs far past 10 s.
fn heavy(f: &mut Fx) -> &'static str {
    let sid = f.session.id.clone();
    f.write(common::heavy_events(&sid));
    r#"(all (:follow :related) (all (:follow :related) (all (:follow :related) (all (:follow :related) (all (:follow :related) (matches :slug "2026"))))))"#
}

/// Runs `q` on the write or read surface with the flag raised after 200 ms;
/// the answer and how long it took.
fn cancelled_after_200ms(f: &Fx, q: &str, write: bool) -> (String, Duration) {
    let flag = f.engine.cancel.clone();
    let raiser = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        flag.cancel();
    });
    let t = Instant::now();
    let out = if write { f.w(q) } else { f.r(q) };
    let took = t.elapsed();
    raiser.join().unwrap();
    (out, took)
}

#[test]
fn a_raised_flag_stops_a_read_and_a_write_and_nothing_is_written() {
    let mut f = Fx::new();
    let p = heavy(&mut f);
    let before = f.events();
    let (out, took) =
        cancelled_after_200ms(&f, &format!("(-> (all) (:where {p}) (:count))"), false);
    assert_eq!(
        out,
        "Query error: the query was cancelled; nothing was written."
    );
    assert!(took < Duration::from_secs(2), "read ran {took:?}");

    f.engine.cancel = cairn::tq::engine::Cancel::new();
    let q = format!(r#"(-> (all) (:where {p}) (:set-status! "blocked"))"#);
    let (out, took) = cancelled_after_200ms(&f, &q, true);
    assert_eq!(
        out,
        "Query error: the query was cancelled; nothing was written."
    );
    assert!(took < Duration::from_secs(2), "write ran {took:?}");
    assert_eq!(f.events(), before);

    // Raised before the query starts: a cheap write is refused too.
    assert_eq!(
        f.w(r#"(-> (all) (:set-status! "blocked"))"#),
        "Query error: the query was cancelled; nothing was written."
    );
    assert_eq!(f.events(), before);
    f.engine.cancel = cairn::tq::engine::Cancel::new();
    assert_eq!(
        f.r(r#"(-> (all) (:where (= :status "blocked")) (:count))"#),
        "0"
    );
}
