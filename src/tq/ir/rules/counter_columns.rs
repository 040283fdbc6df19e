//! Maintained counters read as columns (COMPILER.md rule 6): when the store
//! keeps `tasks.obs_count`, `child_count`, `lateral_out` and `lateral_in`
//! (folded from the log, so rebuild and `verify` cover them), `:obs-count`
//! and `:edge-count` (and the `obs=`/`edges=` of enriched lines) read those
//! columns instead of counting rows per task. A comparison of either field
//! with a constant is then spelled bare (`t.edge_count = ?1`, no
//! `COALESCE`: the columns are `NOT NULL`), so `tasks_edge_count` /
//! `tasks_obs_count` serve it; count-exists leaves these comparisons alone
//! when the columns exist (`orphans` is `(= :edge-count 0)`).

use crate::store::model::EdgeClass;
use crate::tq::ast::{Field, Pred, Trav, TravDir, Value};
use crate::tq::ir::{Base, Cond, Ir, Node, Options, Rel, Shape};

/// The rule's name in `--explain` and the coverage count.
pub const NAME: &str = "counter-columns";

/// Sets [`Ir::counters`] when the store has the columns and the query reads
/// a count field, or tests or counts a hop a counter column counts
/// (`child_count`, `lateral_out`, `lateral_in`; issue 23).
pub fn apply(ir: &mut Ir, opts: &Options) -> bool {
    if !opts.counters || ir.counters {
        return false;
    }
    let shape_reads = match &ir.shape {
        Shape::Tasks { enriched, .. } => *enriched,
        Shape::Select(fs) => fs.iter().any(is_counter),
        Shape::GroupBy(f) => is_counter(f),
        _ => false,
    };
    if shape_reads || rel_reads(&ir.root) {
        ir.counters = true;
        return true;
    }
    false
}

fn is_counter(f: &Field) -> bool {
    matches!(f, Field::ObsCount | Field::EdgeCount)
}

fn rel_reads(r: &Rel) -> bool {
    match &r.node {
        Node::Scan { from, conds } => {
            conds.iter().any(cond_reads)
                || match from {
                    Base::Tasks | Base::Search(_) => false,
                    Base::PlanOf(_) => true,
                    Base::Traverse(i, _) | Base::Closure(i, _) => rel_reads(i),
                }
        }
        Node::Filter(i, c) => cond_reads(c) || rel_reads(i),
        Node::Sort(i, f, _)
        | Node::TopN {
            input: i, field: f, ..
        } => is_counter(f) || rel_reads(i),
        Node::Take(i, _) | Node::Pass(i) => rel_reads(i),
        Node::SemiJoin { input, other, .. } => rel_reads(input) || rel_reads(other),
        Node::SetOp(_, a, b) => rel_reads(a) || rel_reads(b),
        Node::Current(_) | Node::Reflect(_) | Node::Empty | Node::Carried(_) => false,
    }
}

fn cond_reads(c: &Cond) -> bool {
    match c {
        Cond::Pred(p) => pred_reads(p),
        Cond::And(cs) | Cond::Or(cs) => cs.iter().any(cond_reads),
        Cond::Not(c) => cond_reads(c),
        // A one-hop emptiness test reads `child_count` / `lateral_out` /
        // `lateral_in` (issue 23; `sql/cond.rs`).
        Cond::Exists(t) => hop_counted(t),
        _ => false,
    }
}

/// A hop whose edges a counter column counts (all but the parent link).
fn hop_counted(t: &Trav) -> bool {
    !(t.edge.class() == EdgeClass::Structural && t.dir == TravDir::Back)
}

fn pred_reads(p: &Pred) -> bool {
    match p {
        Pred::Eq(Value::Field(f), _) | Pred::Compare(_, Value::Field(f), _) => is_counter(f),
        // `(count TRAV)` reads `child_count`, or a lateral counter as a
        // pre-filter; a quantifier's hop likewise (issue 23; `sql/expr.rs`).
        Pred::Eq(Value::Count(t), _) | Pred::Compare(_, Value::Count(t), _) => hop_counted(t),
        Pred::Has(f) | Pred::Matches(f, _) | Pred::Date(_, f, _) => is_counter(f),
        Pred::And(ps) | Pred::Or(ps) => ps.iter().any(pred_reads),
        Pred::Quantified(_, t, p) => hop_counted(t) || pred_reads(p),
        Pred::Not(p) => pred_reads(p),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tq::ast::Cmp;

    #[test]
    fn fires_only_with_the_columns_and_a_count_read() {
        let reads = Rel::scan(vec![Cond::Pred(Pred::Compare(
            Cmp::Gt,
            Value::Field(Field::ObsCount),
            2.0,
        ))]);
        let mut i = Ir {
            root: reads,
            shape: Shape::Ids,
            reflect: false,
            kinds: vec![],
            counters: false,
            now: 0,
        };
        let on = Options {
            counters: true,
            ..Options::default()
        };
        assert!(!apply(&mut i.clone(), &Options::default()));
        let mut plain = i.clone();
        plain.root = Rel::scan(vec![]);
        assert!(!apply(&mut plain, &on));
        assert!(apply(&mut i, &on));
        assert!(i.counters);
    }
}
