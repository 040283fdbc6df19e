//! Per-task logs in git (spec/store.md "The plan travels with the
//! repository"): real `git` clones and union merges, a deleted database, the
//! crash gap between commit and append, worktrees sharing one store through
//! `cairn serve`, a server seeing merged lines, malformed lines, concurrent
//! appenders.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use cairn::store::Store;
use cairn::store::log::LogLine;
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

const CAIRN: &str = env!("CARGO_BIN_EXE_cairn");

mod common;
use common::cairn_in;
mod mcpfx;

/// `cairn call TOOL JSON` in `dir`, asserting success; returns stdout.
fn call(dir: &Path, tool: &str, args: Value) -> String {
    let (out, err, code) = cairn_in(dir, &["call", tool, &args.to_string()]);
    assert_eq!(code, 0, "{tool} {args}: {out}{err}");
    out.trim_end().to_string()
}

/// Creates a task in `dir`; returns its slug.
fn create(dir: &Path, name: &str) -> String {
    let out = call(dir, "task_create", json!({ "name": name }));
    out.strip_prefix("Created ")
        .and_then(|s| s.strip_suffix('.'))
        .unwrap_or_else(|| panic!("unexpected: {out}"))
        .to_string()
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A repository at `dir` with one commit (a README).
fn init_repo(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    git(dir, &["init", "-q", "-b", "main"]);
    std::fs::write(dir.join("README"), "x\n").unwrap();
    git(dir, &["add", "README"]);
    git(dir, &["commit", "-q", "-m", "init"]);
}

fn commit_plan(dir: &Path, msg: &str) {
    git(dir, &["add", ".cairn"]);
    git(dir, &["commit", "-q", "-m", msg]);
}

/// Every line of every log under `tasks`, as text.
fn all_lines(tasks: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(tasks).unwrap() {
        let p = entry.unwrap().path().join("events.ndjson");
        if let Ok(text) = std::fs::read_to_string(&p) {
            out.extend(text.lines().map(str::to_string));
        }
    }
    out
}

/// The digest of a fresh store folded from exactly `lines` (written into
/// one log per subject under a new store directory).
fn digest_of_lines(lines: &[String]) -> (String, i64) {
    let t = tempfile::tempdir().unwrap();
    let store_dir = t.path().join(".cairn");
    for l in lines {
        let parsed = LogLine::parse(l).unwrap();
        let p = store_dir
            .join("tasks")
            .join(cairn::store::log::dir_name(&parsed.line.task_id))
            .join("events.ndjson");
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(&p)
            .unwrap();
        std::io::Write::write_all(&mut f, format!("{l}\n").as_bytes()).unwrap();
    }
    let st = Store::open(&store_dir.join("cairn.db")).unwrap();
    (st.digest().unwrap(), st.event_count().unwrap())
}

fn store_digest(repo: &Path) -> (String, i64) {
    let st = Store::open(&repo.join(".cairn/cairn.db")).unwrap();
    (st.digest().unwrap(), st.event_count().unwrap())
}

#[test]
fn two_clones_merge_by_union_and_converge() {
    let t = tempfile::tempdir().unwrap();
    let origin = t.path().join("origin");
    init_repo(&origin);
    let shared = create(&origin, "shared parser work");
    call(
        &origin,
        "observe",
        json!({"task_id": shared, "text": "started"}),
    );
    commit_plan(&origin, "plan");
    let a = t.path().join("a");
    let b = t.path().join("b");
    git(t.path(), &["clone", "-q", "origin", "a"]);
    git(t.path(), &["clone", "-q", "origin", "b"]);
    // A fresh clone has no cairn.db: the first command folds the logs.
    assert_eq!(store_digest(&a), store_digest(&origin));

    git(&a, &["checkout", "-q", "-b", "feature-a"]);
    let ta = create(&a, "lexer rewrite in clone a");
    call(
        &a,
        "observe",
        json!({"task_id": ta, "text": "a: lexer done"}),
    );
    call(
        &a,
        "observe",
        json!({"task_id": shared, "text": "a: touched shared"}),
    );
    call(
        &a,
        "task_update_status",
        json!({"task_id": shared, "status": "completed"}),
    );
    let (_, _, code) = cairn_in(&a, &["query", "--write", "(define! \"a-view\" (active))"]);
    assert_eq!(code, 0);
    commit_plan(&a, "a");

    let tb = create(&b, "cache layer in clone b");
    call(
        &b,
        "observe",
        json!({"task_id": tb, "text": "b: cache done"}),
    );
    call(
        &b,
        "observe",
        json!({"task_id": shared, "text": "b: touched shared"}),
    );
    call(
        &b,
        "task_update_status",
        json!({"task_id": tb, "status": "blocked"}),
    );
    commit_plan(&b, "b");

    // Both clones touched the shared task's log: union merges it.
    git(
        &a,
        &["pull", "-q", "--no-rebase", "--no-edit", "../b", "main"],
    );
    git(
        &b,
        &[
            "pull",
            "-q",
            "--no-rebase",
            "--no-edit",
            "../a",
            "feature-a",
        ],
    );
    let text = std::fs::read_to_string(a.join(".cairn/tasks").join(&shared).join("events.ndjson"))
        .unwrap();
    assert!(!text.contains("<<<<<<<"));

    for repo in [&a, &b] {
        let (out, err, code) = cairn_in(repo, &["verify"]);
        assert_eq!(code, 0, "{out}{err}");
        assert!(
            out.starts_with("verify: ok — projection is a faithful fold of 11 events\nlogs: ok"),
            "{out}"
        );
    }
    let union: BTreeSet<String> = all_lines(&a.join(".cairn/tasks")).into_iter().collect();
    assert_eq!(union.len(), 11);
    let (canonical, n) = digest_of_lines(&union.iter().cloned().collect::<Vec<_>>());
    assert_eq!(n, 11);
    assert_eq!(store_digest(&a), (canonical.clone(), 11));
    assert_eq!(store_digest(&b), (canonical.clone(), 11));
    let list = cairn_in(&a, &["query", "(-> (all) (:select :slug :status))"]).0;
    assert_eq!(
        list,
        cairn_in(&b, &["query", "(-> (all) (:select :slug :status))"]).0
    );
    assert!(list.contains(&ta) && list.contains(&tb), "{list}");

    // Shuffled and duplicated: the same digest.
    let mut shuffled: Vec<String> = union.iter().cloned().collect();
    shuffled.reverse();
    shuffled.rotate_left(4);
    let dups: Vec<String> = shuffled.iter().step_by(3).cloned().collect();
    shuffled.extend(dups);
    assert_eq!(digest_of_lines(&shuffled), (canonical, 11));
}

#[test]
fn a_deleted_database_is_rebuilt_from_the_logs() {
    let t = tempfile::tempdir().unwrap();
    let repo = t.path().join("r");
    init_repo(&repo);
    let p = create(&repo, "parent planning task");
    let c = create(&repo, "child implementation task");
    call(
        &repo,
        "task_link",
        json!({"task_id": c, "target_id": p, "edge_type": "phase-of"}),
    );
    call(
        &repo,
        "observe",
        json!({"task_id": c, "text": "tokenizer handles unicode"}),
    );
    call(
        &repo,
        "task_set_metadata",
        json!({"task_id": c, "key": "owner", "value": "ana"}),
    );
    call(
        &repo,
        "task_update_status",
        json!({"task_id": p, "status": "completed"}),
    );
    let queries = [
        "(-> (all) (:select :slug :status :description))",
        "(-> (all) (:where (> (count (:follow :phase-of)) 0)) (:select :slug))",
        "(-> (all) (:where (= :owner \"ana\")) (:select :slug))",
        "(-> (active) (:select :slug))",
    ];
    let before: Vec<String> = queries
        .iter()
        .map(|q| cairn_in(&repo, &["query", q]).0)
        .collect();
    let got = call(&repo, "task_get", json!({"task_id": c}));
    let found = call(&repo, "task_search", json!({"query": "unicode"}));
    assert!(found.contains(&c), "{found}");
    let digest = store_digest(&repo);
    for f in ["cairn.db", "cairn.db-wal", "cairn.db-shm"] {
        let _ = std::fs::remove_file(repo.join(".cairn").join(f));
    }
    let after: Vec<String> = queries
        .iter()
        .map(|q| cairn_in(&repo, &["query", q]).0)
        .collect();
    assert_eq!(before, after);
    assert_eq!(call(&repo, "task_get", json!({"task_id": c})), got);
    assert_eq!(
        call(&repo, "task_search", json!({"query": "unicode"})),
        found
    );
    for (q, out) in queries.iter().zip(&before) {
        assert!(out.contains(&c) || out.contains(&p), "{q}: {out}");
    }
    assert_eq!(store_digest(&repo), digest);
    assert_eq!(digest.1, 6);
}

#[test]
fn a_kill_between_commit_and_append_leaves_a_gap_that_reopen_closes() {
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join(".cairn/cairn.db");
    drop(Store::open(&db).unwrap());
    let mut acknowledged = Vec::new();
    for round in 0..20 {
        let session = format!("ack-{round}");
        let out = Command::new(CAIRN)
            .arg("--db")
            .arg(&db)
            .args([
                "stress-append",
                "--count",
                "1",
                "--session",
                &session,
                "--task",
                "gap",
            ])
            .output()
            .unwrap();
        assert!(out.status.success());
        acknowledged.push(
            String::from_utf8_lossy(&out.stdout)
                .trim()
                .parse::<i64>()
                .unwrap(),
        );
        let mut child = Command::new(CAIRN)
            .arg("--db")
            .arg(&db)
            .args([
                "stress-append",
                "--count",
                "1",
                "--session",
                &format!("kill-{round}"),
                "--task",
                "gap",
            ])
            .env("CAIRN_TEST_PAUSE_AFTER_COMMIT", "1")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut err = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        err.read_line(&mut line).unwrap();
        assert_eq!(line, "cairn-test: committed\n");
        child.kill().unwrap(); // SIGKILL: committed, never appended
        child.wait().unwrap();
    }
    let log = t.path().join(".cairn/tasks/gap/events.ndjson");
    // The last kill's event is in the database but not yet in the log.
    let conn = rusqlite::Connection::open(&db).unwrap();
    let in_db: i64 = conn
        .query_row("SELECT count(*) FROM events", [], |r| r.get(0))
        .unwrap();
    drop(conn);
    assert_eq!(in_db, 40);
    assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 39);
    let st = Store::open(&db).unwrap();
    let check = st.check_logs().unwrap().unwrap();
    assert_eq!(
        (check.missing_from_logs, check.missing_from_db, check.lines),
        (0, 0, 40)
    );
    let text = std::fs::read_to_string(&log).unwrap();
    for seq in acknowledged {
        let key: String = st
            .conn()
            .query_row("SELECT event_key FROM events WHERE seq = ?1", [seq], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(text.matches(&key).count(), 1);
    }
    assert!(st.verify().unwrap().ok);
}

#[test]
fn four_processes_appending_to_one_log_never_tear_a_line() {
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join(".cairn/cairn.db");
    drop(Store::open(&db).unwrap());
    let children: Vec<_> = (0..4)
        .map(|i| {
            Command::new(CAIRN)
                .arg("--db")
                .arg(&db)
                .args([
                    "stress-append",
                    "--count",
                    "150",
                    "--session",
                    &format!("p{i}"),
                    "--task",
                    "hot",
                ])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let text = std::fs::read_to_string(t.path().join(".cairn/tasks/hot/events.ndjson")).unwrap();
    assert!(text.ends_with('\n'));
    let mut keys = BTreeSet::new();
    for l in text.lines() {
        let p = LogLine::parse(l).unwrap_or_else(|e| panic!("torn line {l:?}: {e}"));
        assert!(keys.insert(p.line.event_key), "duplicate line {l}");
    }
    assert_eq!(keys.len(), 600);
    let st = Store::open(&db).unwrap();
    assert_eq!(st.event_count().unwrap(), 600);
    let check = st.check_logs().unwrap().unwrap();
    assert_eq!((check.missing_from_logs, check.missing_from_db), (0, 0));
}

#[test]
fn malformed_lines_are_skipped_named_and_counted() {
    let t = tempfile::tempdir().unwrap();
    let repo = t.path().join("r");
    init_repo(&repo);
    let a = create(&repo, "first sturdy task");
    call(&repo, "observe", json!({"task_id": a, "text": "kept fact"}));
    let log = repo.join(".cairn/tasks").join(&a).join("events.ndjson");
    let good = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = good.lines().collect();
    let tampered = lines[1].replace("kept fact", "forged fact");
    let text = format!(
        "{}\n<<<<<<< HEAD\n{}\n=======\n{{\"data\": nope}}\n>>>>>>> other\n{tampered}\n{}",
        lines[0],
        lines[1],
        &lines[1][..40]
    );
    std::fs::write(&log, text).unwrap();
    for f in ["cairn.db", "cairn.db-wal", "cairn.db-shm"] {
        let _ = std::fs::remove_file(repo.join(".cairn").join(f));
    }
    let (out, err, code) = cairn_in(&repo, &["verify"]);
    assert_eq!(code, 0, "{out}{err}");
    let p = log.display().to_string();
    assert_eq!(
        out,
        format!(
            "verify: ok — projection is a faithful fold of 2 events\n\
             logs: ok — every event is in its task's log and every log line is in the database (1 logs, 2 lines, 6 malformed)\n\
             malformed: {p}:2: not JSON\n\
             malformed: {p}:4: not JSON\n\
             malformed: {p}:5: not JSON\n\
             malformed: {p}:6: not JSON\n\
             malformed: {p}:7: event_key does not match the content\n\
             malformed: {p}:8: not JSON\n"
        )
    );
    assert_eq!(
        err.lines()
            .filter(|l| l.starts_with("cairn: skipped malformed log line"))
            .count(),
        6,
        "{err}"
    );
    assert!(err.contains(&format!(
        "cairn: skipped malformed log line {p}:8: not JSON"
    )));
    let got = call(&repo, "task_get", json!({"task_id": a}));
    assert!(
        got.contains("kept fact") && !got.contains("forged"),
        "{got}"
    );
    // The next write repairs the missing final newline before appending.
    call(
        &repo,
        "observe",
        json!({"task_id": a, "text": "after repair"}),
    );
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        text.contains(&format!(
            "{}\n{{\"data\":{{\"text\":\"after repair\"}}",
            &lines[1][..40]
        )),
        "{text}"
    );
}

fn repo_with_worktree(t: &Path) -> (PathBuf, PathBuf) {
    let main = t.join("main");
    init_repo(&main);
    git(&main, &["worktree", "add", "-q", "-b", "side", "../side"]);
    (main, t.join("side"))
}

#[test]
fn a_linked_worktree_resolves_to_the_main_worktree_store() {
    let t = tempfile::tempdir().unwrap();
    let (main, side) = repo_with_worktree(&t.path().canonicalize().unwrap());
    std::fs::create_dir_all(side.join("src/deep")).unwrap();
    // Even with a checked-out .cairn/ in the worktree (the committed logs).
    std::fs::create_dir_all(side.join(".cairn/tasks")).unwrap();
    let (out, _, code) = cairn_in(&side.join("src/deep"), &["where"]);
    assert_eq!(code, 0);
    assert_eq!(
        out,
        format!(
            "database: {}/.cairn/cairn.db\nproject: {}\nrule: repository root, shared by the worktree at {}\n",
            main.display(),
            main.display(),
            main.display()
        )
    );
}

struct Client(RunningService<RoleClient, ()>);

impl Client {
    async fn spawn(dir: &Path) -> Client {
        let mut cmd = tokio::process::Command::new(CAIRN);
        cmd.arg("serve")
            .current_dir(dir)
            .env_remove("CAIRN_DB")
            .env("HOME", dir);
        let (transport, _) = TokioChildProcess::builder(cmd)
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        Client(().serve(transport).await.unwrap())
    }

    async fn ok(&self, tool: &str, args: Value) -> String {
        let (text, err) = mcpfx::call_tool(&self.0, tool, args).await;
        assert!(!err, "{tool} failed: {text}");
        text
    }

    async fn close(self) {
        self.0.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn two_worktrees_share_one_plan_through_serve() {
    let t = tempfile::tempdir().unwrap();
    let (main, side) = repo_with_worktree(&t.path().canonicalize().unwrap());
    let m = Client::spawn(&main).await;
    let s = Client::spawn(&side).await;
    let created = s
        .ok("task_create", json!({"name": "made in the side worktree"}))
        .await;
    let slug = created
        .trim_start_matches("Created ")
        .trim_end_matches('.')
        .to_string();
    let got = m.ok("task_get", json!({"task_id": slug})).await;
    assert!(got.starts_with(&format!("{slug}  [active]")), "{got}");
    m.ok(
        "observe",
        json!({"task_id": slug, "text": "seen from main"}),
    )
    .await;
    let got = s.ok("task_get", json!({"task_id": slug})).await;
    assert!(got.contains("seen from main"), "{got}");
    m.close().await;
    s.close().await;
    assert!(
        main.join(".cairn/tasks")
            .join(&slug)
            .join("events.ndjson")
            .is_file()
    );
    assert!(!side.join(".cairn").exists());
}

#[tokio::test]
async fn a_running_server_sees_lines_a_merge_brought_in() {
    let t = tempfile::tempdir().unwrap();
    let a = t.path().join("a");
    init_repo(&a);
    create(&a, "base task in clone a");
    commit_plan(&a, "plan");
    git(t.path(), &["clone", "-q", "a", "b"]);
    let b = t.path().join("b");
    let server = Client::spawn(&a).await;
    let listed = server
        .ok("task_query", json!({"query": "(-> (all) (:count))"}))
        .await;
    let tb = create(&b, "arrives by merge later");
    call(
        &b,
        "observe",
        json!({"task_id": tb, "text": "from clone b"}),
    );
    commit_plan(&b, "b");
    git(
        &a,
        &["pull", "-q", "--no-rebase", "--no-edit", "../b", "main"],
    );
    let got = server.ok("task_get", json!({"task_id": tb})).await;
    assert!(got.contains("from clone b"), "{got}");
    let after = server
        .ok("task_query", json!({"query": "(-> (all) (:count))"}))
        .await;
    assert_ne!(listed, after);
    // A checkout of an older commit keeps the plan (union: never deletes).
    git(&a, &["checkout", "-q", "HEAD~1"]);
    let got = server.ok("task_get", json!({"task_id": tb})).await;
    assert!(got.contains("from clone b"), "{got}");
    server.close().await;
}

/// The original tool's line for one event (universal-time `ts`, hyphenated
/// data keys; its own content key, which import recomputes).
fn kli_line(id: &str, task: &str, ty: &str, ts: i64, session: Value, data: Value) -> String {
    json!({"data": data, "event_id": id, "event_key": "0123abcd", "prev_session_id": null,
           "session_id": session, "task_id": task, "ts": ts, "type": ty})
    .to_string()
}

#[test]
fn import_of_the_original_store_maps_and_is_idempotent() {
    const U: i64 = 3_900_000_000; // universal time
    const UNIX: i64 = U - 2_208_988_800;
    let t = tempfile::tempdir().unwrap();
    let kli = t.path().join("old/.kli/tasks");
    std::fs::create_dir_all(kli.join("plan")).unwrap();
    std::fs::create_dir_all(kli.join("child")).unwrap();
    let s1 = json!("S1");
    let plan = [
        kli_line(
            "01H00000000000000000000001",
            "plan",
            "task.create",
            U + 100,
            s1.clone(),
            json!({"description": "Plan the thing", "project-id": "p1"}),
        ),
        kli_line(
            "01H00000000000000000000003",
            "plan",
            "observation",
            U + 150,
            s1.clone(),
            json!({"text": "first finding"}),
        ),
        kli_line(
            "01H00000000000000000000004",
            "plan",
            "task.update-status",
            U + 200,
            s1.clone(),
            json!({"status": "completed"}),
        ),
        kli_line(
            "01H00000000000000000000005",
            "plan",
            "artifact.create",
            U + 210,
            s1.clone(),
            json!({"path": "a.txt", "kind": "file"}),
        ),
        "{\"data\":{\"text\":\"torn".to_string(),
    ];
    std::fs::write(kli.join("plan/events.ndjson"), plan.join("\n") + "\n").unwrap();
    let child = [
        kli_line(
            "01H00000000000000000000002",
            "child",
            "task.create",
            U + 110,
            Value::Null,
            json!({"description": "Child work"}),
        ),
        kli_line(
            "01H00000000000000000000006",
            "child",
            "task.link",
            U + 300,
            Value::Null,
            json!({"target-id": "plan", "edge-type": "phase-of"}),
        ),
        kli_line(
            "01H00000000000000000000007",
            "child",
            "task.link",
            U + 310,
            Value::Null,
            json!({"target-id": "kli:plan", "edge-type": "blocks"}),
        ),
    ];
    std::fs::write(kli.join("child/events.ndjson"), child.join("\n") + "\n").unwrap();
    let db = t.path().join("new/.cairn/cairn.db");
    let run = || {
        let out = Command::new(CAIRN)
            .arg("--db")
            .arg(&db)
            .arg("import")
            .arg(t.path().join("old/.kli"))
            .output()
            .unwrap();
        assert!(out.status.success());
        (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (out, err) = run();
    assert_eq!(out, "Imported 7 events for 2 tasks; 1 lines skipped.\n");
    assert_eq!(
        err,
        format!(
            "cairn import: skipped {}:5: not JSON\n",
            kli.join("plan/events.ndjson").display()
        )
    );
    let st = Store::open(&db).unwrap();
    let row: (String, String, i64, String, Option<String>) = st
        .conn()
        .query_row(
            "SELECT status, description, created_ts, project_id, (SELECT p.slug FROM tasks p WHERE p.id = t.parent_task_id)
             FROM tasks t WHERE slug = 'plan'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
        )
        .unwrap();
    assert_eq!(
        row,
        (
            "completed".into(),
            "Plan the thing".into(),
            UNIX + 100,
            "p1".into(),
            None
        )
    );
    let parent: String = st
        .conn()
        .query_row(
            "SELECT p.slug FROM tasks c JOIN tasks p ON p.id = c.parent_task_id WHERE c.slug = 'child'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(parent, "plan");
    let edges: Vec<(String, String, String)> = st
        .conn()
        .prepare("SELECT s.slug, d.slug, e.type FROM edges e JOIN tasks s ON s.id = e.src_id JOIN tasks d ON d.id = e.dst_id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        edges,
        vec![("child".into(), "plan".into(), "depends-on".into())]
    );
    let tag: String = st
        .conn()
        .query_row(
            "SELECT data FROM events WHERE event_id = '01H00000000000000000000007'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(
        tag,
        r#"{"edge_type":"depends-on","tag":"blocks","target_id":"plan"}"#
    );
    let obs: (String, i64) = st
        .conn()
        .query_row("SELECT text, ts FROM observations", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!(obs, ("first finding".into(), UNIX + 150));
    let kept: i64 = st
        .conn()
        .query_row(
            "SELECT count(*) FROM events WHERE type = 'artifact.create'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(kept, 1);
    let digest = st.digest().unwrap();
    let check = st.check_logs().unwrap().unwrap();
    assert_eq!(
        (check.lines, check.missing_from_logs, check.missing_from_db),
        (7, 0, 0)
    );
    drop(st);
    let (out, _) = run();
    assert_eq!(out, "Imported 0 events for 0 tasks; 1 lines skipped.\n");
    let st = Store::open(&db).unwrap();
    assert_eq!(st.digest().unwrap(), digest);
    assert_eq!(st.event_count().unwrap(), 7);
}

#[test]
fn the_per_call_check_ingests_only_when_the_git_index_moved() {
    let t = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(t.path().join(".git")).unwrap();
    std::fs::write(t.path().join(".git/index"), "one").unwrap();
    let db = t.path().join(".cairn/cairn.db");
    let st = Store::open(&db).unwrap();
    st.write(&[cairn::store::NewEvent::task_create(
        "s",
        10,
        "2026-01-01-seen",
        None,
        None,
    )])
    .unwrap();
    // Another clone's line arrives in the working tree.
    let other = t.path().join("other/.cairn/cairn.db");
    let o = Store::open(&other).unwrap();
    o.write(&[cairn::store::NewEvent::task_create(
        "o",
        20,
        "2026-01-01-merged",
        None,
        None,
    )])
    .unwrap();
    let line = std::fs::read_to_string(
        t.path()
            .join("other/.cairn/tasks/2026-01-01-merged/events.ndjson"),
    )
    .unwrap();
    let dest = t
        .path()
        .join(".cairn/tasks/2026-01-01-merged/events.ndjson");
    std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
    std::fs::write(&dest, line).unwrap();
    st.sync().unwrap();
    assert!(
        !st.task_exists("2026-01-01-merged").unwrap(),
        "nothing moved: no scan"
    );
    std::fs::write(t.path().join(".git/index"), "two!").unwrap(); // git rewrote its index
    st.sync().unwrap();
    assert!(st.task_exists("2026-01-01-merged").unwrap());
    assert_eq!(st.event_count().unwrap(), 2);
    // A second store on the same file sees the first one's write on its next call.
    let st2 = Store::open(&db).unwrap();
    st.write(&[cairn::store::NewEvent::observation(
        "s",
        30,
        "2026-01-01-seen",
        "later",
    )])
    .unwrap();
    st2.sync().unwrap();
    assert_eq!(st2.event_count().unwrap(), 3);
    let check = st2.check_logs().unwrap().unwrap();
    assert_eq!(
        (
            check.files,
            check.lines,
            check.missing_from_logs,
            check.missing_from_db
        ),
        (2, 3, 0, 0)
    );
}

#[test]
fn own_appends_are_remembered_so_reopening_reads_no_log() {
    use std::os::unix::fs::MetadataExt;
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join(".cairn/cairn.db");
    let st = Store::open(&db).unwrap();
    for i in 0..3 {
        st.write(&[cairn::store::NewEvent::task_create(
            "s",
            10,
            &format!("2026-01-01-t{i}"),
            None,
            None,
        )])
        .unwrap();
    }
    drop(st);
    let st = Store::open(&db).unwrap();
    let marks: Vec<(String, String)> = st
        .conn()
        .prepare("SELECT key, value FROM schema_meta WHERE key LIKE 'log.wm.%' ORDER BY key")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let expected: Vec<(String, String)> = (0..3)
        .map(|i| {
            let m = std::fs::metadata(
                t.path()
                    .join(format!(".cairn/tasks/2026-01-01-t{i}/events.ndjson")),
            )
            .unwrap();
            let ns = i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec());
            (
                format!("log.wm.2026-01-01-t{i}"),
                format!("{ns} {}", m.len()),
            )
        })
        .collect();
    assert_eq!(marks, expected);
    let mark: String = st
        .conn()
        .query_row(
            "SELECT value FROM schema_meta WHERE key = 'log.exported_seq'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(mark, "3");
    assert_eq!(st.reconcile(false).unwrap().files_read, 0);
}

/// A committed symlink (the log file, the task folder, or a link to
/// `/dev/zero`) is never followed: a write to that task is refused before it
/// is recorded, nothing is written outside, reads skip it with one stderr line, `verify` lists it.
#[test]
fn symlinked_logs_are_never_followed() {
    let t = tempfile::tempdir().unwrap();
    let repo = t.path().join("r");
    init_repo(&repo);
    let a = create(&repo, "alpha task");
    let outside = t.path().join("outside.txt");
    std::fs::write(&outside, "keep\n").unwrap();
    let log = repo.join(".cairn/tasks").join(&a).join("events.ndjson");
    std::fs::remove_file(&log).unwrap();
    std::os::unix::fs::symlink(&outside, &log).unwrap();
    let (out, err, code) = cairn_in(
        &repo,
        &[
            "call",
            "observe",
            &json!({"task_id": a, "text": "x"}).to_string(),
        ],
    );
    // Refused before it is recorded (issue 19): nothing the logs cannot
    // hold is acknowledged; the tool's error names the link.
    assert_eq!(code, 1, "{out}{err}");
    let log_text = log.display().to_string();
    assert_eq!(
        out.trim_end(),
        format!("cannot prepare {log_text}: refused: {log_text} is a symlink")
    );
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep\n");
    assert_eq!(store_digest(&repo).1, 1, "the note was not recorded");
    // A task folder linked to /dev/zero's folder.
    std::fs::create_dir_all(t.path().join("z")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", t.path().join("z/events.ndjson")).unwrap();
    std::os::unix::fs::symlink(t.path().join("z"), repo.join(".cairn/tasks/zz")).unwrap();
    let (out, err, _) = cairn_in(&repo, &["verify"]);
    assert!(out.contains("is a symlink"), "{out}{err}");
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep\n");
    // import of a .kli store whose log is a link to /dev/zero.
    let kli = t.path().join("k/.kli/tasks/z");
    std::fs::create_dir_all(&kli).unwrap();
    std::os::unix::fs::symlink("/dev/zero", kli.join("events.ndjson")).unwrap();
    let (out, err, code) = cairn_in(&repo, &["import", t.path().join("k").to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        out.trim_end(),
        "Imported 0 events for 0 tasks; 1 lines skipped."
    );
    assert!(err.contains("skipped log file"), "{err}");
}

/// Writers appending while `rebuild --from-logs` and `verify` run: every
/// acknowledged event is present afterwards, no log line is duplicated, and
/// `verify` never counts a write in flight as a gap.
#[test]
fn rebuild_from_logs_and_verify_during_writes_lose_nothing() {
    let t = tempfile::tempdir().unwrap();
    let repo = t.path().join("r");
    init_repo(&repo);
    let a = create(&repo, "alpha task");
    let writer = {
        let repo = repo.clone();
        let a = a.clone();
        std::thread::spawn(move || {
            for i in 0..12 {
                call(
                    &repo,
                    "observe",
                    json!({"task_id": a, "text": format!("w{i}")}),
                );
            }
        })
    };
    let mut verdicts = Vec::new();
    while !writer.is_finished() {
        let (_, err, code) = cairn_in(&repo, &["rebuild", "--from-logs"]);
        assert_eq!(code, 0, "{err}");
        let (out, _, _) = cairn_in(&repo, &["verify"]);
        verdicts.push(
            out.lines()
                .find(|l| l.starts_with("logs:"))
                .unwrap_or("")
                .to_string(),
        );
    }
    writer.join().unwrap();
    for v in &verdicts {
        assert!(v.starts_with("logs: ok"), "{verdicts:?}");
    }
    let lines = all_lines(&repo.join(".cairn/tasks"));
    let texts: Vec<&String> = lines
        .iter()
        .filter(|l| l.contains("\"type\":\"observation\""))
        .collect();
    assert_eq!(texts.len(), 12, "{lines:?}");
    let unique: BTreeSet<&String> = lines.iter().collect();
    assert_eq!(unique.len(), lines.len());
    let (out, _, _) = cairn_in(&repo, &["rebuild", "--from-logs"]);
    let _ = out;
    let store = Store::open(&repo.join(".cairn/cairn.db")).unwrap();
    let n: i64 = store
        .conn()
        .query_row(
            "SELECT count(*) FROM events WHERE type = 'observation'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(n, 12);
}

/// Issue 19 item 4: clones A and C each create a task of the same name on
/// the same day (the same slug). After they pull each other, the two stay
/// two tasks in both clones (the later creation under `SLUG-XXXXXX`), C's
/// create does not reopen A's completed task, each note stays with its own
/// task, the user is told once, and a fresh clone folds the same plan.
#[test]
fn same_name_tasks_from_two_clones_stay_two_tasks() {
    let t = tempfile::tempdir().unwrap();
    let origin = t.path().join("origin");
    init_repo(&origin);
    let root = create(&origin, "shared plan root");
    commit_plan(&origin, "plan");
    let a = t.path().join("a");
    let c = t.path().join("c");
    git(t.path(), &["clone", "-q", "origin", "a"]);
    git(t.path(), &["clone", "-q", "origin", "c"]);

    let sa = create(&a, "fix parser bug");
    call(&a, "observe", json!({"task_id": sa, "text": "a: found it"}));
    call(
        &a,
        "task_update_status",
        json!({"task_id": sa, "status": "completed"}),
    );
    commit_plan(&a, "a");
    // C creates the same name a second later (the later creation).
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let sc = create(&c, "fix parser bug");
    assert_eq!(sa, sc, "the same slug in both clones");
    call(
        &c,
        "observe",
        json!({"task_id": sc, "text": "c: other bug"}),
    );
    commit_plan(&c, "c");

    git(
        &a,
        &["pull", "-q", "--no-rebase", "--no-edit", "../c", "main"],
    );
    let list = "(-> (all) (:select :slug :status))";
    let (out_a, err_a, code) = cairn_in(&a, &["query", list]);
    assert_eq!(code, 0, "{err_a}");
    // The later creation's suffix: six hex digits of its content key.
    let creates: Vec<LogLine> = all_lines(&a.join(".cairn/tasks"))
        .iter()
        .map(|l| LogLine::parse(l).unwrap().line)
        .filter(|l| l.event_type == "task.create" && l.task_id == sa)
        .collect();
    assert_eq!(creates.len(), 2);
    let later = creates
        .iter()
        .max_by_key(|l| (l.ts, l.event_id.clone()))
        .unwrap();
    let moved = format!("{sa}-{}", &later.event_key[..6]);
    assert_eq!(
        err_a.matches("two clones each created").count(),
        1,
        "{err_a}"
    );
    assert!(
        err_a.contains(&format!(
            "cairn: two clones each created {sa}; the later one is now {moved} (its notes, edges and status moved with it)."
        )),
        "{err_a}"
    );
    assert_eq!(
        out_a,
        format!(
            "3 tasks:\n- {sa}  slug={sa}  status=completed\n- {moved}  slug={moved}  status=active\n- {root}  slug={root}  status=active\n"
        )
    );
    let notes = |repo: &Path, slug: &str| call(repo, "task_get", json!({ "task_id": slug }));
    let a_notes = notes(&a, &sa);
    assert!(
        a_notes.contains("a: found it") && !a_notes.contains("c: other"),
        "{a_notes}"
    );
    let c_notes = notes(&a, &moved);
    assert!(
        c_notes.contains("c: other bug") && !c_notes.contains("a: found"),
        "{c_notes}"
    );
    // Both keep the name they were created with (`ls`, `show`).
    let (listing, _, _) = cairn_in(&a, &["ls", "--all", "--json"]);
    let listing: Value = serde_json::from_str(&listing).unwrap();
    for slug in [&sa, &moved] {
        let t = listing
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["slug"] == json!(slug))
            .unwrap_or_else(|| panic!("{slug} in {listing}"));
        assert_eq!(t["name"], json!("fix parser bug"), "{slug}: {t}");
    }
    // Told once: the next command says nothing more.
    let (_, err, _) = cairn_in(&a, &["query", list]);
    assert!(!err.contains("two clones"), "{err}");
    commit_plan(&a, "a after merge");

    // C, pulling A (which brings A's creation and A's split), agrees.
    git(
        &c,
        &["pull", "-q", "--no-rebase", "--no-edit", "../a", "main"],
    );
    let (out_c, err_c, code) = cairn_in(&c, &["query", list]);
    assert_eq!(code, 0, "{err_c}");
    assert_eq!(out_c, out_a);
    assert_eq!(store_digest(&c), store_digest(&a));
    for repo in [&a, &c] {
        let (out, err, code) = cairn_in(repo, &["verify"]);
        assert_eq!(code, 0, "{out}{err}");
        assert!(out.contains("logs: ok"), "{out}");
    }
    // A fresh clone folds the same plan from the logs alone.
    git(t.path(), &["clone", "-q", "a", "d"]);
    let d = t.path().join("d");
    assert_eq!(cairn_in(&d, &["query", list]).0, out_a);
    assert_eq!(store_digest(&d), store_digest(&a));
}

/// Issue 19 item 4, the late side: C keeps writing on its task before it
/// pulls A's resolution; when it does, its later notes follow its task.
#[test]
fn notes_written_before_pulling_the_split_follow_their_task() {
    let t = tempfile::tempdir().unwrap();
    let origin = t.path().join("origin");
    init_repo(&origin);
    commit_plan_if_any(&origin);
    let a = t.path().join("a");
    let c = t.path().join("c");
    git(t.path(), &["clone", "-q", "origin", "a"]);
    git(t.path(), &["clone", "-q", "origin", "c"]);
    let sa = create(&a, "fix parser bug");
    commit_plan(&a, "a");
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let sc = create(&c, "fix parser bug");
    assert_eq!(sa, sc);
    call(&c, "observe", json!({"task_id": sc, "text": "c: first"}));
    commit_plan(&c, "c1");
    git(
        &a,
        &["pull", "-q", "--no-rebase", "--no-edit", "../c", "main"],
    );
    let (_, err, _) = cairn_in(&a, &["query", "(-> (all) (:count))"]);
    assert!(err.contains("two clones each created"), "{err}");
    commit_plan(&a, "a resolves");
    // C writes again before it pulls A.
    call(&c, "observe", json!({"task_id": sc, "text": "c: second"}));
    commit_plan(&c, "c2");
    git(
        &c,
        &["pull", "-q", "--no-rebase", "--no-edit", "../a", "main"],
    );
    let (_, err_c, _) = cairn_in(&c, &["query", "(-> (all) (:count))"]);
    assert_eq!(
        err_c.matches("two clones each created").count(),
        1,
        "{err_c}"
    );
    commit_plan(&c, "c resolves");
    git(
        &a,
        &["pull", "-q", "--no-rebase", "--no-edit", "../c", "main"],
    );
    for repo in [&a, &c] {
        let list = cairn_in(repo, &["query", "(-> (all) (:select :slug))"]).0;
        let moved = list
            .lines()
            .find_map(|l| {
                l.strip_prefix("- ")
                    .filter(|s| s.starts_with(&format!("{sa}-")))
            })
            .map(|l| l.split_whitespace().next().unwrap().to_string())
            .unwrap_or_else(|| panic!("{list}"));
        let mine = call(repo, "task_get", json!({ "task_id": sa }));
        assert!(!mine.contains("c: "), "{mine}");
        let theirs = call(repo, "task_get", json!({ "task_id": moved }));
        assert!(
            theirs.contains("c: first") && theirs.contains("c: second"),
            "{theirs}"
        );
    }
    assert_eq!(store_digest(&a), store_digest(&c));
}

/// Commits `.cairn` when the repository has one (a fresh origin has none).
fn commit_plan_if_any(dir: &Path) {
    if dir.join(".cairn").exists() {
        commit_plan(dir, "plan");
    }
}

/// Issue 23: opening a store whose git index has not moved since the last
/// scan reads no log folder (one stat of the index, not a walk of every
/// task's log): lines dropped into `tasks/` by hand are ingested when git
/// next moves the index (a checkout, merge, pull or `git add`), and at once
/// by `cairn rebuild --from-logs`.
#[test]
fn an_open_with_an_unmoved_git_index_does_not_walk_the_logs() {
    let t = tempfile::tempdir().unwrap();
    let a = t.path().join("a");
    let b = t.path().join("b");
    init_repo(&a);
    init_repo(&b);
    create(&a, "first task in a");
    commit_plan(&a, "a");
    let count = |repo: &Path| cairn_in(repo, &["query", "(-> (all) (:count))"]).0;
    // The commit moved the index: this open scans and stores its stamp.
    assert_eq!(count(&a), "1\n");
    let from_b = create(&b, "made in clone b");
    // B's log copied into A by hand: git's index in A has not moved.
    let src = b.join(".cairn/tasks").join(&from_b);
    let dst = a.join(".cairn/tasks").join(&from_b);
    std::fs::create_dir_all(&dst).unwrap();
    std::fs::copy(src.join("events.ndjson"), dst.join("events.ndjson")).unwrap();
    assert_eq!(count(&a), "1\n", "the unmoved index skips the walk");
    git(&a, &["add", ".cairn"]);
    assert_eq!(count(&a), "2\n", "a moved index brings the line in");
    assert_eq!(count(&a), "2\n");
}

/// Hostile run M1: three clones create the same name. B resolves against A
/// first; C then pulls A's and B's creations (and B's split) at once: C's
/// own task still moves to its own `SLUG-XXXXXX`, A's completed task is not
/// reopened, and every note stays with its task.
#[test]
fn same_name_tasks_from_three_clones_stay_three_tasks() {
    let t = tempfile::tempdir().unwrap();
    let origin = t.path().join("origin");
    init_repo(&origin);
    git(&origin, &["config", "receive.denyCurrentBranch", "ignore"]);
    let [a, b, c] = ["a", "b", "c"].map(|n| t.path().join(n));
    for n in ["a", "b", "c"] {
        git(t.path(), &["clone", "-q", "origin", n]);
    }
    let s = create(&a, "fix parser bug");
    call(&a, "observe", json!({"task_id": s, "text": "A note"}));
    call(
        &a,
        "task_update_status",
        json!({"task_id": s, "status": "completed"}),
    );
    commit_plan(&a, "a");
    git(&a, &["push", "-q", "origin", "main"]);
    std::thread::sleep(std::time::Duration::from_millis(1100));
    assert_eq!(create(&b, "fix parser bug"), s);
    call(&b, "observe", json!({"task_id": s, "text": "B note"}));
    commit_plan(&b, "b");
    std::thread::sleep(std::time::Duration::from_millis(1100));
    assert_eq!(create(&c, "fix parser bug"), s);
    call(&c, "observe", json!({"task_id": s, "text": "C note"}));
    call(
        &c,
        "task_update_status",
        json!({"task_id": s, "status": "blocked"}),
    );
    commit_plan(&c, "c");
    // B resolves against A and pushes; C pulls both at once.
    git(
        &b,
        &["pull", "-q", "--no-rebase", "--no-edit", "origin", "main"],
    );
    let (_, err_b, _) = cairn_in(&b, &["query", "(-> (all) (:count))"]);
    assert!(err_b.contains("two clones each created"), "{err_b}");
    commit_plan(&b, "b resolves");
    git(&b, &["push", "-q", "origin", "main"]);
    git(
        &c,
        &["pull", "-q", "--no-rebase", "--no-edit", "origin", "main"],
    );
    let (_, err_c, _) = cairn_in(&c, &["query", "(-> (all) (:count))"]);
    assert!(err_c.contains("two clones each created"), "{err_c}");
    let list = cairn_in(&c, &["query", "(-> (all) (:select :slug :status))"]).0;
    let rows: Vec<&str> = list.lines().skip(1).collect();
    assert_eq!(rows.len(), 3, "{list}");
    assert!(
        list.contains(&format!("- {s}  slug={s}  status=completed")),
        "{list}"
    );
    let moved: Vec<String> = rows
        .iter()
        .filter_map(|r| r.strip_prefix("- "))
        .map(|r| r.split_whitespace().next().unwrap().to_string())
        .filter(|slug| slug != &s)
        .collect();
    assert_eq!(moved.len(), 2, "{list}");
    let got = |slug: &str| call(&c, "task_get", json!({ "task_id": slug }));
    let main_task = got(&s);
    assert!(
        main_task.contains("A note")
            && !main_task.contains("B note")
            && !main_task.contains("C note"),
        "{main_task}"
    );
    let notes: Vec<String> = moved.iter().map(|m| got(m)).collect();
    assert!(
        notes
            .iter()
            .any(|n| n.contains("B note") && n.contains("[active]")),
        "{notes:?}"
    );
    assert!(
        notes
            .iter()
            .any(|n| n.contains("C note") && n.contains("[blocked]")),
        "{notes:?}"
    );
}

/// Hostile run M4: a first read in a fresh clone (1,000 task logs) while
/// another process is still building the database from the logs (here:
/// an empty database whose write lock another connection holds) waits for
/// the build and answers from the whole plan, never `No tasks.` from the
/// empty database.
#[test]
fn a_first_read_in_a_fresh_clone_waits_for_the_build() {
    let t = tempfile::tempdir().unwrap();
    let origin = t.path().join("origin");
    init_repo(&origin);
    {
        let st = Store::open(&origin.join(".cairn/cairn.db")).unwrap();
        let events: Vec<cairn::store::NewEvent> = (0..1000)
            .map(|i| {
                cairn::store::NewEvent::task_create(
                    "s",
                    1_767_225_600,
                    &format!("2026-01-01-task-{i:04}"),
                    None,
                    None,
                )
            })
            .collect();
        st.write(&events).unwrap();
    }
    commit_plan(&origin, "plan");
    git(t.path(), &["clone", "-q", "origin", "fresh"]);
    let fresh = t.path().join("fresh");
    // The database another process has just created: the schema, no events.
    let empty = t.path().join("empty/.cairn/cairn.db");
    drop(Store::open(&empty).unwrap());
    let db = fresh.join(".cairn/cairn.db");
    std::fs::copy(&empty, &db).unwrap();
    let holder = rusqlite::Connection::open(&db).unwrap();
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    let mut reader = Command::new(CAIRN)
        .args(["query", "(-> (all) (:count))"])
        .current_dir(&fresh)
        .env_remove("CAIRN_DB")
        .env("HOME", &fresh)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let answered_early = reader.try_wait().unwrap().is_some();
    holder.execute_batch("ROLLBACK").unwrap();
    let out = reader.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !answered_early,
        "answered before the build: {stdout}{stderr}"
    );
    assert_eq!(
        (out.status.code(), stdout.as_ref()),
        (Some(0), "1000\n"),
        "{stderr}"
    );
}

/// A task's log deleted by hand: `verify` fails and names the repair;
/// `rebuild --from-logs` writes the database's lines back and `verify`
/// holds again, with every event kept.
#[test]
fn a_deleted_log_is_named_and_rebuild_from_logs_writes_it_back() {
    let t = tempfile::tempdir().unwrap();
    let repo = t.path().join("r");
    init_repo(&repo);
    let a = create(&repo, "alpha task");
    let _b = create(&repo, "beta task");
    std::fs::remove_file(repo.join(".cairn/tasks").join(&a).join("events.ndjson")).unwrap();
    let (out, _, code) = cairn_in(&repo, &["verify"]);
    assert_eq!(
        (out.as_str(), code),
        (
            "verify: ok — projection is a faithful fold of 2 events\n\
             logs: FAILED — 1 database events missing from their task logs, 0 log lines missing from the database (1 logs, 1 lines, 0 malformed); `cairn rebuild --from-logs` writes the missing lines to the logs and folds every log line into the database\n",
            1
        )
    );
    let (out, _, code) = cairn_in(&repo, &["rebuild", "--from-logs"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.starts_with(
            "rebuild: read 2 task logs (0 malformed lines skipped); re-folded 2 events;"
        ),
        "{out}"
    );
    let (out, _, code) = cairn_in(&repo, &["verify"]);
    assert_eq!(
        (out.as_str(), code),
        (
            "verify: ok — projection is a faithful fold of 2 events\n\
             logs: ok — every event is in its task's log and every log line is in the database (2 logs, 2 lines, 0 malformed)\n",
            0
        )
    );
}

/// A torn last line that still shows its event's key (a write cut short):
/// the event counts as missing from its log, and `rebuild --from-logs`
/// writes it again after the torn line, which stays named as malformed.
#[test]
fn a_torn_line_is_written_again_by_rebuild_from_logs() {
    let t = tempfile::tempdir().unwrap();
    let repo = t.path().join("r");
    init_repo(&repo);
    let a = create(&repo, "alpha task here");
    call(
        &repo,
        "observe",
        json!({"task_id": a, "text": "first note"}),
    );
    call(
        &repo,
        "observe",
        json!({"task_id": a, "text": "second note text"}),
    );
    let log = repo.join(".cairn/tasks").join(&a).join("events.ndjson");
    let text = std::fs::read_to_string(&log).unwrap();
    std::fs::write(&log, &text[..text.len() - 40]).unwrap();
    let shown = log.display().to_string();
    let (out, _, code) = cairn_in(&repo, &["verify"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("logs: FAILED — 1 database events missing from their task logs, 0 log lines missing from the database (1 logs, 2 lines, 1 malformed)"),
        "{out}"
    );
    let (out, err, code) = cairn_in(&repo, &["rebuild", "--from-logs"]);
    assert_eq!(code, 0, "{out}{err}");
    let (out, _, code) = cairn_in(&repo, &["verify"]);
    assert_eq!(
        (out.as_str(), code),
        (
            format!(
                "verify: ok — projection is a faithful fold of 3 events\n\
                 logs: ok — every event is in its task's log and every log line is in the database (1 logs, 3 lines, 1 malformed)\n\
                 malformed: {shown}:3: not JSON\n"
            )
            .as_str(),
            0
        )
    );
}
