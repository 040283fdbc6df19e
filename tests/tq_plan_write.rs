//! The write path (atomicity, convergence, carried order, views) and the
//! time limit, through the real store.

mod common;

use std::time::Duration;

use cairn::tq::Surface;
use common::{Fx, REFUSED, s};

#[test]
fn a_failing_last_target_records_no_event_at_all() {
    let mut f = Fx::new();
    f.create("a");
    f.create("b");
    f.create("c");
    let before = f.events();
    // Make the last target's metadata event fail on purpose.
    f.store
        .conn()
        .execute_batch(&format!(
            "CREATE TEMP TRIGGER fail_last BEFORE INSERT ON main.events \
             WHEN NEW.task_id = '{}' AND NEW.type = 'task.set-metadata' \
             BEGIN SELECT RAISE(ABORT, 'injected failure'); END;",
            s("c")
        ))
        .unwrap();
    let out = f.w(r#"(-> (all) (:set-status! "blocked") (:set! :owner "me"))"#);
    assert_eq!(out, "The query could not be executed.");
    assert_eq!(f.events(), before);
    f.store
        .conn()
        .execute_batch("DROP TRIGGER fail_last")
        .unwrap();
    assert_eq!(
        f.r("(-> (active) (:group-by :status))").lines().next(),
        Some("1 group:")
    );
    assert_eq!(
        f.r(r#"(-> (all) (:where (= :status "blocked")) (:count))"#),
        "0"
    );
}

#[test]
fn mutations_keep_order_and_carry_new_values() {
    let mut f = Fx::new();
    f.create("a");
    f.create("b");
    f.create("c");
    // A metadata key is a field once it exists in the store (compile time).
    f.meta("a", "owner", "nobody");
    assert_eq!(
        f.w(r#"(-> (all) (:sort :slug :desc) (:set! :owner "me") (:take 2) (:select :owner))"#),
        format!("2 tasks:\n- {}  owner=me\n- {}  owner=me", s("c"), s("b"))
    );
    // Two mutation steps in one query, one transaction.
    let n = f.events();
    assert_eq!(
        f.w(r#"(-> (node "a") (:set-status! "open") (:set! :owner "you") (:enrich))"#),
        format!("1 task:\n- {} (open) obs=0 edges=0\n    owner: you", s("a"))
    );
    assert_eq!(f.events(), n + 2);
}

#[test]
fn link_to_a_missing_target_is_an_error_and_records_nothing() {
    let mut f = Fx::new();
    f.create("a");
    let n = f.events();
    assert_eq!(
        f.w(r#"(-> (all) (:set! :k "v") (:link! :depends-on "2026-01-01-nope"))"#),
        "Query error: No task 2026-01-01-nope."
    );
    assert_eq!(f.events(), n);
}

#[test]
fn link_skips_the_target_itself_and_structural_links_set_the_parent() {
    let mut f = Fx::new();
    f.create("a");
    f.create("b");
    f.create("hub");
    let n = f.events();
    f.w(&format!(r#"(-> (all) (:link! :phase-of "{}"))"#, s("hub")));
    assert_eq!(f.events(), n + 2);
    assert_eq!(
        f.r(r#"(-> (node "hub") (:follow :phase-of) (:ids))"#),
        format!("2 tasks:\n- {}\n- {}", s("a"), s("b"))
    );
    f.w(&format!(
        r#"(-> (node "a") (:unlink! :phase-of "{}"))"#,
        s("hub")
    ));
    assert_eq!(
        f.r(r#"(-> (node "hub") (:follow :phase-of) (:ids))"#),
        format!("1 task:\n- {}", s("b"))
    );
}

#[test]
fn define_is_idempotent_and_self_reference_is_refused() {
    let mut f = Fx::new();
    f.create("a");
    let n = f.events();
    f.w(r#"(define! "mine" (-> (ALL)   (:take 5)))"#);
    assert_eq!(f.events(), n + 1);
    f.w(r#"(define! "mine" (-> (all) (:take 5)))"#);
    assert_eq!(f.events(), n + 1);
    assert_eq!(
        f.r(r#"(-> (views) (:where (= :slug "mine")) (:select :source))"#),
        "1 task:\n- mine  source=(-> (all) (:take 5))"
    );
    assert_eq!(
        f.w(r#"(define! "loop" (-> (query "loop") (:take 1)))"#),
        "Query error: View loop is defined in terms of itself."
    );
    assert_eq!(
        f.w(r#"(define! "mine" (query "mine"))"#),
        "Query error: View mine is defined in terms of itself."
    );
    assert_eq!(f.events(), n + 1);
    // undefine! of a name with no user view records nothing.
    assert_eq!(f.w(r#"(undefine! "orphans")"#), "No matching tasks.");
    assert_eq!(f.events(), n + 1);
    assert_eq!(f.r(r#"(undefine! "mine")"#), REFUSED);
}

#[test]
fn current_task_errors() {
    let mut f = Fx::new();
    f.create("a");
    assert_eq!(
        f.r("(current)"),
        "Query error: This query needs a current task; select one first."
    );
    f.session.current = Some("2026-01-01-gone".into());
    assert_eq!(
        f.r("(-> (current) (:follow :phase-of) (:count))"),
        "Query error: The current task 2026-01-01-gone is not in the store."
    );
}

/// 200 tasks, each related to the next 20: nested `all` over related hops
/// must visit 20^4 paths per task.
fn heavy(f: &mut Fx) -> &'static str {
    let sid = f.session.id.clone();
    f.write(common::heavy_events(&sid));
    r#"(all (:follow :related) (all (:follow :related) (all (:follow :related) (all (:follow :related) (matches :slug "2026")))))"#
}

#[test]
fn the_time_limit_interrupts_reads_and_writes_and_changes_nothing() {
    let mut f = Fx::new();
    let p = heavy(&mut f);
    f.engine.time_limit = Duration::from_millis(200);
    let n = f.events();
    assert_eq!(
        f.r(&format!("(-> (all) (:where {p}) (:count))")),
        "Query error: the query ran past its 0.2 s limit."
    );
    assert_eq!(
        f.w(&format!(
            r#"(-> (all) (:where {p}) (:set-status! "blocked"))"#
        )),
        "Query error: the query ran past its 0.2 s limit."
    );
    assert_eq!(
        f.w(&format!(
            r#"(-> (all) (:set-status! "blocked") (:where {p}) (:set! :k "v"))"#
        )),
        "Query error: the query ran past its 0.2 s limit."
    );
    assert_eq!(f.events(), n);
    assert_eq!(
        f.r(r#"(-> (all) (:where (= :status "blocked")) (:count))"#),
        "0"
    );
    f.engine.time_limit = Duration::from_secs(10);
    assert_eq!(
        f.engine.limit_error().render_plain(),
        "Query error: the query ran past its 10 s limit."
    );
    // The interrupts stopped with their writes: the connection's next
    // write runs whole (one event).
    let first = f.r("(-> (all) (:take 1) (:ids))");
    assert_eq!(
        f.w(r#"(-> (all) (:take 1) (:set! :k "after") (:ids))"#),
        first
    );
    assert_eq!(f.events(), n + 1);
}

#[test]
fn explain_shows_sql_params_and_plan() {
    let mut f = Fx::new();
    f.create("a");
    let ex = f
        .engine
        .explain(
            &f.store,
            &f.session,
            r#"(-> (node "a") (:count))"#,
            Surface::Read,
        )
        .unwrap();
    assert_eq!(ex.statements.len(), 1);
    assert_eq!(ex.statements[0].params, vec!["\"a\"".to_string()]);
    // A count over a scan of the table is one SELECT (issue 23).
    assert_eq!(
        ex.statements[0].sql,
        "SELECT count(*) FROM tasks t WHERE tq_contains(t.slug, ?1)"
    );
    assert!(!ex.statements[0].plan.is_empty());
    let ex = f
        .engine
        .explain(
            &f.store,
            &f.session,
            r#"(-> (all) (:set! :k "v") (:count))"#,
            Surface::Write,
        )
        .unwrap();
    assert_eq!(ex.statements.len(), 2);
}

#[test]
fn long_and_deep_queries_run_or_fail_as_query_errors() {
    let mut f = Fx::new();
    f.create("a");
    let steps: String = (0..150)
        .map(|_| "(:where (has :slug))")
        .collect::<Vec<_>>()
        .join(" ");
    assert_eq!(f.r(&format!("(-> (all) {steps} (:count))")), "1");
    let mut p = "(has :slug)".to_string();
    for _ in 0..40 {
        p = format!("(all (:follow :related) {p})");
    }
    assert_eq!(
        f.r(&format!("(-> (all) (:where {p}) (:count))")),
        "Query error: the query is too complex to run (Expression tree is too large (maximum depth 1000)); split it into smaller queries."
    );
}

#[test]
fn a_query_of_many_flips_stamps_now_and_a_later_write_still_wins() {
    let mut f = Fx::new();
    f.create("alpha");
    let before = f.events();
    let flips = r#"(:set-status! "completed") (:set-status! "open")"#.repeat(50);
    let q = format!(r#"(-> (node "{}") {flips} (:select :status))"#, s("alpha"));
    assert_eq!(f.w(&q), format!("1 task:\n- {}  status=open", s("alpha")));
    // Every flip is recorded: 100 events, none dropped as a duplicate.
    assert_eq!(f.events(), before + 100);
    let later = format!(
        r#"(-> (node "{}") (:set-status! "completed") (:select :status))"#,
        s("alpha")
    );
    assert_eq!(
        f.w(&later),
        format!("1 task:\n- {}  status=completed", s("alpha"))
    );
    assert_eq!(f.events(), before + 101);
    let now = cairn::store::now();
    let future: i64 = f
        .store
        .conn()
        .query_row("SELECT count(*) FROM events WHERE ts > ?1", [now], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(future, 0);
    assert_eq!(
        f.r(&format!(
            r#"(-> (node "{}") (:select :status))"#,
            s("alpha")
        )),
        format!("1 task:\n- {}  status=completed", s("alpha"))
    );
    assert!(f.store.verify().unwrap().ok);
}
