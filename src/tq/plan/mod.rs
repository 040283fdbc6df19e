//! Typed query + surface → plan (spec/tq.md §1, §3, §5): the mutation gate,
//! view expansion with cycle detection, operand surfaces, terminal shapers.
//!
//! The planner knows no SQL and no rusqlite. It takes the catalog (user views,
//! live metadata keys, the current task) as data and returns a [`Plan`];
//! `ir::build` turns a plan into the relational IR that `ir::optimize`
//! rewrites and `sql::lower_ir` lowers to one statement per pipeline segment
//! (docs/planner.md "The IR").

use std::collections::BTreeMap;

use super::ast::{Query, Source, Span, Step, Surface};
use super::diagnostic::Diagnostic;
use super::registry;

mod pipeline;
mod planner;

pub use pipeline::{Mutation, PSource, PStep, Pipeline, Plan, ReflKind, Shaper, WriteForm};
use planner::Planner;
pub use planner::unknown_view;

/// The exact refusal of a mutation or write form on the read surface (§3).
pub const MUTATION_REFUSED: &str =
    "Mutations need the task_query_write surface; task_query is read-only.";
/// A step after a shaper (§1).
pub const AFTER_SHAPER: &str =
    "This step expects a set of tasks, but the previous step produced a final value.";
/// A set-operation operand that ends in a shaper (§3).
pub const OPERAND_SHAPER: &str =
    "A set-operation operand must yield a set of tasks, not a final value.";
/// A view body that ends in a shaper (§3).
pub const VIEW_SHAPER: &str = "A view definition must yield a set of tasks, not a final value.";
/// `(current)` with no current task (§2).
pub const NO_CURRENT: &str = "This query needs a current task; select one first.";
/// The deepest chain of views one query may expand (docs/planner.md
/// "View nesting"): a view whose body names a view whose body names a view...
/// counts one level per view. The 33rd level is refused with
/// [`view_depth_error`].
pub const MAX_VIEW_DEPTH: usize = 32;
/// The deepest nesting of pipelines one query may reach once its views are
/// expanded (docs/planner.md "View nesting"): each set-operation operand and
/// each view body is one level below the pipeline naming it. One query text
/// reaches about 63 levels at the parser's depth of 128, so this only stops
/// views stacked on deep operands (the planner and the SQL lowering recurse
/// per level).
pub const MAX_NESTING: usize = 64;
/// The refusal past [`MAX_NESTING`] levels.
pub const NESTING_ERROR: &str =
    "The query nests deeper than 64 levels once its views are expanded; flatten a view.";

/// The most steps one query may hold once its views are expanded (every
/// pipeline's steps, operands and view bodies included; docs/planner.md
/// "View nesting"). The IR, its rewrites and the SQL lowering recurse once
/// per step, and SQLite refuses a statement nested a few hundred stages deep
/// anyway ("too complex"), so longer queries are refused before planning
/// further with [`STEPS_ERROR`].
pub const MAX_STEPS: usize = 256;
/// The refusal past [`MAX_STEPS`] steps.
pub const STEPS_ERROR: &str =
    "The query has more than 256 steps once its views are expanded; split it into smaller queries.";

/// The prefix of a diagnostic raised while planning a stored view's body
/// (docs/planner.md "Errors inside a view"): `in view NAME: ` + the inner message.
pub const IN_VIEW: &str = "in view ";

/// `Views nest deeper than 32 levels (at NAME); flatten the view.` — NAME is
/// the view whose expansion would be level 33.
pub fn view_depth_error(name: &str) -> String {
    format!("Views nest deeper than {MAX_VIEW_DEPTH} levels (at {name}); flatten the view.")
}

/// What the planner reads besides the query: the store's user views
/// (`named_views`: name → TQ text), the live metadata keys (for compiling view
/// texts), and the session's current task.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    /// User views, name → stored (canonical) TQ text.
    pub user_views: BTreeMap<String, String>,
    /// Live metadata keys (distinct `task_metadata.key`).
    pub meta_keys: Vec<String>,
    /// The session's current task slug.
    pub current: Option<String>,
    /// The session's agent name (spec/tq.md §9 "Agent identity"); `(mine)`,
    /// `(:claim! S)` and `(:release!)` need one.
    pub agent: Option<String>,
    /// The clock reading, Unix seconds (see [`Plan::now`]).
    pub now: i64,
}

/// `(mine)`, `(:claim! S)` or `(:release!)` in a session with no agent name.
pub const NO_AGENT: &str = "(mine), (:claim! S) and (:release!) need an agent name, and this session has none (over MCP, initialize names it; on the CLI, --as NAME).";

/// Plans `q` for `surface` (spec/tq.md §3): first the mutation gate over the
/// whole query (operands and `define!` bodies on the read surface), then view
/// expansion and the shape checks.
///
/// Errors (all `Query error`s): the §3 refusal, the §1 after-shaper error,
/// the operand/view shaper errors, `This query needs a current task; select
/// one first.`, `Unknown named query NAME. Available: a, b, c.`, `View NAME is
/// defined in terms of itself.`, and any diagnostic from compiling a view's text.
pub fn plan(q: &Query, surface: Surface, cat: &Catalog) -> Result<Plan, Diagnostic> {
    gate(q, surface)?;
    let mut p = Planner {
        cat,
        stack: Vec::new(),
        views: 0,
        depth: 0,
        steps: 0,
        reflect: false,
    };
    let (write_form, main) = match &q.source.node {
        Source::Define { name, body } => {
            check_view_name(name, &q.source.span)?;
            // The body is planned as the catalog will be once it is defined:
            // a reference back to `name` is the §5 cycle error.
            p.stack.push(name.clone());
            let body_p = p.pipeline(body, false)?;
            p.stack.pop();
            if body_p.shaper.is_some() {
                return Err(Diagnostic::query(VIEW_SHAPER, Some(q.source.span.clone())));
            }
            let wf = WriteForm::Define {
                name: name.clone(),
                text: super::print::print(body),
            };
            let enriched = body_p.enriched;
            let main = p.steps(PSource::View(Box::new(body_p)), enriched, &q.steps, true)?;
            (Some(wf), main)
        }
        Source::Undefine { name } => {
            check_view_name(name, &q.source.span)?;
            let wf = WriteForm::Undefine { name: name.clone() };
            (Some(wf), p.steps(PSource::Empty, false, &q.steps, true)?)
        }
        _ => (None, p.pipeline(q, surface == Surface::Write)?),
    };
    Ok(Plan {
        write_form,
        main,
        reflect: p.reflect,
        now: cat.now,
    })
}

fn check_view_name(name: &str, span: &Span) -> Result<(), Diagnostic> {
    if name.trim().is_empty() {
        return Err(Diagnostic::query(
            "(define! \"name\" Q) needs a non-empty string view name.",
            Some(span.clone()),
        ));
    }
    Ok(())
}

/// The gate's kind check: the registry's kind tag of the step, not a list
/// of names (seed 002: a new mutating step is gated the moment it is tagged).
fn is_mutation(step: &Step) -> bool {
    registry::step_kind(step) == registry::Kind::Mutation
}

/// The mutation gate (§3): on `surface` Read, any mutation step or write form
/// anywhere is refused; operands and `define!` bodies are always Read.
fn gate(q: &Query, surface: Surface) -> Result<(), Diagnostic> {
    let refuse = |span: &Span| Err(Diagnostic::query(MUTATION_REFUSED, Some(span.clone())));
    match &q.source.node {
        Source::Define { body, .. } => {
            if surface == Surface::Read {
                return refuse(&q.source.span);
            }
            gate(body, Surface::Read)?;
        }
        Source::Undefine { .. } if surface == Surface::Read => return refuse(&q.source.span),
        _ => {}
    }
    for step in &q.steps {
        if surface == Surface::Read && is_mutation(&step.node) {
            return refuse(&step.span);
        }
        if let Step::SetOp(_, operand) = &step.node {
            gate(operand, Surface::Read)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tq::front;

    fn p(text: &str, surface: Surface, cat: &Catalog) -> Result<Plan, String> {
        let q = front::compile(text, &cat.meta_keys).map_err(|d| d.message)?;
        plan(&q, surface, cat).map_err(|d| d.message)
    }

    fn cat() -> Catalog {
        Catalog {
            current: Some("2026-01-01-a".into()),
            ..Default::default()
        }
    }

    #[test]
    fn the_gate_refuses_mutations_anywhere_on_read_and_in_operands_on_write() {
        let c = cat();
        for q in [
            r#"(-> (all) (:set-status! "completed"))"#,
            r#"(-> (all) (:where (has :slug)) (:link! :related "x"))"#,
            r#"(define! "v" (all))"#,
            r#"(undefine! "v")"#,
        ] {
            assert_eq!(
                p(q, Surface::Read, &c).unwrap_err(),
                MUTATION_REFUSED,
                "{q}"
            );
        }
        for q in [
            r#"(-> (all) (:union (-> (all) (:minus (-> (all) (:set! :k "v"))))))"#,
            r#"(define! "v" (-> (all) (:set-status! "open")))"#,
            r#"(-> (all) (:or-else (-> (dormant) (:unlink! :related "x"))))"#,
        ] {
            assert_eq!(
                p(q, Surface::Write, &c).unwrap_err(),
                MUTATION_REFUSED,
                "{q}"
            );
        }
        let ok = p(
            r#"(-> (active) (:minus (dormant)) (:set-status! "completed"))"#,
            Surface::Write,
            &c,
        );
        assert!(ok.is_ok_and(|pl| pl.writes()));
    }

    #[test]
    fn the_gate_runs_before_views_resolve() {
        // An unknown view after a refused mutation: the refusal wins.
        let c = cat();
        assert_eq!(
            p(
                r#"(-> (query "nope") (:set-status! "open"))"#,
                Surface::Read,
                &c
            )
            .unwrap_err(),
            MUTATION_REFUSED
        );
    }

    #[test]
    fn views_expand_shadow_and_detect_cycles() {
        let mut c = cat();
        c.user_views.insert("a".into(), r#"(query "b")"#.into());
        c.user_views
            .insert("b".into(), r#"(-> (query "a") (:take 1))"#.into());
        c.user_views.insert("orphans".into(), "(dormant)".into());
        assert_eq!(
            p(r#"(query "a")"#, Surface::Read, &c).unwrap_err(),
            "View a is defined in terms of itself."
        );
        let pl = p(r#"(query "orphans")"#, Surface::Read, &c).unwrap_or_else(|e| panic!("{e}"));
        match pl.main.source {
            PSource::View(v) => assert_eq!(v.source, PSource::Dormant),
            other => panic!("{other:?}"),
        }
        let plan_view = p(r#"(query "plan")"#, Surface::Read, &c).unwrap_or_else(|e| panic!("{e}"));
        assert!(plan_view.main.enriched);
        assert!(!plan_view.reflect);
        assert!(p("(-> (fields) (:count))", Surface::Read, &c).is_ok_and(|pl| pl.reflect));
    }

    #[test]
    fn current_take_and_enrich_are_planned() {
        let none = Catalog::default();
        assert_eq!(
            p("(current)", Surface::Read, &none).unwrap_err(),
            NO_CURRENT
        );
        assert_eq!(
            p(r#"(query "knowledge")"#, Surface::Read, &none).unwrap_err(),
            NO_CURRENT
        );
        let pl = p(
            "(-> (all) (:take -3) (:enrich) (:ids))",
            Surface::Read,
            &cat(),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(pl.main.steps, vec![PStep::Take(0)]);
        assert!(pl.main.enriched);
        assert_eq!(pl.main.shaper, Some(Shaper::Ids));
    }

    #[test]
    fn define_records_the_canonical_text() {
        let pl = p(
            r#"(define! "v" (-> (ALL)   (:take 5)))"#,
            Surface::Write,
            &cat(),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            pl.write_form,
            Some(WriteForm::Define {
                name: "v".into(),
                text: "(-> (all) (:take 5))".into()
            })
        );
    }
}
