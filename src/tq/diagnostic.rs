//! The one error type of TQ (spec/tq.md §7): a message, the byte span it is
//! about, and an optional help line; rendered plain for MCP or with ariadne
//! (source line, caret, message, help) for the CLI and REPL.

use std::fmt;

use ariadne::{Config, IndexType, Label, Report, ReportKind, Source};

use crate::tq::ast::Span;

/// Which stage failed; decides the plain prefix (spec/tq.md §7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiagKind {
    /// Lexing or parsing failed: `Parse error: MSG`.
    Parse,
    /// The query is well formed but wrong (checker, planner): `Query error: MSG`.
    Query,
    /// SQLite failed for a reason that is not the user's fault:
    /// `The query could not be executed.`
    Execution,
}

/// A TQ error: what went wrong, where (byte span into the query text), and
/// an optional help line shown by the ariadne rendering only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// The stage that failed.
    pub kind: DiagKind,
    /// One sentence, the exact user-visible text of spec/tq.md §7 (suggestion included).
    pub message: String,
    /// Byte range of the offending text, when there is one.
    pub span: Option<Span>,
    /// A hint shown under the ariadne report (`help: ...`); never in the plain text.
    pub help: Option<String>,
}

impl Diagnostic {
    /// A parse error (lexer or parser) at `span`.
    pub fn parse(message: impl Into<String>, span: Span) -> Diagnostic {
        Diagnostic {
            kind: DiagKind::Parse,
            message: message.into(),
            span: Some(span),
            help: None,
        }
    }

    /// A query error (checker or planner), at `span` when known.
    pub fn query(message: impl Into<String>, span: Option<Span>) -> Diagnostic {
        Diagnostic {
            kind: DiagKind::Query,
            message: message.into(),
            span,
            help: None,
        }
    }

    /// An execution failure; `detail` is kept in `message` for the log line but
    /// the plain rendering is always `The query could not be executed.`
    pub fn execution(detail: impl Into<String>) -> Diagnostic {
        Diagnostic {
            kind: DiagKind::Execution,
            message: detail.into(),
            span: None,
            help: None,
        }
    }

    /// Adds a help line (ariadne rendering only).
    pub fn with_help(self, help: impl Into<String>) -> Diagnostic {
        Diagnostic {
            help: Some(help.into()),
            ..self
        }
    }

    /// The MCP text (spec/tq.md §7): `Parse error: MSG`, `Query error: MSG`
    /// or `The query could not be executed.`
    pub fn render_plain(&self) -> String {
        match self.kind {
            DiagKind::Parse => format!("Parse error: {}", self.message),
            DiagKind::Query => format!("Query error: {}", self.message),
            DiagKind::Execution => "The query could not be executed.".to_string(),
        }
    }

    /// The CLI/REPL text: an ariadne report with the source line, a caret
    /// under the span (clamped to `source`), the message and the help line.
    /// ANSI colour only when `color`. Without a span, the plain text plus help.
    pub fn render_ariadne(&self, source: &str, color: bool) -> String {
        let Some(span) = self.span.clone() else {
            let mut out = self.render_plain();
            if let Some(help) = &self.help {
                out.push_str("\nhelp: ");
                out.push_str(help);
            }
            return out;
        };
        let span = clamp_span(source, span);
        let title = match self.kind {
            DiagKind::Parse => "Parse error",
            DiagKind::Query => "Query error",
            DiagKind::Execution => "Execution error",
        };
        let config = Config::default()
            .with_color(color)
            .with_index_type(IndexType::Byte);
        let mut builder = Report::build(
            ReportKind::Custom(title, ariadne::Color::Red),
            ("query", span.clone()),
        )
        .with_config(config)
        .with_message(&self.message)
        .with_label(Label::new(("query", span)).with_message(&self.message));
        if let Some(help) = &self.help {
            builder = builder.with_help(help);
        }
        let mut buf = Vec::new();
        match builder
            .finish()
            .write(("query", Source::from(source)), &mut buf)
        {
            Ok(()) => {
                let text = String::from_utf8_lossy(&buf).into_owned();
                // ariadne colours a custom report kind even with colour off.
                if color { text } else { strip_ansi(&text) }
            }
            Err(_) => self.render_plain(),
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render_plain())
    }
}

impl std::error::Error for Diagnostic {}

/// Clamps `span` into `source` on char boundaries.
fn clamp_span(source: &str, span: Span) -> Span {
    let mut start = span.start.min(source.len());
    while !source.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = span.end.clamp(start, source.len());
    while !source.is_char_boundary(end) {
        end += 1;
    }
    start..end
}

/// Removes ANSI escape sequences (`anstream`'s stripper).
fn strip_ansi(text: &str) -> String {
    anstream::adapter::strip_str(text).to_string()
}
