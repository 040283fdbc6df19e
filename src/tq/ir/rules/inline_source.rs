//! Bare sources inlined as predicates (COMPILER.md rule 3): a semi-join whose
//! other side is a scan of the task table (`(active)`, `(dormant)`, `(all)`,
//! `(node ...)` and `:where` chains over them, once fused) and whose input is
//! a scan becomes one scan: `(:minus (dormant))` is `AND NOT (status IN
//! ('completed', 'abandoned') AND ...)`, with no second pass over the table.

use super::take;
use crate::tq::ir::{Cond, Node, Rel};

/// The rule's name in `--explain` and the coverage count.
pub const NAME: &str = "inline-source";

/// `SemiJoin{Scan{from, c}, Scan{Tasks, d}, anti}` → `Scan{from, c + [d]}`
/// (`anti`: `c + [not d]`).
pub fn apply(rel: &mut Rel) -> bool {
    let Node::SemiJoin { input, other, .. } = &rel.node else {
        return false;
    };
    if !matches!(input.node, Node::Scan { .. }) || !other.is_table_scan() {
        return false;
    }
    let old = take(rel);
    let Node::SemiJoin { input, other, anti } = old.node else {
        *rel = old;
        return false;
    };
    match (input.node, other.node) {
        (Node::Scan { from, mut conds }, Node::Scan { conds: theirs, .. }) => {
            let c = Cond::And(theirs);
            conds.push(if anti { Cond::Not(Box::new(c)) } else { c });
            *rel = Rel::new(Node::Scan { from, conds }, old.order);
            true
        }
        (i, o) => {
            let node = Node::SemiJoin {
                input: Box::new(Rel::new(i, input.order)),
                other: Box::new(Rel::new(o, other.order)),
                anti,
            };
            *rel = Rel::new(node, old.order);
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tq::ast::{EdgeType, Status, Trav, TravDir};
    use crate::tq::ir::{Base, Order};

    #[test]
    fn minus_a_table_scan_is_a_negated_conjunction() {
        let trav = Trav {
            dir: TravDir::Follow,
            edge: EdgeType::PhaseOf,
        };
        let input = Rel::new(
            Node::Scan {
                from: Base::Traverse(
                    Box::new(Rel::new(Node::Current("a".into()), Order::Any)),
                    trav,
                ),
                conds: vec![],
            },
            Order::Any,
        );
        let dormant = Rel::scan(vec![Cond::Status(vec![Status::Completed]), Cond::Live]);
        let mut r = Rel::new(
            Node::SemiJoin {
                input: Box::new(input),
                other: Box::new(dormant),
                anti: true,
            },
            Order::Rank,
        );
        assert!(apply(&mut r));
        match &r.node {
            Node::Scan {
                from: Base::Traverse(..),
                conds,
            } => assert_eq!(
                conds,
                &vec![Cond::Not(Box::new(Cond::And(vec![
                    Cond::Status(vec![Status::Completed]),
                    Cond::Live
                ])))]
            ),
            other => panic!("{other:?}"),
        }
        assert_eq!(r.order, Order::Rank);
        // Against a non-scan it stays a semi-join.
        let mut r = Rel::new(
            Node::SemiJoin {
                input: Box::new(Rel::scan(vec![])),
                other: Box::new(Rel::new(Node::Current("a".into()), Order::Rank)),
                anti: false,
            },
            Order::Rank,
        );
        assert!(!apply(&mut r));
        assert!(matches!(r.node, Node::SemiJoin { .. }));
    }
}
