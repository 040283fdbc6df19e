//! Client roots choose the store (spec/mcp.md "Roots"): the policy, the
//! launch store restored when the roots stop naming a directory, asking the
//! client for `roots/list`, and switching the session's store to the first
//! `file://` root.

#![allow(deprecated)] // rmcp marks roots and logging deprecated (SEP-2577); clients still use them.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::Root;
use rmcp::service::Peer;

use super::logging::{LogLine, capture};
use super::server::*;
use crate::store::{Store, location};

/// Whether the client's roots may choose the store (spec/mcp.md "Roots").
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum RootsPolicy {
    /// The store stays the one the server was built with (`--db`,
    /// `CAIRN_DB`, or an HTTP server's one store).
    #[default]
    Ignore,
    /// The first `file://` root of a client that declares `roots` selects
    /// the store by the store.md rules (rules 2–4 from that directory); with
    /// no `file://` root, the launch store stands. Re-resolved on
    /// `notifications/roots/list_changed`, before the next tool call.
    Follow,
}

/// How long the server waits for the client's `roots/list` answer.
pub const ROOTS_TIMEOUT: Duration = Duration::from_secs(5);

/// The launch store: where the server started, restored when the roots stop
/// naming a directory.
#[derive(Debug, Clone)]
pub(crate) struct Launch {
    pub(super) db: PathBuf,
    pub(super) root: PathBuf,
}

/// The directory of a `file://` root URI (percent-decoded), if it is one.
pub fn file_root(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    // `file:///abs` (empty host) or `file://localhost/abs`.
    let path = if rest.starts_with('/') {
        rest
    } else {
        rest.strip_prefix("localhost")?
    };
    let decoded = percent_encoding::percent_decode_str(path)
        .decode_utf8()
        .ok()?
        .into_owned();
    let p = PathBuf::from(decoded);
    p.is_absolute().then_some(p)
}

/// The store location for directory `dir` by the store.md rules 2–4
/// (`--db` and `CAIRN_DB` never reach here: they pin the store).
fn location_for(dir: &Path) -> Result<location::Location, crate::store::StoreError> {
    let xdg = std::env::var_os("XDG_DATA_HOME").map(PathBuf::from);
    let home = std::env::var_os("HOME").map(PathBuf::from);
    location::resolve(&location::Inputs {
        flag: None,
        env_db: None,
        cwd: dir,
        xdg_data_home: xdg.as_deref(),
        home: home.as_deref(),
    })
}

impl CairnServer {
    /// Re-resolves the store from the client's roots when they may have
    /// changed (first call, `roots/list_changed`). A failure keeps the
    /// current store and is logged.
    pub(super) async fn refresh_roots(&self, peer: &Peer<RoleServer>) -> Vec<LogLine> {
        if self.roots != RootsPolicy::Follow {
            return Vec::new();
        }
        let _serial = self.roots_lock.lock().await;
        if !self.roots_stale.swap(false, Ordering::SeqCst) {
            return Vec::new();
        }
        let declared = peer
            .peer_info()
            .is_some_and(|info| info.capabilities.roots.is_some());
        if !declared {
            return Vec::new();
        }
        let roots = match tokio::time::timeout(ROOTS_TIMEOUT, peer.list_roots()).await {
            Ok(Ok(r)) => r.roots,
            Ok(Err(e)) => {
                return capture(
                    || tracing::warn!(error = %e, "roots/list failed; the store stays"),
                )
                .1;
            }
            Err(_) => {
                return capture(|| tracing::warn!("roots/list timed out; the store stays")).1;
            }
        };
        let server = self.clone();
        let job = tokio::task::spawn_blocking(move || capture(|| server.switch_to_roots(&roots)).1);
        job.await.unwrap_or_default()
    }

    /// Points the session at the store the roots select (or the launch
    /// store), waiting for a running call. The current pointer is cleared
    /// when the store changes.
    pub(super) fn switch_to_roots(&self, roots: &[Root]) {
        let launch = match self.launch.lock() {
            Ok(l) => l.clone(),
            Err(p) => p.into_inner().clone(),
        };
        let (db, root) = match roots.iter().find_map(|r| file_root(&r.uri)) {
            Some(dir) => match location_for(&dir) {
                Ok(loc) => (loc.db, loc.project),
                Err(e) => {
                    tracing::warn!(error = %e, "cannot resolve the store of the root; the store stays");
                    return;
                }
            },
            None => (launch.db, launch.root),
        };
        let mut st = self.lock();
        if st.store.r().path() == Some(db.as_path()) {
            return;
        }
        match Store::open(&db) {
            Ok(store) => {
                tracing::info!(db = %db.display(), "roots select the store");
                st.store = crate::store::Db::Sqlite(store);
                st.root = root;
                st.session.current = None;
            }
            Err(e) => {
                tracing::warn!(error = %e, db = %db.display(), "cannot open the store the roots select; the store stays")
            }
        }
    }
}
