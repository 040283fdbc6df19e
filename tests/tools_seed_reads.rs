//! Every return line and every error line seed 000 quotes for the read and
//! query tools (and the decisions of spec/mcp.md), one assertion each,
//! through the tool functions; grants, the panic guard, protocol faults.

mod toolfx;

use serde_json::json;
use toolfx::{Fx, PREFIX, T0, TOKEN, TUNE, story};

// ---- task_query / task_query_write (argument lines) ----

#[test]
fn task_query_blank_is_required() {
    let mut fx = Fx::new();
    assert_eq!(
        fx.err("task_query", json!({"query": ""})),
        "query is required."
    );
}

#[test]
fn task_query_write_blank_is_required() {
    let mut fx = Fx::new();
    assert_eq!(
        fx.err("task_query_write", json!({"query": " \n"})),
        "query is required."
    );
}

#[test]
fn task_query_too_long() {
    let mut fx = Fx::new();
    assert_eq!(
        fx.err("task_query", json!({"query": "(".repeat(65_537)})),
        "query is too long (65,537 characters; at most 65,536)."
    );
}

// ---- task_search ----

#[test]
fn task_search_blank_is_required() {
    let mut fx = Fx::new();
    assert_eq!(
        fx.err("task_search", json!({"query": ""})),
        "query is required."
    );
}

#[test]
fn task_search_no_match_line() {
    let mut fx = story();
    fx.ok("observe", json!({"text": "bm25 ranking confirmed"}));
    assert_eq!(
        fx.ok("task_search", json!({"query": "zebra"})),
        "No matching observations for \"zebra\"."
    );
    assert_eq!(
        fx.ok("task_search", json!({"query": "\" ? *"})),
        "No matching observations for \"\" ? *\"."
    );
}

#[test]
fn task_search_rows_and_prefix() {
    let mut fx = story();
    fx.ok(
        "observe",
        json!({"text": "prefix queries need a query parser change in src/search.rs:45-78"}),
    );
    fx.ok(
        "observe",
        json!({"text": "tokenizer splits depends-on wrongly", "task_id": TOKEN}),
    );
    // The task's own name matches too (spec/tq.md §10, issue 26), but one
    // of its observations does: the seed's single row stands.
    assert_eq!(
        fx.ok("task_search", json!({"query": "prefix query*"})),
        format!(
            "1. [{PREFIX}]  (2026-06-22)\n    [prefix] queries need a [query] parser change in src/search.rs:45-78"
        )
    );
    assert_eq!(
        fx.ok("task_search", json!({"query": "depends-on"})),
        format!("1. [{TOKEN}]  (2026-06-22)\n    tokenizer splits [depends-on] wrongly")
    );
    assert_eq!(
        fx.ok("task_search", json!({"query": "src/search.rs:45-78"})),
        format!(
            "1. [{PREFIX}]  (2026-06-22)\n    prefix queries need a query parser change in [src/search.rs:45-78]"
        )
    );
}

#[test]
fn task_search_limit_and_task_filter() {
    let mut fx = story();
    for i in 0..3 {
        fx.ok("observe", json!({"text": format!("ranking note {i}")}));
    }
    fx.ok(
        "observe",
        json!({"text": "ranking elsewhere", "task_id": TOKEN}),
    );
    let out = fx.ok("task_search", json!({"query": "ranking", "limit": 0}));
    assert_eq!(out.lines().count(), 2);
    let out = fx.ok("task_search", json!({"query": "ranking", "task_id": TOKEN}));
    assert_eq!(
        out,
        format!("1. [{TOKEN}]  (2026-06-22)\n    [ranking] elsewhere")
    );
    let out = fx.ok("task_search", json!({"query": "ranking"}));
    assert_eq!(out.lines().count(), 8);
    assert_eq!(
        fx.err("task_search", json!({"query": "ranking", "limit": "many"})),
        "limit must be an integer, got \"many\"."
    );
}

#[test]
fn task_search_hostile_tokens_never_error() {
    let mut fx = story();
    fx.ok(
        "observe",
        json!({"text": "it's @x why? a,b OR C++ \"quoted\" 50% #tag NEAR and NOT"}),
    );
    for q in [
        "it's", "@x", "why?", "a,b", "OR", "C++", "\"", "50%", "#tag", "NEAR", "NOT", "and", "(",
        "a:b", "x^y", "-", "*", "**",
    ] {
        let out = fx.call("task_search", json!({"query": q}));
        assert!(!out.is_error, "{q}: {}", out.text);
        assert!(!out.text.starts_with("Could not parse"), "{q}");
    }
    assert!(
        fx.ok("task_search", json!({"query": "it's"}))
            .starts_with("1. [")
    );
    assert!(
        fx.ok("task_search", json!({"query": "C++"}))
            .starts_with("1. [")
    );
    assert!(
        fx.ok("task_search", json!({"query": "OR"}))
            .starts_with("1. [")
    );
}

// ---- task_get ----

#[test]
fn task_get_renders_the_seed_block() {
    let mut fx = story();
    fx.ok(
        "task_link",
        json!({"target_id": TOKEN, "edge_type": "depends-on"}),
    );
    fx.ok(
        "observe",
        json!({"text": "prefix queries land; tokenizer fix is next"}),
    );
    assert_eq!(
        fx.ok("task_get", json!({"task_id": PREFIX})),
        "2026-06-22-add-prefix-query-support  [active]\n  add prefix query support\n  parent: 2026-06-22-tune-search\n  edges:\n    depends-on 2026-06-22-tokenizer-fix\n  recent:\n    - prefix queries land; tokenizer fix is next"
    );
}

#[test]
fn task_get_unknown_slug() {
    let mut fx = Fx::new();
    assert_eq!(
        fx.err("task_get", json!({"task_id": "2026-06-22-nope"})),
        "No task 2026-06-22-nope."
    );
}

#[test]
fn task_get_description_children_metadata_and_pointer() {
    let mut fx = Fx::new();
    fx.ok(
        "task_create",
        json!({"name": "tune search", "description": "make search rank well"}),
    );
    fx.ok("task_fork", json!({"name": "add prefix query support"}));
    fx.ok(
        "task_set_metadata",
        json!({"key": "phase", "value": "1", "task_id": TUNE}),
    );
    for i in 1..=7 {
        fx.clock = T0 + i;
        fx.ok(
            "observe",
            json!({"text": format!("note {i}"), "task_id": TUNE}),
        );
    }
    assert_eq!(
        fx.ok("task_get", json!({"task_id": TUNE})),
        format!(
            "{TUNE}  [active]\n  make search rank well\n  children:\n    - {PREFIX} [active]\n  metadata:\n    phase = 1\n  recent:\n    - note 7\n    - note 6\n    - note 5\n    - note 4\n    - note 3\n  … 2 earlier observations — call timeline with full=true, types=observation to read them all"
        )
    );
}

#[test]
fn task_get_without_current() {
    let mut fx = Fx::new();
    assert_eq!(
        fx.err("task_get", json!({})),
        "No current task; create or select one first."
    );
}

// ---- timeline ----

#[test]
fn timeline_digest_lines() {
    let mut fx = story();
    fx.clock = T0 + 10;
    fx.ok(
        "observe",
        json!({"text": "bm25 ranking confirmed against t/cairn-search.lisp"}),
    );
    fx.clock = T0 + 20;
    fx.ok("task_update_status", json!({"status": "blocked"}));
    fx.clock = T0 + 30;
    fx.ok("task_update_status", json!({"status": "active"}));
    fx.clock = T0 + 40;
    fx.ok(
        "handoff",
        json!({"summary": "prefix queries land; tokenizer fix is next", "path": "h.md"}),
    );
    assert_eq!(
        fx.ok("timeline", json!({"task_id": PREFIX, "limit": 3})),
        format!(
            "{PREFIX} — last 3 events\n  8  handoff.create  prefix queries land; tokenizer fix is next → h.md\n  7  task.update-status  → active\n  6  task.update-status  → blocked"
        )
    );
}

#[test]
fn timeline_full_mode_and_types() {
    let mut fx = story();
    fx.ok("observe", json!({"text": "line one\nline two"}));
    fx.ok("task_set_metadata", json!({"key": "k", "value": "v"}));
    assert_eq!(
        fx.ok("timeline", json!({"types": "observation", "full": true})),
        format!(
            "{PREFIX} — last 1 event\n  5  observation  (2026-06-22 14:30 UTC)\n    line one\n    line two"
        )
    );
    assert_eq!(
        fx.ok(
            "timeline",
            json!({"types": "observation, task.set-metadata"})
        ),
        format!(
            "{PREFIX} — last 2 events\n  6  task.set-metadata  k = v\n  5  observation  line one line two"
        )
    );
}

#[test]
fn timeline_unknown_type_suggests() {
    let mut fx = story();
    assert_eq!(
        fx.err("timeline", json!({"types": "obsrvation"})),
        "unknown event type \"obsrvation\"; did you mean observation?"
    );
}

#[test]
fn timeline_seq_must_be_integer() {
    let mut fx = story();
    assert_eq!(
        fx.err("timeline", json!({"before_seq": "x"})),
        "before_seq must be an integer, got \"x\"."
    );
    assert_eq!(
        fx.err("timeline", json!({"after_seq": 1.5})),
        "after_seq must be an integer, got 1.5."
    );
}

#[test]
fn timeline_paging_and_soft_ceiling() {
    let mut fx = story();
    let big = "y".repeat(3_000);
    for _ in 0..8 {
        fx.clock += 1;
        fx.ok("observe", json!({"text": big}));
    }
    // seqs 5..=12 are the observations (seq 2 is the task's creation); each
    // full block is ~3,045 chars, so five fit under 16,000.
    let first = fx.ok("timeline", json!({"full": true}));
    assert!(first.chars().count() <= 16_000 + 200);
    let last_line = first.lines().last().unwrap();
    assert_eq!(
        last_line,
        format!(
            "… truncated at {} chars; 4 events remaining; pass before_seq=8 to continue",
            first.chars().count() - last_line.chars().count() - 1
        )
    );
    assert!(first.starts_with(&format!("{PREFIX} — last 5 events\n  12  observation")));
    let second = fx.ok("timeline", json!({"full": true, "before_seq": 8}));
    assert!(second.starts_with(&format!("{PREFIX} — last 4 events\n  7  observation")));
    // A task.create without a description has no body (no invented text).
    assert!(second.ends_with(&format!(
        "\n  5  observation  (2026-06-22 14:30 UTC)\n    {big}\n  2  task.create  (2026-06-22 14:30 UTC)"
    )));
    assert!(!second.contains("truncated"));
    // `M events remaining` counts every older matching event, not only those
    // inside the `limit` page: a page of 6 shows 5 and 4 remain.
    let limited = fx.ok("timeline", json!({"full": true, "limit": 6}));
    assert!(limited.starts_with(&format!("{PREFIX} — last 5 events\n  12  observation")));
    assert!(limited.ends_with("; 4 events remaining; pass before_seq=8 to continue"));
    let filtered = fx.ok(
        "timeline",
        json!({"full": true, "limit": 6, "types": "observation"}),
    );
    assert!(filtered.ends_with("; 3 events remaining; pass before_seq=8 to continue"));
    let digests = fx.ok("timeline", json!({"before_seq": 5}));
    assert_eq!(
        digests,
        format!("{PREFIX} — last 1 event\n  2  task.create")
    );
    let windowed = fx.ok("timeline", json!({"after_seq": 9, "before_seq": 11}));
    assert_eq!(windowed.lines().count(), 2);
    assert!(windowed.contains("\n  10  observation  yyy"));
}

#[test]
fn timeline_without_current() {
    let mut fx = Fx::new();
    assert_eq!(
        fx.err("timeline", json!({})),
        "No current task; create or select one first."
    );
}

// ---- task_bootstrap ----

#[test]
fn task_bootstrap_in_an_empty_project() {
    let mut fx = Fx::new();
    assert_eq!(
        fx.err("task_bootstrap", json!({})),
        "No task to bootstrap; pass task_id or select a task first."
    );
}

#[test]
fn task_bootstrap_unknown_lists_recent() {
    let mut fx = story();
    assert_eq!(
        fx.err("task_bootstrap", json!({"task_id": "2026-06-22-nope"})),
        format!("No task 2026-06-22-nope. Recent: {PREFIX}, {TOKEN}, {TUNE}")
    );
    let mut empty = Fx::new();
    assert_eq!(
        empty.err("task_bootstrap", json!({"task_id": "2026-06-22-nope"})),
        "No task 2026-06-22-nope."
    );
}

#[test]
fn task_bootstrap_switches_and_lists_handoffs() {
    let mut fx = story();
    for (i, s) in ["one", "two", "three", "four"].iter().enumerate() {
        fx.clock = T0 + i as i64;
        fx.ok(
            "handoff",
            json!({"summary": s, "task_id": TOKEN, "path": format!("h{i}.md")}),
        );
    }
    let out = fx.ok("task_bootstrap", json!({"task_id": TOKEN}));
    assert_eq!(fx.session.current.as_deref(), Some(TOKEN));
    assert_eq!(
        out,
        format!(
            "{TOKEN}  [active]\n  tokenizer fix\n  recent:\n    - Handoff: four → h3.md\n    - Handoff: three → h2.md\n    - Handoff: two → h1.md\n    - Handoff: one → h0.md\n  handoffs:\n    - four (h3.md)\n    - three (h2.md)\n    - two (h1.md)"
        )
    );
}

// ---- grants, panics, protocol faults ----

#[test]
fn ungranted_call_is_refused_and_changes_nothing() {
    let mut fx = story();
    fx.session.grants = cairn::session::parse_grants("read").unwrap();
    let before = fx.events();
    assert_eq!(
        fx.err("observe", json!({"text": "x"})),
        "observe needs the cairn/observe capability, which this server was not granted."
    );
    assert_eq!(
        fx.err("task_create", json!({"name": "tune search"})),
        "task_create needs the cairn/write capability, which this server was not granted."
    );
    assert_eq!(fx.events(), before);
    assert!(fx.ok("task_get", json!({})).starts_with(PREFIX));
}

#[test]
fn protocol_faults_are_dispatch_errors() {
    let mut fx = Fx::new();
    let root = fx.root();
    let mut ctx = cairn::tools::ToolCtx {
        store: (&fx.store).into(),
        session: &mut fx.session,
        engine: &fx.engine,
        root,
        clock: cairn::tools::Clock::Fixed(T0),
    };
    assert_eq!(
        cairn::tools::dispatch(&mut ctx, "nope", json!({}))
            .unwrap_err()
            .to_string(),
        "Unknown tool nope."
    );
    assert_eq!(
        cairn::tools::dispatch(&mut ctx, "observe", json!({}))
            .unwrap_err()
            .to_string(),
        "Invalid arguments for observe: missing field `text`"
    );
}

#[test]
fn task_query_parse_and_query_errors() {
    let mut fx = Fx::new();
    assert_eq!(
        fx.err("task_query", json!({"query": "((("})),
        "Parse error: Unclosed '('; expected ')' before the end of the query."
    );
    assert_eq!(
        fx.err("task_query", json!({"query": "(-> (all) (:zelect :slug))"})),
        "Query error: Unknown step :zelect; did you mean :select?"
    );
    assert_eq!(
        fx.err("task_query_write", json!({"query": "plan"})),
        "Query error: plan is a bare word, not a source form; a named view runs as (query \"plan\")."
    );
}

#[test]
fn a_panicking_tool_becomes_an_internal_error_and_the_store_is_unchanged() {
    use cairn::tools::registry::{ToolSpec, dispatch_spec};
    let boom = ToolSpec {
        name: "boom",
        capability: cairn::session::Capability::Write,
        summary: "",
        description: "",
        signature: "boom()",
        read_only: false,
        destructive: false,
        idempotent: false,
        schema: serde_json::Map::new,
        output_schema: serde_json::Map::new,
        run: |ctx, _| {
            let ev = cairn::store::NewEvent::observation(
                &ctx.session.id,
                T0,
                "2026-06-22-tune-search",
                "x",
            );
            let _ = ctx
                .store
                .write_with(|tx| -> Result<(), cairn::store::StoreError> {
                    tx.append(std::slice::from_ref(&ev))?;
                    panic!("boom");
                });
            Ok(cairn::tools::ToolOutcome::ok("unreachable"))
        },
    };
    let mut fx = Fx::new();
    fx.ok("task_create", json!({"name": "tune search"}));
    let before = fx.events();
    let root = fx.root();
    let mut ctx = cairn::tools::ToolCtx {
        store: (&fx.store).into(),
        session: &mut fx.session,
        engine: &fx.engine,
        root,
        clock: cairn::tools::Clock::Fixed(T0),
    };
    let out = dispatch_spec(&mut ctx, &boom, json!({})).unwrap();
    assert_eq!(
        out,
        cairn::tools::ToolOutcome::err("Internal error in boom; the store is unchanged.")
    );
    assert_eq!(fx.events(), before);
    assert_eq!(
        fx.ok("observe", json!({"text": "still serving"})),
        format!("Observed on {TUNE}.")
    );
}

#[test]
fn handoff_is_searchable_as_an_observation() {
    let mut fx = story();
    fx.ok(
        "handoff",
        json!({"summary": "tokenizer fix is next", "path": "notes/next.md"}),
    );
    // The task named "tokenizer fix" matches by its name (issue 26).
    assert_eq!(
        fx.ok("task_search", json!({"query": "tokenizer"})),
        format!(
            "1. [{TOKEN}]  (2026-06-22)\n    [tokenizer] fix\n2. [{PREFIX}]  (2026-06-22)\n    Handoff: [tokenizer] fix is next → notes/next.md"
        )
    );
    assert_eq!(
        fx.ok("timeline", json!({"limit": 1})),
        format!(
            "{PREFIX} — last 1 event\n  5  handoff.create  tokenizer fix is next → notes/next.md"
        )
    );
}
