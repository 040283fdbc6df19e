//! Top-N (COMPILER.md rule 5): `(:sort F D)` followed by `(:take N)` is one
//! `ORDER BY key, slug LIMIT n`, not a rank over the whole set and then a
//! limit (an index on the key can serve it). A `(:take N)` straight over a
//! scan (whose order is its slug) is the same top-N on the slug (issue 23):
//! `(-> (query "ready") (:take 1) (:claim! 900))` walks the slug index and
//! stops at the first ready task instead of sorting every candidate.

use super::take;
use crate::tq::ast::{Dir, Field};
use crate::tq::ir::{Node, Rel};

/// The rule's name in `--explain` and the coverage count.
pub const NAME: &str = "top-n";

/// `Take(Sort(x, f, d), n)` → `TopN{x, f, d, n}`.
pub fn apply(rel: &mut Rel) -> bool {
    let Node::Take(input, _) = &rel.node else {
        return false;
    };
    if input.is_search_scan() {
        // A search delivers relevance order (a rank), not its slug.
        return false;
    }
    if matches!(input.node, Node::Scan { .. }) {
        let old = take(rel);
        let Node::Take(scan, n) = old.node else {
            *rel = old;
            return false;
        };
        *rel = Rel::new(
            Node::TopN {
                input: scan,
                field: Field::Slug,
                dir: Dir::Asc,
                n,
            },
            old.order,
        );
        return true;
    }
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
        // A take over a scan is a top-N on the slug.
        let mut plain = Rel::new(Node::Take(Box::new(Rel::scan(vec![])), 3), Order::Rank);
        assert!(apply(&mut plain));
        assert_eq!(
            plain.node,
            Node::TopN {
                input: Box::new(Rel::scan(vec![])),
                field: Field::Slug,
                dir: Dir::Asc,
                n: 3
            }
        );
        // Over anything else a take stays a take.
        let current = Rel::new(Node::Current("x".into()), Order::Rank);
        let mut other = Rel::new(Node::Take(Box::new(current), 3), Order::Rank);
        assert!(!apply(&mut other));
    }
}
