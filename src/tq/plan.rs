//! Typed query + surface → plan (spec/tq.md §1, §3, §5): the mutation gate,
//! view expansion with cycle detection, operand surfaces, terminal shapers.
//!
//! The planner knows no SQL and no rusqlite. It takes the catalog (user views,
//! live metadata keys, the current task) as data and returns a [`Plan`];
//! `ir::build` turns a plan into the relational IR that `ir::optimize`
//! rewrites and `sql::lower_ir` lowers to one statement per pipeline segment
//! (docs/planner.md "The IR").

use std::collections::BTreeMap;

use super::ast::{
    Dir, EdgeType, Field, Pred, Query, SetOp, Source, Span, Spanned, Status, Step, Surface, Trav,
};
use super::diagnostic::Diagnostic;
use super::{front, registry};

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

/// Which reflective source a row set comes from (spec/tq.md §6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ReflKind {
    /// `(schema)`.
    Schema,
    /// `(fields)`.
    Fields,
    /// `(edges)`.
    Edges,
    /// `(views)`.
    Views,
}

impl ReflKind {
    /// The tag stored in the reflection relation's `rk` column.
    pub fn as_str(self) -> &'static str {
        match self {
            ReflKind::Schema => "schema",
            ReflKind::Fields => "fields",
            ReflKind::Edges => "edges",
            ReflKind::Views => "views",
        }
    }
}

/// The producer of a pipeline's first set.
#[derive(Debug, Clone, PartialEq)]
pub enum PSource {
    /// `(all)`.
    All,
    /// `(active)`.
    Active,
    /// `(dormant)`.
    Dormant,
    /// `(current)`, resolved to the session's current slug at plan time.
    Current(String),
    /// `(mine)`, resolved to the session's agent name at plan time.
    Mine(String),
    /// `(node "substr")`.
    Node(String),
    /// A reflective source.
    Reflect(ReflKind),
    /// `(query "name")` (or a `define!` body): the view's own pipeline,
    /// inlined; keeps that pipeline's order.
    View(Box<Pipeline>),
    /// The empty set (what `(undefine! "name")` returns).
    Empty,
}

/// A mutation step (spec/tq.md §2, kind `mutation`).
#[derive(Debug, Clone, PartialEq)]
pub enum Mutation {
    /// `(:set-status! STATUS)`.
    SetStatus(Status),
    /// `(:set! :key "value")`.
    SetMeta {
        /// Metadata key.
        key: String,
        /// Value.
        value: String,
    },
    /// `(:link! :EDGE "target")`.
    Link {
        /// Edge added from each task.
        edge: EdgeType,
        /// Target slug.
        target: String,
    },
    /// `(:unlink! :EDGE "target")`.
    Unlink {
        /// Edge removed from each task.
        edge: EdgeType,
        /// Target slug.
        target: String,
    },
    /// `(:claim! SECONDS)` by `agent` (spec/tq.md §9).
    Claim {
        /// The lease, 1 to 86,400 seconds.
        seconds: i64,
        /// The claiming agent (the session's identity, resolved at plan time).
        agent: String,
    },
    /// `(:release!)` by `agent` (spec/tq.md §9).
    Release {
        /// The releasing agent.
        agent: String,
    },
}

/// A transformer or mutation step of a planned pipeline.
#[derive(Debug, Clone, PartialEq)]
pub enum PStep {
    /// `(:follow EDGE)` / `(:back EDGE)`.
    Traverse(Trav),
    /// `(:where PRED)`.
    Where(Pred),
    /// `(:sort FIELD DIR)`.
    Sort(Field, Dir),
    /// `(:take N)`, N already clamped to ≥ 0.
    Take(i64),
    /// A set operation with its operand planned on the read surface.
    SetOp(SetOp, Box<Pipeline>),
    /// `(:closure EDGE...)`.
    Closure(Vec<EdgeType>),
    /// A mutation (write surface only).
    Mutate(Mutation),
}

/// The terminal shaper of a pipeline.
#[derive(Debug, Clone, PartialEq)]
pub enum Shaper {
    /// `(:select FIELD...)`.
    Select(Vec<Field>),
    /// `(:group-by FIELD)`.
    GroupBy(Field),
    /// `(:ids)`.
    Ids,
    /// `(:count)`.
    Count,
}

/// A planned pipeline: a source, transformer/mutation steps, and an optional
/// terminal shaper. `enriched` is set once an `(:enrich)` (or an enriched
/// view) was passed and stays set for the rest of the pipeline.
#[derive(Debug, Clone, PartialEq)]
pub struct Pipeline {
    /// The producer.
    pub source: PSource,
    /// Transformers and mutations, in order (`:enrich` is folded into `enriched`).
    pub steps: Vec<PStep>,
    /// The final shaper, if any.
    pub shaper: Option<Shaper>,
    /// Task lines carry `obs=`/`edges=` and metadata lines.
    pub enriched: bool,
}

/// A write form run before the pipeline (spec/tq.md §5).
#[derive(Debug, Clone, PartialEq)]
pub enum WriteForm {
    /// `(define! "name" Q)`: record `view.define` with `text`, the canonical
    /// print of Q; the pipeline then yields Q's set.
    Define {
        /// View name.
        name: String,
        /// `print::print(Q)`.
        text: String,
    },
    /// `(undefine! "name")`: record `view.undefine` when a user view exists.
    Undefine {
        /// View name.
        name: String,
    },
}

/// A planned query.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The write form to record first, if the source is one.
    pub write_form: Option<WriteForm>,
    /// The main pipeline.
    pub main: Pipeline,
    /// True when any source anywhere (views and operands included) is reflective.
    pub reflect: bool,
    /// The clock reading (Unix seconds) claims are judged live against on
    /// the read path (`:claimed-by`, `:claim-until`, `(mine)`); the write
    /// path judges them at its transaction's own reading.
    pub now: i64,
}

impl Plan {
    /// True when running the plan records events (a write form or a mutation step).
    pub fn writes(&self) -> bool {
        self.write_form.is_some()
            || self
                .main
                .steps
                .iter()
                .any(|s| matches!(s, PStep::Mutate(_)))
    }
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

struct Planner<'a> {
    cat: &'a Catalog,
    /// Names being resolved (the `define!` name first, when there is one).
    stack: Vec<String>,
    /// Views being expanded right now (the `define!` name not counted).
    views: usize,
    /// Pipelines being planned right now (operands and view bodies nest).
    depth: usize,
    /// Steps planned so far in the whole query (see [`MAX_STEPS`]).
    steps: usize,
    reflect: bool,
}

impl Planner<'_> {
    /// Plans one pipeline one level deeper; past [`MAX_NESTING`] levels the
    /// [`NESTING_ERROR`].
    fn pipeline(&mut self, q: &Query, allow_mut: bool) -> Result<Pipeline, Diagnostic> {
        if self.depth >= MAX_NESTING {
            return Err(Diagnostic::query(
                NESTING_ERROR,
                Some(q.source.span.clone()),
            ));
        }
        self.depth += 1;
        let out = self.pipeline_at(q, allow_mut);
        self.depth -= 1;
        out
    }

    fn pipeline_at(&mut self, q: &Query, allow_mut: bool) -> Result<Pipeline, Diagnostic> {
        let span = &q.source.span;
        let (source, enriched) = match &q.source.node {
            Source::All => (PSource::All, false),
            Source::Active => (PSource::Active, false),
            Source::Dormant => (PSource::Dormant, false),
            Source::Current => match &self.cat.current {
                Some(c) => (PSource::Current(c.clone()), false),
                None => return Err(Diagnostic::query(NO_CURRENT, Some(span.clone()))),
            },
            Source::Mine => (PSource::Mine(self.agent(span)?), false),
            Source::Node(s) => {
                if s.is_empty() {
                    return Err(Diagnostic::query(
                        "(node \"substr\") needs a non-empty pattern.",
                        Some(span.clone()),
                    ));
                }
                (PSource::Node(s.clone()), false)
            }
            Source::View(name) => {
                let body = self.view(name, span)?;
                let enriched = body.enriched;
                (PSource::View(Box::new(body)), enriched)
            }
            Source::Schema => self.reflect_source(ReflKind::Schema),
            Source::Views => self.reflect_source(ReflKind::Views),
            Source::Fields => self.reflect_source(ReflKind::Fields),
            Source::Edges => self.reflect_source(ReflKind::Edges),
            // Write forms inside a sub-query are refused by the gate first.
            Source::Define { .. } | Source::Undefine { .. } => {
                return Err(Diagnostic::query(MUTATION_REFUSED, Some(span.clone())));
            }
        };
        self.steps(source, enriched, &q.steps, allow_mut)
    }

    /// The session's agent name, or the [`NO_AGENT`] error at `span`.
    fn agent(&self, span: &Span) -> Result<String, Diagnostic> {
        match &self.cat.agent {
            Some(a) if !a.is_empty() => Ok(a.clone()),
            _ => Err(Diagnostic::query(NO_AGENT, Some(span.clone()))),
        }
    }

    fn reflect_source(&mut self, k: ReflKind) -> (PSource, bool) {
        self.reflect = true;
        (PSource::Reflect(k), false)
    }

    fn steps(
        &mut self,
        source: PSource,
        enriched: bool,
        steps: &[Spanned<Step>],
        allow_mut: bool,
    ) -> Result<Pipeline, Diagnostic> {
        let mut out = Pipeline {
            source,
            steps: Vec::new(),
            shaper: None,
            enriched,
        };
        for step in steps {
            self.steps += 1;
            if self.steps > MAX_STEPS {
                return Err(Diagnostic::query(STEPS_ERROR, Some(step.span.clone())));
            }
            if out.shaper.is_some() {
                return Err(Diagnostic::query(AFTER_SHAPER, Some(step.span.clone())));
            }
            if is_mutation(&step.node) && !allow_mut {
                return Err(Diagnostic::query(MUTATION_REFUSED, Some(step.span.clone())));
            }
            match &step.node {
                Step::Traverse(t) => out.steps.push(PStep::Traverse(*t)),
                Step::Where(p) => out.steps.push(PStep::Where(p.clone())),
                Step::Sort(f, d) => out.steps.push(PStep::Sort(f.clone(), *d)),
                Step::Take(n) => out.steps.push(PStep::Take((*n).max(0))),
                Step::Enrich => out.enriched = true,
                Step::SetOp(op, operand) => {
                    let sub = self.pipeline(operand, false)?;
                    if sub.shaper.is_some() {
                        return Err(Diagnostic::query(OPERAND_SHAPER, Some(step.span.clone())));
                    }
                    out.steps.push(PStep::SetOp(*op, Box::new(sub)));
                }
                Step::Closure(edges) => out.steps.push(PStep::Closure(edges.clone())),
                Step::Select(fs) => out.shaper = Some(Shaper::Select(fs.clone())),
                Step::GroupBy(f) => out.shaper = Some(Shaper::GroupBy(f.clone())),
                Step::Ids => out.shaper = Some(Shaper::Ids),
                Step::Count => out.shaper = Some(Shaper::Count),
                Step::SetStatus(s) => out.steps.push(PStep::Mutate(Mutation::SetStatus(*s))),
                Step::SetMeta { key, value } => out.steps.push(PStep::Mutate(Mutation::SetMeta {
                    key: key.clone(),
                    value: value.clone(),
                })),
                Step::Link { edge, target } => out.steps.push(PStep::Mutate(Mutation::Link {
                    edge: *edge,
                    target: target.clone(),
                })),
                Step::Unlink { edge, target } => out.steps.push(PStep::Mutate(Mutation::Unlink {
                    edge: *edge,
                    target: target.clone(),
                })),
                Step::Claim(seconds) => out.steps.push(PStep::Mutate(Mutation::Claim {
                    seconds: *seconds,
                    agent: self.agent(&step.span)?,
                })),
                Step::Release => out.steps.push(PStep::Mutate(Mutation::Release {
                    agent: self.agent(&step.span)?,
                })),
            }
        }
        Ok(out)
    }

    /// Resolves a named view: user views shadow built-ins; a view reached
    /// while resolving itself is the §5 cycle error; a chain deeper than
    /// [`MAX_VIEW_DEPTH`] views is refused before it is compiled (the planner,
    /// the checker and the SQL lowering all recurse per level). Any error
    /// from the view's body is re-anchored at `span` (the user's
    /// `(query "name")`) by [`anchor_in_view`].
    fn view(&mut self, name: &str, span: &Span) -> Result<Pipeline, Diagnostic> {
        if self.stack.iter().any(|n| n == name) {
            return Err(Diagnostic::query(
                format!("View {name} is defined in terms of itself."),
                Some(span.clone()),
            ));
        }
        if self.views >= MAX_VIEW_DEPTH {
            return Err(Diagnostic::query(
                view_depth_error(name),
                Some(span.clone()),
            ));
        }
        let text = match self.cat.user_views.get(name) {
            Some(t) => t.as_str(),
            None => match registry::builtin_views().iter().find(|v| v.name == name) {
                Some(v) => v.source,
                None => {
                    return Err(Diagnostic::query(
                        unknown_view(name, self.cat),
                        Some(span.clone()),
                    ));
                }
            },
        };
        let q =
            front::compile(text, &self.cat.meta_keys).map_err(|d| anchor_in_view(name, span, d))?;
        self.stack.push(name.to_string());
        self.views += 1;
        let body = self.pipeline(&q, false);
        self.views -= 1;
        self.stack.pop();
        let body = body.map_err(|d| anchor_in_view(name, span, d))?;
        if body.shaper.is_some() {
            return Err(Diagnostic::query(VIEW_SHAPER, Some(span.clone())));
        }
        Ok(body)
    }
}

/// Re-anchors a diagnostic raised inside view `name`'s stored text at `span`
/// (the user's `(query "name")`, whose text the spans must point into) and
/// prefixes its message with `in view NAME: `. Kept as they are (span moved
/// only): a message already prefixed by a deeper view (the innermost view is
/// named), the cycle error, the two nesting limits and the missing current task
/// (those name the view or are about the session, not the view's text).
fn anchor_in_view(name: &str, span: &Span, d: Diagnostic) -> Diagnostic {
    let keep = d.message.starts_with(IN_VIEW)
        || d.message.starts_with("Views nest deeper than ")
        || d.message == NESTING_ERROR
        || d.message == STEPS_ERROR
        || (d.message.starts_with("View ")
            && d.message.ends_with(" is defined in terms of itself."))
        || d.message == NO_CURRENT;
    let message = if keep {
        d.message
    } else {
        format!("{IN_VIEW}{name}: {}", d.message)
    };
    Diagnostic {
        message,
        span: Some(span.clone()),
        ..d
    }
}

/// `Unknown named query NAME. Available: a, b, c.` — user and built-in view
/// names, sorted and deduplicated (§2); names over 80 characters cut with
/// `…`, the list capped at 30 names then `, ...` (`check::name_list`).
pub fn unknown_view(name: &str, cat: &Catalog) -> String {
    let mut names: Vec<&str> = cat.user_views.keys().map(String::as_str).collect();
    names.extend(registry::builtin_views().iter().map(|v| v.name));
    names.sort_unstable();
    names.dedup();
    format!(
        "Unknown named query {}. Available: {}.",
        super::check::shown_name(name),
        super::check::name_list(&names)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

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
