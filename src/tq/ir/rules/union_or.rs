//! A union of two filters is one filter (COMPILER.md rule 3): `(:union Q)`
//! where both sides are scans of the task table becomes one scan with
//! `(c1) OR (c2)`: no compound select, no temp B-tree.

use super::take;
use crate::tq::ast::SetOp;
use crate::tq::ir::{Base, Cond, Node, Rel};

/// The rule's name in `--explain` and the coverage count.
pub const NAME: &str = "union-or";

/// `SetOp(Union, Scan{Tasks, c1}, Scan{Tasks, c2})` → `Scan{Tasks, [c1 OR c2]}`.
pub fn apply(rel: &mut Rel) -> bool {
    let Node::SetOp(SetOp::Union, a, b) = &rel.node else {
        return false;
    };
    if !a.is_table_scan() || !b.is_table_scan() {
        return false;
    }
    let old = take(rel);
    let Node::SetOp(op, a, b) = old.node else {
        *rel = old;
        return false;
    };
    match (a.node, b.node) {
        (Node::Scan { conds: c1, .. }, Node::Scan { conds: c2, .. }) => {
            let conds = vec![Cond::Or(vec![Cond::And(c1), Cond::And(c2)])];
            *rel = Rel::new(
                Node::Scan {
                    from: Base::Tasks,
                    conds,
                },
                old.order,
            );
            true
        }
        (x, y) => {
            let node = Node::SetOp(
                op,
                Box::new(Rel::new(x, a.order)),
                Box::new(Rel::new(y, b.order)),
            );
            *rel = Rel::new(node, old.order);
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tq::ir::Order;

    #[test]
    fn a_union_of_two_table_scans_is_an_or() {
        let mut r = Rel::new(
            Node::SetOp(
                SetOp::Union,
                Box::new(Rel::scan(vec![Cond::Live])),
                Box::new(Rel::scan(vec![Cond::Node("x".into())])),
            ),
            Order::Rank,
        );
        assert!(apply(&mut r));
        assert_eq!(
            r,
            Rel::scan(vec![Cond::Or(vec![
                Cond::And(vec![Cond::Live]),
                Cond::And(vec![Cond::Node("x".into())])
            ])])
        );
        let mut r = Rel::new(
            Node::SetOp(
                SetOp::Union,
                Box::new(Rel::scan(vec![])),
                Box::new(Rel::new(Node::Empty, Order::Rank)),
            ),
            Order::Rank,
        );
        assert!(!apply(&mut r));
    }
}
