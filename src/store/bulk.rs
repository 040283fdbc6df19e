//! The bulk fold (issue 23; docs/store.md "The bulk fold"): a whole refold
//! into an EMPTY projection, with the registers held in memory.
//!
//! The live fold (`fold.rs`) runs SQL per event: an upsert of the task row
//! with `RETURNING` for every task the event names, then the event's own
//! statements, each comparing stamps in SQL. A whole refold (`rebuild`,
//! `verify`, a fresh clone's build, `rebuild --from-logs`) folds every
//! event into empty tables, so it keeps instead, in memory, the slug → id
//! map, each task's row (timestamps, registers, claim, parent pointer,
//! counters), its texts and fold bookkeeping, and the edge, sever,
//! metadata and view registers; it writes each of those rows ONCE at the
//! end. Only observations and handoffs (set unions, the bulk of the rows)
//! are inserted as their events fold, so memory holds no text of theirs.
//!
//! The rules are `fold.rs`'s, register for register (the same
//! [`parse_action`], the same stamp comparisons, the same order of
//! effects), so the projection is the one the live fold gives (the digest
//! tests compare both); the ids are too: a task's id is given at its first
//! mention in fold order (what `INSERT` gave on the emptied table), an
//! observation's by its insert in fold order, and the rows of the other
//! tables are written in the order of their first insert.
//!
//! A task row is inserted as a stub (slug and timestamps) at its first
//! mention, so the observations that name it satisfy their foreign key,
//! and completed by one `UPDATE` at the end.

use std::collections::HashMap;
use std::hash::Hash;

use rusqlite::{Connection, params};

use super::error::StoreError;
use super::event::nfc;
use super::fold::{Action, FoldInput, parse_action};
use super::model::{EdgeClass, EdgeType, Status};
use super::texts::{Field, TaskTexts};

/// An LWW register's stamp `(ts, event_id)`; `None` before any write.
type Stamp = Option<(i64, String)>;

/// A stamp as its two columns (`…_ts`, `…_eid`).
fn split(s: &Stamp) -> (Option<i64>, Option<&str>) {
    match s {
        Some((t, e)) => (Some(*t), Some(e.as_str())),
        None => (None, None),
    }
}

/// True when `(ts, eid)` is newer than `stamp` (an empty register takes
/// any): the `… IS NULL OR ts < ? OR (ts = ? AND eid < ?)` of `fold.rs`.
fn newer(stamp: &Stamp, ts: i64, eid: &str) -> bool {
    match stamp {
        None => true,
        Some((t, e)) => (ts, eid) > (*t, e.as_str()),
    }
}

/// True when `(ts, eid)` is strictly older than a set `stamp` (`fold.rs`'s
/// `parent_ts < ? OR (parent_ts = ? AND parent_eid < ?)` read from the
/// other side: NULL compares false).
fn older_than(stamp: &Stamp, ts: i64, eid: &str) -> bool {
    match stamp {
        None => false,
        Some((t, e)) => (*t, e.as_str()) < (ts, eid),
    }
}

/// Rows keyed by `K` in the order of their first insert, with removal (an
/// edge severed, a view undefined): the order SQLite's rowids would give.
struct Ordered<K, V> {
    index: HashMap<K, usize>,
    rows: Vec<Option<(K, V)>>,
}

impl<K: Hash + Eq + Clone, V> Ordered<K, V> {
    fn new() -> Self {
        Ordered {
            index: HashMap::new(),
            rows: Vec::new(),
        }
    }

    fn get(&self, k: &K) -> Option<&V> {
        let i = *self.index.get(k)?;
        self.rows[i].as_ref().map(|(_, v)| v)
    }

    fn get_mut(&mut self, k: &K) -> Option<&mut V> {
        let i = *self.index.get(k)?;
        self.rows[i].as_mut().map(|(_, v)| v)
    }

    /// Sets `k` to `v`: in place when present, else appended (a new rowid).
    fn put(&mut self, k: K, v: V) {
        if let Some(slot) = self.get_mut(&k) {
            *slot = v;
            return;
        }
        self.index.insert(k.clone(), self.rows.len());
        self.rows.push(Some((k, v)));
    }

    fn remove(&mut self, k: &K) {
        if let Some(i) = self.index.remove(k) {
            self.rows[i] = None;
        }
    }

    fn iter(&self) -> impl Iterator<Item = &(K, V)> {
        self.rows.iter().flatten()
    }
}

/// One task's row, its texts and its `task_fold` bookkeeping.
struct TaskRow {
    created_ts: i64,
    updated_ts: i64,
    status: Status,
    status_st: Stamp,
    description: Option<String>,
    description_st: Stamp,
    project_id: Option<String>,
    parent_task_id: Option<i64>,
    parent_st: Stamp,
    claim_owner: Option<String>,
    claim_until: Option<i64>,
    claim_st: Stamp,
    obs_count: i64,
    /// Whether the `task_fold` row exists (a parent set or a project seen).
    fold_row: bool,
    parent_target_id: Option<i64>,
    project_st: Stamp,
    /// `task_texts`: `None` until a name or a description folded.
    texts: Option<TaskTexts>,
}

impl TaskRow {
    fn new(ts: i64) -> TaskRow {
        TaskRow {
            created_ts: ts,
            updated_ts: ts,
            status: Status::Active,
            status_st: None,
            description: None,
            description_st: None,
            project_id: None,
            parent_task_id: None,
            parent_st: None,
            claim_owner: None,
            claim_until: None,
            claim_st: None,
            obs_count: 0,
            fold_row: false,
            parent_target_id: None,
            project_st: None,
            texts: None,
        }
    }
}

/// A lateral edge's register (`edge_state`).
struct EdgeReg {
    present: bool,
    ts: i64,
    eid: String,
}

/// A metadata key's register (`task_metadata`).
struct MetaReg {
    value: String,
    ts: i64,
    eid: String,
}

/// A view name's register (`view_state`).
struct ViewReg {
    query: Option<String>,
    ts: i64,
    eid: String,
}

/// The whole refold's state: what it keeps in memory until [`BulkFold::finish`].
pub(crate) struct BulkFold {
    ids: HashMap<String, i64>,
    /// Task `id` is `tasks[id - 1]`.
    tasks: Vec<TaskRow>,
    edge_state: Ordered<(i64, i64, EdgeType), EdgeReg>,
    /// The present lateral edges and their `created_ts`.
    edges: Ordered<(i64, i64, EdgeType), i64>,
    sever_state: Ordered<(i64, i64), (i64, String)>,
    metadata: Ordered<(i64, String), MetaReg>,
    view_state: Ordered<String, ViewReg>,
    named_views: Ordered<String, (String, i64, String)>,
}

/// The stub a task's first mention inserts (completed by [`FINISH_TASK`]).
const STUB_TASK: &str =
    "INSERT INTO tasks(id, slug, created_ts, updated_ts) VALUES (?1, ?2, ?3, ?3)";

/// The one write of a task's row at the end.
const FINISH_TASK: &str = "UPDATE tasks SET parent_task_id = ?2, status = ?3, description = ?4,
        created_ts = ?5, updated_ts = ?6, status_ts = ?7, description_ts = ?8, project_id = ?9,
        status_eid = ?10, description_eid = ?11, parent_ts = ?12, parent_eid = ?13,
        obs_count = ?14, child_count = ?15, lateral_out = ?16, lateral_in = ?17,
        claim_owner = ?18, claim_until = ?19, claim_ts = ?20, claim_eid = ?21
    WHERE id = ?1";

impl BulkFold {
    /// An empty fold. The projection tables on the connection it writes to
    /// must be empty (`refold::CLEAR_PROJECTION`).
    pub(crate) fn new() -> BulkFold {
        BulkFold {
            ids: HashMap::new(),
            tasks: Vec::new(),
            edge_state: Ordered::new(),
            edges: Ordered::new(),
            sever_state: Ordered::new(),
            metadata: Ordered::new(),
            view_state: Ordered::new(),
            named_views: Ordered::new(),
        }
    }

    fn task(&mut self, id: i64) -> &mut TaskRow {
        // Ids come from `ensure`, so the index is in range.
        let i = usize::try_from(id - 1).unwrap_or(0);
        &mut self.tasks[i]
    }

    /// `fold.rs`'s `ensure_task`: the id of `slug`, its row made (a stub
    /// inserted) at the first mention; widens its timestamps to `ts`.
    fn ensure(&mut self, conn: &Connection, slug: &str, ts: i64) -> Result<i64, StoreError> {
        if let Some(&id) = self.ids.get(slug) {
            let t = self.task(id);
            t.created_ts = t.created_ts.min(ts);
            t.updated_ts = t.updated_ts.max(ts);
            return Ok(id);
        }
        let id = i64::try_from(self.tasks.len()).unwrap_or(i64::MAX - 1) + 1;
        conn.prepare_cached(STUB_TASK)?
            .execute(params![id, slug, ts])?;
        self.ids.insert(slug.to_string(), id);
        self.tasks.push(TaskRow::new(ts));
        Ok(id)
    }

    /// Folds one event (`fold.rs`'s `fold`, register for register),
    /// inserting its observation or handoff rows on `conn` at once.
    pub(crate) fn fold(&mut self, conn: &Connection, ev: &FoldInput<'_>) -> Result<(), StoreError> {
        let action = match parse_action(ev.event_type, ev.data) {
            Ok(a) => a,
            Err(_) => return Ok(()),
        };
        if action == Action::Unknown {
            return Ok(());
        }
        let (ts, eid) = (ev.ts, ev.event_id);
        let subject = self.ensure(conn, ev.task_id, ts)?;
        match action {
            Action::Unknown => {}
            Action::Create {
                description,
                project_id,
                name,
            } => {
                self.set_status(subject, Status::Active, ts, eid);
                if let Some(n) = name {
                    self.set_text(subject, Field::Name, &n, ts, eid);
                }
                if let Some(d) = description {
                    self.set_description(subject, d, ts, eid);
                }
                if let Some(p) = project_id {
                    let t = self.task(subject);
                    t.fold_row = true;
                    if newer(&t.project_st, ts, eid) {
                        t.project_st = Some((ts, eid.to_string()));
                        t.project_id = Some(p);
                    }
                }
            }
            Action::Status(s) => {
                self.set_status(subject, s, ts, eid);
                if matches!(s, Status::Completed | Status::Abandoned) {
                    self.set_claim(subject, None, ts, eid);
                }
            }
            Action::Description(d) => self.set_description(subject, d, ts, eid),
            Action::Connect { other, edge, fork } => {
                let other_id = self.ensure(conn, &other, ts)?;
                if other_id != subject {
                    match edge.class() {
                        EdgeClass::Structural => {
                            let (child, parent) = if fork {
                                (other_id, subject)
                            } else {
                                (subject, other_id)
                            };
                            self.set_parent(child, parent, ts, eid);
                        }
                        EdgeClass::Lateral => self.set_edge(subject, other_id, edge, true, ts, eid),
                    }
                }
            }
            Action::Sever { other, edge } => {
                let other_id = self.ensure(conn, &other, ts)?;
                if other_id != subject {
                    match edge.class() {
                        EdgeClass::Structural => self.sever_parent(subject, other_id, ts, eid),
                        EdgeClass::Lateral => {
                            self.set_edge(subject, other_id, edge, false, ts, eid);
                        }
                    }
                }
            }
            Action::Metadata { key, value } => {
                let k = (subject, key);
                let wins = self
                    .metadata
                    .get(&k)
                    .is_none_or(|m| (ts, eid) > (m.ts, m.eid.as_str()));
                if wins {
                    self.metadata.put(
                        k,
                        MetaReg {
                            value,
                            ts,
                            eid: eid.to_string(),
                        },
                    );
                }
            }
            Action::Observation(text) => {
                self.add_observation(conn, subject, &nfc(&text), ts, eid)?
            }
            Action::Handoff { summary, path } => {
                conn.prepare_cached(
                    "INSERT OR IGNORE INTO handoffs(task_id, event_id, path, summary, ts)
                     VALUES (?1, ?2, ?3, ?4, ?5)",
                )?
                .execute(params![subject, eid, path, summary, ts])?;
                let text = format!("Handoff: {} → {}", nfc(&summary), path);
                self.add_observation(conn, subject, &text, ts, eid)?;
            }
            Action::ViewDefine { name, query } => self.set_view(name, Some(query), ts, eid),
            Action::ViewUndefine { name } => self.set_view(name, None, ts, eid),
            Action::Claim { owner, until } => {
                self.set_claim(subject, Some((owner, until)), ts, eid);
            }
            Action::Release => self.set_claim(subject, None, ts, eid),
        }
        Ok(())
    }

    fn set_status(&mut self, task: i64, status: Status, ts: i64, eid: &str) {
        let t = self.task(task);
        if newer(&t.status_st, ts, eid) {
            t.status = status;
            t.status_st = Some((ts, eid.to_string()));
        }
    }

    fn set_claim(&mut self, task: i64, claim: Option<(String, i64)>, ts: i64, eid: &str) {
        let t = self.task(task);
        if newer(&t.claim_st, ts, eid) {
            let (owner, until) = match claim {
                Some((o, u)) => (Some(o), Some(u)),
                None => (None, None),
            };
            t.claim_owner = owner;
            t.claim_until = until;
            t.claim_st = Some((ts, eid.to_string()));
        }
    }

    fn set_description(&mut self, task: i64, text: String, ts: i64, eid: &str) {
        self.set_text(task, Field::Description, &text, ts, eid);
        let t = self.task(task);
        if newer(&t.description_st, ts, eid) {
            t.description = Some(text);
            t.description_st = Some((ts, eid.to_string()));
        }
    }

    fn set_text(&mut self, task: i64, field: Field, text: &str, ts: i64, eid: &str) {
        self.task(task)
            .texts
            .get_or_insert_with(TaskTexts::default)
            .apply(field, text, ts, eid);
    }

    /// `fold.rs`'s `set_parent`.
    fn set_parent(&mut self, child: i64, parent: i64, ts: i64, eid: &str) {
        let severed = {
            let (lo, hi) = if child < parent {
                (child, parent)
            } else {
                (parent, child)
            };
            self.sever_state
                .get(&(lo, hi))
                .is_some_and(|(t, e)| (*t, e.as_str()) > (ts, eid))
        };
        let t = self.task(child);
        t.fold_row = true;
        if !newer(&t.parent_st, ts, eid) {
            return;
        }
        t.parent_st = Some((ts, eid.to_string()));
        t.parent_target_id = Some(parent);
        t.parent_task_id = if severed { None } else { Some(parent) };
    }

    /// `fold.rs`'s `sever_parent`.
    fn sever_parent(&mut self, a: i64, b: i64, ts: i64, eid: &str) {
        let (lo, hi) = if a < b { (a, b) } else { (b, a) };
        let wins = self
            .sever_state
            .get(&(lo, hi))
            .is_none_or(|(t, e)| (ts, eid) > (*t, e.as_str()));
        if wins {
            self.sever_state.put((lo, hi), (ts, eid.to_string()));
        }
        for (side, other) in [(a, b), (b, a)] {
            let t = self.task(side);
            if t.fold_row && t.parent_target_id == Some(other) && older_than(&t.parent_st, ts, eid)
            {
                t.parent_task_id = None;
            }
        }
    }

    /// `fold.rs`'s `set_edge`.
    fn set_edge(&mut self, src: i64, dst: i64, edge: EdgeType, present: bool, ts: i64, eid: &str) {
        let k = (src, dst, edge);
        let wins = self
            .edge_state
            .get(&k)
            .is_none_or(|s| (ts, eid) > (s.ts, s.eid.as_str()));
        if !wins {
            return;
        }
        self.edge_state.put(
            k,
            EdgeReg {
                present,
                ts,
                eid: eid.to_string(),
            },
        );
        if present {
            self.edges.put(k, ts);
        } else {
            self.edges.remove(&k);
        }
    }

    /// `fold.rs`'s `set_view`.
    fn set_view(&mut self, name: String, query: Option<String>, ts: i64, eid: &str) {
        let wins = self
            .view_state
            .get(&name)
            .is_none_or(|v| (ts, eid) > (v.ts, v.eid.as_str()));
        if !wins {
            return;
        }
        match &query {
            Some(q) => self
                .named_views
                .put(name.clone(), (q.clone(), ts, eid.to_string())),
            None => self.named_views.remove(&name),
        }
        self.view_state.put(
            name,
            ViewReg {
                query,
                ts,
                eid: eid.to_string(),
            },
        );
    }

    fn add_observation(
        &mut self,
        conn: &Connection,
        task: i64,
        text: &str,
        ts: i64,
        eid: &str,
    ) -> Result<(), StoreError> {
        let n = conn
            .prepare_cached(
                "INSERT OR IGNORE INTO observations(event_id, task_id, text, ts, parts)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(params![
                eid,
                task,
                text,
                ts,
                super::pg::search::parts_text(text)
            ])?;
        self.task(task).obs_count += i64::try_from(n).unwrap_or(0);
        Ok(())
    }

    /// Writes what the fold kept in memory on `conn`: each task row once
    /// (with its counter columns, docs/store.md "Counter columns"), then
    /// `task_texts`, `task_fold`, `edge_state`, `edges`, `sever_state`,
    /// `task_metadata`, `view_state` and `named_views`, each in the order
    /// of its rows' first insert.
    pub(crate) fn finish(self, conn: &Connection) -> Result<(), StoreError> {
        let n = self.tasks.len();
        let mut child_count = vec![0i64; n];
        let mut lateral_out = vec![0i64; n];
        let mut lateral_in = vec![0i64; n];
        let slot = |id: i64| usize::try_from(id - 1).ok().filter(|&i| i < n);
        for t in &self.tasks {
            if let Some(i) = t.parent_task_id.and_then(slot) {
                child_count[i] += 1;
            }
        }
        for ((src, dst, _), _) in self.edges.iter() {
            if let Some(i) = slot(*src) {
                lateral_out[i] += 1;
            }
            if let Some(i) = slot(*dst) {
                lateral_in[i] += 1;
            }
        }
        let mut row = conn.prepare_cached(FINISH_TASK)?;
        for (i, t) in self.tasks.iter().enumerate() {
            let (status_ts, status_eid) = split(&t.status_st);
            let (description_ts, description_eid) = split(&t.description_st);
            let (parent_ts, parent_eid) = split(&t.parent_st);
            let (claim_ts, claim_eid) = split(&t.claim_st);
            row.execute(params![
                i64::try_from(i).unwrap_or(i64::MAX - 1) + 1,
                t.parent_task_id,
                t.status.as_str(),
                t.description,
                t.created_ts,
                t.updated_ts,
                status_ts,
                description_ts,
                t.project_id,
                status_eid,
                description_eid,
                parent_ts,
                parent_eid,
                t.obs_count,
                child_count[i],
                lateral_out[i],
                lateral_in[i],
                t.claim_owner,
                t.claim_until,
                claim_ts,
                claim_eid,
            ])?;
        }
        drop(row);
        let mut texts = conn.prepare_cached(
            "INSERT INTO task_texts(task_id, name, name_ts, name_eid, description, description_ts,
                                    description_eid, parts)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        )?;
        let mut fold = conn.prepare_cached(
            "INSERT INTO task_fold(task_id, parent_target_id, project_ts, project_eid)
             VALUES (?1, ?2, ?3, ?4)",
        )?;
        for (i, t) in self.tasks.iter().enumerate() {
            let id = i64::try_from(i).unwrap_or(i64::MAX - 1) + 1;
            if let Some(x) = &t.texts {
                let (nm, d) = (x.name.as_ref(), x.description.as_ref());
                texts.execute(params![
                    id,
                    nm.map(|s| &s.text),
                    nm.map(|s| s.ts),
                    nm.map(|s| &s.eid),
                    d.map(|s| &s.text),
                    d.map(|s| s.ts),
                    d.map(|s| &s.eid),
                    x.parts()
                ])?;
            }
            if t.fold_row {
                let (project_ts, project_eid) = split(&t.project_st);
                fold.execute(params![id, t.parent_target_id, project_ts, project_eid])?;
            }
        }
        drop((texts, fold));
        let mut stmt = conn.prepare_cached(
            "INSERT INTO edge_state(src_id, dst_id, type, tag, present, ts, eid)
             VALUES (?1, ?2, ?3, '', ?4, ?5, ?6)",
        )?;
        for ((src, dst, edge), s) in self.edge_state.iter() {
            stmt.execute(params![src, dst, edge.as_str(), s.present, s.ts, s.eid])?;
        }
        let mut stmt = conn.prepare_cached(
            "INSERT INTO edges(src_id, dst_id, type, tag, created_ts) VALUES (?1, ?2, ?3, '', ?4)",
        )?;
        for ((src, dst, edge), created) in self.edges.iter() {
            stmt.execute(params![src, dst, edge.as_str(), created])?;
        }
        let mut stmt = conn.prepare_cached(
            "INSERT INTO sever_state(lo_id, hi_id, ts, eid) VALUES (?1, ?2, ?3, ?4)",
        )?;
        for ((lo, hi), (ts, eid)) in self.sever_state.iter() {
            stmt.execute(params![lo, hi, ts, eid])?;
        }
        let mut stmt = conn.prepare_cached(
            "INSERT INTO task_metadata(task_id, key, value, ts, eid) VALUES (?1, ?2, ?3, ?4, ?5)",
        )?;
        for ((task, key), m) in self.metadata.iter() {
            stmt.execute(params![task, key, m.value, m.ts, m.eid])?;
        }
        let mut stmt = conn.prepare_cached(
            "INSERT INTO view_state(name, query, present, ts, eid) VALUES (?1, ?2, ?3, ?4, ?5)",
        )?;
        for (name, v) in self.view_state.iter() {
            stmt.execute(params![name, v.query, v.query.is_some(), v.ts, v.eid])?;
        }
        let mut stmt = conn.prepare_cached(
            "INSERT INTO named_views(name, query, ts, eid) VALUES (?1, ?2, ?3, ?4)",
        )?;
        for (name, (query, ts, eid)) in self.named_views.iter() {
            stmt.execute(params![name, query, ts, eid])?;
        }
        Ok(())
    }
}
