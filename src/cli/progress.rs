//! Progress on long work (issue 27; docs/cli.md "Progress"): `cairn
//! import`, `rebuild` and `verify` show an indicatif spinner with the
//! elapsed time on stderr while they run, then one summary line
//! (`cairn: rebuild took 1.24 s`) — only when stderr is a terminal. Piped,
//! nothing is drawn and nothing is added, so scripts read the same output
//! as before. The store reports no counts as it goes, so the bar is a
//! spinner with a clock rather than a fraction.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A running operation's progress display.
pub struct Progress {
    bar: Option<ProgressBar>,
    what: &'static str,
    start: Instant,
}

/// Whether progress is drawn: stderr is a terminal.
pub fn shown() -> bool {
    std::io::stderr().is_terminal()
}

impl Progress {
    /// Starts the display for `what` (`rebuild`, `verify`, `import`): a
    /// spinner, the words `WHAT…` and the elapsed time, ticking every
    /// 100 ms; nothing when stderr is not a terminal.
    pub fn start(what: &'static str) -> Progress {
        let bar = shown().then(|| {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            let style = ProgressStyle::with_template("{spinner} {msg} {elapsed_precise}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner());
            bar.set_style(style);
            bar.set_message(format!("{what}…"));
            bar.enable_steady_tick(Duration::from_millis(100));
            bar.tick();
            bar
        });
        Progress {
            bar,
            what,
            start: Instant::now(),
        }
    }

    /// Clears the spinner and, on a terminal, prints `cairn: WHAT took
    /// S.SS s` on stderr.
    pub fn finish(self) {
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
            super::out::emit_err(&summary(self.what, self.start.elapsed()));
        }
    }
}

/// The closing line: `cairn: WHAT took S.SS s`.
pub fn summary(what: &str, took: Duration) -> String {
    format!("cairn: {what} took {:.2} s", took.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_line() {
        assert_eq!(
            summary("rebuild", Duration::from_millis(1_234)),
            "cairn: rebuild took 1.23 s"
        );
    }
}
