//! The compared queries and the best hand-written SQL for each (issue 9,
//! issue 23: "always compare against the best hand SQL you can write").

use std::collections::BTreeMap;

use cairn::tq::registry;

use crate::measure::GROUPED;

/// `(active)` on a `tasks t` row.
pub const ACTIVE: &str =
    "t.status IN ('open', 'active', 'blocked') AND substr(t.slug, 1, 1) <> '@'";
/// `(active)` kept off `tasks_status` (unary `+`), so a top-N walks the
/// counter index instead of sorting every live task (docs/performance.md).
pub const ACTIVE_NO_INDEX: &str =
    "+t.status IN ('open', 'active', 'blocked') AND substr(t.slug, 1, 1) <> '@'";
/// The plain task columns (slug, display name, status).
pub const COLS: &str = "t.slug, COALESCE((SELECT m.value FROM task_metadata m WHERE m.task_id = t.id AND m.key = 'display-name'), t.slug), t.status";
/// The enriched task columns.
pub const ENRICHED: &str = "t.slug, COALESCE((SELECT m.value FROM task_metadata m WHERE m.task_id = t.id AND m.key = 'display-name'), t.slug), t.status, t.obs_count, t.edge_count, (SELECT json_group_array(json_array(m.key, m.value) ORDER BY m.key) FROM task_metadata m WHERE m.task_id = t.id)";

/// `plan`'s tasks as `tasks t`, the best hand SQL (issue 23): one probe of
/// the slug index for the current task, then the parent index for its
/// children, or, when its `child_count` is 0, its siblings.
pub const PLAN_JOIN: &str = "tasks t WHERE t.parent_task_id = (SELECT CASE WHEN c.child_count > 0 THEN c.id ELSE c.parent_task_id END FROM tasks c WHERE c.slug = ?1)";

/// The closure of the current task over phase-of, depends-on and related.
pub const CLOSURE_CTE: &str = "cur AS (SELECT id FROM tasks WHERE slug = ?1),
clo(id) AS (
    SELECT c.id FROM cur JOIN tasks c ON c.parent_task_id = cur.id
    UNION SELECT e.dst_id FROM cur JOIN edges e ON e.src_id = cur.id AND e.type IN ('depends-on', 'related')
    UNION SELECT c.id FROM clo JOIN tasks c ON c.parent_task_id = clo.id
    UNION SELECT e.dst_id FROM clo JOIN edges e ON e.src_id = clo.id AND e.type IN ('depends-on', 'related'))";

/// One compared query: its TQ text and the hand-written SQL (`?1` is the
/// current task's slug when used).
pub struct Case {
    /// The case's name in the report.
    pub name: String,
    /// The TQ text.
    pub tq: String,
    /// The best hand-written SQL for the same answer.
    pub hand: String,
}

pub fn case(name: &str, tq: &str, hand: String) -> Case {
    Case {
        name: name.to_string(),
        tq: tq.to_string(),
        hand,
    }
}

pub fn cases() -> Vec<Case> {
    let mut v = all_cases();
    // `CAIRN_BENCH_CASES=orphans,plan`: only the cases so named.
    if let Ok(only) = std::env::var("CAIRN_BENCH_CASES") {
        let names: Vec<&str> = only.split(',').map(str::trim).collect();
        v.retain(|c| names.contains(&c.name.as_str()));
    }
    v
}

fn all_cases() -> Vec<Case> {
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
            format!("SELECT {ENRICHED} FROM {PLAN_JOIN} ORDER BY t.slug"),
        ),
        (
            "plan-frontier",
            format!("SELECT {ENRICHED} FROM {PLAN_JOIN}
                     AND t.status NOT IN ('completed', 'abandoned')
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
        "(node \"t0001\"), count",
        "(-> (node \"t0001\") (:count))",
        "SELECT count(*) FROM tasks t WHERE instr(t.slug, 't0001') > 0".to_string(),
    ));
    v.push(case(
        "incoming depends-on >= 4, count",
        "(-> (all) (:where (>= (count (:back :depends-on)) 4)) (:count))",
        "SELECT count(*) FROM (SELECT e.dst_id FROM edges e WHERE e.type = 'depends-on' GROUP BY e.dst_id HAVING count(DISTINCT e.src_id) >= 4) g
           JOIN tasks t ON t.id = g.dst_id WHERE substr(t.slug, 1, 1) <> '@'".to_string(),
    ));
    v.push(case(
        "(:group-by :status) over all",
        "(-> (all) (:group-by :status))",
        format!("{GROUPED}SELECT t.status, {COLS} FROM tasks t WHERE substr(t.slug, 1, 1) <> '@' ORDER BY t.slug"),
    ));
    v.push(case(
        "(-> (current) (:ids))",
        "(-> (current) (:ids))",
        "SELECT slug FROM tasks WHERE slug = ?1".to_string(),
    ));
    v
}

pub const QUANTIFIER: &str =
    "(-> (active) (:where (any (:follow :depends-on) (= :status \"completed\"))) (:count))";
