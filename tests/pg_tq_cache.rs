//! A read on PostgreSQL compiled once per connection and run in ONE round
//! trip (issue 23; docs/planner.md "The compile cache") with its generic
//! plan: the statement is
//! gated on the catalog it was compiled against, so a view redefined or a
//! metadata key gone through ANOTHER server (another connection) is seen
//! at the next read, never answered from the old compile; a read leaves
//! the connection read-only only for reads; an older schema's SQL
//! functions are replaced when a store opens it.

mod common;

use cairn::session::Session;
use cairn::store::NewEvent;
use cairn::store::pg::{PgStore, PgTarget};
use cairn::tq::Surface;
use cairn::tq::cache::CompileCache;
use cairn::tq::engine::Engine;

const TS: i64 = 1_767_225_600;

fn open(url: &str) -> PgStore {
    PgStore::open(&PgTarget::parse(url, None).unwrap()).unwrap()
}

fn run(store: &PgStore, q: &str, surface: Surface) -> String {
    match Engine::new().run_pg(store, &Session::new(), q, surface) {
        Ok(t) => t,
        Err(d) => d.render_plain(),
    }
}

/// How many lookups of the connection's compile cache found an entry.
fn hits(store: &PgStore) -> u64 {
    store.with_slot(|c: &mut CompileCache| c.hits()).unwrap()
}

/// Two tasks `2026-01-01-a`, `2026-01-01-b` written through `store`.
fn seed(store: &PgStore) {
    store
        .write(&[
            NewEvent::task_create("s", TS, "2026-01-01-a", None, None),
            NewEvent::task_create("s", TS + 1, "2026-01-01-b", None, None),
        ])
        .unwrap();
}

/// Sets `key` to `value` on `slug` through `store`.
/// The session setting `name` (`SHOW name`) on `c`.
fn show(c: &mut postgres::Client, name: &str) -> String {
    c.query_one(&format!("SHOW {name}"), &[]).unwrap().get(0)
}

fn meta(store: &PgStore, ts: i64, slug: &str, key: &str, value: &str) {
    store
        .write(&[NewEvent::set_metadata("s", ts, slug, key, value)])
        .unwrap();
}

#[test]
fn a_view_redefined_through_another_server_is_not_answered_from_the_old_compile() {
    let Some(url) = common::pg::url() else { return };
    let (one, two) = (open(&url), open(&url));
    seed(&one);
    run(&two, "(define! \"pick\" (node \"01-a\"))", Surface::Write);
    let q = "(-> (query \"pick\") (:ids))";
    assert_eq!(run(&one, q, Surface::Read), "1 task:\n- 2026-01-01-a");
    let before = hits(&one);
    assert_eq!(run(&one, q, Surface::Read), "1 task:\n- 2026-01-01-a");
    assert_eq!(hits(&one), before + 1, "the second read is a hit");
    // The other server redefines the view: the first one's gate sees it.
    run(&two, "(define! \"pick\" (node \"01-b\"))", Surface::Write);
    assert_eq!(
        run(&one, q, Surface::Read),
        "1 task:\n- 2026-01-01-b",
        "the new body, not the cached one"
    );
    // A new task (rows, not the catalog) is read by the cached statement.
    two.write(&[NewEvent::task_create(
        "s",
        TS + 2,
        "2026-01-01-bb",
        None,
        None,
    )])
    .unwrap();
    let before = hits(&one);
    assert_eq!(
        run(&one, q, Surface::Read),
        "2 tasks:\n- 2026-01-01-b\n- 2026-01-01-bb"
    );
    assert_eq!(hits(&one), before + 1);
    // The view dropped on the other server: the same sentence as a fresh
    // compile.
    run(&two, "(undefine! \"pick\")", Surface::Write);
    let fresh = run(&open(&url), q, Surface::Read);
    assert!(fresh.contains("pick"), "{fresh}");
    assert_eq!(run(&one, q, Surface::Read), fresh);
}

#[test]
fn a_metadata_key_gone_is_seen_by_the_cached_compile() {
    let Some(url) = common::pg::url() else { return };
    let (one, two) = (open(&url), open(&url));
    seed(&one);
    meta(&one, TS + 5, "2026-01-01-a", "area", "x");
    let q = "(-> (all) (:where (= :area \"x\")) (:ids))";
    assert_eq!(run(&one, q, Surface::Read), "1 task:\n- 2026-01-01-a");
    assert_eq!(run(&one, q, Surface::Read), "1 task:\n- 2026-01-01-a");
    // A key appearing elsewhere does not disturb the compile.
    meta(&two, TS + 6, "2026-01-01-b", "owner", "y");
    let before = hits(&one);
    assert_eq!(run(&one, q, Surface::Read), "1 task:\n- 2026-01-01-a");
    assert_eq!(hits(&one), before + 1, "an added key keeps the entry");
    // The key gone (only a rebuild removes one; here by hand): the field
    // is unknown again, with the sentence a fresh compile gives.
    two.client()
        .batch_execute("DELETE FROM task_metadata WHERE key = 'area'")
        .unwrap();
    let fresh = run(&open(&url), q, Surface::Read);
    assert!(fresh.contains(":area"), "{fresh}");
    assert_eq!(run(&one, q, Surface::Read), fresh);
}

#[test]
fn a_read_leaves_the_connection_writable_for_the_next_write() {
    let Some(url) = common::pg::url() else { return };
    let one = open(&url);
    seed(&one);
    assert_eq!(run(&one, "(-> (all) (:count))", Surface::Read), "2");
    assert_eq!(run(&one, "(-> (all) (:count))", Surface::Read), "2");
    assert_eq!(
        show(&mut one.client(), "default_transaction_read_only"),
        "off"
    );
    assert_eq!(show(&mut one.client(), "plan_cache_mode"), "auto");
    one.write(&[NewEvent::task_create(
        "s",
        TS + 3,
        "2026-01-01-c",
        None,
        None,
    )])
    .unwrap();
    assert_eq!(run(&one, "(-> (all) (:count))", Surface::Read), "3");
    // And the read itself runs read-only: a statement that writes is
    // refused on the read connection.
    let mut c = one.read_client(std::time::Duration::from_secs(5)).unwrap();
    assert_eq!(show(&mut c, "plan_cache_mode"), "force_generic_plan");
    assert_eq!(show(&mut c, "statement_timeout"), "5s");
    let e = c.batch_execute("CREATE TABLE tq_nope(x int)").unwrap_err();
    let e = e.as_db_error().unwrap().message().to_string();
    assert!(e.contains("read-only transaction"), "{e}");
}

#[test]
fn an_older_schemas_functions_are_replaced_on_open() {
    let Some(url) = common::pg::url() else { return };
    let one = open(&url);
    {
        let mut c = one.client();
        c.batch_execute(
            "DELETE FROM schema_meta WHERE key = 'functions';
             DROP FUNCTION tq_stale_catalog();
             CREATE OR REPLACE FUNCTION tq_fold(x text) RETURNS text LANGUAGE sql IMMUTABLE STRICT AS $f$ SELECT lower(x) $f$;",
        )
        .unwrap();
    }
    let two = open(&url);
    let mut c = two.client();
    let def: String = c
        .query_one(
            "SELECT pg_get_functiondef('tq_fold(text)'::regprocedure)",
            &[],
        )
        .unwrap()
        .get(0);
    assert!(def.contains("octet_length(x) = char_length(x)"), "{def}");
    assert!(!def.contains("STRICT"), "{def}");
    let stamp: String = c
        .query_one("SELECT value FROM schema_meta WHERE key = 'functions'", &[])
        .unwrap()
        .get(0);
    assert_eq!(stamp, "2");
    let folded: String = c
        .query_one("SELECT tq_fold('ΟΔΟΣ-ABC')", &[])
        .unwrap()
        .get(0);
    assert_eq!(folded, "οδος-abc");
    let there: bool = c
        .query_one(
            "SELECT to_regprocedure('tq_stale_catalog()') IS NOT NULL",
            &[],
        )
        .unwrap()
        .get(0);
    assert!(there);
}

/// The views' fingerprint PostgreSQL computes in the gate is the one cairn
/// binds (else every read would fail its gate and compile again): no
/// views, then views with non-ASCII names and texts.
#[test]
fn the_gate_fingerprint_is_the_same_on_both_sides() {
    use cairn::tq::exec_pg::{VIEWS_FINGERPRINT_SQL, views_fingerprint};
    let Some(url) = common::pg::url() else { return };
    let one = open(&url);
    let there = |s: &PgStore| -> String {
        s.client()
            .query_one(&format!("SELECT {VIEWS_FINGERPRINT_SQL}"), &[])
            .unwrap()
            .get(0)
    };
    let none = std::collections::BTreeMap::new();
    assert_eq!(there(&one), views_fingerprint(&none));
    seed(&one);
    run(&one, "(define! \"ΟΔΟΣ-ü\" (node \"é\"))", Surface::Write);
    run(&one, "(define! \"b\" (all))", Surface::Write);
    // The views as cairn's catalog read finds them.
    let views = {
        let mut c = one.any_mode_client();
        let (_, views) = cairn::tq::exec_pg::begin_read_with_catalog(
            &mut c,
            &mut one.read_stmts(),
            std::time::Duration::from_secs(5),
        )
        .unwrap();
        cairn::tq::exec_pg::end_read(&mut c, true);
        views
    };
    assert_eq!(
        views.keys().cloned().collect::<Vec<_>>(),
        vec!["b".to_string(), "ΟΔΟΣ-ü".to_string()]
    );
    assert_eq!(there(&one), views_fingerprint(&views));
    assert_eq!(views_fingerprint(&views).len(), 64);
}
