//! The built-in named views of spec/tq.md §5, written in TQ.

/// A built-in named view (spec/tq.md §5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ViewEntry {
    /// The view name.
    pub name: &'static str,
    /// Its TQ text (compiles with the checker).
    pub source: &'static str,
    /// One line of documentation.
    pub doc: &'static str,
}

static VIEWS: &[ViewEntry] = &[
    ViewEntry {
        name: "active-roots",
        source: "(-> (active) (:where (not (has :parent))))",
        doc: "Active tasks with no parent.",
    },
    ViewEntry {
        name: "orphans",
        source: "(-> (all) (:where (= :edge-count 0)))",
        doc: "Tasks with edge-count 0.",
    },
    ViewEntry {
        name: "leaf-tasks",
        source: "(-> (active) (:where (= (count (:follow :phase-of)) 0)))",
        doc: "Active tasks with no children.",
    },
    ViewEntry {
        name: "stale-phases",
        source: "(-> (active) (:where (any (:back :phase-of) (or (= :status \"completed\") (= :status \"abandoned\")))))",
        doc: "Active tasks whose parent is completed or abandoned.",
    },
    ViewEntry {
        name: "plan",
        source: "(-> (current) (:follow :phase-of) (:or-else (-> (current) (:back :phase-of) (:follow :phase-of))) (:enrich))",
        doc: "The current task's children, or if none, its siblings; enriched.",
    },
    ViewEntry {
        name: "plan-frontier",
        source: "(-> (query \"plan\") (:minus (dormant)) (:where (all (:follow :depends-on) (or (= :status \"completed\") (= :status \"abandoned\")))))",
        doc: "Tasks of plan that are not dormant and whose every depends-on target is dormant.",
    },
    ViewEntry {
        name: "frontier",
        source: "(query \"plan-frontier\")",
        doc: "Alias of plan-frontier.",
    },
    ViewEntry {
        name: "ready",
        source: "(-> (active) (:where (and (not (= :status \"blocked\")) (all (:follow :depends-on) (or (= :status \"completed\") (= :status \"abandoned\"))) (all (:follow :phase-of) (or (= :status \"completed\") (= :status \"abandoned\"))) (not (has :claimed-by)))))",
        doc: "Tasks to start now: not dormant, not blocked, every depends-on target and every child dormant, no live claim.",
    },
    ViewEntry {
        name: "recent",
        source: "(-> (active) (:sort :updated-ts :desc) (:take 20))",
        doc: "Active tasks by updated-ts, newest 20.",
    },
    ViewEntry {
        name: "busy",
        source: "(-> (active) (:sort :obs-count :desc) (:take 20))",
        doc: "Active tasks by obs-count, top 20.",
    },
    ViewEntry {
        name: "hub-tasks",
        source: "(-> (active) (:sort :edge-count :desc) (:take 20))",
        doc: "Active tasks by edge-count, top 20.",
    },
    ViewEntry {
        name: "knowledge",
        source: "(-> (current) (:closure :phase-of :depends-on :related) (:enrich))",
        doc: "The current task's closure over phase-of, depends-on and related; enriched.",
    },
];

/// The built-in views, in the order of spec/tq.md §5.
pub fn builtin_views() -> &'static [ViewEntry] {
    VIEWS
}
