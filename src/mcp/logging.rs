//! The MCP `logging` capability (spec/mcp.md "Wave 2", "Logging"): cairn's
//! own diagnostics (`tracing` events whose target starts with `cairn`) raised
//! while a tool call runs are captured on the calling thread and sent to that
//! session's client as `notifications/message`, at or above the level the
//! client chose with `logging/setLevel` (default `warning`). They go to
//! stderr as well, through the usual filter (`CAIRN_LOG`, default `warn`).
//!
//! Capture is per thread, so each session (stdio, or one HTTP session among
//! many) receives only the diagnostics of its own calls.
#![allow(deprecated)] // rmcp marks Logging deprecated (SEP-2577); MCP clients still use it.

use std::cell::RefCell;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU8, Ordering};

use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use serde_json::Value;
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, Layer};

/// The logger name on every message cairn sends.
pub const LOGGER: &str = "cairn";

/// At most this many characters of one diagnostic are sent or shown: log
/// lines may quote user input, which is capped (issue 14).
pub const MAX_LOG_CHARS: usize = 500;

/// One captured diagnostic: its MCP level and its text.
#[derive(Debug, Clone, PartialEq)]
pub struct LogLine {
    /// The MCP severity.
    pub level: LoggingLevel,
    /// The message and its fields (`message key=value …`), capped at
    /// [`MAX_LOG_CHARS`].
    pub text: String,
}

impl LogLine {
    /// The `notifications/message` params: level, logger `cairn`, data the text.
    pub fn to_param(&self) -> LoggingMessageNotificationParam {
        let mut p =
            LoggingMessageNotificationParam::new(self.level, Value::from(self.text.clone()));
        p.logger = Some(LOGGER.to_string());
        p
    }
}

/// The rank of an MCP level, `debug` 0 … `emergency` 7.
pub fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

fn from_tracing(level: &Level) -> LoggingLevel {
    match *level {
        Level::ERROR => LoggingLevel::Error,
        Level::WARN => LoggingLevel::Warning,
        Level::INFO => LoggingLevel::Info,
        _ => LoggingLevel::Debug,
    }
}

/// A session's minimum level for `notifications/message` (set by
/// `logging/setLevel`; `warning` until then).
#[derive(Debug)]
pub struct LevelCell(AtomicU8);

impl Default for LevelCell {
    fn default() -> Self {
        LevelCell(AtomicU8::new(rank(LoggingLevel::Warning)))
    }
}

impl LevelCell {
    /// Sets the minimum level.
    pub fn set(&self, level: LoggingLevel) {
        self.0.store(rank(level), Ordering::SeqCst);
    }

    /// Whether a message at `level` is sent.
    pub fn admits(&self, level: LoggingLevel) -> bool {
        rank(level) >= self.0.load(Ordering::SeqCst)
    }
}

thread_local! {
    static CAPTURE: RefCell<Option<Vec<LogLine>>> = const { RefCell::new(None) };
}

/// Runs `f` capturing the cairn diagnostics it raises on this thread;
/// returns its value and the captured lines (oldest first).
pub fn capture<T>(f: impl FnOnce() -> T) -> (T, Vec<LogLine>) {
    let outer = CAPTURE.with(|c| c.borrow_mut().replace(Vec::new()));
    let value = f();
    let lines = CAPTURE.with(|c| std::mem::replace(&mut *c.borrow_mut(), outer));
    (value, lines.unwrap_or_default())
}

/// Cuts `s` to at most `max` characters, marking a cut with `…` and the
/// original length: `abc… (100000 characters)`. Used for every piece of user
/// input a log line or a protocol error quotes.
pub fn clip(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_string(),
        Some((at, _)) => format!("{}… ({} characters)", &s[..at], s.chars().count()),
    }
}

/// The `tracing` layer that feeds [`capture`]: it records events whose
/// target starts with `cairn` when the current thread is capturing. Install
/// it with [`capture_filter`] as its per-layer filter, so it neither mutes
/// nor widens the stderr layer.
#[derive(Debug, Default, Clone, Copy)]
pub struct CaptureLayer;

struct Text(String);

impl Visit for Text {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(
                self.0,
                "{}{value:?}",
                if self.0.is_empty() { "" } else { " " }
            );
        } else {
            let _ = write!(self.0, " {}={value:?}", field.name());
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            let _ = write!(
                self.0,
                "{}{value}",
                if self.0.is_empty() { "" } else { " " }
            );
        } else {
            let _ = write!(self.0, " {}={value}", field.name());
        }
    }
}

impl<S: Subscriber> Layer<S> for CaptureLayer {
    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let meta = event.metadata();
        if !meta.target().starts_with("cairn") || CAPTURE.with(|c| c.borrow().is_none()) {
            return;
        }
        let mut text = Text(String::new());
        event.record(&mut text);
        let line = LogLine {
            level: from_tracing(meta.level()),
            text: clip(text.0.trim_start(), MAX_LOG_CHARS),
        };
        CAPTURE.with(|c| {
            if let Some(v) = c.borrow_mut().as_mut() {
                v.push(line);
            }
        });
    }
}

/// The per-layer filter of [`CaptureLayer`]: cairn's own events, any level.
pub fn capture_filter() -> tracing_subscriber::filter::FilterFn {
    tracing_subscriber::filter::FilterFn::new(is_cairn as fn(&tracing::Metadata<'_>) -> bool)
}

fn is_cairn(meta: &tracing::Metadata<'_>) -> bool {
    meta.target().starts_with("cairn")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_keeps_short_text_and_marks_a_cut() {
        assert_eq!(clip("abc", 3), "abc");
        assert_eq!(clip("abcd", 3), "abc… (4 characters)");
        assert_eq!(clip("ééééé", 2), "éé… (5 characters)");
    }

    #[test]
    fn levels_rank_in_order_and_the_default_is_warning() {
        let cell = LevelCell::default();
        assert!(!cell.admits(LoggingLevel::Info));
        assert!(cell.admits(LoggingLevel::Warning));
        cell.set(LoggingLevel::Debug);
        assert!(cell.admits(LoggingLevel::Debug));
        cell.set(LoggingLevel::Emergency);
        assert!(!cell.admits(LoggingLevel::Alert));
    }
}
