//! Top-N (COMPILER.md rule 5): `(:sort F D)` followed by `(:take N)` is one
//! `ORDER BY key, slug LIMIT n`, not a rank over the whole set and then a
//! limit (an index on the key can serve it).

use super::take;
use crate::tq::ir::{Node, Rel};

/// The rule's name in `--explain` and the coverage count.
pub const NAME: &str = "top-n";

/// `Take(Sort(x, f, d), n)` → `TopN{x, f, d, n}`.
pub fn apply(rel: &mut Rel) -> bool {
    let Node::Take(input, _) = &rel.node else {
        return false;
    };
    if !matches!(input.node, Node::Sort(..)) {
        return false;
    }
    let old = take(rel);
    let Node::Take(input, n) = old.node else {
        *rel = old;
        return false;
    };
    let Node::Sort(x, field, dir) = input.node else {
        *rel = Rel::new(Node::Take(input, n), old.order);
        return false;
    };
    *rel = Rel::new(
        Node::TopN {
            input: x,
            field,
            dir,
            n,
        },
        old.order,
    );
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tq::ast::{Dir, Field};
    use crate::tq::ir::Order;

    #[test]
    fn sort_then_take_is_one_top_n() {
        let sorted = Rel::new(
            Node::Sort(Box::new(Rel::scan(vec![])), Field::CreatedTs, Dir::Desc),
            Order::Rank,
        );
        let mut r = Rel::new(Node::Take(Box::new(sorted), 3), Order::Rank);
        assert!(apply(&mut r));
        assert_eq!(
            r.node,
            Node::TopN {
                input: Box::new(Rel::scan(vec![])),
                field: Field::CreatedTs,
                dir: Dir::Desc,
                n: 3
            }
        );
        let mut plain = Rel::new(Node::Take(Box::new(Rel::scan(vec![])), 3), Order::Rank);
        assert!(!apply(&mut plain));
    }
}
