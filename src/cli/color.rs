//! Colour on the command line (issue 12; docs/cli.md "Colour"): one global
//! choice — `--color auto|always|never`, with `auto` honouring `NO_COLOR`,
//! `CLICOLOR_FORCE` and whether the stream is a terminal — applied by
//! `anstream`, which strips the escapes from styled text when colour is off.
//! The styles are `anstyle` values; nothing here writes an escape by hand.

use anstream::ColorChoice;
use anstyle::{AnsiColor, Style};
use clap::ValueEnum;

/// `--color WHEN`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum ColorWhen {
    /// Colour when the stream is a terminal and `NO_COLOR` is unset or empty.
    #[default]
    Auto,
    /// Always colour, even into a pipe or file.
    Always,
    /// Never colour.
    Never,
}

/// Makes `when` the process-wide choice every `anstream` stream follows.
pub fn apply(when: ColorWhen) {
    match when {
        ColorWhen::Auto => ColorChoice::Auto,
        ColorWhen::Always => ColorChoice::Always,
        ColorWhen::Never => ColorChoice::Never,
    }
    .write_global();
}

/// True when styled text written to stderr keeps its colour (the global
/// choice, `NO_COLOR`, and whether stderr is a terminal) — for renderers
/// that take a flag rather than a stream (ariadne).
pub fn stderr_colored() -> bool {
    anstream::AutoStream::choice(&std::io::stderr()) != ColorChoice::Never
}

/// True when styled text written to stdout keeps its colour.
pub fn stdout_colored() -> bool {
    anstream::AutoStream::choice(&std::io::stdout()) != ColorChoice::Never
}

/// `text` as it should reach stdout: unchanged when stdout keeps colour,
/// else with its escapes stripped (`anstream::adapter::strip_str`) — for
/// output printed through a writer that does not strip (the REPL's).
pub fn for_stdout(text: &str) -> String {
    if stdout_colored() {
        text.to_string()
    } else {
        anstream::adapter::strip_str(text).to_string()
    }
}

/// The style of a task status: active green, open blue, blocked red,
/// completed dim, abandoned dim and struck through; anything else plain.
pub fn status_style(status: &str) -> Style {
    match status {
        "active" => AnsiColor::Green.on_default(),
        "open" => AnsiColor::Blue.on_default(),
        "blocked" => AnsiColor::Red.on_default().bold(),
        "completed" => Style::new().dimmed(),
        "abandoned" => Style::new().dimmed().strikethrough(),
        _ => Style::new(),
    }
}

/// The style of table headers and section headings: bold.
pub fn header_style() -> Style {
    Style::new().bold()
}

/// `text` wrapped in `style`'s escapes (and a reset). Plain when `style`
/// is plain.
pub fn paint(style: Style, text: &str) -> String {
    if style == Style::new() {
        text.to_string()
    } else {
        format!("{style}{text}{style:#}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paint_wraps_in_sgr_and_reset() {
        assert_eq!(
            paint(status_style("active"), "active"),
            "\x1b[32mactive\x1b[0m"
        );
        assert_eq!(paint(header_style(), "slug"), "\x1b[1mslug\x1b[0m");
        assert_eq!(paint(status_style("weird"), "weird"), "weird");
        assert_eq!(
            anstream::adapter::strip_str(&paint(status_style("blocked"), "blocked")).to_string(),
            "blocked"
        );
    }
}
