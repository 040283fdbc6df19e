//! Claims as verbs (issue 27; docs/cli.md "Claims"): `cairn claim [SLUG]
//! [--for DURATION]`, `cairn release [SLUG]`, `cairn ready --claim` and
//! `cairn mine`. Each is one `task_query_write` (or `task_query`) call with
//! the TQ of docs/tq.md "Working as a team of agents" — the claim-one query
//! `(-> (query "ready") (:take 1) (:claim! S) (:ids))` when no task is
//! named — plus `task_get` to say who holds a task that could not be
//! claimed. A task claimed becomes the verbs' current task.

use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use serde_json::{Value, json};

use super::context::Cx;
use super::verbs::{JsonFlag, print_outcome};
use super::views::tq_string;
use crate::tools::ToolOutcome;
use crate::tools::render::minute;

/// A lease's length when `--for` is not given: 15 minutes, the 900 s of
/// docs/tq.md's claim-one query.
pub const DEFAULT_LEASE: u32 = 900;

/// The longest lease `(:claim! S)` takes: one day.
pub const MAX_LEASE: u32 = 86_400;

/// `--for DURATION`, shared by `claim` and `ready --claim`.
#[derive(Debug, Clone, Copy, Args)]
pub struct LeaseArg {
    /// How long the claim lasts: seconds, or a number with s, m, h or d
    /// (90s, 15m, 1h30m); at most 1d. Renew by claiming again.
    #[arg(long = "for", value_name = "DURATION", default_value = "15m", value_parser = parse_duration)]
    pub lease: u32,
}

/// `cairn claim [SLUG] [--for DURATION]`.
#[derive(Debug, Args)]
pub struct ClaimArgs {
    /// The task to claim; without it, the first ready task (`cairn ready`),
    /// claimed atomically so two agents never get the same one.
    #[arg(value_parser = super::verbs::slug_arg)]
    pub slug: Option<String>,
    #[command(flatten)]
    pub lease: LeaseArg,
    #[command(flatten)]
    pub out: JsonFlag,
}

/// Parses a lease: `N` (seconds) or one or more `N` + unit (`s`, `m`, `h`,
/// `d`), e.g. `90s`, `15m`, `1h30m`; 1 s to 1 d. Errors: a sentence naming
/// the accepted forms.
pub fn parse_duration(text: &str) -> Result<u32, String> {
    let shown = text.escape_debug().to_string();
    let bad = || {
        format!(
            "\"{shown}\" is not a duration; use seconds or a number with s, m, h or d (90s, 15m, 1h30m), from 1s to 1d."
        )
    };
    let t = text.trim();
    if t.is_empty() {
        return Err(bad());
    }
    // Seconds alone, or numbers each with a unit, the units largest first
    // and each once: `1h30` (30 seconds, or 30 minutes?) and `1h1h` are
    // refused rather than guessed.
    let mut total: u64 = 0;
    let mut digits = String::new();
    let mut last_unit = u64::MAX;
    for c in t.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        let unit: u64 = match c {
            's' => 1,
            'm' => 60,
            'h' => 3_600,
            'd' => 86_400,
            _ => return Err(bad()),
        };
        if unit >= last_unit {
            return Err(bad());
        }
        last_unit = unit;
        let n: u64 = digits.parse().map_err(|_| bad())?;
        total = total.saturating_add(n.saturating_mul(unit));
        digits.clear();
    }
    if !digits.is_empty() {
        if last_unit != u64::MAX {
            return Err(bad());
        }
        // Digits alone: seconds (a number too large for u64 is too long).
        total = digits.parse().unwrap_or(u64::MAX);
    }
    if total == 0 || total > u64::from(MAX_LEASE) {
        return Err(format!(
            "\"{shown}\" is out of range; a claim lasts from 1s to 1d."
        ));
    }
    u32::try_from(total).map_err(|_| bad())
}

/// A lease as people read it: `15m`, `1h30m`, `45s`, `1d`.
pub fn lease_text(secs: u32) -> String {
    let (d, rest) = (secs / 86_400, secs % 86_400);
    let (h, rest) = (rest / 3_600, rest % 3_600);
    let (m, s) = (rest / 60, rest % 60);
    let mut out = String::new();
    for (n, u) in [(d, "d"), (h, "h"), (m, "m"), (s, "s")] {
        if n > 0 {
            out.push_str(&format!("{n}{u}"));
        }
    }
    out
}

/// The TQ that claims the first task of `set` for `secs` seconds.
pub fn claim_first_query(set: &str, secs: u32) -> String {
    super::views::with_step(set, &format!("(:take 1) (:claim! {secs}) (:ids)"))
}

/// The TQ set of exactly the task `slug` (never a prefix match).
pub fn exactly(slug: &str) -> String {
    format!("(-> (all) (:where (= :slug {})))", tq_string(slug))
}

/// The slugs a `(:ids)` query answered through `task_query_write` /
/// `task_query`, or the tool's error outcome.
fn ids(cx: &mut Cx, tool: &str, query: &str) -> anyhow::Result<Result<Vec<String>, ToolOutcome>> {
    let out = cx.tool(tool, json!({ "query": query }))?;
    if out.is_error {
        return Ok(Err(out));
    }
    let list = out
        .structured
        .as_ref()
        .and_then(|v| v.get("result"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    Ok(Ok(list))
}

/// `task_get`'s structured result for `slug`, or its error outcome.
fn got(cx: &mut Cx, slug: &str) -> anyhow::Result<Result<Value, ToolOutcome>> {
    let out = cx.tool("task_get", json!({ "task_id": slug }))?;
    if out.is_error {
        return Ok(Err(out));
    }
    Ok(Ok(out.structured.unwrap_or(Value::Null)))
}

/// The outcome of a won claim: `Claimed SLUG for 15m.` and `{"claimed",
/// "agent", "seconds", "until"}`; the task becomes the current one.
fn claimed(cx: &mut Cx, slug: &str, secs: u32) -> anyhow::Result<ToolOutcome> {
    cx.session.switch_to(slug);
    cx.save_current()?;
    let until = match got(cx, slug)? {
        Ok(v) => v.pointer("/claim/until").cloned().unwrap_or(Value::Null),
        Err(_) => Value::Null,
    };
    let agent = cx.session.agent.clone();
    Ok(ToolOutcome::with(
        format!("Claimed {slug} for {}.", lease_text(secs)),
        &json!({ "claimed": slug, "agent": agent, "seconds": secs, "until": until }),
    ))
}

/// Why `slug` (found, not won) could not be claimed, from its `task_get`
/// structure: dormant, or held by another agent until when.
fn refusal(slug: &str, state: &Value) -> String {
    let status = state.get("status").and_then(Value::as_str).unwrap_or("");
    if status == "completed" || status == "abandoned" {
        return format!("{slug} is {status}; reopen it (`cairn reopen {slug}`) to claim it.");
    }
    match (
        state.pointer("/claim/owner").and_then(Value::as_str),
        state.pointer("/claim/until").and_then(Value::as_i64),
    ) {
        (Some(owner), Some(until)) => format!(
            "{slug} is claimed by {owner} until {} UTC; nothing changed.",
            minute(until)
        ),
        _ => format!("{slug} could not be claimed; nothing changed."),
    }
}

/// Claims `slug` for `secs`: its outcome (success, or the sentence saying
/// why not).
fn claim_one_slug(cx: &mut Cx, slug: &str, secs: u32) -> anyhow::Result<ToolOutcome> {
    let slug = crate::store::slug::strip_depot(slug.trim()).to_string();
    if let Err(e) = got(cx, &slug)? {
        return Ok(e);
    }
    let q = super::views::with_step(&exactly(&slug), &format!("(:claim! {secs}) (:ids)"));
    match ids(cx, "task_query_write", &q)? {
        Err(e) => Ok(e),
        Ok(won) if won.contains(&slug) => claimed(cx, &slug, secs),
        Ok(_) => Ok(match got(cx, &slug)? {
            Ok(state) => ToolOutcome::err(refusal(&slug, &state)),
            Err(e) => e,
        }),
    }
}

/// Claims the first task of `set` (a TQ set) for `secs`, atomically.
pub(super) fn claim_first(cx: &mut Cx, set: &str, secs: u32) -> anyhow::Result<ToolOutcome> {
    match ids(cx, "task_query_write", &claim_first_query(set, secs))? {
        Err(e) => Ok(e),
        Ok(won) => match won.first() {
            Some(slug) => claimed(cx, &slug.clone(), secs),
            None => Ok(ToolOutcome::err(
                "Nothing is ready to claim (`cairn ready` is empty).",
            )),
        },
    }
}

/// `cairn claim [SLUG] [--for DURATION]`: exit 0 when this agent now holds
/// the task; 1 (a sentence on stderr, nothing changed) when it does not.
pub(super) fn claim_cmd(flag: Option<&Path>, a: &ClaimArgs) -> anyhow::Result<ExitCode> {
    let mut cx = Cx::open(flag)?;
    let out = match &a.slug {
        Some(slug) => claim_one_slug(&mut cx, slug, a.lease.lease)?,
        None => claim_first(&mut cx, super::views::READY_ALL, a.lease.lease)?,
    };
    print_outcome(&out, a.out.json)
}

/// `cairn release [SLUG]` (default: the current task): ends this agent's
/// claim. `Released SLUG.`; a task nobody holds is left as it is
/// (`SLUG is not claimed.`, exit 0); one another agent holds is refused
/// (exit 1).
pub(super) fn release_cmd(
    flag: Option<&Path>,
    a: &super::verbs::SlugArgs,
) -> anyhow::Result<ExitCode> {
    let mut cx = Cx::open(flag)?;
    let slug = match &a.slug {
        Some(s) => crate::store::slug::strip_depot(s.trim()).to_string(),
        None => match cx.session.current.clone() {
            Some(c) => c,
            None => {
                let out = ToolOutcome::err("No current task; create or select one first.");
                return print_outcome(&out, a.out.json);
            }
        },
    };
    let state = match got(&mut cx, &slug)? {
        Ok(v) => v,
        Err(e) => return print_outcome(&e, a.out.json),
    };
    let me = cx.session.agent.clone().unwrap_or_default();
    let out = match state.pointer("/claim/owner").and_then(Value::as_str) {
        None => ToolOutcome::with(
            format!("{slug} is not claimed."),
            &json!({ "released": Value::Null, "task": slug }),
        ),
        Some(owner) if owner != me => ToolOutcome::err(format!(
            "{slug} is claimed by {owner}, not by {me}; nothing changed."
        )),
        Some(_) => {
            let q = super::views::with_step(&exactly(&slug), "(:release!) (:ids)");
            match ids(&mut cx, "task_query_write", &q)? {
                Err(e) => e,
                Ok(_) => ToolOutcome::with(
                    format!("Released {slug}."),
                    &json!({ "released": slug, "task": slug }),
                ),
            }
        }
    };
    print_outcome(&out, a.out.json)
}

/// `cairn mine`: the tasks this agent holds a live claim on, as `cairn ls`
/// prints them.
pub(super) fn mine_cmd(flag: Option<&Path>, a: &JsonFlag) -> anyhow::Result<ExitCode> {
    super::views::tasks_cmd(flag, "(-> (mine) (:sort :updated-ts :desc))", a.json)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("900"), Ok(900));
        assert_eq!(parse_duration("15m"), Ok(900));
        assert_eq!(parse_duration("1h30m"), Ok(5_400));
        assert_eq!(parse_duration("1d"), Ok(86_400));
        assert!(parse_duration("0").is_err());
        assert!(parse_duration("2d").is_err());
        assert!(parse_duration("m").is_err());
        assert!(parse_duration("15 minutes").is_err());
        assert!(parse_duration("").is_err());
        // Hostile pass (issue 27): units largest first and once; digits
        // after a unit are refused, not read as seconds; out of range says
        // so; control characters are shown escaped.
        assert_eq!(parse_duration("1d"), Ok(86_400));
        assert_eq!(parse_duration("1m0s"), Ok(60));
        for t in ["1h1h", "30m1h", "1h30", "1.5h", "1e9", "-1", "15M", "1d 1h"] {
            let e = parse_duration(t).unwrap_err();
            assert!(e.ends_with("is not a duration; use seconds or a number with s, m, h or d (90s, 15m, 1h30m), from 1s to 1d."), "{t}: {e}");
        }
        for t in ["0", "0s", "86401", "99999d", "18446744073709551616", "1d1s"] {
            assert_eq!(
                parse_duration(t).unwrap_err(),
                format!("\"{t}\" is out of range; a claim lasts from 1s to 1d."),
            );
        }
        assert_eq!(
            parse_duration("1\u{1b}[31m").unwrap_err(),
            "\"1\\u{1b}[31m\" is not a duration; use seconds or a number with s, m, h or d (90s, 15m, 1h30m), from 1s to 1d."
        );
        assert_eq!(lease_text(900), "15m");
        assert_eq!(lease_text(5_430), "1h30m30s");
    }
}
