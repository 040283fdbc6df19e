//! Trees on the command line (issues 12 and 27; docs/cli.md "Verbs"):
//! `cairn ls --tree` (the phase-of tree, with a `waits on` column naming
//! unfinished `depends-on` targets) and `cairn dep tree [SLUG]` (the
//! phase-of tree with each task's `depends-on` targets drawn as its first
//! rows, `after SLUG`). Each set is one TQ query; each task's targets one
//! more, through the engine's JSON path as `cairn ls` reads.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::color::{paint, status_style};
use super::context::Cx;
use super::table;
use super::views::{TASK_HEADERS, add_names, field, run, task_row, tq_string};

/// A row of a tree and the rows drawn under it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// The row's cells; the first gets the tree's branch drawn before it.
    pub cells: Vec<String>,
    /// The rows under it, in order.
    pub kids: Vec<Node>,
}

/// The phase-of forest of `tasks` (objects with `slug` and `parent`): each
/// task under its parent when the parent is in the set, in the set's
/// order; `row` makes a task's cells and `extra` the rows drawn first
/// under it. Every task appears exactly once, also on a phase-of cycle
/// (each task on a cycle without a root starts a tree of its own).
pub fn forest(
    tasks: &[Value],
    row: &dyn Fn(&Value) -> Vec<String>,
    extra: &dyn Fn(&Value) -> Vec<Node>,
) -> Vec<Node> {
    let slugs: BTreeSet<String> = tasks.iter().map(|t| field(t, "slug")).collect();
    let mut children: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
    let mut roots = Vec::new();
    for t in tasks {
        let parent = field(t, "parent");
        if !parent.is_empty() && slugs.contains(&parent) && parent != field(t, "slug") {
            children.entry(parent).or_default().push(t);
        } else {
            roots.push(t);
        }
    }
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for t in roots.into_iter().chain(tasks.iter()) {
        if let Some(n) = build(t, &children, &mut seen, row, extra) {
            out.push(n);
        }
    }
    out
}

fn build(
    t: &Value,
    children: &BTreeMap<String, Vec<&Value>>,
    seen: &mut BTreeSet<String>,
    row: &dyn Fn(&Value) -> Vec<String>,
    extra: &dyn Fn(&Value) -> Vec<Node>,
) -> Option<Node> {
    let slug = field(t, "slug");
    if !seen.insert(slug.clone()) {
        return None; // drawn already (a phase-of cycle): each task once
    }
    let mut kids = extra(t);
    for k in children.get(&slug).map(Vec::as_slice).unwrap_or(&[]) {
        if let Some(n) = build(k, children, seen, row, extra) {
            kids.push(n);
        }
    }
    Some(Node {
        cells: row(t),
        kids,
    })
}

/// The rows of `forest`, depth first, the first cell of each prefixed with
/// its branch: `├─ `, `└─ `, under `│  ` or `   `.
pub fn draw(forest: &[Node]) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for n in forest {
        walk(n, "", None, &mut rows);
    }
    rows
}

fn walk(n: &Node, indent: &str, last: Option<bool>, rows: &mut Vec<Vec<String>>) {
    let (branch, next) = match last {
        None => (String::new(), String::new()),
        Some(true) => (format!("{indent}└─ "), format!("{indent}   ")),
        Some(false) => (format!("{indent}├─ "), format!("{indent}│  ")),
    };
    let mut cells = n.cells.clone();
    if let Some(first) = cells.first_mut() {
        *first = format!("{branch}{first}");
    }
    rows.push(cells);
    for (i, k) in n.kids.iter().enumerate() {
        walk(k, &next, Some(i + 1 == n.kids.len()), rows);
    }
}

/// TQ: a task is finished (completed or abandoned).
const FINISHED: &str = "(or (= :status \"completed\") (= :status \"abandoned\"))";

/// For each task of `tasks` that waits on another (a `depends-on` target
/// not finished), those targets' slugs, by slug. One query finds the tasks
/// that wait, one more per such task its targets. Errors: a query's
/// message.
pub fn waits(cx: &Cx, tasks: &[Value]) -> Result<BTreeMap<String, Vec<String>>, String> {
    let q = format!("(-> (all) (:where (any (:follow :depends-on) (not {FINISHED}))) (:ids))");
    let waiting: BTreeSet<String> = run(&cx.engine, cx.store.r(), &cx.session, &q)?
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let mut out = BTreeMap::new();
    for t in tasks {
        let slug = field(t, "slug");
        if !waiting.contains(&slug) {
            continue;
        }
        let q = format!(
            "(-> (all) (:where (= :slug {})) (:follow :depends-on) (:where (not {FINISHED})) (:sort :slug :asc) (:ids))",
            tq_string(&slug)
        );
        let targets = run(&cx.engine, cx.store.r(), &cx.session, &q)?
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        out.insert(slug, targets);
    }
    Ok(out)
}

/// The `cairn ls --tree` table of `tasks`, its rows cut to `limit` (0:
/// all): the task columns, and `waits on` (the unfinished `depends-on`
/// targets) when any listed task waits. Returns the table (`No tasks.`
/// when empty) and how many rows were left off.
pub fn ls_tree(
    tasks: &[Value],
    waits: &BTreeMap<String, Vec<String>>,
    limit: usize,
) -> (String, usize) {
    if tasks.is_empty() {
        return ("No tasks.".to_string(), 0);
    }
    let any = !waits.is_empty();
    let row = |t: &Value| {
        let mut r = task_row("", t);
        if any {
            r.push(
                waits
                    .get(&field(t, "slug"))
                    .map(|w| w.join(", "))
                    .unwrap_or_default(),
            );
        }
        r
    };
    let mut rows = draw(&forest(tasks, &row, &|_| Vec::new()));
    let left = cut(&mut rows, limit);
    let mut headers = TASK_HEADERS.to_vec();
    if any {
        headers.push("waits on");
    }
    (table::render(&headers, &rows), left)
}

/// Cuts `rows` to `limit` (0: no cut); how many were cut.
pub fn cut<T>(rows: &mut Vec<T>, limit: usize) -> usize {
    if limit == 0 || rows.len() <= limit {
        return 0;
    }
    let left = rows.len() - limit;
    rows.truncate(limit);
    left
}

/// The tasks of `cairn dep tree`: SLUG and its phase-of descendants (every
/// status), else the open tasks; oldest first.
pub fn dep_tree_query(slug: Option<&str>) -> String {
    match slug {
        Some(s) => {
            let one = format!("(all) (:where (= :slug {}))", tq_string(s));
            format!("(-> {one} (:closure :phase-of) (:union (-> {one})) (:sort :created-ts :asc))")
        }
        None => "(-> (active) (:sort :created-ts :asc))".to_string(),
    }
}

/// Adds `"depends-on"` to each task object of `tasks`: its targets as task
/// objects (slug, status, name), by slug. Errors: a query's message.
pub fn add_targets(cx: &Cx, tasks: &mut Value) -> anyhow::Result<Result<(), String>> {
    let Some(list) = tasks.as_array_mut() else {
        return Ok(Ok(()));
    };
    for t in list {
        let q = format!(
            "(-> (all) (:where (= :slug {})) (:follow :depends-on) (:sort :slug :asc))",
            tq_string(&field(t, "slug"))
        );
        let mut targets = match run(&cx.engine, cx.store.r(), &cx.session, &q) {
            Ok(v) => v,
            Err(e) => return Ok(Err(e)),
        };
        add_names(cx.store.r(), &mut targets)?;
        let short: Vec<Value> = targets
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or(&[])
            .iter()
            .map(|d| {
                serde_json::json!({
                    "slug": field(d, "slug"),
                    "status": field(d, "status"),
                    "name": d.get("name").cloned().unwrap_or(Value::Null),
                })
            })
            .collect();
        if let Value::Object(m) = t {
            m.insert("depends-on".into(), Value::Array(short));
        }
    }
    Ok(Ok(()))
}

/// The `cairn dep tree` table: slug, status, name; each task's
/// `depends-on` targets drawn first under it as `after SLUG` rows.
pub fn dep_tree_table(tasks: &[Value]) -> String {
    if tasks.is_empty() {
        return "No tasks.".to_string();
    }
    let cells = |prefix: &str, t: &Value| {
        let status = field(t, "status");
        vec![
            format!("{prefix}{}", field(t, "slug")),
            paint(status_style(&status), &status),
            field(t, "name"),
        ]
    };
    let row = |t: &Value| cells("", t);
    let extra = |t: &Value| {
        t.get("depends-on")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[])
            .iter()
            .map(|d| Node {
                cells: cells("after ", d),
                kids: Vec::new(),
            })
            .collect()
    };
    let rows = draw(&forest(tasks, &row, &extra));
    table::render(&["slug", "status", "name"], &rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(slug: &str, parent: Option<&str>) -> Value {
        serde_json::json!({"slug": slug, "status": "active", "parent": parent, "obs-count": 0})
    }

    #[test]
    fn tree_nests_and_survives_cycles() {
        let plain = |s: String| anstream::adapter::strip_str(&s).to_string();
        let tasks = vec![
            task("a", None),
            task("b", Some("a")),
            task("c", Some("b")),
            task("d", Some("a")),
            task("x", Some("y")),
            task("y", Some("x")),
        ];
        let mut waits = BTreeMap::new();
        assert_eq!(
            plain(ls_tree(&tasks, &waits, 0).0),
            "slug     status  name  obs  updated (UTC)\n\
             a        active        0\n\
             ├─ b     active        0\n\
             │  └─ c  active        0\n\
             └─ d     active        0\n\
             x        active        0\n\
             └─ y     active        0"
        );
        waits.insert("d".to_string(), vec!["c".to_string()]);
        let (t, left) = ls_tree(&tasks, &waits, 4);
        assert_eq!(left, 2);
        assert_eq!(
            plain(t),
            "slug     status  name  obs  updated (UTC)  waits on\n\
             a        active        0\n\
             ├─ b     active        0\n\
             │  └─ c  active        0\n\
             └─ d     active        0                   c"
        );
        assert_eq!(ls_tree(&[], &waits, 0).0, "No tasks.");
    }

    #[test]
    fn dependency_rows_come_first() {
        let plain = |s: String| anstream::adapter::strip_str(&s).to_string();
        let mut b = task("b", Some("a"));
        b["depends-on"] = serde_json::json!([{"slug": "c", "status": "completed", "name": "see"}]);
        let tasks = vec![task("a", None), b, task("c", Some("a"))];
        assert_eq!(
            plain(dep_tree_table(&tasks)),
            "slug           status     name\n\
             a              active\n\
             ├─ b           active\n\
             │  └─ after c  completed  see\n\
             └─ c           active"
        );
    }
}
