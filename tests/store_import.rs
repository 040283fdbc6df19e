//! `cairn import` of an untrusted `.kli` (issue 19, item 7): claims,
//! releases and view definitions are skipped (counted, named on stderr) and
//! never fold; a line whose event id is already taken by a different event
//! (earlier in the import, or in the store) is skipped, counted and named;
//! the link a `task.reclassify` becomes never takes a real line's id.

use std::path::Path;
use std::process::Command;

use cairn::store::Store;
use serde_json::{Value, json};

const CAIRN: &str = env!("CARGO_BIN_EXE_cairn");

/// Universal time of the lines (seconds since 1900).
const U: i64 = 3_990_000_000;

fn line(id: &str, task: &str, ty: &str, dt: i64, data: Value) -> String {
    json!({"data": data, "event_id": id, "event_key": "k", "prev_session_id": null,
           "session_id": "S1", "task_id": task, "ts": U + dt, "type": ty})
    .to_string()
}

/// Writes `lines` as the log of `folder` in the `.kli` at `kli`.
fn write_log(kli: &Path, folder: &str, lines: &[String]) {
    let dir = kli.join("tasks").join(folder);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("events.ndjson"), lines.join("\n") + "\n").unwrap();
}

/// `cairn --db DB import KLI`: (stdout, stderr), asserting exit 0.
fn import(db: &Path, kli: &Path) -> (String, String) {
    let out = Command::new(CAIRN)
        .arg("--db")
        .arg(db)
        .arg("import")
        .arg(kli)
        .env_remove("CAIRN_NOW")
        .output()
        .unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    assert!(out.status.success(), "{}", text(&out.stderr));
    (text(&out.stdout), text(&out.stderr))
}

fn count(st: &Store, sql: &str) -> i64 {
    st.conn().query_row(sql, [], |r| r.get(0)).unwrap()
}

#[test]
fn claims_and_views_are_skipped_ids_never_collide() {
    let t = tempfile::tempdir().unwrap();
    let kli = t.path().join("old/.kli");
    let far = 4_000_000_000_i64; // a claim until 2096
    write_log(
        &kli,
        "a",
        &[
            line("E01", "a", "task.create", 1, json!({"description": "A"})),
            line(
                "E02",
                "a",
                "task.claim",
                2,
                json!({"owner": "mallory", "until": far}),
            ),
            line("E03", "a", "task.release", 3, json!({"owner": "bob"})),
            line(
                "E04",
                "a",
                "view.define",
                4,
                json!({"name": "sneaky", "query": "(all)"}),
            ),
            line("E05", "a", "observation", 5, json!({"text": "first"})),
            // The same id again with different content.
            line("E05", "a", "observation", 6, json!({"text": "second"})),
            // Reclassify a→b: a sever (id R1) and a link.
            line(
                "R1",
                "a",
                "task.reclassify",
                7,
                json!({"target-id": "b", "old-type": "related", "new-type": "depends-on"}),
            ),
            // A real line with the id the old scheme gave that link.
            line("R1r", "a", "observation", 8, json!({"text": "real R1r"})),
            // A real line with an id ending in the reserved suffix.
            line(
                "R2~reclassify",
                "a",
                "observation",
                9,
                json!({"text": "spoof"}),
            ),
        ],
    );
    write_log(
        &kli,
        "@cairn",
        &[
            line(
                "V1",
                "@cairn",
                "view.define",
                10,
                json!({"name": "ready", "query": "(all)"}),
            ),
            line("V2", "@cairn", "view.undefine", 11, json!({"name": "x"})),
        ],
    );
    write_log(
        &kli,
        "b",
        &[line(
            "E10",
            "b",
            "task.create",
            1,
            json!({"description": "B"}),
        )],
    );
    let db = t.path().join("new/.cairn/cairn.db");
    let (out, err) = import(&db, &kli);
    assert_eq!(out, "Imported 6 events for 2 tasks; 7 lines skipped.\n");
    let log = |f: &str| kli.join("tasks").join(f).join("events.ndjson");
    let (a, c) = (log("a"), log("@cairn"));
    let a = a.display();
    let c = c.display();
    assert_eq!(
        err,
        format!(
            "cairn import: skipped {c}:1: view.define is not imported (an import brings no claims, no view definitions and no splits)\n\
             cairn import: skipped {c}:2: view.undefine is not imported (an import brings no claims, no view definitions and no splits)\n\
             cairn import: skipped {a}:2: task.claim is not imported (an import brings no claims, no view definitions and no splits)\n\
             cairn import: skipped {a}:3: task.release is not imported (an import brings no claims, no view definitions and no splits)\n\
             cairn import: skipped {a}:4: view.define is not imported (an import brings no claims, no view definitions and no splits)\n\
             cairn import: skipped {a}:6: event id \"E05\" is already taken by a different event\n\
             cairn import: skipped {a}:9: event id \"R2~reclassify\" ends in ~reclassify, which import keeps for the link a task.reclassify becomes\n"
        )
    );
    let st = Store::open(&db).unwrap();
    assert_eq!(
        count(
            &st,
            "SELECT count(*) FROM tasks WHERE claim_owner IS NOT NULL"
        ),
        0
    );
    assert_eq!(count(&st, "SELECT count(*) FROM view_state"), 0);
    assert_eq!(
        count(&st, "SELECT count(*) FROM tasks WHERE slug LIKE '@%'"),
        0
    );
    let texts: Vec<String> = st
        .conn()
        .prepare("SELECT text FROM observations ORDER BY ts")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(texts, ["first", "real R1r"]);
    let ids: Vec<(String, String)> = st
        .conn()
        .prepare("SELECT event_id, type FROM events WHERE event_id LIKE 'R1%' ORDER BY event_id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        ids,
        [
            ("R1".to_string(), "task.sever".to_string()),
            ("R1r".to_string(), "observation".to_string()),
            ("R1~reclassify".to_string(), "task.link".to_string()),
        ]
    );
    assert_eq!(
        count(
            &st,
            "SELECT count(*) FROM edges e JOIN tasks s ON s.id = e.src_id JOIN tasks d ON d.id = e.dst_id
             WHERE s.slug = 'a' AND d.slug = 'b' AND e.type = 'depends-on'"
        ),
        1
    );
    drop(st);

    // Importing again changes nothing and skips the same seven lines.
    let (out, _) = import(&db, &kli);
    assert_eq!(out, "Imported 0 events for 0 tasks; 7 lines skipped.\n");

    // Another .kli reusing an id the store holds, with other content.
    let other = t.path().join("other/.kli");
    write_log(
        &other,
        "c",
        &[
            line("E01", "c", "task.create", 1, json!({"description": "C"})),
            line("E20", "c", "task.create", 2, json!({"description": "C"})),
        ],
    );
    let (out, err) = import(&db, &other);
    assert_eq!(out, "Imported 1 events for 1 tasks; 1 lines skipped.\n");
    assert_eq!(
        err,
        format!(
            "cairn import: skipped {}:1: event id \"E01\" is already taken by a different event\n",
            other.join("tasks/c/events.ndjson").display()
        )
    );
    let st = Store::open(&db).unwrap();
    assert_eq!(
        count(
            &st,
            "SELECT count(*) FROM events WHERE event_id = 'E01' AND task_id = 'a'"
        ),
        1
    );
}

/// Hostile run M2: an untrusted `.kli` cannot move another task's events
/// with a `task.split` line: splits are written by reconcile only, so an
/// import skips and counts them.
#[test]
fn an_imported_split_is_skipped() {
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("new/.cairn/cairn.db");
    let victim = "2026-01-01-victim-task";
    {
        let st = Store::open(&db).unwrap();
        st.write(&[
            cairn::store::NewEvent::task_create("s", 1_767_225_600, victim, None, None),
            cairn::store::NewEvent::observation("s", 1_767_225_601, victim, "secret victim note"),
        ])
        .unwrap();
    }
    let keys: Vec<String> = {
        let st = Store::open(&db).unwrap();
        st.events()
            .unwrap()
            .iter()
            .map(|e| {
                cairn::store::event::event_key(
                    &e.task_id,
                    &e.event_type,
                    e.ts,
                    &e.session_id,
                    &cairn::store::event::canonical_json(&e.data),
                )
            })
            .collect()
    };
    let kli = t.path().join("old/.kli");
    write_log(
        &kli,
        "attacker",
        &[
            line(
                "A1",
                "attacker",
                "task.create",
                1,
                json!({"description": "x"}),
            ),
            line(
                "A2",
                victim,
                "task.split",
                2,
                json!({"events": keys, "into": "attacker"}),
            ),
        ],
    );
    let (out, err) = import(&db, &kli);
    assert_eq!(out, "Imported 1 events for 1 tasks; 1 lines skipped.\n");
    assert!(
        err.contains("task.split is not imported (an import brings no claims, no view definitions and no splits)"),
        "{err}"
    );
    let st = Store::open(&db).unwrap();
    assert_eq!(
        count(&st, "SELECT count(*) FROM events WHERE type = 'task.split'"),
        0
    );
    assert_eq!(
        count(
            &st,
            "SELECT count(*) FROM observations o JOIN tasks t ON t.id = o.task_id WHERE t.slug = '2026-01-01-victim-task'"
        ),
        1
    );
}

/// `cairn import --json` (issue 27): `{"events", "tasks", "skipped"}` on
/// stdout, the skipped lines still named on stderr; a second import counts
/// nothing new.
#[test]
fn import_json_counts() {
    let t = tempfile::tempdir().unwrap();
    let kli = t.path().join("old/.kli");
    write_log(
        &kli,
        "a",
        &[
            line("E01", "a", "task.create", 1, json!({"description": "A"})),
            line("E02", "a", "observation", 2, json!({"text": "first"})),
            line(
                "E03",
                "a",
                "task.claim",
                3,
                json!({"owner": "x", "until": U}),
            ),
        ],
    );
    write_log(
        &kli,
        "b",
        &[line(
            "E10",
            "b",
            "task.create",
            1,
            json!({"description": "B"}),
        )],
    );
    let db = t.path().join("new/.cairn/cairn.db");
    let run = || {
        let out = Command::new(CAIRN)
            .arg("--db")
            .arg(&db)
            .args(["import", "--json"])
            .arg(&kli)
            .env_remove("CAIRN_NOW")
            .output()
            .unwrap();
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        (
            out.status.code(),
            text(&out.stdout),
            text(&out.stderr).replace(&kli.display().to_string(), "KLI"),
        )
    };
    let skipped = "cairn import: skipped KLI/tasks/a/events.ndjson:3: task.claim is not imported (an import brings no claims, no view definitions and no splits)\n";
    assert_eq!(
        run(),
        (
            Some(0),
            "{\n  \"events\": 3,\n  \"skipped\": 1,\n  \"tasks\": 2\n}\n".to_string(),
            skipped.to_string()
        )
    );
    assert_eq!(
        run(),
        (
            Some(0),
            "{\n  \"events\": 0,\n  \"skipped\": 1,\n  \"tasks\": 0\n}\n".to_string(),
            skipped.to_string()
        )
    );
    // A path with no .kli: an error on stderr, exit 2, nothing on stdout.
    let out = Command::new(CAIRN)
        .arg("--db")
        .arg(&db)
        .args(["import", "--json"])
        .arg(t.path().join("nowhere"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
}

/// `cairn export --logs DIR` then `cairn import DIR` in another project:
/// the tasks come back with their names, notes, links and statuses, the
/// claim (`done` ends it: no release line) is skipped and named (an import takes no task), and a second
/// import adds nothing.
#[test]
fn an_export_imports_back_with_names_notes_and_links() {
    let t = tempfile::tempdir().unwrap();
    let run = |dir: &Path, args: &[&str]| {
        let out = Command::new(CAIRN)
            .args(args)
            .current_dir(dir)
            .env_remove("CAIRN_DB")
            .env("CAIRN_NOW", "1767225600")
            .env("HOME", dir)
            .output()
            .unwrap();
        (
            String::from_utf8_lossy(&out.stdout).trim_end().to_string(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
            out.status.code(),
        )
    };
    let a = t.path().join("a");
    let b = t.path().join("b");
    for d in [&a, &b] {
        std::fs::create_dir_all(d.join(".git")).unwrap();
    }
    let ok = |dir: &Path, args: &[&str]| {
        let (out, err, code) = run(dir, args);
        assert_eq!(code, Some(0), "{args:?}: {out}{err}");
        out
    };
    ok(&a, &["add", "ship the parser rewrite"]);
    ok(
        &a,
        &[
            "add",
            "phase one work",
            "--under",
            "2026-01-01-ship-parser-rewrite",
        ],
    );
    ok(
        &a,
        &["note", "2026-01-01-phase-one-work", "the lexer is done"],
    );
    ok(&a, &["claim", "2026-01-01-phase-one-work"]);
    ok(&a, &["done", "2026-01-01-phase-one-work"]);
    let backup = t.path().join("backup");
    ok(&a, &["export", "--logs", backup.to_str().unwrap()]);
    let (out, err, code) = run(&b, &["import", backup.to_str().unwrap()]);
    assert_eq!(
        (out.as_str(), code),
        ("Imported 5 events for 2 tasks; 1 lines skipped.", Some(0)),
        "{err}"
    );
    assert_eq!(
        err.matches("task.claim is not imported").count(),
        1,
        "{err}"
    );
    let q = "(-> (all) (:select :status :obs-count :parent))";
    assert_eq!(ok(&b, &["query", q]), ok(&a, &["query", q]));
    // The claim (stamped by the real clock) stayed behind.
    assert_eq!(
        ok(&b, &["ls", "--all"]),
        "slug                            status     name                     obs  updated (UTC)\n\
         2026-01-01-phase-one-work       completed  phase one work           1    2026-01-01 00:00\n\
         2026-01-01-ship-parser-rewrite  active     ship the parser rewrite  0    2026-01-01 00:00"
    );
    assert_eq!(
        ok(&b, &["show", "2026-01-01-phase-one-work"]),
        ok(&a, &["show", "2026-01-01-phase-one-work"])
    );
    let (out, _, code) = run(&b, &["import", backup.to_str().unwrap()]);
    assert_eq!(
        (out.as_str(), code),
        ("Imported 0 events for 0 tasks; 1 lines skipped.", Some(0))
    );
    // A line changed by hand after the export (its key no longer checks
    // out) is skipped and named, not read as the original tool's.
    let log = backup.join("tasks/2026-01-01-ship-parser-rewrite/events.ndjson");
    let text = std::fs::read_to_string(&log).unwrap();
    std::fs::write(
        &log,
        text.replace("ship the parser rewrite", "renamed by hand"),
    )
    .unwrap();
    let c = t.path().join("c");
    std::fs::create_dir_all(c.join(".git")).unwrap();
    let (out, err, code) = run(&c, &["import", backup.to_str().unwrap()]);
    assert_eq!(
        (out.as_str(), code),
        ("Imported 4 events for 2 tasks; 2 lines skipped.", Some(0)),
        "{err}"
    );
    assert!(
        err.contains("events.ndjson:1: a cairn log line whose event_key does not match the content (changed after it was written?)"),
        "{err}"
    );
}
