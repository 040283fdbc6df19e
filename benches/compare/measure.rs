//! Timing and answers: the comparable answer of a TQ result, running hand
//! SQL reading every cell, medians, the read-only connection, ms formatting.

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use cairn::tq::render::Output;
use rusqlite::types::Value;
use rusqlite::{Connection, OpenFlags, params};

/// The answer as comparable text: slugs in order, or the count.
pub fn answer_of(out: &Output) -> Vec<String> {
    match out {
        Output::Tasks { tasks, .. } => tasks.iter().map(|t| t.slug.clone()).collect(),
        Output::Ids { ids } => ids.clone(),
        Output::Count { count } => vec![count.to_string()],
        // `KEY:SLUG` per task, groups largest first (ties by key).
        Output::Groups { groups, .. } => groups
            .iter()
            .flat_map(|g| g.tasks.iter().map(move |t| format!("{}:{}", g.key, t.slug)))
            .collect(),
        other => panic!("unexpected output shape {other:?}"),
    }
}

/// Marks hand SQL whose rows are `(key, slug, ...)` in slug order: the
/// client groups them as `(:group-by)` does (a hash of keys, groups largest
/// first, ties by key) and answers `KEY:SLUG` per task, as [`answer_of`].
pub const GROUPED: &str = "/* grouped */ ";

/// Runs hand SQL reading every column of every row; returns column 0 as
/// text (or, for [`GROUPED`] SQL, the grouped `KEY:SLUG` answer).
pub fn run_hand(conn: &Connection, sql: &str, current: &str) -> Vec<String> {
    if sql.starts_with(GROUPED) {
        return run_hand_grouped(conn, sql);
    }
    let mut stmt = conn.prepare_cached(sql).expect("prepare hand SQL");
    let uses_param = stmt.parameter_count() > 0;
    let n = stmt.column_count();
    let mut rows = if uses_param {
        stmt.query(params![current])
    } else {
        stmt.query([])
    }
    .expect("query hand SQL");
    let mut out = Vec::new();
    while let Some(r) = rows.next().expect("row") {
        let mut cells: Vec<Value> = Vec::with_capacity(n);
        for i in 0..n {
            cells.push(r.get::<_, Value>(i).expect("cell"));
        }
        out.push(match &cells[0] {
            Value::Text(s) => s.clone(),
            Value::Integer(i) => i.to_string(),
            other => format!("{other:?}"),
        });
        black_box(&cells);
    }
    out
}

/// Median wall time in ms of `f` (one warm-up; at least 5 samples, at most
/// 60, about 0.5 s of samples).
pub fn median_ms(f: impl FnMut()) -> f64 {
    median_ms_reset(f, || {})
}

/// [`median_ms`] of `f` alone, running `reset` untimed after each run (a
/// write and its undo: only the write is timed).
pub fn median_ms_reset(mut f: impl FnMut(), mut reset: impl FnMut()) -> f64 {
    f();
    reset();
    let mut samples = Vec::new();
    let start = Instant::now();
    while samples.len() < 5 || (samples.len() < 60 && start.elapsed() < Duration::from_millis(500))
    {
        let t = Instant::now();
        f();
        samples.push(t.elapsed().as_secs_f64() * 1e3);
        reset();
    }
    samples.sort_by(|a, b| a.total_cmp(b));
    samples[samples.len() / 2]
}

/// The medians (ms) of `f` and `g` run alternately, `f` then `g`, at least
/// 5 pairs and up to 400 pairs or 1.5 s: a burst of noise on the shared
/// machine lands on both sides instead of on one block (the side-by-side
/// rows: ours and the hand SQL).
pub fn median_pair_ms(f: impl FnMut(), g: impl FnMut()) -> (f64, f64) {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    pair_samples(f, g, 400, Duration::from_millis(1500), &mut a, &mut b);
    (median(&mut a), median(&mut b))
}

/// Adds to `a` and `b` the times (ms) of `f` and `g` run alternately, after
/// one untimed run of each: at least 5 pairs, up to `pairs` or `budget`.
pub fn pair_samples(
    mut f: impl FnMut(),
    mut g: impl FnMut(),
    pairs: usize,
    budget: Duration,
    a: &mut Vec<f64>,
    b: &mut Vec<f64>,
) {
    f();
    g();
    let start = Instant::now();
    let mut n = 0;
    while n < 5 || (n < pairs && start.elapsed() < budget) {
        let t = Instant::now();
        f();
        a.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        g();
        b.push(t.elapsed().as_secs_f64() * 1e3);
        n += 1;
    }
}

/// The median of `v` (sorted in place); NaN when empty.
pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|x, y| x.total_cmp(y));
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

pub fn ro(path: &Path) -> Connection {
    let c = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .expect("open read-only");
    c.set_prepared_statement_cache_capacity(128);
    c
}

/// `ms` with 0, 2 or 3 decimals (by size) for the report.
pub fn fmt_ms(ms: f64) -> String {
    if ms >= 100.0 {
        format!("{ms:.0}")
    } else if ms >= 1.0 {
        format!("{ms:.2}")
    } else {
        format!("{ms:.3}")
    }
}

/// [`GROUPED`] hand SQL: every column of every row read, the tasks grouped
/// by column 0 in the client.
fn run_hand_grouped(conn: &Connection, sql: &str) -> Vec<String> {
    let mut stmt = conn.prepare_cached(sql).expect("prepare hand SQL");
    let n = stmt.column_count();
    let mut rows = stmt.query([]).expect("query hand SQL");
    let mut groups: Vec<(String, Vec<Vec<Value>>)> = Vec::new();
    let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    while let Some(r) = rows.next().expect("row") {
        let key = match r.get::<_, Value>(0).expect("key") {
            Value::Text(s) => s,
            Value::Null => "none".to_string(),
            other => format!("{other:?}"),
        };
        let cells: Vec<Value> = (1..n)
            .map(|i| r.get::<_, Value>(i).expect("cell"))
            .collect();
        match index.get(&key) {
            Some(&g) => groups[g].1.push(cells),
            None => {
                index.insert(key.clone(), groups.len());
                groups.push((key, vec![cells]));
            }
        }
    }
    groups.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(&b.0)));
    groups
        .iter()
        .flat_map(|(k, tasks)| {
            tasks.iter().map(move |cells| match &cells[0] {
                Value::Text(s) => format!("{k}:{s}"),
                other => format!("{k}:{other:?}"),
            })
        })
        .collect()
}
