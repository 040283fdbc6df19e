//! `cairn call TOOL '{json}'`: runs any tool through the registry and prints
//! its text (spec/mcp.md "Tools are thin wrappers").

use serde_json::Value;

use super::{ToolCtx, dispatch};

/// What `cairn call` prints and its exit code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallResult {
    /// The text for stdout (a tool's result or error line).
    pub stdout: String,
    /// The text for stderr (protocol faults: bad JSON, unknown tool, bad arguments).
    pub stderr: String,
    /// 0 when the tool succeeded, 1 when it returned an error or the call was refused.
    pub code: i32,
}

/// Parses `json` (empty means `{}`) and dispatches `tool`. A tool error goes
/// to stdout with code 1 (it is the tool's text); a protocol fault goes to
/// stderr with code 1.
pub fn call(ctx: &mut ToolCtx<'_>, tool: &str, json: &str) -> CallResult {
    let args = if json.trim().is_empty() {
        Ok(Value::Object(Default::default()))
    } else {
        serde_json::from_str::<Value>(json)
    };
    let args = match args {
        Ok(v) if v.is_object() || v.is_null() => v,
        Ok(_) => {
            return fault(
                "arguments must be a JSON object, e.g. '{\"task_id\": \"...\"}'.".to_string(),
            );
        }
        Err(e) => return fault(format!("arguments are not valid JSON: {e}.")),
    };
    match dispatch(ctx, tool, args) {
        Ok(out) => CallResult {
            stdout: out.text,
            stderr: String::new(),
            code: if out.is_error { 1 } else { 0 },
        },
        Err(e) => fault(e.to_string()),
    }
}

fn fault(message: String) -> CallResult {
    CallResult {
        stdout: String::new(),
        stderr: message,
        code: 1,
    }
}
