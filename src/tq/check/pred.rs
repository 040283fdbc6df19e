//! Predicates (spec/tq.md §2 "Predicates"): leaves, combinators and
//! quantifiers, with the field-type rules and strict dates.

use crate::tq::ast::{Cmp, DateOp, FieldType, Lit, Pred, Quant};
use crate::tq::parser::{SSexp, Sexp};
use crate::tq::registry::{self, Category, Op, field_type, field_type_str, lookup};

use super::{Checker, R, err, names, unknown};

impl Checker<'_> {
    pub(super) fn pred(&self, s: &SSexp) -> R<Pred> {
        let items = match &s.node {
            Sexp::List(items) if !items.is_empty() => items,
            _ => {
                return err(
                    format!(
                        "Expected a predicate like (= :status \"active\"), got {}.",
                        self.quote(s)
                    ),
                    &s.span,
                );
            }
        };
        let head = &items[0];
        let args = &items[1..];
        let span = &s.span;
        let entry = match &head.node {
            Sexp::Symbol(n) if n == "count" => {
                return err(
                    "(count TRAV) is a value, not a predicate; compare it, e.g. (> (count (:follow :depends-on)) 0).",
                    span,
                );
            }
            Sexp::Symbol(n) => match lookup(Category::Predicate, n) {
                Some(e) => e,
                None => {
                    return err(
                        unknown(
                            "predicate",
                            "predicates",
                            "",
                            n,
                            &names(Category::Predicate),
                        ),
                        &head.span,
                    );
                }
            },
            Sexp::Keyword(k) if lookup(Category::Predicate, k).is_some() => {
                return err(
                    format!("Predicates are plain names: write ({k} ...), not (:{k} ...)."),
                    &head.span,
                );
            }
            Sexp::Keyword(k) => {
                return err(
                    unknown(
                        "predicate",
                        "predicates",
                        "",
                        &format!(":{k}"),
                        &names(Category::Predicate),
                    ),
                    &head.span,
                );
            }
            _ => {
                return err(
                    format!(
                        "Expected a predicate like (= :status \"active\"), got {}.",
                        self.quote(s)
                    ),
                    span,
                );
            }
        };
        Ok(match entry.op {
            Op::Eq => {
                self.arity(entry, args, span, 2, 2)?;
                let v = self.value(&args[0])?;
                let lit = self.lit(&args[1])?;
                let ty = Self::value_type(&v);
                if ty != FieldType::Text && matches!(lit, Lit::Str(_)) {
                    return err(
                        format!(
                            "= needs a number for {}, got {}.",
                            Self::value_name(&v),
                            self.quote(&args[1])
                        ),
                        &args[1].span,
                    );
                }
                Pred::Eq(v, lit)
            }
            Op::Has => {
                self.arity(entry, args, span, 1, 1)?;
                Pred::Has(self.field(&args[0])?)
            }
            Op::Matches => {
                self.arity(entry, args, span, 2, 2)?;
                let f = self.field(&args[0])?;
                let ty = field_type(&f);
                if ty != FieldType::Text {
                    return err(
                        format!(
                            "matches needs a text field; :{} is {}.",
                            registry::field_name(&f),
                            field_type_str(ty)
                        ),
                        &args[0].span,
                    );
                }
                match &args[1].node {
                    Sexp::Str(v) => Pred::Matches(f, v.clone()),
                    _ => {
                        return err(
                            format!("matches needs a string, got {}.", self.quote(&args[1])),
                            &args[1].span,
                        );
                    }
                }
            }
            Op::Gt | Op::Lt | Op::Ge | Op::Le => {
                self.arity(entry, args, span, 2, 2)?;
                let v = self.value(&args[0])?;
                let ty = Self::value_type(&v);
                if ty == FieldType::Text {
                    return err(
                        format!(
                            "{} needs a numeric field; {} is text.",
                            entry.name,
                            Self::value_name(&v)
                        ),
                        &args[0].span,
                    );
                }
                let n = match &args[1].node {
                    Sexp::Int(i) => *i as f64,
                    Sexp::Dec(d) => *d,
                    _ => {
                        return err(
                            format!(
                                "{} needs a number, got {}.",
                                entry.name,
                                self.quote(&args[1])
                            ),
                            &args[1].span,
                        );
                    }
                };
                let cmp = match entry.op {
                    Op::Gt => Cmp::Gt,
                    Op::Lt => Cmp::Lt,
                    Op::Ge => Cmp::Ge,
                    _ => Cmp::Le,
                };
                Pred::Compare(cmp, v, n)
            }
            Op::On | Op::Since | Op::Before => {
                self.arity(entry, args, span, 2, 2)?;
                let f = self.field(&args[0])?;
                let ty = field_type(&f);
                if ty != FieldType::Timestamp {
                    return err(
                        format!(
                            "{} needs a timestamp field; :{} is {}.",
                            entry.name,
                            registry::field_name(&f),
                            field_type_str(ty)
                        ),
                        &args[0].span,
                    );
                }
                let d = self.date(entry, &args[1])?;
                let op = match entry.op {
                    Op::On => DateOp::On,
                    Op::Since => DateOp::Since,
                    _ => DateOp::Before,
                };
                Pred::Date(op, f, d)
            }
            Op::And | Op::Or => {
                self.arity(entry, args, span, 1, usize::MAX)?;
                let ps = args.iter().map(|a| self.pred(a)).collect::<R<Vec<_>>>()?;
                if entry.op == Op::And {
                    Pred::And(ps)
                } else {
                    Pred::Or(ps)
                }
            }
            Op::Not => {
                self.arity(entry, args, span, 1, 1)?;
                Pred::Not(Box::new(self.pred(&args[0])?))
            }
            Op::QAll | Op::QAny | Op::QNone => {
                self.arity(entry, args, span, 2, 2)?;
                let t = self.trav(&args[0])?;
                let p = self.pred(&args[1])?;
                let q = match entry.op {
                    Op::QAll => Quant::All,
                    Op::QAny => Quant::Any,
                    _ => Quant::None,
                };
                Pred::Quantified(q, t, Box::new(p))
            }
            _ => {
                return err(
                    format!(
                        "Expected a predicate like (= :status \"active\"), got {}.",
                        self.quote(s)
                    ),
                    span,
                );
            }
        })
    }
}

/// Parses exactly `YYYY-MM-DD` (a four-digit year, no sign; two-digit
/// month and day) into a real calendar date with `time`'s parser
/// (`2026-02-30`, `2026-2-03` and `+026-02-03` are `None`).
pub fn parse_date(v: &str) -> Option<time::Date> {
    const FORMAT: &[time::format_description::BorrowedFormatItem<'_>] =
        time::macros::format_description!("[year]-[month]-[day]");
    let year_digits = v.as_bytes().get(..4)?;
    if v.len() != 10 || !year_digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    time::Date::parse(v, FORMAT).ok()
}

#[cfg(test)]
mod tests {
    use super::parse_date;

    #[test]
    fn only_real_dates_in_the_exact_form() {
        let d = parse_date("2026-02-28").unwrap();
        assert_eq!((d.year(), u8::from(d.month()), d.day()), (2026, 2, 28));
        assert_eq!(parse_date("2024-02-29").map(|d| d.day()), Some(29));
        for bad in [
            "2026-02-30",
            "2025-02-29",
            "2026-2-03",
            "2026-02-3",
            "+026-02-03",
            "-026-02-03",
            "2026/02/03",
            "20260203",
            "2026-02-03T",
            " 2026-02-03",
            "2026-13-01",
            "2026-00-10",
            "2026-01-00",
            "",
            "２０２６-02-03",
        ] {
            assert_eq!(parse_date(bad), None, "{bad}");
        }
    }
}
