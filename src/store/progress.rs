//! Progress of the store's long work (issue 23): building a database from
//! the task logs (a fresh clone, `rebuild --from-logs`) and `rebuild`.
//! The store only reports *what* it is doing and how far it got; whoever
//! runs the process decides how to show it. The CLI installs a sink that
//! draws a bar on a terminal (`cli/progress.rs`); without a sink (a
//! server, the tests, a library user) a report costs one atomic load.

use std::sync::OnceLock;

/// A stage of long store work, in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Reading and checking the task logs: `done` of `total` files.
    ReadLogs,
    /// Copying a snapshot of the database aside (`rebuild`, `verify`).
    Snapshot,
    /// Inserting the logs' events into the database: `done` of `total`.
    Insert,
    /// Folding the events into the projection: `done` of `total` events.
    Fold,
    /// Building the search indexes and the other indexes once.
    Index,
    /// Swapping the rebuilt projection into the live database.
    Swap,
    /// The work is over (the display may go away).
    Done,
}

impl Stage {
    /// The words a display shows for the stage.
    pub fn label(self) -> &'static str {
        match self {
            Stage::ReadLogs => "reading the task logs",
            Stage::Snapshot => "copying the database aside",
            Stage::Insert => "inserting events",
            Stage::Fold => "folding events",
            Stage::Index => "building the indexes",
            Stage::Swap => "swapping the projection in",
            Stage::Done => "done",
        }
    }
}

/// What receives the reports: `(stage, done, total)`; `total` 0 when the
/// stage has no count.
pub type Sink = Box<dyn Fn(Stage, u64, u64) + Send + Sync>;

static SINK: OnceLock<Sink> = OnceLock::new();

/// Installs the process's progress sink (once; later calls are ignored and
/// return false).
pub fn set_sink(sink: Sink) -> bool {
    SINK.set(sink).is_ok()
}

/// Reports a stage to the sink, if any.
pub(crate) fn report(stage: Stage, done: u64, total: u64) {
    if let Some(sink) = SINK.get() {
        sink(stage, done, total);
    }
}

/// Whether a sink is installed (callers skip counting work otherwise).
pub(crate) fn wanted() -> bool {
    SINK.get().is_some()
}

/// Reports `done` of `total` for `stage` every `every` items (and at the
/// last), so a tight loop pays one comparison per item.
pub(crate) struct Ticker {
    stage: Stage,
    total: u64,
    every: u64,
    next: u64,
    on: bool,
}

impl Ticker {
    /// A ticker for `total` items of `stage`, reporting 0 now; silent when
    /// `total` is 0 (nothing counted: a small refold inside a write).
    pub(crate) fn new(stage: Stage, total: u64) -> Ticker {
        let on = total > 0 && wanted();
        if on {
            report(stage, 0, total);
        }
        let every = (total / 200).max(1000);
        Ticker {
            stage,
            total,
            every,
            next: every,
            on,
        }
    }

    /// Item `done` is done.
    pub(crate) fn tick(&mut self, done: u64) {
        if self.on && (done >= self.next || done == self.total) {
            self.next = done + self.every;
            report(self.stage, done, self.total);
        }
    }
}
