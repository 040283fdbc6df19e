//! spec/tq.md §10: `(search "text")` returns the same SET of tasks as the
//! `task_search` query for the same text (its sanitiser, its index), for
//! random texts over a generated store; on PostgreSQL too when a cluster
//! can start (the same comparison against `PgStore::search`).

mod common;

use std::collections::BTreeSet;

use cairn::session::Session;
use cairn::store::pg::{PgStore, PgTarget, source_events};
use cairn::store::search::{SearchHit, sanitize, search};
use cairn::store::{NewEvent, Store};
use cairn::tq::{Engine, Surface};
use common::pg;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

const WORDS: [&str; 16] = [
    "ranking",
    "Ranking",
    "rank",
    "file.rs:45-78",
    "file.rs",
    "tokenizer",
    "token_fix",
    "café",
    "CAFÉ",
    "naïve",
    "flaky",
    "test",
    "v1.2.3",
    "depends-on",
    "it's",
    "OR",
];

/// The indexes of `WORDS` that are one plain word (letters only): alone
/// as a query, each finds every text it is in.
const PLAIN: [usize; 9] = [0, 1, 2, 5, 7, 8, 9, 10, 11];

fn text(words: &[usize]) -> String {
    words
        .iter()
        .map(|&i| WORDS[i % WORDS.len()])
        .collect::<Vec<_>>()
        .join(" ")
}

/// One to three words, maybe the last cut to a prefix `abc*`, maybe the
/// whole quoted, maybe with a stray `"` or `\`.
fn query() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(0usize..16, 1..4),
        any::<bool>(),
        any::<bool>(),
        0u8..6,
    )
        .prop_map(|(ws, prefix, quoted, stray)| {
            let mut q: Vec<String> = ws.iter().map(|&i| WORDS[i].to_string()).collect();
            if prefix && let Some(last) = q.last_mut() {
                let cut: String = last.chars().take(3).collect();
                *last = format!("{cut}*");
            }
            let mut q = if quoted && q.len() > 1 {
                format!("\"{}\"", q.join(" "))
            } else {
                q.join(" ")
            };
            match stray {
                0 => q.push_str(" \"x"),
                1 => q.push_str(" a\\b"),
                _ => {}
            }
            q
        })
}

/// `s` as a TQ string literal (`\"` and `\\` escaped).
fn tq_string(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

fn slugs(hits: Vec<SearchHit>) -> BTreeSet<String> {
    hits.into_iter().map(|h| h.slug).collect()
}

/// The slugs of an `(:ids)` answer (`No matching tasks.` is none).
fn ids(out: &str) -> BTreeSet<String> {
    out.lines()
        .filter_map(|l| l.strip_prefix("- "))
        .map(str::to_string)
        .collect()
}

/// Ten tasks `t0`..`t9` whose texts come from the 30 random `notes`:
/// each named `notes[t]`; the even ones described `notes[10 + t]`;
/// `t0`..`t4` described again later as `notes[20 + t]` (the old text no
/// longer searchable); `t5`..`t9` handed off with the summary
/// `notes[20 + t]`; and every third note an observation.
fn store_of(notes: &[Vec<usize>]) -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(&dir.path().join("cairn.db")).unwrap();
    let mut events = Vec::new();
    for t in 0..10 {
        let described = (t % 2 == 0).then(|| text(&notes[10 + t]));
        events.push(
            NewEvent::task_create("s", 100, &format!("t{t}"), described.as_deref(), None)
                .with_name(&text(&notes[t])),
        );
    }
    for t in 0..10 {
        let later = text(&notes[20 + t]);
        events.push(if t < 5 {
            NewEvent::update_description("s", 200 + t as i64, &format!("t{t}"), &later)
        } else {
            NewEvent::handoff_create("s", 200 + t as i64, &format!("t{t}"), &later, "notes/h.md")
        });
    }
    for (i, n) in notes.iter().enumerate().filter(|(i, _)| i % 3 == 0) {
        events.push(NewEvent::observation(
            "s",
            101 + i as i64,
            &format!("t{}", i % 10),
            &text(n),
        ));
    }
    s.write(&events).unwrap();
    (dir, s)
}

/// 30 random texts as the names, descriptions (edited), handoffs and
/// observations of 10 tasks, 30 random queries: `(search t)` equals
/// `task_search(t)`'s set (no limit) on SQLite, and on PostgreSQL when it
/// can start; not vacuous (a plain word of each name finds its task).
#[test]
fn search_source_and_task_search_agree_on_the_set() {
    let mut runner = TestRunner::new(Config {
        cases: 6,
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = (
        prop::collection::vec(prop::collection::vec(0usize..64, 1..8), 30),
        prop::collection::vec(query(), 30),
    );
    let result = runner.run(&strategy, |(notes, queries)| {
        let (_dir, s) = store_of(&notes);
        let engine = Engine::new();
        let session = Session::new();
        // A fresh schema per case.
        let p = pg::url().map(|u| {
            let p = PgStore::open(&PgTarget::parse(&u, None).unwrap()).unwrap();
            p.push(&source_events(&s).unwrap(), |_, _| {}).unwrap();
            p
        });
        for q in &queries {
            let tq = format!("(-> (search {}) (:sort :slug :asc) (:ids))", tq_string(q));
            let got = engine.run(&s, &session, &tq, Surface::Read).unwrap();
            let want = match sanitize(q) {
                Some(expr) => slugs(search(s.conn(), &expr, None, 100_000).unwrap()),
                None => BTreeSet::new(),
            };
            prop_assert_eq!(&ids(&got), &want, "query {:?}: {}", q, got);
            if want.is_empty() {
                prop_assert_eq!(got.as_str(), "No matching tasks.");
            }
            if let Some(p) = &p {
                let got_pg = engine.run_pg(p, &session, &tq, Surface::Read).unwrap();
                let want_pg = match sanitize(q) {
                    Some(expr) => slugs(p.search(&expr, None, 100_000).unwrap()),
                    None => BTreeSet::new(),
                };
                prop_assert_eq!(&ids(&got_pg), &want_pg, "PostgreSQL, query {:?}", q);
                prop_assert_eq!(&want_pg, &want, "engines differ on {:?}", q);
            }
        }
        // Not vacuous, exactly: a plain word of each task's name finds
        // that task, through `(search …)` and on PostgreSQL too.
        for (t, name) in notes.iter().take(10).enumerate() {
            let Some(&w) = name.iter().find(|&&i| PLAIN.contains(&(i % WORDS.len()))) else {
                continue;
            };
            let word = WORDS[w % WORDS.len()];
            let tq = format!(
                "(-> (search {}) (:sort :slug :asc) (:ids))",
                tq_string(word)
            );
            let got = engine.run(&s, &session, &tq, Surface::Read).unwrap();
            prop_assert!(
                ids(&got).contains(&format!("t{t}")),
                "{word:?} misses t{t}: {got}"
            );
            if let Some(p) = &p {
                let got_pg = engine.run_pg(p, &session, &tq, Surface::Read).unwrap();
                prop_assert_eq!(ids(&got_pg), ids(&got), "PostgreSQL, word {:?}", word);
            }
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

/// Issue 26: a part of an identifier finds it (`file.rs` in
/// `file.rs:45-78`), on both engines, through `task_search` and
/// `(search …)` alike, and a whole-identifier match ranks first.
#[test]
fn a_part_of_an_identifier_finds_it_and_ranks_below_the_whole() {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(&dir.path().join("cairn.db")).unwrap();
    let mut events = Vec::new();
    for t in ["a", "b", "c"] {
        events.push(NewEvent::task_create("s", 100, t, Some("n"), None));
    }
    events.push(NewEvent::observation(
        "s",
        101,
        "a",
        "see file.rs:45-78 for the walk",
    ));
    events.push(NewEvent::observation(
        "s",
        102,
        "b",
        "file.rs is the entry point",
    ));
    events.push(NewEvent::observation(
        "s",
        103,
        "c",
        "profile.rsx and token_fix",
    ));
    s.write(&events).unwrap();
    let engine = Engine::new();
    let session = Session::new();
    let cases: [(&str, &[&str]); 8] = [
        ("file.rs", &["b", "a"]),
        ("file.rs:45-78", &["a"]),
        ("rs:45", &["a"]),
        ("45-78", &["a"]),
        ("78", &["a"]),
        ("entry", &["b"]),
        ("token", &["c"]),
        ("rsx", &["c"]),
    ];
    let pg = pg::url().map(|u| {
        let p = PgStore::open(&PgTarget::parse(&u, None).unwrap()).unwrap();
        p.push(&source_events(&s).unwrap(), |_, _| {}).unwrap();
        p
    });
    for (q, want) in cases {
        let expr = sanitize(q).unwrap();
        let hits: Vec<String> = search(s.conn(), &expr, None, 10)
            .unwrap()
            .into_iter()
            .map(|h| h.slug)
            .collect();
        assert_eq!(hits, want, "task_search {q:?}");
        let tq = format!("(-> (search {}) (:ids))", tq_string(q));
        let mut text = format!(
            "{} task{}:",
            want.len(),
            if want.len() == 1 { "" } else { "s" }
        );
        for w in want {
            text.push_str(&format!("\n- {w}"));
        }
        assert_eq!(
            engine.run(&s, &session, &tq, Surface::Read).unwrap(),
            text,
            "{tq}"
        );
        if let Some(p) = &pg {
            let hits: Vec<String> = p
                .search(&expr, None, 10)
                .unwrap()
                .into_iter()
                .map(|h| h.slug)
                .collect();
            assert_eq!(hits, want, "PostgreSQL task_search {q:?}");
            assert_eq!(
                engine.run_pg(p, &session, &tq, Surface::Read).unwrap(),
                text,
                "PostgreSQL {tq}"
            );
        }
    }
}

/// A version-3 store (one-column index, no `parts`) is reindexed on open:
/// schema 4, the parts found, the index consistent (verify).
#[test]
fn a_version_3_store_is_reindexed_on_open() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cairn.db");
    {
        let s = Store::open(&db).unwrap();
        s.write(&[
            NewEvent::task_create("s", 100, "a", Some("n"), None),
            NewEvent::observation("s", 101, "a", "see file.rs:45-78"),
        ])
        .unwrap();
    }
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch(
            "DROP TRIGGER observations_ai; DROP TRIGGER observations_ad; DROP TRIGGER observations_au;
             DROP TABLE obs_fts;
             ALTER TABLE observations DROP COLUMN parts;",
        )
        .unwrap();
        conn.execute_batch(cairn::store::schema::DDL_V1).unwrap();
        conn.execute_batch(
            "INSERT INTO obs_fts(obs_fts) VALUES ('rebuild');
             UPDATE schema_meta SET value = '3' WHERE key = 'version';",
        )
        .unwrap();
        let old = search(&conn, &sanitize("file.rs").unwrap(), None, 10).unwrap();
        assert!(old.is_empty(), "the version-3 index found a part");
    }
    let s = Store::open(&db).unwrap();
    assert_eq!(s.schema_version().unwrap(), 5);
    let hits = slugs(search(s.conn(), &sanitize("file.rs").unwrap(), None, 10).unwrap());
    assert_eq!(hits, BTreeSet::from(["a".to_string()]));
    assert!(s.verify().unwrap().ok);
    // New observations are indexed with their parts by the new triggers.
    s.write(&[NewEvent::observation("s", 102, "a", "then lib.rs:9")])
        .unwrap();
    let hits = slugs(search(s.conn(), &sanitize("lib.rs").unwrap(), None, 10).unwrap());
    assert_eq!(hits, BTreeSet::from(["a".to_string()]));
}
