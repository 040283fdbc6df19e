//! Argument checkers: fields, edges, traversals, values, literals, dates,
//! statuses and sort directions (spec/tq.md §2).

use crate::store::model::{EdgeType, Status};
use crate::tq::ast::{Dir, Field, FieldType, Lit, Mutation, Span, Step, Trav, TravDir, Value};
use crate::tq::diagnostic::Diagnostic;
use crate::tq::parser::{SSexp, Sexp};
use crate::tq::registry::{self, FormEntry, field_type, lookup_field};

use super::{Checker, R, err, parse_date, suggest, unknown};

impl Checker<'_> {
    pub(super) fn set_meta(&self, entry: &FormEntry, args: &[SSexp], span: &Span) -> R<Step> {
        self.arity(entry, args, span, 2, 2)?;
        let key = match &args[0].node {
            Sexp::Keyword(k) => k.clone(),
            _ => {
                return err(
                    format!(
                        "(:set! :key \"value\") needs a keyword key like :priority, got {}.",
                        self.quote(&args[0])
                    ),
                    &args[0].span,
                );
            }
        };
        if key == "slug" || key == "status" {
            return err(
                "(:set! ...) will not set :slug or :status; use (:set-status! STATUS) for status.",
                span,
            );
        }
        // Every other declared field is computed (or a reflection prop):
        // recorded as metadata it would be invisible behind the field.
        // `display-name` IS metadata by definition, so it is settable.
        if key != "display-name" && lookup_field(&key).is_some() {
            return err(
                format!("(:set! ...) will not set :{key}; it is a computed field, not metadata."),
                span,
            );
        }
        let value = match &args[1].node {
            Sexp::Str(v) => v.clone(),
            Sexp::Int(i) => i.to_string(),
            Sexp::Dec(_) => self.quote(&args[1]),
            _ => {
                return err(
                    format!(
                        "(:set! :key \"value\") needs a string or number value, got {}.",
                        self.quote(&args[1])
                    ),
                    &args[1].span,
                );
            }
        };
        Ok(Step::Mutate(Mutation::SetMeta { key, value }))
    }

    pub(super) fn dir(&self, s: &SSexp) -> R<Dir> {
        match &s.node {
            Sexp::Keyword(k) if k == "asc" => Ok(Dir::Asc),
            Sexp::Keyword(k) if k == "desc" => Ok(Dir::Desc),
            Sexp::Keyword(k) | Sexp::Symbol(k) => match suggest(k, ["asc", "desc"]) {
                Some(near) => err(
                    format!("(:sort ...) needs :asc or :desc; did you mean :{near}?"),
                    &s.span,
                ),
                None => err(
                    format!("(:sort ...) needs :asc or :desc, got {}.", self.quote(s)),
                    &s.span,
                ),
            },
            _ => err(
                format!("(:sort ...) needs :asc or :desc, got {}.", self.quote(s)),
                &s.span,
            ),
        }
    }

    pub(super) fn status(&self, s: &SSexp) -> R<Status> {
        let (name, shown) = match &s.node {
            Sexp::Keyword(k) => (k.clone(), format!(":{}", super::shown_name(k))),
            Sexp::Str(v) | Sexp::Symbol(v) => (v.clone(), self.quote(s)),
            _ => {
                return err(
                    format!(
                        "(:set-status! STATUS) needs a status, got {}.",
                        self.quote(s)
                    ),
                    &s.span,
                );
            }
        };
        if let Some(st) = Status::parse(&name) {
            return Ok(st);
        }
        let known: Vec<&str> = Status::ALL.iter().map(|s| s.as_str()).collect();
        match suggest(&name.to_ascii_lowercase(), known.iter().copied()) {
            Some(near) => err(
                format!("Unknown status {shown}; did you mean {near}?"),
                &s.span,
            ),
            None => err(
                format!(
                    "Unknown status {shown}. Known statuses: {}.",
                    known.join(", ")
                ),
                &s.span,
            ),
        }
    }

    pub(super) fn edge(&self, s: &SSexp) -> R<EdgeType> {
        match &s.node {
            Sexp::Keyword(k) => EdgeType::parse(k).map_or_else(
                || {
                    let known: Vec<String> = EdgeType::ALL
                        .iter()
                        .map(|e| e.as_str().to_string())
                        .collect();
                    err(unknown("edge", "edges", ":", k, &known), &s.span)
                },
                Ok,
            ),
            _ => err(
                format!(
                    "Expected an edge keyword like :phase-of, got {}.",
                    self.quote(s)
                ),
                &s.span,
            ),
        }
    }

    pub(super) fn field(&self, s: &SSexp) -> R<Field> {
        let Sexp::Keyword(k) = &s.node else {
            return err(
                format!(
                    "Expected a field keyword like :status, got {}.",
                    self.quote(s)
                ),
                &s.span,
            );
        };
        if let Some(e) = lookup_field(k) {
            return Ok(e.field.clone());
        }
        if self.meta_keys.iter().any(|m| m.to_lowercase() == *k) {
            return Ok(Field::Meta(k.clone()));
        }
        let mut known: Vec<String> = registry::fields()
            .iter()
            .map(|f| f.name.to_string())
            .collect();
        known.extend(self.meta_keys.iter().map(|m| m.to_lowercase()));
        err(unknown("field", "fields", ":", k, &known), &s.span)
    }

    pub(super) fn trav(&self, s: &SSexp) -> R<Trav> {
        if let Sexp::List(items) = &s.node
            && let [head, edge] = items.as_slice()
            && let Sexp::Keyword(k) = &head.node
        {
            let dir = match k.as_str() {
                "follow" => Some(TravDir::Follow),
                "back" => Some(TravDir::Back),
                _ => None,
            };
            if let Some(dir) = dir {
                return Ok(Trav {
                    dir,
                    edge: self.edge(edge)?,
                });
            }
        }
        err(
            format!(
                "Expected a traversal (:follow EDGE) or (:back EDGE), got {}.",
                self.quote(s)
            ),
            &s.span,
        )
    }

    pub(super) fn value(&self, s: &SSexp) -> R<Value> {
        match &s.node {
            Sexp::Keyword(_) => Ok(Value::Field(self.field(s)?)),
            Sexp::List(items) if matches!(items.first().map(|h| &h.node), Some(Sexp::Symbol(c)) if c == "count") => {
                match &items[1..] {
                    [t] => Ok(Value::Count(self.trav(t)?)),
                    _ => err(
                        "(count TRAV) takes one traversal, e.g. (count (:follow :depends-on)).",
                        &s.span,
                    ),
                }
            }
            _ => err(
                format!(
                    "Expected a field like :status or (count TRAV), got {}.",
                    self.quote(s)
                ),
                &s.span,
            ),
        }
    }

    pub(super) fn value_type(v: &Value) -> FieldType {
        match v {
            Value::Field(f) => field_type(f),
            Value::Count(_) => FieldType::Number,
        }
    }

    pub(super) fn value_name(v: &Value) -> String {
        match v {
            Value::Field(f) => format!(":{}", registry::field_name(f)),
            Value::Count(t) => {
                let d = if t.dir == TravDir::Follow {
                    "follow"
                } else {
                    "back"
                };
                format!("(count (:{d} :{}))", t.edge)
            }
        }
    }

    pub(super) fn lit(&self, s: &SSexp) -> R<Lit> {
        match &s.node {
            Sexp::Str(v) => Ok(Lit::Str(v.clone())),
            Sexp::Keyword(k) => Ok(Lit::Str(k.clone())),
            Sexp::Int(i) => Ok(Lit::Int(*i)),
            Sexp::Dec(d) => Ok(Lit::Dec(*d)),
            _ => err(
                format!(
                    "Expected a literal (string or number), got {}.",
                    self.quote(s)
                ),
                &s.span,
            ),
        }
    }

    pub(super) fn date(&self, entry: &FormEntry, s: &SSexp) -> R<time::Date> {
        let Sexp::Str(v) = &s.node else {
            return err(
                format!(
                    "{} needs a \"YYYY-MM-DD\" date string, got {}.",
                    entry.name,
                    self.quote(s)
                ),
                &s.span,
            );
        };
        parse_date(v).ok_or_else(|| {
            Diagnostic::query(
                format!("\"{v}\" is not a YYYY-MM-DD date."),
                Some(s.span.clone()),
            )
        })
    }
}
