//! Regressions for a hostile tester's findings against the tools: handoff
//! symlink/directory/file/collision paths, control characters in search
//! queries and metadata keys, the reserved `@cairn` node, and uneven length
//! limits (spec/mcp.md "Decisions beyond the seed").

mod toolfx;

use serde_json::json;
use toolfx::{Fx, PREFIX, TUNE};

/// tune-search with a prefix-query phase (current) and a tokenizer task.
fn story() -> Fx {
    let mut fx = Fx::new();
    fx.ok("task_create", json!({"name": "tune search"}));
    fx.ok("task_fork", json!({"name": "add prefix query support"}));
    fx.ok("task_create", json!({"name": "tokenizer fix"}));
    fx
}

// ---- handoff paths ----

#[cfg(unix)]
#[test]
fn handoff_refuses_a_dangling_symlink_to_outside() {
    let mut fx = story();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("target.md");
    std::os::unix::fs::symlink(&target, fx.root().join("dangling.md")).unwrap();
    let before = fx.events();
    assert_eq!(
        fx.err("handoff", json!({"summary": "s", "path": "dangling.md"})),
        "path must stay inside the project: dangling.md"
    );
    assert!(!target.exists());
    assert_eq!(fx.events(), before);
}

#[cfg(unix)]
#[test]
fn handoff_refuses_any_symlink_as_the_final_component() {
    let mut fx = story();
    std::fs::write(fx.root().join("real.md"), "mine").unwrap();
    std::os::unix::fs::symlink(fx.root().join("real.md"), fx.root().join("link.md")).unwrap();
    std::os::unix::fs::symlink(fx.root().join("nowhere.md"), fx.root().join("dead.md")).unwrap();
    assert_eq!(
        fx.err("handoff", json!({"summary": "s", "path": "link.md"})),
        "path must stay inside the project: link.md"
    );
    assert_eq!(
        fx.err("handoff", json!({"summary": "s", "path": "dead.md"})),
        "path must stay inside the project: dead.md"
    );
    assert!(!fx.root().join("nowhere.md").exists());
    assert_eq!(
        std::fs::read_to_string(fx.root().join("real.md")).unwrap(),
        "mine"
    );
}

#[cfg(unix)]
#[test]
fn handoff_refuses_a_directory_symlink_leading_outside() {
    let mut fx = story();
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), fx.root().join("out")).unwrap();
    let before = fx.events();
    assert_eq!(
        fx.err("handoff", json!({"summary": "s", "path": "out/sub/h.md"})),
        "path must stay inside the project: out/sub/h.md"
    );
    assert!(!outside.path().join("sub").exists());
    assert_eq!(fx.events(), before);
}

#[cfg(unix)]
#[test]
fn handoff_follows_a_directory_symlink_that_stays_inside() {
    let mut fx = story();
    std::fs::create_dir(fx.root().join("real")).unwrap();
    std::os::unix::fs::symlink(fx.root().join("real"), fx.root().join("alias")).unwrap();
    let out = fx.ok("handoff", json!({"summary": "s", "path": "alias/h.md"}));
    assert_eq!(
        out,
        format!(
            "Handoff scaffolded for {PREFIX} at {}",
            fx.root().join("alias/h.md").display()
        )
    );
    assert!(
        std::fs::read_to_string(fx.root().join("real/h.md"))
            .unwrap()
            .starts_with(&format!("---\ntask: {PREFIX}\n"))
    );
}

#[test]
fn handoff_refuses_an_existing_directory() {
    let mut fx = story();
    std::fs::create_dir_all(fx.root().join("notes/d.md")).unwrap();
    let before = fx.events();
    assert_eq!(
        fx.err("handoff", json!({"summary": "s", "path": "notes/d.md"})),
        "path is a directory: notes/d.md"
    );
    assert_eq!(fx.events(), before);
}

#[test]
fn handoff_refuses_a_path_through_a_file() {
    let mut fx = story();
    std::fs::write(fx.root().join("afile"), "x").unwrap();
    let before = fx.events();
    assert_eq!(
        fx.err("handoff", json!({"summary": "s", "path": "afile/sub.md"})),
        "path goes through a file: afile/sub.md"
    );
    assert_eq!(fx.events(), before);
    assert_eq!(
        std::fs::read_to_string(fx.root().join("afile")).unwrap(),
        "x"
    );
}

#[test]
fn handoff_default_path_collisions_get_a_suffix() {
    let mut fx = story();
    let dir = fx
        .root()
        .join(".cairn/tasks/2026-06-22-add-prefix-query-support");
    let first = fx.ok("handoff", json!({"summary": "same words"}));
    let second = fx.ok("handoff", json!({"summary": "Same, words!"}));
    let third = fx.ok("handoff", json!({"summary": "same words"}));
    let at = |name: &str| {
        format!(
            "Handoff scaffolded for {PREFIX} at {}",
            dir.join(name).display()
        )
    };
    assert_eq!(first, at("2026-06-22_14-30-05_same-words.md"));
    assert_eq!(second, at("2026-06-22_14-30-05_same-words-2.md"));
    assert_eq!(third, at("2026-06-22_14-30-05_same-words-3.md"));
    assert!(
        std::fs::read_to_string(dir.join("2026-06-22_14-30-05_same-words-2.md"))
            .unwrap()
            .contains("summary: \"Same, words!\"\n")
    );
}

// ---- control characters ----

#[test]
fn search_treats_control_characters_as_whitespace() {
    let mut fx = story();
    fx.ok(
        "observe",
        json!({"text": "bm25 ranking favours short observations"}),
    );
    for q in ["bm25\u{0}", "ranking x\u{0}y", "ranking\u{7f}bm25\u{85}"] {
        let out = fx.call("task_search", json!({"query": q}));
        assert!(!out.is_error, "{q:?}: {}", out.text);
        assert!(!out.text.contains("Could not parse"), "{q:?}: {}", out.text);
    }
    assert_eq!(
        fx.ok("task_search", json!({"query": "bm25\u{0}"})),
        format!("1. [{PREFIX}]  (2026-06-22)\n    [bm25] ranking favours short observations")
    );
    assert_eq!(
        fx.ok("task_search", json!({"query": "ranking x\u{0}y"})),
        "No matching observations for \"ranking x\u{0}y\"."
    );
}

#[test]
fn metadata_key_with_control_characters_is_a_tool_sentence() {
    let mut fx = story();
    let before = fx.events();
    assert_eq!(
        fx.err("task_set_metadata", json!({"key": "k\nnew", "value": "v"})),
        "key must not contain control characters."
    );
    assert_eq!(
        fx.err("task_set_metadata", json!({"key": "a\u{0}b", "value": "v"})),
        "key must not contain control characters."
    );
    assert_eq!(fx.events(), before);
}

// ---- the reserved @cairn node ----

#[test]
fn write_tools_refuse_the_reserved_node() {
    let mut fx = story();
    fx.ok(
        "task_query_write",
        json!({"query": "(define! \"hot\" (all))"}),
    );
    let before = fx.events();
    let cases = [
        ("observe", json!({"text": "x", "task_id": "@cairn"})),
        (
            "task_update_status",
            json!({"status": "completed", "task_id": "@cairn"}),
        ),
        (
            "task_set_metadata",
            json!({"key": "k", "value": "v", "task_id": "@cairn"}),
        ),
        ("task_fork", json!({"name": "child", "from": "@cairn"})),
        ("handoff", json!({"summary": "s", "task_id": "@cairn"})),
        (
            "task_link",
            json!({"target_id": "@cairn", "edge_type": "related"}),
        ),
        (
            "task_link",
            json!({"target_id": TUNE, "edge_type": "related", "task_id": "@cairn"}),
        ),
    ];
    for (tool, args) in cases {
        assert_eq!(
            fx.err(tool, args.clone()),
            "@cairn is reserved; it is not a task.",
            "{tool} {args}"
        );
    }
    assert_eq!(
        fx.err("observe", json!({"text": "x", "task_id": "@other"})),
        "@other is reserved; it is not a task."
    );
    assert_eq!(fx.events(), before);
}

// ---- length limits ----

#[test]
fn status_edge_type_and_types_are_length_limited() {
    let mut fx = story();
    let long = "x".repeat(5_000);
    assert_eq!(
        fx.err("task_update_status", json!({"status": long})),
        "status is too long (5,000 characters; at most 200)."
    );
    assert_eq!(
        fx.err("task_fork", json!({"name": "child", "edge_type": long})),
        "edge_type is too long (5,000 characters; at most 200)."
    );
    assert_eq!(
        fx.err("timeline", json!({"types": long})),
        "types is too long (5,000 characters; at most 200)."
    );
}

/// A task name with a control character is refused by the tool with its
/// own sentence (not the store's event-validation wording) and writes
/// nothing (issue 27 hostile pass).
#[test]
fn a_name_with_control_characters_is_refused_plainly() {
    let mut fx = Fx::new();
    for tool in ["task_create", "task_fork"] {
        assert_eq!(
            fx.err(tool, json!({"name": "bad\tname here"})),
            "name must not contain control characters."
        );
    }
    assert_eq!(fx.events(), 0);
}

/// A NUL character (U+0000) in any new text is refused with a sentence on
/// every engine (PostgreSQL's text cannot hold one), and nothing is written.
#[test]
fn a_nul_character_is_refused_and_nothing_is_written() {
    let mut fx = story();
    let before = fx.events();
    assert_eq!(
        fx.err("observe", json!({"text": "a \u{0} b"})),
        "invalid observation event: its text holds a NUL character (U+0000), which cairn does not store"
    );
    assert_eq!(
        fx.err("task_set_metadata", json!({"key": "k", "value": "v\u{0}w"})),
        "invalid task.set-metadata event: its text holds a NUL character (U+0000), which cairn does not store"
    );
    assert_eq!(fx.events(), before);
    // A text that only spells the JSON escape holds no NUL: it is stored.
    let spelled = r"JSON escapes NUL as \u0000 in strings";
    assert!(
        fx.ok("observe", json!({"text": spelled}))
            .starts_with("Observed on ")
    );
    assert_eq!(fx.events(), before + 1);
}
