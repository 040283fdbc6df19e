//! The typed arguments of the fourteen tools (seed 000 "Tool reference").
//! Each struct's JSON schema (schemars) is the tool's MCP `inputSchema`
//! (spec/mcp.md "Titles and schemas"): every optional parameter is a plain
//! optional property (never typed `[T, "null"]`, though `null` is still
//! accepted as "absent"), `status` and `edge_type` are `enum`s, numeric
//! bounds are `minimum`/`maximum`. Field docs become the descriptions.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

/// `observe(text, task_id?)`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ObserveArgs {
    /// The observation: one fact, a finding, a decision or a dead end; name files as `path:line`.
    pub text: String,
    /// Task to observe on. Defaults to the current task.
    #[serde(default)]
    pub task_id: Option<String>,
}

/// `task_create(name, description?)`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskCreateArgs {
    /// Descriptive task name; slugified and stamped with today's UTC date.
    pub name: String,
    /// Longer description stored on the task.
    #[serde(default)]
    pub description: Option<String>,
}

/// `task_fork(name, from?, edge_type?, description?)`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskForkArgs {
    /// Child task name.
    pub name: String,
    /// Parent slug. Defaults to the current task.
    #[serde(default)]
    pub from: Option<String>,
    /// One of `phase-of`, `depends-on`, `related`. Defaults to `phase-of`.
    #[schemars(extend("enum" = ["phase-of", "depends-on", "related"]))]
    #[serde(default)]
    pub edge_type: Option<String>,
    /// Longer description for the child.
    #[serde(default)]
    pub description: Option<String>,
}

/// `task_link(target_id, edge_type, task_id?)` and
/// `task_sever(target_id, edge_type, task_id?)`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EdgeArgs {
    /// Edge destination slug.
    pub target_id: String,
    /// One of `phase-of`, `depends-on`, `related`.
    #[schemars(extend("enum" = ["phase-of", "depends-on", "related"]))]
    pub edge_type: String,
    /// Edge source. Defaults to the current task.
    #[serde(default)]
    pub task_id: Option<String>,
}

/// `task_set_metadata(key, value, task_id?)`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetMetadataArgs {
    /// Metadata key, e.g. `acceptance`, `objective`, `display-name`, `tags`.
    pub key: String,
    /// Value to store (a string; `null` is also accepted and stored as the empty string).
    #[schemars(required, with = "String")]
    pub value: Option<String>,
    /// Task to annotate. Defaults to the current task.
    #[serde(default)]
    pub task_id: Option<String>,
}

/// `task_update_status(status?, task_id?, reopen?)`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateStatusArgs {
    /// One of `open`, `active`, `completed`, `abandoned`, `blocked` (any case).
    #[schemars(extend("enum" = ["open", "active", "completed", "abandoned", "blocked"]))]
    #[serde(default)]
    pub status: Option<String>,
    /// Task to update. Defaults to the current task.
    #[serde(default)]
    pub task_id: Option<String>,
    /// When true and `status` is omitted, sets the status to `active` to revive a completed task.
    #[serde(default)]
    pub reopen: Option<bool>,
}

/// `handoff(summary, path?, task_id?)`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HandoffArgs {
    /// One-line summary of where the work stands.
    pub summary: String,
    /// File path for the note, relative to the project root. Defaults to a timestamped file under `.cairn/tasks/<slug>/`.
    #[serde(default)]
    pub path: Option<String>,
    /// Task to hand off. Defaults to the current task.
    #[serde(default)]
    pub task_id: Option<String>,
}

/// `task_query(query)` and `task_query_write(query)`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QueryArgs {
    /// One TQ s-expression, e.g. `(schema)` or `(-> (current) (:follow :phase-of) (:select :slug :status))`.
    pub query: String,
}

/// `task_search(query, limit?, task_id?)`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// Free-text search; identifiers and paths match literally; a trailing `*` is a prefix query.
    pub query: String,
    /// Maximum results. Defaults to 10, clamped to 1..50.
    #[schemars(with = "Option<i64>", range(min = 1, max = 50))]
    #[serde(default)]
    pub limit: Option<Value>,
    /// Restrict the search to one task (its observations, handoffs, name and description).
    #[serde(default)]
    pub task_id: Option<String>,
}

/// `task_get(task_id?)` and `task_bootstrap(task_id?)`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskIdArgs {
    /// Task to read. Defaults to the current task.
    #[serde(default)]
    pub task_id: Option<String>,
}

/// `timeline(task_id?, types?, full?, before_seq?, after_seq?, limit?)`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TimelineArgs {
    /// Task to read. Defaults to the current task.
    #[serde(default)]
    pub task_id: Option<String>,
    /// Comma-separated event-type filter, e.g. `observation,handoff.create`. Omitted or blank means every type.
    #[serde(default)]
    pub types: Option<String>,
    /// When true, render each event verbatim (header plus full body) instead of the one-line digest.
    #[serde(default)]
    pub full: Option<bool>,
    /// Exclusive upper seq bound; also the page-back cursor printed when output is truncated.
    #[schemars(with = "Option<i64>", range(min = 0))]
    #[serde(default)]
    pub before_seq: Option<Value>,
    /// Exclusive lower seq bound.
    #[schemars(with = "Option<i64>", range(min = 0))]
    #[serde(default)]
    pub after_seq: Option<Value>,
    /// Number of events. Defaults to 20, clamped to 1..1000.
    #[schemars(with = "Option<i64>", range(min = 1, max = 1000))]
    #[serde(default)]
    pub limit: Option<Value>,
}

/// Reads an integer argument given as a JSON number or a string of digits.
/// `Ok(None)` when absent or null; otherwise
/// `FIELD must be an integer, got VALUE.` (VALUE as JSON).
pub(crate) fn int_arg(field: &str, v: Option<&Value>) -> Result<Option<i64>, String> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => match n.as_i64() {
            Some(i) => Ok(Some(i)),
            None => match n.as_f64() {
                Some(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Ok(Some(f as i64)),
                _ => Err(format!("{field} must be an integer, got {n}.")),
            },
        },
        Some(Value::String(s)) => s.trim().parse::<i64>().map(Some).map_err(|_| {
            format!(
                "{field} must be an integer, got {}.",
                Value::from(s.as_str())
            )
        }),
        Some(other) => Err(format!("{field} must be an integer, got {other}.")),
    }
}
