//! The reducer on PostgreSQL: one event → the projection, the same rules as
//! SQLite's (`store/fold.rs`, whose module doc states them), written for
//! this engine (spec/team.md: "the store's write path is written per engine
//! in Rust"). The counter columns, kept by triggers on SQLite, are kept here
//! by the fold itself, next to the change that moves them.

use std::collections::HashMap;

use postgres::types::ToSql;
use postgres::{Row, Statement, Transaction};

use super::connect::pg_err;
use super::handle::Stmts;
use super::search::{tsvector_literal, tsvector_of};
use crate::store::error::StoreError;
use crate::store::event::nfc;
use crate::store::fold::{Action, FoldInput, parse_action};
use crate::store::model::{EdgeClass, EdgeType, Status};
use crate::store::texts::{Field, Stamped, TaskTexts};

/// An LWW stamp `(ts, event_id)`.
#[derive(Debug, Clone, Copy)]
struct Stamp<'a> {
    ts: i64,
    eid: &'a str,
}

/// What one transaction's fold has not written to `tasks` yet: per task,
/// the widened `created_ts`/`updated_ts` and the counter deltas. Folding
/// many events of one task in one transaction (a push batch) would
/// otherwise update its row once per event, and PostgreSQL keeps every
/// version of a row updated in one transaction. [`Cx::flush`] writes them,
/// one UPDATE per task, before anything reads `tasks` again.
///
/// Observations wait here too (event id, task, text, ts) and are inserted
/// in ONE statement at the flush, their counts added to `obs_count` from
/// what that statement inserted: a push batch of mostly observations costs
/// a handful of round trips instead of one per event.
#[derive(Debug, Default)]
struct Pending {
    by_slug: HashMap<String, i64>,
    tasks: HashMap<i64, TaskAcc>,
    obs: Vec<(String, i64, String, i64)>,
}

#[derive(Debug, Default, Clone, Copy)]
struct TaskAcc {
    stamps: Option<(i64, i64)>,
    obs: i64,
    child: i64,
    lateral_out: i64,
    lateral_in: i64,
}

/// The fold's context: the transaction, the statement cache and what is
/// pending for `tasks`.
pub(crate) struct Cx<'t, 'c> {
    tx: &'t mut Transaction<'c>,
    stmts: &'t mut Stmts,
    pending: Pending,
}

type Params<'a> = &'a [&'a (dyn ToSql + Sync)];

impl<'t, 'c> Cx<'t, 'c> {
    /// A context over `tx` using the cache `stmts`.
    pub(crate) fn new(tx: &'t mut Transaction<'c>, stmts: &'t mut Stmts) -> Cx<'t, 'c> {
        Cx {
            tx,
            stmts,
            pending: Pending::default(),
        }
    }

    /// The transaction (call [`Cx::flush`] first before reading `tasks`).
    pub(crate) fn tx(&mut self) -> &mut Transaction<'c> {
        self.tx
    }

    fn stmt(&mut self, sql: &'static str) -> Result<Statement, postgres::Error> {
        if let Some(s) = self.stmts.fixed.get(sql) {
            return Ok(s.clone());
        }
        let s = self.tx.prepare(sql)?;
        self.stmts.fixed.insert(sql, s.clone());
        Ok(s)
    }

    /// Runs `sql` (a statement built at run time, e.g. a write query's
    /// target set) prepared once per connection; its rows.
    pub(crate) fn query_cached(
        &mut self,
        sql: &str,
        params: Params<'_>,
    ) -> Result<Vec<Row>, postgres::Error> {
        let st = match self.stmts.dynamic.get(sql) {
            Some(s) => s.clone(),
            None => {
                let s = self.tx.prepare(sql)?;
                if self.stmts.dynamic.len() >= super::handle::STATEMENT_CACHE {
                    self.stmts.dynamic.clear();
                }
                self.stmts.dynamic.insert(sql.to_string(), s.clone());
                s
            }
        };
        self.tx.query(&st, params)
    }

    /// Runs a cached statement; the affected row count.
    pub(crate) fn exec(
        &mut self,
        sql: &'static str,
        params: Params<'_>,
    ) -> Result<u64, postgres::Error> {
        let st = self.stmt(sql)?;
        self.tx.execute(&st, params)
    }

    /// Runs a cached statement returning at most one row.
    pub(crate) fn opt(
        &mut self,
        sql: &'static str,
        params: Params<'_>,
    ) -> Result<Option<Row>, postgres::Error> {
        let st = self.stmt(sql)?;
        self.tx.query_opt(&st, params)
    }

    /// Runs a cached statement returning exactly one row.
    pub(crate) fn one(
        &mut self,
        sql: &'static str,
        params: Params<'_>,
    ) -> Result<Row, postgres::Error> {
        let st = self.stmt(sql)?;
        self.tx.query_one(&st, params)
    }

    fn acc(&mut self, id: i64) -> &mut TaskAcc {
        self.pending.tasks.entry(id).or_default()
    }

    /// Writes what is pending: the observations (one INSERT, in fold
    /// order), then for `tasks` the widened stamps and counter deltas (one
    /// UPDATE of every touched task, in id order).
    pub(crate) fn flush(&mut self) -> Result<(), postgres::Error> {
        if !self.pending.obs.is_empty() {
            let obs = std::mem::take(&mut self.pending.obs);
            let mut eids = Vec::with_capacity(obs.len());
            let mut tasks = Vec::with_capacity(obs.len());
            let mut texts = Vec::with_capacity(obs.len());
            let mut ts = Vec::with_capacity(obs.len());
            let mut tsvs = Vec::with_capacity(obs.len());
            for (e, t, x, s) in obs {
                eids.push(e);
                tasks.push(t);
                // cairn's own tokens (`pg/search.rs`), the search index.
                tsvs.push(tsvector_literal(&x));
                texts.push(x);
                ts.push(s);
            }
            let st = self.stmt(
                "INSERT INTO observations(event_id, task_id, text, ts, tsv)
                 SELECT u.e, u.t, u.x, u.s, u.v::tsvector
                 FROM UNNEST($1::text[], $2::bigint[], $3::text[], $4::bigint[], $5::text[])
                      WITH ORDINALITY AS u(e, t, x, s, v, n)
                 ORDER BY u.n
                 ON CONFLICT DO NOTHING RETURNING task_id",
            )?;
            for r in self.tx.query(&st, &[&eids, &tasks, &texts, &ts, &tsvs])? {
                self.acc(r.get(0)).obs += 1;
            }
        }
        let mut tasks: Vec<(i64, TaskAcc)> = self.pending.tasks.drain().collect();
        self.pending.by_slug.clear();
        if tasks.is_empty() {
            return Ok(());
        }
        tasks.sort_by_key(|(id, _)| *id);
        let n = tasks.len();
        let (mut ids, mut lo, mut hi) = (
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
        );
        let (mut obs, mut child, mut out, mut inn) = (
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
        );
        for (id, a) in tasks {
            ids.push(id);
            lo.push(a.stamps.map(|s| s.0));
            hi.push(a.stamps.map(|s| s.1));
            obs.push(a.obs);
            child.push(a.child);
            out.push(a.lateral_out);
            inn.push(a.lateral_in);
        }
        let st = self.stmt(
            "UPDATE tasks SET created_ts = LEAST(tasks.created_ts, u.lo), updated_ts = GREATEST(tasks.updated_ts, u.hi),
                obs_count = tasks.obs_count + u.o, child_count = tasks.child_count + u.c,
                lateral_out = tasks.lateral_out + u.lo2, lateral_in = tasks.lateral_in + u.li
             FROM UNNEST($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[])
                  AS u(id, lo, hi, o, c, lo2, li)
             WHERE tasks.id = u.id",
        )?;
        self.tx
            .execute(&st, &[&ids, &lo, &hi, &obs, &child, &out, &inn])?;
        Ok(())
    }
}

type Tx<'a, 't, 'c> = &'a mut Cx<'t, 'c>;

fn exec(cx: Tx<'_, '_, '_>, sql: &'static str, params: Params<'_>) -> Result<u64, StoreError> {
    cx.exec(sql, params).map_err(pg_err)
}

/// Folds one event into the projection inside `tx`. A malformed known event
/// folds to nothing, like an unknown one. Errors: [`StoreError::Postgres`].
pub(crate) fn fold(tx: Tx<'_, '_, '_>, ev: &FoldInput<'_>) -> Result<(), StoreError> {
    let action = match parse_action(ev.event_type, ev.data) {
        Ok(a) => a,
        Err(_) => return Ok(()),
    };
    if action == Action::Unknown {
        return Ok(());
    }
    let st = Stamp {
        ts: ev.ts,
        eid: ev.event_id,
    };
    let subject = ensure_task(tx, ev.task_id, ev.ts)?;
    match action {
        Action::Unknown => {}
        Action::Create {
            description,
            project_id,
            name,
        } => {
            set_status(tx, subject, Status::Active, st)?;
            if let Some(n) = name {
                set_text(tx, subject, Field::Name, &n, st)?;
            }
            if let Some(d) = description {
                set_description(tx, subject, &d, st)?;
            }
            if let Some(p) = project_id {
                set_project(tx, subject, &p, st)?;
            }
        }
        Action::Status(s) => {
            set_status(tx, subject, s, st)?;
            if matches!(s, Status::Completed | Status::Abandoned) {
                set_claim(tx, subject, None, st)?;
            }
        }
        Action::Description(d) => set_description(tx, subject, &d, st)?,
        Action::Connect { other, edge, fork } => {
            let other_id = ensure_task(tx, &other, ev.ts)?;
            if other_id != subject {
                match edge.class() {
                    EdgeClass::Structural => {
                        let (child, parent) = if fork {
                            (other_id, subject)
                        } else {
                            (subject, other_id)
                        };
                        set_parent(tx, child, parent, st)?;
                    }
                    EdgeClass::Lateral => set_edge(tx, subject, other_id, edge, true, st)?,
                }
            }
        }
        Action::Sever { other, edge } => {
            let other_id = ensure_task(tx, &other, ev.ts)?;
            if other_id != subject {
                match edge.class() {
                    EdgeClass::Structural => sever_parent(tx, subject, other_id, st)?,
                    EdgeClass::Lateral => set_edge(tx, subject, other_id, edge, false, st)?,
                }
            }
        }
        Action::Metadata { key, value } => {
            exec(
                tx,
                "INSERT INTO task_metadata(task_id, key, value, ts, eid) VALUES ($1, $2, $3, $4, $5)
                 ON CONFLICT (task_id, key) DO UPDATE SET value = excluded.value, ts = excluded.ts, eid = excluded.eid
                 WHERE excluded.ts > task_metadata.ts
                    OR (excluded.ts = task_metadata.ts AND excluded.eid > task_metadata.eid)",
                &[&subject, &key, &value, &st.ts, &st.eid],
            )?;
        }
        Action::Observation(text) => add_observation(tx, subject, &nfc(&text), st)?,
        Action::Handoff { summary, path } => {
            exec(
                tx,
                "INSERT INTO handoffs(task_id, event_id, path, summary, ts) VALUES ($1, $2, $3, $4, $5)
                 ON CONFLICT DO NOTHING",
                &[&subject, &st.eid, &path, &summary, &st.ts],
            )?;
            let text = format!("Handoff: {} → {}", nfc(&summary), path);
            add_observation(tx, subject, &text, st)?;
        }
        Action::ViewDefine { name, query } => set_view(tx, &name, Some(&query), st)?,
        Action::ViewUndefine { name } => set_view(tx, &name, None, st)?,
        Action::Claim { owner, until } => set_claim(tx, subject, Some((&owner, until)), st)?,
        Action::Release => set_claim(tx, subject, None, st)?,
    }
    Ok(())
}

fn set_claim(
    tx: Tx<'_, '_, '_>,
    task: i64,
    claim: Option<(&str, i64)>,
    st: Stamp<'_>,
) -> Result<(), StoreError> {
    let (owner, until) = match claim {
        Some((o, u)) => (Some(o), Some(u)),
        None => (None, None),
    };
    exec(
        tx,
        "UPDATE tasks SET claim_owner = $2, claim_until = $3, claim_ts = $4, claim_eid = $5
         WHERE id = $1 AND (claim_ts IS NULL OR claim_ts < $4 OR (claim_ts = $4 AND claim_eid < $5))",
        &[&task, &owner, &until, &st.ts, &st.eid],
    )?;
    Ok(())
}

/// The task row of `slug`, inserted when missing; its `created_ts` /
/// `updated_ts` widen to `ts` at the next [`Cx::flush`].
fn ensure_task(tx: Tx<'_, '_, '_>, slug: &str, ts: i64) -> Result<i64, StoreError> {
    let id = match tx.pending.by_slug.get(slug) {
        Some(id) => *id,
        None => {
            let row = tx
                .one(
                    "WITH ins AS (
                         INSERT INTO tasks(slug, created_ts, updated_ts) VALUES ($1, $2, $2)
                         ON CONFLICT (slug) DO NOTHING RETURNING id)
                     SELECT id FROM ins UNION ALL SELECT id FROM tasks WHERE slug = $1 LIMIT 1",
                    &[&slug, &ts],
                )
                .map_err(pg_err)?;
            let id: i64 = row.get(0);
            tx.pending.by_slug.insert(slug.to_string(), id);
            id
        }
    };
    let acc = tx.acc(id);
    acc.stamps = Some(match acc.stamps {
        Some((lo, hi)) => (lo.min(ts), hi.max(ts)),
        None => (ts, ts),
    });
    Ok(id)
}

fn set_status(
    tx: Tx<'_, '_, '_>,
    task: i64,
    status: Status,
    st: Stamp<'_>,
) -> Result<(), StoreError> {
    exec(
        tx,
        "UPDATE tasks SET status = $2, status_ts = $3, status_eid = $4
         WHERE id = $1 AND (status_ts IS NULL OR status_ts < $3 OR (status_ts = $3 AND status_eid < $4))",
        &[&task, &status.as_str(), &st.ts, &st.eid],
    )?;
    Ok(())
}

fn set_description(
    tx: Tx<'_, '_, '_>,
    task: i64,
    text: &str,
    st: Stamp<'_>,
) -> Result<(), StoreError> {
    exec(
        tx,
        "UPDATE tasks SET description = $2, description_ts = $3, description_eid = $4
         WHERE id = $1 AND (description_ts IS NULL OR description_ts < $3
                            OR (description_ts = $3 AND description_eid < $4))",
        &[&task, &text, &st.ts, &st.eid],
    )?;
    set_text(tx, task, Field::Description, text, st)
}

/// Folds `text` into `task`'s `field` register in `task_texts`
/// (`store::texts`: first name, last description) and re-indexes the row
/// (`tsv`: [`tsvector_of`] of the name and the description), as SQLite's
/// fold does.
fn set_text(
    tx: Tx<'_, '_, '_>,
    task: i64,
    field: Field,
    text: &str,
    st: Stamp<'_>,
) -> Result<(), StoreError> {
    let row = tx
        .opt(
            "SELECT name, name_ts, name_eid, description, description_ts, description_eid
             FROM task_texts WHERE task_id = $1",
            &[&task],
        )
        .map_err(pg_err)?;
    let mut cur = TaskTexts::default();
    if let Some(r) = row {
        let reg = |i: usize| -> Option<Stamped> {
            match (r.get(i), r.get(i + 1), r.get(i + 2)) {
                (Some(text), Some(ts), Some(eid)) => Some(Stamped { text, ts, eid }),
                _ => None,
            }
        };
        cur.name = reg(0);
        cur.description = reg(3);
    }
    if !cur.apply(field, text, st.ts, st.eid) {
        return Ok(());
    }
    let tsv = tsvector_of(&[cur.name_text(), cur.description_text()]);
    let (n, d) = (cur.name.as_ref(), cur.description.as_ref());
    exec(
        tx,
        "INSERT INTO task_texts(task_id, name, name_ts, name_eid, description, description_ts,
                                description_eid, tsv)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8::text::tsvector)
         ON CONFLICT (task_id) DO UPDATE SET name = excluded.name, name_ts = excluded.name_ts,
             name_eid = excluded.name_eid, description = excluded.description,
             description_ts = excluded.description_ts, description_eid = excluded.description_eid,
             tsv = excluded.tsv",
        &[
            &task,
            &n.map(|s| s.text.as_str()),
            &n.map(|s| s.ts),
            &n.map(|s| s.eid.as_str()),
            &d.map(|s| s.text.as_str()),
            &d.map(|s| s.ts),
            &d.map(|s| s.eid.as_str()),
            &tsv,
        ],
    )?;
    Ok(())
}

fn ensure_fold_row(tx: Tx<'_, '_, '_>, task: i64) -> Result<(), StoreError> {
    exec(
        tx,
        "INSERT INTO task_fold(task_id) VALUES ($1) ON CONFLICT DO NOTHING",
        &[&task],
    )?;
    Ok(())
}

fn set_project(
    tx: Tx<'_, '_, '_>,
    task: i64,
    project: &str,
    st: Stamp<'_>,
) -> Result<(), StoreError> {
    ensure_fold_row(tx, task)?;
    let won = exec(
        tx,
        "UPDATE task_fold SET project_ts = $2, project_eid = $3
         WHERE task_id = $1 AND (project_ts IS NULL OR project_ts < $2
                                 OR (project_ts = $2 AND project_eid < $3))",
        &[&task, &st.ts, &st.eid],
    )?;
    if won > 0 {
        exec(
            tx,
            "UPDATE tasks SET project_id = $2 WHERE id = $1",
            &[&task, &project],
        )?;
    }
    Ok(())
}

fn severed_after(tx: Tx<'_, '_, '_>, a: i64, b: i64, st: Stamp<'_>) -> Result<bool, StoreError> {
    let (lo, hi) = if a < b { (a, b) } else { (b, a) };
    Ok(tx
        .opt(
            "SELECT 1 FROM sever_state WHERE lo_id = $1 AND hi_id = $2
             AND (ts > $3 OR (ts = $3 AND eid > $4))",
            &[&lo, &hi, &st.ts, &st.eid],
        )
        .map_err(pg_err)?
        .is_some())
}

/// Sets `child`'s visible parent pointer to `parent` (or none), moving the
/// old and new parents' `child_count`.
fn move_parent(tx: Tx<'_, '_, '_>, child: i64, parent: Option<i64>) -> Result<(), StoreError> {
    let old: Option<i64> = tx
        .one(
            "SELECT parent_task_id FROM tasks WHERE id = $1 FOR UPDATE",
            &[&child],
        )
        .map_err(pg_err)?
        .get(0);
    if old == parent {
        return Ok(());
    }
    exec(
        tx,
        "UPDATE tasks SET parent_task_id = $2 WHERE id = $1",
        &[&child, &parent],
    )?;
    if let Some(o) = old {
        tx.acc(o).child -= 1;
    }
    if let Some(p) = parent {
        tx.acc(p).child += 1;
    }
    Ok(())
}

fn set_parent(
    tx: Tx<'_, '_, '_>,
    child: i64,
    parent: i64,
    st: Stamp<'_>,
) -> Result<(), StoreError> {
    ensure_fold_row(tx, child)?;
    let won = exec(
        tx,
        "UPDATE tasks SET parent_ts = $2, parent_eid = $3
         WHERE id = $1 AND (parent_ts IS NULL OR parent_ts < $2 OR (parent_ts = $2 AND parent_eid < $3))",
        &[&child, &st.ts, &st.eid],
    )?;
    if won == 0 {
        return Ok(());
    }
    let visible = if severed_after(tx, child, parent, st)? {
        None
    } else {
        Some(parent)
    };
    exec(
        tx,
        "UPDATE task_fold SET parent_target_id = $2 WHERE task_id = $1",
        &[&child, &parent],
    )?;
    move_parent(tx, child, visible)
}

fn sever_parent(tx: Tx<'_, '_, '_>, a: i64, b: i64, st: Stamp<'_>) -> Result<(), StoreError> {
    let (lo, hi) = if a < b { (a, b) } else { (b, a) };
    exec(
        tx,
        "INSERT INTO sever_state(lo_id, hi_id, ts, eid) VALUES ($1, $2, $3, $4)
         ON CONFLICT (lo_id, hi_id) DO UPDATE SET ts = excluded.ts, eid = excluded.eid
         WHERE excluded.ts > sever_state.ts OR (excluded.ts = sever_state.ts AND excluded.eid > sever_state.eid)",
        &[&lo, &hi, &st.ts, &st.eid],
    )?;
    for (side, other) in [(a, b), (b, a)] {
        let hit = tx
            .opt(
                "SELECT 1 FROM tasks t
                 WHERE t.id = $1 AND t.parent_task_id IS NOT NULL
                   AND EXISTS (SELECT 1 FROM task_fold f WHERE f.task_id = $1 AND f.parent_target_id = $2)
                   AND (t.parent_ts < $3 OR (t.parent_ts = $3 AND t.parent_eid < $4))",
                &[&side, &other, &st.ts, &st.eid],
            )
            .map_err(pg_err)?;
        if hit.is_some() {
            move_parent(tx, side, None)?;
        }
    }
    Ok(())
}

fn set_edge(
    tx: Tx<'_, '_, '_>,
    src: i64,
    dst: i64,
    edge: EdgeType,
    present: bool,
    st: Stamp<'_>,
) -> Result<(), StoreError> {
    let flag = i64::from(present);
    let won = exec(
        tx,
        "INSERT INTO edge_state(src_id, dst_id, type, tag, present, ts, eid) VALUES ($1, $2, $3, '', $4, $5, $6)
         ON CONFLICT (src_id, dst_id, type, tag) DO UPDATE SET present = excluded.present, ts = excluded.ts, eid = excluded.eid
         WHERE excluded.ts > edge_state.ts OR (excluded.ts = edge_state.ts AND excluded.eid > edge_state.eid)",
        &[&src, &dst, &edge.as_str(), &flag, &st.ts, &st.eid],
    )?;
    if won == 0 {
        return Ok(());
    }
    let (changed, delta) = if present {
        // `xmax = 0` only on a fresh insert: an update of an existing edge
        // moves no counter.
        let row = tx
            .one(
                "INSERT INTO edges(src_id, dst_id, type, tag, created_ts) VALUES ($1, $2, $3, '', $4)
                 ON CONFLICT (src_id, dst_id, type, tag) DO UPDATE SET created_ts = excluded.created_ts
                 RETURNING (xmax = 0)",
                &[&src, &dst, &edge.as_str(), &st.ts],
            )
            .map_err(pg_err)?;
        let inserted: bool = row.get(0);
        (inserted, 1i64)
    } else {
        let n = exec(
            tx,
            "DELETE FROM edges WHERE src_id = $1 AND dst_id = $2 AND type = $3 AND tag = ''",
            &[&src, &dst, &edge.as_str()],
        )?;
        (n > 0, -1i64)
    };
    if changed {
        tx.acc(src).lateral_out += delta;
        tx.acc(dst).lateral_in += delta;
    }
    Ok(())
}

fn add_observation(
    tx: Tx<'_, '_, '_>,
    task: i64,
    text: &str,
    st: Stamp<'_>,
) -> Result<(), StoreError> {
    // Inserted (and counted) at the next flush.
    tx.pending
        .obs
        .push((st.eid.to_string(), task, text.to_string(), st.ts));
    Ok(())
}

fn set_view(
    tx: Tx<'_, '_, '_>,
    name: &str,
    query: Option<&str>,
    st: Stamp<'_>,
) -> Result<(), StoreError> {
    let present = i64::from(query.is_some());
    let won = exec(
        tx,
        "INSERT INTO view_state(name, query, present, ts, eid) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (name) DO UPDATE SET query = excluded.query, present = excluded.present,
                                          ts = excluded.ts, eid = excluded.eid
         WHERE excluded.ts > view_state.ts OR (excluded.ts = view_state.ts AND excluded.eid > view_state.eid)",
        &[&name, &query, &present, &st.ts, &st.eid],
    )?;
    if won == 0 {
        return Ok(());
    }
    match query {
        Some(q) => {
            exec(
                tx,
                "INSERT INTO named_views(name, query, ts, eid) VALUES ($1, $2, $3, $4)
                 ON CONFLICT (name) DO UPDATE SET query = excluded.query, ts = excluded.ts, eid = excluded.eid",
                &[&name, &q, &st.ts, &st.eid],
            )?;
        }
        None => {
            exec(tx, "DELETE FROM named_views WHERE name = $1", &[&name])?;
        }
    }
    Ok(())
}
