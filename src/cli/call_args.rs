//! `cairn call TOOL [ARGS...]` arguments (issue 12; docs/cli.md "cairn
//! call"): one JSON object as before, or `key=value` words. A value is a
//! string where the tool's input schema allows a string; elsewhere
//! (booleans, numbers) it is read as JSON when it parses (`full=true`,
//! `limit=5`), else kept as a string for the tool to refuse. `key:=JSON`
//! always reads the value as JSON. Unknown tools get the nearest name.

use serde_json::{Map, Value};

use crate::tools::{ToolSpec, tools};

/// The arguments of `tool` from the command-line `words`: empty → `{}`; one
/// word starting with `{` → that JSON text, unchanged (the tool call
/// reports a parse error); else every word is `key=value` or `key:=JSON`.
/// Errors: a word without `=` (`expected key=value (or one JSON object), got WORD.`), an empty
/// key, a `:=` value that is not JSON, a key given twice.
pub fn call_arguments(tool: &ToolSpec, words: &[String]) -> Result<String, String> {
    match words {
        [] => return Ok("{}".to_string()),
        [one] if one.trim_start().starts_with('{') => return Ok(one.clone()),
        _ => {}
    }
    let schema = (tool.schema)();
    let mut args = Map::new();
    for w in words {
        // The first `=` splits; a key ending in `:` marks `key:=JSON`.
        let Some((k, v)) = w.split_once('=') else {
            return Err(format!("expected key=value (or one JSON object), got {w}."));
        };
        let (key, value) = match k.strip_suffix(':') {
            Some(k) => {
                let v = serde_json::from_str::<Value>(v)
                    .map_err(|e| format!("{k}:= needs a JSON value ({e})."))?;
                (k, v)
            }
            None => (k, typed(&schema, k, v)),
        };
        if key.is_empty() {
            return Err(format!("a key is missing in {w}."));
        }
        if args.insert(key.to_string(), value).is_some() {
            return Err(format!("{key} is given twice."));
        }
    }
    Ok(Value::Object(args).to_string())
}

/// `value` for property `key`: a string when the schema allows a string
/// (or does not know the key), else its JSON reading when it has one.
fn typed(schema: &Map<String, Value>, key: &str, value: &str) -> Value {
    let prop = schema.get("properties").and_then(|p| p.get(key));
    if prop.is_none_or(allows_string) {
        return Value::String(value.to_string());
    }
    serde_json::from_str::<Value>(value).unwrap_or_else(|_| Value::String(value.to_string()))
}

/// True when a property schema admits a string: `type` is (or lists)
/// `string`, or it names no type at all (and no `anyOf` without one).
fn allows_string(prop: &Value) -> bool {
    match prop.get("type") {
        Some(Value::String(t)) => t == "string",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "string"),
        _ => match prop.get("anyOf").or_else(|| prop.get("oneOf")) {
            Some(Value::Array(alts)) => alts.iter().any(allows_string),
            _ => true,
        },
    }
}

/// `Unknown tool NAME; did you mean NEAREST?` (or `…; cairn call --help
/// lists the tools.` when nothing is near), by the TQ checker's edit
/// distance rule.
pub fn unknown_tool(name: &str) -> String {
    let shown = crate::tq::check::shown_name(name);
    match crate::tq::check::suggest(name, tools().iter().map(|t| t.name)) {
        Some(near) => format!("Unknown tool {shown}; did you mean {near}?"),
        None => format!("Unknown tool {shown}; cairn call --help lists the tools."),
    }
}

/// The tools as `cairn call --help` lists them: `  NAME  SUMMARY`, names
/// padded to one column.
pub fn tools_help() -> String {
    let width = tools().iter().map(|t| t.name.len()).max().unwrap_or(0);
    let mut out = String::from("Tools:\n");
    for t in tools() {
        out.push_str(&format!("  {:width$}  {}\n", t.name, t.summary));
    }
    out.push_str(
        "\nExamples:\n  \
cairn call task_create name=\"tune search ranking\"\n  \
cairn call timeline task_id=SLUG full=true limit=5\n  \
cairn call task_query '{\"query\": \"(-> (active) (:ids))\"}'",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::find;

    fn args(tool: &str, words: &[&str]) -> Result<String, String> {
        let t = find(tool).unwrap();
        call_arguments(t, &words.iter().map(|w| w.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn key_value_words() {
        assert_eq!(
            args("task_create", &["name=tune search ranking"]).unwrap(),
            r#"{"name":"tune search ranking"}"#
        );
        assert_eq!(
            args("timeline", &["full=true", "limit=5"]).unwrap(),
            r#"{"full":true,"limit":5}"#
        );
        // A string-typed property keeps digits as text.
        assert_eq!(args("observe", &["text=42"]).unwrap(), r#"{"text":"42"}"#);
        assert_eq!(
            args("observe", &["text:=\"x\"", "task_id=a=b"]).unwrap(),
            r#"{"task_id":"a=b","text":"x"}"#
        );
        assert_eq!(args("observe", &[]).unwrap(), "{}");
        assert_eq!(
            args("observe", &[r#"{"text": 1}"#]).unwrap(),
            r#"{"text": 1}"#
        );
    }

    #[test]
    fn bad_words() {
        assert_eq!(
            args("observe", &["text"]).unwrap_err(),
            "expected key=value (or one JSON object), got text."
        );
        assert_eq!(
            args("observe", &["=x"]).unwrap_err(),
            "a key is missing in =x."
        );
        assert_eq!(
            args("observe", &["text=a", "text=b"]).unwrap_err(),
            "text is given twice."
        );
        assert!(
            args("observe", &["text:=nope"])
                .unwrap_err()
                .starts_with("text:= needs a JSON value (")
        );
    }

    #[test]
    fn suggestions() {
        assert_eq!(
            unknown_tool("task_creat"),
            "Unknown tool task_creat; did you mean task_create?"
        );
        assert_eq!(
            unknown_tool("zzzzzzzzzzzzzz"),
            "Unknown tool zzzzzzzzzzzzzz; cairn call --help lists the tools."
        );
    }
}
