//! The graph's closed vocabularies, shared by the store (which folds them) and
//! TQ (whose registry documents them): task statuses and edge types
//! (spec/store.md "Event types", spec/tq.md §2 "Edges").

use std::fmt;

/// A task's status (spec/tq.md §2 "Fields", `:status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Status {
    /// Created but not started.
    Open,
    /// Being worked on; the status a new task gets.
    Active,
    /// Done. Dormant.
    Completed,
    /// Given up. Dormant.
    Abandoned,
    /// Waiting on something outside the graph.
    Blocked,
}

impl Status {
    /// Every status, in the order the tool reference lists them.
    pub const ALL: [Status; 5] = [
        Status::Open,
        Status::Active,
        Status::Completed,
        Status::Abandoned,
        Status::Blocked,
    ];

    /// The lower-case name stored in the projection and shown to users.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Open => "open",
            Status::Active => "active",
            Status::Completed => "completed",
            Status::Abandoned => "abandoned",
            Status::Blocked => "blocked",
        }
    }

    /// Parses a status name, case-insensitively. `None` for anything else.
    pub fn parse(s: &str) -> Option<Status> {
        let lower = s.to_ascii_lowercase();
        Status::ALL.into_iter().find(|st| st.as_str() == lower)
    }

    /// True for `completed` and `abandoned` (the `(dormant)` source).
    pub fn is_dormant(self) -> bool {
        matches!(self, Status::Completed | Status::Abandoned)
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether an edge type is stored as the child's parent pointer
/// (structural) or as a row of the `edges` table (lateral).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EdgeClass {
    /// Stored as `tasks.parent_task_id`.
    Structural,
    /// Stored as an `edges` row.
    Lateral,
}

impl EdgeClass {
    /// `structural` or `lateral`, as `(edges)` shows it.
    pub fn as_str(self) -> &'static str {
        match self {
            EdgeClass::Structural => "structural",
            EdgeClass::Lateral => "lateral",
        }
    }
}

/// A typed edge between two tasks (spec/tq.md §2 "Edges").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EdgeType {
    /// Child → parent, the plan's phase backbone (structural).
    PhaseOf,
    /// Same storage as `phase-of` (structural).
    ForkedFrom,
    /// Ordering: the source needs the target done first (lateral).
    DependsOn,
    /// Cross-reference (lateral).
    Related,
}

impl EdgeType {
    /// Every edge type.
    pub const ALL: [EdgeType; 4] = [
        EdgeType::PhaseOf,
        EdgeType::ForkedFrom,
        EdgeType::DependsOn,
        EdgeType::Related,
    ];

    /// The lower-case name (`phase-of`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            EdgeType::PhaseOf => "phase-of",
            EdgeType::ForkedFrom => "forked-from",
            EdgeType::DependsOn => "depends-on",
            EdgeType::Related => "related",
        }
    }

    /// Parses an edge name, case-insensitively. `None` for anything else.
    pub fn parse(s: &str) -> Option<EdgeType> {
        let lower = s.to_ascii_lowercase();
        EdgeType::ALL.into_iter().find(|e| e.as_str() == lower)
    }

    /// Structural (parent pointer) or lateral (edges row).
    pub fn class(self) -> EdgeClass {
        match self {
            EdgeType::PhaseOf | EdgeType::ForkedFrom => EdgeClass::Structural,
            EdgeType::DependsOn | EdgeType::Related => EdgeClass::Lateral,
        }
    }
}

impl fmt::Display for EdgeType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
