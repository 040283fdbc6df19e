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

/// A connection listening on one project's change channel.
pub struct Listener {
    client: postgres::Client,
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
            .batch_execute(&format!("LISTEN \"{name}\""))
            .map_err(pg_err)?;
        Ok(Listener { client })
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
}
