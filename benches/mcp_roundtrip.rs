//! The `task_query` round trip over real stdio on a 1,000-task store: spawn
//! the built `cairn serve`, call `task_query` repeatedly through rmcp's
//! client, print the median and p90 per query (a timed loop; run with
//! `cargo bench --bench mcp_roundtrip`).

use std::process::Stdio;
use std::time::{Duration, Instant};

use cairn::store::{EdgeType, NewEvent, Store};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::json;

const TASKS: usize = 1_000;
const ROUNDS: usize = 300;

fn seed(dir: &std::path::Path) {
    let store = Store::open(&dir.join(".cairn/cairn.db")).expect("open");
    let ts = 1_782_138_605;
    let mut events = Vec::new();
    for i in 0..TASKS {
        let slug = format!("2026-06-22-bench-task-{i:04}");
        events.push(NewEvent::task_create(
            "bench",
            ts + i as i64,
            &slug,
            Some("a benchmark task"),
            None,
        ));
        if i % 10 != 0 {
            let parent = format!("2026-06-22-bench-task-{:04}", i - i % 10);
            events.push(NewEvent::fork(
                "bench",
                ts + i as i64,
                &parent,
                &slug,
                EdgeType::PhaseOf,
            ));
        }
        if i % 10 > 1 {
            let prev = format!("2026-06-22-bench-task-{:04}", i - 1);
            events.push(NewEvent::link(
                "bench",
                ts + i as i64,
                &slug,
                &prev,
                EdgeType::DependsOn,
            ));
        }
        events.push(NewEvent::observation(
            "bench",
            ts + i as i64,
            &slug,
            &format!("observation number {i} about ranking"),
        ));
    }
    store.write(&events).expect("seed");
}

fn main() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join(".git")).expect(".git");
    seed(dir.path());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn"));
        cmd.arg("serve").current_dir(dir.path()).env_remove("CAIRN_DB");
        let (transport, _) = TokioChildProcess::builder(cmd)
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn");
        let client = ().serve(transport).await.expect("initialize");
        client
            .call_tool(
                CallToolRequestParams::new("task_bootstrap")
                    .with_arguments(json!({"task_id": "2026-06-22-bench-task-0500"}).as_object().cloned().unwrap_or_default()),
            )
            .await
            .expect("bootstrap");
        for query in [
            "(-> (active) (:count))",
            "(query \"plan-frontier\")",
            "(-> (all) (:where (matches :slug \"task-09\")) (:select :slug :status :obs-count))",
        ] {
            let args = json!({"query": query}).as_object().cloned().unwrap_or_default();
            let mut times: Vec<Duration> = Vec::with_capacity(ROUNDS);
            for _ in 0..ROUNDS {
                let start = Instant::now();
                let res = client
                    .call_tool(CallToolRequestParams::new("task_query").with_arguments(args.clone()))
                    .await
                    .expect("call");
                times.push(start.elapsed());
                assert_ne!(res.is_error, Some(true), "{query}: {:?}", res.content);
            }
            times.sort();
            println!(
                "task_query over stdio, {TASKS} tasks, {ROUNDS} rounds: {query}\n  median {:.3} ms, p90 {:.3} ms, min {:.3} ms",
                times[ROUNDS / 2].as_secs_f64() * 1e3,
                times[ROUNDS * 9 / 10].as_secs_f64() * 1e3,
                times[0].as_secs_f64() * 1e3,
            );
        }
        client.cancel().await.expect("cancel");
    });
}
