//! `handoff` (seed 000, spec/mcp.md): scaffold a resumable handoff note
//! inside the project and record one `handoff.create` event (which the store
//! folds into a handoffs row and a searchable observation).

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Component, Path, PathBuf};

use time::macros::format_description;

use super::args::HandoffArgs;
use super::render::{RECENT_OBS, datetime, state_block};
use super::structured::HandoffDone;
use super::{Done, ToolCtx, ToolOutcome, check_len, limits, required, store_err};
use crate::store::NewEvent;

/// `handoff(summary, path?, task_id?)`.
///
/// Writes the skeleton (YAML frontmatter `task`, `created`, `summary`;
/// `# Handoff — SLUG`; `## State` with the `task_get` block; empty
/// `## Recent work` and `## Next steps`) at `path` (relative to the project
/// root) or at `.cairn/tasks/<slug>/<YYYY-MM-DD_HH-MM-SS>_<summary-slug>.md`
/// (`-2`, `-3`, ... before `.md` when that default already exists),
/// creating parent directories and leaving an existing regular file at an
/// explicit path in place (a new note is created with `create_new`, never
/// following or overwriting anything), then
/// records one `handoff.create` with the root-relative path. Returns
/// `Handoff scaffolded for SLUG at ABSOLUTE-PATH` (no trailing period).
/// Errors: `summary is required.`, `summary is too long (...)`, the
/// no-current line, `No task SLUG.`,
/// `SLUG is reserved; it is not a task.`,
/// `path must not contain control characters: PATH` (escaped, see
/// [`escape_controls`]),
/// `path must stay inside the project: PATH` (absolute, escaping the root
/// lexically, through a symlink that resolves outside the root or dangles,
/// naming a symlink at all, or — issue 14 — inside `.git/` or onto cairn's
/// own files, see [`reserved`]), `path is a directory: PATH`,
/// `path goes through a file: PATH`,
/// `could not write the handoff note PATH: ERR`. Refusals record no event.
pub fn handoff(ctx: &mut ToolCtx<'_>, a: HandoffArgs) -> ToolOutcome {
    handoff_line(ctx, a).into()
}

fn handoff_line(ctx: &mut ToolCtx<'_>, a: HandoffArgs) -> Done {
    let summary = required("summary", Some(&a.summary), limits::SUMMARY)?;
    let slug = ctx.write_target(a.task_id.as_deref())?;
    let now = ctx.clock.now();
    let root = ctx.root.canonicalize().unwrap_or_else(|_| ctx.root.clone());
    let given = a.path.as_deref().filter(|p| !p.trim().is_empty());
    let rel = match given {
        Some(p) => {
            check_len("path", p, limits::PATH)?;
            if p.chars().any(char::is_control) {
                return Err(format!(
                    "path must not contain control characters: {}",
                    escape_controls(p)
                ));
            }
            confine(p)?
        }
        None => free_default(&root, &default_path(&slug, summary, now)),
    };
    let full = root.join(&rel);
    let shown = rel_text(&rel);
    let named = given.map_or_else(|| shown.clone(), str::to_string);
    let target = match resolve(&root, &rel, &named, ctx.store.path())? {
        Target::Existing => None,
        Target::New(path) => Some(path),
    };
    if let Some(path) = target {
        let state = ctx
            .store
            .task_state(&slug, RECENT_OBS, 0)
            .map_err(store_err)?
            .ok_or_else(|| format!("No task {slug}."))?;
        let body = skeleton(&slug, summary, now, &state_block(&state, now));
        let io =
            |e: std::io::Error| format!("could not write the handoff note {}: {e}", full.display());
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        // Re-check after creating directories (a link swapped in meanwhile).
        if let Target::New(path) = resolve(&root, &rel, &named, ctx.store.path())? {
            let mut file = OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
                .map_err(io)?;
            file.write_all(body.as_bytes()).map_err(io)?;
        }
    }
    let ev = NewEvent::handoff_create(&ctx.session.id, now, &slug, summary, &shown);
    ctx.store.write(&[ev]).map_err(store_err)?;
    let path = full.display().to_string();
    let text = format!("Handoff scaffolded for {slug} at {path}");
    let out = HandoffDone {
        task: slug,
        path,
        relative_path: shown,
    };
    Ok(ToolOutcome::with(text, &out))
}

/// Where a checked note path leads.
enum Target {
    /// An existing regular file (left in place).
    Existing,
    /// A file to create with `create_new` at this path (intermediate links
    /// resolved, all inside the root).
    New(PathBuf),
}

/// Walks `rel` component by component from `root` without following the
/// final component. Refuses (`path must stay inside the project: NAMED`) a
/// symlink component resolving outside `root` (or dangling) and a final
/// component that is a symlink at all; `path is a directory: NAMED` for an
/// existing directory at the path; `path goes through a file: NAMED` when an
/// intermediate component is a file.
fn resolve(root: &Path, rel: &Path, named: &str, store: Option<&Path>) -> Result<Target, String> {
    let outside = || format!("path must stay inside the project: {named}");
    // The final path, once intermediate links are resolved, must not be
    // git's or cairn's own either (a link to `.git/` or `.cairn/`).
    let own = |p: &Path| {
        store.is_some_and(|s| store_file(p, s)) || p.strip_prefix(root).map_or(true, reserved)
    };
    let parts: Vec<_> = rel.components().collect();
    let mut cur = root.to_path_buf();
    for (i, c) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        let probe = cur.join(c);
        let meta = match std::fs::symlink_metadata(&probe) {
            Ok(m) => m,
            Err(_) => {
                // Missing from here on: the rest is created under `cur`.
                let rest: PathBuf = parts[i..].iter().collect();
                let path = cur.join(rest);
                if own(&path) {
                    return Err(outside());
                }
                return Ok(Target::New(path));
            }
        };
        if meta.file_type().is_symlink() {
            if last {
                return Err(outside());
            }
            let real = probe.canonicalize().map_err(|_| outside())?;
            if !real.starts_with(root) {
                return Err(outside());
            }
            if !real.is_dir() {
                return Err(format!("path goes through a file: {named}"));
            }
            cur = real;
        } else if meta.is_dir() {
            if last {
                return Err(format!("path is a directory: {named}"));
            }
            cur = probe;
        } else if last {
            if own(&probe) {
                return Err(outside());
            }
            return Ok(Target::Existing);
        } else {
            return Err(format!("path goes through a file: {named}"));
        }
    }
    Err(outside())
}

/// The default path, or the first of `STEM-2.md`, `STEM-3.md`, ... that does
/// not exist yet (two handoffs in the same second with the same summary slug
/// never share a note).
fn free_default(root: &Path, rel: &Path) -> PathBuf {
    let taken = |p: &Path| std::fs::symlink_metadata(root.join(p)).is_ok();
    if !taken(rel) {
        return rel.to_path_buf();
    }
    let stem = rel
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut n = 2u32;
    loop {
        let candidate = rel.with_file_name(format!("{stem}-{n}.md"));
        if !taken(&candidate) || n == u32::MAX {
            return candidate;
        }
        n += 1;
    }
}

/// The default note path, relative to the project root: in the task's log
/// folder (`crate::store::log::dir_name`: the slug itself for an ASCII
/// slug, bounded to 255 bytes for any other, so a long non-ASCII name never
/// gives `File name too long`).
pub fn default_path(slug: &str, summary: &str, ts: i64) -> PathBuf {
    let stamp = datetime(ts)
        .format(format_description!(
            "[year]-[month]-[day]_[hour]-[minute]-[second]"
        ))
        .unwrap_or_default();
    PathBuf::from(".cairn")
        .join("tasks")
        .join(crate::store::log::dir_name(slug))
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

/// `p` with each control character written as its Rust escape (`\n`,
/// `\t`, `\u{1b}`), so an error quoting it stays on one line.
fn escape_controls(p: &str) -> String {
    p.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Git reads these files wherever they are in the work tree; a handoff note
/// never replaces one (ASCII case-insensitive, any level).
const GIT_READS: [&str; 4] = [".git", ".gitattributes", ".gitmodules", ".gitignore"];

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
    if out.as_os_str().is_empty() || reserved(&out) {
        return Err(refuse());
    }
    Ok(out)
}

/// True when `rel` (relative to the project root, normalised) is git's or
/// cairn's own (docs/tools.md "handoff"): any path through a `.git`
/// component (ASCII case-insensitive: the repository, a nested repository,
/// a worktree's `.git` file), any `.gitattributes`, `.gitmodules` or
/// `.gitignore` at any level (git reads them), any file directly in `.cairn/` (the database
/// and its `-wal`/`-shm`/`-journal` files, lock and epoch files,
/// `.gitignore`, `.gitattributes`) and any per-task log
/// `.cairn/tasks/**/events.ndjson`. Notes elsewhere under `.cairn/tasks/`
/// stay allowed (the default note lives there).
fn reserved(rel: &Path) -> bool {
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts
        .iter()
        .any(|p| GIT_READS.iter().any(|g| p.eq_ignore_ascii_case(g)))
    {
        return true;
    }
    match parts.first() {
        Some(first) if first == ".cairn" => {
            parts.len() <= 2 || parts.last().is_some_and(|l| l == "events.ndjson")
        }
        _ => false,
    }
}

/// True when `path` (a resolved, absolute path) is `store`'s database file
/// or one of its companions (`cairn.db-wal`, a lock file beside it, ...):
/// its directory is the store's and its name starts with the store's file
/// name. Catches a store named by `--db`/`CAIRN_DB` inside the project.
fn store_file(path: &Path, store: &Path) -> bool {
    let (Some(dir), Some(name)) = (store.parent(), store.file_name()) else {
        return false;
    };
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    path.parent() == Some(dir.as_path())
        && path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with(&*name.to_string_lossy()))
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
