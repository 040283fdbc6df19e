//! `cairn import PATH`: the original tool's `.kli/` store (spec/store.md
//! "The plan travels with the repository", import).

/// What an import did: `Imported N events for M tasks; K lines skipped.`
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportSummary {
    /// Events newly appended.
    pub events: usize,
    /// Distinct subjects of those events.
    pub tasks: usize,
    /// Lines skipped (malformed or refused).
    pub skipped: usize,
}

impl ImportSummary {
    /// The summary line.
    pub fn line(&self) -> String {
        format!(
            "Imported {} events for {} tasks; {} lines skipped.",
            self.events, self.tasks, self.skipped
        )
    }
}
