//! Counts against constants (COMPILER.md rule 4): a count compared so that
//! only "none" or "at least one" matters is `[NOT] EXISTS`, which stops at
//! the first neighbour instead of counting them all:
//! `(= (count T) 0)`, `(< (count T) 1)`, `(<= (count T) 0)` are `NOT EXISTS`;
//! `(> (count T) 0)`, `(>= (count T) 1)` are `EXISTS`; the same for
//! `:edge-count` (any edge or parent/child link at all).

use crate::tq::ast::{Cmp, Field, Lit, Pred, Value};
use crate::tq::ir::Cond;

/// The rule's name in `--explain` and the coverage count.
pub const NAME: &str = "count-exists";

/// What a count compared with a constant reduces to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Test {
    /// count ≥ 1.
    Some,
    /// count = 0.
    None,
}

/// The test `count CMP n` reduces to, for a count (an integer ≥ 0).
fn reduce(cmp: Cmp, n: f64) -> Option<Test> {
    match cmp {
        Cmp::Gt if (0.0..1.0).contains(&n) => Some(Test::Some),
        Cmp::Ge if n > 0.0 && n <= 1.0 => Some(Test::Some),
        Cmp::Lt if n > 0.0 && n <= 1.0 => Some(Test::None),
        Cmp::Le if (0.0..1.0).contains(&n) => Some(Test::None),
        _ => None,
    }
}

/// `(= count 0)` as a test.
fn eq_zero(lit: &Lit) -> Option<Test> {
    let n = match lit {
        Lit::Int(i) => *i as f64,
        Lit::Dec(d) => *d,
        Lit::Str(s) => s.trim().parse::<f64>().ok()?,
    };
    (n == 0.0).then_some(Test::None)
}

/// Rewrites a count-vs-constant leaf into [`Cond::Exists`] / [`Cond::Linked`]
/// (negated for "none").
pub fn apply(c: &mut Cond) -> bool {
    let Cond::Pred(p) = c else {
        return false;
    };
    let (value, test) = match p {
        Pred::Compare(cmp, v, n) => (v, reduce(*cmp, *n)),
        Pred::Eq(v, lit) => (v, eq_zero(lit)),
        _ => return false,
    };
    let Some(test) = test else {
        return false;
    };
    let base = match value {
        Value::Count(t) => Cond::Exists(*t),
        Value::Field(Field::EdgeCount) => Cond::Linked,
        Value::Field(_) => return false,
    };
    *c = match test {
        Test::Some => base,
        Test::None => Cond::Not(Box::new(base)),
    };
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tq::ast::{EdgeType, Trav, TravDir};

    fn count(t: Trav) -> Value {
        Value::Count(t)
    }

    #[test]
    fn zero_and_one_comparisons_become_exists() {
        let t = Trav {
            dir: TravDir::Back,
            edge: EdgeType::DependsOn,
        };
        let cases = [
            (
                Pred::Eq(count(t), Lit::Int(0)),
                Some(Cond::Not(Box::new(Cond::Exists(t)))),
            ),
            (Pred::Compare(Cmp::Gt, count(t), 0.0), Some(Cond::Exists(t))),
            (Pred::Compare(Cmp::Ge, count(t), 1.0), Some(Cond::Exists(t))),
            (
                Pred::Compare(Cmp::Lt, count(t), 1.0),
                Some(Cond::Not(Box::new(Cond::Exists(t)))),
            ),
            (
                Pred::Compare(Cmp::Le, count(t), 0.0),
                Some(Cond::Not(Box::new(Cond::Exists(t)))),
            ),
            (
                Pred::Eq(Value::Field(Field::EdgeCount), Lit::Int(0)),
                Some(Cond::Not(Box::new(Cond::Linked))),
            ),
            (Pred::Compare(Cmp::Gt, count(t), 1.0), None),
            (Pred::Eq(count(t), Lit::Int(1)), None),
            (
                Pred::Compare(Cmp::Gt, Value::Field(Field::ObsCount), 0.0),
                None,
            ),
        ];
        for (p, want) in cases {
            let mut c = Cond::Pred(p.clone());
            let fired = apply(&mut c);
            match want {
                Some(w) => {
                    assert!(fired, "{p:?}");
                    assert_eq!(c, w);
                }
                None => {
                    assert!(!fired, "{p:?}");
                    assert_eq!(c, Cond::Pred(p));
                }
            }
        }
    }
}
