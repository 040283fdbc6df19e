//! Human-readable titles of the fourteen tools (spec/mcp.md "Titles and
//! schemas"): what a host shows in its tool picker. Kept beside the adapter
//! rather than in the registry, which every tool owner edits.

/// The title of tool `name`; the name itself for a tool without one (a test
/// checks that every registry tool has one).
pub fn tool_title(name: &str) -> &str {
    match name {
        "observe" => "Record an observation",
        "task_create" => "Create a task",
        "task_fork" => "Fork a child task",
        "task_link" => "Link two tasks",
        "task_sever" => "Remove a link",
        "task_set_metadata" => "Set task metadata",
        "task_update_status" => "Update task status",
        "handoff" => "Write a handoff note",
        "task_query_write" => "Change tasks with a TQ query",
        "task_search" => "Search observations",
        "task_get" => "Show a task",
        "timeline" => "Show a task's timeline",
        "task_query" => "Query tasks with TQ",
        "task_bootstrap" => "Resume a task",
        other => other,
    }
}

/// The title of resource template `name` (`task`, `view`; spec/tq.md §9
/// "Changes"); the name itself for any other.
pub fn template_title(name: &str) -> &str {
    match name {
        "task" => "Task state",
        "view" => "View answer",
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::tool_title;
    use crate::tools::tools;

    #[test]
    fn both_templates_have_titles() {
        assert_eq!(super::template_title("task"), "Task state");
        assert_eq!(super::template_title("view"), "View answer");
        assert_eq!(super::template_title("other"), "other");
    }

    #[test]
    fn every_tool_has_its_own_title() {
        let titles: std::collections::BTreeSet<&str> =
            tools().iter().map(|t| tool_title(t.name)).collect();
        assert_eq!(titles.len(), 14);
        for t in tools() {
            assert_ne!(tool_title(t.name), t.name, "{} has no title", t.name);
        }
    }
}
