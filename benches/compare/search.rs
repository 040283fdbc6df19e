//! `(search …)` composed in one statement vs the best hand-written SQL for
//! the same answer vs `task_search` plus a filter in the client (issue 26;
//! docs/performance.md "Search in TQ"). Run alone with
//! `cargo bench --bench compare -- search` (sizes from `CAIRN_BENCH_SIZES`).

use std::hint::black_box;
use std::path::Path;

use cairn::session::Session;
use cairn::store::Store;
use cairn::store::search::{sanitize, search};
use cairn::tq::Surface;
use cairn::tq::engine::Engine;
use rusqlite::Connection;

use super::cases::COLS;
use super::measure::{answer_of, fmt_ms, median_ms, ro, run_hand};
use super::realistic;

/// The searched text (two of the generator's words, implicit AND).
pub const TEXT: &str = "flaky deadlock";

/// The TQ: the search, a status filter, the ten most relevant.
pub const TQ: &str = r#"(-> (search "flaky deadlock") (:where (= :status "active")) (:take 10))"#;

/// The best hand SQL for [`TQ`]: the hits (observations and, since schema
/// 5, the tasks' own names and descriptions) grouped by task with their
/// best rank, joined to `tasks`, filtered, top ten by relevance then slug.
pub fn hand_sql() -> String {
    format!(
        "WITH h AS (SELECT id, max(rel) AS rel FROM (SELECT o.task_id AS id, -obs_fts.rank AS rel FROM obs_fts JOIN observations o ON o.obs_id = obs_fts.rowid WHERE obs_fts MATCH 'flaky deadlock' UNION ALL SELECT task_fts.rowid, -task_fts.rank FROM task_fts WHERE task_fts MATCH 'flaky deadlock') GROUP BY id)
         SELECT {COLS} FROM h JOIN tasks t ON t.id = h.id WHERE t.status = 'active' ORDER BY h.rel DESC, t.slug LIMIT 10"
    )
}

/// `task_search` with no limit (every hit, snippets and all), the slugs
/// in hit order without repeats, each task's status read by the client,
/// the first ten active ones: what an agent does without search in TQ.
pub fn client_filter(conn: &Connection) -> Vec<String> {
    let expr = sanitize(TEXT).unwrap_or_default();
    let hits = search(conn, &expr, None, usize::MAX).unwrap_or_default();
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    let mut st = conn
        .prepare_cached("SELECT status FROM tasks WHERE slug = ?1")
        .expect("prepare status");
    for h in hits {
        if !seen.insert(h.slug.clone()) {
            continue;
        }
        let status: String = st.query_row([&h.slug], |r| r.get(0)).unwrap_or_default();
        if status == "active" {
            out.push(h.slug);
            if out.len() == 10 {
                break;
            }
        }
    }
    out
}

/// `EXPLAIN QUERY PLAN` of a parameterless statement: one line per row,
/// indented by depth.
fn plan_rows(conn: &Connection, sql: &str) -> String {
    let mut st = conn
        .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
        .expect("explain hand SQL");
    let rows = st
        .query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, String>(3)?,
            ))
        })
        .expect("plan rows");
    let mut depth: std::collections::HashMap<i64, usize> = std::collections::HashMap::new();
    let mut out = Vec::new();
    for r in rows.flatten() {
        let d = depth.get(&r.1).map_or(0, |d| d + 1);
        depth.insert(r.0, d);
        out.push(format!("{}{}", "  ".repeat(d), r.2));
    }
    out.join("\n")
}

/// Times the three at each size; returns the report section (Markdown).
pub fn run(sizes: &[usize], target: &Path) -> String {
    let engine = Engine::new();
    let mut md = String::from(
        "## Search in TQ (issue 26)\n\n| tasks | ours ms | hand SQL ms | ours ÷ hand | task_search + client filter ms | rows |\n|---|---|---|---|---|---|\n",
    );
    for &n in sizes {
        let g = realistic::cached(target, n);
        let store = Store::open(&g.path).expect("open store");
        let session = Session::new();
        let hand = ro(&g.path);
        let ours = engine
            .run_value(&store, &session, TQ, Surface::Read)
            .unwrap_or_else(|d| panic!("{TQ}: {}", d.message));
        let want = run_hand(&hand, &hand_sql(), &g.current);
        assert_eq!(answer_of(&ours), want, "answers differ at {n}");
        let client = client_filter(&hand);
        let set = |v: &[String]| v.iter().cloned().collect::<std::collections::BTreeSet<_>>();
        // Ties within the top ten may be broken differently (task_search:
        // newest observation first); the sizes agree.
        assert_eq!(client.len(), want.len(), "client filter at {n}");
        let t_ours = median_ms(|| {
            black_box(engine.run_value(&store, &session, TQ, Surface::Read).ok());
        });
        let t_hand = median_ms(|| {
            black_box(run_hand(&hand, &hand_sql(), &g.current));
        });
        let t_client = median_ms(|| {
            black_box(client_filter(&hand));
        });
        eprintln!(
            "{n:>6} search+where+take  ours {:>9} ms  hand {:>9} ms  {:>6.2}x  client {:>9} ms  ({} rows, {} shared with the client's)",
            fmt_ms(t_ours),
            fmt_ms(t_hand),
            t_ours / t_hand,
            fmt_ms(t_client),
            want.len(),
            set(&want).intersection(&set(&client)).count()
        );
        md.push_str(&format!(
            "| {n} | {} | {} | {:.2} | {} | {} |\n",
            fmt_ms(t_ours),
            fmt_ms(t_hand),
            t_ours / t_hand,
            fmt_ms(t_client),
            want.len()
        ));
        if n == sizes[0] {
            let p = engine
                .explain(&store, &session, TQ, Surface::Read)
                .expect("explain");
            let st = &p.statements[0];
            md.push_str(&format!(
                "\nOurs ({n} tasks):\n\n```\n{}\n```\n\nEXPLAIN QUERY PLAN (ours):\n\n```\n{}\n```\n\nEXPLAIN QUERY PLAN (hand):\n\n```\n{}\n```\n\n",
                st.sql,
                st.plan.join("\n"),
                plan_rows(&hand, &hand_sql())
            ));
        }
    }
    md
}
