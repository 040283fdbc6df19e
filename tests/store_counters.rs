//! The counter columns of `tasks` (schema version 2, docs/store.md "Counter
//! columns"): exact `obs_count`, `child_count`, `lateral_out`, `lateral_in`
//! and `edge_count` after forks, links, severs, re-parenting, observations,
//! handoffs, rebuild and verify, and after migrating a version-1 store.

use cairn::store::schema::{DDL_V2_COUNTERS, SCHEMA_VERSION};
use cairn::store::{EdgeType, NewEvent, Store};
use rusqlite::Connection;

const S: &str = "sess-1";

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join(".cairn").join("cairn.db")).unwrap();
    (dir, store)
}

/// `slug obs child out in edge` for every task, by slug.
fn counters(conn: &Connection) -> Vec<String> {
    let mut stmt = conn
        .prepare(
            "SELECT slug, obs_count, child_count, lateral_out, lateral_in, edge_count
             FROM tasks ORDER BY slug",
        )
        .unwrap();
    stmt.query_map([], |r| {
        Ok(format!(
            "{} {} {} {} {} {}",
            r.get::<_, String>(0)?,
            r.get::<_, i64>(1)?,
            r.get::<_, i64>(2)?,
            r.get::<_, i64>(3)?,
            r.get::<_, i64>(4)?,
            r.get::<_, i64>(5)?
        ))
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

/// The same numbers counted from the projection tables (the definition).
fn recounted(conn: &Connection) -> Vec<String> {
    let mut stmt = conn
        .prepare(
            "SELECT t.slug,
                    (SELECT count(*) FROM observations o WHERE o.task_id = t.id),
                    (SELECT count(*) FROM tasks c WHERE c.parent_task_id = t.id),
                    (SELECT count(*) FROM edges e WHERE e.src_id = t.id),
                    (SELECT count(*) FROM edges e WHERE e.dst_id = t.id)
             FROM tasks t ORDER BY t.slug",
        )
        .unwrap();
    stmt.query_map([], |r| {
        let (o, c, out, inn): (i64, i64, i64, i64) = (r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?);
        Ok((r.get::<_, String>(0)?, o, c, out, inn))
    })
    .unwrap()
    .map(Result::unwrap)
    .map(|(s, o, c, out, inn)| {
        let parent = i64::from(
            conn.query_row(
                "SELECT parent_task_id IS NOT NULL FROM tasks WHERE slug = ?1",
                [&s],
                |r| r.get::<_, bool>(0),
            )
            .unwrap(),
        );
        format!("{s} {o} {c} {out} {inn} {}", out + inn + c + parent)
    })
    .collect()
}

fn create(st: &Store, slugs: &[&str]) {
    let evs: Vec<NewEvent> = slugs
        .iter()
        .map(|s| NewEvent::task_create(S, 1, s, None, None))
        .collect();
    st.write(&evs).unwrap();
}

#[test]
fn new_tasks_start_at_zero() {
    let (_d, st) = store();
    create(&st, &["a", "b"]);
    assert_eq!(counters(st.conn()), ["a 0 0 0 0 0", "b 0 0 0 0 0"]);
}

#[test]
fn observations_and_handoffs_count_and_duplicates_do_not() {
    let (_d, st) = store();
    create(&st, &["a", "b"]);
    st.write(&[
        NewEvent::observation(S, 2, "a", "one"),
        NewEvent::observation(S, 3, "a", "two"),
    ])
    .unwrap();
    // The same logged event imported again folds to nothing.
    let again = st.events().unwrap();
    st.import(&again).unwrap();
    st.write(&[NewEvent::handoff_create(S, 4, "b", "done", "/tmp/h.md")])
        .unwrap();
    assert_eq!(counters(st.conn()), ["a 2 0 0 0 0", "b 1 0 0 0 0"]);
}

#[test]
fn forks_links_and_severs_keep_exact_counts() {
    let (_d, st) = store();
    create(&st, &["p", "c1", "c2", "x", "y"]);
    st.write(&[
        NewEvent::fork(S, 2, "p", "c1", EdgeType::PhaseOf),
        NewEvent::fork(S, 2, "p", "c2", EdgeType::PhaseOf),
        NewEvent::link(S, 3, "c2", "c1", EdgeType::DependsOn),
        NewEvent::link(S, 3, "x", "c1", EdgeType::Related),
        NewEvent::link(S, 3, "x", "c1", EdgeType::DependsOn),
        NewEvent::fork(S, 3, "y", "x", EdgeType::Related),
    ])
    .unwrap();
    assert_eq!(
        counters(st.conn()),
        [
            "c1 0 0 0 3 4",
            "c2 0 0 1 0 2",
            "p 0 2 0 0 2",
            "x 0 0 2 1 3",
            "y 0 0 1 0 1"
        ]
    );
    // A repeated link changes nothing; severs remove exactly one edge each.
    st.write(&[
        NewEvent::link(S, 4, "c2", "c1", EdgeType::DependsOn),
        NewEvent::sever(S, 5, "x", "c1", EdgeType::Related),
        NewEvent::sever(S, 5, "p", "c2", EdgeType::PhaseOf),
    ])
    .unwrap();
    assert_eq!(
        counters(st.conn()),
        [
            "c1 0 0 0 2 3",
            "c2 0 0 1 0 1",
            "p 0 1 0 0 1",
            "x 0 0 1 1 2",
            "y 0 0 1 0 1"
        ]
    );
    // Severing what is not there changes nothing.
    st.write(&[NewEvent::sever(S, 6, "y", "c2", EdgeType::DependsOn)])
        .unwrap();
    assert_eq!(counters(st.conn()), recounted(st.conn()));
}

#[test]
fn re_parenting_moves_the_child_count() {
    let (_d, st) = store();
    create(&st, &["p", "q", "c"]);
    st.write(&[NewEvent::fork(S, 2, "p", "c", EdgeType::PhaseOf)])
        .unwrap();
    assert_eq!(
        counters(st.conn()),
        ["c 0 0 0 0 1", "p 0 1 0 0 1", "q 0 0 0 0 0"]
    );
    // A newer structural link of the child names q: p loses it, q gains it.
    st.write(&[NewEvent::link(S, 3, "c", "q", EdgeType::PhaseOf)])
        .unwrap();
    assert_eq!(
        counters(st.conn()),
        ["c 0 0 0 0 1", "p 0 0 0 0 0", "q 0 1 0 0 1"]
    );
    // An OLDER re-parent loses the LWW race: nothing moves.
    st.write(&[NewEvent::fork(S, 2, "p", "c", EdgeType::ForkedFrom)])
        .unwrap();
    assert_eq!(
        counters(st.conn()),
        ["c 0 0 0 0 1", "p 0 0 0 0 0", "q 0 1 0 0 1"]
    );
}

/// A log touching every counter, written in a few batches.
fn busy_log(st: &Store) {
    let names: Vec<String> = (0..12).map(|i| format!("t{i:02}")).collect();
    let mut evs = Vec::new();
    for (i, n) in names.iter().enumerate() {
        let ts = 10 + i as i64;
        evs.push(NewEvent::task_create(S, ts, n, None, None));
        for k in 0..(i % 4) {
            evs.push(NewEvent::observation(S, ts, n, &format!("note {k} of {n}")));
        }
        if i > 0 {
            evs.push(NewEvent::fork(S, ts, &names[i / 3], n, EdgeType::PhaseOf));
        }
        if i > 1 {
            evs.push(NewEvent::link(S, ts, n, &names[i - 2], EdgeType::DependsOn));
            evs.push(NewEvent::link(
                S,
                ts,
                n,
                &names[(i * 5) % 12],
                EdgeType::Related,
            ));
        }
    }
    st.write(&evs).unwrap();
    st.write(&[
        NewEvent::sever(S, 40, "t05", "t03", EdgeType::DependsOn),
        NewEvent::sever(S, 40, "t01", "t04", EdgeType::PhaseOf),
        NewEvent::link(S, 41, "t07", "t11", EdgeType::PhaseOf),
        NewEvent::observation(S, 42, "t00", "late"),
    ])
    .unwrap();
}

#[test]
fn counters_equal_a_recount_and_survive_rebuild_and_verify() {
    let (_d, st) = store();
    busy_log(&st);
    let live = counters(st.conn());
    assert_eq!(live, recounted(st.conn()));
    assert_eq!(
        live,
        [
            "t00 1 2 0 1 3",
            "t01 1 2 0 2 5",
            "t02 2 2 2 2 7",
            "t03 3 3 1 0 5",
            "t04 0 0 2 2 4",
            "t05 1 0 1 1 3",
            "t06 2 0 1 1 3",
            "t07 3 0 2 2 5",
            "t08 0 0 2 2 5",
            "t09 1 0 1 1 3",
            "t10 2 0 2 1 4",
            "t11 3 1 2 1 5"
        ]
    );
    assert!(st.verify().unwrap().ok);
    let digest = st.digest().unwrap();
    st.rebuild().unwrap();
    assert_eq!(counters(st.conn()), live);
    assert_eq!(st.digest().unwrap(), digest);
}

#[test]
fn verify_catches_a_drifted_counter() {
    let (_d, st) = store();
    busy_log(&st);
    st.conn()
        .execute(
            "UPDATE tasks SET obs_count = obs_count + 1 WHERE slug = 't03'",
            [],
        )
        .unwrap();
    let v = st.verify().unwrap();
    assert!(!v.ok);
    st.rebuild().unwrap();
    assert_eq!(counters(st.conn()), recounted(st.conn()));
    assert!(st.verify().unwrap().ok);
}

#[test]
fn the_same_log_in_reverse_order_gives_the_same_counters() {
    let (_d, a) = store();
    busy_log(&a);
    let (_e, b) = store();
    let mut log = a.events().unwrap();
    log.reverse();
    for chunk in log.chunks(3) {
        b.import(chunk).unwrap();
    }
    assert_eq!(counters(b.conn()), counters(a.conn()));
    assert_eq!(b.digest().unwrap(), a.digest().unwrap());
}

/// Turns a current store into a version-1 file: no counter triggers,
/// indexes or columns, stamp 1.
fn downgrade_to_v1(db: &std::path::Path) {
    let conn = Connection::open(db).unwrap();
    conn.execute_batch(
        "DROP INDEX tasks_obs_count;
         DROP INDEX tasks_edge_count;
         DROP TRIGGER counters_obs_ai; DROP TRIGGER counters_obs_ad; DROP TRIGGER counters_obs_au;
         DROP TRIGGER counters_edges_ai; DROP TRIGGER counters_edges_ad; DROP TRIGGER counters_edges_au;
         DROP TRIGGER counters_parent_ai; DROP TRIGGER counters_parent_ad; DROP TRIGGER counters_parent_au;
         ALTER TABLE tasks DROP COLUMN edge_count;
         ALTER TABLE tasks DROP COLUMN obs_count;
         ALTER TABLE tasks DROP COLUMN child_count;
         ALTER TABLE tasks DROP COLUMN lateral_out;
         ALTER TABLE tasks DROP COLUMN lateral_in;
         UPDATE schema_meta SET value = '1' WHERE key = 'version';",
    )
    .unwrap();
}

#[test]
fn a_version_1_store_is_migrated_with_exact_counters() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cairn.db");
    let expected = {
        let st = Store::open(&db).unwrap();
        busy_log(&st);
        (counters(st.conn()), st.digest().unwrap())
    };
    downgrade_to_v1(&db);
    {
        let conn = Connection::open(&db).unwrap();
        let n: i64 = conn
            .query_row(
                "SELECT count(*) FROM pragma_table_xinfo('tasks') WHERE name LIKE '%_count' OR name LIKE 'lateral_%'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(n, 0, "the downgrade left counter columns");
    }
    let st = Store::open(&db).unwrap();
    assert_eq!(st.schema_version().unwrap(), SCHEMA_VERSION);
    assert_eq!(SCHEMA_VERSION, 5);
    assert_eq!(counters(st.conn()), expected.0);
    assert_eq!(st.digest().unwrap(), expected.1);
    assert!(st.verify().unwrap().ok);
    // The triggers are installed: later writes keep counting.
    st.write(&[NewEvent::observation(S, 50, "t08", "after migration")])
        .unwrap();
    assert_eq!(counters(st.conn()), recounted(st.conn()));
    assert!(counters(st.conn()).contains(&"t08 1 0 2 2 5".to_string()));
}

#[test]
fn the_counter_ddl_is_idempotent() {
    let (_d, st) = store();
    busy_log(&st);
    let before = counters(st.conn());
    st.conn().execute_batch(DDL_V2_COUNTERS).unwrap();
    assert_eq!(counters(st.conn()), before);
}

#[test]
fn busy_and_hub_sorts_are_served_by_indexes() {
    let (_d, st) = store();
    busy_log(&st);
    let plan = |sql: &str| -> Vec<String> {
        let mut stmt = st
            .conn()
            .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
            .unwrap();
        stmt.query_map([], |r| r.get::<_, String>(3))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    assert_eq!(
        plan("SELECT slug FROM tasks ORDER BY obs_count DESC, slug LIMIT 20"),
        ["SCAN tasks USING COVERING INDEX tasks_obs_count"]
    );
    assert_eq!(
        plan("SELECT slug FROM tasks ORDER BY edge_count DESC, slug LIMIT 20"),
        ["SCAN tasks USING INDEX tasks_edge_count"]
    );
}
