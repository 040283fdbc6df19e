//! spec/team.md "The same on both engines": observation search finds the
//! same SET of tasks on SQLite (FTS5) and PostgreSQL (a tsvector of cairn's
//! own tokens) for the same text and the same sanitiser rules; the order
//! within a search is engine-defined (docs/team.md "What differs").

mod common;

use std::collections::BTreeSet;

use cairn::store::pg::{PgStore, PgTarget, source_events};
use cairn::store::search::{sanitize, search};
use cairn::store::{NewEvent, Store};
use common::pg;
use proptest::prelude::*;

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
    "Σίσυφος",
];

fn text(words: &[usize]) -> String {
    words
        .iter()
        .map(|&i| WORDS[i % WORDS.len()])
        .collect::<Vec<_>>()
        .join(" ")
}

fn query() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(0usize..16, 1..3),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(ws, prefix, quoted)| {
            let mut q: Vec<String> = ws.iter().map(|&i| WORDS[i].to_string()).collect();
            if prefix && let Some(last) = q.last_mut() {
                let cut: String = last.chars().take(3).collect();
                *last = format!("{cut}*");
            }
            if quoted && q.len() > 1 {
                format!("\"{}\"", q.join(" "))
            } else {
                q.join(" ")
            }
        })
}

fn slugs(hits: Vec<cairn::store::search::SearchHit>) -> BTreeSet<String> {
    hits.into_iter().map(|h| h.slug).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// 30 observations of random words on 10 tasks; 20 random queries:
    /// both engines find the same set of tasks, pushed event by event or
    /// copied.
    #[test]
    fn the_same_set_of_tasks_on_both_engines(
        notes in prop::collection::vec(prop::collection::vec(0usize..64, 1..8), 30),
        queries in prop::collection::vec(query(), 20),
    ) {
        let Some(url) = pg::url() else { return Ok(()); };
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(&dir.path().join("cairn.db")).unwrap();
        let mut events = Vec::new();
        for t in 0..10 {
            events.push(NewEvent::task_create("s", 100, &format!("t{t}"), Some("n"), None));
        }
        for (i, n) in notes.iter().enumerate() {
            events.push(NewEvent::observation("s", 101 + i as i64, &format!("t{}", i % 10), &text(n)));
        }
        s.write(&events).unwrap();
        let p = PgStore::open(&PgTarget::parse(&url, None).unwrap()).unwrap();
        p.push(&source_events(&s).unwrap(), |_, _| {}).unwrap();
        // And copied into an empty schema (`push_store`): the search
        // vectors derived by the copy find the same.
        let Some(url2) = pg::url() else { return Ok(()); };
        let copied = PgStore::open(&PgTarget::parse(&url2, None).unwrap()).unwrap();
        copied.push_store(&s, |_, _| {}).unwrap();
        let mut found = 0;
        for q in &queries {
            let Some(expr) = sanitize(q) else { continue };
            let here = slugs(search(s.conn(), &expr, None, 1000).unwrap());
            let there = slugs(p.search(&expr, None, 1000).unwrap());
            prop_assert_eq!(&here, &there, "query {:?} (expr {:?})", q, expr);
            let copy = slugs(copied.search(&expr, None, 1000).unwrap());
            prop_assert_eq!(&here, &copy, "copied: query {:?} (expr {:?})", q, expr);
            found += usize::from(!here.is_empty());
        }
        // Not vacuous: 30 notes of common words answer most queries.
        prop_assert!(found >= 5, "only {} of 20 queries found anything", found);
    }
}

/// A token longer than PostgreSQL's lexeme limit (2 KiB) is found by an
/// exact search on both engines (indexed by its hash on PostgreSQL).
#[test]
fn a_very_long_token_is_found_on_both_engines() {
    let Some(url) = pg::url() else { return };
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(&dir.path().join("cairn.db")).unwrap();
    let long = "y".repeat(3000);
    s.write(&[
        NewEvent::task_create("s", 1, "t1", Some("n"), None),
        NewEvent::observation("s", 2, "t1", &format!("before {long} after")),
        NewEvent::task_create("s", 1, "t2", Some("n"), None),
        NewEvent::observation("s", 3, "t2", "nothing long"),
    ])
    .unwrap();
    let p = PgStore::open(&PgTarget::parse(&url, None).unwrap()).unwrap();
    p.push(&source_events(&s).unwrap(), |_, _| {}).unwrap();
    for q in [
        long.clone(),
        format!("before {long}"),
        format!("\"{long} after\""),
    ] {
        let expr = sanitize(&q).unwrap();
        let here = slugs(search(s.conn(), &expr, None, 10).unwrap());
        let there = slugs(p.search(&expr, None, 10).unwrap());
        assert_eq!(here, BTreeSet::from(["t1".to_string()]));
        assert_eq!(here, there);
    }
}
