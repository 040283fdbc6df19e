//! The fourteen MCP tools as plain functions over (store, session)
//! (seed 000, spec/mcp.md "Tools are thin wrappers"). Each validates its
//! arguments with the seed's exact lines, resolves its target task, and runs
//! ONE engine operation: a TQ query on the right surface or a typed write
//! through the store's single write boundary. The MCP adapter (`crate::mcp`),
//! `cairn call` ([`call`]) and `docs/tools.md` ([`docs`]) all read the
//! [`registry`].

pub mod args;
pub mod call;
pub mod docs;
pub mod duplicates;
pub mod handoff;
pub mod reads;
pub mod registry;
pub mod render;
pub mod structured;
pub mod timeline;
pub mod writes;

use std::path::PathBuf;

use crate::session::Session;
use crate::store::{DbRef, StoreError};
use crate::tq::engine::Engine;

pub use registry::{ToolSpec, dispatch, find, tools};

/// The clock the tools stamp events and handoff file names with (the same
/// clock the TQ engine judges claims by).
pub use crate::clock::Clock;

/// What every tool runs against: the store, this connection's session (its
/// current-task pointer and grants), the TQ engine, the project root (where
/// handoff notes may be written) and the clock.
pub struct ToolCtx<'a> {
    /// The project's store.
    pub store: DbRef<'a>,
    /// This connection's session; tools move its current pointer.
    pub session: &'a mut Session,
    /// The TQ engine for `task_query` / `task_query_write`.
    pub engine: &'a Engine,
    /// The project root: handoff paths resolve against it and must stay inside it.
    pub root: PathBuf,
    /// The clock for event timestamps and handoff file names.
    pub clock: Clock,
}

/// A tool's result: the text the model reads, the structure beside it (MCP
/// `structuredContent`, matching the tool's `outputSchema`; spec/mcp.md
/// "Structured results") and whether it is an error (MCP `isError`).
/// Errors carry text only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutcome {
    /// The verbatim text (the seed's line, unchanged by the structure).
    pub text: String,
    /// The structured result (a JSON object), `None` for errors.
    pub structured: Option<serde_json::Value>,
    /// True for a tool-execution failure (`isError: true`).
    pub is_error: bool,
}

impl ToolOutcome {
    /// A successful result without structure.
    pub fn ok(text: impl Into<String>) -> ToolOutcome {
        ToolOutcome {
            text: text.into(),
            structured: None,
            is_error: false,
        }
    }

    /// A successful result with its structure (`structuredContent`).
    pub fn with<T: serde::Serialize>(text: impl Into<String>, structure: &T) -> ToolOutcome {
        ToolOutcome {
            text: text.into(),
            structured: structured::to_value(structure),
            is_error: false,
        }
    }

    /// A tool-execution failure (`isError: true`), text only.
    pub fn err(text: impl Into<String>) -> ToolOutcome {
        ToolOutcome {
            text: text.into(),
            structured: None,
            is_error: true,
        }
    }
}

impl From<Result<String, String>> for ToolOutcome {
    fn from(r: Result<String, String>) -> ToolOutcome {
        match r {
            Ok(t) => ToolOutcome::ok(t),
            Err(t) => ToolOutcome::err(t),
        }
    }
}

impl From<Result<ToolOutcome, String>> for ToolOutcome {
    fn from(r: Result<ToolOutcome, String>) -> ToolOutcome {
        r.unwrap_or_else(ToolOutcome::err)
    }
}

/// The result type of a tool body with structure: `Err` holds the verbatim
/// error line.
pub(crate) type Done = Result<ToolOutcome, String>;

/// A store failure as the line a tool returns: the store's sentence.
pub(crate) fn store_err(e: StoreError) -> String {
    e.to_string()
}

/// The argument limits of spec/mcp.md (Reliquary style), in characters.
pub mod limits {
    /// Task names, metadata keys, slugs.
    pub const NAME: usize = 200;
    /// Handoff summaries.
    pub const SUMMARY: usize = 4_000;
    /// Observation texts, descriptions, metadata values.
    pub const TEXT: usize = 1_000_000;
    /// TQ queries and search queries.
    pub const QUERY: usize = 65_536;
    /// Handoff paths.
    pub const PATH: usize = 4_096;
}

/// `FIELD is too long (N characters; at most M).` when `value` has more than
/// `max` characters.
pub(crate) fn check_len(field: &str, value: &str, max: usize) -> Result<(), String> {
    let n = value.chars().count();
    if n > max {
        Err(format!(
            "{field} is too long ({} characters; at most {}).",
            thousands(n),
            thousands(max)
        ))
    } else {
        Ok(())
    }
}

/// `1234567` → `1,234,567`.
pub(crate) fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A required text argument: `FIELD is required.` when absent or blank, the
/// length check otherwise. Returns the value as given.
pub(crate) fn required<'v>(
    field: &str,
    value: Option<&'v str>,
    max: usize,
) -> Result<&'v str, String> {
    match value {
        Some(v) if !v.trim().is_empty() => {
            check_len(field, v, max)?;
            Ok(v)
        }
        _ => Err(format!("{field} is required.")),
    }
}

/// `SLUG is reserved; it is not a task.` when `slug` (bare) starts with `@`
/// (the store's reserved subjects such as `@cairn`, which write tools must
/// never target).
pub(crate) fn reserved(slug: &str) -> Result<(), String> {
    if slug.starts_with('@') {
        Err(format!("{slug} is reserved; it is not a task."))
    } else {
        Ok(())
    }
}

/// Strips a depot prefix `name:` from a task argument (spec/store.md).
pub(crate) fn bare(slug: &str) -> &str {
    crate::store::slug::strip_depot(slug.trim())
}

impl ToolCtx<'_> {
    /// Resolves an explicit task argument: `No task SLUG.` unless it exists.
    pub(crate) fn existing(&self, field: &str, slug: &str) -> Result<String, String> {
        check_len(field, slug, limits::NAME)?;
        let slug = bare(slug);
        if self.store.task_exists(slug).map_err(store_err)? {
            Ok(slug.to_string())
        } else {
            Err(format!("No task {slug}."))
        }
    }

    /// The target task of a current-scoped tool: `task_id` when given (and
    /// non-blank), else the current pointer, else
    /// `No current task; create or select one first.`
    pub(crate) fn target(&self, task_id: Option<&str>) -> Result<String, String> {
        match task_id.filter(|t| !t.trim().is_empty()) {
            Some(t) => self.existing("task_id", t),
            None => match self.session.current.clone() {
                Some(cur) => self.existing("task_id", &cur),
                None => Err("No current task; create or select one first.".to_string()),
            },
        }
    }

    /// [`ToolCtx::existing`] for a write: an `@`-prefixed slug (the reserved
    /// `@cairn` node, spec/store.md) is refused with
    /// `SLUG is reserved; it is not a task.` before the existence check.
    pub(crate) fn writable(&self, field: &str, slug: &str) -> Result<String, String> {
        check_len(field, slug, limits::NAME)?;
        reserved(bare(slug))?;
        self.existing(field, slug)
    }

    /// [`ToolCtx::target`] for a write tool (observe, the typed writes,
    /// handoff): the same resolution, refusing an `@`-prefixed slug (given or
    /// current) with `SLUG is reserved; it is not a task.`
    pub(crate) fn write_target(&self, task_id: Option<&str>) -> Result<String, String> {
        match task_id.filter(|t| !t.trim().is_empty()) {
            Some(t) => self.writable("task_id", t),
            None => match self.session.current.clone() {
                Some(cur) => self.writable("task_id", &cur),
                None => Err("No current task; create or select one first.".to_string()),
            },
        }
    }

    /// Today's UTC date by the tool clock.
    pub(crate) fn today(&self) -> time::Date {
        render::datetime(self.clock.now()).date()
    }
}
