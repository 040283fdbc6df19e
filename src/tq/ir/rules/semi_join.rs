//! Set operations as semi-joins (COMPILER.md rule 3): `(:intersect Q)` keeps
//! the rows whose id `EXISTS` in Q, `(:minus Q)` those that do `NOT EXISTS`;
//! no compound select, no ranking of either operand (the result is by slug
//! whatever the operands' order).

use super::take;
use crate::tq::ast::SetOp;
use crate::tq::ir::{Node, Rel};

/// The rule's name in `--explain` and the coverage count.
pub const NAME: &str = "semi-join";

/// `SetOp(Intersect|Minus, a, b)` → `SemiJoin{a, b, anti}`.
pub fn apply(rel: &mut Rel) -> bool {
    if !matches!(rel.node, Node::SetOp(SetOp::Intersect | SetOp::Minus, _, _)) {
        return false;
    }
    let old = take(rel);
    let Node::SetOp(op, input, other) = old.node else {
        *rel = old;
        return false;
    };
    let node = Node::SemiJoin {
        input,
        other,
        anti: op == SetOp::Minus,
    };
    *rel = Rel::new(node, old.order);
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tq::ir::{Cond, Order};

    #[test]
    fn intersect_and_minus_become_semi_joins_union_stays() {
        for (op, anti) in [(SetOp::Intersect, false), (SetOp::Minus, true)] {
            let mut r = Rel::new(
                Node::SetOp(
                    op,
                    Box::new(Rel::scan(vec![Cond::Live])),
                    Box::new(Rel::new(Node::Empty, Order::Rank)),
                ),
                Order::Rank,
            );
            assert!(apply(&mut r));
            match r.node {
                Node::SemiJoin { anti: a, .. } => assert_eq!(a, anti),
                other => panic!("{other:?}"),
            }
        }
        let mut u = Rel::new(
            Node::SetOp(
                SetOp::Union,
                Box::new(Rel::scan(vec![])),
                Box::new(Rel::scan(vec![])),
            ),
            Order::Rank,
        );
        assert!(!apply(&mut u));
    }
}
