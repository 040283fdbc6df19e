//! Relations: one CTE stage per IR node (spec/tq.md §2; docs/planner.md),
//! scans over `tasks`, and the rank a stage carries when its order is
//! [`Order::Rank`].

use super::Lower;
use super::expr::{Row, edge_lit};
use crate::store::model::EdgeClass;
use crate::tq::ast::{Field, SetOp, TravDir};
use crate::tq::ir::{Base, Cond, Node, Order, Rel};

impl Lower {
    /// A stage delivering `r`'s rows in `r.order` (a rank column only for
    /// [`Order::Rank`]).
    pub(super) fn rel(&mut self, r: &Rel) -> String {
        let want_rank = r.order == Order::Rank;
        match &r.node {
            Node::Scan { from, conds } => self.scan(from, conds, want_rank),
            Node::Current(slug) => {
                let a = self.text(slug);
                let missing = self.d.missing_current(&a);
                self.cte(format!(
                    "SELECT id, 1 FROM tasks WHERE slug = {a} UNION ALL SELECT {missing}, 1 WHERE NOT EXISTS (SELECT 1 FROM tasks WHERE slug = {a})"
                ))
            }
            Node::Reflect(k) => {
                let ord = if want_rank {
                    let slug = self.d.sort_text("slug");
                    self.d.row_number(&format!("{slug}, id"))
                } else {
                    "0".to_string()
                };
                self.cte(format!(
                    "SELECT id, {ord} FROM refl WHERE rk = '{}'",
                    k.as_str()
                ))
            }
            Node::Empty => {
                let no = self.no();
                self.cte(format!("SELECT 0, 0 WHERE {no}"))
            }
            Node::Carried(json) => {
                let j = self.text(json);
                let rows = self.d.json_rows(&j);
                let (a, b) = (self.d.json_item(0), self.d.json_item(1));
                self.cte(format!("SELECT {a}, {b} FROM {rows}"))
            }
            Node::Filter(input, c) => {
                let s = self.rel(input);
                let (row, join) = self.row_join(&s);
                let cond = self.cond(c, &row);
                self.cte(format!("SELECT x.id, x.ord {join} WHERE {cond}"))
            }
            Node::SemiJoin { input, other, anti } => {
                if let (
                    false,
                    Node::Scan {
                        from: Base::Tasks,
                        conds,
                    },
                ) = (self.reflect, &other.node)
                {
                    // The other side is a test on the row itself (`(:minus
                    // (dormant))` over anything): no second relation, the
                    // test reads the input's own task row.
                    let a = self.rel(input);
                    let (row, join) = self.row_join(&a);
                    let parts: Vec<String> = conds.iter().map(|c| self.cond(c, &row)).collect();
                    let all = if parts.is_empty() {
                        self.d.truth(true).to_string()
                    } else {
                        parts.join(" AND ")
                    };
                    let not = if *anti { "NOT " } else { "" };
                    let s = self.cte(format!("SELECT x.id, 0 {join} WHERE {not}({all})"));
                    return self.ranked_if(s, want_rank, &Order::Slug);
                }
                let a = self.rel(input);
                let b = self.rel(other);
                let not = if *anti { "NOT " } else { "" };
                let s = self.cte(format!(
                    "SELECT x.id, 0 FROM {a} x WHERE {not}EXISTS (SELECT 1 FROM {b} o WHERE o.id = x.id)"
                ));
                self.ranked_if(s, want_rank, &Order::Slug)
            }
            Node::SetOp(SetOp::OrElse, a, b) => {
                // Reading `a` twice unmaterialized made SQLite expand a
                // chain of n steps 2^n times ("too complex" at 8; issue 26),
                // so `a` is one MATERIALIZED stage (issue 23: the tagged
                // form below computes `b` even when `a` has rows).
                let chained = matches!(a.node, Node::SetOp(SetOp::OrElse, _, _));
                let a = self.rel(a);
                let b = self.rel(b);
                if chained {
                    // Inside a chain of or-elses each level's `a` is read
                    // ONCE: both sides tagged, the smallest tag present
                    // kept (a materialized `a` per level still nests too
                    // deep for SQLite at 8 levels).
                    return self.cte(format!(
                        "SELECT id, ord FROM (SELECT id, ord, src, MIN(src) OVER () AS fst FROM (SELECT id, ord, 0 AS src FROM {a} UNION ALL SELECT id, ord, 1 FROM {b}) u) v WHERE src = fst"
                    ));
                }
                // `a` materialized once, read twice (its rows, and whether
                // it has any); `b` is read only when it has none.
                let m = self.cte_materialized(format!("SELECT id, ord FROM {a}"));
                self.cte(format!(
                    "SELECT id, ord FROM {m} UNION ALL SELECT id, ord FROM {b} WHERE NOT EXISTS (SELECT 1 FROM {m})"
                ))
            }
            Node::SetOp(op, a, b) => {
                let a = self.rel(a);
                let b = self.rel(b);
                let compound = match op {
                    SetOp::Union => "UNION",
                    SetOp::Intersect => "INTERSECT",
                    _ => "EXCEPT",
                };
                let alias = self.d.subquery_alias();
                let s = self.cte(format!(
                    "SELECT id, 0 FROM (SELECT id FROM {a} {compound} SELECT id FROM {b}){alias}"
                ));
                self.ranked_if(s, want_rank, &Order::Slug)
            }
            Node::Sort(input, f, dir) => {
                let s = self.rel(input);
                if want_rank {
                    self.rank(&s, &Order::Key(f.clone(), *dir))
                } else {
                    s
                }
            }
            Node::Take(input, n) => {
                let s = self.rel(input);
                let (row, join) = self.row_join(&s);
                let ob = self.order_by(&input.order, &row);
                let n = self.int(*n);
                let limit = self.d.limit(&n);
                let s = match ob {
                    Some(ob) => {
                        self.cte(format!("SELECT x.id, x.ord {join} ORDER BY {ob} {limit}"))
                    }
                    None => self.cte(format!("SELECT x.id, x.ord {join} {limit}")),
                };
                self.bounded.push(s.clone());
                s
            }
            Node::TopN {
                input,
                field,
                dir,
                n,
            } => {
                let key = Order::Key(field.clone(), *dir);
                let s = if let Node::Scan { from, conds } = &input.node {
                    // Straight on the table: an index on the key serves it.
                    // Where one exists (`(key DESC, slug)` for the counters,
                    // the slug's), keep the status test off `tasks_status`
                    // so SQLite walks the key's index and stops after n rows
                    // instead of sorting every task of the status.
                    let indexed_key = match field {
                        Field::ObsCount | Field::EdgeCount => self.counters,
                        Field::Slug => true,
                        _ => false,
                    };
                    // (Only over the table itself: a traversal's input is
                    // lowered inside the scan and keeps its own plan.)
                    self.status_off_index = indexed_key && matches!(from, Base::Tasks);
                    let body = self.scan_body(from, conds, "0");
                    self.status_off_index = false;
                    let ob = self
                        .order_by_id(&key, &Row::task("t"), "t.id")
                        .unwrap_or_default();
                    let n = self.int(*n);
                    let limit = self.d.limit(&n);
                    self.cte(format!("{body} ORDER BY {ob} {limit}"))
                } else {
                    let s = self.rel(input);
                    let (row, join) = self.row_join(&s);
                    let ob = self.order_by(&key, &row).unwrap_or_default();
                    let n = self.int(*n);
                    let limit = self.d.limit(&n);
                    self.cte(format!("SELECT x.id, 0 {join} ORDER BY {ob} {limit}"))
                };
                self.bounded.push(s.clone());
                self.ranked_if(s, want_rank, &key)
            }
            Node::Pass(input) => {
                let s = self.rel(input);
                self.cte(format!("SELECT id, ord FROM {s}"))
            }
        }
    }

    pub(super) fn ranked_if(&mut self, s: String, want_rank: bool, natural: &Order) -> String {
        if want_rank { self.rank(&s, natural) } else { s }
    }

    /// A scan of `tasks t` over the candidate rows of `from`, filtered by
    /// `conds`; ranked by slug when `want_rank`.
    pub(super) fn scan(&mut self, from: &Base, conds: &[Cond], want_rank: bool) -> String {
        let ord = if want_rank {
            if let Base::Search(_) = from {
                // Relevance, best first; ties by slug (spec/tq.md §10).
                let slug = self.d.sort_text("t.slug");
                self.d.row_number(&format!("sh.rel DESC, {slug}"))
            } else {
                self.d.row_number("t.slug")
            }
        } else {
            "0".to_string()
        };
        let body = self.scan_body(from, conds, &ord);
        self.cte(body)
    }

    /// `SELECT t.id, {ord} FROM tasks t WHERE ...` for a scan.
    pub(super) fn scan_body(&mut self, from: &Base, conds: &[Cond], ord: &str) -> String {
        let from_where = self.scan_from(from, conds);
        format!("SELECT t.id, {ord} {from_where}")
    }

    /// `FROM tasks t [JOIN hits] [WHERE ...]` for a scan (the rows of a
    /// scan, read through the alias `t`).
    pub(super) fn scan_from(&mut self, from: &Base, conds: &[Cond]) -> String {
        let mut wh: Vec<String> = Vec::new();
        let mut join = String::new();
        match from {
            Base::Tasks => {}
            Base::Search(text) => {
                let h = self.hits_of(text);
                join = format!(" JOIN {h} sh ON sh.id = t.id");
            }
            Base::Traverse(input, t) => {
                let cur = self.rel(input);
                let ids = match (t.edge.class(), t.dir) {
                    (EdgeClass::Structural, TravDir::Follow) => {
                        format!("SELECT c.id FROM {cur} x JOIN tasks c ON c.parent_task_id = x.id")
                    }
                    (EdgeClass::Structural, TravDir::Back) => format!(
                        "SELECT c.parent_task_id FROM {cur} x JOIN tasks c ON c.id = x.id WHERE c.parent_task_id IS NOT NULL"
                    ),
                    (EdgeClass::Lateral, TravDir::Follow) => format!(
                        "SELECT e.dst_id FROM {cur} x JOIN edges e ON e.src_id = x.id AND e.type = {}",
                        edge_lit(t.edge)
                    ),
                    (EdgeClass::Lateral, TravDir::Back) => format!(
                        "SELECT e.src_id FROM {cur} x JOIN edges e ON e.dst_id = x.id AND e.type = {}",
                        edge_lit(t.edge)
                    ),
                };
                wh.push(format!("t.id IN ({ids})"));
            }
            Base::PlanOf(slug) => {
                // One probe of the slug index, then the parent index: the
                // task's own children when it has any, else its parent's.
                let a = self.text(slug);
                let missing = self.d.missing_current(&a);
                wh.push(format!(
                    "t.parent_task_id = (SELECT CASE WHEN c.child_count > 0 THEN c.id ELSE c.parent_task_id END FROM tasks c WHERE c.slug = {a} UNION ALL SELECT {missing} WHERE NOT EXISTS (SELECT 1 FROM tasks WHERE slug = {a}))"
                ));
            }
            Base::Closure(input, edges) => {
                let cur = self.rel(input);
                let c = self.closure(&cur, edges);
                wh.push(format!("t.id IN (SELECT id FROM {c})"));
            }
        }
        let row = Row::task("t");
        for c in conds {
            wh.push(self.cond(c, &row));
        }
        let wh = if wh.is_empty() {
            String::new()
        } else {
            format!(" WHERE {}", wh.join(" AND "))
        };
        format!("FROM tasks t{join}{wh}")
    }
}
