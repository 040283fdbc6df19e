//! The served MCP surface, in process over an in-memory duplex through the
//! real JSON-RPC layer: the contract snapshots of `tools/list`,
//! `prompts/list` and `resources/list`, the instructions, grants, prompts and
//! resources.

use cairn::mcp::CairnServer;
use cairn::mcp::server::State;
use cairn::session::{Session, parse_grants};
use cairn::store::Store;
use cairn::tq::engine::Engine;
use rmcp::model::{
    CallToolRequestParams, GetPromptRequestParams, ReadResourceRequestParams, ResourceContents,
};
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

mod mcpfx;

async fn connect(dir: &tempfile::TempDir, grants: &str) -> RunningService<RoleClient, ()> {
    let store = Store::open(&dir.path().join(".cairn/cairn.db")).unwrap();
    let server = CairnServer::new(State {
        store: cairn::store::Db::Sqlite(store),
        session: Session::with_grants(parse_grants(grants).unwrap()),
        engine: Engine::new(),
        root: dir.path().to_path_buf(),
    });
    let (a, b) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(a).await {
            let _ = running.waiting().await;
        }
    });
    ().serve(b).await.unwrap()
}

async fn call(c: &RunningService<RoleClient, ()>, tool: &str, args: Value) -> (String, bool) {
    mcpfx::call_tool(c, tool, args).await
}

#[tokio::test]
async fn tools_prompts_resources_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let c = connect(&dir, "read,observe,write").await;
    let tools = c.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 14);
    insta::assert_snapshot!("tools_list", serde_json::to_string_pretty(&tools).unwrap());
    let prompts = c.list_all_prompts().await.unwrap();
    assert_eq!(prompts.len(), 7);
    insta::assert_snapshot!(
        "prompts_list",
        serde_json::to_string_pretty(&prompts).unwrap()
    );
    let resources = c.list_all_resources().await.unwrap();
    assert_eq!(resources.len(), 7);
    insta::assert_snapshot!(
        "resources_list",
        serde_json::to_string_pretty(&resources).unwrap()
    );
    let info = c.peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().unwrap().name, "cairn");
    assert_eq!(
        info.instructions.as_deref(),
        Some(cairn::mcp::prompts::INSTRUCTIONS)
    );
    c.cancel().await.unwrap();
}

#[tokio::test]
async fn annotations_and_meta_follow_the_capability() {
    let dir = tempfile::tempdir().unwrap();
    let c = connect(&dir, "read,observe,write").await;
    let tools = c.list_all_tools().await.unwrap();
    let v: Vec<Value> = tools
        .iter()
        .map(|t| serde_json::to_value(t).unwrap())
        .collect();
    let get = |name: &str| v.iter().find(|t| t["name"] == name).unwrap().clone();
    assert_eq!(
        get("observe")["_meta"],
        json!({"cairn/capability": "observe"})
    );
    assert_eq!(
        get("observe")["annotations"],
        json!({"readOnlyHint": false, "destructiveHint": false, "idempotentHint": false, "openWorldHint": false})
    );
    assert_eq!(
        get("task_get")["annotations"],
        json!({"readOnlyHint": true, "openWorldHint": false})
    );
    assert_eq!(
        get("task_sever")["annotations"]["destructiveHint"],
        json!(true)
    );
    assert_eq!(
        get("task_query_write")["annotations"]["destructiveHint"],
        json!(true)
    );
    assert_eq!(
        get("task_link")["annotations"]["idempotentHint"],
        json!(true)
    );
    assert_eq!(
        get("task_create")["annotations"]["destructiveHint"],
        json!(false)
    );
    let destructive: Vec<&str> = v
        .iter()
        .filter(|t| t["annotations"]["destructiveHint"] == json!(true))
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(destructive, vec!["task_sever", "task_query_write"]);
    let idempotent_writes: Vec<&str> = v
        .iter()
        .filter(|t| {
            t["annotations"]["readOnlyHint"] == json!(false)
                && t["annotations"]["idempotentHint"] == json!(true)
        })
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        idempotent_writes,
        vec![
            "task_link",
            "task_sever",
            "task_set_metadata",
            "task_update_status",
            "task_query_write"
        ]
    );
    // Every optional parameter is optional in the schema.
    assert_eq!(get("task_fork")["inputSchema"]["required"], json!(["name"]));
    assert_eq!(get("timeline")["inputSchema"].get("required"), None);
    assert_eq!(
        get("task_set_metadata")["inputSchema"]["required"],
        json!(["key", "value"])
    );
    c.cancel().await.unwrap();
}

#[tokio::test]
async fn read_grant_lists_five_and_refuses_observe() {
    let dir = tempfile::tempdir().unwrap();
    let c = connect(&dir, "read").await;
    let names: Vec<String> = c
        .list_all_tools()
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
    let (text, is_error) = call(&c, "observe", json!({"text": "x"})).await;
    assert!(is_error);
    assert_eq!(
        text,
        "observe needs the cairn/observe capability, which this server was not granted."
    );
    let (text, is_error) = call(&c, "task_bootstrap", json!({})).await;
    assert!(is_error);
    assert_eq!(
        text,
        "No task to bootstrap; pass task_id or select a task first."
    );
    c.cancel().await.unwrap();
    let store = Store::open(&dir.path().join(".cairn/cairn.db")).unwrap();
    let n: i64 = store
        .conn()
        .query_row("SELECT count(*) FROM events", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 0);
}

#[tokio::test]
async fn protocol_faults_are_jsonrpc_errors() {
    let dir = tempfile::tempdir().unwrap();
    let c = connect(&dir, "read,observe,write").await;
    let err = c
        .call_tool(CallToolRequestParams::new("nope").with_arguments(Default::default()))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("Unknown tool nope."), "{err}");
    let err = c
        .call_tool(CallToolRequestParams::new("observe").with_arguments(Default::default()))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("missing field `text`"), "{err}");
    c.cancel().await.unwrap();
}

#[tokio::test]
async fn prompts_and_resources_serve_the_bodies() {
    let dir = tempfile::tempdir().unwrap();
    let c = connect(&dir, "read").await;
    let p = c
        .get_prompt(GetPromptRequestParams::new("cairn-method"))
        .await
        .unwrap();
    let body = serde_json::to_value(&p.messages[0]).unwrap();
    assert_eq!(
        body["content"]["text"],
        json!(include_str!("../src/mcp/prompts/cairn-method.md"))
    );
    for entry in cairn::mcp::prompts::prompts() {
        let r = c
            .read_resource(ReadResourceRequestParams::new(entry.uri))
            .await
            .unwrap();
        match &r.contents[0] {
            ResourceContents::TextResourceContents {
                text,
                mime_type,
                uri,
                ..
            } => {
                assert_eq!(text, entry.body);
                assert_eq!(mime_type.as_deref(), Some("text/markdown"));
                assert_eq!(uri, entry.uri);
            }
            other => panic!("{other:?}"),
        }
    }
    assert!(
        c.read_resource(ReadResourceRequestParams::new("cairn://prompts/nope"))
            .await
            .is_err()
    );
    c.cancel().await.unwrap();
}

/// The JSON-RPC error code of a raw request sent as `method` with `params`.
async fn raw_error_code(
    c: &RunningService<RoleClient, ()>,
    method: &str,
    params: Option<Value>,
) -> (i32, String) {
    use rmcp::model::{ClientRequest, CustomRequest};
    use rmcp::service::ServiceError;
    let req = ClientRequest::CustomRequest(CustomRequest::new(method, params));
    match c.send_request(req).await {
        Err(ServiceError::McpError(e)) => (e.code.0, e.message.to_string()),
        other => panic!("{method}: expected a JSON-RPC error, got {other:?}"),
    }
}

#[tokio::test]
async fn malformed_tools_call_params_are_invalid_params() {
    let dir = tempfile::tempdir().unwrap();
    let c = connect(&dir, "read,observe,write").await;
    let bad = [
        Some(json!({"name": "observe", "arguments": []})),
        Some(json!({"name": null})),
        Some(json!({})),
        None,
    ];
    for params in bad {
        assert_eq!(
            raw_error_code(&c, "tools/call", params.clone()).await,
            (
                -32602,
                "tools/call needs params {\"name\": string, \"arguments\"?: object}.".to_string()
            ),
            "{params:?}"
        );
    }
    assert_eq!(
        raw_error_code(&c, "prompts/get", Some(json!({"name": 3}))).await,
        (-32602, "invalid params for prompts/get.".to_string())
    );
    assert_eq!(
        raw_error_code(&c, "no/such", None).await,
        (
            -32601,
            "Method not found: no/such. This server serves initialize, server/discover, ping, tools/list, tools/call, prompts/list, prompts/get, resources/list, resources/read, resources/templates/list, resources/subscribe, resources/unsubscribe, subscriptions/listen, logging/setLevel, completion/complete.".to_string()
        )
    );
    c.cancel().await.unwrap();
}

/// Issue 15 "Titles and schemas": every tool, prompt and resource has a
/// title; no input schema types anything `null`; `status`/`edge_type` are
/// enums; `limit` is bounded.
#[tokio::test]
async fn titles_enums_bounds_and_no_null_types() {
    let dir = tempfile::tempdir().unwrap();
    let c = connect(&dir, "read,observe,write").await;
    let tools: Vec<Value> = c
        .list_all_tools()
        .await
        .unwrap()
        .iter()
        .map(|t| serde_json::to_value(t).unwrap())
        .collect();
    let titled = tools.iter().filter(|t| t["title"].is_string()).count();
    assert_eq!(titled, 14);
    for t in &tools {
        let schema = t["inputSchema"].to_string();
        assert!(!schema.contains("\"null\""), "{}: {schema}", t["name"]);
        assert!(!schema.contains(":null"), "{}: {schema}", t["name"]);
    }
    let prop = |tool: &str, p: &str| {
        tools.iter().find(|t| t["name"] == tool).unwrap()["inputSchema"]["properties"][p].clone()
    };
    let edges = json!(["phase-of", "depends-on", "related"]);
    for tool in ["task_fork", "task_link", "task_sever"] {
        assert_eq!(prop(tool, "edge_type")["enum"], edges, "{tool}");
    }
    assert_eq!(
        prop("task_update_status", "status"),
        json!({
            "description": "One of `open`, `active`, `completed`, `abandoned`, `blocked` (any case).",
            "enum": ["open", "active", "completed", "abandoned", "blocked"],
            "type": "string"
        })
    );
    let limit = prop("task_search", "limit");
    assert_eq!(
        (&limit["minimum"], &limit["maximum"]),
        (&json!(1), &json!(50))
    );
    assert_eq!(limit["type"], "integer");
    assert_eq!(prop("task_get", "task_id")["type"], "string");
    let prompts = c.list_all_prompts().await.unwrap();
    assert!(prompts.iter().all(|p| p.title.is_some()));
    let resources = c.list_all_resources().await.unwrap();
    assert!(resources.iter().all(|r| r.title.is_some()));
    c.cancel().await.unwrap();
}
