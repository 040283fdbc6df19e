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
    // `cairn call` follows the verbs' current task (issue 27): the task
    // just created is current, so bootstrap orients on it.
    let out = cairn(dir.path(), &["call", "task_bootstrap"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!(
            "{}-tune-search-ranking  [active]\n  tune search ranking\n",
            today()
        )
    );
    assert_eq!(out.status.code(), Some(0));
    let out = cairn(dir.path(), &["call", "--current", "nope", "task_bootstrap"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("No task nope. Recent: {}-tune-search-ranking\n", today())
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
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "Unknown tool nope; cairn call --help lists the tools.\n"
    );
    assert!(out.stdout.is_empty());
    assert_eq!(out.status.code(), Some(2));
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
    // --grant is a clap value enum with a comma delimiter.
    let out = cairn(dir.path(), &["serve", "--grant", "read,admin"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: invalid value 'admin' for '--grant <CAPS>'\n  \
         [possible values: read, observe, write]\n\nFor more information, try '--help'.\n"
    );
    assert_eq!(out.status.code(), Some(2));
    let out = cairn(dir.path(), &["serve", "--grant", "read,observe"]);
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn call_takes_key_value_words() {
    let dir = repo();
    let out = cairn(
        dir.path(),
        &["call", "task_create", "name=tune search ranking"],
    );
    let slug = format!("{}-tune-search-ranking", today());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("Created {slug}.\n")
    );
    assert_eq!(out.status.code(), Some(0));
    // Typed values where the schema wants a boolean or a number.
    let task = format!("task_id={slug}");
    let out = cairn(
        dir.path(),
        &[
            "call",
            "timeline",
            &task,
            "full=true",
            "limit=1",
            "types=task.create",
        ],
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).lines().next(),
        Some(format!("{slug} — last 1 event").as_str()),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(0));
    let out = cairn(dir.path(), &["call", "observe", "text"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: expected key=value (or one JSON object), got text.\n"
    );
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn unknown_tool_exits_2_with_the_nearest_name() {
    let dir = repo();
    let out = cairn(dir.path(), &["call", "task_creat"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "Unknown tool task_creat; did you mean task_create?\n"
    );
    assert!(out.stdout.is_empty());
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn call_help_lists_every_tool_with_its_summary() {
    let dir = repo();
    let out = cairn(dir.path(), &["call", "--help"]);
    let help = String::from_utf8_lossy(&out.stdout);
    let width = "task_update_status".len();
    for t in cairn::tools::tools() {
        let line = format!("  {:width$}  {}\n", t.name, t.summary);
        assert!(help.contains(&line), "{line:?} in {help}");
    }
    assert_eq!(help.matches("\n  task_").count(), 11, "{help}");
}
