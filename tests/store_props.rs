//! Property tests of the fold (spec/store.md "LWW ... folding in any order
//! yields the same result"; "Rebuild and verify").

use cairn::store::{EdgeType, LoggedEvent, NewEvent, Status, Store};
use proptest::prelude::*;

const SLUGS: [&str; 4] = ["a", "b", "c", "d"];
const SESSIONS: [&str; 2] = ["s1", "s2"];
const WORDS: [&str; 3] = ["x", "y", "z"];

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
        1 => NewEvent::update_status(s, ts, subject, Status::ALL[word % 5]),
        2 => NewEvent::update_description(s, ts, subject, w),
        3 => NewEvent::fork(s, ts, subject, other, EdgeType::ALL[(word + subj) % 4]),
        4 => NewEvent::link(s, ts, subject, other, edge),
        5 => NewEvent::sever(s, ts, subject, other, edge),
        6 => NewEvent::link(s, ts, subject, other, EdgeType::PhaseOf),
        7 => NewEvent::sever(s, ts, subject, other, EdgeType::PhaseOf),
        8 => NewEvent::set_metadata(s, ts, subject, w, other),
        9 => NewEvent::observation(s, ts, subject, w),
        10 => NewEvent::handoff_create(s, ts, subject, w, "p.md"),
        11 => NewEvent::view_define(s, ts, w, other),
        12 => NewEvent::view_undefine(s, ts, w),
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
    (0u8..14, 0usize..4, 0usize..4, 0i64..6, 0usize..2, 0usize..3)
}

fn fresh() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("cairn.db")).unwrap();
    (dir, store)
}

/// Writes `events`; a batch refused because it would close a phase-of
/// cycle (docs/store.md "Phase-of cycles") records nothing and is skipped.
fn write_or_refused<E: std::fmt::Debug>(r: Result<cairn::store::WriteReport, E>) {
    if let Err(e) = r {
        let shown = format!("{e:?}");
        assert!(shown.starts_with("PhaseCycle"), "{shown}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Folding the same log in shuffled arrival orders gives equal digests.
    #[test]
    fn fold_is_order_independent(
        specs in prop::collection::vec(spec(), 1..40),
        keys in prop::collection::vec(any::<u32>(), 40),
        keys2 in prop::collection::vec(any::<u32>(), 40),
    ) {
        let (_da, a) = fresh();
        for s in &specs {
            write_or_refused(a.write(&[event(s)]));
        }
        let log: Vec<LoggedEvent> = a.events().unwrap();
        let shuffle = |keys: &[u32]| {
            let mut order: Vec<(u32, usize)> = (0..log.len()).map(|i| (keys[i % keys.len()], i)).collect();
            order.sort();
            order.into_iter().map(|(_, i)| log[i].clone()).collect::<Vec<_>>()
        };
        let (_db, b) = fresh();
        for ev in shuffle(&keys) {
            b.import(&[ev]).unwrap();
        }
        let (_dc, c) = fresh();
        c.import(&shuffle(&keys2)).unwrap();
        let mut reversed = log.clone();
        reversed.reverse();
        let (_dd, d) = fresh();
        d.import(&reversed).unwrap();
        let da = a.digest().unwrap();
        prop_assert_eq!(&da, &b.digest().unwrap());
        prop_assert_eq!(&da, &c.digest().unwrap());
        prop_assert_eq!(&da, &d.digest().unwrap());
        prop_assert_eq!(b.event_count().unwrap(), log.len() as i64);
    }

    /// After any sequence of writes, verify is true and rebuild keeps the digest.
    #[test]
    fn rebuild_equals_live(batches in prop::collection::vec(prop::collection::vec(spec(), 1..5), 1..15)) {
        let (_d, st) = fresh();
        for batch in &batches {
            let events: Vec<NewEvent> = batch.iter().map(event).collect();
            write_or_refused(st.write(&events));
        }
        let v = st.verify().unwrap();
        prop_assert!(v.ok, "verify failed: {} vs {}", v.before, v.after);
        let before = st.digest().unwrap();
        st.rebuild().unwrap();
        prop_assert_eq!(before, st.digest().unwrap());
    }
}
