//! Field values and predicates as SQL expressions over one row (spec/tq.md §2
//! "Predicates", "Fields"). Every expression a predicate yields is a non-NULL
//! 0/1, so `NOT` never meets SQL's third truth value: an absent field fails
//! `=`, `>`, `matches`, and `(not ...)` of that succeeds.

use super::Lower;
use crate::store::model::EdgeClass;
use crate::tq::ast::{Cmp, DateOp, Field, FieldType, Lit, Pred, Prop, Quant, Trav, TravDir, Value};
use crate::tq::registry;

/// Unix seconds of 1900-01-01 (universal time's epoch) before 1970-01-01.
pub const UNIVERSAL_SHIFT: f64 = 2_208_988_800.0;
/// Timestamp operands above this are universal time (§2 "Clock").
pub const UNIVERSAL_ABOVE: f64 = 3_000_000_000.0;

/// The clock rule of §2: an operand above 3,000,000,000 is universal time
/// (seconds since 1900) and is shifted to Unix seconds.
pub fn clock(n: f64) -> f64 {
    if n > UNIVERSAL_ABOVE {
        n - UNIVERSAL_SHIFT
    } else {
        n
    }
}

/// The aliases one row is read through: `t` a `tasks` row (NULL columns when
/// the row is a reflection row) and, when the query has reflection rows, `r`
/// the reflection relation's row.
#[derive(Debug, Clone)]
pub struct Row {
    /// Alias of the `tasks` row.
    pub t: String,
    /// Alias of the `refl` row, when the relation exists.
    pub r: Option<String>,
}

impl Row {
    /// A task-only row (quantifier neighbours, traversal results).
    pub fn task(alias: &str) -> Row {
        Row {
            t: alias.to_string(),
            r: None,
        }
    }
}

/// SQL literal of an edge type's name (registry identifier, never user text).
pub fn edge_lit(e: crate::store::model::EdgeType) -> String {
    format!("'{}'", e.as_str())
}

impl Lower {
    /// The SQL value of `f` on `row` (NULL when absent).
    pub fn field(&mut self, f: &Field, row: &Row) -> String {
        let t = &row.t;
        match f {
            Field::Slug => match &row.r {
                Some(r) => format!("COALESCE({t}.slug, {r}.slug)"),
                None => format!("{t}.slug"),
            },
            Field::Status => format!("{t}.status"),
            Field::Description => format!("{t}.description"),
            Field::Depot => format!("{t}.depot"),
            Field::Parent => {
                format!("(SELECT fp.slug FROM tasks fp WHERE fp.id = {t}.parent_task_id)")
            }
            Field::DisplayName => {
                let slug = self.field(&Field::Slug, row);
                format!(
                    "COALESCE((SELECT fm.value FROM task_metadata fm WHERE fm.task_id = {t}.id AND fm.key = 'display-name'), {slug})"
                )
            }
            Field::CreatedTs => format!("{t}.created_ts"),
            Field::UpdatedTs => format!("{t}.updated_ts"),
            Field::StatusTs => format!("{t}.status_ts"),
            Field::ObsCount if self.counters => {
                if self.reflect {
                    format!("COALESCE({t}.obs_count, 0)")
                } else {
                    format!("{t}.obs_count")
                }
            }
            // `tasks.edge_count` is schema 2's virtual column over the
            // counters (indexed for `hub-tasks`).
            Field::EdgeCount if self.counters => {
                if self.reflect {
                    format!("COALESCE({t}.edge_count, 0)")
                } else {
                    format!("{t}.edge_count")
                }
            }
            Field::ObsCount => {
                format!("(SELECT count(*) FROM observations fo WHERE fo.task_id = {t}.id)")
            }
            Field::EdgeCount => format!(
                "((SELECT count(*) FROM edges fe WHERE fe.src_id = {t}.id) + (SELECT count(*) FROM edges fe WHERE fe.dst_id = {t}.id) + (SELECT count(*) FROM tasks fc WHERE fc.parent_task_id = {t}.id) + {})",
                self.d
                    .bool_int(&format!("({t}.parent_task_id IS NOT NULL)"))
            ),
            Field::ClaimedBy => {
                let live = self.claim_live(t);
                format!("(CASE WHEN {live} THEN {t}.claim_owner END)")
            }
            Field::ClaimUntil => {
                let live = self.claim_live(t);
                format!("(CASE WHEN {live} THEN {t}.claim_until END)")
            }
            Field::Relevance => match self.searches.first() {
                Some((_, h)) => format!("(SELECT fh.rel FROM {h} fh WHERE fh.id = {t}.id)"),
                None => self.d.null_real().to_string(),
            },
            Field::Prop(p) => match &row.r {
                Some(r) => format!("{r}.{}", prop_column(*p)),
                None => self.d.null_text().to_string(),
            },
            Field::Meta(k) => {
                let key = self.text(k);
                format!(
                    "(SELECT fm.value FROM task_metadata fm WHERE fm.task_id = {t}.id AND fm.key = {key})"
                )
            }
        }
    }

    /// `(count TRAV)`: how many distinct tasks are one hop away.
    pub fn count(&mut self, trav: &Trav, row: &Row) -> String {
        let t = &row.t;
        match (trav.edge.class(), trav.dir) {
            // The maintained counter on a task row (issue 23).
            (EdgeClass::Structural, TravDir::Follow) if self.counters && row.r.is_none() => {
                format!("{t}.child_count")
            }
            (EdgeClass::Structural, TravDir::Follow) => {
                format!("(SELECT count(*) FROM tasks cc WHERE cc.parent_task_id = {t}.id)")
            }
            (EdgeClass::Structural, TravDir::Back) => self
                .d
                .bool_int(&format!("({t}.parent_task_id IS NOT NULL)")),
            (EdgeClass::Lateral, TravDir::Follow) => format!(
                "(SELECT count(DISTINCT ce.dst_id) FROM edges ce WHERE ce.src_id = {t}.id AND ce.type = {})",
                edge_lit(trav.edge)
            ),
            (EdgeClass::Lateral, TravDir::Back) => format!(
                "(SELECT count(DISTINCT ce.src_id) FROM edges ce WHERE ce.dst_id = {t}.id AND ce.type = {})",
                edge_lit(trav.edge)
            ),
        }
    }

    /// True when `v`'s SQL value is never NULL, so a comparison with a
    /// constant is already a non-NULL 0/1 and is spelled bare: the counter
    /// columns (`NOT NULL`; `COALESCE(.., 0)` where reflection rows may
    /// appear). Bare, `t.edge_count = ?1` is a term SQLite serves from
    /// `tasks_edge_count` (`tasks_obs_count` for `t.obs_count`); wrapped in
    /// `COALESCE` it is evaluated on every candidate row (`orphans`).
    fn never_null(&self, v: &Value) -> bool {
        self.counters && matches!(v, Value::Field(Field::ObsCount | Field::EdgeCount))
    }

    fn value(&mut self, v: &Value, row: &Row) -> (String, FieldType) {
        match v {
            Value::Field(f) => (self.field(f, row), registry::field_type(f)),
            Value::Count(t) => (self.count(t, row), FieldType::Number),
        }
    }

    /// `pred` on `row` as a non-NULL 0/1 SQL expression.
    pub fn pred(&mut self, pred: &Pred, row: &Row) -> String {
        match pred {
            Pred::Eq(v, lit) => {
                let (e, ty) = self.value(v, row);
                if matches!(lit, Lit::Int(0)) && self.never_null(v) && self.d.counter_zero_inline()
                {
                    return format!("({e} = 0)");
                }
                let operand = match (ty, lit) {
                    (FieldType::Text, Lit::Str(s)) => self.text(s),
                    (FieldType::Text, Lit::Int(i)) => self.text(&i.to_string()),
                    (FieldType::Text, Lit::Dec(d)) => self.text(&d.to_string()),
                    (ty, lit) => {
                        let n = match lit {
                            Lit::Int(i) => Some(*i as f64),
                            Lit::Dec(d) => Some(*d),
                            Lit::Str(s) => s.trim().parse::<f64>().ok(),
                        };
                        match n {
                            Some(n) if ty == FieldType::Timestamp => self.num(clock(n)),
                            Some(n) => self.num(n),
                            None => return self.no().to_string(),
                        }
                    }
                };
                if self.never_null(v) {
                    format!("({e} = {})", self.d.plan_blind(&operand))
                } else {
                    self.d.null_false(&format!("{e} = {operand}"))
                }
            }
            Pred::Has(f) => format!("({} IS NOT NULL)", self.field(f, row)),
            Pred::Matches(f, s) => {
                let e = self.field(f, row);
                let p = self.text(s);
                self.d.null_false(&self.d.contains_folded(&e, &p))
            }
            Pred::Compare(cmp, v, n) => {
                let (e, ty) = self.value(v, row);
                let n = if ty == FieldType::Timestamp {
                    clock(*n)
                } else {
                    *n
                };
                let p = self.num(n);
                let op = match cmp {
                    Cmp::Gt => ">",
                    Cmp::Lt => "<",
                    Cmp::Ge => ">=",
                    Cmp::Le => "<=",
                };
                let test = if self.never_null(v) {
                    format!("({e} {op} {})", self.d.plan_blind(&p))
                } else {
                    self.d.null_false(&format!("{e} {op} {p}"))
                };
                // A lateral count of at least n > 0 needs at least n
                // lateral edges that way: the maintained counter rules out
                // the rest without counting (issue 23).
                let at_least = match cmp {
                    Cmp::Gt => n.floor() + 1.0,
                    Cmp::Ge => n.ceil(),
                    Cmp::Lt | Cmp::Le => 0.0,
                };
                match v {
                    Value::Count(trav)
                        if self.counters
                            && self.d.counter_prefilter()
                            && row.r.is_none()
                            && at_least >= 1.0
                            && trav.edge.class() == EdgeClass::Lateral =>
                    {
                        let c = match trav.dir {
                            TravDir::Follow => "lateral_out",
                            TravDir::Back => "lateral_in",
                        };
                        format!("({}.{c} >= {p} AND {test})", row.t)
                    }
                    _ => test,
                }
            }
            Pred::Date(op, f, d) => {
                let e = self.field(f, row);
                let start = d.midnight().assume_utc().unix_timestamp();
                let s = self.int(start);
                match op {
                    DateOp::On => {
                        let end = self.int(start + 86_400);
                        self.d.null_false(&format!("{e} >= {s} AND {e} < {end}"))
                    }
                    DateOp::Since => self.d.null_false(&format!("{e} >= {s}")),
                    DateOp::Before => self.d.null_false(&format!("{e} < {s}")),
                }
            }
            Pred::And(ps) => self.junction(ps, row, " AND ", self.d.truth(true)),
            Pred::Or(ps) => self.junction(ps, row, " OR ", self.d.truth(false)),
            Pred::Not(p) => format!("(NOT {})", self.pred(p, row)),
            Pred::Quantified(q, trav, p) => {
                self.alias += 1;
                let n = format!("qn{}", self.alias);
                let e = format!("qe{}", self.alias);
                let t = &row.t;
                let hop = match (trav.edge.class(), trav.dir) {
                    (EdgeClass::Structural, TravDir::Follow) => {
                        format!("FROM tasks {n} WHERE {n}.parent_task_id = {t}.id")
                    }
                    (EdgeClass::Structural, TravDir::Back) => {
                        format!("FROM tasks {n} WHERE {n}.id = {t}.parent_task_id")
                    }
                    (EdgeClass::Lateral, TravDir::Follow) => format!(
                        "FROM edges {e} JOIN tasks {n} ON {n}.id = {e}.dst_id WHERE {e}.src_id = {t}.id AND {e}.type = {}",
                        edge_lit(trav.edge)
                    ),
                    (EdgeClass::Lateral, TravDir::Back) => format!(
                        "FROM edges {e} JOIN tasks {n} ON {n}.id = {e}.src_id WHERE {e}.dst_id = {t}.id AND {e}.type = {}",
                        edge_lit(trav.edge)
                    ),
                };
                let inner = self.pred(p, &Row::task(&n));
                let test = match q {
                    Quant::Any => format!("EXISTS (SELECT 1 {hop} AND {inner})"),
                    Quant::None => format!("(NOT EXISTS (SELECT 1 {hop} AND {inner}))"),
                    Quant::All => format!("(NOT EXISTS (SELECT 1 {hop} AND NOT {inner}))"),
                };
                // On a task row the maintained counter of the hop's edges
                // decides a task with none without a probe (issue 23): `any`
                // is false there, `all`/`none` true.
                let counter = match (trav.edge.class(), trav.dir) {
                    _ if !self.counters || row.r.is_some() || !self.d.counter_prefilter() => None,
                    (EdgeClass::Structural, TravDir::Follow) => Some("child_count"),
                    (EdgeClass::Structural, TravDir::Back) => None,
                    (EdgeClass::Lateral, TravDir::Follow) => Some("lateral_out"),
                    (EdgeClass::Lateral, TravDir::Back) => Some("lateral_in"),
                };
                match (counter, q) {
                    (None, _) => test,
                    (Some(c), Quant::Any) => format!("({t}.{c} > 0 AND {test})"),
                    (Some(c), Quant::None | Quant::All) => format!("({t}.{c} = 0 OR {test})"),
                }
            }
        }
    }

    fn junction(&mut self, ps: &[Pred], row: &Row, op: &str, empty: &str) -> String {
        if ps.is_empty() {
            return empty.to_string();
        }
        let parts: Vec<String> = ps.iter().map(|p| self.pred(p, row)).collect();
        format!("({})", parts.join(op))
    }
}

/// The reflection relation's column for a prop (registry identifiers).
pub fn prop_column(p: Prop) -> &'static str {
    match p {
        Prop::Category => "category",
        Prop::Kind => "kind",
        Prop::Doc => "doc",
        Prop::Signature => "signature",
        Prop::Type => "type",
        Prop::Origin => "origin",
        Prop::Source => "source",
        Prop::Class => "class",
        Prop::Unit => "unit",
        Prop::Epoch => "epoch",
    }
}
