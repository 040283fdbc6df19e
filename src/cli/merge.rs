//! Merging the `cairn` server into a client's existing MCP configuration
//! (issue 27; docs/cli.md "cairn init"). Every byte of the file outside the
//! `cairn` entry is kept: for JSON the entry is spliced into the text at
//! the place serde_json's `RawValue` spans say (the servers object's
//! closing brace, indented as its other members), and the result is parsed
//! back and compared with the original before it is used; for TOML
//! (Codex) `toml_edit` edits the document and keeps its formatting. A file
//! that does not parse, or whose servers entry is not an object, is refused
//! with a sentence and left as it is.

use std::collections::BTreeMap;

use serde_json::Value;
use serde_json::value::RawValue;

/// What a merge decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Merge {
    /// The file already holds this very `cairn` entry: nothing to write.
    Unchanged,
    /// The file's new text, with `cairn` added (or, with `--force`,
    /// replaced).
    Text(String),
}

/// The refusal when a `cairn` entry that differs from ours is there and
/// `--force` was not given.
fn differs(shown: &str) -> String {
    format!(
        "{shown} already has a different cairn server; cairn init leaves it as it is (--force replaces that entry, keeping the others)."
    )
}

/// The indentation (spaces and tabs) of the line holding byte `at` of
/// `text`.
fn line_indent(text: &str, at: usize) -> String {
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    text[start..]
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect()
}

/// `value` pretty-printed with every line after the first indented by
/// `indent` (so it sits at that depth in a pretty-printed file).
fn pretty_at(value: &Value, indent: &str) -> Result<String, String> {
    let text = serde_json::to_string_pretty(value).map_err(|e| e.to_string())?;
    Ok(text.replace('\n', &format!("\n{indent}")))
}

/// The byte offset of `part` (a slice of `whole`) in `whole`.
fn offset(whole: &str, part: &str) -> Option<usize> {
    let (w, p) = (whole.as_ptr() as usize, part.as_ptr() as usize);
    (p >= w && p + part.len() <= w + whole.len()).then(|| p - w)
}

/// `text` with the member `"key": value` added to the JSON object spanning
/// `start..=end` (`{` .. `}`): after its last member, indented as its first
/// one (a compact object gets a compact member).
fn insert_member(
    text: &str,
    start: usize,
    end: usize,
    key: &str,
    value: &Value,
) -> Result<String, String> {
    let inner = &text[start + 1..end];
    let key_json = serde_json::to_string(key).map_err(|e| e.to_string())?;
    let outer = line_indent(text, start);
    if inner.trim().is_empty() {
        let ind = format!("{outer}  ");
        let member = format!("{key_json}: {}", pretty_at(value, &ind)?);
        return Ok(format!(
            "{}{{\n{ind}{member}\n{outer}}}{}",
            &text[..start],
            &text[end + 1..]
        ));
    }
    let first = start + 1 + inner.len() - inner.trim_start().len();
    let last = start + 1 + inner.trim_end().len();
    let member = if inner.contains('\n') {
        let ind = line_indent(text, first);
        format!(",\n{ind}{key_json}: {}", pretty_at(value, &ind)?)
    } else {
        let compact = serde_json::to_string(value).map_err(|e| e.to_string())?;
        format!(", {key_json}: {compact}")
    };
    Ok(format!("{}{member}{}", &text[..last], &text[last..]))
}

/// Merges the server `ours` as `cairn` under `servers_key` (`mcpServers`
/// or `servers`) into the JSON text `existing` of the file `shown`.
/// Errors: the sentence saying why the file is left as it is.
pub fn merge_json(
    existing: &str,
    servers_key: &str,
    ours: &Value,
    force: bool,
    shown: &str,
) -> Result<Merge, String> {
    let leave = |why: String| format!("{shown} {why}; cairn init leaves it as it is.");
    let original: Value =
        serde_json::from_str(existing).map_err(|e| leave(format!("is not valid JSON ({e})")))?;
    let Value::Object(top_values) = &original else {
        return Err(leave("is not a JSON object".into()));
    };
    let top: BTreeMap<String, &RawValue> =
        serde_json::from_str(existing).map_err(|e| leave(format!("is not valid JSON ({e})")))?;
    let cant = || {
        leave("could not be merged (its layout is unusual); add the cairn server by hand".into())
    };
    let merged = match top.get(servers_key) {
        None => {
            let start = existing.len() - existing.trim_start().len();
            let end = existing.trim_end().len().checked_sub(1).ok_or_else(cant)?;
            let mut servers = serde_json::Map::new();
            servers.insert("cairn".into(), ours.clone());
            insert_member(existing, start, end, servers_key, &Value::Object(servers))?
        }
        Some(raw) => {
            let servers: BTreeMap<String, &RawValue> = serde_json::from_str(raw.get())
                .map_err(|_| leave(format!("has a {servers_key} that is not an object")))?;
            let at = offset(existing, raw.get()).ok_or_else(cant)?;
            match servers.get("cairn") {
                Some(mine) => {
                    let have: Value =
                        serde_json::from_str(mine.get()).map_err(|e| leave(e.to_string()))?;
                    if have == *ours {
                        return Ok(Merge::Unchanged);
                    }
                    if !force {
                        return Err(differs(shown));
                    }
                    let from = offset(existing, mine.get()).ok_or_else(cant)?;
                    let ind = line_indent(existing, from);
                    format!(
                        "{}{}{}",
                        &existing[..from],
                        pretty_at(ours, &ind)?,
                        &existing[from + mine.get().len()..]
                    )
                }
                None => insert_member(existing, at, at + raw.get().len() - 1, "cairn", ours)?,
            }
        }
    };
    // The safety net: the merged text parses, holds our entry, and every
    // other value is the one the file had.
    let check: Value = serde_json::from_str(&merged).map_err(|_| cant())?;
    let Value::Object(after) = &check else {
        return Err(cant());
    };
    let mut expected = top_values.clone();
    let mut servers = match expected.remove(servers_key) {
        Some(Value::Object(m)) => m,
        _ => serde_json::Map::new(),
    };
    servers.insert("cairn".into(), ours.clone());
    expected.insert(servers_key.into(), Value::Object(servers));
    if *after != expected {
        return Err(cant());
    }
    Ok(Merge::Text(merged))
}

/// Merges `[mcp_servers.cairn]` (command `cairn`, args `["serve"]`) into
/// the TOML text `existing` of the file `shown` (Codex's `config.toml`),
/// keeping its formatting (toml_edit). Errors: the sentence saying why the
/// file is left as it is.
pub fn merge_toml(existing: &str, force: bool, shown: &str) -> Result<Merge, String> {
    use toml_edit::{Array, DocumentMut, InlineTable, Item, Table, Value as TValue};
    let leave = |why: String| format!("{shown} {why}; cairn init leaves it as it is.");
    let mut doc: DocumentMut = existing.parse().map_err(|e: toml_edit::TomlError| {
        leave(format!("is not valid TOML ({})", e.message().trim()))
    })?;
    let args: Array = ["serve"].into_iter().collect();
    let is_ours = |command: Option<&str>, args: Option<Vec<String>>, keys: usize| {
        command == Some("cairn") && args.as_deref() == Some(&["serve".to_string()][..]) && keys == 2
    };
    let strings = |a: Option<&Array>| {
        a.map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect::<Vec<_>>()
        })
    };
    let servers = doc.entry("mcp_servers").or_insert_with(|| {
        let mut t = Table::new();
        t.set_implicit(true);
        Item::Table(t)
    });
    match servers {
        Item::Table(t) => {
            if let Some(have) = t.get("cairn") {
                let same = match have {
                    Item::Table(c) => is_ours(
                        c.get("command").and_then(Item::as_str),
                        strings(c.get("args").and_then(Item::as_array)),
                        c.len(),
                    ),
                    Item::Value(TValue::InlineTable(c)) => is_ours(
                        c.get("command").and_then(TValue::as_str),
                        strings(c.get("args").and_then(TValue::as_array)),
                        c.len(),
                    ),
                    _ => false,
                };
                if same {
                    return Ok(Merge::Unchanged);
                }
                if !force {
                    return Err(differs(shown));
                }
            }
            let mut c = Table::new();
            c.insert("command", toml_edit::value("cairn"));
            c.insert("args", Item::Value(TValue::Array(args)));
            t.insert("cairn", Item::Table(c));
        }
        Item::Value(TValue::InlineTable(t)) => {
            if let Some(have) = t.get("cairn") {
                let same = have.as_inline_table().is_some_and(|c| {
                    is_ours(
                        c.get("command").and_then(TValue::as_str),
                        strings(c.get("args").and_then(TValue::as_array)),
                        c.len(),
                    )
                });
                if same {
                    return Ok(Merge::Unchanged);
                }
                if !force {
                    return Err(differs(shown));
                }
            }
            let mut c = InlineTable::new();
            c.insert("command", TValue::from("cairn"));
            c.insert("args", TValue::Array(args));
            t.insert("cairn", TValue::InlineTable(c));
        }
        _ => return Err(leave("has an mcp_servers that is not a table".into())),
    }
    Ok(Merge::Text(doc.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ours() -> Value {
        json!({"command": "cairn", "args": ["serve"]})
    }

    #[test]
    fn json_keeps_other_servers_byte_for_byte() {
        let before = "{\n    \"mcpServers\": {\n        \"other\": { \"command\": \"x\",\n   \"args\": [] }\n    },\n    \"z\": 1\n}\n";
        let Merge::Text(after) =
            merge_json(before, "mcpServers", &ours(), false, ".mcp.json").unwrap()
        else {
            panic!("unchanged")
        };
        assert_eq!(
            after,
            "{\n    \"mcpServers\": {\n        \"other\": { \"command\": \"x\",\n   \"args\": [] },\n        \"cairn\": {\n          \"args\": [\n            \"serve\"\n          ],\n          \"command\": \"cairn\"\n        }\n    },\n    \"z\": 1\n}\n"
        );
        assert_eq!(
            merge_json(&after, "mcpServers", &ours(), false, ".mcp.json"),
            Ok(Merge::Unchanged)
        );
    }

    #[test]
    fn json_adds_the_servers_object_and_handles_empty_and_compact() {
        let Merge::Text(a) = merge_json("{}", "servers", &ours(), false, "f").unwrap() else {
            panic!()
        };
        let v: Value = serde_json::from_str(&a).unwrap();
        assert_eq!(v["servers"]["cairn"], ours());
        let Merge::Text(b) = merge_json(
            "{\"mcpServers\":{\"o\":1}}",
            "mcpServers",
            &ours(),
            false,
            "f",
        )
        .unwrap() else {
            panic!()
        };
        assert_eq!(
            b,
            "{\"mcpServers\":{\"o\":1, \"cairn\": {\"args\":[\"serve\"],\"command\":\"cairn\"}}}"
        );
    }

    #[test]
    fn json_refusals() {
        let e = merge_json("{,", "mcpServers", &ours(), false, ".mcp.json").unwrap_err();
        assert!(e.starts_with(".mcp.json is not valid JSON ("), "{e}");
        assert!(e.ends_with("; cairn init leaves it as it is."), "{e}");
        assert_eq!(
            merge_json("[]", "mcpServers", &ours(), false, ".mcp.json").unwrap_err(),
            ".mcp.json is not a JSON object; cairn init leaves it as it is."
        );
        assert_eq!(
            merge_json(
                "{\"mcpServers\": 3}",
                "mcpServers",
                &ours(),
                false,
                ".mcp.json"
            )
            .unwrap_err(),
            ".mcp.json has a mcpServers that is not an object; cairn init leaves it as it is."
        );
        let other = "{\"mcpServers\": {\"cairn\": {\"command\": \"/opt/cairn\"}}}";
        assert_eq!(
            merge_json(other, "mcpServers", &ours(), false, "f").unwrap_err(),
            differs("f")
        );
        let Merge::Text(forced) = merge_json(other, "mcpServers", &ours(), true, "f").unwrap()
        else {
            panic!()
        };
        let v: Value = serde_json::from_str(&forced).unwrap();
        assert_eq!(v["mcpServers"]["cairn"], ours());
    }

    #[test]
    fn toml_keeps_the_rest() {
        let before = "# mine\nmodel = \"o3\"\n\n[mcp_servers.other]\ncommand = \"x\"  # keep\n";
        let Merge::Text(after) = merge_toml(before, false, "c").unwrap() else {
            panic!()
        };
        assert!(after.starts_with(before), "{after}");
        assert!(
            after.contains("[mcp_servers.cairn]\ncommand = \"cairn\"\nargs = [\"serve\"]\n"),
            "{after}"
        );
        assert_eq!(merge_toml(&after, false, "c"), Ok(Merge::Unchanged));
        let e = merge_toml("a = ", false, "c").unwrap_err();
        assert!(e.starts_with("c is not valid TOML ("), "{e}");
        assert_eq!(
            merge_toml("mcp_servers = 1\n", false, "c").unwrap_err(),
            "c has an mcp_servers that is not a table; cairn init leaves it as it is."
        );
    }
}
