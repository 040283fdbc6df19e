//! `(has :parent)` tests the pointer (COMPILER.md rule 4): `parent_task_id IS
//! NOT NULL` instead of fetching the parent's slug to see that it is there.

use crate::tq::ast::{Field, Pred};
use crate::tq::ir::{Cond, Options};

/// The rule's name in `--explain` and the coverage count.
pub const NAME: &str = "has-parent";

/// `(has :parent)` → [`Cond::HasParent`] (under any options).
pub fn apply(c: &mut Cond, _opts: &Options) -> bool {
    if matches!(c, Cond::Pred(Pred::Has(Field::Parent))) {
        *c = Cond::HasParent;
        return true;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn has_parent_reads_the_pointer() {
        let mut c = Cond::Pred(Pred::Has(Field::Parent));
        assert!(apply(&mut c, &Options::default()));
        assert_eq!(c, Cond::HasParent);
        let mut d = Cond::Pred(Pred::Has(Field::Depot));
        assert!(!apply(&mut d, &Options::default()));
    }
}
