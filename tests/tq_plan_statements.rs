//! One statement per read query (counted with SQLite's trace hook), and the
//! read surface cannot write (data_version and event count unchanged).

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use cairn::tq::Surface;
use cairn::tq::registry;
use common::queries::READ_QUERIES;
use rusqlite::trace::{TraceEvent, TraceEventCodes};

fn all_read_queries() -> Vec<String> {
    let mut qs: Vec<String> = READ_QUERIES.iter().map(|(_, q)| q.to_string()).collect();
    for v in registry::builtin_views() {
        qs.push(format!("(query \"{}\")", v.name));
    }
    qs
}

/// Runs `q` on a fresh reader and counts the statements SQLite starts:
/// `(while compiling, while executing)`. Compiling reads the catalog
/// (metadata keys and user views) in one statement; the query itself must
/// be exactly one.
fn statements_run(f: &common::Fx, q: &str) -> (usize, usize) {
    let mut conn = f.store.reader().unwrap();
    let n = Arc::new(AtomicUsize::new(0));
    let counter = n.clone();
    conn.trace_v2(
        TraceEventCodes::SQLITE_TRACE_STMT,
        Some(move |e: TraceEvent<'_>| {
            if let TraceEvent::Stmt(_, sql) = e
                && !sql.starts_with("--")
            {
                counter.fetch_add(1, Ordering::SeqCst);
            }
        }),
    )
    .unwrap();
    let prepared = f
        .engine
        .prepare(&conn, &f.session, q, Surface::Read)
        .unwrap();
    let compiling = n.swap(0, Ordering::SeqCst);
    f.engine.execute_read(&mut conn, &prepared).unwrap();
    (compiling, n.load(Ordering::SeqCst))
}

#[test]
fn every_read_query_and_builtin_view_is_one_statement() {
    let f = common::seeded();
    let qs = all_read_queries();
    assert_eq!(qs.len(), READ_QUERIES.len() + 12);
    for q in &qs {
        assert_eq!(statements_run(&f, q), (1, 1), "{q}");
    }
}

#[test]
fn the_read_surface_cannot_write() {
    let f = common::seeded();
    let observer = rusqlite::Connection::open(f.store.path()).unwrap();
    let version = |c: &rusqlite::Connection| -> i64 {
        c.query_row("PRAGMA data_version", [], |r| r.get(0))
            .unwrap()
    };
    let v0 = version(&observer);
    let e0 = f.events();
    for q in all_read_queries() {
        let out = f.r(&q);
        assert!(!out.starts_with("Query error"), "{q}: {out}");
    }
    // Refused writes on the read surface change nothing either.
    assert_eq!(
        f.r(r#"(-> (all) (:set-status! "completed"))"#),
        common::REFUSED
    );
    assert_eq!(f.r(r#"(define! "x" (all))"#), common::REFUSED);
    assert_eq!(version(&observer), v0);
    assert_eq!(f.events(), e0);
}
