//! Structured results (spec/mcp.md "Structured results"): for every tool the
//! `structuredContent` validates against the declared `outputSchema` (a JSON
//! Schema 2020-12 validator) and says what the text says; error results
//! carry text only; `task_create` reports `possibleDuplicates`; the typed
//! name is kept in `task.create`.

mod toolfx;

use cairn::tools::tools;
use cairn::tq::Surface;
use serde_json::{Value, json};
use toolfx::{Fx, PREFIX, T0, TOKEN, TUNE, story};

/// Calls `tool`, asserts success, validates the structure against the
/// tool's output schema and returns (text, structure).
fn call(fx: &mut Fx, tool: &str, args: Value) -> (String, Value) {
    let out = fx.call(tool, args);
    assert!(!out.is_error, "{tool} failed: {}", out.text);
    let v = out.structured.clone().expect("a structured result");
    assert!(v.is_object(), "{tool}: structuredContent must be an object");
    assert_valid(tool, &v);
    (out.text, v)
}

fn assert_valid(tool: &str, v: &Value) {
    let spec = cairn::tools::find(tool).expect("a registered tool");
    let schema = Value::Object((spec.output_schema)());
    let validator = jsonschema::draft202012::new(&schema).expect("a valid JSON Schema");
    let errors: Vec<String> = validator.iter_errors(v).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{tool}: {errors:?}\n{v:#}");
}

#[test]
fn every_output_schema_is_a_closed_object_schema_requiring_its_properties() {
    assert_eq!(tools().len(), 14);
    for t in tools() {
        let s = (t.output_schema)();
        assert_eq!(s.get("type"), Some(&json!("object")), "{}", t.name);
        assert_eq!(
            s.get("additionalProperties"),
            Some(&json!(false)),
            "{}",
            t.name
        );
        let props: Vec<&String> = s["properties"].as_object().unwrap().keys().collect();
        let mut required: Vec<&str> = s["required"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        required.sort_unstable();
        let mut names: Vec<&str> = props.iter().map(|p| p.as_str()).collect();
        names.sort_unstable();
        assert_eq!(required, names, "{}", t.name);
        assert!(!s.contains_key("$schema") && !s.contains_key("$defs"));
        assert!(
            !Value::Object(s.clone()).to_string().contains("\"format\""),
            "{}",
            t.name
        );
        jsonschema::draft202012::new(&Value::Object(s)).expect("a valid schema");
    }
}

#[test]
fn a_wrong_structure_fails_validation() {
    let spec = cairn::tools::find("task_create").unwrap();
    let v = jsonschema::draft202012::new(&Value::Object((spec.output_schema)())).unwrap();
    assert!(!v.is_valid(&json!({"slug": "x", "created": true, "current": true})));
    assert!(!v.is_valid(&json!({
        "slug": "x", "created": "yes", "current": true, "possibleDuplicates": []
    })));
    assert!(v.is_valid(&json!({
        "slug": "x", "created": true, "current": true, "possibleDuplicates": []
    })));
}

#[test]
fn observe_structure() {
    let mut fx = story();
    let (text, v) = call(&mut fx, "observe", json!({"text": "bm25 confirmed"}));
    assert_eq!(text, format!("Observed on {PREFIX}."));
    assert_eq!(v, json!({"task": PREFIX}));
}

#[test]
fn task_create_structure_with_possible_duplicates() {
    let mut fx = Fx::new();
    let (text, v) = call(
        &mut fx,
        "task_create",
        json!({"name": "tune search ranking"}),
    );
    let first = "2026-06-22-tune-search-ranking";
    assert_eq!(text, format!("Created {first}."));
    assert_eq!(
        v,
        json!({"slug": first, "created": true, "current": true, "possibleDuplicates": []})
    );
    call(&mut fx, "task_create", json!({"name": "search ranking"}));
    let done = "2026-06-22-search-ranking-weights";
    call(
        &mut fx,
        "task_create",
        json!({"name": "search ranking weights"}),
    );
    call(
        &mut fx,
        "task_update_status",
        json!({"status": "completed", "task_id": done}),
    );
    call(&mut fx, "task_create", json!({"name": "fix CI"}));
    let (text, v) = call(
        &mut fx,
        "task_create",
        json!({"name": "Tune the search ranking again"}),
    );
    assert_eq!(text, "Created 2026-06-22-tune-search-ranking-again.");
    // {tune, search, ranking, again}: 3/4 with the first, 2/4 with the
    // second; the completed task and `fix CI` are not reported.
    assert_eq!(
        v,
        json!({
            "slug": "2026-06-22-tune-search-ranking-again",
            "created": true,
            "current": false,
            "possibleDuplicates": [
                {"slug": first, "name": "tune search ranking", "status": "active", "score": 0.75},
                {"slug": "2026-06-22-search-ranking", "name": "search ranking", "status": "active", "score": 0.5},
            ]
        })
    );
}

/// Issue 23: the open tasks' words are kept between creates and follow
/// every write, this session's and another connection's (a second process
/// on the same file), so a create reports exactly what a fresh read of
/// every open task would.
#[test]
fn possible_duplicates_follow_writes_of_another_connection() {
    let mut fx = Fx::new();
    call(
        &mut fx,
        "task_create",
        json!({"name": "tune search ranking"}),
    );
    call(&mut fx, "task_create", json!({"name": "wire parser cache"}));
    let other = cairn::store::Store::open(fx.store.path()).unwrap();
    let first = "2026-06-22-tune-search-ranking";
    other
        .write(&[
            cairn::store::NewEvent::update_status(
                "other",
                T0 + 5,
                first,
                cairn::store::Status::Completed,
            ),
            cairn::store::NewEvent::task_create(
                "other",
                T0 + 5,
                "2026-06-22-ranking-search-tuning",
                None,
                None,
            )
            .with_name("tune ranking for search"),
        ])
        .unwrap();
    drop(other);
    let (_, v) = call(
        &mut fx,
        "task_create",
        json!({"name": "tune search ranking now"}),
    );
    // The completed task is gone; the other connection's create is in
    // ({tune, search, ranking} of {tune, search, ranking, now}: 3/4).
    assert_eq!(
        v["possibleDuplicates"],
        json!([{"slug": "2026-06-22-ranking-search-tuning", "name": "tune ranking for search", "status": "active", "score": 0.75}])
    );
    // Reopened by this session: reported again (the two at 1.0 by slug,
    // then the 3/4).
    fx.clock = T0 + 10;
    call(
        &mut fx,
        "task_update_status",
        json!({"status": "active", "task_id": first}),
    );
    let (_, v) = call(
        &mut fx,
        "task_create",
        json!({"name": "tune search ranking"}),
    );
    let slugs: Vec<&str> = v["possibleDuplicates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["slug"].as_str().unwrap())
        .collect();
    assert_eq!(
        slugs,
        [
            "2026-06-22-ranking-search-tuning",
            first,
            "2026-06-22-tune-search-ranking-now"
        ]
    );
}

#[test]
fn possible_duplicates_are_capped_at_three() {
    let mut fx = Fx::new();
    for name in [
        "ranking tune search",
        "search ranking tune",
        "tune ranking search",
        "tune search ranking",
    ] {
        call(&mut fx, "task_create", json!({"name": name}));
    }
    let (_, v) = call(
        &mut fx,
        "task_create",
        json!({"name": "tune search ranking"}),
    );
    let dups = v["possibleDuplicates"].as_array().unwrap();
    assert_eq!(dups.len(), 3);
    assert!(dups.iter().all(|d| d["score"] == json!(1.0)));
}

#[test]
fn the_typed_name_is_kept_in_the_event_and_shown_without_a_description() {
    let mut fx = Fx::new();
    call(
        &mut fx,
        "task_create",
        json!({"name": "Port the parser to Go"}),
    );
    let slug = "2026-06-22-port-parser-go";
    let data: String = fx
        .store
        .conn()
        .query_row(
            "SELECT data FROM events WHERE type = 'task.create'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let data: Value = serde_json::from_str(&data).unwrap();
    assert_eq!(data["name"], json!("Port the parser to Go"));
    assert_eq!(data["description"], Value::Null);
    let (text, v) = call(&mut fx, "task_get", json!({}));
    assert_eq!(text, format!("{slug}  [active]\n  Port the parser to Go"));
    assert_eq!(v["name"], json!("Port the parser to Go"));
    assert_eq!(v["description"], Value::Null);
    // The description wins over the name; `:description` stays the description.
    call(
        &mut fx,
        "task_create",
        json!({"name": "wire up the db", "description": "connect the pool"}),
    );
    let (text, _) = call(
        &mut fx,
        "task_get",
        json!({"task_id": "2026-06-22-wire-up-db"}),
    );
    assert_eq!(text, "2026-06-22-wire-up-db  [active]\n  connect the pool");
    let (text, _) = call(
        &mut fx,
        "task_query",
        json!({"query": "(-> (node \"port\") (:select :description))"}),
    );
    assert_eq!(text, format!("1 task:\n- {slug}  description=∅"));
    let (text, _) = call(&mut fx, "timeline", json!({}));
    assert_eq!(text, format!("{slug} — last 1 event\n  1  task.create"));
}

#[test]
fn task_fork_structure() {
    let mut fx = story();
    let (text, v) = call(&mut fx, "task_fork", json!({"name": "phase-2-wire-up-db"}));
    let child = "2026-06-22-phase-2-wire-up-db";
    assert_eq!(text, format!("Forked {child} from {PREFIX} (phase-of)."));
    assert_eq!(
        v,
        json!({"slug": child, "parent": PREFIX, "edge_type": "phase-of", "created": true})
    );
}

#[test]
fn task_link_and_sever_structure() {
    let mut fx = story();
    let (text, v) = call(
        &mut fx,
        "task_link",
        json!({"target_id": TOKEN, "edge_type": "depends-on"}),
    );
    assert_eq!(text, format!("Linked {PREFIX} -> {TOKEN} (depends-on)."));
    assert_eq!(
        v,
        json!({"task": PREFIX, "target": TOKEN, "edge_type": "depends-on", "linked": true})
    );
    let (text, v) = call(
        &mut fx,
        "task_sever",
        json!({"target_id": TOKEN, "edge_type": "depends-on"}),
    );
    assert_eq!(text, format!("Severed {PREFIX} -> {TOKEN} (depends-on)."));
    assert_eq!(
        v,
        json!({"task": PREFIX, "target": TOKEN, "edge_type": "depends-on", "linked": false})
    );
}

#[test]
fn task_set_metadata_and_update_status_structure() {
    let mut fx = story();
    let (text, v) = call(
        &mut fx,
        "task_set_metadata",
        json!({"key": " priority ", "value": "high"}),
    );
    assert_eq!(text, format!("Set priority on {PREFIX}."));
    assert_eq!(
        v,
        json!({"task": PREFIX, "key": "priority", "value": "high"})
    );
    let (text, v) = call(&mut fx, "task_update_status", json!({"status": "Blocked"}));
    assert_eq!(text, format!("{PREFIX} is now blocked."));
    assert_eq!(
        v,
        json!({"task": PREFIX, "status": "blocked", "changed": true})
    );
    let (_, v) = call(&mut fx, "task_update_status", json!({"status": "blocked"}));
    assert_eq!(
        v,
        json!({"task": PREFIX, "status": "blocked", "changed": false})
    );
}

#[test]
fn handoff_structure() {
    let mut fx = story();
    let root = fx.root();
    let (text, v) = call(
        &mut fx,
        "handoff",
        json!({"summary": "stop here", "path": "notes/h.md"}),
    );
    let full = root.join("notes").join("h.md").display().to_string();
    assert_eq!(text, format!("Handoff scaffolded for {PREFIX} at {full}"));
    assert_eq!(
        v,
        json!({"task": PREFIX, "path": full, "relative_path": "notes/h.md"})
    );
}

#[test]
fn task_search_structure() {
    let mut fx = story();
    call(&mut fx, "observe", json!({"text": "prefix queries land"}));
    fx.clock = T0 + 86_400;
    call(
        &mut fx,
        "observe",
        json!({"text": "tokenizer prefix split", "task_id": TOKEN}),
    );
    let (text, v) = call(&mut fx, "task_search", json!({"query": "prefix"}));
    let hits = v["hits"].as_array().unwrap();
    assert_eq!(hits.len(), 2);
    assert_eq!(v["query"], json!("prefix"));
    let rebuilt: Vec<String> = hits
        .iter()
        .map(|h| {
            format!(
                "{}. [{}]  ({})\n    {}",
                h["rank"],
                h["task"].as_str().unwrap(),
                h["date"].as_str().unwrap(),
                h["snippet"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(text, rebuilt.join("\n"));
    assert!(text.contains("[prefix]"));
    let (text, v) = call(&mut fx, "task_search", json!({"query": "zebra"}));
    assert_eq!(text, "No matching observations for \"zebra\".");
    assert_eq!(v, json!({"query": "zebra", "hits": []}));
}

#[test]
fn task_get_structure() {
    let mut fx = story();
    call(
        &mut fx,
        "task_link",
        json!({"target_id": TOKEN, "edge_type": "depends-on"}),
    );
    call(
        &mut fx,
        "task_set_metadata",
        json!({"key": "tags", "value": "search"}),
    );
    call(
        &mut fx,
        "observe",
        json!({"text": "prefix queries land; tokenizer fix is next"}),
    );
    let (text, v) = call(&mut fx, "task_get", json!({"task_id": PREFIX}));
    assert_eq!(
        text,
        format!(
            "{PREFIX}  [active]\n  add prefix query support\n  parent: {TUNE}\n  edges:\n    depends-on {TOKEN}\n  metadata:\n    tags = search\n  recent:\n    - prefix queries land; tokenizer fix is next"
        )
    );
    assert_eq!(
        v,
        json!({
            "slug": PREFIX, "status": "active", "description": null,
            "name": "add prefix query support", "parent": TUNE, "children": [],
            "edges": [{"edge_type": "depends-on", "target": TOKEN}],
            "metadata": {"tags": "search"},
            "recent": ["prefix queries land; tokenizer fix is next"],
            "observation_count": 1, "claim": null
        })
    );
    let (_, v) = call(&mut fx, "task_get", json!({"task_id": TUNE}));
    assert_eq!(v["children"], json!([{"slug": PREFIX, "status": "active"}]));
}

#[test]
fn task_bootstrap_structure() {
    let mut fx = story();
    call(
        &mut fx,
        "handoff",
        json!({"summary": "stop here", "path": "h.md", "task_id": TOKEN}),
    );
    let (text, v) = call(&mut fx, "task_bootstrap", json!({"task_id": TOKEN}));
    assert_eq!(
        text,
        format!(
            "{TOKEN}  [active]\n  tokenizer fix\n  recent:\n    - Handoff: stop here → h.md\n  handoffs:\n    - stop here (h.md)"
        )
    );
    assert_eq!(v["task"]["slug"], json!(TOKEN));
    assert_eq!(v["task"]["name"], json!("tokenizer fix"));
    assert_eq!(
        v["handoffs"],
        json!([{"summary": "stop here", "path": "h.md", "ts": T0}])
    );
}

#[test]
fn timeline_structure_matches_the_lines() {
    let mut fx = story();
    let big = "y".repeat(3_000);
    for _ in 0..8 {
        fx.clock += 1;
        call(&mut fx, "observe", json!({"text": big}));
    }
    let (text, v) = call(&mut fx, "timeline", json!({"limit": 3}));
    let events = v["events"].as_array().unwrap();
    assert_eq!(events.len(), 3);
    let lines: Vec<String> = events
        .iter()
        .map(|e| {
            format!(
                "  {}  {}  {}",
                e["seq"],
                e["type"].as_str().unwrap(),
                e["text"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        text,
        format!("{PREFIX} — last 3 events\n{}", lines.join("\n"))
    );
    assert_eq!(v["remaining"], json!(0));
    assert_eq!(v["before_seq"], Value::Null);
    let (text, v) = call(&mut fx, "timeline", json!({"full": true, "limit": 6}));
    assert_eq!(v["events"].as_array().unwrap().len(), 5);
    assert_eq!(v["events"][0]["text"], json!(big));
    assert_eq!(v["remaining"], json!(4));
    assert_eq!(v["before_seq"], json!(8));
    assert!(text.ends_with("; 4 events remaining; pass before_seq=8 to continue"));
}

#[test]
fn task_query_structure_is_the_cli_json() {
    let mut fx = story();
    call(
        &mut fx,
        "task_set_metadata",
        json!({"key": "priority", "value": "high"}),
    );
    let cli_json = |fx: &Fx, q: &str| {
        cairn::tq::json::run_json(
            &fx.engine,
            (&fx.store).into(),
            &fx.session,
            q,
            Surface::Read,
        )
        .unwrap()
    };
    // A task set: the widened JSON of `cairn query --format json`.
    let q = "(-> (all) (:sort :slug :asc))";
    let (text, v) = call(&mut fx, "task_query", json!({"query": q}));
    assert_eq!(v["shape"], json!("tasks"));
    assert_eq!(v["result"], cli_json(&fx, q));
    let slugs: Vec<&str> = v["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["slug"].as_str().unwrap())
        .collect();
    assert_eq!(slugs, [PREFIX, TOKEN, TUNE]);
    assert_eq!(v["result"][0]["metadata"], json!({"priority": "high"}));
    assert_eq!(
        text,
        format!("3 tasks:\n- {PREFIX} (active)\n- {TOKEN} (active)\n- {TUNE} (active)")
    );
    for (q, shape, result) in [
        ("(-> (all) (:count))", "count", json!(3)),
        (
            "(-> (all) (:sort :slug :asc) (:ids))",
            "ids",
            json!([PREFIX, TOKEN, TUNE]),
        ),
        (
            "(-> (node \"token\") (:select :status))",
            "projection",
            json!([{"status": "active"}]),
        ),
        (
            "(-> (node \"token\") (:group-by :status))",
            "groups",
            json!({"active": [{"slug": TOKEN, "display-name": TOKEN, "status": "active"}]}),
        ),
    ] {
        let (_, v) = call(&mut fx, "task_query", json!({"query": q}));
        assert_eq!(
            v,
            json!({"shape": shape, "result": result, "truncated": null}),
            "{q}"
        );
        assert_eq!(v["result"], cli_json(&fx, q), "{q}");
    }
    let (text, _) = call(
        &mut fx,
        "task_query",
        json!({"query": "(-> (all) (:count))"}),
    );
    assert_eq!(text, "3");
}

#[test]
fn task_query_write_structure_is_the_result_as_run() {
    let mut fx = story();
    let (text, v) = call(
        &mut fx,
        "task_query_write",
        json!({"query": "(-> (node \"tokenizer\") (:set-status! \"blocked\"))"}),
    );
    assert_eq!(
        v,
        json!({"shape": "tasks", "result": [
            {"slug": TOKEN, "display-name": TOKEN, "status": "blocked"}
        ], "truncated": null})
    );
    assert_eq!(text, format!("1 task:\n- {TOKEN} (blocked)"));
    // Ran once: one status event.
    let n: i64 = fx
        .store
        .conn()
        .query_row(
            "SELECT count(*) FROM events WHERE type = 'task.update-status'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(n, 1);
}

#[test]
fn errors_carry_text_only() {
    let mut fx = Fx::new();
    for (tool, args) in [
        ("task_get", json!({})),
        ("task_create", json!({"name": "P1"})),
        ("task_query", json!({"query": "(nope"})),
        ("observe", json!({"text": "x"})),
        ("timeline", json!({})),
    ] {
        let out = fx.call(tool, args);
        assert!(out.is_error, "{tool}");
        assert_eq!(out.structured, None, "{tool}");
    }
}

/// Issue 23: a result whose text passes the 16,000-character budget carries
/// in its structure exactly the tasks the text shows (`truncated: {shown,
/// total}`), in the same order: a task set (widened), ids and groups.
#[test]
fn a_truncated_text_bounds_its_structure_to_the_same_tasks() {
    let mut fx = Fx::new();
    let events: Vec<cairn::store::NewEvent> = (0..400)
        .map(|i| {
            cairn::store::NewEvent::task_create(
                "s",
                T0,
                &format!("2026-06-22-task-{i:03}-with-a-rather-long-name-to-fill-the-text-budget"),
                None,
                None,
            )
        })
        .collect();
    fx.store.write(&events).unwrap();
    // The slugs a text shows: its `- SLUG` lines, in order.
    let shown_slugs = |text: &str| -> Vec<String> {
        text.lines()
            .filter_map(|l| l.strip_prefix("- "))
            .map(|l| l.split_whitespace().next().unwrap().to_string())
            .collect()
    };
    for (q, key) in [
        ("(-> (all) (:sort :slug :asc))", Some("slug")),
        ("(-> (all) (:ids))", None),
    ] {
        let (text, v) = call(&mut fx, "task_query", json!({"query": q}));
        let k = shown_slugs(&text);
        assert!(
            text.ends_with(&format!(
                "… truncated: showing {} of 400 tasks; narrow the query or add (:take {}).",
                k.len(),
                k.len()
            )),
            "{text}"
        );
        assert!(k.len() > 50 && k.len() < 400, "{}", k.len());
        assert_eq!(
            v["truncated"],
            json!({"shown": k.len(), "total": 400}),
            "{q}"
        );
        let got: Vec<String> = v["result"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| match key {
                Some(key) => t[key].as_str().unwrap().to_string(),
                None => t.as_str().unwrap().to_string(),
            })
            .collect();
        assert_eq!(got, k, "{q}");
        assert_valid("task_query", &v);
    }
    // Groups: the first K tasks in group order.
    let (text, v) = call(
        &mut fx,
        "task_query",
        json!({"query": "(-> (all) (:group-by :status))"}),
    );
    let k = shown_slugs(&text);
    assert_eq!(v["truncated"], json!({"shown": k.len(), "total": 400}));
    let got: Vec<String> = v["result"]["active"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["slug"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(got, k);
    // A whole result says so.
    let (_, v) = call(
        &mut fx,
        "task_query",
        json!({"query": "(-> (all) (:take 3) (:ids))"}),
    );
    assert_eq!(v["truncated"], json!(null));
    assert_eq!(v["result"].as_array().unwrap().len(), 3);
}
