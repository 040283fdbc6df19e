//! The verbs that show task sets as tables (issue 12; docs/cli.md "Verbs"):
//! `ls`, `ready`, and the vocabulary table of `cairn schema` and the REPL's
//! `:schema`. Each builds one TQ query from registry words and the user's
//! slug as a TQ string literal, runs it through the engine's JSON path (the
//! same as `cairn query --format json`), and lays the objects out with
//! [`table::render`]; `--json` prints those objects.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use serde_json::Value;

use super::color::{header_style, paint, status_style};
use super::context::Cx;
use super::out::{emit, emit_err, emit_styled};
use super::table;
use super::verbs::JsonFlag;
use crate::session::Session;
use crate::store::Store;
use crate::tools::render::minute;
use crate::tq::Surface;
use crate::tq::engine::Engine;
use crate::tq::json::run_json;

/// `cairn ls [--all|--dormant] [--under SLUG] [--tree]`.
#[derive(Debug, Args)]
pub struct LsArgs {
    /// Every task, dormant ones too (default: open, active and blocked).
    #[arg(long, conflicts_with = "dormant")]
    pub all: bool,
    /// Only completed and abandoned tasks.
    #[arg(long)]
    pub dormant: bool,
    /// Only the phases below SLUG (its phase-of descendants).
    #[arg(long, value_name = "SLUG")]
    pub under: Option<String>,
    /// Draw the phase-of tree: each task under its parent, oldest first.
    #[arg(long)]
    pub tree: bool,
    #[command(flatten)]
    pub out: JsonFlag,
}

/// `cairn ready [SLUG]`.
#[derive(Debug, Args)]
pub struct ReadyArgs {
    /// Only the ready tasks of SLUG's plan (its phases, else its siblings);
    /// default: the whole project.
    pub slug: Option<String>,
    #[command(flatten)]
    pub out: JsonFlag,
}

/// `text` as a TQ string literal: in double quotes, `"` and `\` escaped
/// (the printer's rule, `tq::print`). The engine binds it as a parameter.
pub fn tq_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// The TQ query `cairn ls` runs for `a`.
pub fn ls_query(a: &LsArgs) -> String {
    let source = if a.all {
        "(all)"
    } else if a.dormant {
        "(dormant)"
    } else {
        "(active)"
    };
    let order = if a.tree {
        "(:sort :created-ts :asc)"
    } else {
        "(:sort :updated-ts :desc)"
    };
    match &a.under {
        Some(slug) => format!(
            "(-> (all) (:where (= :slug {})) (:closure :phase-of) (:intersect {source}) {order})",
            tq_string(crate::store::slug::strip_depot(slug.trim()))
        ),
        None => format!("(-> {source} {order})"),
    }
}

/// A field of a task object as text (`""` when absent or null).
fn field(v: &Value, key: &str) -> String {
    match v.get(key) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => String::new(),
    }
}

/// The row of one task: slug (after `prefix`), status (coloured), name
/// (the `name` [`add_names`] put there),
/// observations, last update (`YYYY-MM-DD HH:MM`, UTC).
fn task_row(prefix: &str, t: &Value) -> Vec<String> {
    let status = field(t, "status");
    let slug = field(t, "slug");
    vec![
        format!("{prefix}{slug}"),
        paint(status_style(&status), &status),
        field(t, "name"),
        field(t, "obs-count"),
        t.get("updated-ts")
            .and_then(Value::as_i64)
            .map(minute)
            .unwrap_or_default(),
    ]
}

const TASK_HEADERS: [&str; 5] = ["slug", "status", "name", "obs", "updated (UTC)"];

/// The flat table of `tasks` (objects with slug, status, name, obs-count,
/// updated-ts), or `No tasks.` when there are none.
pub fn task_table(tasks: &[Value]) -> String {
    if tasks.is_empty() {
        return "No tasks.".to_string();
    }
    let rows: Vec<Vec<String>> = tasks.iter().map(|t| task_row("", t)).collect();
    table::render(&TASK_HEADERS, &rows)
}

/// The tree table of `tasks`: each task under its parent (when the parent
/// is in the set), in the set's order, drawn with `├─ `, `└─ ` and `│  `.
/// Every task appears exactly once, also on a phase-of cycle.
pub fn tree_table(tasks: &[Value]) -> String {
    if tasks.is_empty() {
        return "No tasks.".to_string();
    }
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
    let mut rows = Vec::new();
    let mut seen = BTreeSet::new();
    for r in &roots {
        walk(r, "", None, &children, &mut seen, &mut rows);
    }
    // Tasks on a phase-of cycle have no root: each starts a tree of its own.
    for t in tasks {
        if !seen.contains(&field(t, "slug")) {
            walk(t, "", None, &children, &mut seen, &mut rows);
        }
    }
    table::render(&TASK_HEADERS, &rows)
}

/// Depth-first rows of `t` and its children; `last` is None for a root.
fn walk(
    t: &Value,
    indent: &str,
    last: Option<bool>,
    children: &BTreeMap<String, Vec<&Value>>,
    seen: &mut BTreeSet<String>,
    rows: &mut Vec<Vec<String>>,
) {
    let slug = field(t, "slug");
    if !seen.insert(slug.clone()) {
        return; // a phase-of cycle: each task once
    }
    let (branch, next) = match last {
        None => (String::new(), String::new()),
        Some(true) => (format!("{indent}└─ "), format!("{indent}   ")),
        Some(false) => (format!("{indent}├─ "), format!("{indent}│  ")),
    };
    rows.push(task_row(&branch, t));
    if let Some(kids) = children.get(&slug) {
        for (i, k) in kids.iter().enumerate() {
            walk(k, &next, Some(i + 1 == kids.len()), children, seen, rows);
        }
    }
}

/// Runs `text` for the JSON path; a query error as its one-line message.
fn run(engine: &Engine, store: &Store, session: &Session, text: &str) -> Result<Value, String> {
    run_json(engine, store, session, text, Surface::Read).map_err(|d| d.render_plain())
}

/// Adds `"name"` to each task object of `tasks`: its `display-name` when
/// one is set (differs from the slug), else the name typed when it was
/// created (`store::read::typed_name`), else `null`. Errors: a store read.
fn add_names(store: &Store, tasks: &mut Value) -> anyhow::Result<()> {
    let Some(list) = tasks.as_array_mut() else {
        return Ok(());
    };
    for t in list {
        let slug = field(t, "slug");
        let display = field(t, "display-name");
        let name = if !display.is_empty() && display != slug {
            Some(display)
        } else {
            crate::store::read::typed_name(store.conn(), &slug)?
        };
        if let Value::Object(m) = t {
            m.insert("name".into(), name.map_or(Value::Null, Value::String));
        }
    }
    Ok(())
}

/// Prints `tasks` as JSON or as the table `draw` makes; exit 0.
fn print_tasks(tasks: Value, json: bool, draw: fn(&[Value]) -> String) -> anyhow::Result<ExitCode> {
    if json {
        emit(&serde_json::to_string_pretty(&tasks)?)?;
    } else {
        let list = tasks.as_array().map(Vec::as_slice).unwrap_or(&[]);
        emit_styled(&draw(list))?;
    }
    Ok(ExitCode::SUCCESS)
}

fn fail(msg: &str) -> anyhow::Result<ExitCode> {
    emit_err(msg.trim_end());
    Ok(ExitCode::from(1))
}

/// `cairn ls`.
pub(super) fn ls_cmd(flag: Option<&Path>, a: &LsArgs) -> anyhow::Result<ExitCode> {
    let cx = Cx::open_read(flag)?;
    if let Some(slug) = &a.under {
        let bare = crate::store::slug::strip_depot(slug.trim());
        if !cx.store.task_exists(bare)? {
            return fail(&format!("No task {bare}."));
        }
    }
    match run(&cx.engine, &cx.store, &cx.session, &ls_query(a)) {
        Ok(mut v) => {
            add_names(&cx.store, &mut v)?;
            print_tasks(v, a.out.json, if a.tree { tree_table } else { task_table })
        }
        Err(e) => fail(&e),
    }
}

/// What `cairn ready` runs without a SLUG: the view `ready` (a user view of
/// that name shadows the built-in; spec/tq.md §9) over the whole project.
pub const READY_ALL: &str = "(query \"ready\")";

/// What `cairn ready SLUG` runs, with SLUG as the current task: the ready
/// tasks of SLUG's plan (its children, else its siblings).
pub const READY_IN_PLAN: &str = "(-> (query \"plan\") (:intersect (query \"ready\")))";

/// `cairn ready`.
pub(super) fn ready_cmd(flag: Option<&Path>, a: &ReadyArgs) -> anyhow::Result<ExitCode> {
    let mut cx = Cx::open_read(flag)?;
    let q = match &a.slug {
        Some(slug) => {
            if let Err(msg) = super::query::select_current(&cx.store, &mut cx.session, slug) {
                return fail(&msg);
            }
            READY_IN_PLAN
        }
        None => READY_ALL,
    };
    match run(&cx.engine, &cx.store, &cx.session, q) {
        Ok(mut v) => {
            add_names(&cx.store, &mut v)?;
            print_tasks(v, a.out.json, task_table)
        }
        Err(e) => fail(&e),
    }
}

/// The heading of a schema category.
fn heading(category: &str) -> String {
    match category {
        "source" => "Sources".into(),
        "step" => "Steps".into(),
        "predicate" => "Predicates".into(),
        "write" => "Write forms".into(),
        other => other.to_string(),
    }
}

/// The vocabulary as tables, one per category — sources, steps,
/// predicates, write forms, then any other — each under its heading:
/// name, kind, signature, doc, rows in the order given. `rows` are
/// `(schema)` rows as JSON objects.
pub fn schema_tables(rows: &[Value]) -> String {
    let mut order: Vec<String> = Vec::new();
    let mut groups: BTreeMap<String, Vec<Vec<String>>> = BTreeMap::new();
    for r in rows {
        let cat = field(r, "category");
        if !groups.contains_key(&cat) {
            order.push(cat.clone());
        }
        let name = if cat == "step" {
            format!(":{}", field(r, "slug"))
        } else {
            field(r, "slug")
        };
        groups.entry(cat).or_default().push(vec![
            name,
            field(r, "kind"),
            field(r, "signature"),
            field(r, "doc"),
        ]);
    }
    let rank = |c: &String| {
        ["source", "step", "predicate", "write"]
            .iter()
            .position(|k| k == c)
            .unwrap_or(usize::MAX)
    };
    order.sort_by_key(rank);
    let mut out = Vec::new();
    for cat in order {
        let rows = groups.remove(&cat).unwrap_or_default();
        out.push(paint(header_style(), &heading(&cat)));
        out.push(table::render(&["name", "kind", "signature", "doc"], &rows));
    }
    out.join("\n\n")
}

/// The `(schema)` rows as JSON objects, in the registry's order.
pub fn schema_rows(engine: &Engine, store: &Store, session: &Session) -> Result<Value, String> {
    run(engine, store, session, "(schema)")
}

/// `cairn schema [--json]`.
pub(super) fn schema_cmd(flag: Option<&Path>, a: &JsonFlag) -> anyhow::Result<ExitCode> {
    let cx = Cx::open_read(flag)?;
    match schema_rows(&cx.engine, &cx.store, &cx.session) {
        Ok(v) if a.json => {
            emit(&serde_json::to_string_pretty(&v)?)?;
            Ok(ExitCode::SUCCESS)
        }
        Ok(v) => {
            emit_styled(&schema_tables(
                v.as_array().map(Vec::as_slice).unwrap_or(&[]),
            ))?;
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => fail(&e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tq_string_escapes_quotes_and_backslashes() {
        assert_eq!(tq_string(r#"a"b\c"#), r#""a\"b\\c""#);
    }

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
        assert_eq!(
            plain(tree_table(&tasks)),
            "slug     status  name  obs  updated (UTC)\n\
             a        active        0\n\
             ├─ b     active        0\n\
             │  └─ c  active        0\n\
             └─ d     active        0\n\
             x        active        0\n\
             └─ y     active        0"
        );
        assert_eq!(tree_table(&[]), "No tasks.");
    }

    #[test]
    fn ls_queries() {
        let a = LsArgs {
            all: false,
            dormant: true,
            under: Some("x\"y".into()),
            tree: true,
            out: JsonFlag { json: false },
        };
        assert_eq!(
            ls_query(&a),
            r#"(-> (all) (:where (= :slug "x\"y")) (:closure :phase-of) (:intersect (dormant)) (:sort :created-ts :asc))"#
        );
    }
}
