//! Slug minting and name validation (spec/store.md "Slugs and names").

use cairn::store::slug::{core_of, slug_for, strip_depot};
use cairn::store::{NewEvent, Store};

fn today() -> time::Date {
    time::OffsetDateTime::now_utc().date()
}

fn today_prefix() -> String {
    let d = today();
    format!("{:04}-{:02}-{:02}", d.year(), u8::from(d.month()), d.day())
}

#[test]
fn a_plain_name_gets_todays_date() {
    assert_eq!(
        slug_for("tune search ranking", today()).unwrap(),
        format!("{}-tune-search-ranking", today_prefix())
    );
    assert_eq!(
        slug_for("add prefix query support", today()).unwrap(),
        format!("{}-add-prefix-query-support", today_prefix())
    );
}

#[test]
fn a_written_date_prefix_is_replaced_by_today() {
    assert_eq!(
        slug_for("2026-01-01-tune search ranking", today()).unwrap(),
        format!("{}-tune-search-ranking", today_prefix())
    );
}

#[test]
fn core_drops_punctuation_stopwords_and_keeps_four() {
    assert_eq!(
        core_of("Fix the_tokenizer/for C++ & Rust!").unwrap(),
        "fix-tokenizer-c-rust"
    );
    assert_eq!(
        core_of("one two three four five six seven").unwrap(),
        "one-two-three-four"
    );
    assert_eq!(
        core_of("Tune-Search ranking").unwrap(),
        "tune-search-ranking"
    );
}

/// spec/store.md "Slugs and names" (wave 2): words split on whitespace, `_`
/// and `/` only; short non-stopwords kept; four space-separated words.
#[test]
fn names_table() {
    let cases: [(&str, &str); 24] = [
        // The seed's own examples, unchanged.
        ("tune search ranking", "tune-search-ranking"),
        ("add prefix query support", "add-prefix-query-support"),
        // Kebab words stay whole.
        ("phase-2-wire-up-db", "phase-2-wire-up-db"),
        ("Tune-Search ranking", "tune-search-ranking"),
        ("wire-up the DB--layer-", "wire-up-db-layer"),
        // Acronyms and short words that are not stopwords stay.
        ("fix CI", "fix-ci"),
        ("add UI for DB", "add-ui-db"),
        ("Port the parser to Go", "port-parser-go"),
        ("fix CI: flaky tests (again)", "fix-ci-flaky-tests"),
        // Digits.
        ("upgrade to HTTP/2", "upgrade-http-2"),
        ("v2 API migration", "v2-api-migration"),
        ("OAuth2 login flow for iOS app", "oauth2-login-flow-ios"),
        // `_` and `/` split; whitespace runs collapse.
        ("snake_case_name handling", "snake-case-name-handling"),
        ("  multiple   spaces\tand tabs ", "multiple-spaces-tabs"),
        // Stopwords go; the cap counts space-separated words.
        ("one two three four five six seven", "one-two-three-four"),
        (
            "the plan for a phase-2-wire-up-db of the store",
            "plan-phase-2-wire-up-db-store",
        ),
        // Unicode letters stay (NFC, lower-cased).
        ("café menu redesign", "café-menu-redesign"),
        ("Über-cool Ärger list", "über-cool-ärger-list"),
        ("İstanbul office move", "istanbul-office-move"),
        ("日本語 ドキュメント 翻訳", "日本語-ドキュメント-翻訳"),
        // Date prefixes the caller wrote are stripped.
        ("2026-01-01-tune search ranking", "tune-search-ranking"),
        (
            "2025-12-31-2026-01-01-phase-2-wire-up-db",
            "phase-2-wire-up-db",
        ),
        // A single long specific word is fine.
        ("refactoring", "refactoring"),
        ("Fix the_tokenizer/for C++ & Rust!", "fix-tokenizer-c-rust"),
    ];
    for (name, core) in cases {
        assert_eq!(
            slug_for(name, today()).unwrap(),
            format!("{}-{core}", today_prefix()),
            "{name}"
        );
    }
}

#[test]
fn a_single_long_specific_word_is_accepted() {
    assert_eq!(core_of("refactoring").unwrap(), "refactoring");
    assert_eq!(
        slug_for("refactoring", today()).unwrap(),
        format!("{}-refactoring", today_prefix())
    );
}

#[test]
fn a_second_name_the_same_day_gets_a_suffix() {
    let dir = tempfile::tempdir().unwrap();
    let st = Store::open(&dir.path().join("cairn.db")).unwrap();
    let first = st.mint_slug("tune search ranking", today()).unwrap();
    assert_eq!(first, format!("{}-tune-search-ranking", today_prefix()));
    st.write(&[NewEvent::task_create("s", 1, &first, None, None)])
        .unwrap();
    assert_eq!(
        st.mint_slug("tune search ranking", today()).unwrap(),
        format!("{}-tune-search-ranking-2", today_prefix())
    );
}

#[test]
fn depot_prefixes_are_stripped() {
    assert_eq!(strip_depot("notes:2026-01-01-x"), "2026-01-01-x");
    assert_eq!(strip_depot("2026-01-01-x"), "2026-01-01-x");
}

#[test]
fn decomposed_and_composed_accents_mint_one_slug() {
    assert_eq!(
        core_of("caf\u{e9} menu redesign").unwrap(),
        "café-menu-redesign"
    );
    assert_eq!(
        core_of("cafe\u{301} menu redesign").unwrap(),
        "café-menu-redesign"
    );
}

#[test]
fn lower_casing_adds_no_combining_marks() {
    assert_eq!(
        core_of("İstanbul office move").unwrap(),
        "istanbul-office-move"
    );
    assert_eq!(core_of("İstanbul").unwrap(), "istanbul");
}

#[test]
fn the_core_is_capped_at_sixty_characters() {
    // Four words of 20 letters: two make 41 characters, a third would make
    // 62, so two are kept.
    let w = "abcdefghijklmnopqrst";
    let name = format!("{w} {w} {w} {w}");
    assert_eq!(core_of(&name).unwrap(), format!("{w}-{w}"));
    // Exactly 60 characters is kept whole: 29 + 1 + 30.
    let a = "a".repeat(29);
    let b = "b".repeat(30);
    assert_eq!(core_of(&format!("{a} {b}")).unwrap(), format!("{a}-{b}"));
    // A single long word is cut to 60.
    let long = "x".repeat(100);
    assert_eq!(core_of(&long).unwrap(), "x".repeat(60));
    assert_eq!(core_of(&format!("{long} planner")).unwrap(), "x".repeat(60));
}
