//! `cairn call TOOL '{json}'` and a clean `cairn serve` start, as processes.

use std::process::{Command, Output, Stdio};

fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    dir
}

fn cairn(dir: &std::path::Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(args)
        .current_dir(dir)
        .env_remove("CAIRN_DB")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn today() -> String {
    let d = time::OffsetDateTime::now_utc().date();
    format!("{:04}-{:02}-{:02}", d.year(), u8::from(d.month()), d.day())
}

#[test]
fn call_prints_the_tool_text_and_exits_0_or_1() {
    let dir = repo();
    let out = cairn(
        dir.path(),
        &["call", "task_create", r#"{"name": "tune search ranking"}"#],
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("Created {}-tune-search-ranking.\n", today())
    );
    assert_eq!(out.status.code(), Some(0));
    let out = cairn(dir.path(), &["call", "task_bootstrap"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "No task to bootstrap; pass task_id or select a task first.\n"
    );
    assert_eq!(out.status.code(), Some(1));
    let slug = format!("{}-tune-search-ranking", today());
    let args = format!(r#"{{"text": "from the shell", "task_id": "{slug}"}}"#);
    let out = cairn(dir.path(), &["call", "observe", &args]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("Observed on {slug}.\n")
    );
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn call_protocol_faults_go_to_stderr() {
    let dir = repo();
    let out = cairn(dir.path(), &["call", "nope"]);
    assert_eq!(String::from_utf8_lossy(&out.stderr), "Unknown tool nope.\n");
    assert!(out.stdout.is_empty());
    assert_eq!(out.status.code(), Some(1));
    let out = cairn(dir.path(), &["call", "observe", "{not json"]);
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("arguments are not valid JSON: "));
    assert_eq!(out.status.code(), Some(1));
    let out = cairn(dir.path(), &["call", "observe", "{}"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "Invalid arguments for observe: missing field `text`\n"
    );
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn serve_starts_clean_and_exits_0_when_stdin_closes() {
    let dir = repo();
    let out = cairn(dir.path(), &["serve"]);
    assert!(
        out.stdout.is_empty(),
        "{:?}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(out.status.code(), Some(0));
    let out = cairn(dir.path(), &["serve", "--grant", "admin"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: unknown capability \"admin\"; expected read, observe or write.\n"
    );
    assert_eq!(out.status.code(), Some(2));
}
