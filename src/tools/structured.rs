//! The structured results of the fourteen tools (spec/mcp.md "The surface
//! today's clients expect", "Structured results"): one typed struct per
//! result shape, serialised as MCP `structuredContent` beside the unchanged
//! text, and its JSON schema (schemars, subschemas inlined) declared as the
//! tool's `outputSchema`. Error results carry no structure.
//!
//! Field names are snake_case except `possibleDuplicates` (the name
//! ClaudeDo's convention uses). Timestamps are Unix seconds (UTC).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::store::read::TaskState;

/// `observe`: the task the observation was recorded on.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Observed {
    /// The task's slug.
    pub task: String,
}

/// One open task whose name overlaps strongly with a new task's name.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Duplicate {
    /// The open task's slug.
    pub slug: String,
    /// Its typed name, else its slug without the date.
    pub name: String,
    /// Its status (`open`, `active` or `blocked`).
    pub status: String,
    /// Word overlap with the new name: shared words / all words (Jaccard),
    /// 0.5 to 1, two decimals.
    pub score: f64,
}

/// `task_create`: the new slug, whether it became current, and up to three
/// possible duplicates among the open tasks.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Created {
    /// The minted slug.
    pub slug: String,
    /// Always true: a task was created.
    pub created: bool,
    /// True when the task became the current task (none was set).
    pub current: bool,
    /// Up to three open tasks whose names overlap strongly with this one,
    /// best first (word overlap, no model call).
    #[serde(rename = "possibleDuplicates")]
    pub possible_duplicates: Vec<Duplicate>,
}

/// `task_fork`: the child, its parent and the edge between them.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Forked {
    /// The child's minted slug (now the current task).
    pub slug: String,
    /// The parent's slug.
    pub parent: String,
    /// The edge type, e.g. `phase-of`.
    pub edge_type: String,
    /// Always true: a task was created.
    pub created: bool,
}

/// `task_link` / `task_sever`: the edge and whether it now exists.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct EdgeChange {
    /// The source task's slug.
    pub task: String,
    /// The target task's slug.
    pub target: String,
    /// The edge type.
    pub edge_type: String,
    /// True after `task_link`, false after `task_sever`.
    pub linked: bool,
}

/// `task_set_metadata`: the key and value now set.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct MetadataSet {
    /// The task's slug.
    pub task: String,
    /// The key (trimmed).
    pub key: String,
    /// The value stored (`""` for a null value).
    pub value: String,
}

/// `task_update_status`: the task's status now.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct StatusSet {
    /// The task's slug.
    pub task: String,
    /// The status now.
    pub status: String,
    /// False when the task already had that status (no event recorded).
    pub changed: bool,
}

/// `handoff`: where the note is.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct HandoffDone {
    /// The task's slug.
    pub task: String,
    /// The note's absolute path (as the text shows it).
    pub path: String,
    /// The path recorded in the event, relative to the project root.
    pub relative_path: String,
}

/// `task_query` / `task_query_write`: the query's result as
/// `cairn query --format json` prints it (docs/cli.md "JSON output").
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct QueryResult {
    /// What the query yields: `tasks`, `ids`, `count`, `projection`,
    /// `groups`, or `recorded` (a write whose result was too slow to shape).
    pub shape: String,
    /// The JSON `cairn query --format json` prints for the query: an array
    /// of task objects, an array of slugs, a number, an array of projected
    /// objects, an object of groups, or `{recorded: {events, tasks}, note}`.
    /// Cut to the tasks the text shows when the text was truncated (see
    /// `truncated`).
    pub result: Value,
    /// `null` when `result` is whole; when the text was cut to its
    /// 16,000-character budget (`… truncated: showing K of N tasks`),
    /// `{shown: K, total: N}`: `result` then holds the same first K tasks,
    /// in the same order (issue 23: no response carries more than its
    /// text). Narrow the query or add `(:take K)` for the rest.
    pub truncated: Option<Truncated>,
}

/// How much of a result a response carries when its text was truncated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Truncated {
    /// Tasks in `result` (K, at least 1).
    pub shown: usize,
    /// Tasks the query yields (N, more than K).
    pub total: usize,
}

/// One `task_search` hit.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SearchHit {
    /// 1-based rank.
    pub rank: u32,
    /// The task's slug.
    pub task: String,
    /// The observation's date, `YYYY-MM-DD` (UTC).
    pub date: String,
    /// The snippet on one line, matches in `[`brackets`]`.
    pub snippet: String,
}

/// `task_search`: the ranked hits (empty when nothing matches).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SearchResult {
    /// The query as given.
    pub query: String,
    /// The hits, best first.
    pub hits: Vec<SearchHit>,
}

/// A child task and its status.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Child {
    /// The child's slug.
    pub slug: String,
    /// Its status.
    pub status: String,
}

/// An outgoing lateral edge.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct EdgeRef {
    /// The edge type.
    pub edge_type: String,
    /// The destination's slug.
    pub target: String,
}

/// `task_get`: the computed state of a task.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct TaskGot {
    /// The slug.
    pub slug: String,
    /// The status.
    pub status: String,
    /// The description, null when none was given.
    pub description: Option<String>,
    /// The name typed at creation, null when the creating event kept none.
    pub name: Option<String>,
    /// The parent's slug, null when none.
    pub parent: Option<String>,
    /// The children, by slug.
    pub children: Vec<Child>,
    /// Outgoing lateral edges, by type then slug.
    pub edges: Vec<EdgeRef>,
    /// Metadata, by key.
    pub metadata: BTreeMap<String, String>,
    /// The newest observations (at most five), newest first, verbatim.
    pub recent: Vec<String>,
    /// How many observations the task has in all.
    pub observation_count: i64,
    /// The live claim (spec/tq.md §9), null when the task has none.
    pub claim: Option<ClaimRef>,
}

/// A live claim in `task_get` / `task_bootstrap` (spec/tq.md §9).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ClaimRef {
    /// The agent holding it.
    pub owner: String,
    /// When it lapses, Unix seconds (UTC).
    pub until: i64,
}

/// One handoff in `task_bootstrap`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct HandoffRef {
    /// The one-line summary.
    pub summary: String,
    /// The note's path as recorded.
    pub path: String,
    /// Unix seconds, UTC.
    pub ts: i64,
}

/// `task_bootstrap`: the state of `task_get` and the latest handoffs.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Bootstrapped {
    /// The task's state, as `task_get` returns it.
    pub task: TaskGot,
    /// The latest handoffs (at most three), newest first.
    pub handoffs: Vec<HandoffRef>,
}

/// One event of a `timeline` page.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct TimelineEvent {
    /// The local sequence number.
    pub seq: i64,
    /// The event type, e.g. `observation`.
    #[serde(rename = "type")]
    pub event_type: String,
    /// Unix seconds, UTC.
    pub ts: i64,
    /// The one-line digest, or with `full=true` the verbatim body.
    pub text: String,
}

/// `timeline`: the events shown, newest first, and the continuation.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Timeline {
    /// The task's slug.
    pub task: String,
    /// The events shown (those that fit under the soft ceiling).
    pub events: Vec<TimelineEvent>,
    /// Older events matching the filter that were not shown (0 when the
    /// page was not truncated).
    pub remaining: i64,
    /// The `before_seq` that continues a truncated page, null otherwise.
    pub before_seq: Option<i64>,
}

impl TaskGot {
    /// The structure of a [`TaskState`] (recent observations verbatim).
    /// `now` (Unix seconds) judges the claim live.
    pub fn from_state(s: &TaskState, now: i64) -> TaskGot {
        TaskGot {
            slug: s.slug.clone(),
            status: s.status.clone(),
            description: s.description.clone(),
            name: s.name.clone(),
            parent: s.parent.clone(),
            children: s
                .children
                .iter()
                .map(|(slug, status)| Child {
                    slug: slug.clone(),
                    status: status.clone(),
                })
                .collect(),
            edges: s
                .edges
                .iter()
                .map(|(edge, dst)| EdgeRef {
                    edge_type: edge.clone(),
                    target: dst.clone(),
                })
                .collect(),
            metadata: s.metadata.iter().cloned().collect(),
            recent: s.recent.clone(),
            observation_count: s.obs_count,
            claim: s.live_claim(now).map(|(owner, until)| ClaimRef {
                owner: owner.to_string(),
                until,
            }),
        }
    }
}

/// The JSON value of `v` (`None` only if serialisation fails, which these
/// types cannot).
pub fn to_value<T: Serialize>(v: &T) -> Option<Value> {
    serde_json::to_value(v).ok()
}

/// The `outputSchema` of `T`: a draft 2020-12 object schema with every
/// subschema inlined, every property required (the structs serialise every
/// field; an absent value is `null`), without `$schema`, the root
/// `title`/`description`, or `format` annotations (`int64`, `double`, ...
/// which strict validators reject as unknown formats).
pub fn output_schema_of<T: JsonSchema>() -> Map<String, Value> {
    let mut settings = SchemaSettings::draft2020_12();
    settings.inline_subschemas = true;
    let schema = settings.into_generator().into_root_schema_for::<T>();
    match serde_json::to_value(schema) {
        Ok(Value::Object(mut m)) => {
            m.remove("$schema");
            m.remove("title");
            m.remove("description");
            let mut v = Value::Object(m);
            tighten(&mut v);
            match v {
                Value::Object(m) => m,
                _ => Map::new(),
            }
        }
        _ => Map::new(),
    }
}

/// Drops string `format` keywords and requires every property of each
/// object schema, recursively.
fn tighten(v: &mut Value) {
    match v {
        Value::Object(m) => {
            if m.get("format").is_some_and(Value::is_string) {
                m.remove("format");
            }
            let names: Option<Vec<Value>> = m
                .get("properties")
                .and_then(Value::as_object)
                .filter(|_| m.get("type") == Some(&Value::from("object")))
                .map(|p| p.keys().cloned().map(Value::from).collect());
            if let Some(names) = names {
                m.insert("required".to_string(), Value::Array(names));
            }
            // A property named `format` maps to an object, so only string
            // `format` keywords go.
            m.values_mut().for_each(tighten);
        }
        Value::Array(a) => a.iter_mut().for_each(tighten),
        _ => {}
    }
}
