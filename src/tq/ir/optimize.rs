//! The rewrite driver (docs/planner.md "Rewrites"): node rules bottom-up to
//! a fixpoint at each node, condition rules on every condition tree, then the
//! whole-query rules (the plans' one probe, order elision, enrichment of
//! shown rows, counter columns). Records how often each rule fired.

use std::collections::BTreeMap;

use super::rules;
use super::{Cond, Ir, Rel};

/// What the optimizer may assume and do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Run the rewrites at all (`false`: `cairn query --no-optimize`).
    pub enabled: bool,
    /// The caller renders text within this many characters (spec/tq.md §4):
    /// rows past what can fit need no enrichment.
    pub text_budget: Option<usize>,
    /// The store keeps the counter columns `obs_count`, `child_count`,
    /// `lateral_out`, `lateral_in` on `tasks`.
    pub counters: bool,
}

impl Default for Options {
    /// Rewrites on, no text budget, no counter columns.
    fn default() -> Self {
        Options {
            enabled: true,
            text_budget: None,
            counters: false,
        }
    }
}

/// Rule name → how many times it fired, in name order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fired(pub BTreeMap<&'static str, usize>);

impl Fired {
    /// Counts `n` firings of `rule` (nothing when `n` is 0).
    pub fn add(&mut self, rule: &'static str, n: usize) {
        if n > 0 {
            *self.0.entry(rule).or_default() += n;
        }
    }

    /// `rule ×N, rule ×N` or `none`.
    pub fn summary(&self) -> String {
        if self.0.is_empty() {
            return "none".to_string();
        }
        let parts: Vec<String> = self.0.iter().map(|(k, v)| format!("{k} ×{v}")).collect();
        parts.join(", ")
    }
}

/// A rule over one node, given the node with its children already rewritten;
/// true when it changed the node.
type NodeRule = fn(&mut Rel) -> bool;
/// A rule over one condition under the options (the driver visits every
/// sub-condition).
type CondRule = fn(&mut Cond, &Options) -> bool;

const NODE_RULES: &[(&str, NodeRule)] = &[
    (rules::top_n::NAME, rules::top_n::apply),
    (rules::semi_join::NAME, rules::semi_join::apply),
    (rules::inline_source::NAME, rules::inline_source::apply),
    (rules::union_or::NAME, rules::union_or::apply),
    (rules::filter_fusion::NAME, rules::filter_fusion::apply),
    (
        rules::status_complement::NAME,
        rules::status_complement::apply,
    ),
];

const COND_RULES: &[(&str, CondRule)] = &[
    (rules::count_exists::NAME, rules::count_exists::apply),
    (rules::has_parent::NAME, rules::has_parent::apply),
];

/// Every rule's name (the reference proptest checks each one fires).
pub const ALL_RULES: &[&str] = &[
    rules::top_n::NAME,
    rules::semi_join::NAME,
    rules::inline_source::NAME,
    rules::union_or::NAME,
    rules::filter_fusion::NAME,
    rules::status_complement::NAME,
    rules::count_exists::NAME,
    rules::has_parent::NAME,
    rules::order_elision::NAME,
    rules::enrich_shown::NAME,
    rules::counter_columns::NAME,
    rules::plan_probe::NAME,
];

/// Rewrites `ir` under `opts`; returns it with the rules that fired. With
/// `opts.enabled` false, `ir` comes back unchanged.
pub fn optimize(mut ir: Ir, opts: &Options) -> (Ir, Fired) {
    let mut fired = Fired::default();
    if !opts.enabled {
        return (ir, fired);
    }
    rewrite(&mut ir.root, opts, &mut fired);
    let n = rules::plan_probe::apply(&mut ir, opts);
    fired.add(rules::plan_probe::NAME, n);
    if n > 0 {
        // The one probe is a scan: the steps over it (`plan-frontier`'s
        // minus of the dormant tasks and its quantifier) fuse into it.
        rewrite(&mut ir.root, opts, &mut fired);
    }
    let n = rules::order_elision::apply(&mut ir);
    fired.add(rules::order_elision::NAME, n);
    if rules::enrich_shown::apply(&mut ir, opts) {
        fired.add(rules::enrich_shown::NAME, 1);
    }
    if rules::counter_columns::apply(&mut ir, opts) {
        fired.add(rules::counter_columns::NAME, 1);
    }
    (ir, fired)
}

/// Bound on rule applications at one node (each rule shrinks the tree, so
/// this is never reached; it keeps the driver total).
const MAX_ROUNDS: usize = 64;

fn rewrite(rel: &mut Rel, opts: &Options, fired: &mut Fired) {
    for child in rel.children_mut() {
        rewrite(child, opts, fired);
    }
    for _ in 0..MAX_ROUNDS {
        for c in rel.conds_mut() {
            for (name, rule) in COND_RULES {
                fired.add(name, walk(c, *rule, opts));
            }
        }
        let mut changed = false;
        for (name, rule) in NODE_RULES {
            if rule(rel) {
                fired.add(name, 1);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
}

/// Applies `rule` to `c` and every sub-condition (post-order); the number of
/// rewrites.
fn walk(c: &mut Cond, rule: CondRule, opts: &Options) -> usize {
    let mut n = 0;
    match c {
        Cond::And(cs) | Cond::Or(cs) => {
            for c in cs {
                n += walk(c, rule, opts);
            }
        }
        Cond::Not(c) => n += walk(c, rule, opts),
        _ => {}
    }
    if rule(c, opts) {
        n += 1;
    }
    n
}
