//! Repeats versus retries at the write boundary, and the events the raw
//! store API refuses (docs/store.md "Events").

use cairn::store::{NewEvent, Status, Store};
use rusqlite::Connection;

const S: &str = "sess-1";

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join(".cairn").join("cairn.db")).unwrap();
    (dir, store)
}

fn rows(conn: &Connection, sql: &str) -> Vec<String> {
    let mut stmt = conn.prepare(sql).unwrap();
    stmt.query_map([], |r| {
        let seq: i64 = r.get(0)?;
        let data: String = r.get(1)?;
        Ok(format!("{seq}|{data}"))
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

fn status(st: &Store, slug: &str) -> String {
    st.conn()
        .query_row("SELECT status FROM tasks WHERE slug = ?1", [slug], |r| {
            r.get(0)
        })
        .unwrap()
}

#[test]
fn a_repeat_within_one_second_is_salted_not_dropped() {
    let (_d, st) = store();
    st.write(&[NewEvent::task_create(S, 100, "a", None, None)])
        .unwrap();
    let done = NewEvent::update_status(S, 100, "a", Status::Completed);
    let open = NewEvent::update_status(S, 100, "a", Status::Open);
    assert_eq!(st.write(std::slice::from_ref(&done)).unwrap().seqs, vec![2]);
    assert_eq!(st.write(std::slice::from_ref(&open)).unwrap().seqs, vec![3]);
    assert_eq!(st.write(std::slice::from_ref(&done)).unwrap().seqs, vec![4]);
    assert_eq!(status(&st, "a"), "completed");
    // A retry of the repeat (its event is the subject's newest) is ignored.
    assert_eq!(
        st.write(std::slice::from_ref(&done)).unwrap().seqs,
        Vec::<i64>::new()
    );
    // Open again, completed again: the second repeat of each.
    assert_eq!(st.write(std::slice::from_ref(&open)).unwrap().seqs, vec![5]);
    assert_eq!(st.write(std::slice::from_ref(&done)).unwrap().seqs, vec![6]);
    assert_eq!(status(&st, "a"), "completed");
    assert_eq!(
        rows(st.conn(), "SELECT seq, data FROM events ORDER BY seq"),
        vec![
            r#"1|{"description":null,"project_id":null}"#,
            r#"2|{"status":"completed"}"#,
            r#"3|{"status":"open"}"#,
            r#"4|{"repeat":1,"status":"completed"}"#,
            r#"5|{"repeat":1,"status":"open"}"#,
            r#"6|{"repeat":2,"status":"completed"}"#,
        ]
    );
    assert!(st.verify().unwrap().ok);
    st.rebuild().unwrap();
    assert_eq!(status(&st, "a"), "completed");
}

#[test]
fn a_repeat_inside_one_batch_is_salted_and_twice_in_a_row_is_one() {
    let (_d, st) = store();
    let done = NewEvent::update_status(S, 100, "a", Status::Completed);
    let open = NewEvent::update_status(S, 100, "a", Status::Open);
    let report = st
        .write(&[
            NewEvent::task_create(S, 100, "a", None, None),
            done.clone(),
            done.clone(),
            open,
            done,
        ])
        .unwrap();
    assert_eq!(report.seqs, vec![1, 2, 3, 4]);
    assert_eq!(status(&st, "a"), "completed");
}

#[test]
fn define_undefine_define_of_a_view_in_one_second_leaves_it_defined() {
    let (_d, st) = store();
    for ev in [
        NewEvent::view_define(S, 100, "mine", "(all)"),
        NewEvent::view_undefine(S, 100, "mine"),
        NewEvent::view_define(S, 100, "mine", "(all)"),
    ] {
        assert_eq!(st.write(&[ev]).unwrap().seqs.len(), 1);
    }
    let views: Vec<String> = rows(
        st.conn(),
        "SELECT count(*), group_concat(name || '=' || query) FROM named_views",
    );
    assert_eq!(views, vec!["1|mine=(all)"]);
    assert!(st.verify().unwrap().ok);
}

#[test]
fn import_keeps_skipping_known_keys() {
    let (_d, src) = store();
    src.write(&[
        NewEvent::task_create(S, 100, "a", None, None),
        NewEvent::update_status(S, 100, "a", Status::Completed),
        NewEvent::update_status(S, 100, "a", Status::Open),
        NewEvent::update_status(S, 100, "a", Status::Completed),
    ])
    .unwrap();
    let log = src.events().unwrap();
    let (_d2, dst) = store();
    assert_eq!(dst.import(&log).unwrap().seqs, vec![1, 2, 3, 4]);
    assert_eq!(dst.import(&log).unwrap().seqs, Vec::<i64>::new());
    assert_eq!(status(&dst, "a"), "completed");
}

fn refusal(ev: NewEvent) -> String {
    let (_d, st) = store();
    let err = st.write(&[ev]).unwrap_err().to_string();
    assert_eq!(st.event_count().unwrap(), 0);
    err
}

#[test]
fn hostile_events_are_refused_at_append() {
    assert_eq!(
        refusal(NewEvent::observation(S, 1, "@evil", "x")),
        r#"invalid observation event: the subject "@evil" is reserved (only @cairn may start with @)"#
    );
    assert_eq!(
        refusal(NewEvent::task_create(S, 1, "a\u{0}b", None, None)),
        r#"invalid task.create event: the subject "a\0b" contains control characters"#
    );
    assert_eq!(
        refusal(NewEvent::set_metadata(S, 1, "a", "k\n", "v")),
        r#"invalid task.set-metadata event: data.key "k\n" contains control characters"#
    );
    assert_eq!(
        refusal(NewEvent::link(
            S,
            1,
            "a",
            "b\u{1b}",
            cairn::store::EdgeType::Related
        )),
        r#"invalid task.link event: data.target_id "b\u{1b}" contains control characters"#
    );
    assert_eq!(
        refusal(NewEvent::link(
            S,
            1,
            "a",
            "@cairn",
            cairn::store::EdgeType::Related
        )),
        r#"invalid task.link event: data.target_id "@cairn" is a reserved subject (tasks cannot start with @)"#
    );
    assert_eq!(
        refusal(NewEvent::observation(S, 253_402_300_800, "a", "x")),
        "invalid observation event: ts 253402300800 is outside 0..=253402300799 (year 9999)"
    );
    assert_eq!(
        refusal(NewEvent::observation(S, -1, "a", "x")),
        "invalid observation event: ts -1 is outside 0..=253402300799 (year 9999)"
    );
}

#[test]
fn old_and_extreme_but_legal_timestamps_are_accepted() {
    let (_d, st) = store();
    let report = st
        .write(&[
            NewEvent::observation(S, 0, "a", "epoch"),
            NewEvent::observation(S, 253_402_300_799, "a", "year 9999"),
            NewEvent::view_define(S, 1, "v", "(all)"),
        ])
        .unwrap();
    assert_eq!(report.seqs, vec![1, 2, 3]);
}
