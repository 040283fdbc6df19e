//! Status complements (issue 23): statuses are a closed vocabulary (the
//! `tasks.status` CHECK constraint on both engines), so on a live row
//! `NOT (status IN S)` is `status IN (every status but S)` — a term the
//! status index serves. `(-> (all) (:minus (dormant)))` inlines to
//! `live AND NOT (status IN dormant AND live)`, which scanned every task;
//! it becomes `live AND status IN ('open', 'active', 'blocked')`, the
//! `(active)` scan.

use crate::tq::ast::Status;
use crate::tq::ir::{Cond, Node, Rel};

/// The rule's name in `--explain` and the coverage count.
pub const NAME: &str = "status-complement";

/// In a scan's conjunction: `Not(Status(S))` → `Status(ALL − S)`, and, when
/// the conjunction holds [`Cond::Live`], `Not(And[Status(S), Live])` (either
/// order) → `Status(ALL − S)`.
pub fn apply(rel: &mut Rel) -> bool {
    let Node::Scan { conds, .. } = &mut rel.node else {
        return false;
    };
    let live = conds.contains(&Cond::Live);
    let mut changed = false;
    for c in conds.iter_mut() {
        if let Some(rest) = complement(c, live) {
            *c = Cond::Status(rest);
            changed = true;
        }
    }
    changed
}

fn complement(c: &Cond, live: bool) -> Option<Vec<Status>> {
    let Cond::Not(inner) = c else {
        return None;
    };
    let set = match inner.as_ref() {
        Cond::Status(ss) => ss,
        Cond::And(xs) if live => {
            let mut set = None;
            for x in xs {
                match x {
                    Cond::Live => {}
                    Cond::Status(ss) if set.is_none() => set = Some(ss),
                    _ => return None,
                }
            }
            set?
        }
        _ => return None,
    };
    Some(
        Status::ALL
            .iter()
            .copied()
            .filter(|s| !set.contains(s))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dormant() -> Cond {
        Cond::Status(vec![Status::Completed, Status::Abandoned])
    }

    #[test]
    fn minus_dormant_on_live_rows_is_the_other_statuses() {
        let mut r = Rel::scan(vec![
            Cond::Live,
            Cond::Not(Box::new(Cond::And(vec![dormant(), Cond::Live]))),
        ]);
        assert!(apply(&mut r));
        assert_eq!(
            r,
            Rel::scan(vec![
                Cond::Live,
                Cond::Status(vec![Status::Open, Status::Active, Status::Blocked]),
            ])
        );
        // Not on a row that may be reserved: `NOT (dormant AND live)` also
        // keeps reserved dormant rows there.
        let mut r = Rel::scan(vec![Cond::Not(Box::new(Cond::And(vec![
            dormant(),
            Cond::Live,
        ])))]);
        assert!(!apply(&mut r));
        // A plain negated status needs no live row.
        let mut r = Rel::scan(vec![Cond::Not(Box::new(dormant()))]);
        assert!(apply(&mut r));
        assert_eq!(
            r,
            Rel::scan(vec![Cond::Status(vec![
                Status::Open,
                Status::Active,
                Status::Blocked
            ])])
        );
        // Anything else in the negation stays.
        let mut r = Rel::scan(vec![
            Cond::Live,
            Cond::Not(Box::new(Cond::And(vec![dormant(), Cond::HasParent]))),
        ]);
        assert!(!apply(&mut r));
    }
}
