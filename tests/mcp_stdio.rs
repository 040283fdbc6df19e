//! End to end over real stdio: spawn the built `cairn serve` in a temporary
//! git repository and drive it with rmcp's client through the story of seed
//! 000; grants; two servers on one project.

use std::path::Path;

use serde_json::{Value, json};

mod mcpfx;

use mcpfx::Client;

fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    dir
}

fn today() -> String {
    let d = time::OffsetDateTime::now_utc().date();
    format!("{:04}-{:02}-{:02}", d.year(), u8::from(d.month()), d.day())
}

fn event_count(dir: &Path) -> i64 {
    let store = cairn::store::Store::open(&dir.join(".cairn/cairn.db")).unwrap();
    store.event_count().unwrap()
}

#[tokio::test]
async fn the_seed_story_over_stdio() {
    let dir = repo();
    let c = Client::spawn(dir.path(), &[]).await;
    let story = mcpfx::seed_story(&c, dir.path()).await;
    c.close().await;
    // A fresh process: no current task until bootstrap names one.
    let c2 = Client::spawn(dir.path(), &[]).await;
    mcpfx::seed_story_resume(&c2, &story).await;
    c2.close().await;
    assert_eq!(event_count(dir.path()), 10);
}

#[tokio::test]
async fn seed_error_lines_over_the_wire() {
    let dir = repo();
    let c = Client::spawn(dir.path(), &[]).await;
    let cases: Vec<(&str, Value, String)> = vec![
        (
            "observe",
            json!({"text": "x"}),
            "No current task; create or select one first.".into(),
        ),
        (
            "task_create",
            json!({"name": " "}),
            "name is required.".into(),
        ),
        (
            "task_fork",
            json!({"name": "add prefix query support"}),
            "No parent task; pass from or select a task first.".into(),
        ),
        (
            "task_bootstrap",
            json!({"task_id": "2026-01-01-nope"}),
            "No task 2026-01-01-nope.".into(),
        ),
    ];
    for (tool, args, want) in cases {
        assert_eq!(c.err(tool, args).await, want, "{tool}");
    }
    let d = today();
    c.ok("task_create", json!({"name": "tune search"})).await;
    let cases: Vec<(&str, Value, String)> = vec![
        ("observe", json!({"text": ""}), "text is required.".into()),
        ("task_fork", json!({"name": ""}), "name is required.".into()),
        ("task_fork", json!({"name": "tune search"}), "A task cannot fork from itself.".into()),
        ("task_fork", json!({"name": "phase two work", "edge_type": "x"}), "\"x\" is not a valid edge type; expected one of phase-of, depends-on, related.".into()),
        ("task_link", json!({"target_id": "", "edge_type": "related"}), "target_id is required.".into()),
        ("task_link", json!({"target_id": format!("{d}-tune-search"), "edge_type": "related"}), "A task cannot link to itself.".into()),
        ("task_sever", json!({"target_id": "", "edge_type": "related"}), "target_id is required.".into()),
        ("task_set_metadata", json!({"key": "", "value": "v"}), "key is required.".into()),
        ("task_update_status", json!({}), "status is required.".into()),
        ("task_update_status", json!({"status": "done"}), "\"done\" is not a valid status; expected one of open, active, completed, abandoned, blocked.".into()),
        ("handoff", json!({"summary": ""}), "summary is required.".into()),
        ("task_query", json!({"query": ""}), "query is required.".into()),
        ("task_query_write", json!({"query": ""}), "query is required.".into()),
        ("task_search", json!({"query": ""}), "query is required.".into()),
        ("task_get", json!({"task_id": "2026-01-01-nope"}), "No task 2026-01-01-nope.".into()),
        ("timeline", json!({"types": "obsrvation"}), "unknown event type \"obsrvation\"; did you mean observation?".into()),
        ("task_bootstrap", json!({"task_id": "2026-01-01-nope"}), format!("No task 2026-01-01-nope. Recent: {d}-tune-search")),
    ];
    for (tool, args, want) in cases {
        assert_eq!(c.err(tool, args).await, want, "{tool}");
    }
    assert_eq!(
        c.ok("task_search", json!({"query": "nothing"})).await,
        "No matching observations for \"nothing\"."
    );
    c.close().await;
}

#[tokio::test]
async fn read_grant_lists_five_tools_and_refuses_observe() {
    let dir = repo();
    let c = Client::spawn(dir.path(), &["--grant", "read"]).await;
    let names: Vec<String> =
        c.0.list_all_tools()
            .await
            .unwrap()
            .iter()
            .map(|t| t.name.to_string())
            .collect();
    assert_eq!(
        names,
        vec![
            "task_search",
            "task_get",
            "timeline",
            "task_query",
            "task_bootstrap"
        ]
    );
    assert_eq!(
        c.err("observe", json!({"text": "sneaky"})).await,
        "observe needs the cairn/observe capability, which this server was not granted."
    );
    c.close().await;
    assert_eq!(event_count(dir.path()), 0);
}

#[tokio::test]
async fn two_servers_on_one_project_see_each_other() {
    let dir = repo();
    let d = today();
    let a = Client::spawn(dir.path(), &[]).await;
    let b = Client::spawn(dir.path(), &[]).await;
    let tune = format!("{d}-tune-search-ranking");
    a.ok("task_create", json!({"name": "tune search ranking"}))
        .await;
    // B sees A's task on its next call.
    assert!(
        b.ok("task_bootstrap", json!({"task_id": tune}))
            .await
            .starts_with(&format!("{tune}  [active]"))
    );
    assert_eq!(
        b.ok("observe", json!({"text": "from b"})).await,
        format!("Observed on {tune}.")
    );
    assert!(a.ok("task_get", json!({})).await.contains("\n    - from b"));
    // Both write at once; nothing is lost and no error surfaces.
    let wa = async {
        for i in 0..25 {
            a.ok("observe", json!({"text": format!("a {i}")})).await;
        }
    };
    let wb = async {
        for i in 0..25 {
            b.ok("observe", json!({"text": format!("b {i}")})).await;
        }
    };
    tokio::join!(wa, wb);
    let tl = a
        .ok("timeline", json!({"types": "observation", "limit": 100}))
        .await;
    assert!(tl.starts_with(&format!("{tune} — last 51 events")), "{tl}");
    a.close().await;
    b.close().await;
    assert_eq!(event_count(dir.path()), 52);
}
