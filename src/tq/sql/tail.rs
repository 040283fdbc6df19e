//! The final SELECT: the shape's columns over the root stage, ordered by
//! the root's order (spec/tq.md §4 "Output").

use super::expr::{Row, edge_lit};
use super::{Lower, status_list};
use crate::store::model::EdgeClass;
use crate::tq::ast::{Field, Status};
use crate::tq::ir::{Base, Node, Order, Rel, Shape};
use crate::tq::plan::Mutation;

impl Lower {
    /// The task columns of `row`: slug, display name, status, and when
    /// `enriched` the observation and edge counts and the metadata — for
    /// every row (`Some(None)`) or only where the SQL test `Some(Some(T))`
    /// holds (rule 9's cap: `x.ord <= K`, or a window in the final SELECT).
    pub(super) fn task_columns(&mut self, row: &Row, enriched: Option<Option<&str>>) -> String {
        let slug = self.field(&Field::Slug, row);
        let display = self.field(&Field::DisplayName, row);
        let t = row.t.clone();
        match enriched {
            Some(cap) => {
                let obs = self.field(&Field::ObsCount, row);
                let edges = self.field(&Field::EdgeCount, row);
                let pairs = self.d.json_pairs("fm.key", "fm.value", "fm.key");
                let meta =
                    format!("(SELECT {pairs} FROM task_metadata fm WHERE fm.task_id = {t}.id)");
                match cap {
                    None => format!("{slug}, {display}, {t}.status, {obs}, {edges}, {meta}"),
                    Some(shown) => format!(
                        "{slug}, {display}, {t}.status, CASE WHEN {shown} THEN {obs} END, CASE WHEN {shown} THEN {edges} END, CASE WHEN {shown} THEN {meta} END"
                    ),
                }
            }
            None => format!("{slug}, {display}, {t}.status, NULL, NULL, NULL"),
        }
    }

    /// The whole final SELECT read straight off the task table, when the
    /// root is a scan of it (by slug or unordered) or a top-n straight over
    /// the table, and the shape needs no rank: `SELECT cols FROM tasks t
    /// WHERE ... ORDER BY key [LIMIT n]`, the statement a person would
    /// write, with no stage joined back to `tasks` and sorted again
    /// (issue 23). `None` when the root is anything else.
    pub(super) fn fused_root(&mut self, root: &Rel, shape: &Shape) -> Option<String> {
        if self.reflect {
            return None;
        }
        // `(current)` as the root: the one task row, by the same probe the
        // stage uses (a query error when it is gone), read off the table.
        // `from`: the scan's base, or `Err(slug)` for `(current)`.
        let (from, conds, order, limit) = match &root.node {
            Node::Scan { from, conds }
                if matches!(root.order, Order::Slug | Order::Any)
                    && !matches!(from, Base::Search(_)) =>
            {
                (Ok(from), conds.as_slice(), root.order.clone(), None)
            }
            Node::Current(slug) => (Err(slug), &[][..], Order::Any, None),
            Node::TopN {
                input,
                field,
                dir,
                n,
            } => match &input.node {
                Node::Scan {
                    from: from @ Base::Tasks,
                    conds,
                } => (
                    Ok(from),
                    conds.as_slice(),
                    Order::Key(field.clone(), *dir),
                    Some(*n),
                ),
                _ => return None,
            },
            _ => return None,
        };
        let scan_from = |l: &mut Lower| match from {
            Ok(from) => l.scan_from(from, conds),
            Err(current) => {
                let a = l.text(current);
                let missing = l.d.missing_current(&a);
                format!(
                    "FROM tasks t WHERE t.id = (SELECT id FROM tasks WHERE slug = {a} UNION ALL SELECT {missing} WHERE NOT EXISTS (SELECT 1 FROM tasks WHERE slug = {a}))"
                )
            }
        };
        // Enrichment capped at K rows: every row fits under a limit of at
        // most K; otherwise the rows are numbered in this SELECT itself, by
        // a window over the output order (no rank stage joined back).
        let (enrich_all, cap) = match shape {
            Shape::Tasks {
                enriched: true,
                enrich_first: Some(k),
            } => match limit {
                Some(n) if n >= 0 && (n as u64) <= *k as u64 => (true, None),
                None if order != Order::Any => (false, Some(*k)),
                _ => return None,
            },
            Shape::Tasks { .. } | Shape::Ids | Shape::Count | Shape::Select(_) => (false, None),
            Shape::GroupBy(_) | Shape::Targets(_) => return None,
        };
        let row = Row::task("t");
        if matches!(shape, Shape::Count) && limit.is_none() {
            let from_where = scan_from(self);
            return Some(format!("SELECT count(*) {from_where}"));
        }
        if matches!(shape, Shape::Count) {
            return None;
        }
        let shown = match cap {
            Some(k) => {
                let k = self.int(k as i64);
                let ob = self.order_by_id(&order, &row, "t.id")?;
                Some(format!("ROW_NUMBER() OVER (ORDER BY {ob}) <= {k}"))
            }
            None => None,
        };
        let cols = match shape {
            Shape::Tasks { enriched, .. } => {
                if shown.is_some() {
                    self.task_columns(&row, Some(shown.as_deref()))
                } else if *enriched || enrich_all {
                    self.task_columns(&row, Some(None))
                } else {
                    self.task_columns(&row, None)
                }
            }
            Shape::Select(fields) => {
                let mut cols = vec![self.field(&Field::Slug, &row)];
                for f in fields.iter() {
                    cols.push(self.field(f, &row));
                }
                cols.join(", ")
            }
            _ => self.field(&Field::Slug, &row),
        };
        // A top-n over the table walks its key's index and stops (see
        // `Node::TopN` in rel.rs).
        self.status_off_index = match (&root.node, limit) {
            (Node::TopN { field, .. }, Some(_)) => match field {
                Field::ObsCount | Field::EdgeCount => self.counters,
                Field::Slug => true,
                _ => false,
            },
            _ => false,
        };
        let from_where = scan_from(self);
        self.status_off_index = false;
        let ob = match self.order_by_id(&order, &row, "t.id") {
            Some(ob) => format!(" ORDER BY {ob}"),
            None => String::new(),
        };
        let lim = match limit {
            Some(n) => {
                let n = self.int(n);
                format!(" {}", self.d.limit(&n))
            }
            None => String::new(),
        };
        Some(format!("SELECT {cols} {from_where}{ob}{lim}"))
    }

    pub(super) fn tail(&mut self, s: &str, order: &Order, shape: &Shape) -> String {
        // Enrichment capped at the first K rows needs the rank it is cut at.
        let (s, order) = match shape {
            Shape::Tasks {
                enriched: true,
                enrich_first: Some(_),
            } => (self.rank(s, order), Order::Rank),
            _ => (s.to_string(), order.clone()),
        };
        let s = s.as_str();
        if matches!(shape, Shape::Count) {
            // No order, and nothing bound for one (an unused parameter is
            // an error).
            return format!("SELECT count(*) FROM {s}");
        }
        let (row, join) = self.row_join(s);
        let ob = match self.order_by(&order, &row) {
            Some(ob) => format!(" ORDER BY {ob}"),
            None => String::new(),
        };
        match shape {
            Shape::Tasks {
                enriched,
                enrich_first,
            } => {
                let cap = enrich_first.map(|k| format!("x.ord <= {}", self.int(k as i64)));
                let cols = if *enriched {
                    self.task_columns(&row, Some(cap.as_deref()))
                } else {
                    self.task_columns(&row, None)
                };
                format!("SELECT {cols} {join}{ob}")
            }
            Shape::Ids => {
                let slug = self.field(&Field::Slug, &row);
                format!("SELECT {slug} {join}{ob}")
            }
            Shape::Count => format!("SELECT count(*) FROM {s}"),
            Shape::Select(fields) => {
                let mut cols = vec![self.field(&Field::Slug, &row)];
                for f in fields.iter() {
                    cols.push(self.field(f, &row));
                }
                format!("SELECT {} {join}{ob}", cols.join(", "))
            }
            Shape::GroupBy(f) => {
                let cols = self.task_columns(&row, None);
                let key = self.field(f, &row);
                format!("SELECT {cols}, {key} {join}{ob}")
            }
            Shape::Targets(m) => {
                let t = row.t.clone();
                let current = match m {
                    Mutation::SetStatus(_) => format!("{t}.status"),
                    Mutation::SetMeta { key, .. } => self.field(&Field::Meta(key.clone()), &row),
                    // The live owner (NULL when unclaimed, lapsed or
                    // dormant), the register's stamp second, and whether
                    // the task is dormant (spec/tq.md §9 "Steps").
                    Mutation::Claim { .. } | Mutation::Release { .. } => {
                        let owner = self.field(&Field::ClaimedBy, &row);
                        let dormant = self.d.bool_int(&format!(
                            "{t}.status IN ({})",
                            status_list(&[Status::Completed, Status::Abandoned])
                        ));
                        self.d.array(&[&owner, &format!("{t}.claim_ts"), &dormant])
                    }
                    Mutation::Link { edge, target } | Mutation::Unlink { edge, target } => {
                        let tgt = self.text(target);
                        match edge.class() {
                            EdgeClass::Structural => format!(
                                "COALESCE({t}.parent_task_id = (SELECT g.id FROM tasks g WHERE g.slug = {tgt}), {})",
                                self.no()
                            ),
                            EdgeClass::Lateral => format!(
                                "EXISTS (SELECT 1 FROM edges ge WHERE ge.src_id = {t}.id AND ge.type = {} AND ge.dst_id = (SELECT g.id FROM tasks g WHERE g.slug = {tgt}))",
                                edge_lit(*edge)
                            ),
                        }
                    }
                };
                // With reflection rows the join keeps `refl r`: a lazy order
                // (the optimized write path) sorts by `COALESCE(t.slug, r.slug)`.
                let live = self.d.not_reserved(&format!("{t}.slug"));
                format!(
                    "SELECT x.id, x.ord, ({t}.id IS NOT NULL AND {live}), {t}.slug, {current} {join}{ob}"
                )
            }
        }
    }
}
