//! S-expressions → the typed query of `ast.rs` (spec/tq.md §1, §2, §7),
//! validating every form against its registry entry. Unknown names get the
//! nearest known name within edit distance 3 (strsim), else the known list.
//! Recursion follows the s-expression, whose depth the parser caps at 128.
//!
//! Decisions (documented in docs/tq.md): a keyword literal (`:active`) is
//! read as the text `active`; `(:set-status! X)` takes a keyword, string or
//! bare word; `(:set! :key V)` takes a string or a number (kept as its text);
//! `(= FIELD "s")` on a number or timestamp field is an error.

use crate::tq::ast::{Dir, Mutation, Query, SetOp, Source, Span, Spanned, Step, Trav, TravDir};
use crate::tq::diagnostic::Diagnostic;
use crate::tq::parser::{SSexp, Sexp};
use crate::tq::registry::{self, Category, FormEntry, Kind, LINK_EDGES, Op, lookup};

mod args;
mod pred;

pub use pred::parse_date;

type R<T> = Result<T, Diagnostic>;

/// Checks one parsed form into a [`Query`]. `text` is the query text the
/// spans point into (used to quote arguments in messages); `meta_keys` the
/// live metadata keys accepted as text fields. Errors are `Query error`
/// diagnostics with the exact messages of spec/tq.md §1, §2, §5, §7.
pub fn check(form: &SSexp, text: &str, meta_keys: &[String]) -> R<Query> {
    Checker { text, meta_keys }.query(form)
}

struct Checker<'a> {
    text: &'a str,
    meta_keys: &'a [String],
}

fn err<T>(msg: impl Into<String>, span: &Span) -> R<T> {
    Err(Diagnostic::query(msg, Some(span.clone())))
}

/// Names longer than this (in characters) get no "did you mean" search.
pub const SUGGEST_MAX_NAME: usize = 200;
/// The longest lease `(:claim! SECONDS)` takes: one day (spec/tq.md §9).
pub const MAX_CLAIM_SECONDS: i64 = 86_400;
/// The most names a "Known ..."/"Available: ..." list shows before `, ...`.
pub const LIST_MAX_NAMES: usize = 30;
/// Names longer than this (in characters) are cut with `…` in messages.
pub const NAME_MAX_SHOWN: usize = 80;

/// The nearest of `candidates` to `name` within edit distance 3 (first on
/// ties). Bounded work (docs/tq.md "Suggestions"): no search at all for a
/// name over [`SUGGEST_MAX_NAME`] characters, and a candidate whose length
/// differs from the name's by more than 3 is skipped without computing the
/// distance (it cannot be within 3).
pub fn suggest<'c>(name: &str, candidates: impl IntoIterator<Item = &'c str>) -> Option<&'c str> {
    let n = name.chars().count();
    if n > SUGGEST_MAX_NAME {
        return None;
    }
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        // Byte length bounds char length from above; a cheap first filter.
        if c.len() > 4 * (n + 3) || c.chars().count().abs_diff(n) > 3 {
            continue;
        }
        let d = strsim::levenshtein(name, c);
        if d <= 3 && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

/// `name` as shown in a message: cut to [`NAME_MAX_SHOWN`] characters + `…`.
pub fn shown_name(name: &str) -> String {
    if name.chars().count() > NAME_MAX_SHOWN {
        let short: String = name.chars().take(NAME_MAX_SHOWN).collect();
        format!("{short}…")
    } else {
        name.to_string()
    }
}

/// A message's name list: each name through [`shown_name`], joined by
/// `, `; past [`LIST_MAX_NAMES`] names the first 30 then `, ...` (30 keeps
/// the 21 declared fields whole in the unknown-field list).
pub fn name_list<S: AsRef<str>>(names: &[S]) -> String {
    let mut shown: Vec<String> = names
        .iter()
        .take(LIST_MAX_NAMES)
        .map(|n| shown_name(n.as_ref()))
        .collect();
    if names.len() > LIST_MAX_NAMES {
        shown.push("...".to_string());
    }
    shown.join(", ")
}

/// `Unknown WHAT PREFIXname; did you mean PREFIXnear?` or
/// `Unknown WHAT PREFIXname. Known PLURAL: a, b, c.` (names cut and the
/// list capped by [`name_list`]). A name listed twice in `known` (a
/// metadata key that is also a declared field, say) is listed once, at its
/// first place (issue 26).
fn unknown(what: &str, plural: &str, prefix: &str, name: &str, known: &[String]) -> String {
    let mut seen = std::collections::HashSet::new();
    let known: Vec<String> = known
        .iter()
        .filter(|k| seen.insert(k.as_str()))
        .cloned()
        .collect();
    let shown = shown_name(name);
    match suggest(name, known.iter().map(String::as_str)) {
        Some(near) => format!("Unknown {what} {prefix}{shown}; did you mean {prefix}{near}?"),
        None => {
            let list: Vec<String> = known.iter().map(|k| format!("{prefix}{k}")).collect();
            format!(
                "Unknown {what} {prefix}{shown}. Known {plural}: {}.",
                name_list(&list)
            )
        }
    }
}

fn names(category: Category) -> Vec<String> {
    registry::forms_in(category)
        .map(|f| f.name.to_string())
        .collect()
}

fn arity_text(n: usize) -> String {
    match n {
        0 => "no arguments".into(),
        1 => "1 argument".into(),
        n => format!("{n} arguments"),
    }
}

impl Checker<'_> {
    /// The text of `s` as written, shortened past 40 characters.
    fn quote(&self, s: &SSexp) -> String {
        let t = self.text.get(s.span.clone()).unwrap_or("?");
        if t.chars().count() > 40 {
            let short: String = t.chars().take(40).collect();
            format!("{short}…")
        } else {
            t.to_string()
        }
    }

    fn query(&self, s: &SSexp) -> R<Query> {
        if let Sexp::List(items) = &s.node
            && let Some(Sexp::Symbol(head)) = items.first().map(|i| &i.node)
            && head == "->"
        {
            let Some(src) = items.get(1) else {
                return err(
                    "(-> ...) needs a source first, e.g. (-> (all) (:count)).",
                    &s.span,
                );
            };
            let source = self.source(src)?;
            let mut steps: Vec<Spanned<Step>> = Vec::new();
            for st in &items[2..] {
                if let Some(prev) = steps.last()
                    && registry::step_kind(&prev.node) == Kind::Shaper
                {
                    return err(
                        "This step expects a set of tasks, but the previous step produced a final value.",
                        &st.span,
                    );
                }
                steps.push(Spanned::new(self.step(st)?, st.span.clone()));
            }
            return Ok(Query { source, steps });
        }
        Ok(Query {
            source: self.source(s)?,
            steps: Vec::new(),
        })
    }

    /// A query operand that must yield a task set.
    fn set_query(&self, s: &SSexp, msg: &str) -> R<Query> {
        let q = self.query(s)?;
        if q.steps
            .last()
            .is_some_and(|st| registry::step_kind(&st.node) == Kind::Shaper)
        {
            return err(msg, &s.span);
        }
        Ok(q)
    }

    fn source(&self, s: &SSexp) -> R<Spanned<Source>> {
        let form_hint = "a query is a form like (all) or (-> SOURCE STEP...)";
        let items = match &s.node {
            Sexp::List(items) => items,
            Sexp::Keyword(k) => {
                let write = if lookup(Category::Step, k).is_some() {
                    format!("(:{k})")
                } else {
                    format!("({k})")
                };
                return err(
                    format!(
                        ":{k} is a bare keyword, not a form; every operator is a form: write {write}."
                    ),
                    &s.span,
                );
            }
            Sexp::Symbol(w) => {
                if lookup(Category::Source, w).is_some() {
                    return err(
                        format!("{w} is a bare word, not a form; write ({w})."),
                        &s.span,
                    );
                }
                return err(
                    format!(
                        "{w} is a bare word, not a source form; a named view runs as (query \"{w}\")."
                    ),
                    &s.span,
                );
            }
            _ => {
                return err(
                    format!("Expected a query; {form_hint}, got {}.", self.quote(s)),
                    &s.span,
                );
            }
        };
        let Some(head) = items.first() else {
            return err(format!("Empty form (); {form_hint}."), &s.span);
        };
        let args = &items[1..];
        let name = match &head.node {
            Sexp::Symbol(n) => n,
            Sexp::Keyword(k) if let Some(step) = lookup(Category::Step, k) => {
                let u = step.usage;
                return err(
                    format!(
                        "{u} is a step, not a source; steps follow a source, e.g. (-> (all) {u})."
                    ),
                    &s.span,
                );
            }
            _ => {
                return err(
                    format!("Expected a source like (all), got {}.", self.quote(s)),
                    &head.span,
                );
            }
        };
        if name == "->" {
            return err(
                "A pipeline (-> ...) cannot be a source; start it with a source form like (all).",
                &s.span,
            );
        }
        if matches!(name.as_str(), "union" | "minus" | "intersect" | "or-else") {
            return err(
                "Set operations are pipeline steps, e.g. (-> (active) (:union (dormant))).",
                &s.span,
            );
        }
        let entry = lookup(Category::Source, name).or_else(|| lookup(Category::Write, name));
        let Some(entry) = entry else {
            let mut known = names(Category::Source);
            known.extend(names(Category::Write));
            return err(unknown("source", "sources", "", name, &known), &head.span);
        };
        let node = match entry.op {
            Op::Node => {
                let pat =
                    self.one_string(args, &s.span, "(node \"substr\") needs a string pattern.")?;
                if pat.is_empty() {
                    return err("(node \"substr\") needs a non-empty pattern.", &s.span);
                }
                Source::Node(pat)
            }
            Op::Search => {
                let pat =
                    self.one_string(args, &s.span, "(search \"text\") needs a string pattern.")?;
                if pat.is_empty() {
                    return err("(search \"\") needs a non-empty pattern.", &s.span);
                }
                Source::Search(pat)
            }
            Op::View => Source::View(self.view_name(args, &s.span, entry)?),
            Op::Undefine => Source::Undefine {
                name: self.view_name(args, &s.span, entry)?,
            },
            Op::Define => {
                let name = self.view_name(args.get(..1).unwrap_or(args), &s.span, entry)?;
                let [_, body] = args else {
                    return err(
                        format!(
                            "(define! \"name\" Q) needs a view name and one query, got {}.",
                            arity_text(args.len())
                        ),
                        &s.span,
                    );
                };
                let body = self.set_query(
                    body,
                    "A view definition must yield a set of tasks, not a final value.",
                )?;
                Source::Define {
                    name,
                    body: Box::new(body),
                }
            }
            op => {
                if !args.is_empty() {
                    return err(format!("{} takes no arguments.", entry.usage), &s.span);
                }
                match op {
                    Op::All => Source::All,
                    Op::Active => Source::Active,
                    Op::Dormant => Source::Dormant,
                    Op::Current => Source::Current,
                    Op::Mine => Source::Mine,
                    Op::Schema => Source::Schema,
                    Op::Views => Source::Views,
                    Op::Fields => Source::Fields,
                    _ => Source::Edges,
                }
            }
        };
        Ok(Spanned::new(node, s.span.clone()))
    }

    fn one_string(&self, args: &[SSexp], span: &Span, msg: &str) -> R<String> {
        match args {
            [
                Spanned {
                    node: Sexp::Str(v), ..
                },
            ] => Ok(v.clone()),
            _ => err(msg, span),
        }
    }

    fn view_name(&self, args: &[SSexp], span: &Span, entry: &FormEntry) -> R<String> {
        let msg = format!("{} needs a non-empty string view name.", entry.usage);
        let name = self.one_string(args, span, &msg)?;
        // A write form's name must show: blank (Unicode whitespace only) is empty.
        let blank = entry.op != Op::View && name.trim().is_empty();
        if name.is_empty() || blank {
            return err(msg, span);
        }
        // A view name is recorded in an event and shown on one line: a write
        // form refuses control characters, saying so (issue 14).
        if entry.op != Op::View && name.chars().any(char::is_control) {
            return err(
                format!(
                    "{} needs a view name without control characters (line breaks, tabs).",
                    entry.usage
                ),
                span,
            );
        }
        Ok(name)
    }

    fn arity(
        &self,
        entry: &FormEntry,
        args: &[SSexp],
        span: &Span,
        min: usize,
        max: usize,
    ) -> R<()> {
        let n = args.len();
        if n >= min && n <= max {
            return Ok(());
        }
        let want = if min == max {
            arity_text(min)
        } else if max == usize::MAX {
            format!("at least {}", arity_text(min))
        } else {
            format!("{min} or {max} arguments")
        };
        err(format!("{} takes {want}, got {}.", entry.usage, n), span)
    }

    fn step(&self, s: &SSexp) -> R<Step> {
        let items = match &s.node {
            Sexp::List(items) => items,
            Sexp::Keyword(k) => {
                if lookup(Category::Step, k).is_some() {
                    return err(
                        format!(
                            ":{k} is a bare keyword, not a form; every operator is a form: write (:{k})."
                        ),
                        &s.span,
                    );
                }
                return err(
                    unknown("step", "steps", ":", k, &names(Category::Step)),
                    &s.span,
                );
            }
            _ => {
                return err(
                    format!("Expected a step like (:where PRED), got {}.", self.quote(s)),
                    &s.span,
                );
            }
        };
        let Some(head) = items.first() else {
            return err(
                "Empty form (); a step is a keyword form like (:ids).",
                &s.span,
            );
        };
        let args = &items[1..];
        let entry = match &head.node {
            Sexp::Keyword(k) => match lookup(Category::Step, k) {
                Some(e) => e,
                None => {
                    return err(
                        unknown("step", "steps", ":", k, &names(Category::Step)),
                        &head.span,
                    );
                }
            },
            Sexp::Symbol(w) if lookup(Category::Step, w).is_some() => {
                return err(
                    format!("Steps are keyword forms: write (:{w} ...), not ({w} ...)."),
                    &head.span,
                );
            }
            _ => {
                return err(
                    format!("Expected a step like (:where PRED), got {}.", self.quote(s)),
                    &s.span,
                );
            }
        };
        let span = &s.span;
        Ok(match entry.op {
            Op::Follow | Op::Back => {
                self.arity(entry, args, span, 1, 1)?;
                let dir = if entry.op == Op::Follow {
                    TravDir::Follow
                } else {
                    TravDir::Back
                };
                Step::Traverse(Trav {
                    dir,
                    edge: self.edge(&args[0])?,
                })
            }
            Op::Where => {
                self.arity(entry, args, span, 1, 1)?;
                Step::Where(self.pred(&args[0])?)
            }
            Op::Sort => {
                self.arity(entry, args, span, 1, 2)?;
                let field = self.field(&args[0])?;
                let dir = match args.get(1) {
                    None => Dir::Desc,
                    Some(d) => self.dir(d)?,
                };
                Step::Sort(field, dir)
            }
            Op::Take => {
                self.arity(entry, args, span, 1, 1)?;
                match &args[0].node {
                    Sexp::Int(n) => Step::Take(*n),
                    _ => {
                        return err(
                            format!(":take needs an integer, got {}.", self.quote(&args[0])),
                            &args[0].span,
                        );
                    }
                }
            }
            Op::Enrich | Op::Ids | Op::Count => {
                self.arity(entry, args, span, 0, 0)?;
                match entry.op {
                    Op::Enrich => Step::Enrich,
                    Op::Ids => Step::Ids,
                    _ => Step::Count,
                }
            }
            Op::Union | Op::Intersect | Op::Minus | Op::OrElse => {
                self.arity(entry, args, span, 1, 1)?;
                let op = match entry.op {
                    Op::Union => SetOp::Union,
                    Op::Intersect => SetOp::Intersect,
                    Op::Minus => SetOp::Minus,
                    _ => SetOp::OrElse,
                };
                let q = self.set_query(
                    &args[0],
                    "A set-operation operand must yield a set of tasks, not a final value.",
                )?;
                Step::SetOp(op, Box::new(q))
            }
            Op::Closure => {
                self.arity(entry, args, span, 1, usize::MAX)?;
                Step::Closure(args.iter().map(|a| self.edge(a)).collect::<R<_>>()?)
            }
            Op::Select => {
                self.arity(entry, args, span, 1, usize::MAX)?;
                Step::Select(args.iter().map(|a| self.field(a)).collect::<R<_>>()?)
            }
            Op::GroupBy => {
                self.arity(entry, args, span, 1, 1)?;
                Step::GroupBy(self.field(&args[0])?)
            }
            Op::SetStatus => {
                self.arity(entry, args, span, 1, 1)?;
                Step::Mutate(Mutation::SetStatus(self.status(&args[0])?))
            }
            Op::SetMeta => self.set_meta(entry, args, span)?,
            Op::Claim => {
                self.arity(entry, args, span, 1, 1)?;
                match &args[0].node {
                    Sexp::Int(n) if (1..=MAX_CLAIM_SECONDS).contains(n) => {
                        Step::Mutate(Mutation::Claim {
                            seconds: *n,
                            agent: (),
                        })
                    }
                    _ => {
                        return err(
                            format!(
                                ":claim! needs a lease of 1 to 86400 seconds, got {}.",
                                self.quote(&args[0])
                            ),
                            &args[0].span,
                        );
                    }
                }
            }
            Op::Release => {
                self.arity(entry, args, span, 0, 0)?;
                Step::Mutate(Mutation::Release { agent: () })
            }
            Op::Link | Op::Unlink => {
                self.arity(entry, args, span, 2, 2)?;
                let edge = self.edge(&args[0])?;
                if !LINK_EDGES.contains(&edge) {
                    return err(
                        format!(
                            "{} takes :phase-of, :depends-on or :related, got :{edge}.",
                            entry.usage
                        ),
                        &args[0].span,
                    );
                }
                // A depot prefix is stripped (spec/store.md); what is left
                // must name a task, and never a reserved `@` node.
                let target = match &args[1].node {
                    Sexp::Str(t) => crate::store::slug::strip_depot(t).to_string(),
                    _ => String::new(),
                };
                if target.starts_with('@') {
                    let verb = if entry.op == Op::Link {
                        "linked"
                    } else {
                        "unlinked"
                    };
                    return err(
                        format!("{} is reserved; it cannot be {verb}.", shown_name(&target)),
                        &args[1].span,
                    );
                }
                let target = match target {
                    t if !t.is_empty() => t,
                    _ => {
                        return err(
                            format!(
                                "{} needs a non-empty target slug string, got {}.",
                                entry.usage,
                                self.quote(&args[1])
                            ),
                            &args[1].span,
                        );
                    }
                };
                if entry.op == Op::Link {
                    Step::Mutate(Mutation::Link { edge, target })
                } else {
                    Step::Mutate(Mutation::Unlink { edge, target })
                }
            }
            _ => {
                return err(
                    format!("Expected a step like (:where PRED), got {}.", self.quote(s)),
                    span,
                );
            }
        })
    }
}
