//! End to end over real stdio: spawn the built `cairn serve` in a temporary
//! git repository and drive it with rmcp's client through the story of seed
//! 000; grants; two servers on one project.

use std::path::Path;
use std::process::Stdio;

use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::process::Command;

mod mcpfx;

struct Client(RunningService<RoleClient, ()>);

impl Client {
    async fn spawn(dir: &Path, args: &[&str]) -> Client {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_cairn"));
        cmd.arg("serve")
            .args(args)
            .current_dir(dir)
            .env_remove("CAIRN_DB");
        let (transport, _) = TokioChildProcess::builder(cmd)
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        Client(().serve(transport).await.unwrap())
    }

    async fn call(&self, tool: &str, args: Value) -> (String, bool) {
        mcpfx::call_tool(&self.0, tool, args).await
    }

    async fn ok(&self, tool: &str, args: Value) -> String {
        let (text, err) = self.call(tool, args).await;
        assert!(!err, "{tool} failed: {text}");
        text
    }

    async fn err(&self, tool: &str, args: Value) -> String {
        let (text, err) = self.call(tool, args).await;
        assert!(err, "{tool} succeeded: {text}");
        text
    }

    async fn close(self) {
        self.0.cancel().await.unwrap();
    }
}

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
    let d = today();
    let tune = format!("{d}-tune-search-ranking");
    let prefix = format!("{d}-add-prefix-query-support");
    let token = format!("{d}-tokenizer-fix");
    let c = Client::spawn(dir.path(), &[]).await;
    assert_eq!(c.0.list_all_tools().await.unwrap().len(), 14);
    assert_eq!(
        c.err("task_bootstrap", json!({})).await,
        "No task to bootstrap; pass task_id or select a task first."
    );
    assert_eq!(
        c.ok("task_create", json!({"name": "tune search ranking"}))
            .await,
        format!("Created {tune}.")
    );
    assert_eq!(
        c.ok(
            "observe",
            json!({"text": "bm25 ranking confirmed against t/cairn-search.lisp"})
        )
        .await,
        format!("Observed on {tune}.")
    );
    assert_eq!(
        c.ok("task_fork", json!({"name": "add prefix query support"}))
            .await,
        format!("Forked {prefix} from {tune} (phase-of).")
    );
    assert_eq!(
        c.ok("task_create", json!({"name": "tokenizer fix"})).await,
        format!("Created {token}.")
    );
    assert_eq!(
        c.ok(
            "task_link",
            json!({"target_id": token, "edge_type": "depends-on"})
        )
        .await,
        format!("Linked {prefix} -> {token} (depends-on).")
    );
    assert_eq!(
        c.ok(
            "task_set_metadata",
            json!({"key": "acceptance", "value": "prefix queries return ranked snippets"})
        )
        .await,
        format!("Set acceptance on {prefix}.")
    );
    assert_eq!(
        c.ok(
            "observe",
            json!({"text": "prefix queries need a query parser change in src/search.rs:45-78"})
        )
        .await,
        format!("Observed on {prefix}.")
    );
    // The frontier moves: the phase waits on the tokenizer fix until it completes.
    let frontier = json!({"query": "(query \"plan-frontier\")"});
    assert_eq!(
        c.ok("task_query", frontier.clone()).await,
        "No matching tasks."
    );
    assert_eq!(
        c.ok(
            "task_update_status",
            json!({"status": "completed", "task_id": token})
        )
        .await,
        format!("{token} is now completed.")
    );
    assert_eq!(
        c.ok("task_query", frontier).await,
        format!(
            "1 task:\n- {prefix} (active) obs=1 edges=2\n    acceptance: prefix queries return ranked snippets"
        )
    );
    assert_eq!(
        c.ok(
            "task_query",
            json!({"query": "(-> (current) (:back :phase-of) (:ids))"})
        )
        .await,
        format!("1 task:\n- {tune}")
    );
    assert_eq!(
        c.err(
            "task_query",
            json!({"query": "(-> (current) (:set-status! \"completed\"))"})
        )
        .await,
        "Query error: Mutations need the task_query_write surface; task_query is read-only."
    );
    assert_eq!(
        c.ok("task_search", json!({"query": "prefix query*"})).await,
        format!(
            "1. [{prefix}]  ({d})\n    [prefix] queries need a [query] parser change in src/search.rs:45-78"
        )
    );
    // timeline with paging: the prefix phase has create(3), link(6), set-metadata(7), observation(8).
    let page1 = c.ok("timeline", json!({"limit": 2})).await;
    assert_eq!(
        page1,
        format!(
            "{prefix} — last 2 events\n  8  observation  prefix queries need a query parser change in src/search.rs:45-78\n  7  task.set-metadata  acceptance = prefix queries return ranked snippets"
        )
    );
    let page2 = c.ok("timeline", json!({"limit": 2, "before_seq": 7})).await;
    assert_eq!(
        page2,
        format!(
            "{prefix} — last 2 events\n  6  task.link  → {token} (depends-on)\n  3  task.create"
        )
    );
    let handoff = c
        .ok(
            "handoff",
            json!({"summary": "prefix queries land; tokenizer fix is next"}),
        )
        .await;
    let root = dir.path().canonicalize().unwrap();
    let lead = format!(
        "Handoff scaffolded for {prefix} at {}/.cairn/tasks/{prefix}/",
        root.display()
    );
    assert!(handoff.starts_with(&lead), "{handoff}");
    assert!(
        handoff.ends_with("_prefix-queries-land-tokenizer-fix-is-next.md"),
        "{handoff}"
    );
    let note = handoff.trim_start_matches(&format!("Handoff scaffolded for {prefix} at "));
    let body = std::fs::read_to_string(note).unwrap();
    assert!(
        body.starts_with(&format!("---\ntask: {prefix}\n")),
        "{body}"
    );
    assert!(
        body.ends_with("## Recent work\n\n## Next steps\n"),
        "{body}"
    );
    c.close().await;

    // A fresh process: no current task until bootstrap names one.
    let c2 = Client::spawn(dir.path(), &[]).await;
    assert_eq!(
        c2.err("task_get", json!({})).await,
        "No current task; create or select one first."
    );
    let boot = c2.ok("task_bootstrap", json!({"task_id": prefix})).await;
    let rel = note.trim_start_matches(&format!("{}/", root.display()));
    let digest = cairn::tools::render::one_line(
        &format!("Handoff: prefix queries land; tokenizer fix is next → {rel}"),
        140,
    );
    assert_eq!(
        boot,
        format!(
            "{prefix}  [active]\n  add prefix query support\n  parent: {tune}\n  edges:\n    depends-on {token}\n  metadata:\n    acceptance = prefix queries return ranked snippets\n  recent:\n    - {digest}\n    - prefix queries need a query parser change in src/search.rs:45-78\n  handoffs:\n    - prefix queries land; tokenizer fix is next ({rel})"
        )
    );
    assert!(
        c2.ok("task_get", json!({}))
            .await
            .starts_with(&format!("{prefix}  [active]"))
    );
    c2.close().await;
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
