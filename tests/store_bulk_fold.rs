//! The bulk fold (issue 23; docs/store.md "The bulk fold"): a rebuild
//! writes the projection from registers kept in memory. It must give the
//! projection the live fold gives when it folds the same log in
//! `(ts, event_id)` order into empty tables (what a rebuild did before):
//! every row of every projection table equal, the surrogate ids
//! (`tasks.id`, `observations.obs_id`) equal, the other tables' rows in
//! the same order, the counter columns and both search indexes equal.

use cairn::store::{EdgeType, LoggedEvent, NewEvent, Status, Store};
use proptest::prelude::*;
use rusqlite::types::Value;

const SLUGS: [&str; 5] = ["a", "b", "c", "d", "e"];
const SESSIONS: [&str; 2] = ["s1", "s2"];
const WORDS: [&str; 3] = ["x", "y.rs:4", "z"];

/// One generated event: (kind, subject, other, ts, session, word).
type Spec = (u8, usize, usize, i64, usize, usize);

fn event(spec: &Spec) -> NewEvent {
    let &(kind, subj, other, ts, sess, word) = spec;
    let (s, subject, other, w) = (SESSIONS[sess], SLUGS[subj], SLUGS[other], WORDS[word]);
    let edge = EdgeType::ALL[word % 4];
    match kind {
        0 => NewEvent::task_create(
            s,
            ts,
            subject,
            Some(w),
            if word == 0 { None } else { Some(w) },
        ),
        1 => NewEvent::task_create(s, ts, subject, None, None).with_name(w),
        2 => NewEvent::update_status(s, ts, subject, Status::ALL[word % 5]),
        3 => NewEvent::update_status(s, ts, subject, Status::Completed),
        4 => NewEvent::update_description(s, ts, subject, w),
        5 => NewEvent::fork(s, ts, subject, other, EdgeType::ALL[(word + subj) % 4]),
        6 => NewEvent::link(s, ts, subject, other, edge),
        7 => NewEvent::sever(s, ts, subject, other, edge),
        8 => NewEvent::link(s, ts, subject, other, EdgeType::PhaseOf),
        9 => NewEvent::sever(s, ts, subject, other, EdgeType::PhaseOf),
        10 => NewEvent::set_metadata(s, ts, subject, ["K", "k", "j"][word], other),
        11 => NewEvent::observation(s, ts, subject, w),
        12 => NewEvent::handoff_create(s, ts, subject, w, "p.md"),
        13 => NewEvent::view_define(s, ts, w, other),
        14 => NewEvent::view_undefine(s, ts, w),
        15 => NewEvent::claim(s, ts, subject, ["ann", "bob", "cy"][word], 100 + ts),
        16 => NewEvent::release(s, ts, subject, ["ann", "bob", "cy"][word]),
        17 => NewEvent::link(s, ts, subject, other, EdgeType::DependsOn),
        _ => NewEvent {
            task_id: subject.to_string(),
            event_type: "future.thing".to_string(),
            ts,
            session_id: s.to_string(),
            data: serde_json::json!({"w": w}),
        },
    }
}

fn spec() -> impl Strategy<Value = Spec> {
    (0u8..19, 0usize..5, 0usize..5, 0i64..8, 0usize..2, 0usize..3)
}

fn fresh() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("cairn.db")).unwrap();
    (dir, store)
}

/// Every projection table's rows in rowid order, with the ids that must
/// match (`tasks.id`, `observations.obs_id`), and both indexes' answers.
fn dump(store: &Store) -> Vec<String> {
    let queries = [
        "SELECT * FROM tasks ORDER BY id",
        "SELECT * FROM task_texts ORDER BY task_id",
        "SELECT * FROM task_fold ORDER BY task_id",
        "SELECT * FROM edges ORDER BY rowid",
        "SELECT * FROM edge_state ORDER BY rowid",
        "SELECT * FROM sever_state ORDER BY rowid",
        "SELECT * FROM observations ORDER BY obs_id",
        "SELECT * FROM handoffs ORDER BY rowid",
        "SELECT * FROM task_metadata ORDER BY rowid",
        "SELECT * FROM named_views ORDER BY rowid",
        "SELECT * FROM view_state ORDER BY rowid",
        "SELECT rowid, rank FROM obs_fts WHERE obs_fts MATCH 'x OR y OR z OR rs OR handoff' ORDER BY rowid",
        "SELECT rowid, rank FROM task_fts WHERE task_fts MATCH 'x OR y OR z OR rs' ORDER BY rowid",
    ];
    let mut out = Vec::new();
    for q in queries {
        let mut stmt = store.conn().prepare(q).unwrap();
        let n = stmt.column_count();
        let rows = stmt
            .query_map([], |r| {
                (0..n)
                    .map(|i| r.get::<_, Value>(i))
                    .collect::<Result<Vec<_>, _>>()
            })
            .unwrap();
        for row in rows {
            out.push(format!("{q}: {:?}", row.unwrap()));
        }
    }
    out
}

/// Writes `events`; a batch refused because it would close a phase-of
/// cycle records nothing and is skipped.
fn write_or_refused<E: std::fmt::Debug>(r: Result<cairn::store::WriteReport, E>) {
    if let Err(e) = r {
        let shown = format!("{e:?}");
        assert!(shown.starts_with("PhaseCycle"), "{shown}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// A rebuild (the bulk fold) equals the live fold of the log in
    /// `(ts, event_id)` order, table by table and id by id; verify agrees.
    #[test]
    fn bulk_fold_equals_the_live_fold_in_stamp_order(
        batches in prop::collection::vec(prop::collection::vec(spec(), 1..6), 1..14)
    ) {
        let (_da, a) = fresh();
        for batch in &batches {
            let events: Vec<NewEvent> = batch.iter().map(event).collect();
            write_or_refused(a.write(&events));
        }
        let mut log: Vec<LoggedEvent> = a.events().unwrap();
        log.sort_by(|x, y| (x.ts, &x.event_id).cmp(&(y.ts, &y.event_id)));
        let (_db, b) = fresh();
        for ev in &log {
            b.import(std::slice::from_ref(ev)).unwrap();
        }
        let live = b.digest().unwrap();
        prop_assert_eq!(&a.digest().unwrap(), &live);
        let digest = a.rebuild_digest().unwrap();
        prop_assert_eq!(&digest, &live);
        prop_assert_eq!(dump(&a), dump(&b));
        let v = a.verify().unwrap();
        prop_assert!(v.ok, "verify failed: {} vs {}", v.before, v.after);
    }
}

/// A task's slug, parent's slug, `obs_count`, `child_count`,
/// `lateral_out`, `lateral_in`, `edge_count`, claim owner and status.
type TaskCounts = (
    String,
    Option<String>,
    i64,
    i64,
    i64,
    i64,
    i64,
    Option<String>,
    String,
);

/// The counters, the parent pointer and the claim after severs, re-links
/// and a completion, written once at the end of the bulk fold: exact
/// values, beside the live fold's.
#[test]
fn counters_parent_and_claim_after_a_rebuild() {
    let (_d, st) = fresh();
    st.write(&[
        NewEvent::task_create("s", 10, "p", Some("plan"), None),
        NewEvent::task_create("s", 11, "c", None, None).with_name("child one"),
        NewEvent::task_create("s", 12, "d", None, Some("proj")),
        NewEvent::fork("s", 13, "p", "c", EdgeType::PhaseOf),
        NewEvent::link("s", 14, "d", "p", EdgeType::PhaseOf),
        NewEvent::sever("s", 15, "p", "d", EdgeType::PhaseOf),
        NewEvent::link("s", 16, "c", "d", EdgeType::DependsOn),
        NewEvent::link("s", 17, "d", "c", EdgeType::Related),
        NewEvent::sever("s", 18, "d", "c", EdgeType::Related),
        NewEvent::observation("s", 19, "c", "first"),
        NewEvent::observation("s", 20, "c", "second"),
        NewEvent::handoff_create("s", 21, "p", "done", "h.md"),
        NewEvent::claim("s", 22, "c", "ann", 500),
        NewEvent::claim("s", 23, "d", "bob", 600),
        NewEvent::update_status("s", 24, "d", Status::Completed),
    ])
    .unwrap();
    let rows = |st: &Store| -> Vec<TaskCounts> {
        st.conn()
            .prepare(
                "SELECT t.slug, p.slug, t.obs_count, t.child_count, t.lateral_out, t.lateral_in,
                        t.edge_count, t.claim_owner, t.status
                 FROM tasks t LEFT JOIN tasks p ON p.id = t.parent_task_id ORDER BY t.id",
            )
            .unwrap()
            .query_map([], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    r.get(6)?,
                    r.get(7)?,
                    r.get(8)?,
                ))
            })
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    let before = rows(&st);
    st.rebuild().unwrap();
    let after = rows(&st);
    assert_eq!(after, before);
    let s = |x: &str| x.to_string();
    assert_eq!(
        after,
        vec![
            (s("p"), None, 1, 1, 0, 0, 1, None, s("active")),
            (
                s("c"),
                Some(s("p")),
                2,
                0,
                1,
                0,
                2,
                Some(s("ann")),
                s("active")
            ),
            (s("d"), None, 0, 0, 0, 1, 1, None, s("completed")),
        ]
    );
}
