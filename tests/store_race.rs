//! Issue 14 defect 1: concurrent `task_create`/`task_fork` calls with one
//! name, from 8 OS processes, never merge (spec/store.md "Slugs and names":
//! "a create never silently merges into an existing task").
//!
//! The parent test re-runs this test binary as 8 child processes (the
//! `race_child` test, idle unless `CAIRN_RACE_DB` is set); each child calls
//! the real tools (`dispatch`) in a loop and writes its answers to a file.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cairn::session::Session;
use cairn::store::Store;
use cairn::tools::{Clock, ToolCtx, dispatch};
use cairn::tq::engine::Engine;
use serde_json::json;

const PROCS: usize = 8;
const ROUNDS: usize = 30;
/// 2026-06-22 14:30:05 UTC.
const T0: i64 = 1_782_138_605;
const DAY: &str = "2026-06-22";

fn create_name(round: usize) -> String {
    format!("race shared name r{}", 100 + round)
}

fn fork_name(round: usize) -> String {
    format!("race fork name r{}", 100 + round)
}

fn parent_slug(k: usize) -> String {
    format!("{DAY}-race-parent-k{}", 100 + k)
}

/// The child side: idle unless spawned by the parent test.
#[test]
fn race_child() {
    let Ok(db) = std::env::var("CAIRN_RACE_DB") else {
        return;
    };
    let k: usize = std::env::var("CAIRN_RACE_K").unwrap().parse().unwrap();
    let out = PathBuf::from(std::env::var("CAIRN_RACE_OUT").unwrap());
    let go = PathBuf::from(std::env::var("CAIRN_RACE_GO").unwrap());
    let store = Store::open(Path::new(&db)).unwrap();
    let engine = Engine::new();
    let mut session = Session::new();
    let root = PathBuf::from(&db)
        .parent()
        .and_then(Path::parent)
        .unwrap()
        .to_path_buf();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !go.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    let mut lines = String::new();
    for round in 0..ROUNDS {
        let mut ctx = ToolCtx {
            store: (&store).into(),
            session: &mut session,
            engine: &engine,
            root: root.clone(),
            clock: Clock::Fixed(T0),
        };
        let created =
            dispatch(&mut ctx, "task_create", json!({"name": create_name(round)})).unwrap();
        assert!(!created.is_error, "{}", created.text);
        let forked = dispatch(
            &mut ctx,
            "task_fork",
            json!({"name": fork_name(round), "from": parent_slug(k)}),
        )
        .unwrap();
        assert!(!forked.is_error, "{}", forked.text);
        lines.push_str(&format!("{round}\t{}\t{}\n", created.text, forked.text));
    }
    std::fs::write(out, lines).unwrap();
}

#[test]
fn eight_processes_creating_and_forking_one_name_never_merge() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    let db = dir.path().join(".cairn/cairn.db");
    {
        let store = Store::open(&db).unwrap();
        let engine = Engine::new();
        let mut session = Session::new();
        let mut ctx = ToolCtx {
            store: (&store).into(),
            session: &mut session,
            engine: &engine,
            root: dir.path().to_path_buf(),
            clock: Clock::Fixed(T0),
        };
        for k in 0..PROCS {
            let out = dispatch(
                &mut ctx,
                "task_create",
                json!({"name": format!("race parent k{}", 100 + k)}),
            )
            .unwrap();
            assert_eq!(out.text, format!("Created {}.", parent_slug(k)));
        }
    }
    let go = dir.path().join("go");
    let exe = std::env::current_exe().unwrap();
    let start = Instant::now();
    let children: Vec<_> = (0..PROCS)
        .map(|k| {
            Command::new(&exe)
                .args(["--exact", "race_child", "--nocapture", "--test-threads=1"])
                .env("CAIRN_RACE_DB", &db)
                .env("CAIRN_RACE_K", k.to_string())
                .env("CAIRN_RACE_OUT", dir.path().join(format!("out-{k}")))
                .env("CAIRN_RACE_GO", &go)
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    std::fs::write(&go, "").unwrap();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "child failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    eprintln!(
        "race: {PROCS} processes x {ROUNDS} rounds (create + fork) took {:?}",
        start.elapsed()
    );
    // round -> answers.
    let mut created: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    let mut forked: BTreeMap<usize, Vec<(String, String)>> = BTreeMap::new();
    for k in 0..PROCS {
        let text = std::fs::read_to_string(dir.path().join(format!("out-{k}"))).unwrap();
        assert_eq!(text.lines().count(), ROUNDS);
        for line in text.lines() {
            let parts: Vec<&str> = line.split('\t').collect();
            let round: usize = parts[0].parse().unwrap();
            let slug = parts[1]
                .strip_prefix("Created ")
                .and_then(|s| s.strip_suffix('.'))
                .unwrap()
                .to_string();
            created.entry(round).or_default().push(slug);
            let rest = parts[2]
                .strip_prefix("Forked ")
                .and_then(|s| s.strip_suffix(" (phase-of)."))
                .unwrap();
            let (child, parent) = rest.split_once(" from ").unwrap();
            assert_eq!(parent, parent_slug(k));
            forked
                .entry(round)
                .or_default()
                .push((child.to_string(), parent.to_string()));
        }
    }
    let store = Store::open(&db).unwrap();
    let suffixed = |base: &str| -> BTreeSet<String> {
        std::iter::once(base.to_string())
            .chain((2..=PROCS).map(|n| format!("{base}-{n}")))
            .collect()
    };
    let tasks_like = |base: &str| -> BTreeSet<String> {
        let mut stmt = store
            .conn()
            .prepare("SELECT slug FROM tasks WHERE slug = ?1 OR slug LIKE ?1 || '-_'")
            .unwrap();
        stmt.query_map([base], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    for round in 0..ROUNDS {
        let base = format!("{DAY}-race-shared-name-r{}", 100 + round);
        let answers: BTreeSet<String> = created[&round].iter().cloned().collect();
        assert_eq!(answers.len(), PROCS, "round {round}: {:?}", created[&round]);
        assert_eq!(answers, suffixed(&base), "round {round}");
        assert_eq!(tasks_like(&base), suffixed(&base), "round {round}");
        let base = format!("{DAY}-race-fork-name-r{}", 100 + round);
        let children: BTreeSet<String> = forked[&round].iter().map(|(c, _)| c.clone()).collect();
        assert_eq!(
            children,
            suffixed(&base),
            "round {round}: {:?}",
            forked[&round]
        );
        assert_eq!(tasks_like(&base), suffixed(&base), "round {round}");
        for (child, parent) in &forked[&round] {
            let actual: Option<String> = store
                .conn()
                .query_row(
                    "SELECT p.slug FROM tasks c JOIN tasks p ON p.id = c.parent_task_id
                     WHERE c.slug = ?1",
                    [child],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(actual.as_deref(), Some(parent.as_str()), "round {round}");
        }
    }
    let total: i64 = store
        .conn()
        .query_row("SELECT count(*) FROM tasks", [], |r| r.get(0))
        .unwrap();
    assert_eq!(total, (PROCS + 2 * PROCS * ROUNDS) as i64);
    assert!(store.verify().unwrap().ok);
}
