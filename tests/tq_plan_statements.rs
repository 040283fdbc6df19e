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

/// True for a statement FTS5 runs itself on its shadow tables while it
/// evaluates a MATCH (`SELECT ... FROM 'main'.'obs_fts_data'`, the
/// `obs_fts_config` read; the same for `task_fts`, schema 5): part of the
/// one statement, not a second query.
fn fts5_internal(sql: &str) -> bool {
    sql.contains("'obs_fts_") || sql.contains("'task_fts_")
}

/// Runs `q` on a fresh reader and counts the statements SQLite starts:
/// `(while compiling, while executing)`. Compiling reads the catalog
/// (metadata keys and user views) in one statement; the query itself must
/// be exactly one (FTS5's own reads of its index, [`fts5_internal`], are
/// not counted).
fn statements_run(f: &common::Fx, q: &str) -> (usize, usize) {
    let mut conn = f.store.reader().unwrap();
    let n = Arc::new(AtomicUsize::new(0));
    let counter = n.clone();
    conn.trace_v2(
        TraceEventCodes::SQLITE_TRACE_STMT,
        Some(move |e: TraceEvent<'_>| {
            if let TraceEvent::Stmt(_, sql) = e
                && !sql.starts_with("--")
                && !fts5_internal(sql)
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

/// spec/tq.md §10: a search is a join on the index inside the one
/// statement; the test above would count a second query (the rule that
/// skips FTS5's internal reads must not hide one).
#[test]
fn a_search_is_one_statement_joining_the_index() {
    let f = common::seeded();
    for q in [
        r#"(-> (search "bm25 ranking") (:where (= :status "active")) (:take 10))"#,
        r#"(-> (active) (:minus (search "wontfix")) (:union (search "flaky")) (:sort :relevance) (:count))"#,
    ] {
        assert_eq!(statements_run(&f, q), (1, 1), "{q}");
        let ex = f
            .engine
            .explain(&f.store, &f.session, q, Surface::Read)
            .unwrap();
        assert_eq!(ex.statements.len(), 1, "{q}");
        let sql = ex.statements[0].sql.clone();
        assert!(sql.contains("obs_fts MATCH"), "{sql}");
        assert!(!fts5_internal(&sql), "{sql}");
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
