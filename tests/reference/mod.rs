//! The reference evaluator: TQ semantics (spec/tq.md §2, §4, §6) in plain
//! in-memory Rust, one function per source, step and predicate, as simple as
//! possible, no SQL. The proptest in `tq_plan_reference.rs` compares the
//! compiled SQL's answer with this one.
//!
//! The graph is loaded from a store's projection tables (`Graph::load`);
//! evaluation never touches SQL.

#![allow(dead_code)]

pub mod arbitrary;
mod graph;
pub mod mutate;

pub use graph::{Graph, Refl, Task, V};

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use cairn::store::model::{EdgeClass, EdgeType};
use cairn::tq::ast::{
    Cmp, DateOp, Dir, Field, FieldType, Lit, Pred, Quant, SetOp, Trav, TravDir, Value,
};
use cairn::tq::plan::{PSource, PStep, Pipeline, Shaper};
use cairn::tq::registry;
use cairn::tq::render::{Cell, Output, ProjRow, TaskRow, group};

/// An item of a set: a task id or a reflection row.
#[derive(Debug, Clone)]
pub enum Item {
    Task(i64),
    Refl(Refl),
}

impl Item {
    fn id(&self) -> i64 {
        match self {
            Item::Task(i) => *i,
            Item::Refl(r) => r.id,
        }
    }
}

/// The evaluator over one graph, with the session's current task.
pub struct Eval<'a> {
    pub g: &'a Graph,
    pub current: Option<String>,
}

fn is_reserved(slug: &str) -> bool {
    slug.starts_with('@')
}

fn dormant(status: &str) -> bool {
    status == "completed" || status == "abandoned"
}

impl Eval<'_> {
    fn task(&self, id: i64) -> &Task {
        &self.g.tasks[&id]
    }

    fn slug(&self, it: &Item) -> String {
        match it {
            Item::Task(i) => self.task(*i).slug.clone(),
            Item::Refl(r) => r.slug.clone(),
        }
    }

    /// Orders by slug, then id (the order of sources, traversals, set ops).
    fn by_slug(&self, mut items: Vec<Item>) -> Vec<Item> {
        items.sort_by(|a, b| self.slug(a).cmp(&self.slug(b)).then(a.id().cmp(&b.id())));
        items
    }

    fn tasks_where(&self, f: impl Fn(&Task) -> bool) -> Vec<Item> {
        let items = self
            .g
            .tasks
            .values()
            .filter(|t| f(t))
            .map(|t| Item::Task(t.id))
            .collect();
        self.by_slug(items)
    }

    /// The task's claim when live (spec/tq.md §9): until after the
    /// graph's clock and the task not dormant.
    pub fn live_claim<'t>(&self, t: &'t Task) -> Option<(&'t str, i64)> {
        match &t.claim {
            Some((o, u)) if *u > self.g.now && !dormant(&t.status) => Some((o.as_str(), *u)),
            _ => None,
        }
    }

    pub fn source(&self, s: &PSource) -> Vec<Item> {
        match s {
            PSource::All => self.tasks_where(|t| !is_reserved(&t.slug)),
            PSource::Active => self.tasks_where(|t| {
                !is_reserved(&t.slug) && matches!(t.status.as_str(), "open" | "active" | "blocked")
            }),
            PSource::Dormant => self.tasks_where(|t| !is_reserved(&t.slug) && dormant(&t.status)),
            PSource::Current(slug) => self.tasks_where(|t| &t.slug == slug),
            PSource::Mine(agent) => self.tasks_where(|t| {
                !is_reserved(&t.slug) && self.live_claim(t).is_some_and(|(o, _)| o == agent)
            }),
            PSource::Search(text) => {
                let hits = self.search_hits(text);
                self.tasks_where(|t| hits.contains(&t.id))
            }
            PSource::Node(sub) => {
                let sub = sub.to_ascii_lowercase();
                self.tasks_where(|t| t.slug.to_ascii_lowercase().contains(&sub))
            }
            PSource::Reflect(k) => {
                self.by_slug(self.g.refl(*k).into_iter().map(Item::Refl).collect())
            }
            PSource::View(p) => self.set(p),
            PSource::Empty => Vec::new(),
        }
    }

    /// The tasks with an observation matching `text` under `task_search`'s
    /// rules (spec/tq.md §10): the sanitised terms, each a phrase of tokens
    /// (the last a prefix when it ends in `*`), all in one observation.
    /// The evaluator orders a search by slug: exact against the engine's
    /// relevance order on the generated stores, whose observations are all
    /// `obs N` (every hit scores the same, ties by slug).
    pub fn search_hits(&self, text: &str) -> BTreeSet<i64> {
        use cairn::store::pg::search::{terms, tokens};
        let Some(expr) = cairn::store::search::sanitize(text) else {
            return BTreeSet::new();
        };
        let terms = terms(&expr);
        let matches = |note: &str| {
            let toks: Vec<String> = tokens(note).into_iter().map(|t| t.2).collect();
            terms.iter().all(|term| {
                let n = term.tokens.len();
                (0..toks.len()).any(|i| {
                    i + n <= toks.len()
                        && term.tokens.iter().enumerate().all(|(j, q)| {
                            if term.prefix && j + 1 == n {
                                toks[i + j].starts_with(q.as_str())
                            } else {
                                toks[i + j] == *q
                            }
                        })
                })
            })
        };
        self.g
            .tasks
            .values()
            .filter(|t| t.obs_texts.iter().any(|o| matches(o)))
            .map(|t| t.id)
            .collect()
    }

    /// The first `(search …)` of `p` in reading order (its source, a view's
    /// body inlined, then its steps' operands): the one `:relevance` reads.
    pub fn first_search(p: &Pipeline) -> Option<String> {
        let from_source = match &p.source {
            PSource::Search(t) => Some(t.clone()),
            PSource::View(v) => Self::first_search(v),
            _ => None,
        };
        from_source.or_else(|| {
            p.steps.iter().find_map(|s| match s {
                PStep::SetOp(_, sub) => Self::first_search(sub),
                _ => None,
            })
        })
    }

    /// Neighbour task ids one hop from task `id` (distinct).
    pub fn hop(&self, id: i64, trav: &Trav) -> BTreeSet<i64> {
        let mut out = BTreeSet::new();
        match (trav.edge.class(), trav.dir) {
            (EdgeClass::Structural, TravDir::Follow) => {
                for t in self.g.tasks.values() {
                    if t.parent == Some(id) {
                        out.insert(t.id);
                    }
                }
            }
            (EdgeClass::Structural, TravDir::Back) => {
                if let Some(p) = self.g.tasks.get(&id).and_then(|t| t.parent) {
                    out.insert(p);
                }
            }
            (EdgeClass::Lateral, TravDir::Follow) => {
                for (s, d, ty) in &self.g.edges {
                    if *s == id && *ty == trav.edge {
                        out.insert(*d);
                    }
                }
            }
            (EdgeClass::Lateral, TravDir::Back) => {
                for (s, d, ty) in &self.g.edges {
                    if *d == id && *ty == trav.edge {
                        out.insert(*s);
                    }
                }
            }
        }
        out
    }

    fn neighbours(&self, it: &Item, trav: &Trav) -> BTreeSet<i64> {
        match it {
            Item::Task(id) => self.hop(*id, trav),
            Item::Refl(_) => BTreeSet::new(),
        }
    }

    pub fn traverse(&self, input: &[Item], trav: &Trav) -> Vec<Item> {
        let ids: BTreeSet<i64> = input
            .iter()
            .flat_map(|it| self.neighbours(it, trav))
            .collect();
        self.by_slug(ids.into_iter().map(Item::Task).collect())
    }

    pub fn closure(&self, input: &[Item], edges: &[EdgeType]) -> Vec<Item> {
        let step = |id: i64| -> BTreeSet<i64> {
            let mut out = BTreeSet::new();
            for e in edges {
                out.extend(self.hop(
                    id,
                    &Trav {
                        dir: TravDir::Follow,
                        edge: *e,
                    },
                ));
            }
            out
        };
        let mut seen: BTreeSet<i64> = BTreeSet::new();
        let mut frontier: Vec<i64> = Vec::new();
        for it in input {
            if let Item::Task(id) = it {
                for n in step(*id) {
                    if seen.insert(n) {
                        frontier.push(n);
                    }
                }
            }
        }
        while let Some(id) = frontier.pop() {
            for n in step(id) {
                if seen.insert(n) {
                    frontier.push(n);
                }
            }
        }
        self.by_slug(seen.into_iter().map(Item::Task).collect())
    }

    pub fn field(&self, it: &Item, f: &Field) -> Option<V> {
        let txt = |s: &str| Some(V::Text(s.to_string()));
        match it {
            Item::Refl(r) => match f {
                Field::Slug | Field::DisplayName => txt(&r.slug),
                Field::ObsCount | Field::EdgeCount => Some(V::Int(0)),
                Field::Prop(p) => r.props.get(p).map(|s| V::Text(s.clone())),
                _ => None,
            },
            Item::Task(id) => {
                let t = self.task(*id);
                match f {
                    Field::Slug => txt(&t.slug),
                    Field::Status => txt(&t.status),
                    Field::Description => t.description.as_deref().and_then(txt),
                    Field::Depot => t.depot.as_deref().and_then(txt),
                    Field::Parent => t.parent.map(|p| V::Text(self.task(p).slug.clone())),
                    Field::DisplayName => txt(t.meta.get("display-name").unwrap_or(&t.slug)),
                    Field::CreatedTs => Some(V::Int(t.created_ts)),
                    Field::UpdatedTs => Some(V::Int(t.updated_ts)),
                    Field::StatusTs => t.status_ts.map(V::Int),
                    Field::ObsCount => Some(V::Int(t.obs)),
                    Field::EdgeCount => Some(V::Int(self.edge_count(t))),
                    Field::ClaimedBy => self.live_claim(t).and_then(|(o, _)| txt(o)),
                    Field::ClaimUntil => self.live_claim(t).map(|(_, u)| V::Int(u)),
                    // Every hit scores the same on the generated stores
                    // (see `search_hits`): present (1) or absent.
                    Field::Relevance => self
                        .g
                        .first_search
                        .borrow()
                        .as_ref()
                        .filter(|hits| hits.contains(id))
                        .map(|_| V::Int(1)),
                    Field::Prop(_) => None,
                    Field::Meta(k) => t.meta.get(k).map(|v| V::Text(v.clone())),
                }
            }
        }
    }

    fn edge_count(&self, t: &Task) -> i64 {
        let lateral = self
            .g
            .edges
            .iter()
            .filter(|(s, d, _)| *s == t.id || *d == t.id)
            .count() as i64;
        let children = self
            .g
            .tasks
            .values()
            .filter(|c| c.parent == Some(t.id))
            .count() as i64;
        lateral + children + i64::from(t.parent.is_some())
    }

    fn value(&self, it: &Item, v: &Value) -> (Option<V>, FieldType) {
        match v {
            Value::Field(f) => (self.field(it, f), registry::field_type(f)),
            Value::Count(t) => (
                Some(V::Int(self.neighbours(it, t).len() as i64)),
                FieldType::Number,
            ),
        }
    }

    pub fn pred(&self, it: &Item, p: &Pred) -> bool {
        match p {
            Pred::Eq(v, lit) => {
                let (val, ty) = self.value(it, v);
                match (ty, val) {
                    (_, None) => false,
                    (FieldType::Text, Some(V::Text(s))) => {
                        let l = match lit {
                            Lit::Str(s) => s.clone(),
                            Lit::Int(i) => i.to_string(),
                            Lit::Dec(d) => d.to_string(),
                        };
                        s == l
                    }
                    (ty, Some(V::Int(n))) => {
                        let l = match lit {
                            Lit::Int(i) => Some(*i as f64),
                            Lit::Dec(d) => Some(*d),
                            Lit::Str(s) => s.trim().parse::<f64>().ok(),
                        };
                        match l {
                            Some(l) => {
                                let l = if ty == FieldType::Timestamp {
                                    clock(l)
                                } else {
                                    l
                                };
                                n as f64 == l
                            }
                            None => false,
                        }
                    }
                    _ => false,
                }
            }
            Pred::Has(f) => self.field(it, f).is_some(),
            Pred::Matches(f, s) => match self.field(it, f) {
                Some(V::Text(t)) => t.to_ascii_lowercase().contains(&s.to_ascii_lowercase()),
                Some(V::Int(i)) => i.to_string().contains(&s.to_ascii_lowercase()),
                None => false,
            },
            Pred::Compare(c, v, n) => {
                let (val, ty) = self.value(it, v);
                let n = if ty == FieldType::Timestamp {
                    clock(*n)
                } else {
                    *n
                };
                match val {
                    Some(V::Int(x)) => {
                        let x = x as f64;
                        match c {
                            Cmp::Gt => x > n,
                            Cmp::Lt => x < n,
                            Cmp::Ge => x >= n,
                            Cmp::Le => x <= n,
                        }
                    }
                    _ => false,
                }
            }
            Pred::Date(op, f, d) => {
                let start = d.midnight().assume_utc().unix_timestamp();
                match self.field(it, f) {
                    Some(V::Int(x)) => match op {
                        DateOp::On => x >= start && x < start + 86_400,
                        DateOp::Since => x >= start,
                        DateOp::Before => x < start,
                    },
                    _ => false,
                }
            }
            Pred::And(ps) => ps.iter().all(|p| self.pred(it, p)),
            Pred::Or(ps) => ps.iter().any(|p| self.pred(it, p)),
            Pred::Not(p) => !self.pred(it, p),
            Pred::Quantified(q, t, p) => {
                let ns = self.neighbours(it, t);
                let mut sat = ns.iter().map(|n| self.pred(&Item::Task(*n), p));
                match q {
                    Quant::All => sat.all(|b| b),
                    Quant::Any => sat.any(|b| b),
                    Quant::None => !sat.any(|b| b),
                }
            }
        }
    }

    fn sort(&self, input: Vec<Item>, f: &Field, dir: Dir) -> Vec<Item> {
        let mut keyed: Vec<(Option<V>, String, Item)> = input
            .into_iter()
            .map(|it| (self.field(&it, f), self.slug(&it), it))
            .collect();
        keyed.sort_by(|a, b| {
            let k = match (&a.0, &b.0) {
                (None, None) => Ordering::Equal,
                (None, Some(_)) => Ordering::Greater,
                (Some(_), None) => Ordering::Less,
                (Some(x), Some(y)) => {
                    let o = cmp_v(x, y);
                    if dir == Dir::Desc { o.reverse() } else { o }
                }
            };
            k.then(a.1.cmp(&b.1)).then(a.2.id().cmp(&b.2.id()))
        });
        keyed.into_iter().map(|(_, _, it)| it).collect()
    }

    fn set_op(&self, left: Vec<Item>, op: SetOp, right: Vec<Item>) -> Vec<Item> {
        let lid: BTreeSet<i64> = left.iter().map(Item::id).collect();
        let rid: BTreeSet<i64> = right.iter().map(Item::id).collect();
        let all: BTreeMap<i64, Item> = left
            .iter()
            .chain(right.iter())
            .map(|it| (it.id(), it.clone()))
            .collect();
        let keep: BTreeSet<i64> = match op {
            SetOp::Union => lid.union(&rid).copied().collect(),
            SetOp::Intersect => lid.intersection(&rid).copied().collect(),
            SetOp::Minus => lid.difference(&rid).copied().collect(),
            SetOp::OrElse => return if left.is_empty() { right } else { left },
        };
        self.by_slug(keep.into_iter().map(|i| all[&i].clone()).collect())
    }

    /// The task set of a shaper-less pipeline.
    pub fn set(&self, p: &Pipeline) -> Vec<Item> {
        self.steps(self.source(&p.source), &p.steps)
    }

    /// `steps` applied to the set `cur`.
    pub fn steps(&self, mut cur: Vec<Item>, steps: &[PStep]) -> Vec<Item> {
        for s in steps {
            cur = match s {
                PStep::Traverse(t) => self.traverse(&cur, t),
                PStep::Where(pr) => cur.into_iter().filter(|it| self.pred(it, pr)).collect(),
                PStep::Sort(f, d) => self.sort(cur, f, *d),
                PStep::Take(n) => cur.into_iter().take((*n).max(0) as usize).collect(),
                PStep::SetOp(op, sub) => {
                    let right = self.set(sub);
                    self.set_op(cur, *op, right)
                }
                PStep::Closure(es) => self.closure(&cur, es),
                PStep::Mutate(_) => cur,
            };
        }
        cur
    }

    fn task_row(&self, it: &Item, enriched: bool) -> TaskRow {
        let display = match self.field(it, &Field::DisplayName) {
            Some(V::Text(s)) => s,
            _ => String::new(),
        };
        let (status, meta) = match it {
            Item::Task(id) => {
                let t = self.task(*id);
                (
                    Some(t.status.clone()),
                    t.meta.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
                )
            }
            Item::Refl(_) => (None, Vec::new()),
        };
        let int = |f: Field| match self.field(it, &f) {
            Some(V::Int(i)) => Some(i),
            _ => None,
        };
        TaskRow {
            slug: self.slug(it),
            display,
            status,
            obs: if enriched { int(Field::ObsCount) } else { None },
            edges: if enriched {
                int(Field::EdgeCount)
            } else {
                None
            },
            meta: if enriched { meta } else { Vec::new() },
        }
    }

    fn cell(&self, it: &Item, f: &Field) -> Cell {
        match self.field(it, f) {
            None => Cell::Null,
            Some(V::Text(s)) => Cell::Text(s),
            Some(V::Int(i)) if registry::field_type(f) == FieldType::Timestamp => Cell::Ts(i),
            Some(V::Int(i)) => Cell::Int(i),
        }
    }

    /// The final value of a pipeline.
    pub fn output(&self, p: &Pipeline) -> Output {
        *self.g.first_search.borrow_mut() = Self::first_search(p).map(|t| self.search_hits(&t));
        self.shape(self.set(p), p)
    }

    /// The final value of `set` under `p`'s shaper and enrich flag.
    pub fn shape(&self, set: Vec<Item>, p: &Pipeline) -> Output {
        match &p.shaper {
            None => Output::Tasks {
                tasks: set.iter().map(|it| self.task_row(it, p.enriched)).collect(),
                enriched: p.enriched,
            },
            Some(Shaper::Ids) => Output::Ids {
                ids: set.iter().map(|it| self.slug(it)).collect(),
            },
            Some(Shaper::Count) => Output::Count {
                count: set.len() as i64,
            },
            Some(Shaper::Select(fs)) => Output::Projection {
                fields: fs.iter().map(registry::field_name).collect(),
                rows: set
                    .iter()
                    .map(|it| ProjRow {
                        slug: self.slug(it),
                        cells: fs.iter().map(|f| self.cell(it, f)).collect(),
                    })
                    .collect(),
            },
            Some(Shaper::GroupBy(f)) => Output::Groups {
                field: registry::field_name(f),
                groups: group(
                    set.iter()
                        .map(|it| {
                            let key = match self.cell(it, f) {
                                Cell::Null => None,
                                c => Some(c.text()),
                            };
                            (self.task_row(it, false), key)
                        })
                        .collect(),
                ),
            },
        }
    }
}

fn cmp_v(a: &V, b: &V) -> Ordering {
    match (a, b) {
        (V::Int(x), V::Int(y)) => x.cmp(y),
        (V::Text(x), V::Text(y)) => x.cmp(y),
        // SQLite: integers sort before text.
        (V::Int(_), V::Text(_)) => Ordering::Less,
        (V::Text(_), V::Int(_)) => Ordering::Greater,
    }
}

fn clock(n: f64) -> f64 {
    if n > 3_000_000_000.0 {
        n - 2_208_988_800.0
    } else {
        n
    }
}
