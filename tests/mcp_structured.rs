//! Structured results over real stdio (spec/mcp.md "Structured results"):
//! `tools/list` declares an `outputSchema` for each of the fourteen tools and
//! `tools/call` returns `structuredContent` beside the unchanged text; errors
//! carry text only.

use std::process::Stdio;

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};
use tokio::process::Command;

fn today() -> String {
    let d = time::OffsetDateTime::now_utc().date();
    format!("{:04}-{:02}-{:02}", d.year(), u8::from(d.month()), d.day())
}

#[tokio::test(flavor = "current_thread")]
async fn output_schemas_and_structured_content_over_stdio() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cairn"));
    cmd.arg("serve")
        .current_dir(dir.path())
        .env_remove("CAIRN_DB");
    let (transport, _) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let c = ().serve(transport).await.unwrap();

    let tools = c.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 14);
    for t in &tools {
        let spec = cairn::tools::find(&t.name).unwrap();
        let schema = t.output_schema.as_deref().expect("an outputSchema");
        assert_eq!(schema, &(spec.output_schema)(), "{}", t.name);
        assert_eq!(schema.get("type"), Some(&json!("object")), "{}", t.name);
    }

    let call = |tool: &str, args: Value| {
        CallToolRequestParams::new(tool.to_string())
            .with_arguments(args.as_object().unwrap().clone())
    };
    let d = today();
    let res = c
        .call_tool(call("task_create", json!({"name": "fix CI"})))
        .await
        .unwrap();
    assert_eq!(
        res.content[0].as_text().unwrap().text,
        format!("Created {d}-fix-ci.")
    );
    assert_eq!(
        res.structured_content,
        Some(json!({
            "slug": format!("{d}-fix-ci"), "created": true, "current": true,
            "possibleDuplicates": []
        }))
    );
    let res = c
        .call_tool(call("task_query", json!({"query": "(-> (all) (:ids))"})))
        .await
        .unwrap();
    assert_eq!(
        res.content[0].as_text().unwrap().text,
        format!("1 task:\n- {d}-fix-ci")
    );
    assert_eq!(
        res.structured_content,
        Some(json!({"shape": "ids", "result": [format!("{d}-fix-ci")], "truncated": null}))
    );
    let res = c
        .call_tool(call("task_get", json!({"task_id": "nope"})))
        .await
        .unwrap();
    assert_eq!(res.is_error, Some(true));
    assert_eq!(res.structured_content, None);
    c.cancel().await.unwrap();
}
