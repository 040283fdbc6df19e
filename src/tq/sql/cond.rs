//! Conditions: an IR [`Cond`] as a non-NULL 0/1 SQL expression over one
//! row, edge existence tests and the closure relation (spec/tq.md §2
//! "Predicates").

use super::expr::{Row, edge_lit};
use super::{Lower, nonnull, status_list};
use crate::store::model::EdgeClass;
use crate::tq::ast::{EdgeType, TravDir};
use crate::tq::ir::Cond;

impl Lower {
    /// `c` on `row` as a non-NULL 0/1 SQL expression (task columns of a
    /// reflection row are NULL: every form below is 0 there, as the
    /// predicate it replaces).
    pub(super) fn cond(&mut self, c: &Cond, row: &Row) -> String {
        let t = row.t.clone();
        match c {
            Cond::Pred(p) => self.pred(p, row),
            Cond::Live => nonnull(self.d, row, self.d.not_reserved(&format!("{t}.slug"))),
            Cond::Status(ss) => {
                let col = format!("{t}.status");
                let col = if self.status_off_index {
                    self.d.no_index(&col)
                } else {
                    col
                };
                nonnull(self.d, row, format!("{col} IN ({})", status_list(ss)))
            }
            Cond::Node(s) => {
                let a = self.text(s);
                nonnull(
                    self.d,
                    row,
                    self.d.contains_folded(&format!("{t}.slug"), &a),
                )
            }
            Cond::And(cs) => self.conds(cs, " AND ", self.d.truth(true), row),
            Cond::Or(cs) => self.conds(cs, " OR ", self.d.truth(false), row),
            // `(not (has :parent))` is `IS NULL`, which the parent index
            // serves (issue 23: `NOT (… IS NOT NULL)` walked every live task).
            Cond::Not(c) if **c == Cond::HasParent => format!("({t}.parent_task_id IS NULL)"),
            Cond::Not(c) => format!("(NOT {})", self.cond(c, row)),
            Cond::Exists(trav) if self.counters && row.r.is_none() => {
                // The maintained counters answer or pre-filter the test
                // (issue 23): a task with no children, or no lateral edge
                // that way, needs no probe.
                let probe = self.exists(trav, &t);
                match (trav.edge.class(), trav.dir) {
                    (EdgeClass::Structural, TravDir::Follow) => format!("({t}.child_count > 0)"),
                    (EdgeClass::Structural, TravDir::Back) => probe,
                    (EdgeClass::Lateral, _) if !self.d.counter_prefilter() => probe,
                    (EdgeClass::Lateral, TravDir::Follow) => {
                        format!("({t}.lateral_out > 0 AND {probe})")
                    }
                    (EdgeClass::Lateral, TravDir::Back) => {
                        format!("({t}.lateral_in > 0 AND {probe})")
                    }
                }
            }
            Cond::Exists(trav) => self.exists(trav, &t),
            Cond::Linked => format!(
                "({t}.parent_task_id IS NOT NULL OR EXISTS (SELECT 1 FROM tasks lc WHERE lc.parent_task_id = {t}.id) OR EXISTS (SELECT 1 FROM edges le WHERE le.src_id = {t}.id) OR EXISTS (SELECT 1 FROM edges le WHERE le.dst_id = {t}.id))"
            ),
            Cond::HasParent => format!("({t}.parent_task_id IS NOT NULL)"),
            Cond::HeldBy(agent) => {
                let a = self.text(agent);
                let live = self.claim_live(&t);
                // `IS` keeps the term a non-NULL 0/1 (an unclaimed row's
                // owner and until are both NULL: `0 AND NULL` is 0) and
                // lets SQLite read the index `tasks_claim_owner`.
                nonnull(
                    self.d,
                    row,
                    format!(
                        "({} AND {live})",
                        self.d.same(&format!("{t}.claim_owner"), &a)
                    ),
                )
            }
        }
    }

    pub(super) fn conds(&mut self, cs: &[Cond], op: &str, empty: &str, row: &Row) -> String {
        if cs.is_empty() {
            return empty.to_string();
        }
        let parts: Vec<String> = cs.iter().map(|c| self.cond(c, row)).collect();
        format!("({})", parts.join(op))
    }

    /// At least one task one hop over `trav` from row `t`.
    pub(super) fn exists(&mut self, trav: &crate::tq::ast::Trav, t: &str) -> String {
        match (trav.edge.class(), trav.dir) {
            (EdgeClass::Structural, TravDir::Follow) => {
                format!("EXISTS (SELECT 1 FROM tasks xc WHERE xc.parent_task_id = {t}.id)")
            }
            (EdgeClass::Structural, TravDir::Back) => format!("({t}.parent_task_id IS NOT NULL)"),
            (EdgeClass::Lateral, TravDir::Follow) => format!(
                "EXISTS (SELECT 1 FROM edges xe WHERE xe.src_id = {t}.id AND xe.type = {})",
                edge_lit(trav.edge)
            ),
            (EdgeClass::Lateral, TravDir::Back) => format!(
                "EXISTS (SELECT 1 FROM edges xe WHERE xe.dst_id = {t}.id AND xe.type = {})",
                edge_lit(trav.edge)
            ),
        }
    }

    /// `(:closure EDGE...)`: a recursive CTE over task ids with `UNION`
    /// (set semantics: terminates on cycles, exact at any depth): every task
    /// reachable in one or more hops from stage `cur`. Returns its name.
    pub(super) fn closure(&mut self, cur: &str, edges: &[EdgeType]) -> String {
        self.n += 1;
        let name = format!("c{}", self.n);
        let structural = edges.iter().any(|e| e.class() == EdgeClass::Structural);
        let mut lateral: Vec<String> = edges
            .iter()
            .filter(|e| e.class() == EdgeClass::Lateral)
            .map(|e| edge_lit(*e))
            .collect();
        lateral.sort();
        lateral.dedup();
        let mut arms = Vec::new();
        if structural && !lateral.is_empty() && !self.d.multi_recursive_arms() {
            // One recursive arm naming the CTE once: the first hop from
            // `cur` as two arms, then every later hop over both edge kinds.
            arms.push(format!(
                "SELECT c.id FROM {cur} y JOIN tasks c ON c.parent_task_id = y.id"
            ));
            arms.push(format!(
                "SELECT e.dst_id FROM {cur} y JOIN edges e ON e.src_id = y.id AND e.type IN ({})",
                lateral.join(", ")
            ));
            // LATERAL: each reached task probes `tasks_parent` and
            // `edges_src`. A plain join with the union of both relations
            // is planned by PostgreSQL as a hash join that scans all of
            // `tasks` and `edges` at every iteration (4× slower at 10k
            // tasks; docs/performance.md "PostgreSQL (issue 21)").
            arms.push(format!(
                "SELECT n.id FROM {name} y CROSS JOIN LATERAL (SELECT c.id FROM tasks c WHERE c.parent_task_id = y.id UNION ALL SELECT e.dst_id FROM edges e WHERE e.src_id = y.id AND e.type IN ({})) n",
                lateral.join(", ")
            ));
            self.ctes
                .push(format!("{name}(id) AS ({})", arms.join(" UNION ")));
            return name;
        }
        for from in [cur, name.as_str()] {
            if structural {
                arms.push(format!(
                    "SELECT c.id FROM {from} y JOIN tasks c ON c.parent_task_id = y.id"
                ));
            }
            if !lateral.is_empty() {
                arms.push(format!(
                    "SELECT e.dst_id FROM {from} y JOIN edges e ON e.src_id = y.id AND e.type IN ({})",
                    lateral.join(", ")
                ));
            }
        }
        self.ctes
            .push(format!("{name}(id) AS ({})", arms.join(" UNION ")));
        name
    }
}
