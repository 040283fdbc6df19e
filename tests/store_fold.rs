//! The reducer, one test per event type (the projection rows each produces,
//! exactly), plus duplicate appends, batches, LWW corner cases, and the
//! store's open/migrate behaviour (spec/store.md).

use cairn::store::{EdgeType, NewEvent, RESERVED_CAIRN, Status, Store, StoreError};
use rusqlite::Connection;
use serde_json::json;

const S: &str = "sess-1";

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join(".cairn").join("cairn.db")).unwrap();
    (dir, store)
}

/// Every column of the task row, `|`-separated, parent as slug, NULL as `-`.
fn task_row(store: &Store, slug: &str) -> String {
    store
        .conn()
        .query_row(
            "SELECT t.slug, coalesce(t.depot,'-'), coalesce(p.slug,'-'), t.status,
                    coalesce(t.description,'-'), t.created_ts, t.updated_ts,
                    coalesce(t.status_ts,'-'), coalesce(t.description_ts,'-'), coalesce(t.project_id,'-')
             FROM tasks t LEFT JOIN tasks p ON p.id = t.parent_task_id WHERE t.slug = ?1",
            [slug],
            |r| {
                let cols: Vec<String> = (0..10)
                    .map(|i| match r.get_ref(i).unwrap() {
                        rusqlite::types::ValueRef::Integer(n) => n.to_string(),
                        rusqlite::types::ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
                        other => format!("{other:?}"),
                    })
                    .collect();
                Ok(cols.join("|"))
            },
        )
        .unwrap()
}

fn rows(conn: &Connection, sql: &str) -> Vec<String> {
    let mut stmt = conn.prepare(sql).unwrap();
    let n = stmt.column_count();
    stmt.query_map([], |r| {
        Ok((0..n)
            .map(|i| match r.get_ref(i).unwrap() {
                rusqlite::types::ValueRef::Integer(v) => v.to_string(),
                rusqlite::types::ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
                rusqlite::types::ValueRef::Null => "-".to_string(),
                other => format!("{other:?}"),
            })
            .collect::<Vec<_>>()
            .join("|"))
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

fn edges(store: &Store) -> Vec<String> {
    rows(
        store.conn(),
        "SELECT s.slug, d.slug, e.type, e.tag, e.created_ts FROM edges e
         JOIN tasks s ON s.id = e.src_id JOIN tasks d ON d.id = e.dst_id ORDER BY 1, 2, 3",
    )
}

fn count(store: &Store, table: &str) -> i64 {
    let sql = match table {
        "tasks" => "SELECT count(*) FROM tasks",
        "events" => "SELECT count(*) FROM events",
        "observations" => "SELECT count(*) FROM observations",
        "edges" => "SELECT count(*) FROM edges",
        _ => panic!("unknown table {table}"),
    };
    store.conn().query_row(sql, [], |r| r.get(0)).unwrap()
}

#[test]
fn task_create_folds_row_status_description_project() {
    let (_d, st) = store();
    st.write(&[NewEvent::task_create(
        S,
        100,
        "2026-01-01-alpha",
        Some("first"),
        Some("proj"),
    )])
    .unwrap();
    assert_eq!(
        task_row(&st, "2026-01-01-alpha"),
        "2026-01-01-alpha|-|-|active|first|100|100|100|100|proj"
    );
    assert_eq!(count(&st, "tasks"), 1);
    assert!(st.verify().unwrap().ok);
}

#[test]
fn task_create_without_description_leaves_it_null() {
    let (_d, st) = store();
    st.write(&[NewEvent::task_create(S, 100, "a", None, None)])
        .unwrap();
    assert_eq!(task_row(&st, "a"), "a|-|-|active|-|100|100|100|-|-");
}

#[test]
fn update_status_folds_status_and_status_ts() {
    let (_d, st) = store();
    st.write(&[
        NewEvent::task_create(S, 100, "a", None, None),
        NewEvent::update_status(S, 150, "a", Status::Completed),
    ])
    .unwrap();
    assert_eq!(task_row(&st, "a"), "a|-|-|completed|-|100|150|150|-|-");
}

#[test]
fn update_description_folds_description() {
    let (_d, st) = store();
    st.write(&[
        NewEvent::task_create(S, 100, "a", Some("old"), None),
        NewEvent::update_description(S, 120, "a", "new"),
    ])
    .unwrap();
    assert_eq!(task_row(&st, "a"), "a|-|-|active|new|100|120|100|120|-");
}

#[test]
fn fork_structural_sets_child_parent_lateral_adds_edge() {
    let (_d, st) = store();
    st.write(&[
        NewEvent::task_create(S, 100, "p", None, None),
        NewEvent::task_create(S, 101, "c", None, None),
        NewEvent::fork(S, 102, "p", "c", EdgeType::PhaseOf),
        NewEvent::task_create(S, 103, "d", None, None),
        NewEvent::fork(S, 104, "p", "d", EdgeType::DependsOn),
    ])
    .unwrap();
    assert_eq!(task_row(&st, "c"), "c|-|p|active|-|101|102|101|-|-");
    assert_eq!(task_row(&st, "p"), "p|-|-|active|-|100|104|100|-|-");
    assert_eq!(edges(&st), vec!["p|d|depends-on||104"]);
}

#[test]
fn link_structural_sets_subject_parent_lateral_adds_edge() {
    let (_d, st) = store();
    st.write(&[
        NewEvent::task_create(S, 100, "a", None, None),
        NewEvent::task_create(S, 100, "b", None, None),
        NewEvent::link(S, 110, "a", "b", EdgeType::ForkedFrom),
        NewEvent::link(S, 111, "a", "b", EdgeType::Related),
        NewEvent::link(S, 112, "b", "depot:a", EdgeType::DependsOn),
    ])
    .unwrap();
    assert_eq!(task_row(&st, "a"), "a|-|b|active|-|100|112|100|-|-");
    assert_eq!(edges(&st), vec!["a|b|related||111", "b|a|depends-on||112"]);
}

#[test]
fn sever_clears_parent_on_either_side_and_deletes_lateral_edge() {
    let (_d, st) = store();
    st.write(&[
        NewEvent::task_create(S, 100, "p", None, None),
        NewEvent::task_create(S, 100, "c", None, None),
        NewEvent::fork(S, 101, "p", "c", EdgeType::PhaseOf),
        NewEvent::link(S, 102, "c", "p", EdgeType::Related),
    ])
    .unwrap();
    assert_eq!(task_row(&st, "c"), "c|-|p|active|-|100|102|100|-|-");
    // Severing from the parent's side clears the child's pointer.
    st.write(&[
        NewEvent::sever(S, 103, "p", "c", EdgeType::PhaseOf),
        NewEvent::sever(S, 104, "c", "p", EdgeType::Related),
    ])
    .unwrap();
    assert_eq!(task_row(&st, "c"), "c|-|-|active|-|100|104|100|-|-");
    assert_eq!(edges(&st), Vec::<String>::new());
    assert!(st.verify().unwrap().ok);
}

#[test]
fn set_metadata_is_lww_per_key() {
    let (_d, st) = store();
    st.write(&[
        NewEvent::task_create(S, 100, "a", None, None),
        NewEvent::set_metadata(S, 105, "a", "priority", "high"),
        NewEvent::set_metadata(S, 103, "a", "priority", "low"),
        NewEvent::set_metadata(S, 104, "a", "objective", "ship it"),
    ])
    .unwrap();
    assert_eq!(
        rows(
            st.conn(),
            "SELECT key, value, ts FROM task_metadata ORDER BY key"
        ),
        vec!["objective|ship it|104", "priority|high|105"]
    );
    assert_eq!(st.metadata_keys().unwrap(), vec!["objective", "priority"]);
}

#[test]
fn observation_adds_nfc_row_indexed_by_fts() {
    let (_d, st) = store();
    st.write(&[
        NewEvent::task_create(S, 100, "a", None, None),
        NewEvent::observation(S, 101, "a", "cafe\u{301} fixed in tools.lisp:45-78"),
    ])
    .unwrap();
    assert_eq!(
        rows(
            st.conn(),
            "SELECT t.slug, o.text, o.ts FROM observations o JOIN tasks t ON t.id = o.task_id"
        ),
        vec!["a|caf\u{e9} fixed in tools.lisp:45-78|101"]
    );
    let hits: i64 = st
        .conn()
        .query_row(
            "SELECT count(*) FROM obs_fts WHERE obs_fts MATCH '\"tools.lisp:45-78\"'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(hits, 1);
    let prefix: i64 = st
        .conn()
        .query_row(
            "SELECT count(*) FROM obs_fts WHERE obs_fts MATCH 'fix*'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(prefix, 1);
}

#[test]
fn handoff_adds_row_and_observation() {
    let (_d, st) = store();
    st.write(&[
        NewEvent::task_create(S, 100, "a", None, None),
        NewEvent::handoff_create(S, 200, "a", "paused mid-refactor", ".cairn/tasks/a/h.md"),
    ])
    .unwrap();
    assert_eq!(
        rows(
            st.conn(),
            "SELECT t.slug, h.summary, h.path, h.ts FROM handoffs h JOIN tasks t ON t.id = h.task_id"
        ),
        vec!["a|paused mid-refactor|.cairn/tasks/a/h.md|200"]
    );
    assert_eq!(
        rows(st.conn(), "SELECT text, ts FROM observations"),
        vec!["Handoff: paused mid-refactor → .cairn/tasks/a/h.md|200"]
    );
}

#[test]
fn view_define_and_undefine_fold_named_views_on_cairn_node() {
    let (_d, st) = store();
    st.write(&[NewEvent::view_define(S, 100, "mine", "(active)")])
        .unwrap();
    assert_eq!(
        rows(st.conn(), "SELECT name, query, ts FROM named_views"),
        vec!["mine|(active)|100"]
    );
    assert!(st.task_exists(RESERVED_CAIRN).unwrap());
    assert_eq!(
        task_row(&st, RESERVED_CAIRN),
        "@cairn|-|-|active|-|100|100|-|-|-"
    );
    // An undefine older than the define does nothing; a newer one removes it.
    st.write(&[NewEvent::view_undefine(S, 99, "mine")]).unwrap();
    assert_eq!(
        rows(st.conn(), "SELECT name FROM named_views"),
        vec!["mine"]
    );
    st.write(&[NewEvent::view_undefine(S, 101, "mine")])
        .unwrap();
    assert_eq!(
        rows(st.conn(), "SELECT name FROM named_views"),
        Vec::<String>::new()
    );
    // A define older than the undefine stays undefined.
    st.write(&[NewEvent::view_define(S, 100, "mine", "(all)")])
        .unwrap();
    assert_eq!(
        rows(st.conn(), "SELECT name FROM named_views"),
        Vec::<String>::new()
    );
    assert!(st.verify().unwrap().ok);
}

#[test]
fn unknown_type_is_logged_and_folds_to_nothing() {
    let (_d, st) = store();
    let ev = NewEvent {
        task_id: "zzz".into(),
        event_type: "task.teleport".into(),
        ts: 5,
        session_id: S.into(),
        data: json!({"to": "mars"}),
    };
    let report = st.write(&[ev]).unwrap();
    assert_eq!(report.seqs, vec![1]);
    assert_eq!(st.event_count().unwrap(), 1);
    assert_eq!(count(&st, "tasks"), 0);
    assert!(st.verify().unwrap().ok);
}

#[test]
fn event_log_row_is_canonical() {
    let (_d, st) = store();
    st.write(&[NewEvent::task_create(S, 100, "a", Some("d"), None)])
        .unwrap();
    st.write(&[NewEvent::observation("sess-2", 101, "a", "x")])
        .unwrap();
    let log = rows(
        st.conn(),
        "SELECT seq, length(event_id), task_id, type, ts, session_id, prev_session_id, data, length(event_key) FROM events",
    );
    assert_eq!(
        log,
        vec![
            "1|26|a|task.create|100|sess-1|-|{\"description\":\"d\",\"project_id\":null}|64",
            "2|26|a|observation|101|sess-2|sess-1|{\"text\":\"x\"}|64",
        ]
    );
}

#[test]
fn duplicate_append_leaves_one_row_and_one_log_line() {
    let (_d, st) = store();
    let ev = NewEvent::observation(S, 100, "a", "same text");
    let first = st.write(std::slice::from_ref(&ev)).unwrap();
    let second = st.write(std::slice::from_ref(&ev)).unwrap();
    assert_eq!(first.seqs, vec![1]);
    assert_eq!(second.seqs, Vec::<i64>::new());
    assert_eq!(st.event_count().unwrap(), 1);
    assert_eq!(count(&st, "observations"), 1);
    // Within one batch too.
    let third = st.write(&[ev.clone(), ev]).unwrap();
    assert_eq!(third.seqs, Vec::<i64>::new());
    assert_eq!(st.event_count().unwrap(), 1);
}

#[test]
fn a_batch_is_all_or_nothing() {
    let (_d, st) = store();
    let bad = NewEvent {
        task_id: "a".into(),
        event_type: "task.update-status".into(),
        ts: 2,
        session_id: S.into(),
        data: json!({"status": "exploded"}),
    };
    let err = st
        .write(&[NewEvent::task_create(S, 1, "a", None, None), bad])
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid task.update-status event: data.status must be one of open, active, completed, abandoned, blocked"
    );
    assert_eq!(st.event_count().unwrap(), 0);
    assert_eq!(count(&st, "tasks"), 0);
}

#[test]
fn write_with_sees_folded_rows_and_rolls_back_on_err() {
    let (_d, st) = store();
    let seen: Result<i64, StoreError> = st.write_with(|tx| {
        tx.append(&[NewEvent::task_create(S, 1, "a", None, None)])?;
        let n: i64 = tx
            .conn()
            .query_row("SELECT count(*) FROM tasks", [], |r| r.get(0))?;
        Ok(n)
    });
    assert_eq!(seen.unwrap(), 1);
    let failed: Result<(), StoreError> = st.write_with(|tx| {
        tx.append(&[NewEvent::task_create(S, 2, "b", None, None)])?;
        Err(StoreError::NoTask("b".into()))
    });
    assert_eq!(failed.unwrap_err().to_string(), "No task b.");
    assert_eq!(st.event_count().unwrap(), 1);
    assert!(!st.task_exists("b").unwrap());
}

#[test]
fn self_edges_are_never_stored() {
    let (_d, st) = store();
    st.write(&[
        NewEvent::task_create(S, 1, "a", None, None),
        NewEvent::link(S, 2, "a", "a", EdgeType::DependsOn),
        NewEvent::link(S, 3, "a", "a", EdgeType::PhaseOf),
        NewEvent::fork(S, 4, "a", "a", EdgeType::ForkedFrom),
    ])
    .unwrap();
    assert_eq!(count(&st, "edges"), 0);
    assert_eq!(task_row(&st, "a"), "a|-|-|active|-|1|4|1|-|-");
}

#[test]
fn status_lww_ties_break_on_event_id_and_old_events_lose() {
    let (_d, st) = store();
    st.write(&[
        NewEvent::task_create(S, 100, "a", None, None),
        NewEvent::update_status(S, 300, "a", Status::Blocked),
        NewEvent::update_status(S, 200, "a", Status::Completed),
        NewEvent::update_status("other", 300, "a", Status::Abandoned),
    ])
    .unwrap();
    // Same ts 300: the later-minted event id (abandoned) wins.
    assert_eq!(task_row(&st, "a"), "a|-|-|abandoned|-|100|300|300|-|-");
    assert!(st.verify().unwrap().ok);
}

#[test]
fn late_arriving_older_link_does_not_resurrect_a_severed_parent() {
    // ts order: set B (1), set C (2), sever{A,B} (3) → parent C.
    // Arrival order: set B, sever{A,B}, set C.
    let (_d, st) = store();
    st.write(&[NewEvent::link(S, 1, "a", "b", EdgeType::PhaseOf)])
        .unwrap();
    st.write(&[NewEvent::sever(S, 3, "a", "b", EdgeType::PhaseOf)])
        .unwrap();
    assert_eq!(task_row(&st, "a"), "a|-|-|active|-|1|3|-|-|-");
    st.write(&[NewEvent::link(S, 2, "a", "c", EdgeType::PhaseOf)])
        .unwrap();
    assert_eq!(task_row(&st, "a"), "a|-|c|active|-|1|3|-|-|-");
    // An old link of the severed pair stays severed.
    st.write(&[NewEvent::link(S, 0, "a", "b", EdgeType::Related)])
        .unwrap();
    st.write(&[NewEvent::sever(S, 5, "a", "b", EdgeType::Related)])
        .unwrap();
    st.write(&[NewEvent::link(S, 4, "a", "b", EdgeType::Related)])
        .unwrap();
    assert_eq!(count(&st, "edges"), 0);
    assert!(st.verify().unwrap().ok);
}

#[test]
fn created_ts_is_min_and_updated_ts_is_max_of_events_naming_the_task() {
    let (_d, st) = store();
    st.write(&[
        NewEvent::task_create(S, 100, "a", None, None),
        NewEvent::task_create(S, 110, "b", None, None),
        NewEvent::link(S, 120, "a", "b", EdgeType::Related),
        NewEvent::observation(S, 90, "a", "backdated"),
    ])
    .unwrap();
    assert_eq!(task_row(&st, "a"), "a|-|-|active|-|90|120|100|-|-");
    assert_eq!(task_row(&st, "b"), "b|-|-|active|-|110|120|110|-|-");
}

#[test]
fn verify_detects_a_tampered_projection_and_rebuild_repairs_it() {
    let (_d, st) = store();
    st.write(&[NewEvent::task_create(S, 100, "a", Some("x"), None)])
        .unwrap();
    let good = st.digest().unwrap();
    st.conn()
        .execute("UPDATE tasks SET description = 'tampered'", [])
        .unwrap();
    let v = st.verify().unwrap();
    assert!(!v.ok);
    assert_ne!(v.before, v.after);
    assert_eq!(v.after, good);
    // verify changed nothing.
    assert_eq!(
        task_row(&st, "a"),
        "a|-|-|active|tampered|100|100|100|100|-"
    );
    st.rebuild().unwrap();
    assert_eq!(st.digest().unwrap(), good);
    assert!(st.verify().unwrap().ok);
}

#[test]
fn require_task_refuses_unknown_slugs() {
    let (_d, st) = store();
    st.write(&[NewEvent::task_create(S, 1, "2026-01-01-real", None, None)])
        .unwrap();
    assert_eq!(
        st.require_task("work:2026-01-01-real").unwrap(),
        "2026-01-01-real"
    );
    assert_eq!(
        st.require_task("2026-01-01-ghost").unwrap_err().to_string(),
        "No task 2026-01-01-ghost."
    );
}

#[test]
fn open_writes_gitignore_wal_and_version() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("proj").join(".cairn").join("cairn.db");
    let st = Store::open(&db).unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("proj/.cairn/.gitignore")).unwrap(),
        "cairn.db*\nepoch\nappend.lock\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("proj/.cairn/.gitattributes")).unwrap(),
        "tasks/**/events.ndjson merge=union\n"
    );
    assert_eq!(st.schema_version().unwrap(), 5);
    let mode: String = st
        .conn()
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    let fk: i64 = st
        .conn()
        .query_row("PRAGMA foreign_keys", [], |r| r.get(0))
        .unwrap();
    assert_eq!(fk, 1);
    let sync: i64 = st
        .conn()
        .query_row("PRAGMA synchronous", [], |r| r.get(0))
        .unwrap();
    assert_eq!(sync, 1);
}

#[test]
fn an_older_stamp_is_migrated_forward_keeping_data() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cairn.db");
    {
        let st = Store::open(&db).unwrap();
        st.write(&[NewEvent::task_create(S, 1, "a", None, None)])
            .unwrap();
        st.conn()
            .execute(
                "UPDATE schema_meta SET value = '0' WHERE key = 'version'",
                [],
            )
            .unwrap();
        assert_eq!(st.schema_version().unwrap(), 0);
    }
    let st = Store::open(&db).unwrap();
    assert_eq!(st.schema_version().unwrap(), 5);
    assert_eq!(st.event_count().unwrap(), 1);
    assert!(st.task_exists("a").unwrap());
}

#[test]
fn a_newer_store_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cairn.db");
    {
        let st = Store::open(&db).unwrap();
        st.conn()
            .execute(
                "UPDATE schema_meta SET value = '99' WHERE key = 'version'",
                [],
            )
            .unwrap();
    }
    assert_eq!(
        Store::open(&db).unwrap_err().to_string(),
        "The store's schema version 99 is newer than this cairn supports (5); upgrade cairn."
    );
}

#[test]
fn opening_a_current_store_takes_no_write_lock() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cairn.db");
    drop(Store::open(&db).unwrap());
    let holder = Connection::open(&db).unwrap();
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    holder
        .execute(
            "INSERT INTO schema_meta(key, value) VALUES ('probe', 'x')",
            [],
        )
        .unwrap();
    // With the write lock held elsewhere, opening must not need it.
    let holder_busy = Connection::open(&db).unwrap();
    holder_busy
        .busy_timeout(std::time::Duration::from_millis(0))
        .unwrap();
    assert!(holder_busy.execute_batch("BEGIN IMMEDIATE").is_err());
    let st = Store::open(&db).unwrap();
    assert_eq!(st.schema_version().unwrap(), 5);
    holder.execute_batch("COMMIT").unwrap();
}

#[test]
fn reader_is_read_only() {
    let (_d, st) = store();
    st.write(&[NewEvent::task_create(S, 1, "a", None, None)])
        .unwrap();
    let r = st.reader().unwrap();
    let n: i64 = r
        .query_row("SELECT count(*) FROM tasks", [], |x| x.get(0))
        .unwrap();
    assert_eq!(n, 1);
    assert!(r.execute("DELETE FROM tasks", []).is_err());
}

#[test]
fn mint_slug_appends_collision_suffixes() {
    let (_d, st) = store();
    let today = time::macros::date!(2026 - 06 - 22);
    let first = st.mint_slug("tune search ranking", today).unwrap();
    assert_eq!(first, "2026-06-22-tune-search-ranking");
    st.write(&[NewEvent::task_create(S, 1, &first, None, None)])
        .unwrap();
    let second = st.mint_slug("tune search ranking", today).unwrap();
    assert_eq!(second, "2026-06-22-tune-search-ranking-2");
    st.write(&[NewEvent::task_create(S, 2, &second, None, None)])
        .unwrap();
    assert_eq!(
        st.mint_slug("2026-01-01-tune search ranking", today)
            .unwrap(),
        "2026-06-22-tune-search-ranking-3"
    );
}

#[test]
fn prev_session_is_the_previous_distinct_writer_of_the_task() {
    let (_d, st) = store();
    st.write(&[
        NewEvent::task_create("s1", 1, "a", None, None),
        NewEvent::observation("s1", 2, "a", "one"),
        NewEvent::observation("s2", 3, "a", "two"),
        NewEvent::observation("s2", 4, "a", "three"),
        NewEvent::observation("s1", 5, "a", "four"),
        NewEvent::observation("s3", 6, "b", "other task"),
    ])
    .unwrap();
    assert_eq!(
        rows(
            st.conn(),
            "SELECT seq, session_id, prev_session_id FROM events ORDER BY seq"
        ),
        vec![
            "1|s1|-", "2|s1|-", "3|s2|s1", "4|s2|s1", "5|s1|s2", "6|s3|-"
        ]
    );
}

#[test]
fn blank_names_in_data_are_refused_and_nothing_is_recorded() {
    let (_d, st) = store();
    let err =
        cairn::store::write(&st, &[NewEvent::link(S, 1, "a", "", EdgeType::Related)]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid task.link event: data.target_id must not be blank"
    );
    let err = cairn::store::write(&st, &[NewEvent::view_define(S, 1, " ", "(all)")]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid view.define event: data.name must not be blank"
    );
    let err = st
        .write(&[NewEvent::observation(S, 1, "", "x")])
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid observation event: the subject task_id is empty"
    );
    assert_eq!(st.event_count().unwrap(), 0);
}
