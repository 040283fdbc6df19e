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
