//! The canonical printer (spec/tq.md §5): typed query → text in lower case
//! with single spaces, so that `compile(&print(q), keys) == Ok(q)` and equal
//! queries print equal text. Views are stored in this form.

use std::fmt::Write as _;

use crate::tq::ast::{
    Cmp, DateOp, Dir, Field, Lit, Mutation, Pred, Quant, Query, SetOp, Source, Step, Trav, TravDir,
    Value,
};
use crate::tq::registry::field_name;

/// Prints `q` canonically: `(-> SOURCE STEP...)`, or the bare source when
/// there are no steps; strings escaped with `\"` and `\\`; keyword literals
/// as strings; decimals always with a `.`; dates as `"YYYY-MM-DD"`.
pub fn print(q: &Query) -> String {
    let mut out = String::new();
    query(&mut out, q);
    out
}

/// The canonical print of one predicate (as inside `(:where ...)`); used by
/// the IR's explain text (docs/planner.md "The IR").
pub fn print_pred(p: &Pred) -> String {
    let mut out = String::new();
    pred(&mut out, p);
    out
}

/// The canonical print of a field keyword (`:slug`, `:priority`).
pub fn print_field(f: &Field) -> String {
    let mut out = String::new();
    field(&mut out, f);
    out
}

/// The canonical print of a traversal (`:follow :phase-of`).
pub fn print_trav(t: &Trav) -> String {
    let mut out = String::new();
    trav(&mut out, t);
    out
}

fn query(out: &mut String, q: &Query) {
    if q.steps.is_empty() {
        source(out, &q.source.node);
        return;
    }
    out.push_str("(-> ");
    source(out, &q.source.node);
    for s in &q.steps {
        out.push(' ');
        step(out, &s.node);
    }
    out.push(')');
}

fn string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
}

fn source(out: &mut String, s: &Source) {
    match s {
        Source::All => out.push_str("(all)"),
        Source::Active => out.push_str("(active)"),
        Source::Dormant => out.push_str("(dormant)"),
        Source::Current => out.push_str("(current)"),
        Source::Mine => out.push_str("(mine)"),
        Source::Schema => out.push_str("(schema)"),
        Source::Views => out.push_str("(views)"),
        Source::Fields => out.push_str("(fields)"),
        Source::Edges => out.push_str("(edges)"),
        Source::Node(p) => {
            out.push_str("(node ");
            string(out, p);
            out.push(')');
        }
        Source::Search(p) => {
            out.push_str("(search ");
            string(out, p);
            out.push(')');
        }
        Source::View(n) => {
            out.push_str("(query ");
            string(out, n);
            out.push(')');
        }
        Source::Define { name, body } => {
            out.push_str("(define! ");
            string(out, name);
            out.push(' ');
            query(out, body);
            out.push(')');
        }
        Source::Undefine { name } => {
            out.push_str("(undefine! ");
            string(out, name);
            out.push(')');
        }
    }
}

fn field(out: &mut String, f: &Field) {
    out.push(':');
    out.push_str(&field_name(f));
}

fn trav(out: &mut String, t: &Trav) {
    out.push_str(match t.dir {
        TravDir::Follow => "(:follow :",
        TravDir::Back => "(:back :",
    });
    out.push_str(t.edge.as_str());
    out.push(')');
}

/// A decimal that lexes back as a decimal to the same value.
fn dec(out: &mut String, d: f64) {
    let s = format!("{d}");
    out.push_str(&s);
    if !s.contains('.') {
        out.push_str(".0");
    }
}

/// A comparison operand: an integer when integral and in range, else a decimal.
fn number(out: &mut String, n: f64) {
    if n.fract() == 0.0 && n.abs() < 9.0e15 {
        let _ = write!(out, "{}", n as i64);
    } else {
        dec(out, n);
    }
}

fn step(out: &mut String, s: &Step) {
    match s {
        Step::Traverse(t) => trav(out, t),
        Step::Where(p) => {
            out.push_str("(:where ");
            pred(out, p);
            out.push(')');
        }
        Step::Sort(f, d) => {
            out.push_str("(:sort ");
            field(out, f);
            out.push_str(match d {
                Dir::Asc => " :asc)",
                Dir::Desc => " :desc)",
            });
        }
        Step::Take(n) => {
            let _ = write!(out, "(:take {n})");
        }
        Step::Enrich => out.push_str("(:enrich)"),
        Step::Mutate(Mutation::Claim { seconds: n, .. }) => {
            let _ = write!(out, "(:claim! {n})");
        }
        Step::Mutate(Mutation::Release { .. }) => out.push_str("(:release!)"),
        Step::SetOp(op, q) => {
            out.push_str(match op {
                SetOp::Union => "(:union ",
                SetOp::Intersect => "(:intersect ",
                SetOp::Minus => "(:minus ",
                SetOp::OrElse => "(:or-else ",
            });
            query(out, q);
            out.push(')');
        }
        Step::Closure(edges) => {
            out.push_str("(:closure");
            for e in edges {
                out.push_str(" :");
                out.push_str(e.as_str());
            }
            out.push(')');
        }
        Step::Select(fields) => {
            out.push_str("(:select");
            for f in fields {
                out.push(' ');
                field(out, f);
            }
            out.push(')');
        }
        Step::GroupBy(f) => {
            out.push_str("(:group-by ");
            field(out, f);
            out.push(')');
        }
        Step::Ids => out.push_str("(:ids)"),
        Step::Count => out.push_str("(:count)"),
        Step::Mutate(Mutation::SetStatus(st)) => {
            let _ = write!(out, "(:set-status! :{})", st.as_str());
        }
        Step::Mutate(Mutation::SetMeta { key, value }) => {
            let _ = write!(out, "(:set! :{key} ");
            string(out, value);
            out.push(')');
        }
        Step::Mutate(Mutation::Link { edge, target } | Mutation::Unlink { edge, target }) => {
            let head = if matches!(s, Step::Mutate(Mutation::Link { .. })) {
                "(:link! :"
            } else {
                "(:unlink! :"
            };
            out.push_str(head);
            out.push_str(edge.as_str());
            out.push(' ');
            string(out, target);
            out.push(')');
        }
    }
}

fn value(out: &mut String, v: &Value) {
    match v {
        Value::Field(f) => field(out, f),
        Value::Count(t) => {
            out.push_str("(count ");
            trav(out, t);
            out.push(')');
        }
    }
}

fn lit(out: &mut String, l: &Lit) {
    match l {
        Lit::Str(s) => string(out, s),
        Lit::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Lit::Dec(d) => dec(out, *d),
    }
}

fn pred(out: &mut String, p: &Pred) {
    match p {
        Pred::Eq(v, l) => {
            out.push_str("(= ");
            value(out, v);
            out.push(' ');
            lit(out, l);
            out.push(')');
        }
        Pred::Has(f) => {
            out.push_str("(has ");
            field(out, f);
            out.push(')');
        }
        Pred::Matches(f, s) => {
            out.push_str("(matches ");
            field(out, f);
            out.push(' ');
            string(out, s);
            out.push(')');
        }
        Pred::Compare(c, v, n) => {
            out.push_str(match c {
                Cmp::Gt => "(> ",
                Cmp::Lt => "(< ",
                Cmp::Ge => "(>= ",
                Cmp::Le => "(<= ",
            });
            value(out, v);
            out.push(' ');
            number(out, *n);
            out.push(')');
        }
        Pred::Date(op, f, d) => {
            out.push_str(match op {
                DateOp::On => "(on ",
                DateOp::Since => "(since ",
                DateOp::Before => "(before ",
            });
            field(out, f);
            let day = d
                .format(time::macros::format_description!("[year]-[month]-[day]"))
                .unwrap_or_default();
            let _ = write!(out, " \"{day}\")");
        }
        Pred::And(ps) | Pred::Or(ps) => {
            out.push_str(if matches!(p, Pred::And(_)) {
                "(and"
            } else {
                "(or"
            });
            for q in ps {
                out.push(' ');
                pred(out, q);
            }
            out.push(')');
        }
        Pred::Not(q) => {
            out.push_str("(not ");
            pred(out, q);
            out.push(')');
        }
        Pred::Quantified(q, t, body) => {
            out.push_str(match q {
                Quant::All => "(all ",
                Quant::Any => "(any ",
                Quant::None => "(none ",
            });
            trav(out, t);
            out.push(' ');
            pred(out, body);
            out.push(')');
        }
    }
}
