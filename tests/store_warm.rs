//! The warm read side (docs/store.md "Warm reads"): the engine reads through
//! one long-lived read-only connection per store, runs exactly one statement
//! per query once the catalog is cached, and re-reads the catalog when
//! another connection commits (`PRAGMA data_version`).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use cairn::session::Session;
use cairn::store::{NewEvent, Store};
use cairn::tq::Surface;
use cairn::tq::engine::Engine;
use rusqlite::trace::{TraceEvent, TraceEventCodes};

const S: &str = "sess-1";

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let st = Store::open(&dir.path().join("cairn.db")).unwrap();
    st.write(&[
        NewEvent::task_create(S, 1, "a", None, None),
        NewEvent::task_create(S, 1, "b", None, None),
        NewEvent::set_metadata(S, 1, "a", "priority", "high"),
    ])
    .unwrap();
    (dir, st)
}

#[test]
fn a_key_added_by_another_connection_is_seen_on_the_next_query() {
    let (dir, st) = store();
    let engine = Engine::new();
    let session = Session::new();
    let q = "(-> (all) (:where (= :owner \"kim\")) (:count))";
    let before = engine.run(&st, &session, q, Surface::Read).unwrap_err();
    assert!(before.message.contains("owner"), "{}", before.message);
    // Cached now; a second store (another process) adds the key.
    let other = Store::open(&dir.path().join("cairn.db")).unwrap();
    other
        .write(&[NewEvent::set_metadata(S, 2, "b", "owner", "kim")])
        .unwrap();
    assert_eq!(engine.run(&st, &session, q, Surface::Read).unwrap(), "1");
    assert_eq!(st.warm_reader().unwrap().catalog_loads(), 2);
}

#[test]
fn a_view_defined_through_the_engine_is_seen_by_the_next_read() {
    let (_d, st) = store();
    let engine = Engine::new();
    let session = Session::new();
    engine
        .run(&st, &session, "(query \"recent\")", Surface::Read)
        .unwrap();
    engine
        .run(&st, &session, "(define! \"mine\" (all))", Surface::Write)
        .unwrap();
    assert_eq!(
        engine
            .run(
                &st,
                &session,
                "(-> (query \"mine\") (:count))",
                Surface::Read
            )
            .unwrap(),
        "2"
    );
}

#[test]
fn warm_queries_run_one_statement_each_on_the_kept_connection() {
    let (_d, st) = store();
    let engine = Engine::new();
    let session = Session::new();
    let n = Arc::new(AtomicUsize::new(0));
    let counter = n.clone();
    st.warm_reader()
        .unwrap()
        .conn_mut()
        .trace_v2(
            TraceEventCodes::SQLITE_TRACE_STMT,
            Some(move |e: TraceEvent<'_>| {
                if let TraceEvent::Stmt(_, sql) = e
                    && !sql.starts_with("--")
                    && !sql.starts_with("PRAGMA")
                {
                    counter.fetch_add(1, Ordering::SeqCst);
                }
            }),
        )
        .unwrap();
    let q = "(-> (all) (:where (= :priority \"high\")) (:ids))";
    assert_eq!(
        engine.run(&st, &session, q, Surface::Read).unwrap(),
        "1 task:\n- a"
    );
    // The first query also read the catalog.
    assert_eq!(n.swap(0, Ordering::SeqCst), 2);
    for _ in 0..3 {
        assert_eq!(
            engine.run(&st, &session, q, Surface::Read).unwrap(),
            "1 task:\n- a"
        );
        assert_eq!(n.swap(0, Ordering::SeqCst), 1);
    }
    assert_eq!(st.warm_reader().unwrap().catalog_loads(), 1);
}

#[test]
fn the_warm_connection_cannot_write() {
    let (_d, st) = store();
    let r = st.warm_reader().unwrap();
    assert!(r.conn().execute("DELETE FROM tasks", []).is_err());
    assert!(
        r.conn()
            .execute_batch("PRAGMA query_only = OFF; DELETE FROM tasks")
            .is_err()
    );
    drop(r);
    assert_eq!(
        st.conn()
            .query_row("SELECT count(*) FROM tasks", [], |x| x.get::<_, i64>(0))
            .unwrap(),
        2
    );
}
