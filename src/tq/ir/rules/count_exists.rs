//! Counts against constants (COMPILER.md rule 4): a count compared so that
//! only "none" or "at least one" matters is `[NOT] EXISTS`, which stops at
//! the first neighbour instead of counting them all:
//! `(= (count T) 0)`, `(< (count T) 1)`, `(<= (count T) 0)` are `NOT EXISTS`;
//! `(> (count T) 0)`, `(>= (count T) 1)` are `EXISTS`.
//!
//! Traversal counts (`(count (:follow EDGE))`, `(count (:back EDGE))`) have
//! no maintained column and are always rewritten. The count FIELDS are not
//! when the store keeps the counter columns ([`Options::counters`]): there
//! `(= :edge-count 0)` is `t.edge_count = 0`, which the `tasks_edge_count`
//! index answers without touching a task that does not match (rule
//! counter-columns), where four `NOT EXISTS` probes per task would visit
//! every task. Without the columns `:edge-count` against 0 becomes
//! [`Cond::Linked`] (any edge or parent/child link at all) and `:obs-count`
//! keeps its count.

use crate::tq::ast::{Cmp, Field, Lit, Pred, Value};
use crate::tq::ir::{Cond, Options};

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
/// (negated for "none"); `:edge-count` only when `opts.counters` is off.
pub fn apply(c: &mut Cond, opts: &Options) -> bool {
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
        Value::Field(Field::EdgeCount) if !opts.counters => Cond::Linked,
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

    /// Checks every `(predicate, wanted rewrite)` pair under `opts`.
    fn check(opts: &Options, cases: Vec<(Pred, Option<Cond>)>) {
        for (p, want) in cases {
            let mut c = Cond::Pred(p.clone());
            let fired = apply(&mut c, opts);
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

    const ON: Options = Options {
        enabled: true,
        text_budget: None,
        counters: true,
    };

    #[test]
    fn zero_and_one_comparisons_become_exists() {
        let t = Trav {
            dir: TravDir::Back,
            edge: EdgeType::DependsOn,
        };
        let cases = vec![
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
        check(&Options::default(), cases.clone());
        // Traversal counts are rewritten with the counter columns too.
        let traversals = cases
            .into_iter()
            .filter(|(p, _)| {
                matches!(
                    p,
                    Pred::Eq(Value::Count(_), _) | Pred::Compare(_, Value::Count(_), _)
                )
            })
            .collect::<Vec<_>>();
        assert_eq!(traversals.len(), 7);
        check(&ON, traversals);
    }

    #[test]
    fn count_fields_are_left_to_the_counter_columns() {
        let edge = || Value::Field(Field::EdgeCount);
        let obs = || Value::Field(Field::ObsCount);
        check(
            &ON,
            vec![
                (Pred::Eq(edge(), Lit::Int(0)), None),
                (Pred::Compare(Cmp::Gt, edge(), 0.0), None),
                (Pred::Compare(Cmp::Lt, edge(), 1.0), None),
                (Pred::Eq(obs(), Lit::Int(0)), None),
                (Pred::Compare(Cmp::Ge, obs(), 1.0), None),
            ],
        );
        check(
            &Options::default(),
            vec![
                (Pred::Compare(Cmp::Gt, edge(), 0.0), Some(Cond::Linked)),
                (
                    Pred::Compare(Cmp::Lt, edge(), 1.0),
                    Some(Cond::Not(Box::new(Cond::Linked))),
                ),
                (Pred::Eq(obs(), Lit::Int(0)), None),
            ],
        );
    }
}
