//! spec/tq.md §10, issue 26: `(search …)` and `task_search` find a task by
//! its name, its description (the current one only: an edit re-indexes
//! it), its observations and its handoffs, on SQLite and on PostgreSQL
//! (when a cluster can start), the same set through both; rebuild and
//! verify keep the same digest; a version-4 store gains the index in place.

mod common;

use cairn::session::Session;
use cairn::store::pg::{PgStore, PgTarget, source_events};
use cairn::store::search::{SearchHit, sanitize, search};
use cairn::store::{NewEvent, Store};
use cairn::tq::{Engine, Surface};
use common::pg;

const RANK: &str = "2026-01-01-tune-ranking";
const FLAKY: &str = "2026-01-01-flaky";
const PARSER: &str = "2026-01-01-parser";

fn events() -> Vec<NewEvent> {
    vec![
        NewEvent::task_create("s", 100, RANK, Some("bm25 weights in file.rs:45-78"), None)
            .with_name("tune search ranking"),
        NewEvent::task_create("s", 101, FLAKY, None, None).with_name("fix flaky test"),
        NewEvent::observation("s", 102, FLAKY, "retry loop in ci.yml"),
        NewEvent::task_create("s", 103, PARSER, None, None).with_name("wire parser"),
        NewEvent::handoff_create("s", 104, PARSER, "tokenizer fix is next", "notes/x.md"),
        NewEvent::update_description("s", 105, RANK, "weights settled, see lib.rs"),
        NewEvent::observation("s", 106, FLAKY, "still flaky on arm"),
    ]
}

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(&dir.path().join("cairn.db")).unwrap();
    s.write(&events()).unwrap();
    (dir, s)
}

/// One `task_search` row: slug, time (Unix seconds), snippet.
type Row = (String, i64, String);

fn rows(hits: Vec<SearchHit>) -> Vec<Row> {
    hits.into_iter()
        .map(|h| (h.slug, h.ts, h.snippet))
        .collect()
}

fn row(slug: &str, ts: i64, snippet: &str) -> Row {
    (slug.to_string(), ts, snippet.to_string())
}

/// What each query finds: `task_search`'s rows (slug, time, snippet) and
/// the `(search …)` ids.
fn cases() -> Vec<(&'static str, Vec<Row>)> {
    vec![
        // The name (its time: the creation's).
        ("fix flaky", vec![row(FLAKY, 101, "[fix] [flaky] test")]),
        // The name matches, and so does an observation of the task: the
        // observation's row only (one task either way; the seed's rows).
        ("flaky", vec![row(FLAKY, 106, "still [flaky] on arm")]),
        ("ranking", vec![row(RANK, 100, "tune search [ranking]")]),
        // The current description (its time: the edit's).
        (
            "settled",
            vec![row(RANK, 105, "weights [settled], see lib.rs")],
        ),
        // An identifier in the description, and a part of it (no token
        // of the text is `lib`: nothing bracketed).
        (
            "lib.rs",
            vec![row(RANK, 105, "weights settled, see [lib.rs]")],
        ),
        ("lib", vec![row(RANK, 105, "weights settled, see lib.rs")]),
        // The old description is no longer indexed.
        ("bm25", vec![]),
        ("file.rs", vec![]),
        // Terms from the name and the description together.
        (
            "tune settled",
            vec![row(RANK, 100, "[tune] search ranking")],
        ),
        // An observation and a handoff, as before.
        ("ci.yml", vec![row(FLAKY, 102, "retry loop in [ci.yml]")]),
        (
            "tokenizer",
            vec![row(
                PARSER,
                104,
                "Handoff: [tokenizer] fix is next → notes/x.md",
            )],
        ),
        // Terms from the name and an observation are two texts: no match.
        ("flaky retry", vec![]),
    ]
}

fn ids_text(want: &[Row]) -> String {
    if want.is_empty() {
        return "No matching tasks.".to_string();
    }
    let mut slugs: Vec<&str> = want.iter().map(|r| r.0.as_str()).collect();
    slugs.sort();
    let mut text = format!(
        "{} task{}:",
        slugs.len(),
        if slugs.len() == 1 { "" } else { "s" }
    );
    for s in slugs {
        text.push_str(&format!("\n- {s}"));
    }
    text
}

#[test]
fn names_descriptions_observations_and_handoffs_are_found() {
    let (_d, s) = store();
    let engine = Engine::new();
    let session = Session::new();
    let p = pg::url().map(|u| {
        let p = PgStore::open(&PgTarget::parse(&u, None).unwrap()).unwrap();
        p.push(&source_events(&s).unwrap(), |_, _| {}).unwrap();
        p
    });
    for (q, want) in cases() {
        let expr = sanitize(q).unwrap();
        assert_eq!(
            rows(search(s.conn(), &expr, None, 50).unwrap()),
            want,
            "task_search {q:?}"
        );
        let tq = format!("(-> (search \"{q}\") (:sort :slug :asc) (:ids))");
        assert_eq!(
            engine.run(&s, &session, &tq, Surface::Read).unwrap(),
            ids_text(&want),
            "{tq}"
        );
        if let Some(p) = &p {
            assert_eq!(
                rows(p.search(&expr, None, 50).unwrap()),
                want,
                "PostgreSQL task_search {q:?}"
            );
            assert_eq!(
                engine.run_pg(p, &session, &tq, Surface::Read).unwrap(),
                ids_text(&want),
                "PostgreSQL {tq}"
            );
        }
    }
    // `task_id` restricts to one task.
    let expr = sanitize("fix").unwrap();
    assert_eq!(
        rows(search(s.conn(), &expr, None, 50).unwrap()).len(),
        2,
        "fix: the flaky name and the parser handoff"
    );
    assert_eq!(
        rows(search(s.conn(), &expr, Some(PARSER), 50).unwrap()),
        vec![row(
            PARSER,
            104,
            "Handoff: tokenizer [fix] is next → notes/x.md"
        )]
    );
    // Rebuild and verify keep the digest; both engines hold the same one.
    let before = s.digest().unwrap();
    assert!(s.verify().unwrap().ok);
    s.rebuild().unwrap();
    assert_eq!(s.digest().unwrap(), before);
    assert_eq!(
        rows(search(s.conn(), &sanitize("settled").unwrap(), None, 50).unwrap()),
        vec![row(RANK, 105, "weights [settled], see lib.rs")]
    );
    if let Some(p) = &p {
        assert_eq!(p.digest().unwrap(), before);
        assert!(p.verify().unwrap().ok);
        p.rebuild().unwrap();
        assert_eq!(p.digest().unwrap(), before);
    }
}

/// A version-4 store (no `task_texts`, no `task_fts`) is migrated in
/// place: names and descriptions become searchable, verify holds, and the
/// digest equals a fresh fold's. On PostgreSQL too.
#[test]
fn a_version_4_store_gains_the_task_index_on_open() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cairn.db");
    let fresh = {
        let s = Store::open(&db).unwrap();
        s.write(&events()).unwrap();
        s.digest().unwrap()
    };
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch(
            "DROP TRIGGER task_texts_ai; DROP TRIGGER task_texts_ad; DROP TRIGGER task_texts_au;
             DROP TABLE task_fts; DROP TABLE task_texts;
             UPDATE schema_meta SET value = '4' WHERE key = 'version';",
        )
        .unwrap();
    }
    let s = Store::open(&db).unwrap();
    assert_eq!(s.schema_version().unwrap(), 5);
    assert_eq!(s.digest().unwrap(), fresh);
    assert!(s.verify().unwrap().ok);
    assert_eq!(
        rows(search(s.conn(), &sanitize("fix flaky").unwrap(), None, 50).unwrap()),
        vec![row(FLAKY, 101, "[fix] [flaky] test")]
    );
    let Some(u) = pg::url() else { return };
    let t = PgTarget::parse(&u, None).unwrap();
    {
        let p = PgStore::open(&t).unwrap();
        p.push(&source_events(&s).unwrap(), |_, _| {}).unwrap();
        assert_eq!(p.digest().unwrap(), fresh);
        p.client()
            .batch_execute(
                "DROP TABLE task_texts; UPDATE schema_meta SET value = '4' WHERE key = 'version';",
            )
            .unwrap();
    }
    let p = PgStore::open(&t).unwrap();
    assert_eq!(p.schema_version().unwrap(), 5);
    assert_eq!(p.digest().unwrap(), fresh);
    assert!(p.verify().unwrap().ok);
    assert_eq!(
        rows(p.search(&sanitize("ranking").unwrap(), None, 50).unwrap()),
        vec![row(RANK, 100, "tune search [ranking]")]
    );
}
