//! Issue 19 item 10: one clock decides claims. `CAIRN_NOW` (the CLI's fixed
//! stamp for transcripts) never moves the clock a claim is judged by: a
//! process a day ahead cannot take another agent's live claim, and a claim
//! made a day behind is live for its full lease. Other events of the same
//! process keep the `CAIRN_NOW` stamp.

use std::path::Path;
use std::process::Command;

use cairn::store::{NewEvent, Store};

const DAY: i64 = 86_400;
const X: &str = "2026-12-01-clock-x";
const Y: &str = "2026-12-01-clock-y";

/// `cairn --db DB --as AGENT ARGS`, with `CAIRN_NOW` set to `now` when
/// given: (exit code, stdout).
fn cairn(db: &Path, agent: &str, now: Option<i64>, args: &[&str]) -> (i32, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cairn"));
    cmd.arg("--db")
        .arg(db)
        .args(["--as", agent])
        .args(args)
        .env_remove("CAIRN_AGENT")
        .env_remove("CAIRN_NOW")
        .env("NO_COLOR", "1");
    if let Some(n) = now {
        cmd.env("CAIRN_NOW", n.to_string());
    }
    let out = cmd.output().unwrap();
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).trim_end().to_string(),
    )
}

fn claim(slug: &str, seconds: i64) -> String {
    format!("(-> (node \"{slug}\") (:claim! {seconds}) (:ids))")
}

/// `(owner, until, claim event ts)` of `slug`'s claim register.
fn register(st: &Store, slug: &str) -> (Option<String>, Option<i64>, Option<i64>) {
    st.conn()
        .query_row(
            "SELECT claim_owner, claim_until, claim_ts FROM tasks WHERE slug = ?1",
            [slug],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap()
}

#[test]
fn cairn_now_never_moves_the_clock_claims_are_judged_by() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cairn.db");
    let st = Store::open(&db).unwrap();
    let t0 = cairn::store::now();
    st.write(&[
        NewEvent::task_create("seed", t0, X, None, None),
        NewEvent::task_create("seed", t0, Y, None, None),
    ])
    .unwrap();

    // ana claims X on the real clock.
    assert_eq!(
        cairn(&db, "ana", None, &["query", "--write", &claim(X, 600)]),
        (0, format!("1 task:\n- {X}"))
    );
    let held = register(&st, X);
    let events = st.event_count().unwrap();

    // bob, a day ahead, neither sees X as ready nor takes it.
    let ahead = Some(cairn::store::now() + DAY);
    assert_eq!(
        cairn(
            &db,
            "bob",
            ahead,
            &["query", "(-> (query \"ready\") (:ids))"]
        ),
        (0, format!("1 task:\n- {Y}"))
    );
    assert_eq!(
        cairn(&db, "bob", ahead, &["query", "--write", &claim(X, 600)]),
        (0, "No matching tasks.".to_string())
    );
    assert_eq!(st.event_count().unwrap(), events, "bob recorded nothing");
    assert_eq!(register(&st, X), held);
    // task_get a day ahead still shows ana's claim.
    let (code, got) = cairn(
        &db,
        "bob",
        ahead,
        &["call", "task_get", &format!("task_id={X}")],
    );
    assert_eq!(code, 0);
    assert!(got.contains("\n  claimed: ana until "), "{got}");

    // cy, a day behind, claims Y: the lease runs from the real clock, so it
    // is live and cy holds it.
    let behind = cairn::store::now() - DAY;
    assert_eq!(
        cairn(
            &db,
            "cy",
            Some(behind),
            &["query", "--write", &claim(Y, 600)]
        ),
        (0, format!("1 task:\n- {Y}"))
    );
    let (owner, until, stamp) = register(&st, Y);
    let after = cairn::store::now();
    assert_eq!(owner.as_deref(), Some("cy"));
    let until = until.unwrap();
    assert!(
        (t0 + 600..=after + 600).contains(&until),
        "until {until}, real clock {t0}..{after}"
    );
    // The claim event is stamped by the store clock, not CAIRN_NOW.
    assert!((t0..=after).contains(&stamp.unwrap()), "{stamp:?}");
    assert_eq!(
        cairn(&db, "cy", None, &["query", "(-> (mine) (:ids))"]),
        (0, format!("1 task:\n- {Y}"))
    );
    // Any other event still carries the CAIRN_NOW stamp (transcripts).
    assert_eq!(
        cairn(
            &db,
            "cy",
            Some(behind),
            &[
                "query",
                "--write",
                &format!("(-> (node \"{Y}\") (:set! :k \"v\") (:ids))")
            ]
        ),
        (0, format!("1 task:\n- {Y}"))
    );
    let ts: i64 = st
        .conn()
        .query_row(
            "SELECT ts FROM events WHERE type = 'task.set-metadata'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(ts, behind);
}
