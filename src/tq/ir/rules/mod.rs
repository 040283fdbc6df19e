//! The rewrites, one file each (docs/planner.md "Rewrites"). Node rules take
//! a node whose children are already rewritten and return true when they
//! changed it; condition rules rewrite one condition; the whole-query rules
//! take the [`Ir`](super::Ir).

pub mod count_exists;
pub mod counter_columns;
pub mod enrich_shown;
pub mod filter_fusion;
pub mod has_parent;
pub mod inline_source;
pub mod order_elision;
pub mod plan_probe;
pub mod semi_join;
pub mod status_complement;
pub mod top_n;
pub mod union_or;

use super::{Node, Order, Rel};

/// Moves the relation out of `rel`, leaving an empty placeholder.
pub(crate) fn take(rel: &mut Rel) -> Rel {
    std::mem::replace(rel, Rel::new(Node::Empty, Order::Any))
}
