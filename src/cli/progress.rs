//! Progress on long work (issue 27; docs/cli.md "Progress"): `cairn
//! import`, `rebuild` and `verify` show an indicatif spinner with the
//! elapsed time on stderr while they run, then one summary line
//! (`cairn: rebuild took 1.24 s`) — only when stderr is a terminal. Piped,
//! nothing is drawn and nothing is added, so scripts read the same output
//! as before.
//!
//! Issue 23: the store reports its stages and counts
//! (`store::progress`), and [`install`] turns them into a bar: the
//! spinner of a running command becomes `rebuild: folding events [====>
//! ] 120000/1670000`, and a database built from the task logs inside any
//! command's open (a fresh clone's first command) gets a bar of its own
//! once the work has lasted 300 ms, cleared before the command prints.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::store::progress::{Stage, set_sink};

/// A running operation's progress display.
pub struct Progress {
    bar: Option<ProgressBar>,
    what: &'static str,
    start: Instant,
}

/// The bar the store's reports move, shared with [`Progress`].
struct Shared {
    /// The bar on screen, if any.
    bar: Option<ProgressBar>,
    /// The command's own words when the bar is a [`Progress`]'s; `None`
    /// when the sink made the bar itself (and so clears it on `Done`).
    what: Option<&'static str>,
    /// When the current run of reports began.
    first: Option<Instant>,
    /// The stage and whether it counts, as last drawn.
    drawn: Option<(Stage, bool)>,
}

static SHARED: Mutex<Shared> = Mutex::new(Shared {
    bar: None,
    what: None,
    first: None,
    drawn: None,
});

/// How long store work runs before a bar of its own appears.
const QUIET: Duration = Duration::from_millis(300);

/// Installs the store's progress sink when stderr is a terminal (nothing
/// otherwise: a pipe gets no progress at all).
pub fn install() {
    if shown() {
        set_sink(Box::new(on_report));
    }
}

/// A spinner on stderr, ticking every 100 ms.
fn spinner(message: String) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    let style = ProgressStyle::with_template("{spinner} {msg} {elapsed_precise}")
        .unwrap_or_else(|_| ProgressStyle::default_spinner());
    bar.set_style(style);
    bar.set_message(message);
    bar.enable_steady_tick(Duration::from_millis(100));
    bar.tick();
    bar
}

/// The sink: moves the shared bar (see the module docs).
fn on_report(stage: Stage, done: u64, total: u64) {
    let Ok(mut s) = SHARED.lock() else {
        return;
    };
    if stage == Stage::Done {
        if s.what.is_none()
            && let Some(bar) = s.bar.take()
        {
            bar.finish_and_clear();
        }
        s.first = None;
        s.drawn = None;
        return;
    }
    let first = *s.first.get_or_insert_with(Instant::now);
    if s.bar.is_none() {
        if first.elapsed() < QUIET {
            return;
        }
        s.bar = Some(spinner(String::new()));
        s.what = None;
        s.drawn = None;
    }
    let counted = total > 0;
    let label = stage_words(s.what, stage);
    let redraw = s.drawn != Some((stage, counted));
    let Some(bar) = s.bar.clone() else {
        return;
    };
    if redraw {
        let template = if counted {
            "{spinner} {msg} [{bar:30}] {pos}/{len} {elapsed_precise}"
        } else {
            "{spinner} {msg} {elapsed_precise}"
        };
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_message(label);
        s.drawn = Some((stage, counted));
    }
    if counted {
        bar.set_length(total);
        bar.set_position(done);
    }
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
        let bar = shown().then(|| spinner(format!("{what}…")));
        if let (Some(bar), Ok(mut s)) = (&bar, SHARED.lock()) {
            s.bar = Some(bar.clone());
            s.what = Some(what);
            s.drawn = None;
        }
        Progress {
            bar,
            what,
            start: Instant::now(),
        }
    }

    /// Clears the spinner and, on a terminal, prints `cairn: WHAT took
    /// S.SS s` on stderr.
    pub fn finish(self) {
        if let Ok(mut s) = SHARED.lock() {
            s.bar = None;
            s.what = None;
            s.drawn = None;
        }
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
            super::out::emit_err(&summary(self.what, self.start.elapsed()));
        }
    }
}

/// What the bar says during `stage`: `WHAT: STAGE` inside a command's own
/// display, `cairn: STAGE` on a bar of its own.
fn stage_words(what: Option<&str>, stage: Stage) -> String {
    format!("{}: {}", what.unwrap_or("cairn"), stage.label())
}

/// The closing line: `cairn: WHAT took S.SS s`.
pub fn summary(what: &str, took: Duration) -> String {
    format!("cairn: {what} took {:.2} s", took.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stage_words_name_the_command_or_cairn() {
        assert_eq!(
            stage_words(Some("rebuild"), Stage::Fold),
            "rebuild: folding events"
        );
        assert_eq!(
            stage_words(None, Stage::ReadLogs),
            "cairn: reading the task logs"
        );
    }

    #[test]
    fn summary_line() {
        assert_eq!(
            summary("rebuild", Duration::from_millis(1_234)),
            "cairn: rebuild took 1.23 s"
        );
    }
}
