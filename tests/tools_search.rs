//! `task_search`'s sanitiser closes the whole class: whatever a person types
//! searches literally and never reaches FTS5 as syntax (spec/mcp.md).

mod toolfx;

use proptest::prelude::*;
use serde_json::json;
use toolfx::Fx;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(100))]
    #[test]
    fn any_text_searches_without_error(q in r#"[a-zA-Z0-9 "'()*:.\-/^+@?,%#&|{}\[\]~!<>=;_é]{1,40}"#) {
        let mut fx = Fx::new();
        fx.ok("task_create", json!({"name": "tune search"}));
        fx.ok("observe", json!({"text": "it's @x why? a,b OR C++ \"q\" 50% #tag NEAR(x) tools.lisp:45-78"}));
        let out = fx.call("task_search", json!({"query": q.clone()}));
        prop_assume!(!q.trim().is_empty());
        prop_assert!(!out.is_error, "{}: {}", q, out.text);
        prop_assert!(!out.text.starts_with("Could not parse"), "{}", q);
    }
}

#[test]
fn identifiers_and_paths_match_as_written() {
    let mut fx = Fx::new();
    fx.ok("task_create", json!({"name": "tune search"}));
    fx.ok(
        "observe",
        json!({"text": "see tools.lisp:45-78 for the depends-on walk"}),
    );
    fx.ok(
        "observe",
        json!({"text": "tools lisp 45 78 are unrelated words"}),
    );
    assert_eq!(
        fx.ok("task_search", json!({"query": "tools.lisp:45-78"})),
        "1. [2026-06-22-tune-search]  (2026-06-22)\n    see [tools.lisp:45-78] for the depends-on walk"
    );
    assert_eq!(
        fx.ok("task_search", json!({"query": "depends-on walk"})),
        "1. [2026-06-22-tune-search]  (2026-06-22)\n    see tools.lisp:45-78 for the [depends-on] [walk]"
    );
}

#[test]
fn ranking_prefers_the_denser_match() {
    let mut fx = Fx::new();
    fx.ok("task_create", json!({"name": "tune search"}));
    fx.ok("task_create", json!({"name": "tokenizer fix"}));
    fx.ok("observe", json!({"text": "ranking appears once among many other words in a long note about the tokenizer", "task_id": "2026-06-22-tokenizer-fix"}));
    fx.ok("observe", json!({"text": "ranking ranking ranking"}));
    let out = fx.ok("task_search", json!({"query": "ranking"}));
    assert!(out.starts_with("1. [2026-06-22-tune-search]"), "{out}");
    assert!(out.contains("\n2. [2026-06-22-tokenizer-fix]"), "{out}");
}
