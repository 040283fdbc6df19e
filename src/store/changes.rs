//! The store's change counter and what changed since a mark (spec/tq.md §9
//! "Changes"): what MCP resource subscriptions (`mcp::subscriptions`) and
//! `cairn watch` poll. A [`ChangeCounter`] is its own read-only connection to
//! `cairn.db`, so `PRAGMA data_version` on it moves whenever ANY other
//! connection — this process's store or another process — commits. Reading
//! it costs no I/O beyond the WAL index; the event log is read only when it
//! moved. Each method is one SQL statement; every value is bound.

use std::path::Path;

use rusqlite::{Connection, params};

use super::StoreError;
use super::pg::changes::Listener;
use super::pg::target::PgTarget;

/// Which of the given tasks had events after a mark: one statement over the
/// event log (a rowid range scan from the mark). An event touches task `S`
/// when `S` is its subject, the child of a fork (`child_id`), the target of a
/// link or sever (`target_id`), or the parent of its subject (a parent's
/// `task_get` block lists its children's statuses). `?1` is the mark (an
/// event `seq`), `?2` the slugs as a JSON array; rows are (slug, newest seq).
pub const TOUCHED_SQL: &str = "SELECT s.value, max(e.seq)
FROM events e JOIN json_each(?2) s
  ON s.value IN (e.task_id,
                 json_extract(e.data, '$.child_id'),
                 json_extract(e.data, '$.target_id'),
                 (SELECT p.slug FROM tasks c JOIN tasks p ON p.id = c.parent_task_id
                  WHERE c.slug = e.task_id))
WHERE e.seq > ?1 AND e.seq <= ?3
GROUP BY s.value
ORDER BY s.value";

/// The live claim owner of each task named in `?1` (a JSON array of slugs)
/// at `?2` (Unix seconds): the owner while `claim_until > ?2` and the task
/// is neither completed nor abandoned, else NULL (spec/tq.md §9). Rows are
/// (slug, owner) by slug; unknown slugs are left out.
pub const LIVE_CLAIMS_SQL: &str = "SELECT t.slug,
       CASE WHEN t.claim_until > ?2 AND t.status NOT IN ('completed', 'abandoned')
            THEN t.claim_owner END
FROM json_each(?1) s JOIN tasks t ON t.slug = s.value
ORDER BY t.slug";

/// A dedicated connection that watches the store for commits: a read-only
/// SQLite connection reading `PRAGMA data_version`, or a PostgreSQL
/// connection that `LISTEN`s to the schema's change channel
/// ([`crate::store::pg::changes::Listener`]).
#[derive(Debug)]
pub struct ChangeCounter {
    inner: Inner,
}

#[derive(Debug)]
enum Inner {
    Sqlite {
        conn: Connection,
        version: i64,
        path: std::path::PathBuf,
    },
    Pg(std::sync::Mutex<Listener>, Box<PgTarget>),
}

impl ChangeCounter {
    /// Opens a read-only connection (`SQLITE_OPEN_READ_ONLY`, `query_only`,
    /// 30 s busy timeout) to the store at `db` and reads its `data_version`
    /// as the starting point. Errors: [`StoreError::Sqlite`].
    pub fn open(db: &Path) -> Result<ChangeCounter, StoreError> {
        let conn = super::reader::open_read_only(db)?;
        let version = data_version(&conn)?;
        Ok(ChangeCounter {
            inner: Inner::Sqlite {
                conn,
                version,
                path: db.to_path_buf(),
            },
        })
    }

    /// A counter on the PostgreSQL store `target`: its own connection,
    /// listening to the schema's channel. Errors: [`StoreError::Postgres`].
    pub fn open_pg(target: &PgTarget) -> Result<ChangeCounter, StoreError> {
        Ok(ChangeCounter {
            inner: Inner::Pg(
                std::sync::Mutex::new(Listener::open(target)?),
                Box::new(target.clone()),
            ),
        })
    }

    fn pg(l: &std::sync::Mutex<Listener>) -> std::sync::MutexGuard<'_, Listener> {
        match l.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    /// True when another connection committed since the last call (or since
    /// [`ChangeCounter::open`]): `PRAGMA data_version` moved.
    /// Errors: [`StoreError::Sqlite`].
    pub fn moved(&mut self) -> Result<bool, StoreError> {
        match &mut self.inner {
            Inner::Sqlite { conn, version, .. } => {
                let now = data_version(conn)?;
                let moved = now != *version;
                *version = now;
                Ok(moved)
            }
            Inner::Pg(l, t) => {
                let mut g = Self::pg(l);
                match g.moved() {
                    Ok(m) => Ok(m),
                    // The connection broke: listen again; whatever committed
                    // meanwhile was not heard, so say "moved" (the caller
                    // reads the log since its mark).
                    Err(e) => {
                        tracing::warn!(error = %e, "the change counter lost the database; reconnecting");
                        *g = Listener::open(t)?;
                        Ok(true)
                    }
                }
            }
        }
    }

    /// Runs `op` on the PostgreSQL listener, and once more on a fresh
    /// connection when the first attempt fails because the connection
    /// broke. Errors: the second attempt's.
    fn pg_retry<T>(
        l: &std::sync::Mutex<Listener>,
        target: &PgTarget,
        op: impl Fn(&mut Listener) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut g = Self::pg(l);
        match op(&mut g) {
            Ok(v) => Ok(v),
            Err(e) if g.is_closed() => {
                tracing::warn!(error = %e, "the change counter lost the database; reconnecting");
                *g = Listener::open(target)?;
                op(&mut g)
            }
            Err(e) => Err(e),
        }
    }

    /// The process's commit signal for this counter's store
    /// ([`super::commits`]): a receiver whose `changed()` fires at the next
    /// commit by any connection, from one thread per store per process.
    /// Errors: the store's, when the signal's first connection fails.
    pub fn commits(
        &self,
    ) -> Result<tokio::sync::watch::Receiver<super::commits::Generation>, StoreError> {
        match &self.inner {
            Inner::Sqlite { path, .. } => super::commits::sqlite(path),
            Inner::Pg(_, target) => super::commits::postgres(target),
        }
    }

    /// The newest event's `seq` (0 for an empty log): the mark to pass to
    /// [`ChangeCounter::touched`] next time. Errors: [`StoreError::Sqlite`].
    pub fn high_water(&self) -> Result<i64, StoreError> {
        match &self.inner {
            Inner::Sqlite { conn, .. } => Ok(conn
                .prepare_cached("SELECT coalesce(max(seq), 0) FROM events")?
                .query_row([], |r| r.get(0))?),
            Inner::Pg(l, t) => Self::pg_retry(l, t, |g| g.high_water()),
        }
    }

    /// The slugs among `slugs` that the events after `since` and up to
    /// `upto` (both `seq`s) touched (see [`TOUCHED_SQL`]), sorted. A caller
    /// reads `upto` with [`ChangeCounter::high_water`] first and keeps it as
    /// its next `since`: an event committed between the two reads is left
    /// for the next look instead of being seen twice. Errors:
    /// [`StoreError::Sqlite`].
    pub fn touched(
        &self,
        since: i64,
        upto: i64,
        slugs: &[String],
    ) -> Result<Vec<String>, StoreError> {
        if slugs.is_empty() {
            return Ok(Vec::new());
        }
        let conn = match &self.inner {
            Inner::Sqlite { conn, .. } => conn,
            Inner::Pg(l, t) => return Self::pg_retry(l, t, |g| g.touched(since, upto, slugs)),
        };
        let list = serde_json::Value::from(slugs.to_vec()).to_string();
        let mut stmt = conn.prepare_cached(TOUCHED_SQL)?;
        let rows = stmt.query_map(params![since, list, upto], |r| r.get::<_, String>(0))?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }
}

impl ChangeCounter {
    /// The live claim owner of each of `slugs` at `now` (Unix seconds; see
    /// [`LIVE_CLAIMS_SQL`]): a claim can lapse with no event, which only
    /// this comparison sees. Errors: [`StoreError::Sqlite`].
    pub fn live_claims(
        &self,
        slugs: &[String],
        now: i64,
    ) -> Result<Vec<(String, Option<String>)>, StoreError> {
        match &self.inner {
            Inner::Sqlite { conn, .. } => live_claims(conn, slugs, now),
            Inner::Pg(l, t) => Self::pg_retry(l, t, |g| g.live_claims(slugs, now)),
        }
    }
}

/// [`ChangeCounter::live_claims`] on any connection to the store (one
/// statement, [`LIVE_CLAIMS_SQL`]). Errors: [`StoreError::Sqlite`].
pub fn live_claims(
    conn: &Connection,
    slugs: &[String],
    now: i64,
) -> Result<Vec<(String, Option<String>)>, StoreError> {
    if slugs.is_empty() {
        return Ok(Vec::new());
    }
    let list = serde_json::Value::from(slugs.to_vec()).to_string();
    let mut stmt = conn.prepare_cached(LIVE_CLAIMS_SQL)?;
    let rows = stmt.query_map(params![list, now], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<Result<Vec<_>, _>>()?)
}

fn data_version(conn: &Connection) -> Result<i64, StoreError> {
    Ok(conn.query_row("PRAGMA data_version", [], |r| r.get(0))?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{EdgeType, NewEvent, Store};

    #[test]
    fn the_counter_sees_commits_and_names_the_touched_tasks() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("c.db");
        let store = Store::open(&db).unwrap();
        let mut counter = ChangeCounter::open(&db).unwrap();
        assert!(!counter.moved().unwrap());
        assert_eq!(counter.high_water().unwrap(), 0);
        let ev = |slug: &str| NewEvent::task_create("s", 1, slug, None, None);
        store
            .write(&[ev("a"), ev("b"), ev("c"), ev("kid")])
            .unwrap();
        assert!(counter.moved().unwrap());
        assert!(!counter.moved().unwrap());
        let mark = counter.high_water().unwrap();
        assert_eq!(mark, 4);
        let all: Vec<String> = ["a", "b", "c", "kid"].map(String::from).to_vec();
        assert_eq!(counter.touched(0, i64::MAX, &all).unwrap(), all);
        assert!(counter.touched(mark, i64::MAX, &all).unwrap().is_empty());
        // A link from b to c touches both; a fork a → kid touches both.
        store
            .write(&[NewEvent::link("s", 2, "b", "c", EdgeType::DependsOn)])
            .unwrap();
        assert_eq!(
            counter.touched(mark, i64::MAX, &all).unwrap(),
            vec!["b".to_string(), "c".to_string()]
        );
        let mark = counter.high_water().unwrap();
        store
            .write(&[NewEvent::fork("s", 3, "a", "kid", EdgeType::PhaseOf)])
            .unwrap();
        assert_eq!(
            counter.touched(mark, i64::MAX, &all).unwrap(),
            vec!["a".to_string(), "kid".to_string()]
        );
        // An observation on the child touches its parent too.
        let mark = counter.high_water().unwrap();
        store
            .write(&[NewEvent::observation("s", 4, "kid", "note")])
            .unwrap();
        assert_eq!(
            counter.touched(mark, i64::MAX, &all).unwrap(),
            vec!["a".to_string(), "kid".to_string()]
        );
        assert_eq!(
            counter.touched(mark, i64::MAX, &["b".to_string()]).unwrap(),
            Vec::<String>::new()
        );
        // Only events up to `upto`: one committed after a poll's high-water
        // read is that poll's to leave, so the next poll reports it once.
        assert_eq!(
            counter.touched(mark, mark, &all).unwrap(),
            Vec::<String>::new()
        );
        assert_eq!(
            counter.touched(mark, mark + 1, &all).unwrap(),
            vec!["a".to_string(), "kid".to_string()]
        );
        // Live claims: judged at `now`, gone once lapsed or dormant.
        store
            .write(&[
                NewEvent::claim("s", 5, "a", "ana", 100),
                NewEvent::claim("s", 5, "b", "bob", 100),
                NewEvent::update_status("s", 6, "b", crate::store::Status::Completed),
            ])
            .unwrap();
        let ab = ["a".to_string(), "b".to_string(), "zz".to_string()];
        assert_eq!(
            counter.live_claims(&ab, 99).unwrap(),
            vec![
                ("a".to_string(), Some("ana".to_string())),
                ("b".to_string(), None)
            ]
        );
        assert_eq!(
            counter.live_claims(&ab, 100).unwrap(),
            vec![("a".to_string(), None), ("b".to_string(), None)]
        );
        // A slug with quotes is a bound value, not SQL.
        assert!(
            counter
                .touched(0, i64::MAX, &["x' OR 1=1 --".to_string()])
                .unwrap()
                .is_empty()
        );
    }
}
