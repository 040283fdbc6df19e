//! The seven prompts (the six workflow stages and the whole method), served
//! as MCP prompts and as resources (spec/mcp.md "Prompts and resources").
//! Bodies are compiled in from `src/mcp/prompts/*.md`.

/// One prompt: its name, one-line description, resource URI and markdown body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PromptEntry {
    /// The MCP prompt name, e.g. `research`.
    pub name: &'static str,
    /// The human-readable title, e.g. `Research`.
    pub title: &'static str,
    /// The one-line description (the stage of the loop).
    pub description: &'static str,
    /// The resource URI: `cairn://prompts/<name>`, or
    /// `cairn://skills/cairn-method` for the method.
    pub uri: &'static str,
    /// The markdown body.
    pub body: &'static str,
}

/// The MIME type of every prompt resource.
pub const MIME: &str = "text/markdown";

static PROMPTS: [PromptEntry; 7] = [
    PromptEntry {
        name: "research",
        title: "Research",
        description: "Read the ground before changing it.",
        uri: "cairn://prompts/research",
        body: include_str!("prompts/research.md"),
    },
    PromptEntry {
        name: "plan",
        title: "Plan",
        description: "Structure the work as a graph of phases.",
        uri: "cairn://prompts/plan",
        body: include_str!("prompts/plan.md"),
    },
    PromptEntry {
        name: "implement",
        title: "Implement",
        description: "Do one phase with the discipline it asks for.",
        uri: "cairn://prompts/implement",
        body: include_str!("prompts/implement.md"),
    },
    PromptEntry {
        name: "validate",
        title: "Validate",
        description: "Check the phase against its acceptance.",
        uri: "cairn://prompts/validate",
        body: include_str!("prompts/validate.md"),
    },
    PromptEntry {
        name: "handoff",
        title: "Hand off",
        description: "Write the resumable summary.",
        uri: "cairn://prompts/handoff",
        body: include_str!("prompts/handoff.md"),
    },
    PromptEntry {
        name: "resume",
        title: "Resume",
        description: "Read the stones and pick the work back up.",
        uri: "cairn://prompts/resume",
        body: include_str!("prompts/resume.md"),
    },
    PromptEntry {
        name: "cairn-method",
        title: "The cairn method",
        description: "The whole method: bootstrap, observe, query, hand off.",
        uri: "cairn://skills/cairn-method",
        body: include_str!("prompts/cairn-method.md"),
    },
];

/// The seven prompts, workflow order, the method last.
pub fn prompts() -> &'static [PromptEntry] {
    &PROMPTS
}

/// The prompt named `name`.
pub fn prompt(name: &str) -> Option<&'static PromptEntry> {
    PROMPTS.iter().find(|p| p.name == name)
}

/// The prompt served at resource `uri`.
pub fn by_uri(uri: &str) -> Option<&'static PromptEntry> {
    PROMPTS.iter().find(|p| p.uri == uri)
}

/// The server `instructions` of the initialize result (spec/mcp.md "Serving").
pub const INSTRUCTIONS: &str = "cairn keeps this project's plan in a durable task graph that outlives your context.\n\
Call task_bootstrap first in every session; create or fork tasks for the work, and observe often (one fact per call, files as path:line).\n\
Query the graph with task_query — start with (schema), and (query \"plan-frontier\") tells you what is ready next.\n\
Call handoff before you stop, then fill in the note it scaffolds.";
