//! The observe tool and the typed write tools (seed 000): `observe`,
//! `task_create`, `task_fork`, `task_link`, `task_sever`,
//! `task_set_metadata`, `task_update_status`. Each records its events through
//! the store's single write boundary in one call.

use super::args::{
    EdgeArgs, ObserveArgs, SetMetadataArgs, TaskCreateArgs, TaskForkArgs, UpdateStatusArgs,
};
use super::structured::{Created, EdgeChange, Forked, MetadataSet, Observed, StatusSet};
use super::{Done, ToolCtx, ToolOutcome, bare, check_len, limits, required, store_err};
use crate::store::{EdgeType, NewEvent, Status, StoreError, metadata_key};

/// The edge types a tool accepts (seed 000: `phase-of`, `depends-on`, `related`).
const TOOL_EDGES: [EdgeType; 3] = [EdgeType::PhaseOf, EdgeType::DependsOn, EdgeType::Related];

/// Parses a tool's `edge_type`: one of `phase-of`, `depends-on`, `related`
/// (any case); else `"V" is not a valid edge type; expected one of phase-of, depends-on, related.`
pub(crate) fn parse_edge(value: &str) -> Result<EdgeType, String> {
    EdgeType::parse(value.trim())
        .filter(|e| TOOL_EDGES.contains(e))
        .ok_or_else(|| {
            format!(
                "\"{value}\" is not a valid edge type; expected one of phase-of, depends-on, related."
            )
        })
}

/// `observe(text, task_id?)`: records one `observation` event on the target
/// task; `Observed on SLUG.` Never moves the current pointer.
/// Errors: `text is required.`, `No current task; create or select one first.`,
/// `No task SLUG.`, `SLUG is reserved; it is not a task.` (an `@` slug such
/// as `@cairn`), `text is too long (...)`.
pub fn observe(ctx: &mut ToolCtx<'_>, a: ObserveArgs) -> ToolOutcome {
    observe_line(ctx, a).into()
}

fn observe_line(ctx: &mut ToolCtx<'_>, a: ObserveArgs) -> Done {
    let text = required("text", Some(&a.text), limits::TEXT)?;
    let slug = ctx.write_target(a.task_id.as_deref())?;
    let ev = NewEvent::observation(&ctx.session.id, ctx.clock.now(), &slug, text);
    ctx.store.write(&[ev]).map_err(store_err)?;
    Ok(ToolOutcome::with(
        format!("Observed on {slug}."),
        &Observed { task: slug },
    ))
}

/// `task_create(name, description?)`: mints `YYYY-MM-DD-core[-N]`, records one
/// `task.create` (keeping the typed name in its data), adopts the task as
/// current only when none is set; `Created SLUG.` The structure
/// ([`Created`]) carries `possibleDuplicates`: up to three open tasks whose
/// names overlap strongly with `name` (computed before the write). Errors: `name is required.`, the store's thin-name
/// sentence, `name is too long (...)`.
pub fn task_create(ctx: &mut ToolCtx<'_>, a: TaskCreateArgs) -> ToolOutcome {
    task_create_line(ctx, a).into()
}

fn task_create_line(ctx: &mut ToolCtx<'_>, a: TaskCreateArgs) -> Done {
    let name = required("name", Some(&a.name), limits::NAME)?;
    if name.chars().any(char::is_control) {
        return Err("name must not contain control characters.".to_string());
    }
    let description = optional_text("description", a.description.as_deref())?;
    let (today, now, sid) = (ctx.today(), ctx.clock.now(), ctx.session.id.clone());
    let current = ctx.session.current.is_none();
    let typed = name.trim().to_string();
    // Minted under the write lock, so the answer names the task really
    // created, never one a concurrent create took (issue 14).
    let slug = ctx
        .store
        .write_with(|tx| -> Result<String, StoreError> {
            let slug = tx.mint_slug(name, today)?;
            tx.append(&[
                NewEvent::task_create(&sid, now, &slug, description, None).with_name(&typed)
            ])?;
            Ok(slug)
        })
        .map_err(store_err)?;
    let words = super::duplicates::words(name);
    let open = ctx
        .store
        .open_tasks_like(&words, super::duplicates::MIN_SCORE)
        .map_err(store_err)?;
    let duplicates = super::duplicates::possible_duplicates(name, &slug, &open);
    ctx.session.adopt_if_none(&slug);
    let out = Created {
        slug: slug.clone(),
        created: true,
        current,
        possible_duplicates: duplicates,
    };
    Ok(ToolOutcome::with(format!("Created {slug}."), &out))
}

/// `task_fork(name, from?, edge_type?, description?)`: creates a child of the
/// parent (`from`, else the current task) with `edge_type` (default
/// `phase-of`), records `task.create` for the child and `task.fork` on the
/// parent in one write, switches the current pointer to the child;
/// `Forked CHILD from PARENT (EDGE).`
/// Errors: `name is required.`, the edge-type line,
/// `No parent task; pass from or select a task first.`, `No task SLUG.`,
/// `A task cannot fork from itself.` (the name mints the parent's own slug),
/// `SLUG is reserved; it is not a task.` (an `@` parent),
/// `edge_type is too long (...)`.
pub fn task_fork(ctx: &mut ToolCtx<'_>, a: TaskForkArgs) -> ToolOutcome {
    task_fork_line(ctx, a).into()
}

fn task_fork_line(ctx: &mut ToolCtx<'_>, a: TaskForkArgs) -> Done {
    let name = required("name", Some(&a.name), limits::NAME)?;
    if name.chars().any(char::is_control) {
        return Err("name must not contain control characters.".to_string());
    }
    let edge = match a.edge_type.as_deref().filter(|e| !e.trim().is_empty()) {
        Some(e) => {
            check_len("edge_type", e, limits::NAME)?;
            parse_edge(e)?
        }
        None => EdgeType::PhaseOf,
    };
    let description = optional_text("description", a.description.as_deref())?;
    let parent = match a.from.as_deref().filter(|f| !f.trim().is_empty()) {
        Some(f) => ctx.writable("from", f)?,
        None => match ctx.session.current.clone() {
            Some(cur) => ctx.writable("from", &cur)?,
            None => return Err("No parent task; pass from or select a task first.".to_string()),
        },
    };
    let today = ctx.today();
    let base = crate::store::slug::slug_for(name, today).map_err(store_err)?;
    if base == parent {
        return Err("A task cannot fork from itself.".to_string());
    }
    let now = ctx.clock.now();
    let sid = ctx.session.id.clone();
    // The child's slug is minted under the write lock, in the transaction
    // that creates it and forks it from `parent` (issue 14). The parent
    // exists, so the minted slug (base or a free `-N`) is never the parent.
    let typed = name.trim().to_string();
    let child = ctx
        .store
        .write_with(|tx| -> Result<String, StoreError> {
            let child = tx.mint_slug(name, today)?;
            tx.append(&[
                NewEvent::task_create(&sid, now, &child, description, None).with_name(&typed),
                NewEvent::fork(&sid, now, &parent, &child, edge),
            ])?;
            Ok(child)
        })
        .map_err(store_err)?;
    ctx.session.switch_to(&child);
    let text = format!("Forked {child} from {parent} ({edge}).");
    let out = Forked {
        slug: child,
        parent,
        edge_type: edge.to_string(),
        created: true,
    };
    Ok(ToolOutcome::with(text, &out))
}

/// `task_link(target_id, edge_type, task_id?)`: records one `task.link` from
/// the source (`task_id`, else current) to the target;
/// `Linked SRC -> TARGET (EDGE).` Errors: `target_id is required.`,
/// `edge_type is required.`, the edge-type line, the no-current line,
/// `No task SLUG.`, `A task cannot link to itself.`,
/// `SLUG is reserved; it is not a task.` (an `@` source or target).
pub fn task_link(ctx: &mut ToolCtx<'_>, a: EdgeArgs) -> ToolOutcome {
    edge_line(ctx, a, true).into()
}

/// `task_sever(target_id, edge_type, task_id?)`: records one `task.sever`;
/// `Severed SRC -> TARGET (EDGE).` Errors as [`task_link`], with
/// `A task cannot sever from itself.` for a self-edge.
pub fn task_sever(ctx: &mut ToolCtx<'_>, a: EdgeArgs) -> ToolOutcome {
    edge_line(ctx, a, false).into()
}

fn edge_line(ctx: &mut ToolCtx<'_>, a: EdgeArgs, link: bool) -> Done {
    let target = required("target_id", Some(&a.target_id), limits::NAME)?;
    let edge = required("edge_type", Some(&a.edge_type), limits::NAME)?;
    let edge = parse_edge(edge)?;
    let src = ctx.write_target(a.task_id.as_deref())?;
    if bare(target) == src {
        return Err(if link {
            "A task cannot link to itself.".to_string()
        } else {
            "A task cannot sever from itself.".to_string()
        });
    }
    let target = ctx.writable("target_id", target)?;
    let now = ctx.clock.now();
    let ev = if link {
        NewEvent::link(&ctx.session.id, now, &src, &target, edge)
    } else {
        NewEvent::sever(&ctx.session.id, now, &src, &target, edge)
    };
    ctx.store.write(&[ev]).map_err(store_err)?;
    let verb = if link { "Linked" } else { "Severed" };
    let text = format!("{verb} {src} -> {target} ({edge}).");
    let out = EdgeChange {
        task: src,
        target,
        edge_type: edge.to_string(),
        linked: link,
    };
    Ok(ToolOutcome::with(text, &out))
}

/// The `task_set_metadata` key that sets the task's description
/// (`task.update-description`) instead of a metadata value.
pub const DESCRIPTION_KEY: &str = "description";

/// `task_set_metadata(key, value, task_id?)`: records one `task.set-metadata`
/// (a null value is stored as ""); `Set KEY on SLUG.` with KEY in lower
/// case (metadata keys are case-insensitive, docs/tq.md "Metadata keys";
/// `Priority` sets `priority`). The key `description` (any case)
/// is the task's description, not metadata: it records one
/// `task.update-description` (issue 27: before, a description could never
/// change after creation).
/// Errors: `key is required.`, the no-current line, `No task SLUG.`,
/// `key must not contain control characters.`,
/// `SLUG is reserved; it is not a task.`,
/// `key is too long (...)`, `value is too long (...)`.
pub fn task_set_metadata(ctx: &mut ToolCtx<'_>, a: SetMetadataArgs) -> ToolOutcome {
    set_metadata_line(ctx, a).into()
}

fn set_metadata_line(ctx: &mut ToolCtx<'_>, a: SetMetadataArgs) -> Done {
    let key = required("key", Some(&a.key), limits::NAME)?.trim();
    if key.chars().any(char::is_control) {
        return Err("key must not contain control characters.".to_string());
    }
    // One key whatever its case (docs/tq.md "Metadata keys"): recorded and
    // reported in lower case, as the fold keeps it.
    let key = &metadata_key(key);
    let value = a.value.unwrap_or_default();
    check_len("value", &value, limits::TEXT)?;
    let slug = ctx.write_target(a.task_id.as_deref())?;
    let ev = if key == DESCRIPTION_KEY {
        NewEvent::update_description(&ctx.session.id, ctx.clock.now(), &slug, &value)
    } else {
        NewEvent::set_metadata(&ctx.session.id, ctx.clock.now(), &slug, key, &value)
    };
    ctx.store.write(&[ev]).map_err(store_err)?;
    let text = format!("Set {key} on {slug}.");
    let out = MetadataSet {
        task: slug,
        key: key.to_string(),
        value,
    };
    Ok(ToolOutcome::with(text, &out))
}

/// `task_update_status(status?, task_id?, reopen?)`: status lower-cased and
/// validated; `reopen=true` without a status means `active`. Records one
/// `task.update-status` unless the task already has that status;
/// `SLUG is now STATUS.` Errors: `status is required.`,
/// `"S" is not a valid status; expected one of open, active, completed, abandoned, blocked.`,
/// `status is too long (...)` (over 200 characters, never echoed),
/// the no-current line, `No task SLUG.`, `SLUG is reserved; it is not a task.`
pub fn task_update_status(ctx: &mut ToolCtx<'_>, a: UpdateStatusArgs) -> ToolOutcome {
    update_status_line(ctx, a).into()
}

fn update_status_line(ctx: &mut ToolCtx<'_>, a: UpdateStatusArgs) -> Done {
    let status = match a.status.as_deref().filter(|s| !s.trim().is_empty()) {
        Some(s) => {
            check_len("status", s, limits::NAME)?;
            Status::parse(s.trim()).ok_or_else(|| {
                format!(
                    "\"{s}\" is not a valid status; expected one of open, active, completed, abandoned, blocked."
                )
            })?
        }
        None if a.reopen == Some(true) => Status::Active,
        None => return Err("status is required.".to_string()),
    };
    let slug = ctx.write_target(a.task_id.as_deref())?;
    let current = ctx.store.task_status(&slug).map_err(store_err)?;
    let changed = current.as_deref() != Some(status.as_str());
    if changed {
        let ev = NewEvent::update_status(&ctx.session.id, ctx.clock.now(), &slug, status);
        ctx.store.write(&[ev]).map_err(store_err)?;
    }
    let text = format!("{slug} is now {status}.");
    let out = StatusSet {
        task: slug,
        status: status.to_string(),
        changed,
    };
    Ok(ToolOutcome::with(text, &out))
}

/// An optional text argument: blank counts as absent; length-checked.
fn optional_text<'v>(field: &str, v: Option<&'v str>) -> Result<Option<&'v str>, String> {
    match v.filter(|s| !s.trim().is_empty()) {
        Some(s) => {
            check_len(field, s, limits::TEXT)?;
            Ok(Some(s))
        }
        None => Ok(None),
    }
}
