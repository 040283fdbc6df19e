//! Mutation steps in the reference: what `(:set-status! S)`, `(:set! :k "v")`,
//! `(:link! :E "t")` and `(:unlink! :E "t")` do to the in-memory graph, and
//! how many changes (events) they make. A write pipeline is split at its
//! mutation steps exactly like the compiled one.

use cairn::store::model::EdgeClass;
use cairn::tq::plan::{Mutation, PStep, Pipeline};
use cairn::tq::render::Output;

use super::{Eval, Graph, Item};

/// `(:claim! S)` / `(:release!)` on the tasks of `set` (spec/tq.md §9):
/// the number of changes and the set passed on (a claim keeps only the
/// tasks the agent now holds).
fn claim(g: &mut Graph, m: &Mutation, set: Vec<Item>) -> (usize, Vec<Item>) {
    let now = g.now;
    let mut changes = 0;
    let mut kept = Vec::new();
    for it in set {
        let Item::Task(id) = it else {
            if matches!(m, Mutation::Release { .. }) {
                kept.push(it);
            }
            continue;
        };
        let t = &g.tasks[&id];
        let dormant = matches!(t.status.as_str(), "completed" | "abandoned");
        let live = match &t.claim {
            Some((o, u)) if *u > now && !dormant => Some(o.clone()),
            _ => None,
        };
        let reserved = t.slug.starts_with('@');
        match m {
            Mutation::Claim { seconds, agent } => {
                if !reserved && !dormant && live.as_ref().is_none_or(|o| o == agent) {
                    g.tasks.get_mut(&id).unwrap().claim = Some((agent.clone(), now + seconds));
                    changes += 1;
                    kept.push(it);
                }
            }
            Mutation::Release { agent } => {
                if !reserved && live.as_ref() == Some(agent) {
                    g.tasks.get_mut(&id).unwrap().claim = None;
                    changes += 1;
                }
                kept.push(it);
            }
            _ => kept.push(it),
        }
    }
    (changes, kept)
}

/// True when `child`'s parent becoming `parent` closes a cycle: walking up
/// from `parent` reaches `child` (a cycle already there that does not pass
/// through `child` ends the walk), as the store checks it.
fn closes_cycle(g: &Graph, child: i64, parent: i64) -> bool {
    let mut seen = std::collections::BTreeSet::from([parent]);
    let mut cur = parent;
    while let Some(p) = g.tasks.get(&cur).and_then(|t| t.parent) {
        if p == child {
            return true;
        }
        if !seen.insert(p) {
            return false;
        }
        cur = p;
    }
    false
}

/// Applies `m` to the tasks of `set`; returns the number of changes and the
/// set the next segment starts from.
pub fn apply(g: &mut Graph, m: &Mutation, set: Vec<Item>) -> (usize, Vec<Item>) {
    if matches!(m, Mutation::Claim { .. } | Mutation::Release { .. }) {
        return claim(g, m, set);
    }
    let mut changes = 0;
    let target = match m {
        Mutation::Link { target, .. } | Mutation::Unlink { target, .. } => {
            g.tasks.values().find(|t| &t.slug == target).map(|t| t.id)
        }
        _ => None,
    };
    for it in &set {
        let Item::Task(id) = it else { continue };
        let id = *id;
        if g.tasks[&id].slug.starts_with('@') {
            continue;
        }
        match m {
            Mutation::SetStatus(s) => {
                let t = g.tasks.get_mut(&id).unwrap();
                if t.status != s.as_str() {
                    t.status = s.as_str().to_string();
                    changes += 1;
                    // Completing or abandoning ends the claim (spec/tq.md §9).
                    if matches!(s.as_str(), "completed" | "abandoned") {
                        t.claim = None;
                    }
                }
            }
            Mutation::SetMeta { key, value } => {
                let t = g.tasks.get_mut(&id).unwrap();
                if t.meta.get(key) != Some(value) {
                    let new_row = t.meta.insert(key.clone(), value.clone()).is_none();
                    changes += 1;
                    if new_row {
                        // A new task_metadata row: the next rowid.
                        let rowid = g.next_meta_rowid;
                        g.next_meta_rowid += 1;
                        g.meta_rowid.entry(key.clone()).or_insert(rowid);
                    }
                }
            }
            Mutation::Link { edge, .. } | Mutation::Unlink { edge, .. } => {
                let Some(tid) = target else { continue };
                if tid == id {
                    continue;
                }
                let link = matches!(m, Mutation::Link { .. });
                match edge.class() {
                    EdgeClass::Structural => {
                        let present = g.tasks[&id].parent == Some(tid);
                        if link && !present && closes_cycle(g, id, tid) {
                            g.cycle_refused = true;
                        }
                        if link && !present {
                            g.tasks.get_mut(&id).unwrap().parent = Some(tid);
                            changes += 1;
                        } else if !link && present {
                            // A structural sever clears whichever side names the other.
                            g.tasks.get_mut(&id).unwrap().parent = None;
                            if g.tasks[&tid].parent == Some(id) {
                                g.tasks.get_mut(&tid).unwrap().parent = None;
                            }
                            changes += 1;
                        }
                    }
                    EdgeClass::Lateral => {
                        let pos = g
                            .edges
                            .iter()
                            .position(|(s, d, e)| *s == id && *d == tid && e == edge);
                        match (link, pos) {
                            (true, None) => {
                                g.edges.push((id, tid, *edge));
                                changes += 1;
                            }
                            (false, Some(i)) => {
                                g.edges.remove(i);
                                changes += 1;
                            }
                            _ => {}
                        }
                    }
                }
            }
            Mutation::Claim { .. } | Mutation::Release { .. } => {}
        }
    }
    (changes, set)
}

/// Runs a write pipeline over `g` (mutating it): each segment up to a
/// mutation step is evaluated, the mutation applied to its set, and the
/// next segment starts from that set. Returns the output and the number of
/// changes.
pub fn run(g: &mut Graph, current: Option<String>, p: &Pipeline) -> (Output, usize) {
    let mut changes = 0;
    let mut cur: Option<Vec<Item>> = None;
    let mut from = 0;
    for (i, s) in p.steps.iter().enumerate() {
        if let PStep::Mutate(m) = s {
            let set = {
                let e = Eval {
                    g,
                    current: current.clone(),
                };
                let start = cur.take().unwrap_or_else(|| e.source(&p.source));
                e.steps(start, &p.steps[from..i])
            };
            let (n, kept) = apply(g, m, set);
            changes += n;
            cur = Some(kept);
            from = i + 1;
        }
    }
    let e = Eval { g, current };
    let start = cur.unwrap_or_else(|| e.source(&p.source));
    let set = e.steps(start, &p.steps[from..]);
    (e.shape(set, p), changes)
}
