//! Filter fusion (COMPILER.md rule 2): a `:where` over a scan of the task
//! table joins the scan's conjunction, so a source and the filters after it
//! are ONE `SELECT ... FROM tasks WHERE p1 AND p2`, not a stage per step.
//! Order is unchanged (a scan is slug-ordered with or without the filter).

use super::take;
use crate::tq::ir::{Node, Rel};

/// The rule's name in `--explain` and the coverage count.
pub const NAME: &str = "filter-fusion";

/// `Filter(Scan{from, conds}, c)` → `Scan{from, conds + [c]}`.
pub fn apply(rel: &mut Rel) -> bool {
    let Node::Filter(input, _) = &rel.node else {
        return false;
    };
    if !matches!(input.node, Node::Scan { .. }) {
        return false;
    }
    let old = take(rel);
    let Node::Filter(input, c) = old.node else {
        *rel = old;
        return false;
    };
    let Node::Scan { from, mut conds } = input.node else {
        *rel = Rel::new(Node::Filter(input, c), old.order);
        return false;
    };
    conds.push(c);
    *rel = Rel::new(Node::Scan { from, conds }, old.order);
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tq::ast::{Field, Pred};
    use crate::tq::ir::{Cond, Order};

    #[test]
    fn a_filter_over_a_scan_joins_its_conjunction() {
        let has = Cond::Pred(Pred::Has(Field::Depot));
        let mut r = Rel::new(
            Node::Filter(Box::new(Rel::scan(vec![Cond::Live])), has.clone()),
            Order::Rank,
        );
        assert!(apply(&mut r));
        assert_eq!(r, Rel::scan(vec![Cond::Live, has.clone()]));
        // Over anything else it stays a filter.
        let mut r = Rel::new(
            Node::Filter(Box::new(Rel::new(Node::Empty, Order::Rank)), has),
            Order::Rank,
        );
        assert!(!apply(&mut r));
        assert!(matches!(r.node, Node::Filter(..)));
    }
}
