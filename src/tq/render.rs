//! Query results and their text (spec/tq.md §4): task lines, ids, counts,
//! projections and groups, pluralisation, `∅`, timestamps as
//! `SECONDS (YYYY-MM-DD)`, and the 16,000-character ceiling.

use serde::Serialize;

use crate::fence::quote;

/// The ceiling, in characters, of a node-set or projection text (§4).
pub const TEXT_BUDGET: usize = 16_000;

/// What a query yields, before rendering (JSON-friendly).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Output {
    /// A task set, in pipeline order.
    Tasks {
        /// The tasks.
        tasks: Vec<TaskRow>,
        /// Lines carry `obs=`/`edges=` and metadata lines.
        enriched: bool,
    },
    /// `(:ids)`: slugs in pipeline order.
    Ids {
        /// The slugs.
        ids: Vec<String>,
    },
    /// `(:count)`.
    Count {
        /// The cardinality.
        count: i64,
    },
    /// `(:select FIELD...)`.
    Projection {
        /// Field names (no colon), in the order selected.
        fields: Vec<String>,
        /// One row per task, each with one cell per field.
        rows: Vec<ProjRow>,
    },
    /// `(:group-by FIELD)`: groups largest first, ties by key.
    Groups {
        /// The grouping field's name.
        field: String,
        /// The groups.
        groups: Vec<Group>,
    },
    /// A write query whose events were recorded but whose result shaping
    /// passed the time limit after the commit (issue 19): what it wrote, and
    /// the sentence saying the result was too slow to shape. A success: the
    /// writes stand, so a retry would repeat them.
    Recorded {
        /// Events the query appended.
        events: usize,
        /// Distinct tasks those events are about (`@cairn` not counted).
        tasks: usize,
        /// `The result was too slow to shape within the N s limit; run a
        /// read query to see it.`
        note: String,
    },
}

impl Output {
    /// The tasks (rows) the result holds: task lines, ids, projected rows,
    /// every group's tasks; 0 for a count or a recorded write.
    pub fn task_count(&self) -> usize {
        match self {
            Output::Tasks { tasks, .. } => tasks.len(),
            Output::Ids { ids } => ids.len(),
            Output::Projection { rows, .. } => rows.len(),
            Output::Groups { groups, .. } => groups.iter().map(|g| g.tasks.len()).sum(),
            Output::Count { .. } | Output::Recorded { .. } => 0,
        }
    }

    /// The result cut to its first `n` tasks, in its order (groups in group
    /// order, a group left without tasks dropped); a count or a recorded
    /// write unchanged. What a structured result carries when its text was
    /// truncated ([`render_counted`]).
    pub fn first(&self, n: usize) -> Output {
        match self {
            Output::Tasks { tasks, enriched } => Output::Tasks {
                tasks: tasks.iter().take(n).cloned().collect(),
                enriched: *enriched,
            },
            Output::Ids { ids } => Output::Ids {
                ids: ids.iter().take(n).cloned().collect(),
            },
            Output::Projection { fields, rows } => Output::Projection {
                fields: fields.clone(),
                rows: rows.iter().take(n).cloned().collect(),
            },
            Output::Groups { field, groups } => {
                let mut left = n;
                let mut kept = Vec::new();
                for g in groups {
                    if left == 0 {
                        break;
                    }
                    let tasks: Vec<TaskRow> = g.tasks.iter().take(left).cloned().collect();
                    left -= tasks.len();
                    kept.push(Group {
                        key: g.key.clone(),
                        tasks,
                    });
                }
                Output::Groups {
                    field: field.clone(),
                    groups: kept,
                }
            }
            other => other.clone(),
        }
    }

    /// The summary line of [`Output::Recorded`]: `Recorded N events on M
    /// tasks.` (`Recorded N events.` when no task is named). `None` for
    /// every other shape.
    pub fn recorded_summary(&self) -> Option<String> {
        match self {
            Output::Recorded { events, tasks, .. } => Some(if *tasks == 0 {
                format!("Recorded {}.", plural(*events, "event"))
            } else {
                format!(
                    "Recorded {} on {}.",
                    plural(*events, "event"),
                    plural(*tasks, "task")
                )
            }),
            _ => None,
        }
    }
}

/// One task line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskRow {
    /// The slug (a reflection row's name).
    pub slug: String,
    /// `:display-name` (metadata `display-name`, else the slug).
    pub display: String,
    /// The status; `None` for reflection rows.
    pub status: Option<String>,
    /// Observation count, when enriched.
    pub obs: Option<i64>,
    /// Edge count, when enriched.
    pub edges: Option<i64>,
    /// Metadata `(key, value)` sorted by key, when enriched.
    pub meta: Vec<(String, String)>,
}

/// One projection row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProjRow {
    /// The slug.
    pub slug: String,
    /// One cell per selected field.
    pub cells: Vec<Cell>,
}

/// A projected value.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", content = "value", rename_all = "snake_case")]
pub enum Cell {
    /// Absent (`∅`).
    Null,
    /// Text.
    Text(String),
    /// A number.
    Int(i64),
    /// A timestamp, Unix seconds (rendered `SECONDS (YYYY-MM-DD)`).
    Ts(i64),
    /// A real number.
    Real(f64),
}

/// One group of `(:group-by FIELD)`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Group {
    /// The key text (`none` for tasks with no value).
    pub key: String,
    /// Its tasks, in pipeline order.
    pub tasks: Vec<TaskRow>,
}

/// `1 task` / `N tasks` (also `group`).
pub fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// `SECONDS (YYYY-MM-DD)`, the UTC day of Unix seconds `ts`.
pub fn ts_text(ts: i64) -> String {
    let day = time::OffsetDateTime::from_unix_timestamp(ts)
        .ok()
        .and_then(|t| {
            t.format(time::macros::format_description!("[year]-[month]-[day]"))
                .ok()
        });
    match day {
        Some(d) => format!("{ts} ({d})"),
        None => ts.to_string(),
    }
}

impl Cell {
    /// The cell as projection text (`∅` when absent).
    pub fn text(&self) -> String {
        match self {
            Cell::Null => "∅".to_string(),
            Cell::Text(s) => s.clone(),
            Cell::Int(i) => i.to_string(),
            Cell::Ts(t) => ts_text(*t),
            Cell::Real(r) => r.to_string(),
        }
    }
}

/// `s` made safe for a one-line position (docs/tq.md "Output"): `\n` →
/// `\\n`, `\r` → `\\r`, `\t` → `\\t`, every other C0/C1 control
/// character (and DEL) → `\\u{XX}`, so a user value can never start a line
/// of its own. Other characters are kept.
pub fn one_line(s: &str) -> String {
    if !s.chars().any(char::is_control) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
            c => out.push(c),
        }
    }
    out
}

/// A task line `- SLUG [DISPLAY] (STATUS) obs=N edges=N`, then (enriched)
/// `    key: value` lines. Every value is passed through [`one_line`].
pub fn task_lines(t: &TaskRow, enriched: bool) -> String {
    let mut s = format!("- {}", one_line(&t.slug));
    if t.display != t.slug {
        s.push_str(&format!(" [{}]", quote(&one_line(&t.display))));
    }
    if let Some(st) = &t.status {
        s.push_str(&format!(" ({})", one_line(st)));
    }
    if enriched {
        s.push_str(&format!(
            " obs={} edges={}",
            t.obs.unwrap_or(0),
            t.edges.unwrap_or(0)
        ));
        for (k, v) in &t.meta {
            s.push_str(&format!("\n    {}: {}", one_line(k), quote(&one_line(v))));
        }
    }
    s
}

/// How the continuation line of a text cut at [`TEXT_BUDGET`] begins
/// (after its newline): `… truncated: showing K of N tasks; …`.
pub const CUT: &str = "\n… truncated: showing ";

/// The continuation line after `shown` (≥ 1) of `total` tasks.
fn continuation(shown: usize, total: usize) -> String {
    format!(
        "{CUT}{shown} of {}; narrow the query or add (:take {shown}).",
        plural(total, "task")
    )
}

/// `s` cut to `max` characters, the last one `…` (`max` ≥ 1).
fn cut_to(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// `header` + `entries` (each `(text, tasks it holds)`), whole entries
/// while the text, continuation line included, stays within
/// [`TEXT_BUDGET`] characters; then `… truncated: showing K of N tasks;
/// narrow the query or add (:take K).` with K the tasks shown (never 0: a
/// first task entry alone over budget is shown cut with `…`). `total` is N.
fn budgeted_entries(
    header: String,
    entries: &[(String, usize)],
    total: usize,
) -> (String, Option<usize>) {
    let lens: Vec<usize> = entries.iter().map(|(e, _)| 1 + e.chars().count()).collect();
    let head = header.chars().count();
    if head + lens.iter().sum::<usize>() <= TEXT_BUDGET {
        let mut out = header;
        for (e, _) in entries {
            out.push('\n');
            out.push_str(e);
        }
        return (out, None);
    }
    let mut out = header;
    let mut used = head;
    let mut shown = 0;
    let mut next = 0;
    for ((e, tasks), len) in entries.iter().zip(&lens) {
        let after = shown + tasks;
        let tail = continuation(after.max(1), total).chars().count();
        if used + len + tail > TEXT_BUDGET {
            break;
        }
        out.push('\n');
        out.push_str(e);
        used += len;
        shown = after;
        next += 1;
    }
    if shown == 0 {
        // Nothing whole fits: the next entries up to the first one holding
        // a task, cut to fit.
        let tail = continuation(1, total).chars().count();
        let mut room = TEXT_BUDGET.saturating_sub(used + tail);
        for (e, tasks) in entries.iter().skip(next) {
            if room <= 1 {
                break;
            }
            out.push('\n');
            let piece = cut_to(e, room - 1);
            room = room.saturating_sub(1 + piece.chars().count());
            out.push_str(&piece);
            if *tasks > 0 {
                break;
            }
        }
        shown = 1;
    }
    out.push_str(&continuation(shown, total));
    (out, Some(shown))
}

/// Header + one task per entry within the budget (see [`budgeted_entries`]).
fn budgeted(entries: &[String]) -> (String, Option<usize>) {
    let n = entries.len();
    let entries: Vec<(String, usize)> = entries.iter().map(|e| (e.clone(), 1)).collect();
    budgeted_entries(format!("{}:", plural(n, "task")), &entries, n)
}

/// Renders `o` as the text of §4. User values are [`one_line`]; node sets,
/// projections and groups stay within [`TEXT_BUDGET`] characters.
pub fn render(o: &Output) -> String {
    render_counted(o).0
}

/// How much of a result the text shows when it was cut to the budget: the
/// first `shown` of `total` tasks (in the result's order; for groups, in
/// group order), as the text's `… truncated: showing K of N tasks` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shown {
    /// Tasks the text shows (K ≥ 1).
    pub shown: usize,
    /// Tasks the result holds (N > K).
    pub total: usize,
}

/// [`render`], and the [`Shown`] cut when the text was truncated (`None`:
/// the whole result is in the text). Structured results are cut to the
/// same tasks (issue 23), so no response carries more than its text.
pub fn render_counted(o: &Output) -> (String, Option<Shown>) {
    const EMPTY: &str = "No matching tasks.";
    let total = o.task_count();
    let whole = |text: String| (text, None);
    let cut =
        |(text, shown): (String, Option<usize>)| (text, shown.map(|shown| Shown { shown, total }));
    match o {
        Output::Tasks { tasks, enriched } => {
            if tasks.is_empty() {
                return whole(EMPTY.into());
            }
            let lines: Vec<String> = tasks.iter().map(|t| task_lines(t, *enriched)).collect();
            cut(budgeted(&lines))
        }
        Output::Ids { ids } => {
            if ids.is_empty() {
                return whole(EMPTY.into());
            }
            let lines: Vec<String> = ids.iter().map(|s| format!("- {}", one_line(s))).collect();
            cut(budgeted(&lines))
        }
        Output::Count { count } => whole(count.to_string()),
        Output::Recorded { note, .. } => whole(format!(
            "{} {note}",
            o.recorded_summary().unwrap_or_default()
        )),
        Output::Projection { fields, rows } => {
            if rows.is_empty() {
                return whole(EMPTY.into());
            }
            let lines: Vec<String> = rows
                .iter()
                .map(|r| {
                    let mut s = format!("- {}", one_line(&r.slug));
                    for (f, c) in fields.iter().zip(&r.cells) {
                        let v = one_line(&c.text());
                        let v = match c {
                            Cell::Text(_) => quote(&v),
                            _ => v,
                        };
                        s.push_str(&format!("  {}={v}", one_line(f)));
                    }
                    s
                })
                .collect();
            cut(budgeted(&lines))
        }
        Output::Groups { groups, .. } => {
            if groups.is_empty() {
                return whole(EMPTY.into());
            }
            let total: usize = groups.iter().map(|g| g.tasks.len()).sum();
            let mut entries: Vec<(String, usize)> = Vec::new();
            for g in groups {
                entries.push((format!("\n## {} ({})", one_line(&g.key), g.tasks.len()), 0));
                for t in &g.tasks {
                    entries.push((task_lines(t, false), 1));
                }
            }
            cut(budgeted_entries(
                format!("{}:", plural(groups.len(), "group")),
                &entries,
                total,
            ))
        }
    }
}

/// The key text of the group for a field value: an absent value is
/// [`NO_VALUE`] (`none`); a present value is itself, except that one which
/// would read as `none` or starts with a double quote is shown quoted
/// (JSON string syntax: `"none"`, `"\"x\""`), so a task whose value is
/// the text `none` never lands in the group of tasks with no value
/// (issue 26; docs/tq.md "Output").
pub fn group_key(value: Option<String>) -> String {
    match value {
        None => NO_VALUE.to_string(),
        Some(v) if v == NO_VALUE || v.starts_with('"') => serde_json::Value::String(v).to_string(),
        Some(v) => v,
    }
}

/// The group key of tasks with no value for the grouped field.
pub const NO_VALUE: &str = "none";

/// Buckets `(row, key)` pairs into groups: absent keys under `none`, a
/// present value through [`group_key`] (the text `none` as `"none"`), groups
/// largest first, ties by key; tasks keep their order. Linear in the rows
/// (plus sorting the groups).
pub fn group(rows: Vec<(TaskRow, Option<String>)>) -> Vec<Group> {
    match group_checked(rows, usize::MAX, || Ok::<(), std::convert::Infallible>(())) {
        Ok(groups) => groups,
        Err(never) => match never {},
    }
}

/// [`group`], calling `check` before the first row, every `every` rows and
/// after sorting; the first error of `check` ends the grouping (the time
/// limit, issue 14).
pub fn group_checked<E>(
    rows: Vec<(TaskRow, Option<String>)>,
    every: usize,
    mut check: impl FnMut() -> Result<(), E>,
) -> Result<Vec<Group>, E> {
    let every = every.max(1);
    let mut groups: Vec<Group> = Vec::new();
    let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (i, (row, key)) in rows.into_iter().enumerate() {
        if i % every == 0 {
            check()?;
        }
        let key = group_key(key);
        match index.get(&key) {
            Some(&g) => groups[g].tasks.push(row),
            None => {
                index.insert(key.clone(), groups.len());
                groups.push(Group {
                    key,
                    tasks: vec![row],
                });
            }
        }
    }
    groups.sort_by(|a, b| b.tasks.len().cmp(&a.tasks.len()).then(a.key.cmp(&b.key)));
    check()?;
    Ok(groups)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(slug: &str, status: &str) -> TaskRow {
        TaskRow {
            slug: slug.into(),
            display: slug.into(),
            status: Some(status.into()),
            obs: None,
            edges: None,
            meta: vec![],
        }
    }

    #[test]
    fn task_set_pluralises_and_shows_display() {
        let mut a = row("a", "active");
        a.display = "Alpha".into();
        let o = Output::Tasks {
            tasks: vec![a],
            enriched: false,
        };
        assert_eq!(render(&o), "1 task:\n- a [Alpha] (active)");
        let o = Output::Tasks {
            tasks: vec![row("a", "active"), row("b", "open")],
            enriched: false,
        };
        assert_eq!(render(&o), "2 tasks:\n- a (active)\n- b (open)");
    }

    #[test]
    fn enriched_lines_carry_counts_and_metadata() {
        let mut a = row("a", "active");
        a.obs = Some(2);
        a.edges = Some(1);
        a.meta = vec![("objective".into(), "ship it".into())];
        let o = Output::Tasks {
            tasks: vec![a],
            enriched: true,
        };
        assert_eq!(
            render(&o),
            "1 task:\n- a (active) obs=2 edges=1\n    objective: ship it"
        );
    }

    #[test]
    fn empty_results_and_count() {
        assert_eq!(render(&Output::Ids { ids: vec![] }), "No matching tasks.");
        assert_eq!(render(&Output::Count { count: 2 }), "2");
    }

    #[test]
    fn projection_shows_null_and_dates() {
        let o = Output::Projection {
            fields: vec!["parent".into(), "updated-ts".into()],
            rows: vec![ProjRow {
                slug: "a".into(),
                cells: vec![Cell::Null, Cell::Ts(1_764_460_800)],
            }],
        };
        assert_eq!(
            render(&o),
            "1 task:\n- a  parent=∅  updated-ts=1764460800 (2025-11-30)"
        );
    }

    #[test]
    fn grouping_checks_every_n_rows_and_after_the_sort_and_stops_at_the_first_error() {
        let rows = |n: usize| -> Vec<(TaskRow, Option<String>)> {
            (0..n)
                .map(|i| (row(&format!("t{i}"), "active"), Some(format!("k{}", i % 3))))
                .collect()
        };
        let mut checks = 0;
        let g = group_checked(rows(10), 4, || {
            checks += 1;
            Ok::<(), ()>(())
        })
        .unwrap();
        // Rows 0, 4 and 8, then once after the sort.
        assert_eq!(checks, 4);
        assert_eq!(
            g.iter()
                .map(|g| (g.key.as_str(), g.tasks.len()))
                .collect::<Vec<_>>(),
            [("k0", 4), ("k1", 3), ("k2", 3)]
        );
        let mut checks = 0;
        let stopped = group_checked(rows(10), 4, || {
            checks += 1;
            if checks == 2 { Err("limit") } else { Ok(()) }
        });
        assert_eq!(stopped, Err("limit"));
        assert_eq!(checks, 2);
    }

    #[test]
    fn groups_largest_first_ties_by_key() {
        let g = group(vec![
            (row("a", "open"), Some("open".into())),
            (row("b", "active"), Some("active".into())),
            (row("c", "x"), None),
            (row("d", "active"), Some("active".into())),
        ]);
        let o = Output::Groups {
            field: "status".into(),
            groups: g,
        };
        assert_eq!(
            render(&o),
            "3 groups:\n\n## active (2)\n- b (active)\n- d (active)\n\n## none (1)\n- c (x)\n\n## open (1)\n- a (open)"
        );
    }

    #[test]
    fn a_value_none_is_not_the_missing_group() {
        let g = group(vec![
            (row("a", "open"), Some("none".into())),
            (row("b", "open"), None),
            (row("c", "open"), Some("\"none\"".into())),
            (row("d", "open"), Some("none".into())),
        ]);
        let o = Output::Groups {
            field: "priority".into(),
            groups: g,
        };
        assert_eq!(
            render(&o),
            "3 groups:\n\n## \"none\" (2)\n- a (open)\n- d (open)\n\n## \"\\\"none\\\"\" (1)\n- c (open)\n\n## none (1)\n- b (open)"
        );
    }

    #[test]
    fn truncates_at_budget_with_continuation() {
        let ids: Vec<String> = (0..2000).map(|i| format!("task-{i:05}")).collect();
        let text = render(&Output::Ids { ids });
        // header "2000 tasks:" is 11 chars; each line "\n- task-00000" is 13;
        // the continuation line (79 chars with its newline) fits too.
        let shown = 1223;
        let last = text.lines().last().unwrap_or_default().to_string();
        assert_eq!(
            last,
            format!(
                "… truncated: showing {shown} of 2000 tasks; narrow the query or add (:take {shown})."
            )
        );
        assert_eq!(text.lines().count(), shown + 2);
        assert_eq!(text.chars().count(), 11 + 13 * shown + 79);
        assert!(text.chars().count() <= TEXT_BUDGET);
        assert!(text.chars().count() + 13 > TEXT_BUDGET);
    }

    #[test]
    fn a_first_line_over_budget_is_shown_cut_never_showing_0() {
        let mut a = row("a", "active");
        a.display = "x".repeat(20_000);
        let o = Output::Tasks {
            tasks: vec![a.clone(), row("b", "open")],
            enriched: false,
        };
        let text = render(&o);
        assert_eq!(text.chars().count(), TEXT_BUDGET);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0], "2 tasks:");
        assert!(lines[1].starts_with("- a [xxx"));
        assert!(lines[1].ends_with("x…"));
        assert_eq!(
            lines[2],
            "… truncated: showing 1 of 2 tasks; narrow the query or add (:take 1)."
        );
        let one = render(&Output::Tasks {
            tasks: vec![a],
            enriched: false,
        });
        assert_eq!(
            one.lines().last(),
            Some("… truncated: showing 1 of 1 task; narrow the query or add (:take 1).")
        );
        assert_eq!(one.chars().count(), TEXT_BUDGET);
    }

    #[test]
    fn groups_are_capped_at_the_budget() {
        let rows: Vec<(TaskRow, Option<String>)> = (0..3000)
            .map(|i| {
                (
                    row(&format!("task-{i:05}"), "open"),
                    Some(format!("k{}", i % 2)),
                )
            })
            .collect();
        let o = Output::Groups {
            field: "k".into(),
            groups: group(rows),
        };
        let text = render(&o);
        assert!(text.chars().count() <= TEXT_BUDGET);
        // "2 groups:" 9 + "\n\n## k0 (1500)" 14 + lines of 20
        // ("\n- task-00000 (open)") + the continuation line (77 here).
        let shown = text.lines().filter(|l| l.starts_with("- ")).count();
        assert_eq!(shown, (TEXT_BUDGET - 9 - 14 - 77) / 20);
        assert_eq!(shown, 795);
        assert_eq!(
            text.lines().last(),
            Some(
                format!(
                    "… truncated: showing {shown} of 3000 tasks; narrow the query or add (:take {shown})."
                )
                .as_str()
            )
        );
    }

    #[test]
    fn user_values_never_start_a_line() {
        let mut a = row("a", "active");
        a.display = "B\n- 2026-01-01-evil (active)".into();
        a.obs = Some(0);
        a.edges = Some(0);
        a.meta = vec![(
            "multi".into(),
            "line1\r\n- 2026-01-01-fake (active)\t\u{0}\u{85}".into(),
        )];
        let o = Output::Tasks {
            tasks: vec![a.clone()],
            enriched: true,
        };
        assert_eq!(
            render(&o),
            "1 task:\n- a [B\\n- 2026-01-01-evil (active)] (active) obs=0 edges=0\n    multi: line1\\r\\n- 2026-01-01-fake (active)\\t\\u{0}\\u{85}"
        );
        let g = Output::Groups {
            field: "multi".into(),
            groups: group(vec![(row("a", "active"), Some("x\n- b (open)".into()))]),
        };
        assert_eq!(
            render(&g),
            "1 group:\n\n## x\\n- b (open) (1)\n- a (active)"
        );
        let p = Output::Projection {
            fields: vec!["description".into()],
            rows: vec![ProjRow {
                slug: "a".into(),
                cells: vec![Cell::Text("one\ntwo".into())],
            }],
        };
        assert_eq!(render(&p), "1 task:\n- a  description=one\\ntwo");
    }
}
