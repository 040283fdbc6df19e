//! The everyday verbs over the tool registry (issue 12; docs/cli.md
//! "Verbs"): `add`, `show`, `done`/`start`/`block`, `note`, `log`,
//! `search`, `current`. Each is one or two tool calls through
//! [`Cx::tool`] — no logic of its own, no SQL — and prints the tool's text
//! (stdout; an error's text on stderr, exit 1) or, with `--json`, the
//! tool's structured result.

use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use serde_json::{Value, json};

use super::context::Cx;
use super::out::{emit, emit_err};
use crate::tools::ToolOutcome;

/// `--json`, shared by every verb.
#[derive(Debug, Default, Clone, Copy, Args)]
pub struct JsonFlag {
    /// Print the structured result (JSON) instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `cairn add NAME [--under SLUG] [--after SLUG]... [-d TEXT]`.
#[derive(Debug, Args)]
pub struct AddArgs {
    /// The task's name, e.g. "tune search ranking" (the slug is
    /// YYYY-MM-DD-<slugified name>: lower case, stopwords such as "the" and
    /// "to" dropped, at most 4 words).
    pub name: String,
    /// Create it as a phase of SLUG (task_fork; the new task becomes current).
    #[arg(long, value_name = "SLUG", value_parser = slug_arg)]
    pub under: Option<String>,
    /// The new task depends on SLUG (task_link depends-on); repeatable.
    #[arg(long, value_name = "SLUG", value_parser = slug_arg)]
    pub after: Vec<String>,
    /// A description.
    #[arg(short = 'd', long = "description", value_name = "TEXT")]
    pub description: Option<String>,
    #[command(flatten)]
    pub out: JsonFlag,
}

/// A SLUG argument as typed: refused when blank or holding a control
/// character (hostile pass, issue 27: a blank SLUG reached the tools as
/// "no task given", so `cairn abandon ""` abandoned the current task).
/// Leading and trailing spaces are kept for the tools to trim.
pub fn slug_arg(text: &str) -> Result<String, String> {
    if text.trim().is_empty() {
        return Err("a SLUG must not be blank.".into());
    }
    if text.chars().any(char::is_control) {
        return Err(format!(
            "\"{}\" is not a slug: it holds a control character.",
            text.escape_debug()
        ));
    }
    Ok(text.to_string())
}

/// `cairn show|done|start|block [SLUG]`, `cairn log [SLUG]`.
#[derive(Debug, Args)]
pub struct SlugArgs {
    /// The task (default: the current task, see `cairn current`).
    #[arg(value_parser = slug_arg)]
    pub slug: Option<String>,
    #[command(flatten)]
    pub out: JsonFlag,
}

/// `cairn note [SLUG] TEXT`.
#[derive(Debug, Args)]
pub struct NoteArgs {
    /// [SLUG] TEXT: the observation, on SLUG when given, else on the
    /// current task.
    #[arg(value_name = "TEXT", num_args = 1..=2, required = true)]
    pub words: Vec<String>,
    #[command(flatten)]
    pub out: JsonFlag,
}

/// `cairn log [SLUG] [--full] [--limit N]`.
#[derive(Debug, Args)]
pub struct LogArgs {
    /// The task (default: the current task).
    #[arg(value_parser = slug_arg)]
    pub slug: Option<String>,
    /// Every event's whole text instead of one-line digests.
    #[arg(long)]
    pub full: bool,
    /// At most N events (the tool's default otherwise).
    #[arg(long, value_name = "N")]
    pub limit: Option<u32>,
    #[command(flatten)]
    pub out: JsonFlag,
}

/// `cairn search TEXT [--limit N] [--under SLUG]`.
#[derive(Debug, Args)]
pub struct SearchArgs {
    /// The search text: words match literally, a trailing * is a prefix.
    pub text: String,
    /// At most N hits (the tool's default otherwise).
    #[arg(long, value_name = "N")]
    pub limit: Option<u32>,
    /// Only observations on SLUG.
    #[arg(long, value_name = "SLUG", value_parser = slug_arg)]
    pub on: Option<String>,
    #[command(flatten)]
    pub out: JsonFlag,
}

/// The JSON `--json` prints for a tool's outcome: the tool's structured
/// result (MCP `structuredContent`) on success; `{"error": TEXT}` for a
/// tool error (errors carry no structure); `{"text": TEXT}` for a success
/// without structure.
pub fn outcome_json(out: &ToolOutcome) -> Value {
    match (&out.structured, out.is_error) {
        (_, true) => json!({ "error": out.text }),
        (Some(v), false) => v.clone(),
        (None, false) => json!({ "text": out.text }),
    }
}

/// Prints `out` — its text on stdout, or on stderr when it is an error; with
/// `json`, [`outcome_json`] on stdout either way — and returns exit 0, or 1
/// for an error.
pub fn print_outcome(out: &ToolOutcome, json: bool) -> anyhow::Result<ExitCode> {
    if json {
        emit(&serde_json::to_string_pretty(&outcome_json(out))?)?;
    } else if out.is_error {
        emit_err(&out.text);
    } else {
        emit(&out.text)?;
    }
    Ok(exit(out))
}

fn exit(out: &ToolOutcome) -> ExitCode {
    if out.is_error {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// `{"task_id": SLUG}` when a slug was given, `{}` otherwise.
fn task_id(slug: Option<&str>) -> Value {
    match slug {
        Some(s) => json!({ "task_id": s }),
        None => json!({}),
    }
}

/// The new task's slug: the structured result's `slug` (task_create and
/// task_fork both have one), else the one a `Created SLUG.` / `Forked SLUG
/// from …` line names.
fn new_slug(out: &ToolOutcome) -> Option<String> {
    if let Some(slug) = out
        .structured
        .as_ref()
        .and_then(|v| v.get("slug"))
        .and_then(Value::as_str)
    {
        return Some(slug.to_string());
    }
    let rest = out
        .text
        .strip_prefix("Created ")
        .or_else(|| out.text.strip_prefix("Forked "))?;
    let first = rest.split_whitespace().next()?;
    Some(first.trim_end_matches('.').to_string())
}

/// `cairn add`: task_create (or task_fork with `--under`), then one
/// task_link depends-on per `--after`. An unknown `--after` target is
/// refused (`No task SLUG.`, exit 1) before anything is created.
pub(super) fn add_cmd(flag: Option<&Path>, a: &AddArgs) -> anyhow::Result<ExitCode> {
    let mut cx = Cx::open(flag)?;
    // Every --after target must exist before anything is created, so a
    // typo never leaves a half-made task behind (task_get's `No task SLUG.`).
    for target in &a.after {
        let found = cx.tool("task_get", json!({ "task_id": target }))?;
        if found.is_error {
            return print_outcome(&found, a.out.json);
        }
    }
    let mut args = json!({ "name": a.name });
    if let Some(d) = &a.description {
        args["description"] = json!(d);
    }
    let created = match &a.under {
        Some(parent) => {
            args["from"] = json!(parent);
            cx.tool("task_fork", args)?
        }
        None => cx.tool("task_create", args)?,
    };
    if created.is_error || a.after.is_empty() {
        return print_outcome(&created, a.out.json);
    }
    let Some(slug) = new_slug(&created) else {
        return print_outcome(&created, a.out.json);
    };
    let mut texts = vec![created.text.clone()];
    let mut links = Vec::new();
    let mut failed = None;
    for target in &a.after {
        let link = cx.tool(
            "task_link",
            json!({ "task_id": slug, "target_id": target, "edge_type": "depends-on" }),
        )?;
        links.push(outcome_json(&link));
        if link.is_error {
            failed = Some(link);
            break;
        }
        texts.push(link.text);
    }
    if a.out.json {
        let mut v = outcome_json(&created);
        if let Value::Object(m) = &mut v {
            m.insert("links".into(), Value::Array(links));
        }
        emit(&serde_json::to_string_pretty(&v)?)?;
        return Ok(failed.as_ref().map_or(ExitCode::SUCCESS, exit));
    }
    emit(&texts.join("\n"))?;
    match failed {
        Some(f) => print_outcome(&f, false),
        None => Ok(ExitCode::SUCCESS),
    }
}

/// The edge types whose incoming edges `cairn show` lists (a task's
/// incoming `phase-of` edges are its children, which task_get lists).
pub const INCOMING_EDGES: [&str; 2] = ["depends-on", "related"];

/// The tasks with an `edge` edge to `slug`, by slug (a TQ `:back`).
fn incoming(cx: &Cx, slug: &str, edge: &str) -> Result<Vec<String>, String> {
    let q = format!(
        "(-> (all) (:where (= :slug {})) (:back :{edge}) (:sort :slug :asc) (:ids))",
        super::views::tq_string(slug)
    );
    let v = super::views::run(&cx.engine, cx.store.r(), &cx.session, &q)?;
    Ok(v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default())
}

/// `cairn show [SLUG]`: task_get, then the task's incoming edges (issue
/// 27): `  incoming:` and one `    EDGE from SLUG` line each (text); an
/// `"incoming"` array of `{"edge_type", "source"}` (JSON).
pub(super) fn show_cmd(flag: Option<&Path>, a: &SlugArgs) -> anyhow::Result<ExitCode> {
    let mut cx = Cx::open_read(flag)?;
    let mut out = cx.tool("task_get", task_id(a.slug.as_deref()))?;
    if out.is_error {
        return print_outcome(&out, a.out.json);
    }
    let slug = out
        .structured
        .as_ref()
        .and_then(|v| v.get("slug"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let mut lines = Vec::new();
    let mut list = Vec::new();
    for edge in INCOMING_EDGES {
        let sources = match incoming(&cx, &slug, edge) {
            Ok(s) => s,
            Err(e) => return print_outcome(&ToolOutcome::err(e), a.out.json),
        };
        for src in sources {
            lines.push(format!("\n    {edge} from {src}"));
            list.push(json!({ "edge_type": edge, "source": src }));
        }
    }
    if !lines.is_empty() {
        out.text.push_str("\n  incoming:");
        out.text.push_str(&lines.concat());
    }
    if let Some(Value::Object(m)) = &mut out.structured {
        m.insert("incoming".into(), Value::Array(list));
    }
    print_outcome(&out, a.out.json)
}

/// `cairn done|start|block [SLUG]`: task_update_status to `status`
/// (completed, active, blocked).
pub(super) fn status_cmd(
    flag: Option<&Path>,
    a: &SlugArgs,
    status: &str,
) -> anyhow::Result<ExitCode> {
    let mut cx = Cx::open(flag)?;
    let mut args = task_id(a.slug.as_deref());
    args["status"] = json!(status);
    let out = cx.tool("task_update_status", args)?;
    print_outcome(&out, a.out.json)
}

/// `cairn note [SLUG] TEXT`: observe.
pub(super) fn note_cmd(flag: Option<&Path>, a: &NoteArgs) -> anyhow::Result<ExitCode> {
    let mut cx = Cx::open(flag)?;
    let (slug, text) = match a.words.as_slice() {
        [slug, text] => (Some(slug.as_str()), text.as_str()),
        [text] => (None, text.as_str()),
        _ => (None, ""),
    };
    let mut args = task_id(slug);
    args["text"] = json!(text);
    let out = cx.tool("observe", args)?;
    print_outcome(&out, a.out.json)
}

/// `cairn log [SLUG]`: timeline.
pub(super) fn log_cmd(flag: Option<&Path>, a: &LogArgs) -> anyhow::Result<ExitCode> {
    let mut cx = Cx::open_read(flag)?;
    let mut args = task_id(a.slug.as_deref());
    if a.full {
        args["full"] = json!(true);
    }
    if let Some(n) = a.limit {
        args["limit"] = json!(n);
    }
    let out = cx.tool("timeline", args)?;
    print_outcome(&out, a.out.json)
}

/// `cairn search TEXT`: task_search.
pub(super) fn search_cmd(flag: Option<&Path>, a: &SearchArgs) -> anyhow::Result<ExitCode> {
    let mut cx = Cx::open_read(flag)?;
    let mut args = task_id(a.on.as_deref());
    args["query"] = json!(a.text);
    if let Some(n) = a.limit {
        args["limit"] = json!(n);
    }
    let out = cx.tool("task_search", args)?;
    print_outcome(&out, a.out.json)
}

/// `cairn current [SLUG]`: with SLUG, task_bootstrap's selection without
/// its text — the task becomes the CLI's current task (`Current task:
/// SLUG.`); without, the current task or `No current task; …`.
pub(super) fn current_cmd(flag: Option<&Path>, a: &SlugArgs) -> anyhow::Result<ExitCode> {
    let mut cx = Cx::open_read(flag)?;
    if let Some(slug) = &a.slug {
        if let Err(msg) = super::query::select_current(cx.store.r(), &mut cx.session, slug) {
            let out = ToolOutcome::err(msg);
            return print_outcome(&out, a.out.json);
        }
        cx.save_current()?;
    }
    let cur = cx.session.current.clone();
    if a.out.json {
        emit(&serde_json::to_string_pretty(&json!({ "current": cur }))?)?;
        return Ok(ExitCode::SUCCESS);
    }
    emit(&match cur {
        Some(s) => format!("Current task: {s}."),
        None => "No current task; choose one with `cairn current SLUG`.".to_string(),
    })?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_slug_reads_create_and_fork_lines() {
        assert_eq!(
            new_slug(&ToolOutcome::ok("Created 2026-01-01-a.")).as_deref(),
            Some("2026-01-01-a")
        );
        assert_eq!(
            new_slug(&ToolOutcome::ok(
                "Forked 2026-01-01-b from 2026-01-01-a (phase-of)."
            ))
            .as_deref(),
            Some("2026-01-01-b")
        );
        assert_eq!(new_slug(&ToolOutcome::ok("nope")), None);
    }
}
