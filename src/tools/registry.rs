//! The tool registry: one row per tool — name, capability, annotations,
//! description, input schema (from the typed argument struct) and the
//! function. The MCP adapter lists and calls tools from it, `cairn call` runs
//! them through it, and `docs/tools.md` is generated from it
//! (spec/mcp.md "Serving", seed 000).

use std::panic::{AssertUnwindSafe, catch_unwind};

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::args::*;
use super::structured::{self as out, output_schema_of};
use super::{ToolCtx, ToolOutcome, handoff, reads, timeline, writes};
use crate::session::Capability;

/// One tool as served.
pub struct ToolSpec {
    /// The MCP tool name, e.g. `task_create`.
    pub name: &'static str,
    /// The capability that gates it (seed 002).
    pub capability: Capability,
    /// The seed's one-line summary (the "Tools by capability" table).
    pub summary: &'static str,
    /// The MCP description: the first sentence says what it does and when to
    /// reach for it (the ClaudeDo rule).
    pub description: &'static str,
    /// The signature as the seed writes it, e.g. `observe(text, task_id?)`.
    pub signature: &'static str,
    /// MCP `readOnlyHint`.
    pub read_only: bool,
    /// MCP `destructiveHint` (meaningful only when not read-only).
    pub destructive: bool,
    /// MCP `idempotentHint` (meaningful only when not read-only).
    pub idempotent: bool,
    /// The JSON schema of the arguments (an object schema).
    pub schema: fn() -> Map<String, Value>,
    /// The JSON schema of the structured result (MCP `outputSchema`, an
    /// object schema from the typed struct in [`super::structured`]).
    pub output_schema: fn() -> Map<String, Value>,
    /// Deserialises the arguments and runs the tool. `Err` is a protocol
    /// fault: the arguments do not fit the schema (the serde message).
    pub run: fn(&mut ToolCtx<'_>, Value) -> Result<ToolOutcome, String>,
}

/// Why a call did not reach a tool body: protocol faults (JSON-RPC errors
/// over MCP; exit 1 in `cairn call`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DispatchError {
    /// No tool of that name.
    #[error("Unknown tool {0}.")]
    UnknownTool(String),
    /// The arguments do not match the tool's schema.
    #[error("Invalid arguments for {tool}: {message}")]
    InvalidArgs {
        /// The tool called.
        tool: String,
        /// serde's message.
        message: String,
    },
}

/// The input schema of `T` (spec/mcp.md "Titles and schemas"): optional
/// fields are plain optional properties (no `null` in their type, no
/// `"default": null`), `$schema`/`title`/`description` dropped.
fn schema_of<T: JsonSchema>() -> Map<String, Value> {
    let schema = SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<T>();
    match serde_json::to_value(schema) {
        Ok(Value::Object(mut m)) => {
            m.remove("$schema");
            m.remove("title");
            m.remove("description");
            if let Some(Value::Object(props)) = m.get_mut("properties") {
                for prop in props.values_mut() {
                    if let Value::Object(p) = prop {
                        drop_null_type(p);
                    }
                }
            }
            m
        }
        _ => Map::new(),
    }
}

/// Makes an `Option<T>` property plain `T`: `"type": ["T", "null"]` becomes
/// `"type": "T"`, a `null` branch of `anyOf` goes, and `"default": null`
/// goes.
fn drop_null_type(p: &mut Map<String, Value>) {
    if p.get("default") == Some(&Value::Null) {
        p.remove("default");
    }
    if let Some(Value::Array(types)) = p.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let only = types.remove(0);
            p.insert("type".to_string(), only);
        }
    }
    if let Some(Value::Array(branches)) = p.get_mut("anyOf") {
        branches.retain(|b| b.get("type") != Some(&Value::from("null")));
        if branches.len() == 1
            && let Value::Object(only) = branches.remove(0)
        {
            p.remove("anyOf");
            for (k, v) in only {
                p.entry(k).or_insert(v);
            }
        }
    }
    if let Some(Value::Array(values)) = p.get_mut("enum") {
        values.retain(|v| !v.is_null());
    }
}

fn parse<T: DeserializeOwned>(v: Value) -> Result<T, String> {
    let v = if v.is_null() {
        Value::Object(Map::new())
    } else {
        v
    };
    serde_json::from_value(v).map_err(|e| e.to_string())
}

static TOOLS: [ToolSpec; 14] = [
    ToolSpec {
        name: "observe",
        capability: Capability::Observe,
        summary: "Record a freeform observation on the current task.",
        description: "Record a freeform observation on the current task (or task_id) — call it after every finding, decision, dead end or file:line worth remembering; it is the cheapest write and the heartbeat of the work. Observations never move the current task and are what task_search ranks over.",
        signature: "observe(text, task_id?)",
        read_only: false,
        destructive: false,
        idempotent: false,
        schema: schema_of::<ObserveArgs>,
        output_schema: output_schema_of::<out::Observed>,
        run: |c, v| Ok(writes::observe(c, parse(v)?)),
    },
    ToolSpec {
        name: "task_create",
        capability: Capability::Write,
        summary: "Create a top-level task.",
        description: "Create a top-level task for a new goal — reach for it when work starts that no existing task covers. The slug is YYYY-MM-DD-<slugified name> (today, UTC); the task becomes current only when no current task is set.",
        signature: "task_create(name, description?)",
        read_only: false,
        destructive: false,
        idempotent: false,
        schema: schema_of::<TaskCreateArgs>,
        output_schema: output_schema_of::<out::Created>,
        run: |c, v| Ok(writes::task_create(c, parse(v)?)),
    },
    ToolSpec {
        name: "task_fork",
        capability: Capability::Write,
        summary: "Create a child task and make it current.",
        description: "Create a child task linked to a parent (from, else the current task) and make the child current — use it to split a goal into phases (edge_type defaults to phase-of).",
        signature: "task_fork(name, from?, edge_type?, description?)",
        read_only: false,
        destructive: false,
        idempotent: false,
        schema: schema_of::<TaskForkArgs>,
        output_schema: output_schema_of::<out::Forked>,
        run: |c, v| Ok(writes::task_fork(c, parse(v)?)),
    },
    ToolSpec {
        name: "task_link",
        capability: Capability::Write,
        summary: "Add a typed edge to a target task.",
        description: "Add a typed edge from the current task (or task_id) to a target task — use depends-on to order phases, related for cross-references, phase-of to re-parent.",
        signature: "task_link(target_id, edge_type, task_id?)",
        read_only: false,
        destructive: false,
        idempotent: true,
        schema: schema_of::<EdgeArgs>,
        output_schema: output_schema_of::<out::EdgeChange>,
        run: |c, v| Ok(writes::task_link(c, parse(v)?)),
    },
    ToolSpec {
        name: "task_sever",
        capability: Capability::Write,
        summary: "Remove a typed edge to a target task.",
        description: "Remove a typed edge from the current task (or task_id) to a target task — use it when a dependency or cross-reference no longer holds; the removal is recorded in the history.",
        signature: "task_sever(target_id, edge_type, task_id?)",
        read_only: false,
        destructive: true,
        idempotent: true,
        schema: schema_of::<EdgeArgs>,
        output_schema: output_schema_of::<out::EdgeChange>,
        run: |c, v| Ok(writes::task_sever(c, parse(v)?)),
    },
    ToolSpec {
        name: "task_set_metadata",
        capability: Capability::Write,
        summary: "Set a free key/value on a task.",
        description: "Set a free key/value on the current task (or task_id) — e.g. acceptance, objective, display-name, tags; setting a key again overwrites it, and every key becomes a queryable TQ field. The key description replaces the task's description instead.",
        signature: "task_set_metadata(key, value, task_id?)",
        read_only: false,
        destructive: false,
        idempotent: true,
        schema: schema_of::<SetMetadataArgs>,
        output_schema: output_schema_of::<out::MetadataSet>,
        run: |c, v| Ok(writes::task_set_metadata(c, parse(v)?)),
    },
    ToolSpec {
        name: "task_update_status",
        capability: Capability::Write,
        summary: "Set a task's status.",
        description: "Set the status of the current task (or task_id) to open, active, completed, abandoned or blocked — mark a phase completed to advance the plan frontier; reopen=true revives a completed task. Idempotent.",
        signature: "task_update_status(status, task_id?, reopen?)",
        read_only: false,
        destructive: false,
        idempotent: true,
        schema: schema_of::<UpdateStatusArgs>,
        output_schema: output_schema_of::<out::StatusSet>,
        run: |c, v| Ok(writes::task_update_status(c, parse(v)?)),
    },
    ToolSpec {
        name: "handoff",
        capability: Capability::Write,
        summary: "Scaffold a resumable handoff.",
        description: "Scaffold a resumable handoff note for the current task (or task_id) — call it before you stop so the next session can resume; it writes a skeleton file inside the project and returns its path for you to fill in.",
        signature: "handoff(summary, path?, task_id?)",
        read_only: false,
        destructive: false,
        idempotent: false,
        schema: schema_of::<HandoffArgs>,
        output_schema: output_schema_of::<out::HandoffDone>,
        run: |c, v| Ok(handoff::handoff(c, parse(v)?)),
    },
    ToolSpec {
        name: "task_query_write",
        capability: Capability::Write,
        summary: "Run a TQ query that may mutate or define views.",
        description: "Run a TQ query that may mutate tasks or define views — use it for bulk changes such as (-> (query \"plan-frontier\") (:set-status! \"active\")) or (define! \"name\" Q); all its events commit in one transaction. Prefer task_query for reads.",
        signature: "task_query_write(query)",
        read_only: false,
        destructive: true,
        idempotent: true,
        schema: schema_of::<QueryArgs>,
        output_schema: output_schema_of::<out::QueryResult>,
        run: |c, v| Ok(reads::task_query_write(c, parse(v)?)),
    },
    ToolSpec {
        name: "task_search",
        capability: Capability::Read,
        summary: "Full-text search over observations.",
        description: "Full-text, BM25-ranked search over observations, handoffs and task names and descriptions — reach for it to find where something was noted before; identifiers and paths match literally and a trailing * is a prefix query. Returns task slugs with snippets.",
        signature: "task_search(query, limit?, task_id?)",
        read_only: true,
        destructive: false,
        idempotent: true,
        schema: schema_of::<SearchArgs>,
        output_schema: output_schema_of::<out::SearchResult>,
        run: |c, v| Ok(reads::task_search(c, parse(v)?)),
    },
    ToolSpec {
        name: "task_get",
        capability: Capability::Read,
        summary: "Read computed task state.",
        description: "Read the computed state of the current task (or task_id) — status, description, parent, children, edges, metadata and the five most recent observations.",
        signature: "task_get(task_id?)",
        read_only: true,
        destructive: false,
        idempotent: true,
        schema: schema_of::<TaskIdArgs>,
        output_schema: output_schema_of::<out::TaskGot>,
        run: |c, v| Ok(reads::task_get(c, parse(v)?)),
    },
    ToolSpec {
        name: "timeline",
        capability: Capability::Read,
        summary: "Recent events for a task.",
        description: "Read the raw event stream of the current task (or task_id), most recent first — use it to reconstruct how a task got where it is, or with full=true, types=observation to read every observation verbatim; page with before_seq.",
        signature: "timeline(task_id?, types?, full?, before_seq?, after_seq?, limit?)",
        read_only: true,
        destructive: false,
        idempotent: true,
        schema: schema_of::<TimelineArgs>,
        output_schema: output_schema_of::<out::Timeline>,
        run: |c, v| Ok(timeline::timeline(c, parse(v)?)),
    },
    ToolSpec {
        name: "task_query",
        capability: Capability::Read,
        summary: "Run a read-only TQ query.",
        description: "Run a read-only TQ query over the task graph and return text — start with (schema) to learn the vocabulary, and use (query \"plan-frontier\") to find what is ready next. A query is one s-expression: a source threaded through steps, e.g. (-> (current) (:follow :phase-of) (:select :slug :status)).",
        signature: "task_query(query)",
        read_only: true,
        destructive: false,
        idempotent: true,
        schema: schema_of::<QueryArgs>,
        output_schema: output_schema_of::<out::QueryResult>,
        run: |c, v| Ok(reads::task_query(c, parse(v)?)),
    },
    ToolSpec {
        name: "task_bootstrap",
        capability: Capability::Read,
        summary: "Orient on a task in one call.",
        description: "Orient on a task in one call — call it first in every session: the task's state, neighbours, recent observations and latest handoffs. An explicit task_id also makes that task current.",
        signature: "task_bootstrap(task_id?)",
        read_only: true,
        destructive: false,
        idempotent: true,
        schema: schema_of::<TaskIdArgs>,
        output_schema: output_schema_of::<out::Bootstrapped>,
        run: |c, v| Ok(reads::task_bootstrap(c, parse(v)?)),
    },
];

/// Every tool, in the seed's order (observe, the writes, the reads).
pub fn tools() -> &'static [ToolSpec] {
    &TOOLS
}

/// The tool named `name`, if any.
pub fn find(name: &str) -> Option<&'static ToolSpec> {
    TOOLS.iter().find(|t| t.name == name)
}

/// The refusal for a tool whose capability this session was not granted
/// (spec/mcp.md "Serving").
pub fn refusal(tool: &ToolSpec) -> String {
    format!(
        "{} needs the cairn/{} capability, which this server was not granted.",
        tool.name, tool.capability
    )
}

/// Runs tool `name` with JSON `args` for `ctx`'s session: refuses (as a
/// tool error, running nothing) when its capability is not granted, and
/// turns a panic inside the tool into
/// `Internal error in TOOL; the store is unchanged.` (`is_error`).
/// Errors: [`DispatchError::UnknownTool`], [`DispatchError::InvalidArgs`].
pub fn dispatch(
    ctx: &mut ToolCtx<'_>,
    name: &str,
    args: Value,
) -> Result<ToolOutcome, DispatchError> {
    let tool = find(name).ok_or_else(|| DispatchError::UnknownTool(name.to_string()))?;
    dispatch_spec(ctx, tool, args)
}

/// Runs registry row `tool` as [`dispatch`] does (grant check, panic guard).
/// Errors: [`DispatchError::InvalidArgs`].
pub fn dispatch_spec(
    ctx: &mut ToolCtx<'_>,
    tool: &ToolSpec,
    args: Value,
) -> Result<ToolOutcome, DispatchError> {
    let name = tool.name;
    if !ctx.session.allows(tool.capability) {
        return Ok(ToolOutcome::err(refusal(tool)));
    }
    // Reconcile with the per-task logs first: O(1) when nothing moved
    // (spec/store.md "The plan travels with the repository").
    if let Err(e) = ctx.store.sync() {
        eprintln!("cairn: could not reconcile the store with its logs: {e}");
    }
    match catch_unwind(AssertUnwindSafe(|| (tool.run)(ctx, args))) {
        Ok(Ok(outcome)) => Ok(outcome),
        Ok(Err(message)) => Err(DispatchError::InvalidArgs {
            tool: name.to_string(),
            message,
        }),
        Err(_) => {
            tracing::error!(tool = name, "tool panicked");
            Ok(ToolOutcome::err(format!(
                "Internal error in {name}; the store is unchanged."
            )))
        }
    }
}
