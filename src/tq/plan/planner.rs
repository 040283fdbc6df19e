//! The planner proper: pipelines one level at a time (nesting and step
//! limits), the steps of a pipeline, view expansion with cycle detection,
//! and the diagnostics a view's stored text raises (spec/tq.md §5).

use super::{
    AFTER_SHAPER, Catalog, IN_VIEW, MAX_NESTING, MAX_STEPS, MAX_VIEW_DEPTH, MUTATION_REFUSED,
    NESTING_ERROR, NO_AGENT, NO_CURRENT, OPERAND_SHAPER, PSource, PStep, Pipeline, ReflKind,
    STEPS_ERROR, Shaper, VIEW_SHAPER, is_mutation, view_depth_error,
};
use crate::tq::ast::{Query, Source, Span, Spanned, Step};
use crate::tq::diagnostic::Diagnostic;
use crate::tq::{front, registry};

pub(super) struct Planner<'a> {
    pub(super) cat: &'a Catalog,
    /// Names being resolved (the `define!` name first, when there is one).
    pub(super) stack: Vec<String>,
    /// Views being expanded right now (the `define!` name not counted).
    pub(super) views: usize,
    /// Pipelines being planned right now (operands and view bodies nest).
    pub(super) depth: usize,
    /// Steps planned so far in the whole query (see [`MAX_STEPS`]).
    pub(super) steps: usize,
    pub(super) reflect: bool,
}

impl Planner<'_> {
    /// Plans one pipeline one level deeper; past [`MAX_NESTING`] levels the
    /// [`NESTING_ERROR`].
    pub(super) fn pipeline(&mut self, q: &Query, allow_mut: bool) -> Result<Pipeline, Diagnostic> {
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
            Source::Search(s) => {
                if s.is_empty() {
                    return Err(Diagnostic::query(
                        "(search \"\") needs a non-empty pattern.",
                        Some(span.clone()),
                    ));
                }
                (PSource::Search(s.clone()), false)
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

    pub(super) fn steps(
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
                Step::Mutate(m) => {
                    let planned = m.with_agent(|| self.agent(&step.span))?;
                    out.steps.push(PStep::Mutate(planned));
                }
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
        crate::tq::check::shown_name(name),
        crate::tq::check::name_list(&names)
    )
}
