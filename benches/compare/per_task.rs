//! The per-task evaluator (the original tool's strategy): hydrate, then one
//! SQL statement per task for every count, quantifier and hop.

use std::hint::black_box;

use rusqlite::Connection;

use super::cases::ACTIVE;

pub const DORMANT: [&str; 2] = ["completed", "abandoned"];

pub fn status_of(conn: &Connection, id: i64) -> String {
    conn.prepare_cached("SELECT status FROM tasks WHERE id = ?1")
        .expect("prepare")
        .query_row([id], |r| r.get(0))
        .expect("status")
}

pub fn hop(conn: &Connection, sql: &str, id: i64) -> Vec<i64> {
    let mut stmt = conn.prepare_cached(sql).expect("prepare");
    stmt.query_map([id], |r| r.get(0))
        .expect("query")
        .map(|r| r.expect("id"))
        .collect()
}

pub fn count1(conn: &Connection, sql: &str, id: i64) -> i64 {
    conn.prepare_cached(sql)
        .expect("prepare")
        .query_row([id], |r| r.get(0))
        .expect("count")
}

/// `(id, slug)` of the active tasks (one hydrating statement).
pub fn active_tasks(conn: &Connection) -> Vec<(i64, String)> {
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

pub fn per_task_plan_frontier(conn: &Connection, current: &str) -> Vec<String> {
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

pub fn edge_count_per_task(conn: &Connection, id: i64) -> i64 {
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

pub fn per_task_hub_tasks(conn: &Connection) -> Vec<String> {
    let mut scored: Vec<(i64, String)> = active_tasks(conn)
        .into_iter()
        .map(|(id, slug)| (edge_count_per_task(conn, id), slug))
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    scored.into_iter().take(20).map(|(_, s)| s).collect()
}

pub fn per_task_quantifier(conn: &Connection) -> Vec<String> {
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
