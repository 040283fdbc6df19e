//! cairn vs hand-written SQL vs a per-task evaluator, on generated stores of
//! 1k, 10k and 100k tasks (issue 9; docs/performance.md).
//!
//! `cargo bench --bench compare` prints, per query, the median time of the
//! engine (`Engine::run_value` end to end: catalog, compile, plan, lower,
//! one statement, rows), of hand-written SQL for the same answer on the same
//! schema (a warm read-only connection, cached statements, every column
//! read), and their ratio, side by side for each store size; then the
//! per-task evaluator baselines, the fixed cost of `(-> (current) (:ids))`
//! and the peak memory of `knowledge`. Every answer is asserted equal to the
//! hand SQL's before anything is timed.
//!
//! Environment: `CAIRN_BENCH_SIZES=1000,10000` (default `1000,10000,100000`),
//! `CAIRN_BENCH_LABEL=before` (names the report copy written to
//! `target/bench-report-LABEL.md`).

#[path = "support/realistic.rs"]
mod realistic;

use std::collections::BTreeMap;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cairn::session::Session;
use cairn::store::Store;
use cairn::tq::Surface;
use cairn::tq::engine::Engine;
use cairn::tq::registry;
use cairn::tq::render::Output;
use rusqlite::types::Value;
use rusqlite::{Connection, OpenFlags, params};

/// `(active)` on a `tasks t` row.
const ACTIVE: &str = "t.status IN ('open', 'active', 'blocked') AND substr(t.slug, 1, 1) <> '@'";
/// `(active)` kept off `tasks_status` (unary `+`), so a top-N walks the
/// counter index instead of sorting every live task (docs/performance.md).
const ACTIVE_NO_INDEX: &str =
    "+t.status IN ('open', 'active', 'blocked') AND substr(t.slug, 1, 1) <> '@'";
/// The plain task columns (slug, display name, status).
const COLS: &str = "t.slug, COALESCE((SELECT m.value FROM task_metadata m WHERE m.task_id = t.id AND m.key = 'display-name'), t.slug), t.status";
/// The enriched task columns.
const ENRICHED: &str = "t.slug, COALESCE((SELECT m.value FROM task_metadata m WHERE m.task_id = t.id AND m.key = 'display-name'), t.slug), t.status, t.obs_count, t.edge_count, (SELECT json_group_array(json_array(m.key, m.value) ORDER BY m.key) FROM task_metadata m WHERE m.task_id = t.id)";

/// `plan` as task ids: the current task's children, else its siblings.
const PLAN_CTE: &str = "cur AS (SELECT id, parent_task_id FROM tasks WHERE slug = ?1),
kids AS (SELECT c.id FROM tasks c, cur WHERE c.parent_task_id = cur.id),
plan AS (SELECT id FROM kids
         UNION ALL SELECT s.id FROM tasks s, cur WHERE s.parent_task_id = cur.parent_task_id AND NOT EXISTS (SELECT 1 FROM kids))";

/// The closure of the current task over phase-of, depends-on and related.
const CLOSURE_CTE: &str = "cur AS (SELECT id FROM tasks WHERE slug = ?1),
clo(id) AS (
    SELECT c.id FROM cur JOIN tasks c ON c.parent_task_id = cur.id
    UNION SELECT e.dst_id FROM cur JOIN edges e ON e.src_id = cur.id AND e.type IN ('depends-on', 'related')
    UNION SELECT c.id FROM clo JOIN tasks c ON c.parent_task_id = clo.id
    UNION SELECT e.dst_id FROM clo JOIN edges e ON e.src_id = clo.id AND e.type IN ('depends-on', 'related'))";

/// One compared query: its TQ text and the hand-written SQL (`?1` is the
/// current task's slug when used).
struct Case {
    name: String,
    tq: String,
    hand: String,
}

fn case(name: &str, tq: &str, hand: String) -> Case {
    Case {
        name: name.to_string(),
        tq: tq.to_string(),
        hand,
    }
}

fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    let view_sql: BTreeMap<&str, String> = [
        (
            "active-roots",
            format!("SELECT {COLS} FROM tasks t WHERE {ACTIVE} AND t.parent_task_id IS NULL ORDER BY t.slug"),
        ),
        (
            "orphans",
            format!("SELECT {COLS} FROM tasks t WHERE t.edge_count = 0 AND substr(t.slug, 1, 1) <> '@' ORDER BY t.slug"),
        ),
        (
            "leaf-tasks",
            format!("SELECT {COLS} FROM tasks t WHERE {ACTIVE} AND t.child_count = 0 ORDER BY t.slug"),
        ),
        (
            "stale-phases",
            format!("SELECT {COLS} FROM tasks t JOIN tasks p ON p.id = t.parent_task_id WHERE {ACTIVE} AND p.status IN ('completed', 'abandoned') ORDER BY t.slug"),
        ),
        (
            "plan",
            format!("WITH {PLAN_CTE} SELECT {ENRICHED} FROM plan JOIN tasks t ON t.id = plan.id ORDER BY t.slug"),
        ),
        (
            "plan-frontier",
            format!("WITH {PLAN_CTE} SELECT {ENRICHED} FROM plan JOIN tasks t ON t.id = plan.id
                     WHERE t.status NOT IN ('completed', 'abandoned')
                       AND NOT EXISTS (SELECT 1 FROM edges e JOIN tasks d ON d.id = e.dst_id
                                       WHERE e.src_id = t.id AND e.type = 'depends-on'
                                         AND d.status NOT IN ('completed', 'abandoned'))
                     ORDER BY t.slug"),
        ),
        (
            "ready",
            format!("SELECT {COLS} FROM tasks t WHERE t.status IN ('open', 'active') AND substr(t.slug, 1, 1) <> '@'
                       AND NOT EXISTS (SELECT 1 FROM edges e JOIN tasks d ON d.id = e.dst_id
                                       WHERE e.src_id = t.id AND e.type = 'depends-on'
                                         AND d.status NOT IN ('completed', 'abandoned'))
                       AND NOT EXISTS (SELECT 1 FROM tasks c WHERE c.parent_task_id = t.id
                                         AND c.status NOT IN ('completed', 'abandoned'))
                       AND NOT (t.claim_owner IS NOT NULL AND t.claim_until > unixepoch())
                     ORDER BY t.slug"),
        ),
        (
            "recent",
            format!("SELECT {COLS} FROM tasks t WHERE {ACTIVE} ORDER BY t.updated_ts DESC, t.slug LIMIT 20"),
        ),
        (
            "busy",
            format!("SELECT {COLS} FROM tasks t WHERE {ACTIVE_NO_INDEX} ORDER BY t.obs_count DESC, t.slug LIMIT 20"),
        ),
        (
            "hub-tasks",
            format!("SELECT {COLS} FROM tasks t WHERE {ACTIVE_NO_INDEX} ORDER BY t.edge_count DESC, t.slug LIMIT 20"),
        ),
        (
            "knowledge",
            format!("WITH RECURSIVE {CLOSURE_CTE} SELECT {ENRICHED} FROM clo JOIN tasks t ON t.id = clo.id ORDER BY t.slug"),
        ),
    ]
    .into_iter()
    .collect();
    for view in registry::builtin_views() {
        let name = if view.name == "frontier" {
            "plan-frontier"
        } else {
            view.name
        };
        let hand = view_sql
            .get(name)
            .unwrap_or_else(|| panic!("no hand SQL for view {}", view.name))
            .clone();
        v.push(case(view.name, &format!("(query \"{}\")", view.name), hand));
    }
    let count_active = format!("SELECT count(*) FROM tasks t WHERE {ACTIVE}");
    v.push(case(
        "count (active)",
        "(-> (active) (:count))",
        count_active.clone(),
    ));
    v.push(case(
        "all minus dormant, count",
        "(-> (all) (:minus (dormant)) (:count))",
        count_active,
    ));
    v.push(case(
        "active union priority=high, count",
        "(-> (active) (:union (-> (all) (:where (= :priority \"high\")))) (:count))",
        "SELECT count(*) FROM tasks t WHERE substr(t.slug, 1, 1) <> '@' AND (t.status IN ('open', 'active', 'blocked')
           OR EXISTS (SELECT 1 FROM task_metadata m WHERE m.task_id = t.id AND m.key = 'priority' AND m.value = 'high'))".to_string(),
    ));
    v.push(case(
        "active intersect area=storage, ids",
        "(-> (active) (:intersect (-> (all) (:where (= :area \"storage\")))) (:ids))",
        format!("SELECT t.slug FROM task_metadata m JOIN tasks t ON t.id = m.task_id WHERE m.key = 'area' AND m.value = 'storage' AND {ACTIVE} ORDER BY t.slug"),
    ));
    v.push(case(
        "active with a parent, count",
        "(-> (active) (:where (has :parent)) (:count))",
        format!("SELECT count(*) FROM tasks t WHERE {ACTIVE} AND t.parent_task_id IS NOT NULL"),
    ));
    v.push(case(
        "active newest 10 created, ids",
        "(-> (active) (:sort :created-ts :desc) (:take 10) (:ids))",
        format!(
            "SELECT t.slug FROM tasks t WHERE {ACTIVE} ORDER BY t.created_ts DESC, t.slug LIMIT 10"
        ),
    ));
    v.push(case(
        "active with depends-on > 0, count",
        "(-> (active) (:where (> (count (:follow :depends-on)) 0)) (:count))",
        format!("SELECT count(*) FROM tasks t WHERE {ACTIVE} AND EXISTS (SELECT 1 FROM edges e WHERE e.src_id = t.id AND e.type = 'depends-on')"),
    ));
    v.push(case(
        "quantifier: active, any dep completed, count",
        QUANTIFIER,
        format!("SELECT count(*) FROM tasks t WHERE {ACTIVE} AND EXISTS (SELECT 1 FROM edges e JOIN tasks d ON d.id = e.dst_id WHERE e.src_id = t.id AND e.type = 'depends-on' AND d.status = 'completed')"),
    ));
    v.push(case(
        "dormant with obs-count 0, count",
        "(-> (dormant) (:where (= :obs-count 0)) (:count))",
        "SELECT count(*) FROM tasks t WHERE t.status IN ('completed', 'abandoned') AND substr(t.slug, 1, 1) <> '@' AND t.obs_count = 0".to_string(),
    ));
    v.push(case(
        "high priority busiest 5, ids",
        "(-> (active) (:where (= :priority \"high\")) (:sort :obs-count :desc) (:take 5) (:ids))",
        format!("SELECT t.slug FROM tasks t WHERE {ACTIVE_NO_INDEX} AND EXISTS (SELECT 1 FROM task_metadata m WHERE m.task_id = t.id AND m.key = 'priority' AND m.value = 'high') ORDER BY t.obs_count DESC, t.slug LIMIT 5"),
    ));
    v.push(case(
        "knowledge closure, count",
        "(-> (current) (:closure :phase-of :depends-on :related) (:count))",
        format!("WITH RECURSIVE {CLOSURE_CTE} SELECT count(*) FROM clo"),
    ));
    v.push(case(
        "(-> (current) (:ids))",
        "(-> (current) (:ids))",
        "SELECT slug FROM tasks WHERE slug = ?1".to_string(),
    ));
    v
}

const QUANTIFIER: &str =
    "(-> (active) (:where (any (:follow :depends-on) (= :status \"completed\"))) (:count))";

/// The answer as comparable text: slugs in order, or the count.
fn answer_of(out: &Output) -> Vec<String> {
    match out {
        Output::Tasks { tasks, .. } => tasks.iter().map(|t| t.slug.clone()).collect(),
        Output::Ids { ids } => ids.clone(),
        Output::Count { count } => vec![count.to_string()],
        other => panic!("unexpected output shape {other:?}"),
    }
}

/// Runs hand SQL reading every column of every row; returns column 0 as text.
fn run_hand(conn: &Connection, sql: &str, current: &str) -> Vec<String> {
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
fn median_ms(mut f: impl FnMut()) -> f64 {
    f();
    let mut samples = Vec::new();
    let start = Instant::now();
    while samples.len() < 5 || (samples.len() < 60 && start.elapsed() < Duration::from_millis(500))
    {
        let t = Instant::now();
        f();
        samples.push(t.elapsed().as_secs_f64() * 1e3);
    }
    samples.sort_by(|a, b| a.total_cmp(b));
    samples[samples.len() / 2]
}

fn ro(path: &Path) -> Connection {
    let c = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .expect("open read-only");
    c.set_prepared_statement_cache_capacity(128);
    c
}

// ---------------------------------------------------------------------------
// The per-task evaluator (the original tool's strategy): hydrate, then one
// SQL statement per task for every count, quantifier and hop.

const DORMANT: [&str; 2] = ["completed", "abandoned"];

fn status_of(conn: &Connection, id: i64) -> String {
    conn.prepare_cached("SELECT status FROM tasks WHERE id = ?1")
        .expect("prepare")
        .query_row([id], |r| r.get(0))
        .expect("status")
}

fn hop(conn: &Connection, sql: &str, id: i64) -> Vec<i64> {
    let mut stmt = conn.prepare_cached(sql).expect("prepare");
    stmt.query_map([id], |r| r.get(0))
        .expect("query")
        .map(|r| r.expect("id"))
        .collect()
}

fn count1(conn: &Connection, sql: &str, id: i64) -> i64 {
    conn.prepare_cached(sql)
        .expect("prepare")
        .query_row([id], |r| r.get(0))
        .expect("count")
}

/// `(id, slug)` of the active tasks (one hydrating statement).
fn active_tasks(conn: &Connection) -> Vec<(i64, String)> {
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT t.id, t.slug FROM tasks t WHERE {ACTIVE} ORDER BY t.slug"
        ))
        .expect("prepare");
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("query")
        .map(|r| r.expect("row"))
        .collect()
}

fn per_task_plan_frontier(conn: &Connection, current: &str) -> Vec<String> {
    let cur: (i64, Option<i64>) = conn
        .prepare_cached("SELECT id, parent_task_id FROM tasks WHERE slug = ?1")
        .expect("prepare")
        .query_row([current], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("current");
    let kids_sql = "SELECT id FROM tasks WHERE parent_task_id = ?1";
    let mut plan = hop(conn, kids_sql, cur.0);
    if plan.is_empty()
        && let Some(p) = cur.1
    {
        plan = hop(conn, kids_sql, p);
    }
    let mut out = Vec::new();
    for id in plan {
        let (slug, status): (String, String) = conn
            .prepare_cached("SELECT slug, status FROM tasks WHERE id = ?1")
            .expect("prepare")
            .query_row([id], |r| Ok((r.get(0)?, r.get(1)?)))
            .expect("hydrate");
        if DORMANT.contains(&status.as_str()) {
            continue;
        }
        let deps = hop(
            conn,
            "SELECT dst_id FROM edges WHERE src_id = ?1 AND type = 'depends-on'",
            id,
        );
        if deps
            .iter()
            .all(|d| DORMANT.contains(&status_of(conn, *d).as_str()))
        {
            // The view is enriched: counts per task.
            black_box(count1(
                conn,
                "SELECT count(*) FROM observations WHERE task_id = ?1",
                id,
            ));
            black_box(edge_count_per_task(conn, id));
            out.push(slug);
        }
    }
    out.sort();
    out
}

fn edge_count_per_task(conn: &Connection, id: i64) -> i64 {
    count1(conn, "SELECT count(*) FROM edges WHERE src_id = ?1", id)
        + count1(conn, "SELECT count(*) FROM edges WHERE dst_id = ?1", id)
        + count1(
            conn,
            "SELECT count(*) FROM tasks WHERE parent_task_id = ?1",
            id,
        )
        + count1(
            conn,
            "SELECT count(*) FROM tasks WHERE id = ?1 AND parent_task_id IS NOT NULL",
            id,
        )
}

fn per_task_hub_tasks(conn: &Connection) -> Vec<String> {
    let mut scored: Vec<(i64, String)> = active_tasks(conn)
        .into_iter()
        .map(|(id, slug)| (edge_count_per_task(conn, id), slug))
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    scored.into_iter().take(20).map(|(_, s)| s).collect()
}

fn per_task_quantifier(conn: &Connection) -> Vec<String> {
    let mut n = 0i64;
    for (id, _) in active_tasks(conn) {
        let deps = hop(
            conn,
            "SELECT dst_id FROM edges WHERE src_id = ?1 AND type = 'depends-on'",
            id,
        );
        if deps.iter().any(|d| status_of(conn, *d) == "completed") {
            n += 1;
        }
    }
    vec![n.to_string()]
}

// ---------------------------------------------------------------------------

/// Peak memory of one `knowledge` run, measured in a child process (this
/// binary re-run with `CAIRN_BENCH_KNOWLEDGE_CHILD=path`): VmHWM after
/// opening the store and running a trivial query, and after `knowledge`.
fn knowledge_child(path: &str, current: &str) {
    let store = Store::open(Path::new(path)).expect("open");
    let engine = Engine::new();
    let mut session = Session::new();
    session.current = Some(current.to_string());
    engine
        .run(&store, &session, "(-> (current) (:ids))", Surface::Read)
        .expect("warm");
    let before = vm_hwm_kb();
    let text = engine
        .run(&store, &session, "(query \"knowledge\")", Surface::Read)
        .expect("knowledge");
    let after = vm_hwm_kb();
    println!("{before} {after} {}", text.len());
}

fn vm_hwm_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn knowledge_memory(path: &Path, current: &str) -> (u64, u64) {
    let exe = std::env::current_exe().expect("current exe");
    let out = std::process::Command::new(exe)
        .env("CAIRN_BENCH_KNOWLEDGE_CHILD", path)
        .env("CAIRN_BENCH_CURRENT", current)
        .output()
        .expect("run child");
    let text = String::from_utf8_lossy(&out.stdout);
    let nums: Vec<u64> = text
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    match nums.as_slice() {
        [before, after, _] => (*before, *after),
        _ => panic!(
            "knowledge child said {text:?} / {}",
            String::from_utf8_lossy(&out.stderr)
        ),
    }
}

fn target_dir() -> PathBuf {
    if let Ok(d) = std::env::var("CARGO_TARGET_DIR") {
        return PathBuf::from(d);
    }
    // benches run from the package root
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target")
}

/// A per-task baseline: name, the TQ it answers, the evaluator.
type Baseline<'a> = (
    &'static str,
    &'static str,
    Box<dyn Fn() -> Vec<String> + 'a>,
);

/// Per size: name → (ours ms, hand ms).
type Timings = BTreeMap<usize, Vec<(String, f64, f64)>>;

fn fmt_ms(ms: f64) -> String {
    if ms >= 100.0 {
        format!("{ms:.0}")
    } else if ms >= 1.0 {
        format!("{ms:.2}")
    } else {
        format!("{ms:.3}")
    }
}

fn main() {
    if let Ok(path) = std::env::var("CAIRN_BENCH_KNOWLEDGE_CHILD") {
        let current = std::env::var("CAIRN_BENCH_CURRENT").unwrap_or_default();
        knowledge_child(&path, &current);
        return;
    }
    // `cargo test --benches` runs bench binaries with `--test`: do nothing.
    if std::env::args().any(|a| a == "--test" || a == "--list") {
        return;
    }
    let sizes: Vec<usize> = std::env::var("CAIRN_BENCH_SIZES")
        .unwrap_or_else(|_| "1000,10000,100000".to_string())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let label = std::env::var("CAIRN_BENCH_LABEL").unwrap_or_else(|_| "run".to_string());
    let engine = Engine::new();
    let cases = cases();
    let mut timings: Timings = BTreeMap::new();
    let mut extra: Vec<String> = Vec::new();
    for &n in &sizes {
        let g = realistic::cached(&target_dir(), n);
        let store = Store::open(&g.path).expect("open store");
        let mut session = Session::new();
        session.current = Some(g.current.clone());
        let hand = ro(&g.path);
        let stats: (i64, i64, i64, i64, i64) = hand
            .query_row(
                "SELECT (SELECT count(*) FROM tasks), (SELECT count(*) FROM observations),
                        (SELECT count(*) FROM edges WHERE type = 'depends-on'),
                        (SELECT count(*) FROM edges WHERE type = 'related'),
                        (SELECT count(*) FROM tasks WHERE parent_task_id IS NOT NULL)",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
            )
            .expect("stats");
        extra.push(format!(
            "store {n}: {} tasks, {} observations, {} depends-on, {} related, {} phase-of; current {}",
            stats.0, stats.1, stats.2, stats.3, stats.4, g.current
        ));
        let mut rows = Vec::new();
        for c in &cases {
            let ours = engine
                .run_value(&store, &session, &c.tq, Surface::Read)
                .unwrap_or_else(|d| panic!("{}: {}", c.tq, d.message));
            let theirs = run_hand(&hand, &c.hand, &g.current);
            assert_eq!(
                answer_of(&ours),
                theirs,
                "answers differ at {n}: {}",
                c.name
            );
            let t_ours = median_ms(|| {
                black_box(
                    engine
                        .run_value(&store, &session, &c.tq, Surface::Read)
                        .ok(),
                );
            });
            let t_hand = median_ms(|| {
                black_box(run_hand(&hand, &c.hand, &g.current));
            });
            eprintln!(
                "{n:>6} {:<45} ours {:>9} ms  hand {:>9} ms  {:>8.1}x  ({} rows)",
                c.name,
                fmt_ms(t_ours),
                fmt_ms(t_hand),
                t_ours / t_hand,
                theirs.len()
            );
            rows.push((c.name.clone(), t_ours, t_hand));
        }
        // Per-task evaluator baselines.
        let baselines: [Baseline<'_>; 3] = [
            (
                "plan-frontier",
                "(query \"plan-frontier\")",
                Box::new(|| per_task_plan_frontier(&hand, &g.current)),
            ),
            (
                "hub-tasks",
                "(query \"hub-tasks\")",
                Box::new(|| per_task_hub_tasks(&hand)),
            ),
            (
                "quantifier over (active)",
                QUANTIFIER,
                Box::new(|| per_task_quantifier(&hand)),
            ),
        ];
        for (name, tq, f) in baselines.iter() {
            let ours = engine
                .run_value(&store, &session, tq, Surface::Read)
                .unwrap_or_else(|d| panic!("{tq}: {}", d.message));
            assert_eq!(
                answer_of(&ours),
                f(),
                "per-task answer differs at {n}: {name}"
            );
            let t_ours = median_ms(|| {
                black_box(engine.run_value(&store, &session, tq, Surface::Read).ok());
            });
            let t_base = median_ms(|| {
                black_box(f());
            });
            eprintln!(
                "{n:>6} per-task {name:<36} ours {:>9} ms  per-task {:>9} ms  ours is {:.1}x faster",
                fmt_ms(t_ours),
                fmt_ms(t_base),
                t_base / t_ours
            );
            rows.push((format!("per-task: {name}"), t_ours, t_base));
        }
        // The fixed cost: warm (Engine::run, rendered text) and cold (a new
        // read-only connection per query, the path before warm readers).
        let fixed = "(-> (current) (:ids))";
        let warm = median_ms(|| {
            black_box(engine.run(&store, &session, fixed, Surface::Read).ok());
        });
        let cold = median_ms(|| {
            let mut conn = store.reader().expect("reader");
            let p = engine
                .prepare(&conn, &session, fixed, Surface::Read)
                .expect("prepare");
            black_box(engine.execute_read(&mut conn, &p).ok());
        });
        eprintln!(
            "{n:>6} fixed cost {fixed}: warm {} ms, cold (new connection) {} ms",
            fmt_ms(warm),
            fmt_ms(cold)
        );
        rows.push(("fixed cost, warm `Engine::run`".to_string(), warm, f64::NAN));
        rows.push((
            "fixed cost, cold new connection".to_string(),
            cold,
            f64::NAN,
        ));
        let (before, after) = knowledge_memory(&g.path, &g.current);
        eprintln!(
            "{n:>6} knowledge peak RSS: {} MB before, {} MB after (+{} MB)",
            before / 1024,
            after / 1024,
            after.saturating_sub(before) / 1024
        );
        extra.push(format!(
            "knowledge at {n}: process peak RSS {:.1} MB → {:.1} MB (+{:.1} MB for the query)",
            before as f64 / 1024.0,
            after as f64 / 1024.0,
            after.saturating_sub(before) as f64 / 1024.0
        ));
        timings.insert(n, rows);
    }
    // The side-by-side table.
    let mut md = String::new();
    md.push_str("| query |");
    for n in &sizes {
        md.push_str(&format!(" {n}: ours ms | hand ms | ratio |"));
    }
    md.push('\n');
    md.push_str("|---|");
    for _ in &sizes {
        md.push_str("---:|---:|---:|");
    }
    md.push('\n');
    let first = timings.values().next().cloned().unwrap_or_default();
    for (i, (name, _, _)) in first.iter().enumerate() {
        md.push_str(&format!("| {name} |"));
        for n in &sizes {
            let (_, o, h) = &timings[n][i];
            if h.is_nan() {
                md.push_str(&format!(" {} | | |", fmt_ms(*o)));
            } else if name.starts_with("per-task") {
                md.push_str(&format!(
                    " {} | {} | {:.0}× faster |",
                    fmt_ms(*o),
                    fmt_ms(*h),
                    h / o
                ));
            } else {
                md.push_str(&format!(
                    " {} | {} | {:.2}× |",
                    fmt_ms(*o),
                    fmt_ms(*h),
                    o / h
                ));
            }
        }
        md.push('\n');
    }
    for e in &extra {
        md.push_str(&format!("\n{e}"));
    }
    md.push('\n');
    println!("{md}");
    let report = target_dir().join(format!("bench-report-{label}.md"));
    let _ = std::fs::write(&report, &md);
    eprintln!("report written to {}", report.display());
}
