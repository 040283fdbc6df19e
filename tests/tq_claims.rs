//! Claims, leases and the `ready` view (spec/tq.md §9), in process with a
//! fixed clock so a lease lapses without sleeping: the claim-one query,
//! lapse and renewal, release by a non-holder, completion ending a claim,
//! the read surface's refusal, rebuild and verify reproducing claims, and
//! where claims show (`task_get`, `(mine)`, `(fields)`, `(schema)`).

mod common;

use cairn::clock::Clock;
use cairn::session::Session;
use cairn::store::{EdgeType, Status};
use cairn::tools::{ToolCtx, dispatch};
use cairn::tq::Surface;
use cairn::tq::engine::Engine;
use common::{Fx, REFUSED, s};
use serde_json::json;

/// The clock the tests start at: after every fixture event (2026-01-01).
const T0: i64 = 1_767_300_000; // 2026-01-01 20:40 UTC

const CLAIM_ONE: &str = "(-> (query \"ready\") (:take 1) (:claim! 60) (:ids))";

fn agent(name: &str) -> Session {
    let mut s = Session::new();
    s.agent = Some(name.to_string());
    s
}

/// Runs `q` as `who` at `now` on `surface`: the text or the plain diagnostic.
fn run(f: &Fx, who: &Session, now: i64, surface: Surface, q: &str) -> String {
    match Engine::new()
        .with_clock(Clock::Fixed(now))
        .run(&f.store, who, q, surface)
    {
        Ok(t) => t,
        Err(d) => d.render_plain(),
    }
}

fn w(f: &Fx, who: &Session, now: i64, q: &str) -> String {
    run(f, who, now, Surface::Write, q)
}

fn r(f: &Fx, who: &Session, now: i64, q: &str) -> String {
    run(f, who, now, Surface::Read, q)
}

/// `task_get` of `slug` at `now`, as `who`.
fn task_get(f: &Fx, who: &Session, now: i64, slug: &str) -> String {
    tool(f, who, now, "task_get", slug)
}

/// Tool `name` with `task_id = slug` at `now`, as `who`: its text.
fn tool(f: &Fx, who: &Session, now: i64, name: &str, slug: &str) -> String {
    let mut session = who.clone();
    let engine = Engine::new();
    let mut ctx = ToolCtx {
        store: (&f.store).into(),
        session: &mut session,
        engine: &engine,
        root: f.dir.path().to_path_buf(),
        clock: Clock::Fixed(now),
    };
    dispatch(&mut ctx, name, json!({ "task_id": slug }))
        .map(|o| o.text)
        .unwrap_or_else(|e| e.to_string())
}

#[test]
fn the_claim_one_query_hands_each_ready_task_to_one_agent() {
    let mut f = Fx::new();
    f.create("a");
    f.create("b");
    let (ana, bob, cy) = (agent("ana"), agent("bob"), agent("cy"));
    assert_eq!(w(&f, &ana, T0, CLAIM_ONE), format!("1 task:\n- {}", s("a")));
    assert_eq!(w(&f, &bob, T0, CLAIM_ONE), format!("1 task:\n- {}", s("b")));
    let before = f.events();
    assert_eq!(w(&f, &cy, T0, CLAIM_ONE), "No matching tasks.");
    assert_eq!(f.events(), before, "a losing claim records nothing");
    assert_eq!(r(&f, &cy, T0, "(query \"ready\")"), "No matching tasks.");
    assert_eq!(
        r(
            &f,
            &ana,
            T0,
            "(-> (all) (:select :claimed-by :claim-until))"
        ),
        format!(
            "2 tasks:\n- {a}  claimed-by=ana  claim-until={u} (2026-01-01)\n- {b}  claimed-by=bob  claim-until={u} (2026-01-01)",
            a = s("a"),
            b = s("b"),
            u = T0 + 60
        )
    );
    assert_eq!(
        r(&f, &ana, T0, "(mine)"),
        format!("1 task:\n- {} (active)", s("a"))
    );
    assert_eq!(
        r(&f, &bob, T0, "(-> (mine) (:ids))"),
        format!("1 task:\n- {}", s("b"))
    );
    assert_eq!(r(&f, &cy, T0, "(mine)"), "No matching tasks.");
}

#[test]
fn a_task_another_agent_holds_is_dropped_from_the_claim_output() {
    let mut f = Fx::new();
    f.create("a");
    f.create("b");
    let (ana, bob) = (agent("ana"), agent("bob"));
    w(
        &f,
        &ana,
        T0,
        &format!("(-> (node \"{}\") (:claim! 600))", s("a")),
    );
    let before = f.events();
    assert_eq!(
        w(&f, &bob, T0 + 1, "(-> (all) (:claim! 600) (:ids))"),
        format!("1 task:\n- {}", s("b"))
    );
    assert_eq!(f.events(), before + 1, "one claim recorded, for b only");
    assert_eq!(
        r(&f, &bob, T0 + 1, "(-> (all) (:group-by :claimed-by))"),
        format!(
            "2 groups:\n\n## ana (1)\n- {} (active)\n\n## bob (1)\n- {} (active)",
            s("a"),
            s("b")
        )
    );
}

#[test]
fn a_lapsed_claim_is_claimable_and_the_holder_renews() {
    let mut f = Fx::new();
    f.create("a");
    let (ana, bob) = (agent("ana"), agent("bob"));
    let one = format!("1 task:\n- {}", s("a"));
    assert_eq!(w(&f, &ana, T0, CLAIM_ONE), one);
    // Bob cannot take it while the lease runs, even by name.
    let by_name = format!("(-> (node \"{}\") (:claim! 60) (:ids))", s("a"));
    assert_eq!(w(&f, &bob, T0 + 59, &by_name), "No matching tasks.");
    // Ana renews at T0+30: the lease now runs to T0+90.
    assert_eq!(w(&f, &ana, T0 + 30, &by_name), one);
    assert_eq!(
        r(&f, &ana, T0 + 30, "(-> (mine) (:select :claim-until))"),
        format!(
            "1 task:\n- {}  claim-until={} (2026-01-01)",
            s("a"),
            T0 + 90
        )
    );
    assert_eq!(w(&f, &bob, T0 + 89, CLAIM_ONE), "No matching tasks.");
    // At T0+90 the lease has lapsed (live while until > now).
    assert_eq!(
        r(&f, &bob, T0 + 90, "(query \"ready\")"),
        format!("1 task:\n- {} (active)", s("a"))
    );
    assert_eq!(r(&f, &ana, T0 + 90, "(mine)"), "No matching tasks.");
    assert_eq!(w(&f, &bob, T0 + 90, CLAIM_ONE), one);
    assert_eq!(
        r(&f, &ana, T0 + 90, "(-> (all) (:select :claimed-by))"),
        format!("1 task:\n- {}  claimed-by=bob", s("a"))
    );
    assert!(f.store.verify().unwrap().ok);
}

#[test]
fn release_by_a_non_holder_changes_nothing_and_by_the_holder_frees_the_task() {
    let mut f = Fx::new();
    f.create("a");
    let (ana, bob) = (agent("ana"), agent("bob"));
    w(&f, &ana, T0, CLAIM_ONE);
    let before = f.events();
    // (:release!) returns its input set, like the other mutations.
    assert_eq!(
        w(&f, &bob, T0 + 1, "(-> (all) (:release!) (:ids))"),
        format!("1 task:\n- {}", s("a"))
    );
    assert_eq!(f.events(), before, "a non-holder's release records nothing");
    assert_eq!(
        r(&f, &bob, T0 + 1, "(-> (all) (:select :claimed-by))"),
        format!("1 task:\n- {}  claimed-by=ana", s("a"))
    );
    w(&f, &ana, T0 + 2, "(-> (mine) (:release!))");
    assert_eq!(f.events(), before + 1);
    assert_eq!(
        r(&f, &bob, T0 + 2, "(-> (all) (:select :claimed-by))"),
        format!("1 task:\n- {}  claimed-by=∅", s("a"))
    );
    // Released in the same second it is claimed again: the claim wins.
    assert_eq!(
        w(&f, &bob, T0 + 2, CLAIM_ONE),
        format!("1 task:\n- {}", s("a"))
    );
    assert_eq!(r(&f, &bob, T0 + 2, "(-> (mine) (:count))"), "1");
    assert!(f.store.verify().unwrap().ok);
}

#[test]
fn completing_a_task_ends_its_claim_and_dormant_tasks_cannot_be_claimed() {
    let mut f = Fx::new();
    f.create("a");
    f.create("b");
    f.status("b", Status::Completed);
    let ana = agent("ana");
    w(&f, &ana, T0, CLAIM_ONE);
    assert_eq!(r(&f, &ana, T0, "(-> (mine) (:count))"), "1");
    w(&f, &ana, T0 + 1, "(-> (mine) (:set-status! :completed))");
    assert_eq!(r(&f, &ana, T0 + 1, "(mine)"), "No matching tasks.");
    assert_eq!(
        r(
            &f,
            &ana,
            T0 + 1,
            "(-> (all) (:where (has :claimed-by)) (:count))"
        ),
        "0"
    );
    assert_eq!(
        task_get(&f, &ana, T0 + 1, &s("a")),
        format!("{}  [completed]", s("a"))
    );
    let before = f.events();
    assert_eq!(
        w(&f, &ana, T0 + 2, "(-> (dormant) (:claim! 60))"),
        "No matching tasks."
    );
    assert_eq!(f.events(), before);
}

#[test]
fn the_read_surface_refuses_claims_and_releases() {
    let mut f = Fx::new();
    f.create("a");
    let ana = agent("ana");
    for q in ["(-> (all) (:claim! 60))", "(-> (all) (:release!))"] {
        let got = r(&f, &ana, T0, q);
        assert_eq!(got.lines().next(), Some(REFUSED), "{q}");
    }
    assert_eq!(f.events(), 1);
}

#[test]
fn leases_are_bounded_and_the_step_takes_one_integer() {
    let mut f = Fx::new();
    f.create("a");
    let ana = agent("ana");
    for (q, arg) in [
        ("(-> (all) (:claim! 0))", "0"),
        ("(-> (all) (:claim! 86401))", "86401"),
        ("(-> (all) (:claim! \"60\"))", "\"60\""),
    ] {
        let got = w(&f, &ana, T0, q);
        assert_eq!(
            got.lines().next().unwrap_or(""),
            format!("Query error: :claim! needs a lease of 1 to 86400 seconds, got {arg}."),
            "{q}"
        );
    }
    assert_eq!(
        w(
            &f,
            &ana,
            T0,
            "(-> (all) (:claim! 86400) (:select :claim-until))"
        ),
        format!(
            "1 task:\n- {}  claim-until={} (2026-01-02)",
            s("a"),
            T0 + 86_400
        )
    );
}

#[test]
fn ready_is_not_dormant_not_blocked_deps_and_children_done_and_unclaimed() {
    let mut f = Fx::new();
    f.create("free");
    f.create("blocked");
    f.status("blocked", Status::Blocked);
    f.create("waits");
    f.create("dep");
    f.link("waits", "dep", EdgeType::DependsOn);
    f.create("dep-done-waits");
    f.create("dep-done");
    f.link("dep-done-waits", "dep-done", EdgeType::DependsOn);
    f.status("dep-done", Status::Completed);
    f.create("phase");
    f.fork("phase", "step");
    f.create("finished-phase");
    f.fork("finished-phase", "old-step");
    f.status("old-step", Status::Abandoned);
    f.create("held");
    w(
        &f,
        &agent("ana"),
        T0,
        &format!("(-> (node \"{}\") (:claim! 60))", s("held")),
    );
    let want: String = ["dep", "dep-done-waits", "finished-phase", "free", "step"]
        .iter()
        .map(|n| format!("\n- {}", s(n)))
        .collect();
    assert_eq!(
        r(
            &f,
            &agent("bob"),
            T0,
            "(-> (query \"ready\") (:sort :slug :asc) (:ids))"
        ),
        format!("5 tasks:{want}")
    );
}

#[test]
fn task_get_shows_a_live_claim_only() {
    let mut f = Fx::new();
    f.create("a");
    let ana = agent("ana");
    w(&f, &ana, T0, "(-> (all) (:claim! 900))");
    assert_eq!(
        task_get(&f, &ana, T0 + 1, &s("a")),
        format!(
            "{}  [active]\n  claimed: ana until 2026-01-01 20:55 UTC",
            s("a")
        )
    );
    assert_eq!(
        task_get(&f, &ana, T0 + 900, &s("a")),
        format!("{}  [active]", s("a"))
    );
    // task_bootstrap shows the same line (and, no handoffs, nothing more).
    assert_eq!(
        tool(&f, &ana, T0 + 899, "task_bootstrap", &s("a")),
        format!(
            "{}  [active]\n  claimed: ana until 2026-01-01 20:55 UTC",
            s("a")
        )
    );
}

#[test]
fn rebuild_and_verify_reproduce_claims() {
    let mut f = Fx::new();
    f.create("a");
    f.create("b");
    f.create("c");
    let (ana, bob) = (agent("ana"), agent("bob"));
    w(&f, &ana, T0, CLAIM_ONE);
    w(&f, &bob, T0, CLAIM_ONE);
    w(&f, &bob, T0 + 1, "(-> (mine) (:release!))");
    w(&f, &bob, T0 + 1, CLAIM_ONE);
    let shown = "(-> (all) (:select :claimed-by :claim-until))";
    let before = r(&f, &ana, T0 + 2, shown);
    let digest = f.store.digest().unwrap();
    assert!(f.store.verify().unwrap().ok);
    f.store.rebuild().unwrap();
    assert_eq!(f.store.digest().unwrap(), digest);
    assert_eq!(r(&f, &ana, T0 + 2, shown), before);
    assert_eq!(
        before,
        format!(
            "3 tasks:\n- {}  claimed-by=ana  claim-until={} (2026-01-01)\n- {}  claimed-by=bob  claim-until={} (2026-01-01)\n- {}  claimed-by=∅  claim-until=∅",
            s("a"),
            T0 + 60,
            s("b"),
            T0 + 61,
            s("c"),
        )
    );
}

#[test]
fn the_registry_lists_the_claim_vocabulary() {
    let mut f = Fx::new();
    f.create("a");
    let ana = agent("ana");
    assert_eq!(
        r(
            &f,
            &ana,
            T0,
            "(-> (schema) (:where (or (= :slug \"claim!\") (= :slug \"release!\") (= :slug \"mine\"))) (:select :category :kind))"
        ),
        "3 tasks:\n- claim!  category=step  kind=mutation\n- mine  category=source  kind=∅\n- release!  category=step  kind=mutation"
    );
    assert_eq!(
        r(
            &f,
            &ana,
            T0,
            "(-> (fields) (:where (matches :slug \"claim\")) (:select :type))"
        ),
        "2 tasks:\n- claim-until  type=timestamp\n- claimed-by  type=text"
    );
    assert_eq!(
        r(
            &f,
            &ana,
            T0,
            "(-> (views) (:where (= :slug \"ready\")) (:select :origin))"
        ),
        "1 task:\n- ready  origin=builtin"
    );
}

#[test]
fn a_version_2_store_folds_the_claims_its_log_already_holds() {
    let mut f = Fx::new();
    f.create("a");
    let ana = agent("ana");
    w(&f, &ana, T0, CLAIM_ONE);
    // Make it a version 2 store whose log holds a claim it never folded.
    f.store
        .conn()
        .execute_batch(
            "DROP INDEX tasks_claim_owner;
             ALTER TABLE tasks DROP COLUMN claim_owner;
             ALTER TABLE tasks DROP COLUMN claim_until;
             ALTER TABLE tasks DROP COLUMN claim_ts;
             ALTER TABLE tasks DROP COLUMN claim_eid;
             UPDATE schema_meta SET value = '2' WHERE key = 'version';",
        )
        .unwrap();
    let db = f.store.path().to_path_buf();
    f.store = cairn::store::Store::open(&db).unwrap();
    assert_eq!(f.store.schema_version().unwrap(), 5);
    assert_eq!(
        r(
            &f,
            &ana,
            T0 + 1,
            "(-> (mine) (:select :claimed-by :claim-until))"
        ),
        format!(
            "1 task:\n- {}  claimed-by=ana  claim-until={} (2026-01-01)",
            s("a"),
            T0 + 60
        )
    );
    assert!(f.store.verify().unwrap().ok);
}

#[test]
fn a_reopened_task_does_not_get_its_claim_back() {
    let mut f = Fx::new();
    f.create("a");
    let ana = agent("ana");
    w(&f, &ana, T0, CLAIM_ONE);
    w(&f, &ana, T0 + 1, "(-> (mine) (:set-status! :completed))");
    // A release on the completed task has nothing left to end.
    let before = f.events();
    w(&f, &ana, T0 + 2, "(-> (all) (:release!))");
    assert_eq!(f.events(), before);
    w(&f, &ana, T0 + 3, "(-> (all) (:set-status! :active))");
    assert_eq!(r(&f, &ana, T0 + 3, "(mine)"), "No matching tasks.");
    assert_eq!(
        r(&f, &ana, T0 + 3, "(-> (all) (:select :claimed-by))"),
        format!("1 task:\n- {}  claimed-by=∅", s("a"))
    );
    assert!(f.store.verify().unwrap().ok);
}

#[test]
fn a_register_stamped_in_year_9999_still_takes_claims() {
    let mut f = Fx::new();
    f.create("a");
    // A lapsed claim stamped at the last second the store accepts.
    f.write(vec![cairn::store::NewEvent::claim(
        "forger",
        cairn::store::MAX_TS,
        &s("a"),
        "mallory",
        T0 - 10,
    )]);
    let bob = agent("bob");
    assert_eq!(w(&f, &bob, T0, CLAIM_ONE), format!("1 task:\n- {}", s("a")));
    assert_eq!(
        r(&f, &bob, T0, "(-> (all) (:select :claimed-by))"),
        format!("1 task:\n- {}  claimed-by=bob", s("a"))
    );
    assert_eq!(w(&f, &bob, T0, "(-> (mine) (:release!) (:count))"), "1");
    assert!(f.store.verify().unwrap().ok);
}

#[test]
fn claim_owners_with_control_characters_or_over_256_characters_are_refused() {
    let mut f = Fx::new();
    f.create("a");
    let ev = |owner: &str| cairn::store::NewEvent::claim("x", T0, &s("a"), owner, T0 + 60);
    let err = f.store.write(&[ev("a\nb")]).unwrap_err().to_string();
    assert_eq!(
        err,
        "invalid task.claim event: data.owner \"a\\nb\" contains control characters"
    );
    let err = f
        .store
        .write(&[ev(&"o".repeat(257))])
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "invalid task.claim event: data.owner must be at most 256 characters"
    );
    let forever = cairn::store::NewEvent::claim("x", T0, &s("a"), "ana", i64::MAX);
    let err = f.store.write(&[forever]).unwrap_err().to_string();
    assert_eq!(
        err,
        "invalid task.claim event: data.until must be an integer in 0..=253402300799"
    );
    assert_eq!(f.events(), 1);
}

#[test]
fn a_session_without_an_agent_name_cannot_claim() {
    let mut f = Fx::new();
    f.create("a");
    let nobody = Session::new();
    let refusal = "Query error: (mine), (:claim! S) and (:release!) need an agent name, and this session has none (over MCP, initialize names it; on the CLI, --as NAME).";
    for q in [CLAIM_ONE, "(-> (all) (:release!))"] {
        assert_eq!(w(&f, &nobody, T0, q).lines().next(), Some(refusal), "{q}");
    }
    assert_eq!(r(&f, &nobody, T0, "(mine)").lines().next(), Some(refusal));
    assert_eq!(f.events(), 1);
}

/// Issue 23: claim-one's target set is a top-N on the slug: one statement
/// that walks the slug index and stops at the first ready task (`LIMIT`),
/// never the whole `ready` set sorted, so the write lock is held for the
/// write, not for a scan.
#[test]
fn claim_one_walks_the_slug_index_and_stops_at_the_first_ready_task() {
    let f = common::seeded();
    let ana = agent("ana");
    let ex = Engine::new()
        .with_clock(Clock::Fixed(T0))
        .explain(&f.store, &ana, CLAIM_ONE, Surface::Write)
        .unwrap();
    assert_eq!(ex.statements.len(), 2);
    let target = &ex.statements[0];
    assert!(
        target.sql.contains(" ORDER BY t.slug ASC LIMIT +?"),
        "{}",
        target.sql
    );
    assert!(!target.sql.contains("ROW_NUMBER"), "{}", target.sql);
    assert!(
        target
            .plan
            .iter()
            .any(|l| l.trim() == "SCAN t USING INDEX sqlite_autoindex_tasks_1"),
        "{:#?}",
        target.plan
    );
    assert!(
        !target.plan.iter().any(|l| l.contains("tasks_status")),
        "{:#?}",
        target.plan
    );
    // The one-row stage stays the outer loop of the final join (`CROSS
    // JOIN`): its row is found by id, not by walking every task in slug
    // order and probing the stage (4.27 ms at 100k tasks; stop 33).
    assert!(
        target
            .sql
            .contains("FROM s1 x CROSS JOIN tasks t ON t.id = x.id"),
        "{}",
        target.sql
    );
    let lines: Vec<&str> = target.plan.iter().map(|l| l.trim()).collect();
    let outer = lines.iter().rposition(|l| *l == "SCAN x");
    assert!(
        outer.is_some_and(
            |i| lines.get(i + 1) == Some(&"SEARCH t USING INTEGER PRIMARY KEY (rowid=?)")
        ),
        "{lines:#?}"
    );
    assert_eq!(
        lines
            .iter()
            .filter(|l| **l == "SCAN t USING INDEX sqlite_autoindex_tasks_1")
            .count(),
        1,
        "{lines:#?}"
    );
    // And it still takes the first ready task by slug.
    let first = r(&f, &ana, T0, "(-> (query \"ready\") (:take 1) (:ids))");
    assert_eq!(w(&f, &ana, T0, CLAIM_ONE), first);
}
