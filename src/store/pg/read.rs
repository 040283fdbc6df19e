//! The tools' reads on PostgreSQL (spec/team.md "The same on both
//! engines"): the same answers as SQLite's `store/read.rs` (whose doc
//! comments define them), in this engine's SQL. Every text column is
//! `COLLATE "C"`, so `ORDER BY slug` is byte order as on SQLite.

use serde_json::Value;

use super::connect::pg_err;
use super::handle::PgStore;
use super::search::{snippet, terms, tsquery_of};
use crate::store::error::StoreError;
use crate::store::read::{EventRow, HandoffRow, OpenTask, TaskState, Written};
use crate::store::search::SearchHit;
use crate::store::slug::{self, strip_depot};
use crate::store::texts::{Field, hit_snippet};

fn to_i64(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// `types` as a text array, or `None` for "every type".
fn type_list(types: &[String]) -> Option<Vec<String>> {
    (!types.is_empty()).then(|| types.to_vec())
}

impl PgStore {
    /// [`crate::store::read::task_state`] on PostgreSQL.
    /// Errors: [`StoreError::Postgres`].
    pub fn task_state(
        &self,
        slug: &str,
        recent: usize,
        handoffs: usize,
    ) -> Result<Option<TaskState>, StoreError> {
        let mut c = self.client();
        let Some(row) = c
            .query_opt(
                "SELECT t.id, t.status, t.description, p.slug, t.claim_owner, t.claim_until
                 FROM tasks t LEFT JOIN tasks p ON p.id = t.parent_task_id
                 WHERE t.slug = $1",
                &[&slug],
            )
            .map_err(pg_err)?
        else {
            return Ok(None);
        };
        let id: i64 = row.get(0);
        let claim = match (
            row.get::<_, Option<String>>(4),
            row.get::<_, Option<i64>>(5),
        ) {
            (Some(o), Some(u)) => Some((o, u)),
            _ => None,
        };
        let pairs =
            |c: &mut postgres::Client, sql: &str| -> Result<Vec<(String, String)>, StoreError> {
                Ok(c.query(sql, &[&id])
                    .map_err(pg_err)?
                    .iter()
                    .map(|r| (r.get(0), r.get(1)))
                    .collect())
            };
        let children = pairs(
            &mut c,
            "SELECT slug, status FROM tasks WHERE parent_task_id = $1 ORDER BY slug",
        )?;
        let edges = pairs(
            &mut c,
            "SELECT e.type, d.slug FROM edges e JOIN tasks d ON d.id = e.dst_id
             WHERE e.src_id = $1 ORDER BY e.type, d.slug",
        )?;
        let metadata = pairs(
            &mut c,
            "SELECT key, value FROM task_metadata WHERE task_id = $1 ORDER BY key",
        )?;
        let (recent, recent_by): (Vec<String>, Vec<Written>) = c
            .query(
                "SELECT o.text, o.ts, coalesce(e.session_id, '') FROM observations o
                 LEFT JOIN events e ON e.event_id = o.event_id
                 WHERE o.task_id = $1 ORDER BY o.ts DESC, o.obs_id DESC LIMIT $2",
                &[&id, &to_i64(recent)],
            )
            .map_err(pg_err)?
            .iter()
            .map(|r| {
                (
                    r.get(0),
                    Written {
                        ts: r.get(1),
                        session: r.get(2),
                    },
                )
            })
            .unzip();
        let obs_count: i64 = c
            .query_one(
                "SELECT count(*) FROM observations WHERE task_id = $1",
                &[&id],
            )
            .map_err(pg_err)?
            .get(0);
        let handoffs = c
            .query(
                "SELECT h.summary, h.path, h.ts, coalesce(e.session_id, '') FROM handoffs h
                 LEFT JOIN events e ON e.event_id = h.event_id
                 WHERE h.task_id = $1 ORDER BY h.ts DESC, h.event_id DESC LIMIT $2",
                &[&id, &to_i64(handoffs)],
            )
            .map_err(pg_err)?
            .iter()
            .map(|r| HandoffRow {
                summary: r.get(0),
                path: r.get(1),
                ts: r.get(2),
                session: r.get(3),
            })
            .collect();
        drop(c);
        let name = self.typed_name(slug)?;
        Ok(Some(TaskState {
            slug: slug.to_string(),
            status: row.get(1),
            description: row.get(2),
            name,
            parent: row.get(3),
            children,
            edges,
            metadata,
            recent,
            recent_by,
            obs_count,
            handoffs,
            claim,
        }))
    }

    /// [`crate::store::read::typed_name`] on PostgreSQL.
    /// Errors: [`StoreError::Postgres`].
    pub fn typed_name(&self, slug: &str) -> Result<Option<String>, StoreError> {
        let mut c = self.client();
        let own = c
            .query_opt(
                "SELECT e.data::jsonb ->> 'name' FROM events e
                 WHERE e.task_id = $1 AND e.type = 'task.create'
                   AND NOT EXISTS (SELECT 1 FROM events s,
                                          jsonb_array_elements_text(s.data::jsonb -> 'events') k
                                   WHERE s.task_id = $1 AND s.type = 'task.split'
                                     AND k = e.event_key)
                 ORDER BY e.seq LIMIT 1",
                &[&slug],
            )
            .map_err(pg_err)?
            .map(|r| r.get::<_, Option<String>>(0));
        let name = match own {
            Some(n) => n,
            None => match slug::base_of_moved(slug) {
                Some(base) => c
                    .query_opt(
                        "SELECT c.data::jsonb ->> 'name'
                         FROM events s
                         CROSS JOIN LATERAL jsonb_array_elements_text(s.data::jsonb -> 'events') k
                         JOIN events c ON c.event_key = k AND c.type = 'task.create'
                         WHERE s.task_id = $1 AND s.type = 'task.split'
                           AND s.data::jsonb ->> 'into' = $2
                         ORDER BY c.seq LIMIT 1",
                        &[&base, &slug],
                    )
                    .map_err(pg_err)?
                    .and_then(|r| r.get::<_, Option<String>>(0)),
                None => None,
            },
        };
        Ok(name.filter(|n| !n.trim().is_empty()))
    }

    /// [`crate::store::read::open_tasks`] on PostgreSQL.
    /// Errors: [`StoreError::Postgres`].
    pub fn open_tasks(&self) -> Result<Vec<OpenTask>, StoreError> {
        Ok(self
            .client()
            .query(
                "SELECT t.slug, t.status,
                        (SELECT e.data::jsonb ->> 'name' FROM events e
                         WHERE e.task_id = t.slug AND e.type = 'task.create'
                         ORDER BY e.seq LIMIT 1)
                 FROM tasks t
                 WHERE t.status IN ('open', 'active', 'blocked') AND t.slug NOT LIKE '@%'
                 ORDER BY t.slug",
                &[],
            )
            .map_err(pg_err)?
            .iter()
            .map(|r| OpenTask {
                slug: r.get(0),
                status: r.get(1),
                name: r.get(2),
            })
            .collect())
    }

    /// [`crate::store::read::timeline_count`] on PostgreSQL.
    /// Errors: [`StoreError::Postgres`].
    pub fn timeline_count(
        &self,
        slug: &str,
        types: &[String],
        before: Option<i64>,
        after: Option<i64>,
    ) -> Result<i64, StoreError> {
        Ok(self
            .client()
            .query_one(
                "SELECT count(*) FROM events
                 WHERE task_id = $1
                   AND ($2::text[] IS NULL OR type = ANY($2::text[]))
                   AND ($3::bigint IS NULL OR seq < $3)
                   AND ($4::bigint IS NULL OR seq > $4)",
                &[&slug, &type_list(types), &before, &after],
            )
            .map_err(pg_err)?
            .get(0))
    }

    /// [`crate::store::read::task_status`] on PostgreSQL.
    /// Errors: [`StoreError::Postgres`].
    pub fn task_status(&self, slug: &str) -> Result<Option<String>, StoreError> {
        Ok(self
            .client()
            .query_opt("SELECT status FROM tasks WHERE slug = $1", &[&slug])
            .map_err(pg_err)?
            .map(|r| r.get(0)))
    }

    /// [`crate::store::read::recent_slugs`] on PostgreSQL.
    /// Errors: [`StoreError::Postgres`].
    pub fn recent_slugs(&self, n: usize) -> Result<Vec<String>, StoreError> {
        Ok(self
            .client()
            .query(
                "SELECT slug FROM tasks WHERE slug NOT LIKE '@%'
                 ORDER BY updated_ts DESC, slug LIMIT $1",
                &[&to_i64(n)],
            )
            .map_err(pg_err)?
            .iter()
            .map(|r| r.get(0))
            .collect())
    }

    /// [`crate::store::read::event_types`] on PostgreSQL.
    /// Errors: [`StoreError::Postgres`].
    pub fn event_types(&self) -> Result<Vec<String>, StoreError> {
        Ok(self
            .client()
            .query("SELECT DISTINCT type FROM events ORDER BY type", &[])
            .map_err(pg_err)?
            .iter()
            .map(|r| r.get(0))
            .collect())
    }

    /// [`crate::store::read::timeline_page`] on PostgreSQL.
    /// Errors: [`StoreError::Postgres`].
    pub fn timeline_page(
        &self,
        slug: &str,
        types: &[String],
        before: Option<i64>,
        after: Option<i64>,
        limit: usize,
    ) -> Result<Vec<EventRow>, StoreError> {
        Ok(self
            .client()
            .query(
                "SELECT seq, type, ts, data, session_id FROM events
                 WHERE task_id = $1
                   AND ($2::text[] IS NULL OR type = ANY($2::text[]))
                   AND ($3::bigint IS NULL OR seq < $3)
                   AND ($4::bigint IS NULL OR seq > $4)
                 ORDER BY seq DESC LIMIT $5",
                &[&slug, &type_list(types), &before, &after, &to_i64(limit)],
            )
            .map_err(pg_err)?
            .iter()
            .map(|r| EventRow {
                seq: r.get(0),
                event_type: r.get(1),
                ts: r.get(2),
                data: serde_json::from_str(r.get(3)).unwrap_or(Value::Null),
                session: r.get(4),
            })
            .collect())
    }

    /// [`crate::store::read::slugs_with_prefix`] on PostgreSQL.
    /// Errors: [`StoreError::Postgres`].
    pub fn slugs_with_prefix(
        &self,
        prefix: &str,
        limit: usize,
    ) -> Result<(Vec<String>, usize), StoreError> {
        let prefix = strip_depot(prefix.trim());
        let upper = format!("{prefix}\u{10FFFF}");
        let rows = self
            .client()
            .query(
                "SELECT slug, count(*) OVER () FROM tasks
                 WHERE slug >= $1 AND slug < $2 AND slug NOT LIKE '@%'
                 ORDER BY status IN ('completed', 'abandoned'), slug
                 LIMIT $3",
                &[&prefix, &upper, &to_i64(limit)],
            )
            .map_err(pg_err)?;
        let total = rows.first().map_or(0, |r| {
            usize::try_from(r.get::<_, i64>(1)).unwrap_or(usize::MAX)
        });
        Ok((rows.iter().map(|r| r.get(0)).collect(), total))
    }

    /// [`crate::store::search::search`] on PostgreSQL: the sanitised
    /// expression `expr` as a `tsquery` over cairn's own tokens
    /// (`pg/search.rs`) on the observations and on the tasks' own texts
    /// (`task_texts`; a task's own text only when none of its observations
    /// matches), best `ts_rank` first (ties: newest first), at most
    /// `limit` hits, optionally only on task `task`; snippets cut in Rust
    /// (a task text's: [`crate::store::texts::hit_snippet`]).
    /// Errors: [`StoreError::Postgres`].
    pub fn search(
        &self,
        expr: &str,
        task: Option<&str>,
        limit: usize,
    ) -> Result<Vec<SearchHit>, StoreError> {
        let terms = terms(expr);
        let Some(q) = tsquery_of(&terms) else {
            return Ok(Vec::new());
        };
        let rows = self
            .client()
            .query(
                "WITH oh AS (
                     SELECT o.task_id AS task_id, t.slug AS slug, o.ts AS ts, o.text AS body,
                            ts_rank(o.tsv, $1::text::tsquery) AS r, o.obs_id AS k
                     FROM observations o JOIN tasks t ON t.id = o.task_id
                     WHERE o.tsv @@ $1::text::tsquery AND ($2::text IS NULL OR t.slug = $2)
                 )
                 SELECT slug, ts, body, name, description, name_ts, description_ts FROM (
                     SELECT slug, ts, body, NULL::text AS name, NULL::text AS description,
                            NULL::bigint AS name_ts, NULL::bigint AS description_ts, r, k
                     FROM oh
                     UNION ALL
                     SELECT t.slug, coalesce(x.description_ts, x.name_ts), NULL, x.name,
                            x.description, x.name_ts, x.description_ts,
                            ts_rank(x.tsv, $1::text::tsquery), -x.task_id
                     FROM task_texts x JOIN tasks t ON t.id = x.task_id
                     WHERE x.tsv @@ $1::text::tsquery AND ($2::text IS NULL OR t.slug = $2)
                       AND x.task_id NOT IN (SELECT task_id FROM oh)
                 ) s
                 ORDER BY r DESC, ts DESC, k DESC
                 LIMIT $3",
                &[&q, &task, &to_i64(limit)],
            )
            .map_err(pg_err)?;
        Ok(rows
            .iter()
            .map(|r| match r.get::<_, Option<&str>>(2) {
                Some(body) => SearchHit {
                    slug: r.get(0),
                    ts: r.get(1),
                    snippet: snippet(body, &terms),
                },
                None => {
                    let (field, snip) = hit_snippet(r.get(3), r.get(4), &terms);
                    let ts: Option<i64> = match field {
                        Field::Name => r.get(5),
                        Field::Description => r.get(6),
                    };
                    SearchHit {
                        slug: r.get(0),
                        ts: ts.unwrap_or(0),
                        snippet: snip,
                    }
                }
            })
            .collect())
    }

    /// Live metadata keys: distinct `task_metadata.key`, sorted (byte order).
    /// Errors: [`StoreError::Postgres`].
    pub fn metadata_keys(&self) -> Result<Vec<String>, StoreError> {
        Ok(self
            .client()
            .query("SELECT DISTINCT key FROM task_metadata ORDER BY key", &[])
            .map_err(pg_err)?
            .iter()
            .map(|r| r.get(0))
            .collect())
    }

    /// True when a task row `slug` (depot prefix stripped) exists.
    /// Errors: [`StoreError::Postgres`].
    pub fn task_exists(&self, slug: &str) -> Result<bool, StoreError> {
        Ok(self
            .client()
            .query_opt("SELECT 1 FROM tasks WHERE slug = $1", &[&strip_depot(slug)])
            .map_err(pg_err)?
            .is_some())
    }

    /// [`crate::store::read::depends_on_edges`] on PostgreSQL (the same
    /// statement). Errors: [`StoreError::Postgres`].
    pub fn depends_on_edges(&self) -> Result<Vec<(String, String)>, StoreError> {
        Ok(self
            .client()
            .query(crate::store::read::DEPENDS_ON_SQL, &[])
            .map_err(pg_err)?
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect())
    }
}
