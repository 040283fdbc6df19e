//! The generated part of `docs/tools.md`: every tool of the registry with
//! its capability, annotations, signature, description, parameters (from
//! the input schema) and structured result fields (from the output schema).
//! A test fails when the file on disk is stale.

use serde_json::Value;

use super::registry::tools;

/// Marks the start of the generated section in `docs/tools.md`.
pub const BEGIN: &str = "<!-- BEGIN GENERATED: cairn tools (src/tools/docs.rs) -->";
/// Marks its end.
pub const END: &str = "<!-- END GENERATED -->";

/// The generated markdown (between [`BEGIN`] and [`END`], markers included),
/// ending with a newline.
pub fn generated() -> String {
    let mut out = String::new();
    out.push_str(BEGIN);
    out.push_str("\n\n| Tool | Capability | One line |\n| --- | --- | --- |\n");
    for t in tools() {
        out.push_str(&format!(
            "| [`{}`](#{}) | `cairn/{}` | {} |\n",
            t.name, t.name, t.capability, t.summary
        ));
    }
    for t in tools() {
        out.push_str(&format!("\n### {}\n\n{}\n\n", t.name, t.description));
        out.push_str(&format!("Signature: `{}`\n\n", t.signature));
        out.push_str(&format!("Capability: `cairn/{}`. ", t.capability));
        out.push_str(&format!(
            "Annotations: {}.\n\n",
            annotations(t.read_only, t.destructive, t.idempotent)
        ));
        let schema = (t.schema)();
        let props = schema.get("properties").and_then(Value::as_object);
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        match props {
            Some(props) if !props.is_empty() => {
                out.push_str(
                    "| Parameter | Type | Required | Description |\n| --- | --- | --- | --- |\n",
                );
                for (name, p) in props {
                    out.push_str(&format!(
                        "| `{}` | {} | {} | {} |\n",
                        name,
                        type_of(p),
                        if required.contains(&name.as_str()) {
                            "yes"
                        } else {
                            "no"
                        },
                        p.get("description")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .replace('|', "\\|")
                    ));
                }
            }
            _ => out.push_str("No parameters.\n"),
        }
        out.push_str(&result_fields(&(t.output_schema)()));
    }
    out.push('\n');
    out.push_str(END);
    out.push('\n');
    out
}

/// The "Structured result" table of an output schema: one row per
/// top-level property (every one is always present).
fn result_fields(schema: &serde_json::Map<String, Value>) -> String {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return String::new();
    };
    let mut out = String::from(
        "\nStructured result (`structuredContent`, every field always present):\n\n| Field | Type | Description |\n| --- | --- | --- |\n",
    );
    for (name, p) in props {
        let ty = match p.get("type") {
            Some(Value::Array(a)) => a
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(" or "),
            _ => type_of(p),
        };
        out.push_str(&format!(
            "| `{}` | {} | {} |\n",
            name,
            ty,
            p.get("description")
                .and_then(Value::as_str)
                .unwrap_or("")
                .replace('\n', " ")
                .replace('|', "\\|")
        ));
    }
    out
}

fn annotations(read_only: bool, destructive: bool, idempotent: bool) -> String {
    if read_only {
        "read-only".to_string()
    } else {
        let mut v = vec!["writes"];
        if destructive {
            v.push("destructive");
        }
        if idempotent {
            v.push("idempotent");
        }
        v.join(", ")
    }
}

fn type_of(p: &Value) -> String {
    match p.get("type") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(Value::as_str)
            .filter(|s| *s != "null")
            .collect::<Vec<_>>()
            .join(" or "),
        _ => "any".to_string(),
    }
}

/// `text` with its generated section replaced by [`generated`] (appended
/// when the markers are missing).
pub fn refresh(text: &str) -> String {
    match (text.find(BEGIN), text.find(END)) {
        (Some(b), Some(e)) if e > b => {
            let tail = &text[e + END.len()..];
            let tail = tail.strip_prefix('\n').unwrap_or(tail);
            format!("{}{}{}", &text[..b], generated(), tail)
        }
        _ => format!("{text}\n{}", generated()),
    }
}
