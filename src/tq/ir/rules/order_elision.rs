//! Order elision (COMPILER.md rule 1): order is materialized only where it
//! is observable, the final rows and the input of `:take`. Under `(:count)`,
//! in set-operation operands, semi-join sides and traversal inputs nobody
//! sees it ([`Order::Any`]: no rank, no sort); where it is observed, a
//! relation delivers its natural order lazily ([`Order::Slug`] or
//! [`Order::Key`]: the consumer's `ORDER BY`) instead of a rank column. A
//! rank stays only where two operands of `:or-else` are ordered differently.

use crate::tq::ast::SetOp;
use crate::tq::ir::{Base, Ir, Node, Order, Rel, Shape};

/// The rule's name in `--explain` and the coverage count.
pub const NAME: &str = "order-elision";

/// Re-derives every node's delivered order top-down; returns how many nodes
/// stopped materializing a rank.
pub fn apply(ir: &mut Ir) -> usize {
    let need = !matches!(ir.shape, Shape::Count);
    let mut n = 0;
    elide(&mut ir.root, need, &mut n);
    n
}

fn set(rel: &mut Rel, order: Order, n: &mut usize) {
    if rel.order == Order::Rank && order != Order::Rank {
        *n += 1;
    }
    rel.order = order;
}

/// Natural order when observed, else `Any`.
fn natural(need: bool, order: Order) -> Order {
    if need { order } else { Order::Any }
}

fn elide(rel: &mut Rel, need: bool, n: &mut usize) {
    let order = match &mut rel.node {
        Node::Scan {
            from: Base::Search(_),
            ..
        } => natural(need, Order::Rank),
        Node::Scan { from, .. } => {
            match from {
                Base::Tasks | Base::Search(_) | Base::PlanOf(_) => {}
                Base::Traverse(input, _) | Base::Closure(input, _) => elide(input, false, n),
            }
            natural(need, Order::Slug)
        }
        Node::Current(_) | Node::Reflect(_) | Node::Empty => natural(need, Order::Slug),
        Node::Carried(_) => Order::Rank,
        Node::Filter(input, _) | Node::Pass(input) => {
            elide(input, need, n);
            input.order.clone()
        }
        Node::SemiJoin { input, other, .. } => {
            elide(input, false, n);
            elide(other, false, n);
            natural(need, Order::Slug)
        }
        Node::SetOp(SetOp::OrElse, a, b) => {
            elide(a, need, n);
            elide(b, need, n);
            if a.order == b.order {
                a.order.clone()
            } else {
                force_rank(a);
                force_rank(b);
                Order::Rank
            }
        }
        Node::SetOp(_, a, b) => {
            elide(a, false, n);
            elide(b, false, n);
            natural(need, Order::Slug)
        }
        Node::Sort(input, f, d) => {
            elide(input, false, n);
            natural(need, Order::Key(f.clone(), *d))
        }
        Node::TopN {
            input, field, dir, ..
        } => {
            elide(input, false, n);
            natural(need, Order::Key(field.clone(), *dir))
        }
        Node::Take(input, _) => {
            elide(input, true, n);
            input.order.clone()
        }
    };
    set(rel, order, n);
}

/// Makes `rel` deliver a rank column (through the nodes that pass their
/// input's order on).
fn force_rank(rel: &mut Rel) {
    match &mut rel.node {
        Node::Filter(input, _) | Node::Pass(input) | Node::Take(input, _) => force_rank(input),
        Node::SetOp(SetOp::OrElse, a, b) => {
            force_rank(a);
            force_rank(b);
        }
        _ => {}
    }
    rel.order = Order::Rank;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tq::ast::{Dir, Field};
    use crate::tq::ir::Cond;

    fn ir(root: Rel, shape: Shape) -> Ir {
        Ir {
            root,
            shape,
            reflect: false,
            kinds: vec![],
            counters: false,
            now: 0,
        }
    }

    #[test]
    fn counts_need_no_order_and_lines_sort_lazily() {
        let mut i = ir(Rel::scan(vec![Cond::Live]), Shape::Count);
        assert_eq!(apply(&mut i), 1);
        assert_eq!(i.root.order, Order::Any);
        let mut i = ir(Rel::scan(vec![Cond::Live]), Shape::Ids);
        assert_eq!(apply(&mut i), 1);
        assert_eq!(i.root.order, Order::Slug);
    }

    #[test]
    fn take_keeps_its_input_order_and_or_else_ranks_mixed_operands() {
        let sorted = Rel::new(
            Node::Sort(Box::new(Rel::scan(vec![])), Field::Status, Dir::Asc),
            Order::Rank,
        );
        let mut i = ir(
            Rel::new(Node::Take(Box::new(sorted.clone()), 2), Order::Rank),
            Shape::Ids,
        );
        apply(&mut i);
        assert_eq!(i.root.order, Order::Key(Field::Status, Dir::Asc));
        let mixed = Rel::new(
            Node::SetOp(SetOp::OrElse, Box::new(sorted), Box::new(Rel::scan(vec![]))),
            Order::Rank,
        );
        let mut i = ir(mixed, Shape::Ids);
        apply(&mut i);
        assert_eq!(i.root.order, Order::Rank);
        match &i.root.node {
            Node::SetOp(_, a, b) => {
                assert_eq!(a.order, Order::Rank);
                assert_eq!(b.order, Order::Rank);
            }
            other => panic!("{other:?}"),
        }
    }
}
