//! `handoff` (seed 000, spec/mcp.md): scaffold a resumable handoff note
//! inside the project and record one `handoff.create` event (which the store
//! folds into a handoffs row and a searchable observation).

use std::path::{Component, Path, PathBuf};

use time::macros::format_description;

use super::args::HandoffArgs;
use super::render::{RECENT_OBS, datetime, state_block};
use super::{Line, ToolCtx, ToolOutcome, check_len, limits, required, store_err};
use crate::store::{NewEvent, read};

/// `handoff(summary, path?, task_id?)`.
///
/// Writes the skeleton (YAML frontmatter `task`, `created`, `summary`;
/// `# Handoff — SLUG`; `## State` with the `task_get` block; empty
/// `## Recent work` and `## Next steps`) at `path` (relative to the project
/// root) or at `.cairn/tasks/<slug>/<YYYY-MM-DD_HH-MM-SS>_<summary-slug>.md`,
/// creating parent directories and leaving an existing file in place, then
/// records one `handoff.create` with the root-relative path. Returns
/// `Handoff scaffolded for SLUG at ABSOLUTE-PATH` (no trailing period).
/// Errors: `summary is required.`, `summary is too long (...)`, the
/// no-current line, `No task SLUG.`,
/// `path must stay inside the project: PATH` (absolute, or escaping the root
/// lexically or through a symlink), `could not write the handoff note PATH: ERR`.
pub fn handoff(ctx: &mut ToolCtx<'_>, a: HandoffArgs) -> ToolOutcome {
    handoff_line(ctx, a).into()
}

fn handoff_line(ctx: &mut ToolCtx<'_>, a: HandoffArgs) -> Line {
    let summary = required("summary", Some(&a.summary), limits::SUMMARY)?;
    let slug = ctx.target(a.task_id.as_deref())?;
    let now = ctx.clock.now();
    let rel = match a.path.as_deref().filter(|p| !p.trim().is_empty()) {
        Some(p) => {
            check_len("path", p, limits::PATH)?;
            confine(p)?
        }
        None => default_path(&slug, summary, now),
    };
    let root = ctx.root.canonicalize().unwrap_or_else(|_| ctx.root.clone());
    let full = root.join(&rel);
    let shown = rel_text(&rel);
    let refuse = || {
        format!(
            "path must stay inside the project: {}",
            a.path.as_deref().unwrap_or(&shown)
        )
    };
    if !inside(&root, &full) {
        return Err(refuse());
    }
    if !full.exists() {
        let state = read::task_state(ctx.store.conn(), &slug, RECENT_OBS, 0)
            .map_err(store_err)?
            .ok_or_else(|| format!("No task {slug}."))?;
        let body = skeleton(&slug, summary, now, &state_block(&state));
        let io =
            |e: std::io::Error| format!("could not write the handoff note {}: {e}", full.display());
        if let Some(dir) = full.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
            if !inside(&root, &full) {
                return Err(refuse());
            }
        }
        std::fs::write(&full, body).map_err(io)?;
    }
    let ev = NewEvent::handoff_create(&ctx.session.id, now, &slug, summary, &shown);
    ctx.store.write(&[ev]).map_err(store_err)?;
    Ok(format!(
        "Handoff scaffolded for {slug} at {}",
        full.display()
    ))
}

/// The default note path, relative to the project root.
pub fn default_path(slug: &str, summary: &str, ts: i64) -> PathBuf {
    let stamp = datetime(ts)
        .format(format_description!(
            "[year]-[month]-[day]_[hour]-[minute]-[second]"
        ))
        .unwrap_or_default();
    PathBuf::from(".cairn")
        .join("tasks")
        .join(slug)
        .join(format!("{stamp}_{}.md", summary_slug(summary)))
}

/// `prefix queries land; tokenizer fix is next` →
/// `prefix-queries-land-tokenizer-fix-is-next`: lower-case letter/digit runs
/// joined by `-`, at most 60 characters (cut at a word), `handoff` when empty.
pub fn summary_slug(summary: &str) -> String {
    let mut out = String::new();
    for word in summary
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let w = word.to_lowercase();
        let extra = if out.is_empty() { 0 } else { 1 };
        if out.chars().count() + extra + w.chars().count() > 60 {
            break;
        }
        if !out.is_empty() {
            out.push('-');
        }
        out.push_str(&w);
    }
    if out.is_empty() {
        "handoff".to_string()
    } else {
        out
    }
}

/// A caller's relative path, normalised lexically (`.` dropped, `..` popped).
/// Absolute paths and paths that climb above the root are refused.
fn confine(p: &str) -> Result<PathBuf, String> {
    let refuse = || format!("path must stay inside the project: {p}");
    let mut out = PathBuf::new();
    for c in Path::new(p).components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return Err(refuse());
                }
            }
            Component::RootDir | Component::Prefix(_) => return Err(refuse()),
        }
    }
    if out.as_os_str().is_empty() {
        return Err(refuse());
    }
    Ok(out)
}

/// True when `full` (or its deepest existing ancestor, symlinks resolved)
/// lies inside `root` (canonical).
fn inside(root: &Path, full: &Path) -> bool {
    let mut probe = full.to_path_buf();
    loop {
        if let Ok(c) = probe.canonicalize() {
            return c.starts_with(root);
        }
        if !probe.pop() {
            return false;
        }
    }
}

fn rel_text(rel: &Path) -> String {
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

/// The note's skeleton: frontmatter, title, state, empty sections.
pub fn skeleton(slug: &str, summary: &str, ts: i64, state: &str) -> String {
    let created = datetime(ts)
        .format(format_description!(
            "[year]-[month]-[day]T[hour]:[minute]:[second]Z"
        ))
        .unwrap_or_default();
    let summary_yaml = serde_json::Value::from(summary).to_string();
    format!(
        "---\ntask: {slug}\ncreated: {created}\nsummary: {summary_yaml}\n---\n\n# Handoff — {slug}\n\n## State\n\n```text\n{state}\n```\n\n## Recent work\n\n## Next steps\n"
    )
}
