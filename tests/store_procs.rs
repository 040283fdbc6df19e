//! Multi-process tests through the `cairn` binary: concurrent appenders,
//! SIGKILL mid-append, and the `where` / `verify` / `rebuild` commands
//! (spec/store.md "SQLite settings", "Rebuild and verify").

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cairn::store::{NewEvent, Store};

const CAIRN: &str = env!("CARGO_BIN_EXE_cairn");

fn cairn(db: &Path) -> Command {
    let mut c = Command::new(CAIRN);
    c.arg("--db").arg(db).env_remove("CAIRN_DB");
    c
}

#[test]
fn two_processes_append_2000_events_each_without_loss() {
    let dir = tempfile::tempdir().unwrap();
    // Not created beforehand: both processes race to create the store too.
    let db = dir.path().join(".cairn/cairn.db");
    let start = Instant::now();
    let children: Vec<_> = ["p1", "p2"]
        .iter()
        .map(|s| {
            cairn(&db)
                .args([
                    "stress-append",
                    "--count",
                    "2000",
                    "--session",
                    s,
                    "--task",
                    s,
                ])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut seqs = BTreeSet::new();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stderr), "");
        assert!(out.status.success());
        let lines: Vec<i64> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| l.parse().unwrap())
            .collect();
        assert_eq!(lines.len(), 2000);
        seqs.extend(lines);
    }
    eprintln!("concurrency: 2 x 2000 appends took {:?}", start.elapsed());
    assert_eq!(seqs.len(), 4000);
    let st = Store::open(&db).unwrap();
    assert_eq!(st.event_count().unwrap(), 4000);
    let obs: i64 = st
        .conn()
        .query_row("SELECT count(*) FROM observations", [], |r| r.get(0))
        .unwrap();
    assert_eq!(obs, 4000);
    assert!(st.verify().unwrap().ok);
}

/// A pseudo-random number from the standard library's per-process hasher keys.
fn random_below(n: u64) -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(n);
    h.finish() % n
}

#[test]
fn sigkill_mid_append_loses_nothing_reported_ten_times() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join(".cairn/cairn.db");
    drop(Store::open(&db).unwrap());
    let start = Instant::now();
    let mut reported_total = 0usize;
    for round in 0..10 {
        let session = format!("crash-{round}");
        let mut child = cairn(&db)
            .args(["stress-append", "--count", "1000000", "--session", &session])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut lines = BufReader::new(stdout).lines();
        // Wait for the first commit, then kill at a random moment.
        let first: i64 = lines.next().unwrap().unwrap().parse().unwrap();
        std::thread::sleep(Duration::from_millis(random_below(120)));
        child.kill().unwrap(); // SIGKILL on Unix
        child.wait().unwrap();
        let mut reported = vec![first];
        for line in lines {
            match line {
                Ok(l) if !l.is_empty() => match l.parse() {
                    Ok(seq) => reported.push(seq),
                    Err(_) => break, // a torn last line was never a full report
                },
                _ => break,
            }
        }
        reported_total += reported.len();
        let st = Store::open(&db).unwrap();
        let v = st.verify().unwrap();
        assert!(v.ok, "round {round}: verify failed");
        for seq in &reported {
            let n: i64 = st
                .conn()
                .query_row(
                    "SELECT count(*) FROM events WHERE seq = ?1 AND session_id = ?2",
                    rusqlite::params![seq, session],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(n, 1, "round {round}: reported seq {seq} missing");
        }
    }
    eprintln!(
        "crash: 10 SIGKILL rounds ({reported_total} reported commits) took {:?}",
        start.elapsed()
    );
    assert!(reported_total >= 10);
}

#[test]
fn where_in_a_fresh_repository_names_the_repository_rule() {
    let t = tempfile::tempdir().unwrap();
    let repo = t.path().join("repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::create_dir_all(repo.join("src")).unwrap();
    let out = Command::new(CAIRN)
        .arg("where")
        .current_dir(repo.join("src"))
        .env_remove("CAIRN_DB")
        .env("HOME", t.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!(
            "database: {r}/.cairn/cairn.db\nproject: {r}\nrule: repository root (.git found at {r})\n",
            r = repo.display()
        )
    );
    // `where` creates nothing.
    assert!(!repo.join(".cairn").exists());
}

#[test]
fn where_reports_cairn_db_from_the_environment() {
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("x.db");
    let out = Command::new(CAIRN)
        .arg("where")
        .current_dir(t.path())
        .env("CAIRN_DB", &db)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!(
            "database: {}\nproject: {}\nrule: CAIRN_DB environment variable\n",
            db.display(),
            t.path().display()
        )
    );
}

#[test]
fn verify_exits_0_on_a_faithful_store_and_1_on_a_tampered_one() {
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join(".cairn/cairn.db");
    {
        let st = Store::open(&db).unwrap();
        st.write(&[
            NewEvent::task_create("s", 10, "2026-01-01-alpha", Some("d"), None),
            NewEvent::observation("s", 11, "2026-01-01-alpha", "note"),
        ])
        .unwrap();
    }
    let out = cairn(&db).arg("verify").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "verify: ok — projection is a faithful fold of 2 events\n\
         logs: ok — every event is in its task's log and every log line is in the database (1 logs, 2 lines, 0 malformed)\n"
    );
    let (before, after) = {
        let st = Store::open(&db).unwrap();
        let good = st.digest().unwrap();
        st.conn()
            .execute("UPDATE tasks SET status = 'blocked'", [])
            .unwrap();
        (st.digest().unwrap(), good)
    };
    let out = cairn(&db).arg("verify").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!(
            "verify: FAILED — projection differs from a fresh fold of 2 events (live {}, rebuilt {}); run `cairn rebuild`\n\
             logs: ok — every event is in its task's log and every log line is in the database (1 logs, 2 lines, 0 malformed)\n",
            &before[..12],
            &after[..12]
        )
    );
    let out = cairn(&db).arg("rebuild").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("rebuild: re-folded 2 events; projection digest {after}\n")
    );
    assert_eq!(
        cairn(&db).arg("verify").output().unwrap().status.code(),
        Some(0)
    );
}
