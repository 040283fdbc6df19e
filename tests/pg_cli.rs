//! The command line on PostgreSQL (spec/team.md "Moving between engines",
//! "Selecting PostgreSQL"): `cairn push` of a 10k-task store twice (nothing
//! doubled, digests equal), `verify`/`where`/`export` with `--db
//! postgres://…`, and a password never printed (a bad password, a bad host).

mod common;

use cairn::store::{EdgeType, NewEvent, Store};
use common::{cairn_in, pg};

/// Replaces the push line's `in T s` with `in T s` fixed.
fn untimed(s: &str) -> String {
    s.lines()
        .map(|l| match (l.starts_with("push:"), l.rfind(" in ")) {
            (true, Some(i)) => format!("{} in T s", &l[..i]),
            _ => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn push_10k_twice_then_verify_where_export() {
    let Some(url) = pg::url() else { return };
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    let db = dir.path().join(".cairn/cairn.db");
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    {
        let store = Store::open(&db).unwrap();
        let mut batch = Vec::new();
        for i in 0..10_000i64 {
            let slug = format!("2026-01-01-t{i:05}");
            batch.push(NewEvent::task_create(
                "s",
                1000 + i,
                &slug,
                Some("task"),
                None,
            ));
            if i % 10 != 0 {
                let parent = format!("2026-01-01-t{:05}", i - i % 10);
                batch.push(NewEvent::fork(
                    "s",
                    1000 + i,
                    &parent,
                    &slug,
                    EdgeType::PhaseOf,
                ));
            }
            if i % 7 == 0 && i > 0 {
                batch.push(NewEvent::link(
                    "s",
                    1000 + i,
                    &slug,
                    "2026-01-01-t00000",
                    EdgeType::DependsOn,
                ));
            }
            if batch.len() > 5000 {
                store.write(&batch).unwrap();
                batch.clear();
            }
        }
        store.write(&batch).unwrap();
    }
    let (out, err, code) = cairn_in(dir.path(), &["push", &url]);
    assert_eq!(code, 0, "{err}");
    let digest = {
        let store = Store::open(&db).unwrap();
        store.digest().unwrap()
    };
    let shown = url.clone();
    assert_eq!(
        untimed(&out),
        format!(
            "push: 20428 events read, 20428 added (0 already there) into {shown} schema {} in T s\ndigest: ok — both engines fold to {}",
            schema_of(&url),
            &digest[..12]
        )
    );
    let (out, err, code) = cairn_in(dir.path(), &["push", &url]);
    assert_eq!(code, 0, "{err}");
    assert!(
        untimed(&out).starts_with("push: 20428 events read, 0 added (20428 already there)"),
        "{out}"
    );
    let (out, _, code) = cairn_in(dir.path(), &["--db", &url, "verify"]);
    assert_eq!(
        (out.as_str(), code),
        (
            "verify: ok — projection is a faithful fold of 20428 events\n",
            0
        )
    );
    let (out, _, _) = cairn_in(dir.path(), &["--db", &url, "where"]);
    assert_eq!(
        out,
        format!("database: {url}\nschema: {}\nrule: --db\n", schema_of(&url))
    );
    let exp = dir.path().join("backup");
    let (out, err, code) = cairn_in(
        dir.path(),
        &["--db", &url, "export", "--logs", exp.to_str().unwrap()],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        format!(
            "export: wrote 20428 events into 10000 task logs under {}\n",
            exp.join("tasks").display()
        )
    );
    // The export from PostgreSQL equals the SQLite store's own logs, file for file.
    let ours = std::fs::read_to_string(
        dir.path()
            .join(".cairn/tasks/2026-01-01-t00007/events.ndjson"),
    )
    .unwrap();
    let theirs =
        std::fs::read_to_string(exp.join("tasks/2026-01-01-t00007/events.ndjson")).unwrap();
    assert_eq!(ours, theirs);
    let (_, err, code) = cairn_in(
        dir.path(),
        &["--db", &url, "export", "--logs", exp.to_str().unwrap()],
    );
    assert_eq!(code, 2);
    assert_eq!(
        err,
        format!(
            "error: {} already holds task logs; export into an empty directory.\n",
            exp.join("tasks").display()
        )
    );
}

fn schema_of(url: &str) -> String {
    url.rsplit("search_path%3D").next().unwrap().to_string()
}

#[test]
fn a_password_is_never_printed() {
    let Some(url) = pg::url() else { return };
    let dir = tempfile::tempdir().unwrap();
    let host = url
        .split("host=")
        .nth(1)
        .unwrap()
        .split('&')
        .next()
        .unwrap();
    let cases = [
        (
            format!("postgres://{}:wrong-secret-1@/postgres?host={host}", pg::PW_USER),
            "wrong-secret-1",
        ),
        (
            "postgres://bob:wrong-secret-2@no-such-host.invalid/db?sslmode=disable&connect_timeout=3".to_string(),
            "wrong-secret-2",
        ),
    ];
    for (bad, secret) in &cases {
        for args in [
            vec!["--db", bad, "verify"],
            vec!["--db", bad, "where"],
            vec!["push", bad],
        ] {
            let (out, err, code) = cairn_in(dir.path(), &args);
            assert!(
                !out.contains(secret) && !err.contains(secret),
                "{args:?}: {out}{err}"
            );
            assert!(
                out.contains(":***@") || err.contains(":***@"),
                "{args:?}: {out}{err}"
            );
            if args.last() == Some(&"verify") {
                assert_eq!(code, 2);
                assert!(
                    err.starts_with("error: PostgreSQL: cannot connect to postgres://"),
                    "{err}"
                );
            }
        }
    }
    // The right password through PGPASSWORD works (and is not printed either).
    let good = format!("postgres://{}@/postgres?host={host}", pg::PW_USER);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["--db", &good, "verify"])
        .env("PGPASSWORD", pg::PW_RIGHT)
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "verify: ok — projection is a faithful fold of 0 events\n"
    );
}

/// A fresh clone holds only the per-task logs (no `cairn.db`): `push`
/// reads them (the store is folded from them first) and copies every event.
#[test]
fn push_from_a_clone_with_only_logs() {
    let Some(url) = pg::url() else { return };
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    let (_, err, code) = cairn_in(dir.path(), &["add", "first task here"]);
    assert_eq!(code, 0, "{err}");
    let (_, err, code) = cairn_in(dir.path(), &["note", "a note on it"]);
    assert_eq!(code, 0, "{err}");
    for f in std::fs::read_dir(dir.path().join(".cairn")).unwrap() {
        let p = f.unwrap().path();
        if p.file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("cairn.db")
        {
            std::fs::remove_file(p).unwrap();
        }
    }
    let (out, err, code) = cairn_in(dir.path(), &["push", &url]);
    assert_eq!(code, 0, "{err}");
    assert!(
        untimed(&out).starts_with("push: 2 events read, 2 added (0 already there)"),
        "{out}"
    );
    assert!(
        out.contains("\ndigest: ok — both engines fold to "),
        "{out}"
    );
}

/// What the hostile pass found in URL and schema handling: an upper-case
/// scheme works, a malformed `postgres:` is refused (never taken for a file
/// name), system schemas are refused, schema names fold to lower case,
/// `push URL --pg-schema NAME` names the target's schema, `sslmode=require`
/// over a Unix socket connects (no TLS there, as libpq), `verify --json`.
#[test]
fn urls_schemas_and_verify_json() {
    let Some(url) = pg::url() else { return };
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    let host = url
        .split("host=")
        .nth(1)
        .unwrap()
        .split('&')
        .next()
        .unwrap();
    let upper = format!("POSTGRES://cairn@/postgres?host={host}&sslmode=require");
    let (out, err, code) = cairn_in(
        dir.path(),
        &[
            "--db",
            &upper,
            "--pg-schema",
            "Mixed_Case",
            "verify",
            "--json",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (v["ok"].as_bool(), v["events"].as_i64()),
        (Some(true), Some(0))
    );
    assert_eq!(v["projection"]["live"], v["projection"]["rebuilt"]);
    let (out, _, _) = cairn_in(
        dir.path(),
        &["--db", &upper, "--pg-schema", "Mixed_Case", "where"],
    );
    assert!(out.contains("\nschema: mixed_case\n"), "{out}");
    let (_, err, code) = cairn_in(dir.path(), &["--db", "postgres:cairn@somewhere/db", "ls"]);
    assert_eq!(code, 2);
    assert_eq!(
        err,
        "error: postgres:cairn@somewhere/db looks like a PostgreSQL URL but is not one; write it as postgres://USER@HOST/DATABASE\n"
    );
    assert!(!dir.path().join("postgres:cairn@somewhere").exists());
    for system in ["pg_catalog", "information_schema", "PG_toast"] {
        let (_, err, code) = cairn_in(dir.path(), &["--db", &url, "--pg-schema", system, "verify"]);
        assert_eq!(code, 2);
        assert_eq!(
            err,
            format!(
                "error: The PostgreSQL schema {system:?} is a system schema; choose a name of your own (default: cairn).\n"
            )
        );
    }
    let (_, err, code) = cairn_in(dir.path(), &["add", "a local task"]);
    assert_eq!(code, 0, "{err}");
    let base = format!("postgres://cairn@/postgres?host={host}");
    let (out, err, code) = cairn_in(dir.path(), &["push", &base, "--pg-schema", "pushed_here"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(" schema pushed_here in "), "{out}");
}

/// `push --json` and `export --json` (issue 27: `--json` on every command
/// that prints a result).
#[test]
fn push_and_export_speak_json() {
    let Some(url) = pg::url() else { return };
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    let (_, err, code) = cairn_in(dir.path(), &["add", "json task here"]);
    assert_eq!(code, 0, "{err}");
    let (out, err, code) = cairn_in(dir.path(), &["push", &url, "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (
            v["read"].as_u64(),
            v["added"].as_u64(),
            v["already_there"].as_u64(),
            v["digest_ok"].as_bool()
        ),
        (Some(1), Some(1), Some(0), Some(true))
    );
    assert_eq!(v["source_digest"], v["target_digest"]);
    let exp = dir.path().join("exp");
    let (out, err, code) = cairn_in(
        dir.path(),
        &[
            "--db",
            &url,
            "export",
            "--logs",
            exp.to_str().unwrap(),
            "--json",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (v["events"].as_u64(), v["tasks"].as_u64()),
        (Some(1), Some(1))
    );
}
