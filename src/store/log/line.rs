//! One log line: the canonical JSON of an event row minus `seq`
//! (spec/store.md "The plan travels with the repository", Layout): keys
//! `data, event_id, event_key, prev_session_id, session_id, task_id, ts,
//! type` in that (sorted) order, no spaces, `\n`-terminated.

use serde_json::Value;

use crate::store::event::{canonical_json, event_key};

/// An event row as a log line carries it (every `events` column but `seq`).
#[derive(Debug, Clone, PartialEq)]
pub struct LogLine {
    /// The ULID.
    pub event_id: String,
    /// The content key (64 lower-hex chars).
    pub event_key: String,
    /// The subject's bare slug (names the log file).
    pub task_id: String,
    /// The event type.
    pub event_type: String,
    /// Unix seconds, UTC.
    pub ts: i64,
    /// The writing session.
    pub session_id: String,
    /// The previous distinct session that wrote the task, if any.
    pub prev_session_id: Option<String>,
    /// The canonical JSON text of `data`.
    pub data: String,
}

/// A line that parsed and whose content key matches its content.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedLine {
    /// The event.
    pub line: LogLine,
    /// Its `data`, parsed.
    pub data: Value,
}

impl LogLine {
    /// The line's text with its final `\n`.
    pub fn encode(&self) -> String {
        let s = |v: &str| Value::from(v).to_string();
        let prev = self
            .prev_session_id
            .as_deref()
            .map_or_else(|| "null".to_string(), s);
        format!(
            "{{\"data\":{},\"event_id\":{},\"event_key\":{},\"prev_session_id\":{},\"session_id\":{},\"task_id\":{},\"ts\":{},\"type\":{}}}\n",
            self.data,
            s(&self.event_id),
            s(&self.event_key),
            prev,
            s(&self.session_id),
            s(&self.task_id),
            self.ts,
            s(&self.event_type),
        )
    }

    /// Parses one line (without its `\n`). Accepts any key order and extra
    /// keys; requires string `event_id`, `event_key`, `task_id`, `type`,
    /// `session_id`, an integer `ts`, a string or null `prev_session_id`, an
    /// object `data`, and an `event_key` equal to the key of the content.
    /// Errors: one short phrase saying what is wrong (`not JSON`, `no
    /// event_key`, `event_key does not match the content`, ...).
    pub fn parse(text: &str) -> Result<ParsedLine, String> {
        let value: Value = serde_json::from_str(text).map_err(|_| "not JSON".to_string())?;
        let Value::Object(obj) = value else {
            return Err("not a JSON object".to_string());
        };
        let string = |k: &str| match obj.get(k) {
            Some(Value::String(s)) if !s.is_empty() => Ok(s.clone()),
            _ => Err(format!("no {k}")),
        };
        let ts = obj
            .get("ts")
            .and_then(Value::as_i64)
            .ok_or_else(|| "no integer ts".to_string())?;
        let prev_session_id = match obj.get("prev_session_id") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => return Err("prev_session_id is not a string".to_string()),
        };
        let data = match obj.get("data") {
            Some(d @ Value::Object(_)) => d.clone(),
            _ => return Err("data is not an object".to_string()),
        };
        let line = LogLine {
            event_id: string("event_id")?,
            event_key: string("event_key")?,
            task_id: string("task_id")?,
            event_type: string("type")?,
            ts,
            session_id: obj
                .get("session_id")
                .and_then(Value::as_str)
                .ok_or_else(|| "no session_id".to_string())?
                .to_string(),
            prev_session_id,
            data: canonical_json(&data),
        };
        let key = event_key(
            &line.task_id,
            &line.event_type,
            line.ts,
            &line.session_id,
            &line.data,
        );
        if key != line.event_key {
            return Err("event_key does not match the content".to_string());
        }
        Ok(ParsedLine { line, data })
    }
}

/// The `event_key` of a canonical line without parsing it all: the 64
/// characters after `"event_key":"`, when present.
pub fn quick_key(text: &str) -> Option<&str> {
    const TAG: &str = "\"event_key\":\"";
    let start = text.find(TAG)? + TAG.len();
    text.get(start..start + 64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> LogLine {
        let data = canonical_json(&serde_json::json!({"text": "hi \"there\"\n"}));
        LogLine {
            event_id: "01J00000000000000000000000".to_string(),
            event_key: event_key("2026-01-01-a", "observation", 5, "s1", &data),
            task_id: "2026-01-01-a".to_string(),
            event_type: "observation".to_string(),
            ts: 5,
            session_id: "s1".to_string(),
            prev_session_id: None,
            data,
        }
    }

    #[test]
    fn encode_is_canonical_and_round_trips() {
        let l = sample();
        let text = l.encode();
        let expected = format!(
            "{{\"data\":{{\"text\":\"hi \\\"there\\\"\\n\"}},\"event_id\":\"01J00000000000000000000000\",\"event_key\":\"{}\",\"prev_session_id\":null,\"session_id\":\"s1\",\"task_id\":\"2026-01-01-a\",\"ts\":5,\"type\":\"observation\"}}\n",
            l.event_key
        );
        assert_eq!(text, expected);
        let v: Value = serde_json::from_str(text.trim_end()).unwrap();
        assert_eq!(canonical_json(&v), text.trim_end());
        assert_eq!(LogLine::parse(text.trim_end()).unwrap().line, l);
        assert_eq!(quick_key(&text), Some(l.event_key.as_str()));
    }

    #[test]
    fn bad_lines_are_named() {
        assert_eq!(LogLine::parse("{\"data\":").unwrap_err(), "not JSON");
        assert_eq!(LogLine::parse("<<<<<<< HEAD").unwrap_err(), "not JSON");
        assert_eq!(LogLine::parse("[1]").unwrap_err(), "not a JSON object");
        let tampered = sample().encode().replace("hi", "ho");
        assert_eq!(
            LogLine::parse(tampered.trim_end()).unwrap_err(),
            "event_key does not match the content"
        );
    }
}
