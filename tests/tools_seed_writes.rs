//! Every return line and every error line seed 000 quotes for `observe` and
//! the write tools (and the decisions of spec/mcp.md), one assertion each,
//! through the tool functions.

mod toolfx;

use serde_json::json;
use toolfx::{Fx, PREFIX, TOKEN, TUNE, story};

// ---- observe ----

#[test]
fn observe_returns_observed_on() {
    let mut fx = Fx::new();
    fx.ok("task_create", json!({"name": "tune search"}));
    assert_eq!(
        fx.ok(
            "observe",
            json!({"text": "bm25 ranking confirmed against t/cairn-search.lisp"})
        ),
        "Observed on 2026-06-22-tune-search."
    );
}

#[test]
fn observe_blank_text_is_required() {
    let mut fx = Fx::new();
    fx.ok("task_create", json!({"name": "tune search"}));
    assert_eq!(
        fx.err("observe", json!({"text": "   "})),
        "text is required."
    );
}

#[test]
fn observe_without_current_task() {
    let mut fx = Fx::new();
    assert_eq!(
        fx.err("observe", json!({"text": "hello"})),
        "No current task; create or select one first."
    );
    assert_eq!(fx.events(), 0);
}

#[test]
fn observe_on_unknown_task() {
    let mut fx = Fx::new();
    assert_eq!(
        fx.err(
            "observe",
            json!({"text": "hello", "task_id": "2026-01-01-nothing-here"})
        ),
        "No task 2026-01-01-nothing-here."
    );
}

#[test]
fn observe_never_moves_the_pointer_and_strips_depot() {
    let mut fx = story();
    assert_eq!(
        fx.ok(
            "observe",
            json!({"text": "x", "task_id": format!("work:{TUNE}")})
        ),
        format!("Observed on {TUNE}.")
    );
    assert_eq!(fx.session.current.as_deref(), Some(PREFIX));
}

#[test]
fn observe_text_too_long() {
    let mut fx = Fx::new();
    fx.ok("task_create", json!({"name": "tune search"}));
    let text = "a".repeat(1_000_001);
    assert_eq!(
        fx.err("observe", json!({"text": text})),
        "text is too long (1,000,001 characters; at most 1,000,000)."
    );
}

// ---- task_create ----

#[test]
fn task_create_returns_created_and_adopts() {
    let mut fx = Fx::new();
    assert_eq!(
        fx.ok("task_create", json!({"name": "tune search ranking"})),
        "Created 2026-06-22-tune-search-ranking."
    );
    assert_eq!(
        fx.session.current.as_deref(),
        Some("2026-06-22-tune-search-ranking")
    );
}

#[test]
fn task_create_keeps_an_existing_pointer() {
    let mut fx = Fx::new();
    fx.ok("task_create", json!({"name": "tune search"}));
    fx.ok("task_create", json!({"name": "tokenizer fix"}));
    assert_eq!(fx.session.current.as_deref(), Some(TUNE));
}

#[test]
fn task_create_blank_name_is_required() {
    let mut fx = Fx::new();
    assert_eq!(
        fx.err("task_create", json!({"name": ""})),
        "name is required."
    );
}

#[test]
fn task_create_strips_a_written_date_prefix_and_suffixes_collisions() {
    let mut fx = Fx::new();
    assert_eq!(
        fx.ok("task_create", json!({"name": "2026-01-01-tune search"})),
        format!("Created {TUNE}.")
    );
    assert_eq!(
        fx.ok("task_create", json!({"name": "tune search"})),
        format!("Created {TUNE}-2.")
    );
}

#[test]
fn task_create_name_too_long() {
    let mut fx = Fx::new();
    assert_eq!(
        fx.err("task_create", json!({"name": "x".repeat(201)})),
        "name is too long (201 characters; at most 200)."
    );
}

// ---- task_fork ----

#[test]
fn task_fork_returns_forked_and_switches() {
    let mut fx = Fx::new();
    fx.ok("task_create", json!({"name": "tune search"}));
    assert_eq!(
        fx.ok("task_fork", json!({"name": "add prefix query support"})),
        "Forked 2026-06-22-add-prefix-query-support from 2026-06-22-tune-search (phase-of)."
    );
    assert_eq!(fx.session.current.as_deref(), Some(PREFIX));
}

#[test]
fn task_fork_blank_name_is_required() {
    let mut fx = Fx::new();
    fx.ok("task_create", json!({"name": "tune search"}));
    assert_eq!(
        fx.err("task_fork", json!({"name": " "})),
        "name is required."
    );
}

#[test]
fn task_fork_without_parent() {
    let mut fx = Fx::new();
    assert_eq!(
        fx.err("task_fork", json!({"name": "add prefix query support"})),
        "No parent task; pass from or select a task first."
    );
}

#[test]
fn task_fork_bad_edge_type() {
    let mut fx = Fx::new();
    fx.ok("task_create", json!({"name": "tune search"}));
    assert_eq!(
        fx.err(
            "task_fork",
            json!({"name": "add prefix query support", "edge_type": "child-of"})
        ),
        "\"child-of\" is not a valid edge type; expected one of phase-of, depends-on, related."
    );
}

#[test]
fn task_fork_from_itself() {
    let mut fx = Fx::new();
    fx.ok("task_create", json!({"name": "tune search"}));
    assert_eq!(
        fx.err("task_fork", json!({"name": "tune search"})),
        "A task cannot fork from itself."
    );
    assert_eq!(fx.events(), 1);
}

#[test]
fn task_fork_unknown_from() {
    let mut fx = Fx::new();
    assert_eq!(
        fx.err(
            "task_fork",
            json!({"name": "add prefix query support", "from": "2026-01-01-gone"})
        ),
        "No task 2026-01-01-gone."
    );
}

#[test]
fn task_fork_related_edge_from_named_parent() {
    let mut fx = story();
    assert_eq!(
        fx.ok(
            "task_fork",
            json!({"name": "ranking notes", "from": TUNE, "edge_type": "related"})
        ),
        format!("Forked 2026-06-22-ranking-notes from {TUNE} (related).")
    );
}

// ---- task_link / task_sever ----

#[test]
fn task_link_returns_linked() {
    let mut fx = story();
    assert_eq!(
        fx.ok(
            "task_link",
            json!({"target_id": TOKEN, "edge_type": "depends-on"})
        ),
        "Linked 2026-06-22-add-prefix-query-support -> 2026-06-22-tokenizer-fix (depends-on)."
    );
}

#[test]
fn task_link_blank_target_is_required() {
    let mut fx = story();
    assert_eq!(
        fx.err(
            "task_link",
            json!({"target_id": "", "edge_type": "depends-on"})
        ),
        "target_id is required."
    );
}

#[test]
fn task_link_bad_edge_type() {
    let mut fx = story();
    assert_eq!(
        fx.err(
            "task_link",
            json!({"target_id": TOKEN, "edge_type": "blocks"})
        ),
        "\"blocks\" is not a valid edge type; expected one of phase-of, depends-on, related."
    );
}

#[test]
fn task_link_to_itself() {
    let mut fx = story();
    assert_eq!(
        fx.err(
            "task_link",
            json!({"target_id": PREFIX, "edge_type": "related"})
        ),
        "A task cannot link to itself."
    );
}

#[test]
fn task_link_unknown_target() {
    let mut fx = story();
    assert_eq!(
        fx.err(
            "task_link",
            json!({"target_id": "2026-01-01-gone", "edge_type": "related"})
        ),
        "No task 2026-01-01-gone."
    );
}

#[test]
fn task_link_without_current() {
    let mut fx = Fx::new();
    assert_eq!(
        fx.err(
            "task_link",
            json!({"target_id": TOKEN, "edge_type": "related"})
        ),
        "No current task; create or select one first."
    );
}

#[test]
fn task_sever_returns_severed() {
    let mut fx = story();
    fx.ok(
        "task_link",
        json!({"target_id": TOKEN, "edge_type": "depends-on"}),
    );
    assert_eq!(
        fx.ok(
            "task_sever",
            json!({"target_id": TOKEN, "edge_type": "depends-on"})
        ),
        "Severed 2026-06-22-add-prefix-query-support -> 2026-06-22-tokenizer-fix (depends-on)."
    );
    assert!(!fx.ok("task_get", json!({})).contains("edges:"));
}

#[test]
fn task_sever_blank_target_is_required() {
    let mut fx = story();
    assert_eq!(
        fx.err(
            "task_sever",
            json!({"target_id": "  ", "edge_type": "depends-on"})
        ),
        "target_id is required."
    );
}

#[test]
fn task_sever_bad_edge_type() {
    let mut fx = story();
    assert_eq!(
        fx.err(
            "task_sever",
            json!({"target_id": TOKEN, "edge_type": "Depends"})
        ),
        "\"Depends\" is not a valid edge type; expected one of phase-of, depends-on, related."
    );
}

// ---- task_set_metadata ----

#[test]
fn task_set_metadata_returns_set() {
    let mut fx = story();
    assert_eq!(
        fx.ok(
            "task_set_metadata",
            json!({"key": "acceptance", "value": "prefix queries return ranked snippets"})
        ),
        "Set acceptance on 2026-06-22-add-prefix-query-support."
    );
}

#[test]
fn task_set_metadata_blank_key_is_required() {
    let mut fx = story();
    assert_eq!(
        fx.err("task_set_metadata", json!({"key": "", "value": "x"})),
        "key is required."
    );
}

#[test]
fn task_set_metadata_null_value_is_empty() {
    let mut fx = story();
    assert_eq!(
        fx.ok("task_set_metadata", json!({"key": "tags", "value": null})),
        format!("Set tags on {PREFIX}.")
    );
    assert!(fx.ok("task_get", json!({})).contains("\n    tags = "));
}

// ---- task_update_status ----

#[test]
fn task_update_status_returns_is_now() {
    let mut fx = story();
    assert_eq!(
        fx.ok(
            "task_update_status",
            json!({"status": "completed", "task_id": TOKEN})
        ),
        "2026-06-22-tokenizer-fix is now completed."
    );
}

#[test]
fn task_update_status_missing_is_required() {
    let mut fx = story();
    assert_eq!(
        fx.err("task_update_status", json!({})),
        "status is required."
    );
}

#[test]
fn task_update_status_out_of_enum() {
    let mut fx = story();
    assert_eq!(
        fx.err("task_update_status", json!({"status": "done"})),
        "\"done\" is not a valid status; expected one of open, active, completed, abandoned, blocked."
    );
}

#[test]
fn task_update_status_is_lower_cased_and_idempotent() {
    let mut fx = story();
    let before = fx.events();
    assert_eq!(
        fx.ok("task_update_status", json!({"status": "ACTIVE"})),
        format!("{PREFIX} is now active.")
    );
    assert_eq!(fx.events(), before);
    fx.ok("task_update_status", json!({"status": "Completed"}));
    fx.ok("task_update_status", json!({"status": "completed"}));
    assert_eq!(fx.events(), before + 1);
}

#[test]
fn task_update_status_reopen_revives() {
    let mut fx = story();
    fx.ok("task_update_status", json!({"status": "completed"}));
    assert_eq!(
        fx.ok("task_update_status", json!({"reopen": true})),
        format!("{PREFIX} is now active.")
    );
}

// ---- handoff ----

#[test]
fn handoff_scaffolds_at_the_default_path() {
    let mut fx = story();
    let out = fx.ok(
        "handoff",
        json!({"summary": "prefix queries land; tokenizer fix is next"}),
    );
    let path = fx.root().join(
        ".cairn/tasks/2026-06-22-add-prefix-query-support/2026-06-22_14-30-05_prefix-queries-land-tokenizer-fix-is-next.md",
    );
    assert_eq!(
        out,
        format!("Handoff scaffolded for {PREFIX} at {}", path.display())
    );
    let body = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        body,
        format!(
            "---\ntask: {PREFIX}\ncreated: 2026-06-22T14:30:05Z\nsummary: \"prefix queries land; tokenizer fix is next\"\n---\n\n# Handoff — {PREFIX}\n\n## State\n\n```text\n{PREFIX}  [active]\n  add prefix query support\n  parent: {TUNE}\n```\n\n## Recent work\n\n## Next steps\n"
        )
    );
}

#[test]
fn handoff_blank_summary_is_required() {
    let mut fx = story();
    assert_eq!(
        fx.err("handoff", json!({"summary": ""})),
        "summary is required."
    );
}

#[test]
fn handoff_refuses_paths_outside_the_project() {
    let mut fx = story();
    assert_eq!(
        fx.err("handoff", json!({"summary": "s", "path": "../escape.md"})),
        "path must stay inside the project: ../escape.md"
    );
    assert_eq!(
        fx.err("handoff", json!({"summary": "s", "path": "/tmp/abs.md"})),
        "path must stay inside the project: /tmp/abs.md"
    );
    assert_eq!(
        fx.err(
            "handoff",
            json!({"summary": "s", "path": "notes/../../x.md"})
        ),
        "path must stay inside the project: notes/../../x.md"
    );
}

#[test]
fn handoff_leaves_an_existing_file_and_records_the_event() {
    let mut fx = story();
    std::fs::create_dir_all(fx.root().join("notes")).unwrap();
    std::fs::write(fx.root().join("notes/h.md"), "mine").unwrap();
    let out = fx.ok(
        "handoff",
        json!({"summary": "tokenizer next", "path": "./notes/h.md"}),
    );
    assert_eq!(
        out,
        format!(
            "Handoff scaffolded for {PREFIX} at {}",
            fx.root().join("notes/h.md").display()
        )
    );
    assert_eq!(
        std::fs::read_to_string(fx.root().join("notes/h.md")).unwrap(),
        "mine"
    );
    assert!(
        fx.ok("task_bootstrap", json!({}))
            .ends_with("  handoffs:\n    - tokenizer next (notes/h.md)")
    );
}
