//! Resource subscriptions of one MCP session (spec/tq.md §9 "Changes";
//! docs/mcp.md "Resources and subscriptions"). `resources/subscribe` on a
//! task or view URI adds an entry; while the session holds at least one, ONE
//! background task per session (the watcher) wakes at every commit to the
//! store — the process's commit signal ([`crate::store::commits`]: one
//! thread per store, `data_version` every 10 ms on SQLite, `LISTEN` on
//! PostgreSQL) — at once after a writing tool call of this process
//! ([`wrote`]), and every [`SIGNALLED_TICK`] otherwise. When the store
//! moved, one statement names the subscribed tasks that events touched since
//! the last poll, and each gets `notifications/resources/updated`; each
//! subscribed view is re-run and notified when its text changed (views are
//! also re-run every [`VIEW_REFRESH`] without a commit, since an answer can
//! change with the clock alone, e.g. a claim lapsing). With no subscription
//! there is no task and no timer. The task stops when the last subscription
//! goes, when the session's server is dropped, or when the transport closes.
//!
//! A 2026-07-28 `subscriptions/listen` stream gets a table and a watcher of
//! its own ([`CairnServer::listen_stream`]), notifying through the stream's
//! sink ([`Outlet::Listen`]) until the client cancels it.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use rmcp::RoleServer;
use rmcp::model::{ResourceUpdatedNotificationParam, SubscriptionFilter};
use rmcp::service::{Peer, SubscriptionContext, SubscriptionSink};
use tokio_util::sync::CancellationToken;

use rmcp::ErrorData as McpError;

use super::logging::LevelCell;
use super::resources::{Target, parse_uri, unknown_resource};
use super::server::{CairnServer, Launch, RootsPolicy, State};
use crate::session::Capability;
use crate::store::changes::ChangeCounter;

/// How often a watcher reads the change counter when the process's commit
/// signal could not start ([`crate::store::commits`]): the longest another
/// process's write then waits to be heard (issue 22: within 100 ms).
pub const POLL_INTERVAL: Duration = Duration::from_millis(100);

/// How often a watcher wakes with no commit while the signal runs (a claim
/// can lapse with no event; views re-run every [`VIEW_REFRESH`]).
pub const SIGNALLED_TICK: Duration = Duration::from_secs(1);

/// This process's writes: a generation bumped after every writing tool call
/// ([`wrote`]), which wakes every watcher at once, so a session hears its
/// own process's writes without waiting for the next poll.
static LOCAL_WRITES: std::sync::LazyLock<tokio::sync::watch::Sender<u64>> =
    std::sync::LazyLock::new(|| tokio::sync::watch::Sender::new(0));

/// Says that a tool call of this process committed (or may have): every
/// watcher polls now instead of at its next tick.
pub fn wrote() {
    LOCAL_WRITES.send_modify(|g| *g = g.wrapping_add(1));
}

/// The most `subscriptions/listen` streams one session may hold open at
/// once: over stdio the process, over HTTP one token's stateless agent (a
/// stream holds a connection, a watcher and its store connection; one
/// stream takes up to [`MAX_SUBSCRIPTIONS`] URIs).
pub const MAX_LISTEN_STREAMS: usize = 16;

/// The most pre-acknowledgment marks a session keeps for streams that
/// have not started yet.
const MAX_PENDING_MARKS: usize = 64;

/// The sentence a session hears when the process's change listener lost
/// its database connection and reconnected (docs/team.md "Changes"); every
/// subscribed URI is then notified as updated, so a client re-reads it.
pub const MISSED: &str = "cairn's change listener lost its database connection and reconnected; changes may have been missed, so every subscribed resource is announced as updated: read them again.";

/// How often subscribed views are re-run even when nothing committed.
pub const VIEW_REFRESH: Duration = Duration::from_secs(5);

/// The most URIs one session may subscribe to.
pub const MAX_SUBSCRIPTIONS: usize = 1000;

/// The most distinct views one session may subscribe to (each is re-run on
/// every commit and every [`VIEW_REFRESH`]; URIs naming the same view share
/// one run).
pub const MAX_VIEWS: usize = 16;

/// Where a watcher's notifications go.
#[derive(Debug, Clone)]
pub enum Outlet {
    /// The session's peer: `resources/subscribe` of a 2025-11-25 session.
    Peer(Peer<RoleServer>),
    /// One `subscriptions/listen` stream (2026-07-28): rmcp's sink tags each
    /// notification with the stream's subscription id and refuses a URI the
    /// acknowledgment did not name.
    Listen(SubscriptionSink),
}

impl Outlet {
    /// True once nothing sent here can arrive (the transport closed).
    fn closed(&self) -> bool {
        match self {
            Outlet::Peer(p) => p.is_transport_closed(),
            Outlet::Listen(_) => false,
        }
    }

    /// Tells a 2025-11-25 session, as a `notifications/message` at level
    /// `warning` (when its level admits it), that the process's change
    /// listener lost the database and came back, so changes may have been
    /// missed ([`MISSED`]). A `subscriptions/listen` stream carries no
    /// log messages (the revision routes only change notifications
    /// through it): its client learns it from the updates of every URI.
    #[allow(deprecated)] // rmcp marks logging deprecated (SEP-2577); clients still use it.
    async fn missed(&self, admitted: bool) {
        if let Outlet::Peer(p) = self
            && admitted
        {
            let mut param = rmcp::model::LoggingMessageNotificationParam::new(
                rmcp::model::LoggingLevel::Warning,
                serde_json::Value::from(MISSED),
            );
            param.logger = Some(super::logging::LOGGER.to_string());
            let _ = p.notify_logging_message(param).await;
        }
    }

    /// Sends `notifications/resources/updated` for `uri`; false when it
    /// could not be sent (the watcher then stops).
    async fn updated(&self, uri: String) -> bool {
        match self {
            Outlet::Peer(p) => p
                .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                .await
                .is_ok(),
            Outlet::Listen(sink) => sink.notify_resource_updated(uri).await.is_ok(),
        }
    }
}

/// One subscribed URI: what it names and, for a view, the text last seen;
/// for a task, its live claim owner last seen (`None` until first looked
/// at), so a claim that lapses with no event is still heard.
#[derive(Debug, Clone)]
struct Entry {
    target: Target,
    last: Option<String>,
    claim: Option<Option<String>>,
}

#[derive(Debug, Default)]
struct Subs {
    entries: BTreeMap<String, Entry>,
    /// The newest event `seq` already looked at.
    mark: i64,
    /// Cancels the running watcher; `None` when none runs.
    stop: Option<CancellationToken>,
    /// Marks taken by [`CairnServer::accepted_filter`] before rmcp sent a
    /// `subscriptions/listen` acknowledgment, waiting for their stream.
    pending: Vec<i64>,
    /// `subscriptions/listen` streams open on this session (at most
    /// [`MAX_LISTEN_STREAMS`]).
    streams: usize,
}

/// One open `subscriptions/listen` stream, counted in its session's table
/// until dropped.
struct StreamSlot(Subscriptions);

impl Drop for StreamSlot {
    fn drop(&mut self) {
        let mut subs = self.0.lock();
        subs.streams = subs.streams.saturating_sub(1);
    }
}

/// A session's subscriptions (cheap to clone: one shared table).
#[derive(Debug, Clone, Default)]
pub struct Subscriptions {
    inner: Arc<Mutex<Subs>>,
}

/// Reads a subscribed resource again for the watcher: `Ok(text)` or the
/// error's message (either is compared with the last text). `None` when the
/// session is gone.
pub trait Reread: Send + Sync + 'static {
    /// The current text of `target`, or `None` when the session ended.
    fn reread(&self, target: &Target) -> Option<String>;

    /// Whether the session's logging level admits a `warning` (the
    /// [`MISSED`] message); yes unless it says otherwise.
    fn admits_warning(&self) -> bool {
        true
    }
}

/// A [`CairnServer`] that does not keep its session alive: what a
/// subscription watcher holds ([`super::subscriptions`]).
#[derive(Clone)]
pub struct WeakServer {
    state: Weak<Mutex<State>>,
    grants: Arc<BTreeSet<Capability>>,
    roots: RootsPolicy,
    launch: Arc<Mutex<Launch>>,
    roots_stale: Arc<AtomicBool>,
    roots_lock: Arc<tokio::sync::Mutex<()>>,
    log_level: Arc<LevelCell>,
    subs: Subscriptions,
    scratch: Option<(std::path::PathBuf, Arc<AtomicBool>)>,
    ended: CancellationToken,
    stored_current: bool,
    fence: bool,
    peer: Arc<std::sync::OnceLock<Peer<RoleServer>>>,
}

impl WeakServer {
    /// True while the session's server is still held somewhere.
    pub fn alive(&self) -> bool {
        self.state.strong_count() > 0
    }

    /// The server again, or `None` when its session ended.
    pub fn upgrade(&self) -> Option<CairnServer> {
        Some(CairnServer {
            state: self.state.upgrade()?,
            grants: self.grants.clone(),
            roots: self.roots.clone(),
            launch: self.launch.clone(),
            roots_stale: self.roots_stale.clone(),
            roots_lock: self.roots_lock.clone(),
            log_level: self.log_level.clone(),
            subs: self.subs.clone(),
            scratch: self.scratch.clone(),
            ended: self.ended.clone(),
            stored_current: self.stored_current,
            fence: self.fence,
            peer: self.peer.clone(),
        })
    }
}

impl Reread for WeakServer {
    fn reread(&self, target: &Target) -> Option<String> {
        // Compared with the last answer to hear a change: unfenced, or a
        // fresh nonce would read as a change every time.
        let server = self.upgrade()?.with_fence(false);
        Some(match server.read_target(target) {
            Ok(text) => text,
            Err(e) => e.message.to_string(),
        })
    }

    #[allow(deprecated)] // rmcp marks logging deprecated (SEP-2577); clients still use it.
    fn admits_warning(&self) -> bool {
        self.log_level.admits(rmcp::model::LoggingLevel::Warning)
    }
}

impl CairnServer {
    /// A handle that does not keep this session alive.
    pub fn downgrade(&self) -> WeakServer {
        WeakServer {
            state: Arc::downgrade(&self.state),
            grants: self.grants.clone(),
            roots: self.roots.clone(),
            launch: self.launch.clone(),
            roots_stale: self.roots_stale.clone(),
            roots_lock: self.roots_lock.clone(),
            log_level: self.log_level.clone(),
            subs: self.subs.clone(),
            scratch: self.scratch.clone(),
            ended: self.ended.clone(),
            stored_current: self.stored_current,
            fence: self.fence,
            peer: self.peer.clone(),
        }
    }

    /// `resources/subscribe` of a task or view URI: checks that it reads
    /// (an unknown task or view is refused as [`CairnServer::read_target`]
    /// refuses it), records it, and starts the watcher when it is the
    /// session's first subscription. The change counter is opened BEFORE the
    /// view's text is read, so no commit between the two is missed.
    /// Errors: `Unknown resource URI.` for any other URI, the read's errors.
    pub(super) async fn subscribe_uri(
        &self,
        uri: &str,
        peer: Peer<RoleServer>,
    ) -> Result<(), McpError> {
        let outlet = Outlet::Peer(peer);
        let target = parse_uri(uri).ok_or_else(|| unknown_resource(uri))?;
        self.subs
            .admits(uri, &target)
            .map_err(|m| McpError::invalid_request(m, None))?;
        let start = !self.subs.watching();
        let server = self.clone();
        let t = target.clone();
        let job = tokio::task::spawn_blocking(move || {
            let counter = if start {
                let opened = server
                    .change_counter()
                    .and_then(|c| c.high_water().map(|mark| (c, mark)));
                match opened {
                    Ok(pair) => Some(pair),
                    Err(e) => return Err(McpError::internal_error(e.to_string(), None)),
                }
            } else {
                None
            };
            let text = server.read_target(&t)?;
            // A task's live claim now, so a lease running out is heard.
            let claim = server.claim_now(&t);
            Ok((counter, text, claim))
        });
        let (counter, text, claim) = job.await.map_err(|_| {
            McpError::internal_error("The subscription failed; nothing was recorded.", None)
        })??;
        let last = matches!(target, Target::View(_)).then_some(text);
        self.subs.add(uri, target, last);
        if claim.is_some() {
            self.subs.seen_claim(uri, claim);
        }
        if let Some((counter, mark)) = counter {
            self.subs.start(counter, mark, outlet, self.downgrade());
        }
        tracing::debug!(uri = %uri, "subscribed");
        Ok(())
    }
}

impl CairnServer {
    /// The live claim owner of the task `target` names (`Some(None)`: no
    /// live claim), so a lease running out is heard; `None` for a view or
    /// a store without a change stream (PostgreSQL, docs/team.md).
    fn claim_now(&self, target: &Target) -> Option<Option<String>> {
        let Target::Task(slug) = target else {
            return None;
        };
        let st = self.lock();
        st.store.r().sqlite().and_then(|s| {
            crate::store::changes::live_claims(
                s.conn(),
                std::slice::from_ref(slug),
                crate::store::now(),
            )
            .ok()
            .map(|rows| rows.into_iter().next().and_then(|(_, owner)| owner))
        })
    }

    /// What this server accepts of a `subscriptions/listen` filter
    /// (2026-07-28; docs/mcp.md "Protocol eras"): the task and view URIs
    /// ([`parse_uri`]) within [`MAX_SUBSCRIPTIONS`] URIs and [`MAX_VIEWS`]
    /// distinct views, in the order asked, when the session holds `read`
    /// (what `resources/read` needs). Existence is not checked: a task or
    /// view that does not exist yet is heard once an event creates it. List
    /// changes are never accepted: cairn's tools, prompts and resources are
    /// fixed for a server's life.
    pub fn accepted_filter(&self, requested: &SubscriptionFilter) -> SubscriptionFilter {
        let mut accepted = SubscriptionFilter::new();
        if !self.grants.contains(&Capability::Read) {
            return accepted;
        }
        let table = Subscriptions::default();
        let mut uris = Vec::new();
        for uri in requested.resource_subscriptions.iter().flatten() {
            let Some(target) = parse_uri(uri) else {
                continue;
            };
            if table.admits(uri, &target).is_ok() && !uris.contains(uri) {
                table.add(uri, target, None);
                uris.push(uri.clone());
            }
        }
        if !uris.is_empty() {
            accepted.resource_subscriptions = Some(uris);
            // rmcp acknowledges BEFORE it calls `listen`: the stream's mark
            // is taken now, so a write right after the acknowledgment (by
            // this client or anyone it told) is heard, not folded into it.
            if let Some(mark) = self.mark_now() {
                let mut subs = self.subs.lock();
                subs.pending.push(mark);
                // Acknowledged streams that never started: keep the oldest.
                if subs.pending.len() > MAX_PENDING_MARKS {
                    subs.pending.sort_unstable();
                    subs.pending.truncate(MAX_PENDING_MARKS);
                }
            }
        }
        accepted
    }

    /// The store's event count now (a lower bound of the newest `seq`: a
    /// lower mark can only notify once more, never miss), read on a
    /// thread of its own (this runs inside rmcp's async handler and the
    /// PostgreSQL client must not block a runtime thread); `None` when the
    /// read fails (the stream then takes its mark when it starts).
    fn mark_now(&self) -> Option<i64> {
        std::thread::scope(|s| {
            s.spawn(|| self.lock().store.r().event_count().ok())
                .join()
                .ok()
                .flatten()
        })
    }

    /// Serves one `subscriptions/listen` stream (the acknowledgment already
    /// sent by rmcp) until the client cancels it, the transport closes or
    /// the server's agent ends ([`CairnServer::end`]; rmcp then sends the
    /// stream's final result):
    /// its own table of the accepted URIs and its own watcher, as
    /// `resources/subscribe` has ([`Subscriptions`]), notifying through the
    /// stream's sink. Errors: the change counter cannot be opened; the
    /// session already holds [`MAX_LISTEN_STREAMS`] streams.
    pub(super) async fn listen_stream(&self, ctx: SubscriptionContext) -> Result<(), McpError> {
        let _slot = {
            let mut subs = self.subs.lock();
            if subs.streams >= MAX_LISTEN_STREAMS {
                return Err(McpError::invalid_request(
                    format!(
                        "This session already holds {MAX_LISTEN_STREAMS} subscriptions/listen streams, the most one session (one token over HTTP) may; cancel one, or listen to up to {MAX_SUBSCRIPTIONS} URIs in one stream."
                    ),
                    None,
                ));
            }
            subs.streams += 1;
            StreamSlot(self.subs.clone())
        };
        let uris = ctx
            .accepted()
            .resource_subscriptions
            .clone()
            .unwrap_or_default();
        if uris.is_empty() {
            tokio::select! {
                () = ctx.cancelled() => {}
                () = self.ended.cancelled() => {}
            }
            return Ok(());
        }
        // The earliest mark taken before an acknowledgment (concurrent
        // listens may pair up differently; the earliest never misses).
        let early = {
            let mut subs = self.subs.lock();
            let min = subs.pending.iter().copied().min();
            if let Some(i) = subs.pending.iter().position(|m| Some(*m) == min) {
                subs.pending.swap_remove(i);
            }
            min
        };
        let mut server = self.clone();
        server.subs = Subscriptions::default();
        let reader = server.clone();
        let job = tokio::task::spawn_blocking(move || {
            let counter = reader
                .change_counter()
                .and_then(|c| c.high_water().map(|mark| (c, mark)))
                .map_err(|e| McpError::internal_error(e.to_string(), None))?;
            let rows: Vec<_> = uris
                .into_iter()
                .filter_map(|uri| {
                    let target = parse_uri(&uri)?;
                    let last = match &target {
                        Target::View(_) => Some(match reader.read_target(&target) {
                            Ok(text) => text,
                            Err(e) => e.message.to_string(),
                        }),
                        Target::Task(_) => None,
                    };
                    let claim = reader.claim_now(&target);
                    Some((uri, target, last, claim))
                })
                .collect();
            Ok::<_, McpError>((counter, rows))
        });
        let ((counter, mark), rows) = job.await.map_err(|_| {
            McpError::internal_error("The subscription failed; nothing is watched.", None)
        })??;
        for (uri, target, last, claim) in rows {
            server.subs.add(&uri, target, last);
            if claim.is_some() {
                server.subs.seen_claim(&uri, claim);
            }
        }
        server.subs.start(
            counter,
            early.map_or(mark, |e| e.min(mark)),
            Outlet::Listen(ctx.sink().clone()),
            server.downgrade(),
        );
        tracing::debug!(uris = server.subs.uris().len(), "listening");
        tokio::select! {
            () = ctx.cancelled() => {}
            () = self.ended.cancelled() => {}
        }
        server.subs.clear();
        Ok(())
    }
}

impl Subscriptions {
    /// Unsubscribes everything and stops the watcher.
    pub fn clear(&self) {
        let mut subs = self.lock();
        subs.entries.clear();
        if let Some(stop) = subs.stop.take() {
            stop.cancel();
        }
    }

    fn lock(&self) -> MutexGuard<'_, Subs> {
        match self.inner.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    /// True while a watcher runs (at least one subscription exists).
    pub fn watching(&self) -> bool {
        self.lock().stop.is_some()
    }

    /// Whether `uri` (naming `target`) may be added: always when it is
    /// already subscribed; else within [`MAX_SUBSCRIPTIONS`] URIs and
    /// [`MAX_VIEWS`] distinct views. Errors: the sentence to answer with.
    pub fn admits(&self, uri: &str, target: &Target) -> Result<(), String> {
        let subs = self.lock();
        if subs.entries.contains_key(uri) {
            return Ok(());
        }
        if subs.entries.len() >= MAX_SUBSCRIPTIONS {
            return Err(format!(
                "This session holds {MAX_SUBSCRIPTIONS} subscriptions, the most one session may; unsubscribe from one first."
            ));
        }
        if let Target::View(_) = target {
            let views: BTreeSet<&Target> = subs
                .entries
                .values()
                .map(|e| &e.target)
                .filter(|t| matches!(t, Target::View(_)))
                .collect();
            if !views.contains(target) && views.len() >= MAX_VIEWS {
                return Err(format!(
                    "This session watches {MAX_VIEWS} views, the most one session may; unsubscribe from one first."
                ));
            }
        }
        Ok(())
    }

    /// The subscribed URIs, sorted.
    pub fn uris(&self) -> Vec<String> {
        self.lock().entries.keys().cloned().collect()
    }

    /// Subscribes `uri` (naming `target`); `last` is the view's current text
    /// (`None` for a task). Subscribing again replaces the entry.
    pub fn add(&self, uri: &str, target: Target, last: Option<String>) {
        self.lock().entries.insert(
            uri.to_string(),
            Entry {
                target,
                last,
                claim: None,
            },
        );
    }

    /// Records `claim` (`Some(live owner or None)`) as the claim last seen
    /// on the task `uri` names.
    pub fn seen_claim(&self, uri: &str, claim: Option<Option<String>>) {
        if let Some(e) = self.lock().entries.get_mut(uri) {
            e.claim = claim;
        }
    }

    /// Unsubscribes `uri` (nothing when it was not subscribed); stops the
    /// watcher when it was the last.
    pub fn remove(&self, uri: &str) {
        let mut subs = self.lock();
        subs.entries.remove(uri);
        if subs.entries.is_empty()
            && let Some(stop) = subs.stop.take()
        {
            stop.cancel();
        }
    }

    /// Starts the watcher with `counter` (opened before the subscribed
    /// texts were read) and `mark` (its high-water mark then), unless one
    /// already runs or nothing is subscribed. Must run inside a tokio runtime.
    pub fn start(&self, counter: ChangeCounter, mark: i64, outlet: Outlet, reread: impl Reread) {
        let stop = {
            let mut subs = self.lock();
            if subs.stop.is_some() || subs.entries.is_empty() {
                return;
            }
            let stop = CancellationToken::new();
            subs.stop = Some(stop.clone());
            subs.mark = mark;
            stop
        };
        let subs = self.clone();
        tokio::spawn(watch(subs, counter, outlet, Arc::new(reread), stop));
    }

    /// One poll: the URIs to notify, in order (tasks then views, each
    /// sorted). `force_views` re-runs the views even when nothing committed.
    /// A failed read of the counter notifies nothing (logged).
    fn poll(
        &self,
        counter: &mut ChangeCounter,
        reread: &dyn Reread,
        force_views: bool,
        hint: bool,
    ) -> Poll {
        // After a commit signal or a write of this process the log is read
        // whatever this counter says: its own PostgreSQL listener may not
        // have received the NOTIFY yet (the mark keeps a second look from
        // notifying twice).
        let moved = match counter.moved() {
            Ok(m) => m || hint,
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the change counter");
                return Poll::Notify(Vec::new());
            }
        };
        let mut out = Vec::new();
        if moved {
            let (mark, tasks) = {
                let subs = self.lock();
                let tasks: Vec<(String, String)> = subs
                    .entries
                    .iter()
                    .filter_map(|(uri, e)| match &e.target {
                        Target::Task(slug) => Some((uri.clone(), slug.clone())),
                        Target::View(_) => None,
                    })
                    .collect();
                (subs.mark, tasks)
            };
            let touched = counter.high_water().and_then(|high| {
                let slugs: Vec<String> = tasks.iter().map(|(_, s)| s.clone()).collect();
                // Up to `high`, never past it: an event committed after
                // the high-water read is the next poll's, not seen twice.
                Ok((high, counter.touched(mark, high, &slugs)?))
            });
            match touched {
                Ok((high, touched)) => {
                    self.lock().mark = high;
                    out.extend(
                        tasks
                            .into_iter()
                            .filter(|(_, slug)| touched.binary_search(slug).is_ok())
                            .map(|(uri, _)| uri),
                    );
                }
                Err(e) => tracing::warn!(error = %e, "cannot read the event log"),
            }
        }
        if moved || force_views {
            self.claims_lapsed(counter, &mut out);
            // Each distinct view runs once, whatever number of URIs name it.
            let mut views: BTreeMap<Target, Vec<String>> = BTreeMap::new();
            for (uri, e) in self.lock().entries.iter() {
                if matches!(e.target, Target::View(_)) {
                    views.entry(e.target.clone()).or_default().push(uri.clone());
                }
            }
            for (target, uris) in views {
                let Some(text) = reread.reread(&target) else {
                    return Poll::Gone;
                };
                let mut subs = self.lock();
                for uri in uris {
                    // Unsubscribed while the view ran: nothing to say.
                    if let Some(e) = subs.entries.get_mut(&uri)
                        && e.last.as_deref() != Some(text.as_str())
                    {
                        e.last = Some(text.clone());
                        out.push(uri);
                    }
                }
            }
        }
        Poll::Notify(out)
    }
}

impl Subscriptions {
    /// Adds to `out` the subscribed task URIs whose live claim owner
    /// differs from the one last seen (a lease that ran out makes no event);
    /// the first look at a task only records it. A failed read notifies
    /// nothing (logged).
    fn claims_lapsed(&self, counter: &ChangeCounter, out: &mut Vec<String>) {
        let slugs: Vec<String> = {
            let subs = self.lock();
            let set: BTreeSet<String> = subs
                .entries
                .values()
                .filter_map(|e| match &e.target {
                    Target::Task(slug) => Some(slug.clone()),
                    Target::View(_) => None,
                })
                .collect();
            set.into_iter().collect()
        };
        let owners = match counter.live_claims(&slugs, crate::store::now()) {
            Ok(o) => o.into_iter().collect::<BTreeMap<String, Option<String>>>(),
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the claims");
                return;
            }
        };
        let mut subs = self.lock();
        for (uri, e) in subs.entries.iter_mut() {
            let Target::Task(slug) = &e.target else {
                continue;
            };
            let now = owners.get(slug).cloned().flatten();
            let changed = e.claim.as_ref().is_some_and(|seen| *seen != now);
            e.claim = Some(now);
            if changed && !out.contains(uri) {
                out.push(uri.clone());
            }
        }
    }
}

enum Poll {
    Notify(Vec<String>),
    Gone,
}

/// The watcher: at once after a commit to the store (the process's commit
/// signal, [`crate::store::commits`]: one thread per store, however many
/// sessions listen) and after a write of this process ([`wrote`]), else
/// every [`SIGNALLED_TICK`] (every [`POLL_INTERVAL`] when the signal could
/// not start), a [`Subscriptions::poll`] on the blocking pool, then one
/// notification per URI it names. The first poll runs at once: a commit
/// between the mark and the signal's start is read then. Ends on `stop`, a
/// closed transport, a failed send, or a session that went away.
async fn watch(
    subs: Subscriptions,
    counter: ChangeCounter,
    outlet: Outlet,
    reread: Arc<dyn Reread>,
    stop: CancellationToken,
) {
    let Ok((counter, signal)) = tokio::task::spawn_blocking(move || {
        let signal = counter.commits();
        (counter, signal)
    })
    .await
    else {
        return;
    };
    let mut commits = match signal {
        Ok(rx) => Some(rx),
        Err(e) => {
            tracing::warn!(error = %e, "no commit signal; polling");
            None
        }
    };
    let mut reconnects = commits.as_ref().map_or(0, |rx| rx.borrow().reconnects);
    let mut counter = Some(counter);
    let mut views_at = Instant::now();
    let mut local = LOCAL_WRITES.subscribe();
    let mut first = true;
    loop {
        let tick = if commits.is_some() {
            SIGNALLED_TICK
        } else {
            POLL_INTERVAL
        };
        let hint = first
            || tokio::select! {
                _ = stop.cancelled() => break,
                _ = tokio::time::sleep(tick) => false,
                // A write of this process: poll now (a missed wake-up cannot
                // happen: `changed` remembers the generation last seen).
                _ = local.changed() => true,
                moved = next_commit(&mut commits) => moved,
            };
        first = false;
        local.mark_unchanged();
        if outlet.closed() {
            break;
        }
        let Some(mut c) = counter.take() else { break };
        let force = views_at.elapsed() >= VIEW_REFRESH;
        if force {
            views_at = Instant::now();
        }
        let (s, r) = (subs.clone(), reread.clone());
        let job = tokio::task::spawn_blocking(move || {
            let poll = s.poll(&mut c, r.as_ref(), force, hint);
            (c, poll)
        });
        let Ok((c, poll)) = job.await else { break };
        counter = Some(c);
        let mut uris = match poll {
            Poll::Notify(uris) => uris,
            Poll::Gone => break,
        };
        if stop.is_cancelled() {
            break;
        }
        // The listener lost the database meanwhile: say so, and announce
        // every subscribed URI (a change may have slipped by unheard).
        let now = commits
            .as_ref()
            .map_or(reconnects, |rx| rx.borrow().reconnects);
        if now != reconnects {
            reconnects = now;
            tracing::info!("telling the session that changes may have been missed");
            outlet.missed(reread.admits_warning()).await;
            for uri in subs.uris() {
                if !uris.contains(&uri) {
                    uris.push(uri);
                }
            }
        }
        for uri in uris {
            tracing::debug!(uri = %uri, "resource updated");
            if !outlet.updated(uri).await {
                stop.cancel();
                break;
            }
        }
    }
    // Free the slot unless a later start already owns it: `remove` takes a
    // token out before cancelling it, so a cancelled token in the slot can
    // only be this watcher's.
    stop.cancel();
    let mut inner = subs.lock();
    if inner.stop.as_ref().is_some_and(|s| s.is_cancelled()) {
        inner.stop = None;
    }
}

/// The next bump of the commit signal: true, or false (and no signal from
/// then on) when its thread ended; never resolves without a signal.
async fn next_commit(
    commits: &mut Option<tokio::sync::watch::Receiver<crate::store::commits::Generation>>,
) -> bool {
    match commits {
        Some(rx) => {
            if rx.changed().await.is_ok() {
                true
            } else {
                *commits = None;
                false
            }
        }
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn view(name: &str) -> Target {
        Target::View(name.to_string())
    }

    #[test]
    fn subscriptions_are_capped_per_session() {
        let subs = Subscriptions::default();
        for i in 0..MAX_VIEWS {
            let t = view(&format!("v{i}"));
            subs.admits(&format!("cairn://views/v{i}"), &t).unwrap();
            subs.add(&format!("cairn://views/v{i}"), t, None);
        }
        assert_eq!(
            subs.admits("cairn://views/w", &view("w")).unwrap_err(),
            "This session watches 16 views, the most one session may; unsubscribe from one first."
        );
        // Another spelling of a watched view, and a task, still fit.
        assert!(subs.admits("cairn://views/%76%30", &view("v0")).is_ok());
        let task = Target::Task("t".into());
        assert!(subs.admits("cairn://tasks/t", &task).is_ok());
        for i in MAX_VIEWS..MAX_SUBSCRIPTIONS {
            subs.add(
                &format!("cairn://tasks/t{i}"),
                Target::Task(format!("t{i}")),
                None,
            );
        }
        assert_eq!(
            subs.admits("cairn://tasks/t", &task).unwrap_err(),
            "This session holds 1000 subscriptions, the most one session may; unsubscribe from one first."
        );
        // Subscribing again to a held URI is always accepted.
        assert!(subs.admits("cairn://views/v3", &view("v3")).is_ok());
    }

    struct Counting(AtomicUsize);

    impl Reread for Arc<Counting> {
        fn reread(&self, _target: &Target) -> Option<String> {
            let n = self.0.fetch_add(1, Ordering::SeqCst);
            Some(format!("text {n}"))
        }
    }

    #[test]
    fn uris_naming_one_view_share_one_run() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("cairn.db");
        crate::store::Store::open(&db).unwrap();
        let mut counter = ChangeCounter::open(&db).unwrap();
        let subs = Subscriptions::default();
        for uri in [
            "cairn://views/ready",
            "cairn://views/%72eady",
            "cairn://views/re%61dy",
        ] {
            subs.add(uri, view("ready"), Some("old".into()));
        }
        subs.add("cairn://views/recent", view("recent"), Some("old".into()));
        let runs = Arc::new(Counting(AtomicUsize::new(0)));
        let Poll::Notify(uris) = subs.poll(&mut counter, &runs, true, false) else {
            panic!("the session is there");
        };
        assert_eq!(
            runs.0.load(Ordering::SeqCst),
            2,
            "one run per distinct view"
        );
        assert_eq!(uris.len(), 4, "{uris:?}");
    }
}
