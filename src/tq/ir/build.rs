//! Plan → IR, naively (docs/planner.md "The IR"): one node per source and
//! step, every producing node ranked ([`Order::Rank`]). This is what
//! `--no-optimize` lowers; the rewrites start from it.

use super::{Base, Cond, Ir, Node, Order, Rel, Shape};
use crate::tq::ast::Status;
use crate::tq::plan::{PSource, PStep, Pipeline, ReflKind};

/// `steps` of pipeline `p` from `start` (`None`: the pipeline's own source;
/// `Some(json)`: a set carried over a mutation step) with the final `shape`.
/// `reflect` is true when any source of the whole query is reflective;
/// `now` (Unix seconds) is the clock reading claims are judged live against.
pub fn build(
    p: &Pipeline,
    steps: &[PStep],
    start: Option<&str>,
    shape: Shape,
    reflect: bool,
    now: i64,
) -> Ir {
    let mut kinds = Vec::new();
    if reflect {
        collect_kinds(p, &mut kinds);
        kinds.sort();
        kinds.dedup();
    }
    let first = match start {
        None => source(&p.source),
        Some(json) => Rel::new(Node::Carried(json.to_string()), Order::Rank),
    };
    Ir {
        root: pipeline(first, steps),
        shape,
        reflect,
        kinds,
        counters: false,
        now,
    }
}

fn collect_kinds(p: &Pipeline, out: &mut Vec<ReflKind>) {
    match &p.source {
        PSource::Reflect(k) => out.push(*k),
        PSource::View(v) => collect_kinds(v, out),
        _ => {}
    }
    for s in &p.steps {
        if let PStep::SetOp(_, sub) = s {
            collect_kinds(sub, out);
        }
    }
}

const ACTIVE: [Status; 3] = [Status::Open, Status::Active, Status::Blocked];
const DORMANT: [Status; 2] = [Status::Completed, Status::Abandoned];

fn source(s: &PSource) -> Rel {
    match s {
        PSource::All => Rel::scan(vec![Cond::Live]),
        PSource::Active => Rel::scan(vec![Cond::Status(ACTIVE.to_vec()), Cond::Live]),
        PSource::Dormant => Rel::scan(vec![Cond::Status(DORMANT.to_vec()), Cond::Live]),
        PSource::Node(sub) => Rel::scan(vec![Cond::Node(sub.clone())]),
        PSource::Search(text) => Rel::new(
            Node::Scan {
                from: Base::Search(text.clone()),
                conds: Vec::new(),
            },
            Order::Rank,
        ),
        PSource::Current(slug) => Rel::new(Node::Current(slug.clone()), Order::Rank),
        PSource::Mine(agent) => Rel::scan(vec![Cond::HeldBy(agent.clone()), Cond::Live]),
        PSource::Reflect(k) => Rel::new(Node::Reflect(*k), Order::Rank),
        PSource::View(v) => pipeline(source(&v.source), &v.steps),
        PSource::Empty => Rel::new(Node::Empty, Order::Rank),
    }
}

fn pipeline(first: Rel, steps: &[PStep]) -> Rel {
    let mut cur = first;
    for s in steps {
        cur = step(cur, s);
    }
    cur
}

fn step(cur: Rel, s: &PStep) -> Rel {
    let b = Box::new(cur);
    let node = match s {
        PStep::Traverse(t) => Node::Scan {
            from: Base::Traverse(b, *t),
            conds: Vec::new(),
        },
        PStep::Closure(edges) => Node::Scan {
            from: Base::Closure(b, edges.clone()),
            conds: Vec::new(),
        },
        PStep::Where(p) => Node::Filter(b, Cond::lift(p)),
        PStep::Sort(f, d) => Node::Sort(b, f.clone(), *d),
        PStep::Take(n) => Node::Take(b, *n),
        PStep::SetOp(op, sub) => {
            let q = pipeline(source(&sub.source), &sub.steps);
            Node::SetOp(*op, b, Box::new(q))
        }
        PStep::Mutate(_) => Node::Pass(b),
    };
    Rel::new(node, Order::Rank)
}
