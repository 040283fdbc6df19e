//! The write path runs the statements it prepared (issue 23): with SQLite's
//! query planner stability guarantee on (`store::schema::stable_plans`), a
//! statement whose bound values could change its plan is not parsed and
//! planned again at every run. Without it, three statements of every
//! `task_create` were prepared again each time (`sqlite3Reprepare` in the
//! profile): the newest `seq` of a subject, the subject's last event, and
//! the name index's catch-up read.

use cairn::store::{NewEvent, Store};
use rusqlite::StatementStatus;

const WRITE_PATH: [&str; 3] = [
    "SELECT max(seq) FROM events WHERE task_id = ?1",
    "SELECT session_id, prev_session_id FROM events WHERE task_id = ?1
                 ORDER BY seq DESC LIMIT 1",
    "SELECT seq, task_id, type, json_extract(data, '$.child_id'),
                    json_extract(data, '$.target_id')
             FROM events WHERE seq > ?1 ORDER BY seq LIMIT ?2",
];

#[test]
fn the_write_path_never_prepares_a_statement_again() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join(".cairn/cairn.db")).unwrap();
    let words = std::collections::BTreeSet::from(["cache".to_string()]);
    for i in 0..5 {
        let slug = format!("2026-01-01-task-{i}");
        store
            .write(&[NewEvent::task_create(
                "s",
                1_767_225_600 + i,
                &slug,
                None,
                None,
            )])
            .unwrap();
        store
            .write(&[NewEvent::observation(
                "s",
                1_767_225_700 + i,
                &slug,
                "a note",
            )])
            .unwrap();
        store.open_tasks_like(&words, 0.5).unwrap();
    }
    for sql in WRITE_PATH {
        let st = store.conn().prepare_cached(sql).unwrap();
        let runs = st.get_status(StatementStatus::Run);
        assert!(
            runs >= 4,
            "not the statement the write path ran: {sql} ran {runs} times"
        );
        assert_eq!(st.get_status(StatementStatus::RePrepare), 0, "{sql}");
    }
}
