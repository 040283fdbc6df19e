//! The plan views' or-else in one probe (issue 23; docs/planner.md rule 12):
//! `plan` is "the current task's children, or if none, its siblings" —
//! `(-> (current) (:follow :phase-of) (:or-else (-> (current) (:back
//! :phase-of) (:follow :phase-of))))`. Lowered as written that is two
//! probes of the current task, a materialized first operand and an
//! emptiness test; with the counter columns it is one probe of the slug
//! index for the task's `child_count` and one of the parent index
//! ([`Base::PlanOf`]): its children when it has any, else its parent's
//! (none when it has no parent, as the traversal gives none). The same
//! rows: `child_count` counts exactly the rows whose `parent_task_id` is
//! the task, which is what `(:follow :phase-of)` reads.

use crate::store::model::EdgeType;
use crate::tq::ast::{SetOp, Trav, TravDir};
use crate::tq::ir::{Base, Ir, Node, Options, Rel};

/// The rule's name in `--explain` and the coverage count.
pub const NAME: &str = "plan-probe";

/// Rewrites every or-else of that shape under `ir` (only when the store
/// keeps the counter columns); the number of rewrites.
pub fn apply(ir: &mut Ir, opts: &Options) -> usize {
    if !opts.counters {
        return 0;
    }
    walk(&mut ir.root)
}

fn walk(rel: &mut Rel) -> usize {
    let mut n = 0;
    for c in rel.children_mut() {
        n += walk(c);
    }
    if let Node::SetOp(SetOp::OrElse, a, b) = &rel.node
        && let Some(slug) = children_of_current(a)
        && siblings_of(b) == Some(slug)
    {
        rel.node = Node::Scan {
            from: Base::PlanOf(slug.to_string()),
            conds: vec![],
        };
        n += 1;
    }
    n
}

fn phase(dir: TravDir) -> Trav {
    Trav {
        dir,
        edge: EdgeType::PhaseOf,
    }
}

/// `r` is `(:follow :phase-of)` straight over its input, no conditions.
fn children_of(r: &Rel) -> Option<&Rel> {
    match &r.node {
        Node::Scan {
            from: Base::Traverse(input, t),
            conds,
        } if conds.is_empty() && *t == phase(TravDir::Follow) => Some(input),
        _ => None,
    }
}

/// The slug when `r` is the children of `(current)`.
fn children_of_current(r: &Rel) -> Option<&str> {
    match &children_of(r)?.node {
        Node::Current(s) => Some(s),
        _ => None,
    }
}

/// The slug when `r` is the children of the parent of `(current)`.
fn siblings_of(r: &Rel) -> Option<&str> {
    let parent = children_of(r)?;
    match &parent.node {
        Node::Scan {
            from: Base::Traverse(input, t),
            conds,
        } if conds.is_empty() && *t == phase(TravDir::Back) => match &input.node {
            Node::Current(s) => Some(s),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tq::ir::{Order, Shape};

    fn cur(s: &str) -> Rel {
        Rel::new(Node::Current(s.into()), Order::Any)
    }

    fn trav(input: Rel, dir: TravDir) -> Rel {
        Rel::new(
            Node::Scan {
                from: Base::Traverse(Box::new(input), phase(dir)),
                conds: vec![],
            },
            Order::Any,
        )
    }

    fn plan(a: &str, b: &str) -> Ir {
        let children = trav(cur(a), TravDir::Follow);
        let siblings = trav(trav(cur(b), TravDir::Back), TravDir::Follow);
        Ir {
            root: Rel::new(
                Node::SetOp(SetOp::OrElse, Box::new(children), Box::new(siblings)),
                Order::Any,
            ),
            shape: Shape::Ids,
            reflect: false,
            kinds: vec![],
            counters: false,
            now: 0,
        }
    }

    fn on() -> Options {
        Options {
            counters: true,
            ..Options::default()
        }
    }

    #[test]
    fn the_plan_or_else_is_one_probe() {
        let mut ir = plan("x", "x");
        assert_eq!(apply(&mut ir, &on()), 1);
        assert_eq!(
            ir.root.node,
            Node::Scan {
                from: Base::PlanOf("x".into()),
                conds: vec![]
            }
        );
    }

    #[test]
    fn other_shapes_and_stores_without_counters_are_left() {
        let mut two = plan("x", "y");
        assert_eq!(apply(&mut two, &on()), 0);
        let mut bare = plan("x", "x");
        assert_eq!(apply(&mut bare, &Options::default()), 0);
        assert!(matches!(bare.root.node, Node::SetOp(SetOp::OrElse, _, _)));
    }
}
