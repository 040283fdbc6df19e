//! The PostgreSQL store against a real PostgreSQL (spec/team.md "The same
//! on both engines"): the same events fold to the same `verify` digest on
//! both engines, in both directions; verify and rebuild; push is
//! idempotent; the schema version is checked.

mod common;

use cairn::store::pg::{PgStore, PgTarget, source_events};
use cairn::store::{EdgeType, LoggedEvent, NewEvent, Status, Store};
use common::pg;
use proptest::prelude::*;

const SLUGS: [&str; 4] = ["a", "b", "c", "d"];
const SESSIONS: [&str; 2] = ["s1", "s2"];
const WORDS: [&str; 3] = ["x", "y", "Zé"];

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
        13 => NewEvent::claim(s, ts, subject, "ana", ts + 600),
        14 => NewEvent::release(s, ts, subject, "ana"),
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
    (0u8..16, 0usize..4, 0usize..4, 0i64..6, 0usize..2, 0usize..3)
}

fn sqlite() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("cairn.db")).unwrap();
    (dir, store)
}

fn postgres() -> Option<PgStore> {
    let url = pg::url()?;
    Some(PgStore::open(&PgTarget::parse(&url, None).unwrap()).unwrap())
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
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// SQLite's events pushed to PostgreSQL fold to the same digest; PostgreSQL's
    /// own writes imported into SQLite fold to PostgreSQL's digest; verify is
    /// ok on PostgreSQL and rebuild keeps its digest.
    #[test]
    fn the_same_events_give_the_same_digest_on_both_engines(
        batches in prop::collection::vec(prop::collection::vec(spec(), 1..5), 1..12)
    ) {
        let Some(p) = postgres() else { return Ok(()); };
        let (_d, s) = sqlite();
        for batch in &batches {
            let events: Vec<NewEvent> = batch.iter().map(event).collect();
            write_or_refused(s.write(&events));
        }
        let report = p.push(&source_events(&s).unwrap(), |_, _| {}).unwrap();
        prop_assert_eq!(report.added as i64, s.event_count().unwrap());
        prop_assert_eq!(p.digest().unwrap(), s.digest().unwrap());

        let Some(q) = postgres() else { return Ok(()); };
        for batch in &batches {
            let events: Vec<NewEvent> = batch.iter().map(event).collect();
            write_or_refused(q.write(&events));
        }
        let v = q.verify().unwrap();
        prop_assert!(v.ok, "verify failed on PostgreSQL: {} vs {}", v.before, v.after);
        let logged: Vec<LoggedEvent> = q.events().unwrap();
        let (_d2, s2) = sqlite();
        s2.import(&logged).unwrap();
        let dq = q.digest().unwrap();
        prop_assert_eq!(&dq, &s2.digest().unwrap());
        q.rebuild().unwrap();
        prop_assert_eq!(dq, q.digest().unwrap());
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    /// Into an empty schema `push_store` copies the events and the
    /// projection (`store/pg/copy.rs`): the digest is the source's, and
    /// PostgreSQL's own writes after it fold on top as a refold of every
    /// event would (`verify`), with fresh row ids (no conflict with the
    /// copied ones). Pushing again adds nothing.
    #[test]
    fn a_copied_schema_is_a_fold_and_takes_more_writes(
        before in prop::collection::vec(prop::collection::vec(spec(), 1..5), 1..10),
        after in prop::collection::vec(prop::collection::vec(spec(), 1..5), 1..6),
    ) {
        let Some(p) = postgres() else { return Ok(()); };
        let (_d, s) = sqlite();
        for batch in &before {
            let events: Vec<NewEvent> = batch.iter().map(event).collect();
            write_or_refused(s.write(&events));
        }
        let mut last = (0, 0);
        let report = p.push_store(&s, |done, all| last = (done, all)).unwrap();
        prop_assert_eq!(report.added as i64, s.event_count().unwrap());
        prop_assert_eq!(last.0, last.1);
        prop_assert_eq!(p.digest().unwrap(), s.digest().unwrap());
        prop_assert!(p.verify().unwrap().ok);
        // Pushing again goes event by event and adds nothing.
        let again = p.push_store(&s, |_, _| {}).unwrap();
        prop_assert_eq!(again.added, 0);
        prop_assert_eq!(p.digest().unwrap(), s.digest().unwrap());
        for batch in &after {
            let events: Vec<NewEvent> = batch.iter().map(event).collect();
            write_or_refused(p.write(&events));
        }
        let v = p.verify().unwrap();
        prop_assert!(v.ok, "after the copy: {} vs {}", v.before, v.after);
    }
}

#[test]
fn push_twice_doubles_nothing() {
    let Some(p) = postgres() else { return };
    let (_d, s) = sqlite();
    let mut events = Vec::new();
    for i in 0..300 {
        let slug = format!("2026-01-01-t{i:03}");
        events.push(NewEvent::task_create("s", 100 + i, &slug, Some("n"), None));
        events.push(NewEvent::observation("s", 100 + i, &slug, "note"));
        if i > 0 {
            events.push(NewEvent::link(
                "s",
                100 + i,
                &slug,
                "2026-01-01-t000",
                EdgeType::DependsOn,
            ));
        }
    }
    s.write(&events).unwrap();
    let src = source_events(&s).unwrap();
    assert_eq!(src.len(), 899);
    let mut seen = Vec::new();
    let first = p
        .push(&src, |done, total| seen.push((done, total)))
        .unwrap();
    assert_eq!((first.read, first.added), (899, 899));
    assert_eq!(seen, vec![(899, 899)]);
    let again = p.push(&src, |_, _| {}).unwrap();
    assert_eq!((again.read, again.added), (899, 0));
    assert_eq!(p.event_count().unwrap(), 899);
    assert_eq!(p.digest().unwrap(), s.digest().unwrap());
    assert!(p.verify().unwrap().ok);
}

#[test]
fn a_newer_schema_is_refused_with_a_sentence() {
    let Some(url) = pg::url() else { return };
    let target = PgTarget::parse(&url, None).unwrap();
    let p = PgStore::open(&target).unwrap();
    assert_eq!(p.schema_version().unwrap(), 5);
    p.client()
        .execute(
            "UPDATE schema_meta SET value = '99' WHERE key = 'version'",
            &[],
        )
        .unwrap();
    drop(p);
    let err = PgStore::open(&target).unwrap_err();
    assert_eq!(
        err.to_string(),
        "The store's schema version 99 is newer than this cairn supports (5); upgrade cairn."
    );
}

#[test]
fn servers_starting_at_once_migrate_once() {
    let Some(url) = pg::url() else { return };
    let target = PgTarget::parse(&url, None).unwrap();
    let handles: Vec<_> = (0..6)
        .map(|_| {
            let t = target.clone();
            std::thread::spawn(move || PgStore::open(&t).map(|p| p.schema_version().unwrap()))
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().unwrap().unwrap(), 5);
    }
}

#[test]
fn a_bad_password_never_shows_the_password() {
    let Some(_) = pg::url() else { return };
    let url = "postgres://cairn:hunter2-secret@127.0.0.1:1/postgres?sslmode=disable";
    let err = PgStore::open(&PgTarget::parse(url, None).unwrap()).unwrap_err();
    let text = err.to_string();
    assert!(!text.contains("hunter2"), "{text}");
    assert!(
        text.starts_with("PostgreSQL: cannot connect to postgres://cairn:***@127.0.0.1:1/postgres?sslmode=disable: "),
        "{text}"
    );
}

/// An old SQLite event holding a NUL character (written before cairn
/// refused them; imported from a log) cannot be stored in PostgreSQL: push
/// names it and writes nothing.
#[test]
fn push_names_an_event_postgres_cannot_hold() {
    let Some(p) = postgres() else { return };
    let (_d, s) = sqlite();
    s.write(&[NewEvent::task_create("s", 1, "a", Some("n"), None)])
        .unwrap();
    let mut old = s.events().unwrap()[0].clone();
    old.event_id = "01HZZZZZZZZZZZZZZZZZZZZZZZ".to_string();
    old.event_type = "observation".to_string();
    old.data = serde_json::json!({"text": "nul \u{0} here"});
    s.import(&[old]).unwrap();
    let err = p.push(&source_events(&s).unwrap(), |_, _| {}).unwrap_err();
    let want = "event 01HZZZZZZZZZZZZZZZZZZZZZZZ (observation on a) holds a NUL character (U+0000), which PostgreSQL cannot store; nothing was pushed.";
    assert_eq!(err.to_string(), want);
    assert_eq!(p.event_count().unwrap(), 0);
    // The copy into an empty schema refuses it the same way.
    let err = p.push_store(&s, |_, _| {}).unwrap_err();
    assert_eq!(err.to_string(), want);
    assert_eq!(p.event_count().unwrap(), 0);
}

/// Two unrelated projects that each created the same slug: pushing the
/// second into the first's schema is refused before anything is written
/// (it would fold both histories into one task).
#[test]
fn push_refuses_a_task_from_another_history() {
    let Some(p) = postgres() else { return };
    let (_d1, a) = sqlite();
    a.write(&[NewEvent::task_create(
        "s1",
        1,
        "same-slug",
        Some("one"),
        None,
    )])
    .unwrap();
    let (_d2, b) = sqlite();
    b.write(&[
        NewEvent::task_create("s2", 2, "same-slug", Some("two"), None),
        NewEvent::task_create("s2", 2, "other", Some("x"), None),
    ])
    .unwrap();
    p.push(&source_events(&a).unwrap(), |_, _| {}).unwrap();
    let err = p.push(&source_events(&b).unwrap(), |_, _| {}).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the target already holds a task same-slug created elsewhere (another project or clone); nothing was pushed. Push into a schema of its own (--pg-schema NAME)."
    );
    assert_eq!(p.event_count().unwrap(), 1);
    // The same project pushed again is fine.
    assert_eq!(
        p.push(&source_events(&a).unwrap(), |_, _| {})
            .unwrap()
            .added,
        0
    );
}

/// The change counter on PostgreSQL hears a commit that arrived while its
/// connection sat idle, with no query in between (issue 22: the watcher
/// polls `moved()`; a non-blocking read of the client's queue never let the
/// socket be read, so a subscriber heard writes only at the next forced
/// view refresh, 5 s later — found by `cargo bench --bench notify`).
#[test]
fn the_change_counter_hears_a_commit_on_an_idle_connection() {
    let Some(url) = pg::url() else { return };
    let target = PgTarget::parse(&url, None).unwrap();
    let store = PgStore::open(&target).unwrap();
    let mut counter = cairn::store::changes::ChangeCounter::open_pg(&target).unwrap();
    assert!(!counter.moved().unwrap());
    store
        .write(&[NewEvent::task_create("s", 1, "idle", None, None)])
        .unwrap();
    // Let the notification reach the listener's socket, unread.
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(counter.moved().unwrap());
    assert!(!counter.moved().unwrap());
    assert_eq!(counter.high_water().unwrap(), 1);
}
