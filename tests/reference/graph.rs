//! The reference evaluator's data: the graph loaded from a store's
//! projection (plain SELECTs into Rust values), and the reflection rows built
//! from the registry with the planner's ids.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use cairn::store::model::EdgeType;
use cairn::tq::ast::{FieldType, Prop};
use cairn::tq::plan::ReflKind;
use cairn::tq::registry;

/// A task as the projection holds it.
#[derive(Debug, Clone)]
pub struct Task {
    pub id: i64,
    pub slug: String,
    pub depot: Option<String>,
    pub parent: Option<i64>,
    pub status: String,
    pub description: Option<String>,
    pub created_ts: i64,
    pub updated_ts: i64,
    pub status_ts: Option<i64>,
    pub meta: BTreeMap<String, String>,
    pub obs: i64,
    /// The texts of the task's observations (for `(search …)`).
    pub obs_texts: Vec<String>,
    /// The claim register as folded: (owner, until), `None` when empty.
    pub claim: Option<(String, i64)>,
}

/// A reflection row.
#[derive(Debug, Clone)]
pub struct Refl {
    pub id: i64,
    pub kind: ReflKind,
    pub slug: String,
    pub props: HashMap<Prop, String>,
}

/// The whole graph.
#[derive(Debug, Clone, Default)]
pub struct Graph {
    pub tasks: BTreeMap<i64, Task>,
    /// Lateral edges (src, dst, type) — one per projection row.
    pub edges: Vec<(i64, i64, EdgeType)>,
    /// Each metadata key's first `task_metadata` rowid (its reflection id).
    pub meta_rowid: BTreeMap<String, i64>,
    /// The rowid the next new `task_metadata` row gets.
    pub next_meta_rowid: i64,
    /// User views (name, query, rowid).
    pub user_views: Vec<(String, String, i64)>,
    /// The clock reading claims are judged live against
    /// ([`super::arbitrary::REF_NOW`], the tests' catalog clock).
    pub now: i64,
    /// Set by the mutation reference when a structural link would close a
    /// parent cycle: the engine refuses the whole query then (docs/store.md
    /// "Phase-of cycles").
    pub cycle_refused: bool,
    /// The hits of the evaluated query's first `(search …)` (what
    /// `:relevance` reads), set by `Eval::output`.
    pub first_search: std::cell::RefCell<Option<std::collections::BTreeSet<i64>>>,
}

/// A scalar value.
#[derive(Debug, Clone, PartialEq)]
pub enum V {
    Text(String),
    Int(i64),
}

impl Graph {
    /// Reads the projection of `conn` into memory.
    pub fn load(conn: &rusqlite::Connection) -> Graph {
        let mut g = Graph {
            now: super::arbitrary::REF_NOW,
            ..Graph::default()
        };
        let mut st = conn
            .prepare("SELECT id, slug, depot, parent_task_id, status, description, created_ts, updated_ts, status_ts, claim_owner, claim_until FROM tasks")
            .unwrap();
        let rows = st
            .query_map([], |r| {
                Ok(Task {
                    id: r.get(0)?,
                    slug: r.get(1)?,
                    depot: r.get(2)?,
                    parent: r.get(3)?,
                    status: r.get(4)?,
                    description: r.get(5)?,
                    created_ts: r.get(6)?,
                    updated_ts: r.get(7)?,
                    status_ts: r.get(8)?,
                    meta: BTreeMap::new(),
                    obs: 0,
                    obs_texts: Vec::new(),
                    claim: match (r.get::<_, Option<String>>(9)?, r.get::<_, Option<i64>>(10)?) {
                        (Some(o), Some(u)) => Some((o, u)),
                        _ => None,
                    },
                })
            })
            .unwrap();
        for t in rows {
            let t = t.unwrap();
            g.tasks.insert(t.id, t);
        }
        let mut st = conn
            .prepare("SELECT src_id, dst_id, type FROM edges")
            .unwrap();
        let rows = st
            .query_map([], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, String>(2)?,
                ))
            })
            .unwrap();
        for r in rows {
            let (s, d, ty) = r.unwrap();
            g.edges.push((s, d, EdgeType::parse(&ty).unwrap()));
        }
        let mut st = conn
            .prepare("SELECT task_id, key, value, rowid FROM task_metadata")
            .unwrap();
        let rows = st
            .query_map([], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, i64>(3)?,
                ))
            })
            .unwrap();
        g.next_meta_rowid = 1;
        for r in rows {
            let (id, k, v, rowid) = r.unwrap();
            let first = g.meta_rowid.entry(k.clone()).or_insert(rowid);
            *first = (*first).min(rowid);
            g.next_meta_rowid = g.next_meta_rowid.max(rowid + 1);
            g.tasks.get_mut(&id).unwrap().meta.insert(k, v);
        }
        let mut st = conn
            .prepare("SELECT task_id, text FROM observations")
            .unwrap();
        let rows = st
            .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))
            .unwrap();
        for r in rows {
            let (id, text) = r.unwrap();
            let t = g.tasks.get_mut(&id).unwrap();
            t.obs += 1;
            t.obs_texts.push(text);
        }
        let mut st = conn
            .prepare("SELECT name, query, rowid FROM named_views")
            .unwrap();
        let rows = st
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap();
        for r in rows {
            g.user_views.push(r.unwrap());
        }
        g
    }

    /// The reflection rows of kind `k`, with the planner's ids.
    pub fn refl(&self, k: ReflKind) -> Vec<Refl> {
        let mut out = Vec::new();
        let mk = |id: i64, slug: &str, props: Vec<(Prop, Option<&str>)>| Refl {
            id,
            kind: k,
            slug: slug.to_string(),
            props: props
                .into_iter()
                .filter_map(|(p, v)| v.map(|v| (p, v.to_string())))
                .collect(),
        };
        match k {
            ReflKind::Schema => {
                for (i, f) in registry::forms().iter().enumerate() {
                    let sig = f.signature_text();
                    out.push(mk(
                        -(1 + i as i64),
                        f.name,
                        vec![
                            (Prop::Category, Some(f.category.as_str())),
                            (Prop::Kind, f.kind.map(|k| k.as_str())),
                            (Prop::Doc, Some(f.doc)),
                            (Prop::Signature, (!sig.is_empty()).then_some(sig.as_str())),
                        ],
                    ));
                }
            }
            ReflKind::Fields => {
                let mut declared = BTreeSet::new();
                for (i, f) in registry::fields().iter().enumerate() {
                    declared.insert(f.name.to_string());
                    let (ty, unit, epoch) = match f.ty {
                        FieldType::Text => ("text", None, None),
                        FieldType::Number => ("number", None, None),
                        FieldType::Timestamp => (
                            "timestamp",
                            Some(registry::TS_UNIT),
                            Some(registry::TS_EPOCH),
                        ),
                    };
                    out.push(mk(
                        -(10_001 + i as i64),
                        f.name,
                        vec![
                            (Prop::Doc, Some(f.doc)),
                            (Prop::Type, Some(ty)),
                            (Prop::Origin, Some("declared")),
                            (Prop::Unit, unit),
                            (Prop::Epoch, epoch),
                        ],
                    ));
                }
                let keys: BTreeSet<&String> = self
                    .tasks
                    .values()
                    .flat_map(|t| t.meta.keys())
                    .filter(|k| !declared.contains(*k))
                    .collect();
                for key in keys {
                    out.push(mk(
                        -(4_000_000_000 + self.meta_rowid[key]),
                        key,
                        vec![(Prop::Type, Some("text")), (Prop::Origin, Some("metadata"))],
                    ));
                }
            }
            ReflKind::Edges => {
                for (i, e) in registry::edges().iter().enumerate() {
                    out.push(mk(
                        -(20_001 + i as i64),
                        e.edge.as_str(),
                        vec![
                            (Prop::Doc, Some(e.doc)),
                            (Prop::Class, Some(e.edge.class().as_str())),
                        ],
                    ));
                }
            }
            ReflKind::Views => {
                for (i, v) in registry::builtin_views().iter().enumerate() {
                    if self.user_views.iter().any(|(n, _, _)| n == v.name) {
                        continue;
                    }
                    out.push(mk(
                        -(30_001 + i as i64),
                        v.name,
                        vec![
                            (Prop::Doc, Some(v.doc)),
                            (Prop::Origin, Some("builtin")),
                            (Prop::Source, Some(v.source)),
                        ],
                    ));
                }
                for (name, q, rowid) in &self.user_views {
                    out.push(mk(
                        -(2_000_000_000 + rowid),
                        name,
                        vec![
                            (Prop::Origin, Some("user")),
                            (Prop::Source, Some(q.as_str())),
                        ],
                    ));
                }
            }
        }
        out
    }
}
