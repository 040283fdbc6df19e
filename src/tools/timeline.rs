//! `timeline` (seed 000, spec/mcp.md): a task's raw event stream, newest
//! first, as one-line digests or verbatim bodies, filtered by type, paged by
//! seq, capped at a soft character ceiling with a continuation cursor.

use serde_json::Value;

use super::args::{TimelineArgs, int_arg};
use super::render::{DIGEST_CHARS, minute, one_line};
use super::structured::{Timeline, TimelineEvent};
use super::{Done, ToolCtx, ToolOutcome, store_err};
use crate::fence::quote;
use crate::store::event::types;
use crate::store::read::EventRow;

/// The soft ceiling on `timeline` output, in characters (seed 000).
pub const SOFT_CEILING: usize = 16_000;

/// Events shown when `limit` is not given (seed 000).
pub const DEFAULT_LIMIT: i64 = 20;

/// The most events one call returns.
pub const MAX_LIMIT: i64 = 1_000;

/// `timeline(task_id?, types?, full?, before_seq?, after_seq?, limit?)`.
///
/// Header `SLUG — last N events` (`1 event`), then per event either the
/// digest line `  SEQ  TYPE  DIGEST` (one line, at most 140 chars then `…`) or,
/// with `full=true`, `  SEQ  TYPE  (YYYY-MM-DD HH:MM UTC)` and the verbatim
/// body indented four spaces. When the next event would push the text past
/// 16,000 characters, emission stops with
/// `… truncated at N chars; M events remaining; pass before_seq=SEQ to continue`
/// (at least one event is always shown); `M` counts every older event that
/// matches the filter (and `after_seq`), not only those left in this page.
/// A `task.create` digests to its description (nothing when it has none).
/// `limit` defaults to 20 (1..1000). Records no event.
/// Errors: the no-current line, `No task SLUG.`,
/// `unknown event type "T"; did you mean U?` (or `; expected one of ...`),
/// `types is too long (N characters; at most 200).`,
/// `before_seq must be an integer, got "x".` (likewise `after_seq`, `limit`).
pub fn timeline(ctx: &mut ToolCtx<'_>, a: TimelineArgs) -> ToolOutcome {
    timeline_line(ctx, a).into()
}

fn timeline_line(ctx: &mut ToolCtx<'_>, a: TimelineArgs) -> Done {
    let before = int_arg("before_seq", a.before_seq.as_ref())?;
    let after = int_arg("after_seq", a.after_seq.as_ref())?;
    let limit = int_arg("limit", a.limit.as_ref())?
        .unwrap_or(DEFAULT_LIMIT)
        .clamp(1, MAX_LIMIT);
    let slug = ctx.target(a.task_id.as_deref())?;
    let db = ctx.store;
    let mut wanted = Vec::new();
    if let Some(list) = a.types.as_deref() {
        super::check_len("types", list, super::limits::NAME)?;
        let mut known: Vec<String> = types::ALL.iter().map(|t| t.to_string()).collect();
        for t in db.event_types().map_err(store_err)? {
            if !known.contains(&t) {
                known.push(t);
            }
        }
        for t in list.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            let t = t.to_ascii_lowercase();
            if !known.contains(&t) {
                return Err(unknown_type(&t, &known));
            }
            if !wanted.contains(&t) {
                wanted.push(t);
            }
        }
    }
    let page = db
        .timeline_page(
            &slug,
            &wanted,
            before,
            after,
            usize::try_from(limit).unwrap_or(20),
        )
        .map_err(store_err)?;
    let full = a.full.unwrap_or(false);
    let blocks: Vec<String> = page.iter().map(|e| render_event(e, full)).collect();
    let (mut out, shown) = assemble(&slug, &blocks);
    let mut remaining = 0;
    let mut cursor = None;
    if shown < blocks.len() {
        let seq = page[shown - 1].seq;
        remaining = db
            .timeline_count(&slug, &wanted, Some(seq), after)
            .map_err(store_err)?;
        let chars = out.chars().count();
        out.push_str(&format!(
            "\n… truncated at {chars} chars; {remaining} events remaining; pass before_seq={seq} to continue"
        ));
        cursor = Some(seq);
    }
    let structure = Timeline {
        task: slug.clone(),
        events: page[..shown]
            .iter()
            .map(|e| TimelineEvent {
                seq: e.seq,
                event_type: e.event_type.clone(),
                ts: e.ts,
                text: if full {
                    body(e)
                } else {
                    one_line(&body(e), DIGEST_CHARS)
                },
            })
            .collect(),
        remaining,
        before_seq: cursor,
    };
    Ok(ToolOutcome::with(out, &structure))
}

/// Puts the header and as many event blocks as fit under the ceiling;
/// returns the text and how many blocks it shows (at least one when there
/// are any).
fn assemble(slug: &str, blocks: &[String]) -> (String, usize) {
    let header = |n: usize| {
        let noun = if n == 1 { "event" } else { "events" };
        format!("{slug} — last {n} {noun}")
    };
    let mut shown = 0;
    let mut size = header(blocks.len()).chars().count();
    for b in blocks {
        let add = 1 + b.chars().count();
        if shown > 0 && size + add > SOFT_CEILING {
            break;
        }
        size += add;
        shown += 1;
    }
    let mut out = header(shown);
    for b in &blocks[..shown] {
        out.push('\n');
        out.push_str(b);
    }
    (out, shown)
}

/// True for an event whose body is text someone wrote (quoted when the
/// server fences, docs/mcp.md "Fenced text"); the bodies cairn words itself
/// (`→ completed`, `forked SLUG (phase-of)`) are not.
fn written(event_type: &str) -> bool {
    !matches!(
        event_type,
        types::UPDATE_STATUS | types::FORK | types::LINK | types::SEVER
    )
}

fn render_event(e: &EventRow, full: bool) -> String {
    let shown = |t: &str| {
        if written(&e.event_type) {
            quote(t)
        } else {
            t.to_string()
        }
    };
    // Who wrote it (and when, where the line does not show it already),
    // in fenced responses only (spec/tq.md §10).
    let by = |when: Option<&str>| {
        if written(&e.event_type) {
            crate::fence::byline(&e.session, when)
        } else {
            String::new()
        }
    };
    if full {
        let body = body(e);
        let mut out = format!(
            "  {}  {}  ({} UTC){}",
            e.seq,
            e.event_type,
            minute(e.ts),
            by(None)
        );
        for line in body.lines() {
            out.push_str("\n    ");
            out.push_str(&shown(line));
        }
        out
    } else {
        let digest = one_line(&body(e), DIGEST_CHARS);
        if digest.is_empty() {
            // Nothing to digest (a task.create without a description).
            format!("  {}  {}", e.seq, e.event_type)
        } else {
            format!(
                "  {}  {}  {}{}",
                e.seq,
                e.event_type,
                shown(&digest),
                by(Some(&minute(e.ts)))
            )
        }
    }
}

fn s<'a>(d: &'a Value, k: &str) -> &'a str {
    d.get(k).and_then(Value::as_str).unwrap_or("")
}

/// The event's body: what it says, in words, untruncated.
fn body(e: &EventRow) -> String {
    let d = &e.data;
    match e.event_type.as_str() {
        "observation" => s(d, "text").to_string(),
        // The description, nothing without one (never the typed name).
        "task.create" => s(d, "description").to_string(),
        "task.update-status" => format!("→ {}", s(d, "status")),
        "task.update-description" => s(d, "description").to_string(),
        "task.fork" => format!("forked {} ({})", s(d, "child_id"), s(d, "edge_type")),
        "task.link" => format!("→ {} ({})", s(d, "target_id"), s(d, "edge_type")),
        "task.sever" => format!("severed → {} ({})", s(d, "target_id"), s(d, "edge_type")),
        "task.set-metadata" => format!("{} = {}", s(d, "key"), s(d, "value")),
        "handoff.create" => format!("{} → {}", s(d, "summary"), s(d, "path")),
        "view.define" => format!("{} = {}", s(d, "name"), s(d, "query")),
        "view.undefine" => s(d, "name").to_string(),
        _ => d.to_string(),
    }
}

fn unknown_type(t: &str, known: &[String]) -> String {
    let best = known
        .iter()
        .map(|k| (strsim::levenshtein(t, k), k))
        .min_by_key(|(d, _)| *d);
    match best {
        Some((d, k)) if d <= 3 => format!("unknown event type \"{t}\"; did you mean {k}?"),
        _ => format!(
            "unknown event type \"{t}\"; expected one of {}.",
            known.join(", ")
        ),
    }
}
