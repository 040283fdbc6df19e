//! The IR as indented text (`cairn query --explain`; docs/planner.md "The
//! IR"): one node per line, `[order]` after it, children two spaces deeper.

use std::fmt::{self, Display, Formatter, Write};

use super::{Base, Cond, Ir, Node, Order, Rel, Shape};
use crate::tq::ast::{Dir, SetOp};
use crate::tq::print::{print_field, print_pred, print_trav};

impl Display for Order {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Order::Rank => f.write_str("rank"),
            Order::Slug => f.write_str("slug"),
            Order::Key(k, d) => write!(f, "{} {}", print_field(k), dir(*d)),
            Order::Any => f.write_str("any"),
        }
    }
}

fn dir(d: Dir) -> &'static str {
    match d {
        Dir::Asc => ":asc",
        Dir::Desc => ":desc",
    }
}

impl Display for Cond {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let list = |f: &mut Formatter<'_>, op: &str, cs: &[Cond]| -> fmt::Result {
            write!(f, "({op}")?;
            for c in cs {
                write!(f, " {c}")?;
            }
            f.write_char(')')
        };
        match self {
            Cond::Pred(p) => f.write_str(&print_pred(p)),
            Cond::Live => f.write_str("live"),
            Cond::Status(ss) => {
                let names: Vec<&str> = ss.iter().map(|s| s.as_str()).collect();
                write!(f, "status in ({})", names.join(", "))
            }
            Cond::Node(s) => write!(f, "node {s:?}"),
            Cond::And(cs) => list(f, "and", cs),
            Cond::Or(cs) => list(f, "or", cs),
            Cond::Not(c) => write!(f, "(not {c})"),
            Cond::Exists(t) => write!(f, "exists {}", print_trav(t)),
            Cond::Linked => f.write_str("linked"),
            Cond::HasParent => f.write_str("parent_task_id is not null"),
            Cond::HeldBy(a) => write!(f, "held by {a:?}"),
        }
    }
}

fn conds_text(cs: &[Cond]) -> String {
    if cs.is_empty() {
        return String::new();
    }
    let parts: Vec<String> = cs.iter().map(|c| c.to_string()).collect();
    format!(" where {}", parts.join(" and "))
}

fn op_name(op: SetOp) -> &'static str {
    match op {
        SetOp::Union => "union",
        SetOp::Intersect => "intersect",
        SetOp::Minus => "minus",
        SetOp::OrElse => "or-else",
    }
}

fn write_rel(out: &mut String, r: &Rel, depth: usize) {
    let pad = "  ".repeat(depth);
    let mut kids: Vec<&Rel> = Vec::new();
    let head = match &r.node {
        Node::Scan { from, conds } => {
            let c = conds_text(conds);
            match from {
                Base::Tasks => format!("scan tasks{c}"),
                Base::Search(t) => format!("search {t:?}{c}"),
                Base::PlanOf(s) => format!("plan-of {s:?}{c}"),
                Base::Traverse(i, t) => {
                    kids.push(i);
                    format!("traverse {}{c}", print_trav(t))
                }
                Base::Closure(i, es) => {
                    kids.push(i);
                    let names: Vec<&str> = es.iter().map(|e| e.as_str()).collect();
                    format!("closure {}{c}", names.join(" "))
                }
            }
        }
        Node::Current(s) => format!("current {s:?}"),
        Node::Reflect(k) => format!("reflect {}", k.as_str()),
        Node::Empty => "empty".to_string(),
        Node::Carried(_) => "carried".to_string(),
        Node::Filter(i, c) => {
            kids.push(i);
            format!("filter {c}")
        }
        Node::SemiJoin { input, other, anti } => {
            kids.push(input);
            kids.push(other);
            if *anti { "anti-join" } else { "semi-join" }.to_string()
        }
        Node::SetOp(op, a, b) => {
            kids.push(a);
            kids.push(b);
            op_name(*op).to_string()
        }
        Node::Sort(i, k, d) => {
            kids.push(i);
            format!("sort {} {}", print_field(k), dir(*d))
        }
        Node::Take(i, n) => {
            kids.push(i);
            format!("take {n}")
        }
        Node::TopN {
            input,
            field,
            dir: d,
            n,
        } => {
            kids.push(input);
            format!("top-n {n} by {} {}", print_field(field), dir(*d))
        }
        Node::Pass(i) => {
            kids.push(i);
            "pass".to_string()
        }
    };
    let _ = writeln!(out, "{pad}{head} [{}]", r.order);
    for k in kids {
        write_rel(out, k, depth + 1);
    }
}

impl Display for Ir {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let shape = match &self.shape {
            Shape::Tasks {
                enriched,
                enrich_first,
            } => match (enriched, enrich_first) {
                (false, _) => "tasks".to_string(),
                (true, None) => "tasks enriched".to_string(),
                (true, Some(n)) => format!("tasks enriched (first {n} rows)"),
            },
            Shape::Ids => "ids".to_string(),
            Shape::Count => "count".to_string(),
            Shape::Select(fs) => {
                let names: Vec<String> = fs.iter().map(print_field).collect();
                format!("select {}", names.join(" "))
            }
            Shape::GroupBy(k) => format!("group-by {}", print_field(k)),
            Shape::Targets(_) => "targets".to_string(),
        };
        let mut out = String::new();
        let counters = if self.counters {
            " (counter columns)"
        } else {
            ""
        };
        let _ = writeln!(out, "{shape}{counters}");
        write_rel(&mut out, &self.root, 1);
        f.write_str(out.trim_end())
    }
}
