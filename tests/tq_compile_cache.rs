//! The compile cache (issue 23; docs/planner.md "The compile cache"): a
//! repeated read is compiled once per warm connection and still answers
//! from the rows of the moment; a change of the catalog (a view redefined)
//! drops it; the clock a claim is judged by is read at every run; the
//! current task is part of the key.

mod common;

use cairn::clock::Clock;
use cairn::session::Session;
use cairn::store::Store;
use cairn::tq::Surface;
use cairn::tq::cache::CompileCache;
use cairn::tq::engine::Engine;
use common::{Fx, s};

const T0: i64 = 1_767_300_000; // after every fixture event

/// How many lookups of the store's warm compile cache found an entry.
fn hits(store: &Store) -> u64 {
    let mut reader = store.warm_reader().unwrap();
    reader.slot::<CompileCache>().map(|c| c.hits()).unwrap()
}

fn run(store: &Store, who: &Session, now: i64, surface: Surface, q: &str) -> String {
    match Engine::new()
        .with_clock(Clock::Fixed(now))
        .run(store, who, q, surface)
    {
        Ok(t) => t,
        Err(d) => d.render_plain(),
    }
}

#[test]
fn a_repeated_read_is_compiled_once_and_reads_the_rows_of_the_moment() {
    let mut f = Fx::new();
    f.create("a");
    f.create("b");
    let who = Session::new();
    let q = "(-> (all) (:ids))";
    let two = format!("2 tasks:\n- {}\n- {}", s("a"), s("b"));
    assert_eq!(run(&f.store, &who, T0, Surface::Read, q), two);
    let before = hits(&f.store);
    assert_eq!(run(&f.store, &who, T0, Surface::Read, q), two);
    assert_eq!(hits(&f.store), before + 1, "the second run is a hit");
    // A write changes rows, not the catalog: the cached statement runs
    // again and sees the new task.
    f.create("c");
    assert_eq!(
        run(&f.store, &who, T0, Surface::Read, q),
        format!("3 tasks:\n- {}\n- {}\n- {}", s("a"), s("b"), s("c"))
    );
    assert_eq!(hits(&f.store), before + 2);
    // Another text is another entry.
    assert_eq!(
        run(&f.store, &who, T0, Surface::Read, "(-> (all) (:count))"),
        "3"
    );
    assert_eq!(hits(&f.store), before + 2);
}

#[test]
fn redefining_a_view_drops_the_cached_statements() {
    let mut f = Fx::new();
    f.create("a");
    f.create("b");
    let who = Session::new();
    let q = "(-> (query \"pick\") (:ids))";
    assert_eq!(
        run(
            &f.store,
            &who,
            T0,
            Surface::Write,
            "(define! \"pick\" (node \"01-a\"))"
        ),
        format!("1 task:\n- {} (active)", s("a"))
    );
    assert_eq!(
        run(&f.store, &who, T0, Surface::Read, q),
        format!("1 task:\n- {}", s("a"))
    );
    assert_eq!(
        run(&f.store, &who, T0, Surface::Read, q),
        format!("1 task:\n- {}", s("a"))
    );
    run(
        &f.store,
        &who,
        T0,
        Surface::Write,
        "(define! \"pick\" (node \"01-b\"))",
    );
    let before = hits(&f.store);
    assert_eq!(
        run(&f.store, &who, T0, Surface::Read, q),
        format!("1 task:\n- {}", s("b")),
        "the new body, not the cached one"
    );
    assert_eq!(hits(&f.store), before, "a miss: the catalog changed");
}

#[test]
fn a_cached_statement_judges_claims_by_the_clock_of_each_run() {
    let mut f = Fx::new();
    f.create("a");
    let mut ana = Session::new();
    ana.agent = Some("ana".to_string());
    assert_eq!(
        run(
            &f.store,
            &ana,
            T0,
            Surface::Write,
            "(-> (all) (:take 1) (:claim! 60) (:ids))"
        ),
        format!("1 task:\n- {}", s("a"))
    );
    let mine = "(-> (mine) (:ids))";
    assert_eq!(
        run(&f.store, &ana, T0 + 10, Surface::Read, mine),
        format!("1 task:\n- {}", s("a"))
    );
    let before = hits(&f.store);
    // The same text, later than the lease: the cached statement is rebound
    // to this run's clock, so the lapsed claim is not shown.
    assert_eq!(
        run(&f.store, &ana, T0 + 100, Surface::Read, mine),
        "No matching tasks."
    );
    assert_eq!(hits(&f.store), before + 1);
    // And a field read of the claim, too.
    let q = "(-> (all) (:select :claimed-by))";
    assert_eq!(
        run(&f.store, &ana, T0 + 10, Surface::Read, q),
        format!("1 task:\n- {}  claimed-by=ana", s("a"))
    );
    assert_eq!(
        run(&f.store, &ana, T0 + 100, Surface::Read, q),
        format!("1 task:\n- {}  claimed-by=∅", s("a"))
    );
}

#[test]
fn the_current_task_and_the_agent_are_part_of_the_key() {
    let mut f = Fx::new();
    f.create("a");
    f.create("b");
    let q = "(-> (current) (:ids))";
    let mut on_a = Session::new();
    on_a.current = Some(s("a"));
    let mut on_b = Session::new();
    on_b.current = Some(s("b"));
    assert_eq!(
        run(&f.store, &on_a, T0, Surface::Read, q),
        format!("1 task:\n- {}", s("a"))
    );
    assert_eq!(
        run(&f.store, &on_b, T0, Surface::Read, q),
        format!("1 task:\n- {}", s("b"))
    );
    assert_eq!(
        run(&f.store, &on_a, T0, Surface::Read, q),
        format!("1 task:\n- {}", s("a"))
    );
}

/// SQLite re-prepares a statement on every run when a bound value may change
/// its plan (`LIMIT ?`, a comparison with the indexed generated column
/// `edge_count`); the lowering spells those values `+?N`, so a repeated
/// view runs the statement prepared the first time (issue 23's fixed cost).
#[test]
fn no_builtin_view_is_prepared_again_on_a_repeat_run() {
    use cairn::tq::registry;
    use rusqlite::StatementStatus;
    let mut f = Fx::new();
    f.create("a");
    f.create("b");
    let mut who = Session::new();
    who.current = Some(s("a"));
    let engine = Engine::new().with_clock(Clock::Fixed(T0));
    let mut texts: Vec<String> = registry::builtin_views()
        .iter()
        .map(|v| format!("(query \"{}\")", v.name))
        .collect();
    texts.push("(-> (all) (:where (= :edge-count 0)) (:count))".to_string());
    texts.push("(-> (all) (:where (> :obs-count 1)) (:ids))".to_string());
    texts.push("(-> (all) (:sort :edge-count :desc) (:take 3) (:ids))".to_string());
    for q in &texts {
        for _ in 0..3 {
            engine.run(&f.store, &who, q, Surface::Read).unwrap();
        }
        let ex = engine.explain(&f.store, &who, q, Surface::Read).unwrap();
        let sql = &ex.statements[0].sql;
        let reader = f.store.warm_reader().unwrap();
        let st = reader.conn().prepare_cached(sql).unwrap();
        assert_eq!(st.get_status(StatementStatus::RePrepare), 0, "{q}\n{sql}");
        assert!(
            st.get_status(StatementStatus::Run) >= 3,
            "{q}: not the cached statement"
        );
    }
}

/// How many times the store's warm reader checked its catalog (each a read
/// transaction of its own).
fn checks(store: &Store) -> u64 {
    store.warm_reader().unwrap().catalog_checks()
}

fn run_with(engine: &Engine, store: &Store, q: &str, surface: Surface) -> String {
    match engine.run(store, &Session::new(), q, surface) {
        Ok(t) => t,
        Err(d) => d.render_plain(),
    }
}

/// The quick read (docs/planner.md "The compile cache"): a cached query
/// whose last run was short runs BEFORE its catalog check, which is then the
/// snapshot the statement read. Nobody committed: no check at all. Another
/// connection redefined the view or added a task: the quick answer is
/// thrown away and the query runs again on the fresh catalog.
#[test]
fn a_quick_read_checks_the_catalog_by_the_snapshot_it_read() {
    let mut f = Fx::new();
    f.create("a");
    f.create("b");
    let quick = Engine::new()
        .with_clock(Clock::Fixed(T0))
        .with_quick_reads(std::time::Duration::MAX);
    let q = "(-> (query \"pick\") (:ids))";
    assert_eq!(
        run_with(
            &quick,
            &f.store,
            "(define! \"pick\" (node \"01-a\"))",
            Surface::Write
        ),
        format!("1 task:\n- {} (active)", s("a"))
    );
    let one_a = format!("1 task:\n- {}", s("a"));
    assert_eq!(run_with(&quick, &f.store, q, Surface::Read), one_a);
    let (c0, h0) = (checks(&f.store), hits(&f.store));
    for _ in 0..3 {
        assert_eq!(run_with(&quick, &f.store, q, Surface::Read), one_a);
    }
    assert_eq!(checks(&f.store), c0, "quick reads check no catalog");
    assert_eq!(hits(&f.store), h0 + 3);
    // Another connection to the same file (another process) redefines it.
    let other = Store::open(f.store.path()).unwrap();
    assert_eq!(
        run_with(
            &quick,
            &other,
            "(define! \"pick\" (node \"01-b\"))",
            Surface::Write
        ),
        format!("1 task:\n- {} (active)", s("b"))
    );
    assert_eq!(
        run_with(&quick, &f.store, q, Surface::Read),
        format!("1 task:\n- {}", s("b")),
        "the new body, not the cached statement"
    );
    assert_eq!(checks(&f.store), c0 + 1, "one check after the commit");
    assert_eq!(hits(&f.store), h0 + 3, "the catalog changed: a miss");
    // A row changes, the catalog does not: the quick answer read a newer
    // snapshot than its catalog, so it is checked and the statement runs
    // again (a hit) on the rows of the moment.
    let all = "(-> (all) (:count))";
    assert_eq!(run_with(&quick, &f.store, all, Surface::Read), "2");
    assert_eq!(run_with(&quick, &f.store, all, Surface::Read), "2");
    let (c1, h1) = (checks(&f.store), hits(&f.store));
    f.create("c");
    assert_eq!(run_with(&quick, &f.store, all, Surface::Read), "3");
    assert_eq!(checks(&f.store), c1 + 1);
    assert_eq!(hits(&f.store), h1 + 1);
    assert_eq!(run_with(&quick, &f.store, all, Surface::Read), "3");
    assert_eq!(checks(&f.store), c1 + 1, "quick again once nothing moved");
}

/// With quick reads off, every read checks its catalog first.
#[test]
fn without_quick_reads_every_read_checks_the_catalog() {
    let mut f = Fx::new();
    f.create("a");
    let slow = Engine::new()
        .with_clock(Clock::Fixed(T0))
        .with_quick_reads(std::time::Duration::ZERO);
    let q = "(-> (all) (:count))";
    assert_eq!(run_with(&slow, &f.store, q, Surface::Read), "1");
    let c0 = checks(&f.store);
    for _ in 0..3 {
        assert_eq!(run_with(&slow, &f.store, q, Surface::Read), "1");
    }
    assert_eq!(checks(&f.store), c0 + 3);
}
