//! The read tools and the two query tools (seed 000): `task_get`,
//! `task_bootstrap`, `task_search`, `task_query`, `task_query_write`.

use super::args::{QueryArgs, SearchArgs, TaskIdArgs, int_arg};
use super::render::{BOOTSTRAP_HANDOFFS, RECENT_OBS, date, one_line, state_block};
use super::structured::{
    Bootstrapped, HandoffRef, QueryResult, SearchHit, SearchResult, TaskGot, Truncated,
};
use super::{Done, ToolCtx, ToolOutcome, bare, check_len, limits, store_err};
use crate::fence::quote;
use crate::store::search;
use crate::tq::Surface;
use crate::tq::json;
use crate::tq::render::{Output, render_counted};

/// `task_search`'s default number of hits (seed 000).
pub const SEARCH_DEFAULT_LIMIT: i64 = 10;
/// `task_search`'s largest number of hits (seed 000).
pub const SEARCH_MAX_LIMIT: i64 = 50;

/// `task_get(task_id?)`: the state block of [`super::render::state_block`].
/// Records no event. Errors: the no-current line, `No task SLUG.`
pub fn task_get(ctx: &mut ToolCtx<'_>, a: TaskIdArgs) -> ToolOutcome {
    task_get_line(ctx, a).into()
}

fn task_get_line(ctx: &mut ToolCtx<'_>, a: TaskIdArgs) -> Done {
    let slug = ctx.target(a.task_id.as_deref())?;
    let state = ctx
        .store
        .task_state(&slug, RECENT_OBS, 0)
        .map_err(store_err)?
        .ok_or_else(|| format!("No task {slug}."))?;
    Ok(ToolOutcome::with(
        state_block(&state, ctx.clock.claims_now()),
        &TaskGot::from_state(&state, ctx.clock.claims_now()),
    ))
}

/// `task_bootstrap(task_id?)`: the state block, then `  handoffs:` and
/// `    - SUMMARY (PATH)` for the latest three handoffs. An explicit
/// `task_id` switches the current pointer (after it is found); without one
/// the current task is used. Records no event.
/// Errors: `No task to bootstrap; pass task_id or select a task first.`,
/// `No task SLUG.` plus ` Recent: a, b, c` (up to five recent slugs).
pub fn task_bootstrap(ctx: &mut ToolCtx<'_>, a: TaskIdArgs) -> ToolOutcome {
    bootstrap_line(ctx, a).into()
}

fn bootstrap_line(ctx: &mut ToolCtx<'_>, a: TaskIdArgs) -> Done {
    let explicit = a.task_id.as_deref().filter(|t| !t.trim().is_empty());
    let slug = match explicit {
        Some(t) => {
            check_len("task_id", t, limits::NAME)?;
            bare(t).to_string()
        }
        None => ctx.session.current.clone().ok_or_else(|| {
            "No task to bootstrap; pass task_id or select a task first.".to_string()
        })?,
    };
    let db = ctx.store;
    let Some(state) = db
        .task_state(&slug, RECENT_OBS, BOOTSTRAP_HANDOFFS)
        .map_err(store_err)?
    else {
        let recent = db.recent_slugs(5).map_err(store_err)?;
        return Err(if recent.is_empty() {
            format!("No task {slug}.")
        } else {
            format!("No task {slug}. Recent: {}", recent.join(", "))
        });
    };
    if explicit.is_some() {
        ctx.session.switch_to(&slug);
    } else {
        ctx.session.adopt_if_none(&slug);
    }
    let mut out = state_block(&state, ctx.clock.claims_now());
    if !state.handoffs.is_empty() {
        out.push_str("\n  handoffs:");
        for h in &state.handoffs {
            let by = crate::fence::byline(&h.session, Some(&super::render::minute(h.ts)));
            out.push_str(&format!("\n    - {} ({}){by}", quote(&h.summary), h.path));
        }
    }
    let structure = Bootstrapped {
        task: TaskGot::from_state(&state, ctx.clock.claims_now()),
        handoffs: state
            .handoffs
            .iter()
            .map(|h| HandoffRef {
                summary: h.summary.clone(),
                path: h.path.clone(),
                ts: h.ts,
            })
            .collect(),
    };
    Ok(ToolOutcome::with(out, &structure))
}

/// `task_search(query, limit?, task_id?)`: BM25-ranked observation search.
/// Rows `N. [SLUG]  (YYYY-MM-DD)` each followed by the snippet on an indented
/// line (matches in `[`brackets`]`); `No matching observations for "Q".` when
/// nothing matches or nothing usable remains after sanitising. `limit`
/// defaults to 10 and is clamped to 1..50. Records no event.
/// Errors: `query is required.`, `limit must be an integer, got V.`,
/// `No task SLUG.`, `Could not parse the search query "Q".` (unreachable by
/// construction of the sanitiser).
pub fn task_search(ctx: &mut ToolCtx<'_>, a: SearchArgs) -> ToolOutcome {
    search_line(ctx, a).into()
}

fn search_line(ctx: &mut ToolCtx<'_>, a: SearchArgs) -> Done {
    let query = super::required("query", Some(&a.query), limits::QUERY)?;
    let limit = int_arg("limit", a.limit.as_ref())?
        .unwrap_or(SEARCH_DEFAULT_LIMIT)
        .clamp(1, SEARCH_MAX_LIMIT);
    let task = match a.task_id.as_deref().filter(|t| !t.trim().is_empty()) {
        Some(t) => Some(ctx.existing("task_id", t)?),
        None => None,
    };
    let none = || {
        let empty = SearchResult {
            query: query.to_string(),
            hits: Vec::new(),
        };
        ToolOutcome::with(format!("No matching observations for \"{query}\"."), &empty)
    };
    let Some(expr) = search::sanitize(query) else {
        return Ok(none());
    };
    let hits = ctx
        .store
        .search(&expr, task.as_deref(), usize::try_from(limit).unwrap_or(10))
        .map_err(|e| {
            tracing::warn!(error = %e, expr = %expr, "search failed");
            format!("Could not parse the search query \"{query}\".")
        })?;
    if hits.is_empty() {
        return Ok(none());
    }
    let hits: Vec<SearchHit> = hits
        .iter()
        .enumerate()
        .map(|(i, h)| SearchHit {
            rank: u32::try_from(i + 1).unwrap_or(u32::MAX),
            task: h.slug.clone(),
            date: date(h.ts),
            snippet: one_line(&h.snippet, usize::MAX),
        })
        .collect();
    let rows: Vec<String> = hits
        .iter()
        .map(|h| {
            format!(
                "{}. [{}]  ({})\n    {}",
                h.rank,
                h.task,
                h.date,
                quote(&h.snippet)
            )
        })
        .collect();
    let structure = SearchResult {
        query: query.to_string(),
        hits,
    };
    Ok(ToolOutcome::with(rows.join("\n"), &structure))
}

/// `task_query(query)`: runs one TQ query on the read surface and returns its
/// text (spec/tq.md §4) and, as structure ([`QueryResult`]), the JSON
/// `cairn query --format json` prints for it (the same code: a task set is
/// read once more, widened to every field). Records no event. Errors: `query is required.`,
/// `query is too long (...)`, `Parse error: ...`, `Query error: ...`,
/// `The query could not be executed.`
pub fn task_query(ctx: &mut ToolCtx<'_>, a: QueryArgs) -> ToolOutcome {
    query_line(ctx, a, Surface::Read).into()
}

/// `task_query_write(query)`: runs one TQ query on the write surface
/// (mutations and `define!`/`undefine!` allowed, all events in one
/// transaction). Its structure is the JSON of the result as run, never a
/// second run: a task set carries what its task lines carry (`slug`,
/// `display-name`, `status`, and when enriched `obs-count`, `edge-count`,
/// `metadata`), as `cairn query --format json` prints an unwidened result.
/// Errors as [`task_query`].
pub fn task_query_write(ctx: &mut ToolCtx<'_>, a: QueryArgs) -> ToolOutcome {
    query_line(ctx, a, Surface::Write).into()
}

fn query_line(ctx: &mut ToolCtx<'_>, a: QueryArgs, surface: Surface) -> Done {
    let query = super::required("query", Some(&a.query), limits::QUERY)?;
    let out = ctx
        .engine
        .run_value_db(ctx.store, ctx.session, query, surface)
        .map_err(|d| d.render_plain())?;
    let (text, cut) = render_counted(&out);
    // A text cut to its budget cuts the structure to the same tasks, so a
    // response is bounded (issue 23: a whole 94k-task `knowledge` as JSON
    // took 1.6 GiB).
    let first = cut.map(|c| c.shown);
    let shown = match first {
        Some(n) => out.first(n),
        None => out.clone(),
    };
    let result = match (&out, surface) {
        // A task set on the read surface: the widened JSON of
        // `cairn query --format json`, read with the same code.
        (Output::Tasks { .. }, Surface::Read) => {
            json::run_json_first(ctx.engine, ctx.store, ctx.session, query, surface, first)
                .unwrap_or_else(|_| json::output_json(&shown))
        }
        _ => json::output_json(&shown),
    };
    let structure = QueryResult {
        shape: shape(&out).to_string(),
        result,
        truncated: cut.map(|c| Truncated {
            shown: c.shown,
            total: c.total,
        }),
    };
    Ok(ToolOutcome::with(text, &structure))
}

/// The name of a result's shape: `tasks`, `ids`, `count`, `projection`,
/// `groups`, or `recorded` (a write whose result was too slow to shape).
fn shape(o: &Output) -> &'static str {
    match o {
        Output::Tasks { .. } => "tasks",
        Output::Ids { .. } => "ids",
        Output::Count { .. } => "count",
        Output::Projection { .. } => "projection",
        Output::Groups { .. } => "groups",
        Output::Recorded { .. } => "recorded",
    }
}
