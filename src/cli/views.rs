//! The verbs that show task sets as tables (issue 12; docs/cli.md "Verbs"):
//! `ls`, `ready`, and the vocabulary table of `cairn schema` and the REPL's
//! `:schema`. Each builds one TQ query from registry words and the user's
//! slug as a TQ string literal, runs it through the engine's JSON path (the
//! same as `cairn query --format json`), and lays the objects out with
//! [`table::render`]; `--json` prints those objects.

use std::collections::BTreeMap;
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
use crate::store::DbRef;
use crate::tools::render::minute;
use crate::tq::Surface;
use crate::tq::engine::Engine;
use crate::tq::json::run_json;

/// The statuses `cairn ls --status` takes.
pub const STATUSES: [&str; 5] = ["open", "active", "blocked", "completed", "abandoned"];

/// How many rows `cairn ls` prints when `--limit` is not given (text only;
/// `--json` gives every task unless `--limit` is given).
pub const LS_LIMIT: usize = 50;

/// `cairn ls [--all|--dormant|--status S] [--under SLUG] [--tree]
/// [--where KEY=VALUE] [--mine] [--claimed] [--sort FIELD] [--limit N]`.
#[derive(Debug, Default, Args)]
pub struct LsArgs {
    /// Every task, dormant ones too (default: open, active and blocked).
    #[arg(long, conflicts_with_all = ["dormant", "status"])]
    pub all: bool,
    /// Only completed and abandoned tasks.
    #[arg(long, conflicts_with = "status")]
    pub dormant: bool,
    /// Only tasks with this status (repeatable, or a comma list).
    #[arg(long, value_delimiter = ',', value_name = "STATUS", value_parser = STATUSES)]
    pub status: Vec<String>,
    /// Only the phases below SLUG (its phase-of descendants).
    #[arg(long, value_name = "SLUG", value_parser = super::verbs::slug_arg)]
    pub under: Option<String>,
    /// Only tasks whose field or metadata KEY equals VALUE (repeatable).
    #[arg(long = "where", value_name = "KEY=VALUE")]
    pub filters: Vec<String>,
    /// Only the tasks this agent holds a live claim on (`cairn mine`).
    #[arg(long)]
    pub mine: bool,
    /// Only tasks someone holds a live claim on.
    #[arg(long)]
    pub claimed: bool,
    /// Order by FIELD (a TQ field or metadata key; updated, created, obs and
    /// name are short for updated-ts, created-ts, obs-count and
    /// display-name), ascending; FIELD:desc for descending.
    #[arg(long, value_name = "FIELD")]
    pub sort: Option<String>,
    /// Print at most N tasks (0: all) [default: 50; with --json, all].
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Draw the phase-of tree: each task under its parent, oldest first; a
    /// `waits on` column names unfinished depends-on targets.
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
    #[arg(value_parser = super::verbs::slug_arg)]
    pub slug: Option<String>,
    /// Claim the first of them at once (as `cairn claim`), atomically.
    #[arg(long)]
    pub claim: bool,
    /// With --claim: how long the claim lasts (as `cairn claim --for`).
    #[arg(long = "for", value_name = "DURATION", requires = "claim", value_parser = super::claims::parse_duration)]
    pub lease: Option<u32>,
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

/// The TQ field `--sort` names: the short names `updated`, `created`,
/// `obs`, `name` and `status-changed`, else the word itself (a TQ field or
/// metadata key, which the query's checker validates). Errors: a word TQ
/// cannot name.
fn sort_field(word: &str) -> Result<String, String> {
    let f = match word {
        "updated" => "updated-ts",
        "created" => "created-ts",
        "obs" => "obs-count",
        "name" => "display-name",
        "status-changed" => "status-ts",
        w => w,
    };
    keyword(f).map_err(|_| {
        format!("\"{word}\" cannot be sorted on; --sort takes a field such as updated, created, status, slug or a metadata key.")
    })
}

/// `word` as a TQ keyword's name: letters, digits, `-`, `_`, `.`, `/`, not
/// starting with a digit. Errors: anything else.
fn keyword(word: &str) -> Result<String, ()> {
    let ok = !word.is_empty()
        && !word.starts_with(|c: char| c.is_ascii_digit() || c == '-')
        && word
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'));
    if ok { Ok(word.to_string()) } else { Err(()) }
}

/// `--sort FIELD[:asc|:desc]` split into the field's word and the TQ
/// direction.
fn sort_spec(spec: &str) -> (&str, &'static str) {
    match spec.rsplit_once(':') {
        Some((w, "desc")) => (w, ":desc"),
        Some((w, "asc")) => (w, ":asc"),
        _ => (spec, ":asc"),
    }
}

/// The first field a `--where` or `--sort` of `a` names that is neither a
/// declared field nor a metadata key of any task, as the usage error's
/// sentence (hostile pass, issue 27: it was the query's `Unknown field :a;
/// did you mean :doc?`, exit 1, suggesting reflection fields). Run after
/// `ls_query` accepted `a`. Errors: the `(fields)` query failing.
fn unknown_field(cx: &Cx, a: &LsArgs) -> anyhow::Result<Option<String>> {
    let mut keys: Vec<(&str, String)> = Vec::new();
    for f in &a.filters {
        if let Some((k, _)) = f.split_once('=') {
            keys.push(("--where", k.trim().to_string()));
        }
    }
    if let Some(spec) = &a.sort
        && let Ok(f) = sort_field(sort_spec(spec).0.trim())
    {
        keys.push(("--sort", f));
    }
    keys.retain(|(_, k)| crate::tq::registry::lookup_field(&k.to_lowercase()).is_none());
    if keys.is_empty() {
        return Ok(None);
    }
    let rows =
        run(&cx.engine, cx.store.r(), &cx.session, "(fields)").map_err(anyhow::Error::msg)?;
    let known: std::collections::HashSet<String> = rows
        .as_array()
        .map(|r| r.iter().map(|f| field(f, "slug").to_lowercase()).collect())
        .unwrap_or_default();
    Ok(keys
        .into_iter()
        .find(|(_, k)| !known.contains(&k.to_lowercase()))
        .map(|(flag, k)| {
            format!(
                "{flag}: no task has a field or metadata key \"{k}\" (`cairn query '(fields)'` lists them)."
            )
        }))
}

/// The `(:sort ...)` step of `a`: `--sort`, else newest update first, or
/// oldest creation first for `--tree`.
fn sort_step(a: &LsArgs) -> Result<String, String> {
    match &a.sort {
        Some(spec) => {
            let (word, dir) = sort_spec(spec);
            Ok(format!("(:sort :{} {dir})", sort_field(word.trim())?))
        }
        None if a.tree => Ok("(:sort :created-ts :asc)".into()),
        None => Ok("(:sort :updated-ts :desc)".into()),
    }
}

/// The `(:where ...)` step of one `--where KEY=VALUE`. Errors: no `=`, or a
/// KEY TQ cannot name.
fn where_step(filter: &str) -> Result<String, String> {
    let Some((key, value)) = filter.split_once('=') else {
        return Err(format!(
            "--where takes KEY=VALUE (e.g. priority=high); \"{filter}\" has no =."
        ));
    };
    let key = key.trim();
    let key = keyword(key).map_err(|_| {
        format!("\"{key}\" is not a key --where can match; use letters, digits, - and _.")
    })?;
    let numeric = crate::tq::registry::lookup_field(&key)
        .is_some_and(|f| f.ty != crate::tq::ast::FieldType::Text);
    let lit = match value.trim().parse::<i64>() {
        Ok(n) if numeric => n.to_string(),
        _ => tq_string(value),
    };
    Ok(format!("(:where (= :{key} {lit}))"))
}

/// The TQ query `cairn ls` runs for `a`, sorted, without its limit.
/// Errors: a `--where` or `--sort` TQ cannot say (a sentence).
pub fn ls_query(a: &LsArgs) -> Result<String, String> {
    let (base, status_step) = if !a.status.is_empty() {
        let alts: Vec<String> = a
            .status
            .iter()
            .map(|s| format!("(= :status {})", tq_string(s)))
            .collect();
        ("(all)", Some(format!("(:where (or {}))", alts.join(" "))))
    } else if a.all {
        ("(all)", None)
    } else if a.dormant {
        ("(dormant)", None)
    } else {
        ("(active)", None)
    };
    let mut steps = Vec::new();
    let head = match &a.under {
        Some(slug) => {
            steps.push("(:closure :phase-of)".to_string());
            steps.push(format!("(:intersect {base})"));
            format!(
                "(all) (:where (= :slug {}))",
                tq_string(crate::store::slug::strip_depot(slug.trim()))
            )
        }
        None => base.to_string(),
    };
    steps.extend(status_step);
    if a.mine {
        steps.push("(:intersect (mine))".into());
    }
    if a.claimed {
        steps.push("(:where (has :claimed-by))".into());
    }
    for f in &a.filters {
        steps.push(where_step(f)?);
    }
    steps.push(sort_step(a)?);
    Ok(format!("(-> {head} {})", steps.join(" ")))
}

/// A field of a task object as text (`""` when absent or null).
pub(super) fn field(v: &Value, key: &str) -> String {
    match v.get(key) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => String::new(),
    }
}

/// The row of one task: slug (after `prefix`), status (coloured), name
/// (the `name` [`add_names`] put there),
/// observations, last update (`YYYY-MM-DD HH:MM`, UTC).
pub(super) fn task_row(prefix: &str, t: &Value) -> Vec<String> {
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

/// The columns of a task table.
pub(super) const TASK_HEADERS: [&str; 5] = ["slug", "status", "name", "obs", "updated (UTC)"];

/// The flat table of `tasks` (objects with slug, status, name, obs-count,
/// updated-ts), or `No tasks.` when there are none.
pub fn task_table(tasks: &[Value]) -> String {
    if tasks.is_empty() {
        return "No tasks.".to_string();
    }
    let rows: Vec<Vec<String>> = tasks.iter().map(|t| task_row("", t)).collect();
    table::render(&TASK_HEADERS, &rows)
}

/// Runs `text` for the JSON path; a query error as its one-line message.
pub(super) fn run(
    engine: &Engine,
    store: DbRef<'_>,
    session: &Session,
    text: &str,
) -> Result<Value, String> {
    run_json(engine, store, session, text, Surface::Read).map_err(|d| d.render_plain())
}

/// Adds `"name"` to each task object of `tasks`: its `display-name` when
/// one is set (differs from the slug), else the name typed when it was
/// created (`store::read::typed_name`), else `null`. Errors: a store read.
pub(super) fn add_names(store: DbRef<'_>, tasks: &mut Value) -> anyhow::Result<()> {
    let Some(list) = tasks.as_array_mut() else {
        return Ok(());
    };
    for t in list {
        let slug = field(t, "slug");
        let display = field(t, "display-name");
        let name = if !display.is_empty() && display != slug {
            Some(display)
        } else {
            store.typed_name(&slug)?
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

/// Prints `msg` on stderr; exit 1.
pub(super) fn fail(msg: &str) -> anyhow::Result<ExitCode> {
    emit_err(msg.trim_end());
    Ok(ExitCode::from(1))
}

/// `query` with `step` added as its last step (`query` is an `(-> ...)`).
pub(super) fn with_step(query: &str, step: &str) -> String {
    match query.strip_suffix(')') {
        Some(head) if query.starts_with("(->") => format!("{head} {step})"),
        _ => format!("(-> {query} {step})"),
    }
}

/// Prints the closing `N more; --limit 0 for all.` line when `left > 0`.
fn more_line(left: usize) -> anyhow::Result<()> {
    if left > 0 {
        emit(&format!("{left} more; --limit 0 for all."))?;
    }
    Ok(())
}

/// `cairn ls`: a bad `--where`/`--sort` is a usage error (exit 2, its
/// sentence); `--under` an unknown task `No task SLUG.` (exit 1).
pub(super) fn ls_cmd(flag: Option<&Path>, a: &LsArgs) -> anyhow::Result<ExitCode> {
    let query = match ls_query(a) {
        Ok(q) => q,
        Err(e) => {
            emit_err(&format!("error: {e}"));
            return Ok(ExitCode::from(2));
        }
    };
    let cx = Cx::open_read(flag)?;
    if let Some(why) = unknown_field(&cx, a)? {
        emit_err(&format!("error: {why}"));
        return Ok(ExitCode::from(2));
    }
    if let Some(slug) = &a.under {
        let bare = crate::store::slug::strip_depot(slug.trim());
        if !cx.store.r().task_exists(bare)? {
            return fail(&format!("No task {bare}."));
        }
    }
    let limit = a.limit.unwrap_or(if a.out.json { 0 } else { LS_LIMIT });
    if a.tree {
        let mut v = match run(&cx.engine, cx.store.r(), &cx.session, &query) {
            Ok(v) => v,
            Err(e) => return fail(&e),
        };
        add_names(cx.store.r(), &mut v)?;
        let list = v.as_array().cloned().unwrap_or_default();
        let waits = match super::tree::waits(&cx, &list) {
            Ok(w) => w,
            Err(e) => return fail(&e),
        };
        if a.out.json {
            let mut list = list;
            for t in &mut list {
                let w = waits.get(&field(t, "slug")).cloned().unwrap_or_default();
                if let Value::Object(m) = t {
                    m.insert("waits-on".into(), serde_json::json!(w));
                }
            }
            super::tree::cut(&mut list, limit);
            emit(&serde_json::to_string_pretty(&list)?)?;
            return Ok(ExitCode::SUCCESS);
        }
        let (text, left) = super::tree::ls_tree(&list, &waits, limit);
        emit_styled(&text)?;
        more_line(left)?;
        return Ok(ExitCode::SUCCESS);
    }
    let (page, left) = if limit == 0 {
        (query.clone(), 0)
    } else {
        let total = match run(
            &cx.engine,
            cx.store.r(),
            &cx.session,
            &with_step(&query, "(:count)"),
        ) {
            Ok(v) => v.as_u64().unwrap_or(0),
            Err(e) => return fail(&e),
        };
        let left = usize::try_from(total)
            .unwrap_or(usize::MAX)
            .saturating_sub(limit);
        (with_step(&query, &format!("(:take {limit})")), left)
    };
    match run(&cx.engine, cx.store.r(), &cx.session, &page) {
        Ok(mut v) => {
            add_names(cx.store.r(), &mut v)?;
            print_tasks(v, a.out.json, task_table)?;
            if !a.out.json {
                more_line(left)?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => fail(&e),
    }
}

/// Runs the task-set `query` and prints it as `cairn ls` does (a table, or
/// with `json` the task objects); a query error on stderr, exit 1.
pub(super) fn tasks_cmd(flag: Option<&Path>, query: &str, json: bool) -> anyhow::Result<ExitCode> {
    let cx = Cx::open_read(flag)?;
    match run(&cx.engine, cx.store.r(), &cx.session, query) {
        Ok(mut v) => {
            add_names(cx.store.r(), &mut v)?;
            print_tasks(v, json, task_table)
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

/// `cairn ready [SLUG] [--claim [--for DURATION]]`.
pub(super) fn ready_cmd(flag: Option<&Path>, a: &ReadyArgs) -> anyhow::Result<ExitCode> {
    if a.claim {
        let mut cx = Cx::open(flag)?;
        let secs = a.lease.unwrap_or(super::claims::DEFAULT_LEASE);
        let set = match &a.slug {
            Some(slug) => {
                if let Err(msg) = super::query::select_current(cx.store.r(), &mut cx.session, slug)
                {
                    return fail(&msg);
                }
                READY_IN_PLAN
            }
            None => READY_ALL,
        };
        let before = cx.session.current.clone();
        let out = super::claims::claim_first(&mut cx, set, secs)?;
        if out.is_error {
            // Nothing claimed: the current task stays as it was.
            cx.session.current = before;
            cx.save_current()?;
        }
        return super::verbs::print_outcome(&out, a.out.json);
    }
    let mut cx = Cx::open_read(flag)?;
    let q = match &a.slug {
        Some(slug) => {
            if let Err(msg) = super::query::select_current(cx.store.r(), &mut cx.session, slug) {
                return fail(&msg);
            }
            READY_IN_PLAN
        }
        None => READY_ALL,
    };
    match run(&cx.engine, cx.store.r(), &cx.session, q) {
        Ok(mut v) => {
            add_names(cx.store.r(), &mut v)?;
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
pub fn schema_rows(engine: &Engine, store: DbRef<'_>, session: &Session) -> Result<Value, String> {
    run(engine, store, session, "(schema)")
}

/// `cairn schema [--json]`.
pub(super) fn schema_cmd(flag: Option<&Path>, a: &JsonFlag) -> anyhow::Result<ExitCode> {
    let cx = Cx::open_read(flag)?;
    match schema_rows(&cx.engine, cx.store.r(), &cx.session) {
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

    #[test]
    fn ls_queries() {
        let a = LsArgs {
            dormant: true,
            under: Some("x\"y".into()),
            tree: true,
            ..LsArgs::default()
        };
        assert_eq!(
            ls_query(&a).unwrap(),
            r#"(-> (all) (:where (= :slug "x\"y")) (:closure :phase-of) (:intersect (dormant)) (:sort :created-ts :asc))"#
        );
        let b = LsArgs {
            status: vec!["blocked".into(), "open".into()],
            filters: vec!["priority=high".into(), "obs-count=2".into()],
            mine: true,
            claimed: true,
            sort: Some("created:desc".into()),
            ..LsArgs::default()
        };
        assert_eq!(
            ls_query(&b).unwrap(),
            r#"(-> (all) (:where (or (= :status "blocked") (= :status "open"))) (:intersect (mine)) (:where (has :claimed-by)) (:where (= :priority "high")) (:where (= :obs-count 2)) (:sort :created-ts :desc))"#
        );
        let bad = |f: &str| LsArgs {
            filters: vec![f.into()],
            ..LsArgs::default()
        };
        assert!(ls_query(&bad("priority")).is_err());
        assert!(ls_query(&bad("a b=c")).is_err());
        let sort = LsArgs {
            sort: Some("(x".into()),
            ..LsArgs::default()
        };
        assert!(ls_query(&sort).is_err());
    }
}
