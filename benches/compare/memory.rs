//! Peak memory of one `knowledge` run, measured in a child process.

use std::path::Path;

use cairn::session::Session;
use cairn::store::Store;
use cairn::tq::Surface;
use cairn::tq::engine::Engine;

/// Peak memory of one `knowledge` run, measured in a child process (this
/// binary re-run with `CAIRN_BENCH_KNOWLEDGE_CHILD=path`): VmHWM after
/// opening the store and running a trivial query, and after `knowledge`.
pub fn knowledge_child(path: &str, current: &str) {
    let store = Store::open(Path::new(path)).expect("open");
    let engine = Engine::new();
    let mut session = Session::new();
    session.current = Some(current.to_string());
    engine
        .run(&store, &session, "(-> (current) (:ids))", Surface::Read)
        .expect("warm");
    let before = vm_hwm_kb();
    let text = engine
        .run(&store, &session, "(query \"knowledge\")", Surface::Read)
        .expect("knowledge");
    let after = vm_hwm_kb();
    println!("{before} {after} {}", text.len());
}

pub fn vm_hwm_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

pub fn knowledge_memory(path: &Path, current: &str) -> (u64, u64) {
    let exe = std::env::current_exe().expect("current exe");
    let out = std::process::Command::new(exe)
        .env("CAIRN_BENCH_KNOWLEDGE_CHILD", path)
        .env("CAIRN_BENCH_CURRENT", current)
        .output()
        .expect("run child");
    let text = String::from_utf8_lossy(&out.stdout);
    let nums: Vec<u64> = text
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    match nums.as_slice() {
        [before, after, _] => (*before, *after),
        _ => panic!(
            "knowledge child said {text:?} / {}",
            String::from_utf8_lossy(&out.stderr)
        ),
    }
}

/// The calls of the serve memory mix: `(tool, arguments)`, each issued
/// [`SERVE_ROUNDS`] times.
fn serve_mix(current: &str) -> Vec<(&'static str, serde_json::Value)> {
    use serde_json::json;
    vec![
        ("task_query", json!({ "query": "(query \"knowledge\")" })),
        ("task_query", json!({ "query": "(all)" })),
        (
            "task_query",
            json!({ "query": "(-> (all) (:select :slug :name :status :description))" }),
        ),
        (
            "task_query",
            json!({ "query": "(-> (all) (:group-by :status))" }),
        ),
        ("task_query", json!({ "query": "(-> (all) (:ids))" })),
        ("task_query", json!({ "query": "(query \"ready\")" })),
        (
            "task_query",
            json!({ "query": "(query \"plan-frontier\")" }),
        ),
        ("task_search", json!({ "query": "parser", "limit": 50 })),
        ("task_get", json!({ "task_id": current })),
        (
            "timeline",
            json!({ "task_id": current, "full": true, "limit": 1000 }),
        ),
        ("task_bootstrap", json!({ "task_id": current })),
    ]
}

/// Rounds of [`serve_mix`].
const SERVE_ROUNDS: usize = 3;

/// Peak RSS of `cairn serve` (stdio, the built binary) on the store at
/// `path` under the heavy read mix (issue 23: "`cairn serve` peak RSS under
/// 200 MiB for the heavy mix at 100k"): VmHWM in kB after `initialize` and
/// one `task_get`, then after [`SERVE_ROUNDS`] rounds of [`serve_mix`]
/// (knowledge, every task, projections and groups over every task, ready,
/// search, a full timeline), and the largest response in bytes.
pub fn serve_memory(path: &Path, current: &str) -> (u64, u64, usize) {
    use rmcp::ServiceExt;
    use rmcp::model::CallToolRequestParams;
    use rmcp::transport::TokioChildProcess;

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn"));
        cmd.arg("serve")
            .arg("--db")
            .arg(path)
            .env_remove("CAIRN_DB")
            .stderr(std::process::Stdio::null());
        let child = TokioChildProcess::new(cmd).expect("spawn cairn serve");
        let pid = child.id().expect("pid");
        let client = ().serve(child).await.expect("initialize");
        let call = |name: &'static str, args: serde_json::Value| {
            let client = &client;
            async move {
                let p = CallToolRequestParams::new(name)
                    .with_arguments(args.as_object().cloned().unwrap_or_default());
                let out = client.call_tool(p).await.expect("call");
                serde_json::to_string(&out).map(|s| s.len()).unwrap_or(0)
            }
        };
        call("task_get", serde_json::json!({ "task_id": current })).await;
        let before = pid_hwm_kb(pid);
        let mut largest = 0;
        for _ in 0..SERVE_ROUNDS {
            for (name, args) in serve_mix(current) {
                largest = largest.max(call(name, args).await);
            }
        }
        let after = pid_hwm_kb(pid);
        let _ = client.cancel().await;
        (before, after, largest)
    })
}

/// VmHWM of process `pid` in kB (0 when unreadable).
fn pid_hwm_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}
