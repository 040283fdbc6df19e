//! Issue 23's write path at project scale, with the per-task logs on (a
//! git repository with its `.cairn/` added to the index):
//!
//! 1. `task_create` over MCP stdio: the built `cairn serve`, driven by
//!    rmcp's client, creates `CAIRN_BENCH_TASKS` (default 10,000) tasks, one
//!    call each, shaped like the project (one plan per 10 tasks:
//!    a `task_create` of the plan, then nine `task_create`s of its steps; the
//!    links are not timed). Prints the rate and the per-call p50/p99 per
//!    thousand, so a cost that grows with the store shows.
//! 2. A CLI call on the unchanged project, start to exit: `cairn show SLUG`,
//!    `cairn query '(-> (current) (:ids))'` and `cairn --version` (the
//!    process floor), `CAIRN_BENCH_ROUNDS` (default 40) runs each after two
//!    warm-ups; median, p90 and min.
//!
//! `CAIRN_BENCH_BIN` runs another build of `cairn` (a copy of the binary
//! before a change) in place of this one.
//!
//! Harness-less (a timed loop, numbers printed, nothing asserted):
//! `cargo bench --bench project10k`.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

#[path = "support/lcg.rs"]
#[allow(dead_code)]
mod lcg;

const VERBS: &[&str] = &[
    "wire", "port", "tune", "refactor", "document", "measure", "split", "cache", "index",
    "validate", "migrate", "profile", "harden", "stream", "render", "parse",
];
const NOUNS: &[&str] = &[
    "tokenizer",
    "parser",
    "scheduler",
    "exporter",
    "importer",
    "renderer",
    "planner",
    "checkpoint",
    "journal",
    "watcher",
    "resolver",
    "compiler",
    "listener",
    "router",
    "encoder",
    "decoder",
    "allocator",
    "registry",
    "gateway",
    "notifier",
];
const PLACES: &[&str] = &[
    "billing",
    "search",
    "storage",
    "network",
    "frontend",
    "backend",
    "telemetry",
    "auth",
    "payments",
    "reports",
    "onboarding",
    "sync",
];

/// A varied, descriptive task name (never thin).
fn name(rng: &mut lcg::Lcg, i: usize) -> String {
    fn pick(rng: &mut lcg::Lcg, words: &[&'static str]) -> &'static str {
        words[rng.below(words.len() as u64) as usize]
    }
    format!(
        "{} the {} {} for the {} module {i}",
        pick(rng, VERBS),
        pick(rng, PLACES),
        pick(rng, NOUNS),
        pick(rng, PLACES)
    )
}

/// The `cairn` binary measured: `CAIRN_BENCH_BIN`, else this build's.
fn bin() -> std::path::PathBuf {
    std::env::var_os("CAIRN_BENCH_BIN")
        .map(Into::into)
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_cairn").into())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn pct(sorted: &[Duration], p: usize) -> Duration {
    sorted[(sorted.len() * p / 100).min(sorted.len() - 1)]
}

fn git(dir: &Path, args: &[&str]) -> Result<(), Box<dyn std::error::Error>> {
    let ok = Command::new("git")
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()?
        .success();
    if !ok {
        return Err(format!("git {args:?} failed").into());
    }
    Ok(())
}

fn create_over_mcp(dir: &Path, tasks: usize) -> Result<String, Box<dyn std::error::Error>> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let mut cmd = tokio::process::Command::new(bin());
        cmd.arg("serve").current_dir(dir).env_remove("CAIRN_DB");
        let (transport, _) = TokioChildProcess::builder(cmd)
            .stderr(Stdio::null())
            .spawn()?;
        let client = ().serve(transport).await?;
        let mut rng = lcg::Lcg(23);
        let mut window: Vec<Duration> = Vec::with_capacity(1000);
        let mut all: Vec<Duration> = Vec::with_capacity(tasks);
        let mut plan = String::new();
        let mut first = String::new();
        let start = Instant::now();
        let mut window_start = Instant::now();
        for i in 0..tasks {
            let args = json!({"name": name(&mut rng, i)});
            let t0 = Instant::now();
            let res = client
                .call_tool(
                    CallToolRequestParams::new("task_create")
                        .with_arguments(args.as_object().cloned().unwrap_or_default()),
                )
                .await?;
            let took = t0.elapsed();
            window.push(took);
            all.push(took);
            if res.is_error == Some(true) {
                return Err(format!("task_create failed: {:?}", res.content).into());
            }
            let slug = res
                .structured_content
                .as_ref()
                .and_then(|v| v.get("slug"))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            if i == 0 {
                first = slug.clone();
            }
            if i % 10 == 0 {
                plan = slug;
            } else {
                // Shape: every step is a phase of its plan (not timed).
                let args = json!({"task_id": slug, "target_id": plan, "edge_type": "phase-of"});
                client
                    .call_tool(
                        CallToolRequestParams::new("task_link")
                            .with_arguments(args.as_object().cloned().unwrap_or_default()),
                    )
                    .await?;
            }
            if window.len() == 1000 || i + 1 == tasks {
                let spent = window.iter().sum::<Duration>();
                window.sort();
                println!(
                    "  tasks {:>6}..{:<6} {:>7.0} creates/s  p50 {:.3} ms  p99 {:.3} ms  (wall incl. links {:.1?})",
                    i + 1 - window.len(),
                    i + 1,
                    window.len() as f64 / spent.as_secs_f64(),
                    ms(pct(&window, 50)),
                    ms(pct(&window, 99)),
                    window_start.elapsed()
                );
                window.clear();
                window_start = Instant::now();
            }
        }
        let spent = all.iter().sum::<Duration>();
        all.sort();
        println!(
            "task_create over MCP stdio, {tasks} tasks: {:.0} creates/s (time in task_create calls {spent:.1?}, wall incl. links {:.1?}), p50 {:.3} ms, p99 {:.3} ms",
            tasks as f64 / spent.as_secs_f64(),
            start.elapsed(),
            ms(pct(&all, 50)),
            ms(pct(&all, 99)),
        );
        client.cancel().await?;
        Ok(first)
    })
}

fn cli(
    dir: &Path,
    label: &str,
    args: &[&str],
    rounds: usize,
) -> Result<(), Box<dyn std::error::Error>> {
    let run = || -> Result<Duration, Box<dyn std::error::Error>> {
        let t0 = Instant::now();
        let out = Command::new(bin())
            .args(args)
            .current_dir(dir)
            .env_remove("CAIRN_DB")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output()?;
        let took = t0.elapsed();
        if !out.status.success() {
            return Err(format!(
                "cairn {args:?} failed: {}",
                String::from_utf8_lossy(&out.stderr)
            )
            .into());
        }
        Ok(took)
    };
    run()?;
    run()?;
    let mut times = (0..rounds).map(|_| run()).collect::<Result<Vec<_>, _>>()?;
    times.sort();
    println!(
        "cli {label}: median {:.2} ms, p90 {:.2} ms, min {:.2} ms ({rounds} runs)",
        ms(pct(&times, 50)),
        ms(pct(&times, 90)),
        ms(times[0])
    );
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let tasks: usize = std::env::var("CAIRN_BENCH_TASKS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000);
    let rounds: usize = std::env::var("CAIRN_BENCH_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(40);
    // CAIRN_BENCH_PROJECT=DIR keeps the project in DIR; when DIR already
    // holds one, the creates are skipped and only the CLI calls measured
    // (one project measured by two builds).
    let kept = std::env::var_os("CAIRN_BENCH_PROJECT").map(std::path::PathBuf::from);
    let temp = tempfile::tempdir()?;
    let dir = kept.clone().unwrap_or_else(|| temp.path().to_path_buf());
    let dir = dir.as_path();
    let first = match std::fs::read_to_string(dir.join("first-slug")) {
        Ok(first) if kept.is_some() => {
            git(dir, &["add", ".cairn"])?;
            first
        }
        _ => {
            std::fs::create_dir_all(dir)?;
            git(dir, &["init", "-q"])?;
            let first = create_over_mcp(dir, tasks)?;
            std::fs::write(dir.join("first-slug"), &first)?;
            git(dir, &["add", ".cairn"])?;
            first
        }
    };
    let logs = std::fs::read_dir(dir.join(".cairn/tasks"))?.count();
    println!("project: {tasks} tasks, {logs} task logs, .cairn added to the git index");
    cli(dir, "cairn --version", &["--version"], rounds)?;
    cli(
        dir,
        &format!("cairn show {first}"),
        &["show", &first],
        rounds,
    )?;
    cli(
        dir,
        "cairn query --current SLUG '(-> (current) (:ids))'",
        &["query", "--current", &first, "(-> (current) (:ids))"],
        rounds,
    )?;
    cli(
        dir,
        "cairn current SLUG (select it)",
        &["current", &first],
        1,
    )?;
    cli(
        dir,
        "cairn note TEXT (a write)",
        &["note", "a note from the command line"],
        rounds,
    )?;
    // Without a git index (a repository before its first `git add`): an
    // open cannot tell that nothing moved and scans the logs.
    std::fs::remove_file(dir.join(".git/index"))?;
    cli(
        dir,
        &format!("cairn show {first}, no git index"),
        &["show", &first],
        rounds,
    )?;
    Ok(())
}
