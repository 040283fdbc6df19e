//! Change notifications on PostgreSQL (spec/team.md "Changes"): every
//! write transaction queues `pg_notify('cairn_SCHEMA', newest seq)`
//! (`pg/write.rs`), delivered at commit to every listener of the schema,
//! on any machine. [`Listener`] holds its own connection that `LISTEN`s,
//! so `cairn watch` and subscriptions wake on a commit instead of polling.

use std::time::Duration;

use fallible_iterator::FallibleIterator;

use super::connect::{connect, pg_err};
use super::target::PgTarget;
use super::write::channel;
use crate::store::error::StoreError;

/// The `application_name` of every listening connection, so an operator
/// can tell them apart in `pg_stat_activity` (docs/team.md "What to
/// monitor").
pub const LISTEN_APP: &str = "cairn-listen";

/// How long [`Listener::moved`] lets the connection read its socket.
pub const PEEK: Duration = Duration::from_millis(1);

/// A connection listening on one project's change channel.
pub struct Listener {
    client: std::mem::ManuallyDrop<postgres::Client>,
}

impl Drop for Listener {
    fn drop(&mut self) {
        // Close the connection where blocking is allowed (`drop_off_runtime`).
        // SAFETY: `client` is taken once, here, and never used again.
        let c = unsafe { std::mem::ManuallyDrop::take(&mut self.client) };
        super::connect::drop_off_runtime(c);
    }
}

impl std::fmt::Debug for Listener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Listener")
    }
}

impl Listener {
    /// Connects to `target` and listens on its schema's channel. Errors:
    /// [`StoreError::Postgres`].
    pub fn open(target: &PgTarget) -> Result<Listener, StoreError> {
        let mut client = connect(target)?;
        let name = channel(&target.schema).replace('"', "\"\"");
        client
            .batch_execute(&format!(
                "SET application_name TO '{LISTEN_APP}'; SET search_path TO {}; LISTEN \"{name}\"",
                super::handle::quoted(&target.schema)
            ))
            .map_err(pg_err)?;
        Ok(Listener {
            client: std::mem::ManuallyDrop::new(client),
        })
    }

    /// Waits at most `timeout` for a commit to the project; `Some(seq)` (the
    /// newest seq it announced, the largest when several arrived) or
    /// `None` when none came. Errors: [`StoreError::Postgres`] (the
    /// connection broke).
    pub fn wait(&mut self, timeout: Duration) -> Result<Option<i64>, StoreError> {
        let mut newest = None;
        let mut n = self.client.notifications();
        let mut it = n.timeout_iter(timeout);
        if let Some(first) = it.next().map_err(pg_err)? {
            newest = first.payload().parse::<i64>().ok().or(Some(0));
        }
        // Whatever else is already queued.
        drop(it);
        let mut more = n.iter();
        while let Some(m) = more.next().map_err(pg_err)? {
            let seq = m.payload().parse::<i64>().unwrap_or(0);
            newest = Some(newest.map_or(seq, |s: i64| s.max(seq)));
        }
        Ok(newest)
    }

    /// True once the connection is gone (the server closed it, the
    /// network broke): a new [`Listener`] is needed.
    pub fn is_closed(&self) -> bool {
        self.client.is_closed()
    }

    /// True when a commit was announced since the last call. Blocks at
    /// most [`PEEK`] (1 ms): the client's runtime must park once for its
    /// I/O driver to see that the socket became readable — the
    /// non-blocking `notifications().iter()` never parks, so on an idle
    /// connection it saw nothing until the next query (a subscriber heard
    /// a write 5 s late, at the next forced view refresh). Errors:
    /// [`StoreError::Postgres`].
    pub fn moved(&mut self) -> Result<bool, StoreError> {
        Ok(self.wait(PEEK)?.is_some())
    }

    /// The newest event's `seq` (0 for an empty log). Errors:
    /// [`StoreError::Postgres`].
    pub fn high_water(&mut self) -> Result<i64, StoreError> {
        Ok(self
            .client
            .query_one("SELECT coalesce(max(seq), 0) FROM events", &[])
            .map_err(pg_err)?
            .get(0))
    }

    /// `store::changes::TOUCHED_SQL` on PostgreSQL: the slugs among
    /// `slugs` that events after `since` and up to `upto` touched, sorted
    /// (byte order).
    /// Errors: [`StoreError::Postgres`].
    pub fn touched(
        &mut self,
        since: i64,
        upto: i64,
        slugs: &[String],
    ) -> Result<Vec<String>, StoreError> {
        if slugs.is_empty() {
            return Ok(Vec::new());
        }
        Ok(self
            .client
            .query(
                "SELECT s.v FROM events e JOIN unnest($2::text[]) AS s(v)
                   ON s.v IN (e.task_id, e.data::jsonb ->> 'child_id', e.data::jsonb ->> 'target_id',
                              (SELECT p.slug FROM tasks c JOIN tasks p ON p.id = c.parent_task_id
                               WHERE c.slug = e.task_id))
                 WHERE e.seq > $1 AND e.seq <= $3
                 GROUP BY s.v
                 ORDER BY s.v COLLATE \"C\"",
                &[&since, &slugs, &upto],
            )
            .map_err(pg_err)?
            .iter()
            .map(|r| r.get(0))
            .collect())
    }

    /// `store::changes::LIVE_CLAIMS_SQL` on PostgreSQL: each known slug's
    /// live claim owner at `now` (Unix seconds). Errors:
    /// [`StoreError::Postgres`].
    pub fn live_claims(
        &mut self,
        slugs: &[String],
        now: i64,
    ) -> Result<Vec<(String, Option<String>)>, StoreError> {
        if slugs.is_empty() {
            return Ok(Vec::new());
        }
        Ok(self
            .client
            .query(
                "SELECT t.slug,
                        CASE WHEN t.claim_until > $2 AND t.status NOT IN ('completed', 'abandoned')
                             THEN t.claim_owner END
                 FROM unnest($1::text[]) AS s(v) JOIN tasks t ON t.slug = s.v
                 ORDER BY t.slug",
                &[&slugs, &now],
            )
            .map_err(pg_err)?
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect())
    }
}
