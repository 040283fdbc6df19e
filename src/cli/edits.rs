//! Everyday edits as verbs (issue 27; docs/cli.md "Editing"): `cairn edit`,
//! `cairn reopen`, `cairn abandon`, and the dependencies after creation,
//! `cairn dep add|rm|tree`. Each is tool calls through [`Cx::tool`] —
//! `task_set_metadata` (the key `description` sets the description,
//! `display-name` the name), `task_update_status`, `observe`, `task_link`,
//! `task_sever` — after every argument and every task named was checked, so
//! a bad word changes nothing.

use std::path::Path;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use serde_json::{Value, json};

use super::context::Cx;
use super::out::{emit, emit_err, emit_styled};
use super::verbs::{JsonFlag, outcome_json, print_outcome};
use crate::tools::ToolOutcome;

/// `cairn edit [SLUG] [--name TEXT] [--description TEXT] [--set KEY=VALUE]...
/// [--unset KEY]...`.
#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("change").required(true).multiple(true))]
pub struct EditArgs {
    /// The task (default: the current task).
    #[arg(value_parser = super::verbs::slug_arg)]
    pub slug: Option<String>,
    /// A new name (shown by ls; the slug never changes): metadata display-name.
    #[arg(long, value_name = "TEXT", group = "change")]
    pub name: Option<String>,
    /// A new description (replaces the old one; "" clears it).
    #[arg(short = 'd', long, value_name = "TEXT", group = "change")]
    pub description: Option<String>,
    /// Set metadata KEY to VALUE (repeatable), e.g. --set priority=high.
    #[arg(long = "set", value_name = "KEY=VALUE", group = "change")]
    pub set: Vec<String>,
    /// Clear metadata KEY (repeatable): its value becomes empty.
    #[arg(long = "unset", value_name = "KEY", group = "change")]
    pub unset: Vec<String>,
    #[command(flatten)]
    pub out: JsonFlag,
}

/// `cairn abandon SLUG [--reason TEXT]`.
#[derive(Debug, Args)]
pub struct AbandonArgs {
    /// The task to abandon.
    #[arg(value_parser = super::verbs::slug_arg)]
    pub slug: String,
    /// Why: recorded as an observation on the task first.
    #[arg(long, value_name = "TEXT")]
    pub reason: Option<String>,
    #[command(flatten)]
    pub out: JsonFlag,
}

/// `cairn dep add|rm|tree`.
#[derive(Debug, Subcommand)]
pub enum DepAction {
    /// SLUG depends on OTHER: it is not ready until OTHER is done (task_link depends-on).
    Add(DepArgs),
    /// SLUG no longer depends on OTHER (task_sever depends-on).
    Rm(DepArgs),
    /// The plan as a tree: phases under their parent, and under each task
    /// the tasks it depends on (`after SLUG`).
    Tree(DepTreeArgs),
}

/// `cairn dep add|rm SLUG --on OTHER...`.
#[derive(Debug, Args)]
pub struct DepArgs {
    /// The task that waits.
    #[arg(value_parser = super::verbs::slug_arg)]
    pub slug: String,
    /// The task it waits on (repeatable).
    #[arg(long, value_name = "OTHER", required = true, value_parser = super::verbs::slug_arg)]
    pub on: Vec<String>,
    #[command(flatten)]
    pub out: JsonFlag,
}

/// `cairn dep tree [SLUG]`.
#[derive(Debug, Args)]
pub struct DepTreeArgs {
    /// The plan to draw: SLUG and its phases, whatever their status
    /// (default: every open task).
    #[arg(value_parser = super::verbs::slug_arg)]
    pub slug: Option<String>,
    #[command(flatten)]
    pub out: JsonFlag,
}

/// `{"task_id": SLUG}` when a slug was given, `{}` otherwise.
fn task_id(slug: Option<&str>) -> Value {
    match slug {
        Some(s) => json!({ "task_id": s }),
        None => json!({}),
    }
}

/// Checks that `slug` (else the current task) names a task: `Ok(slug)`,
/// or `task_get`'s error outcome (`No task SLUG.`, no current task).
fn existing(cx: &mut Cx, slug: Option<&str>) -> anyhow::Result<Result<String, ToolOutcome>> {
    let out = cx.tool("task_get", task_id(slug))?;
    if out.is_error {
        return Ok(Err(out));
    }
    let found = out
        .structured
        .as_ref()
        .and_then(|v| v.get("slug"))
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_default();
    Ok(Ok(found))
}

/// Runs `calls` (tool, arguments) in order, stopping at the first error;
/// prints their texts one per line (an error's on stderr) or, with `json`,
/// `{"task", "results": [...]}`; exit 0, or 1 when one failed.
fn run_all(
    cx: &mut Cx,
    slug: &str,
    calls: Vec<(&str, Value)>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    run_noting(cx, slug, Vec::new(), calls, json)
}

/// [`run_all`] after `unchanged`: the sentences for what needed no call
/// (printed first; in JSON `"unchanged": [...]` when there are some).
fn run_noting(
    cx: &mut Cx,
    slug: &str,
    unchanged: Vec<String>,
    calls: Vec<(&str, Value)>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let mut results = Vec::new();
    let mut texts = unchanged.clone();
    let mut failed = None;
    for (tool, args) in calls {
        let out = cx.tool(tool, args)?;
        results.push(outcome_json(&out));
        if out.is_error {
            failed = Some(out);
            break;
        }
        texts.push(out.text);
    }
    if json {
        let mut v = json!({ "task": slug, "results": results });
        if !unchanged.is_empty() {
            v["unchanged"] = json!(unchanged);
        }
        emit(&serde_json::to_string_pretty(&v)?)?;
    } else {
        if !texts.is_empty() {
            emit(&texts.join("\n"))?;
        }
        if let Some(f) = &failed {
            emit_err(&f.text);
        }
    }
    Ok(if failed.is_some() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// A refusal before anything ran: the sentence on stderr (or `{"error"}`),
/// exit 1.
fn refuse(msg: &str, json: bool) -> anyhow::Result<ExitCode> {
    print_outcome(&ToolOutcome::err(msg), json)
}

/// `cairn edit`: one `task_set_metadata` per change — `--name` (key
/// `display-name`), `--description` (key `description`: the task's
/// description), each `--set`, each `--unset` (an empty value) — after
/// every `KEY=VALUE` and the task were checked.
pub(super) fn edit_cmd(flag: Option<&Path>, a: &EditArgs) -> anyhow::Result<ExitCode> {
    let mut pairs: Vec<(String, String)> = Vec::new();
    if let Some(n) = &a.name {
        if n.trim().is_empty() {
            return refuse("--name must not be blank.", a.out.json);
        }
        if n.chars().any(|c| c.is_control() || is_bidi_control(c)) {
            return refuse(
                "--name must not contain control or bidirectional-override characters.",
                a.out.json,
            );
        }
        pairs.push(("display-name".into(), n.trim().to_string()));
    }
    if let Some(d) = &a.description {
        pairs.push(("description".into(), d.clone()));
    }
    for s in &a.set {
        let Some((k, v)) = s.split_once('=') else {
            return refuse(
                &format!("--set takes KEY=VALUE (e.g. priority=high); \"{s}\" has no =."),
                a.out.json,
            );
        };
        if k.trim().is_empty() {
            return refuse(
                &format!("--set takes KEY=VALUE; \"{s}\" has no KEY."),
                a.out.json,
            );
        }
        pairs.push((k.trim().to_string(), v.to_string()));
    }
    for k in &a.unset {
        if k.trim().is_empty() {
            return refuse("--unset takes a KEY.", a.out.json);
        }
        pairs.push((k.trim().to_string(), String::new()));
    }
    for (k, _) in &pairs {
        if k.chars().any(char::is_control) {
            return refuse("key must not contain control characters.", a.out.json);
        }
        if let Some(why) = computed_key(k) {
            return refuse(&why, a.out.json);
        }
    }
    for (k, v) in &pairs {
        if v.chars()
            .any(|c| (c.is_control() && c != '\n' && c != '\t') || is_bidi_control(c))
        {
            return refuse(
                &format!(
                    "the value of {k} must not contain control characters (other than newline and tab) or bidirectional overrides."
                ),
                a.out.json,
            );
        }
    }
    let mut cx = Cx::open(flag)?;
    let slug = match existing(&mut cx, a.slug.as_deref())? {
        Ok(s) => s,
        Err(e) => return print_outcome(&e, a.out.json),
    };
    let calls = pairs
        .into_iter()
        .map(|(k, v)| {
            (
                "task_set_metadata",
                json!({ "task_id": slug, "key": k, "value": v }),
            )
        })
        .collect();
    run_all(&mut cx, &slug, calls, a.out.json)
}

/// The invisible characters that reorder text on a terminal (Unicode's
/// bidirectional embeddings, overrides, isolates and marks): a name holding
/// one can print as something else.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{200e}' | '\u{200f}' | '\u{061c}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Why `edit` will not set metadata `key`, or `None`: `slug`, `status` and
/// every other declared TQ field but `display-name` and `description` are
/// computed — recorded as metadata they would shadow the field in every
/// query (hostile pass, issue 27: `--set status=done` made `ls` show
/// `done` and blanked the column for every other task), as `(:set! ...)`
/// refuses them. Keys fold case as TQ keywords do.
fn computed_key(key: &str) -> Option<String> {
    let k = key.to_lowercase();
    if k == "status" {
        return Some(
            "cairn edit will not set status; use cairn done, start, block, reopen or abandon."
                .into(),
        );
    }
    if k != "display-name"
        && k != "description"
        && (k == "slug" || crate::tq::registry::lookup_field(&k).is_some())
    {
        return Some(format!(
            "cairn edit will not set {key}; it is a computed field, not metadata."
        ));
    }
    None
}

/// `cairn reopen [SLUG]`: task_update_status with `reopen` — the task is
/// active again.
pub(super) fn reopen_cmd(
    flag: Option<&Path>,
    a: &super::verbs::SlugArgs,
) -> anyhow::Result<ExitCode> {
    let mut cx = Cx::open(flag)?;
    let mut args = task_id(a.slug.as_deref());
    args["reopen"] = json!(true);
    let out = cx.tool("task_update_status", args)?;
    print_outcome(&out, a.out.json)
}

/// `cairn abandon SLUG [--reason TEXT]`: the reason as an observation
/// (`observe`, `Abandoned: REASON`), then the status abandoned.
pub(super) fn abandon_cmd(flag: Option<&Path>, a: &AbandonArgs) -> anyhow::Result<ExitCode> {
    if a.reason.as_deref().is_some_and(|r| r.trim().is_empty()) {
        return refuse("--reason must not be blank.", a.out.json);
    }
    let mut cx = Cx::open(flag)?;
    let slug = match existing(&mut cx, Some(&a.slug))? {
        Ok(s) => s,
        Err(e) => return print_outcome(&e, a.out.json),
    };
    let mut calls = Vec::new();
    if let Some(r) = &a.reason {
        calls.push((
            "observe",
            json!({ "task_id": slug, "text": format!("Abandoned: {}", r.trim()) }),
        ));
    }
    calls.push((
        "task_update_status",
        json!({ "task_id": slug, "status": "abandoned" }),
    ));
    run_all(&mut cx, &slug, calls, a.out.json)
}

/// `cairn dep add|rm|tree`.
pub(super) fn dep_cmd(flag: Option<&Path>, action: &DepAction) -> anyhow::Result<ExitCode> {
    match action {
        DepAction::Add(a) => edge_cmd(flag, a, "task_link"),
        DepAction::Rm(a) => edge_cmd(flag, a, "task_sever"),
        DepAction::Tree(a) => dep_tree_cmd(flag, a),
    }
}

/// `cairn dep add|rm`: every task named is checked first, then one
/// `tool` call (`task_link` / `task_sever`, depends-on) per `--on`.
fn edge_cmd(flag: Option<&Path>, a: &DepArgs, tool: &str) -> anyhow::Result<ExitCode> {
    let mut cx = Cx::open(flag)?;
    let slug = match existing(&mut cx, Some(&a.slug))? {
        Ok(s) => s,
        Err(e) => return print_outcome(&e, a.out.json),
    };
    let mut others: Vec<String> = Vec::new();
    for other in &a.on {
        match existing(&mut cx, Some(other))? {
            Ok(o) if !others.contains(&o) => others.push(o),
            Ok(_) => {}
            Err(e) => return print_outcome(&e, a.out.json),
        }
    }
    // Hostile pass (issue 27): an edge already there (add) or not there
    // (rm) is said, not recorded again; an edge that would close a
    // depends-on cycle is refused before anything is written.
    let have = match depends_on(&cx, &slug) {
        Ok(h) => h,
        Err(e) => return refuse(&e, a.out.json),
    };
    let adding = tool == "task_link";
    let mut unchanged = Vec::new();
    let mut calls = Vec::new();
    for o in others {
        if adding && o == slug {
            return refuse("A task cannot link to itself.", a.out.json);
        }
        if adding {
            let upstream = match depends_on_closure(&cx, &o) {
                Ok(u) => u,
                Err(e) => return refuse(&e, a.out.json),
            };
            if upstream.contains(&slug) {
                return refuse(
                    &format!(
                        "{o} already depends on {slug} (directly or through other tasks); {slug} waiting on it would make both wait forever. Nothing changed."
                    ),
                    a.out.json,
                );
            }
        }
        match (adding, have.contains(&o)) {
            (true, true) => unchanged.push(format!("{slug} already depends on {o}.")),
            (false, false) => unchanged.push(format!("{slug} does not depend on {o}.")),
            _ => calls.push((
                tool,
                json!({ "task_id": slug, "target_id": o, "edge_type": "depends-on" }),
            )),
        }
    }
    run_noting(&mut cx, &slug, unchanged, calls, a.out.json)
}

/// The slugs `slug` depends on directly. Errors: the query's sentence.
fn depends_on(cx: &Cx, slug: &str) -> Result<Vec<String>, String> {
    ids(
        cx,
        &format!(
            "(-> (all) (:where (= :slug {})) (:follow :depends-on) (:ids))",
            super::views::tq_string(slug)
        ),
    )
}

/// `slug` and every task it depends on, transitively.
fn depends_on_closure(cx: &Cx, slug: &str) -> Result<Vec<String>, String> {
    ids(
        cx,
        &format!(
            "(-> (all) (:where (= :slug {})) (:closure :depends-on) (:ids))",
            super::views::tq_string(slug)
        ),
    )
}

/// The slugs a `(:ids)` query answers.
fn ids(cx: &Cx, query: &str) -> Result<Vec<String>, String> {
    let v = super::views::run(&cx.engine, cx.store.r(), &cx.session, query)?;
    Ok(v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default())
}

/// `cairn dep tree [SLUG]`.
fn dep_tree_cmd(flag: Option<&Path>, a: &DepTreeArgs) -> anyhow::Result<ExitCode> {
    let cx = Cx::open_read(flag)?;
    let slug = a
        .slug
        .as_deref()
        .map(|s| crate::store::slug::strip_depot(s.trim()).to_string());
    if let Some(s) = &slug
        && !cx.store.r().task_exists(s)?
    {
        return refuse(&format!("No task {s}."), a.out.json);
    }
    let query = super::tree::dep_tree_query(slug.as_deref());
    let mut v = match super::views::run(&cx.engine, cx.store.r(), &cx.session, &query) {
        Ok(v) => v,
        Err(e) => return refuse(&e, a.out.json),
    };
    super::views::add_names(cx.store.r(), &mut v)?;
    if let Err(e) = super::tree::add_targets(&cx, &mut v)? {
        return refuse(&e, a.out.json);
    }
    if a.out.json {
        emit(&serde_json::to_string_pretty(&v)?)?;
    } else {
        let list = v.as_array().map(Vec::as_slice).unwrap_or(&[]);
        emit_styled(&super::tree::dep_tree_table(list))?;
    }
    Ok(ExitCode::SUCCESS)
}
