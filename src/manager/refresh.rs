//! Keeping a managed server's lists fresh through `listen` (either era), and subscriptions
//! the caller opens through the manager, which outlive the server's reconnections.
//!
//! After every connection the supervisor opens one list subscription for the server (tools,
//! prompts and resources list changes, whatever the server honours) and re-opens every
//! [`ManagedSubscription`] on the new client. Each watch tick it drains them: list changes
//! mark the server's entries stale and ask the supervisor to list again, stateless-era
//! notifications go to the manager's queue tagged with the server's name and
//! [`NotificationSource::Subscription`] (handshake-era ones are there already, from the
//! session), and the managed handles get what their client subscriptions delivered. A
//! managed handle re-opened on a new connection first gets
//! [`SubscriptionEvent::Resubscribed`]: the server was away, notifications may be lost.
//!
//! Every subscription the manager opens holds [`MANAGED_CAPACITY`] events between two ticks
//! (the client's own notification queue stays small: the manager reads notifications through
//! the callback), and the subscriptions of a new connection are opened in parallel, so that a
//! server slow to acknowledge costs one request timeout, not one per subscription.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use crate::client::queued::{self, Lossy};
use crate::client::{Client, Era, RequestOptions, Subscription, SubscriptionEvent};
use crate::types::{ServerNotification, SubscriptionFilter};

use super::slot::Slot;
use super::status::{Hub, NotificationSource, TaggedNotification};
use crate::sync::lock;

/// The events one managed handle holds before the oldest unread is dropped; also what the
/// client-side subscriptions the manager opens hold between two of its ticks.
pub(crate) const MANAGED_CAPACITY: usize = 256;

/// The most subscriptions of one connection opened at the same time (the supervisor's
/// thread counts as one).
const OPENING_THREADS: usize = 8;

/// The first and the longest wait before a managed subscription the server did not open is
/// asked for again on the same connection (a new connection always asks at once).
const REOPEN_FIRST: Duration = Duration::from_secs(1);
const REOPEN_MAX: Duration = Duration::from_secs(60);

/// What a tick asks the supervisor to list again.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Wanted {
    pub(crate) tools: bool,
    pub(crate) prompts: bool,
}

/// The subscriptions of one connection.
pub(crate) struct Fresh {
    lists: Option<Subscription>,
    modern: bool,
}

impl Fresh {
    /// Opens the list subscription and the managed ones on a new connection, in parallel;
    /// `reconnected` says whether an earlier connection existed (then the managed handles
    /// hear of the gap). Each waits for its acknowledgement up to the server's start-up timeout,
    /// not the request timeout: a proxy that holds a stream until it ends holds the
    /// acknowledgement too, and the server is shown connected only after this.
    pub(crate) fn open(slot: &Slot, client: &Client, reconnected: bool) -> Fresh {
        let managed = lock(&slot.subscriptions).clone();
        let lists = Mutex::new(None);
        // Job 0 is the list subscription, job `n` the managed subscription `n - 1`.
        let jobs = managed.len() + 1;
        let next = AtomicUsize::new(0);
        let within = RequestOptions::default().with_timeout(slot.startup_timeout);
        let work = || loop {
            let job = next.fetch_add(1, Ordering::SeqCst);
            match job.checked_sub(1) {
                _ if job >= jobs => return,
                None => *lock(&lists) = open_lists(slot, client),
                Some(index) => managed[index].attach(client, reconnected, &within),
            }
        };
        std::thread::scope(|scope| {
            // A thread that cannot be started leaves its share to the others: this thread
            // takes jobs too, so every job is done whatever the others.
            let name = format!("umcp-listen-{}", slot.name()).replace('\0', "?");
            for _ in 1..jobs.min(OPENING_THREADS) {
                let spawned = std::thread::Builder::new()
                    .name(name.clone())
                    .spawn_scoped(scope, work);
                if let Err(err) = spawned {
                    log::debug!(
                        "server `{}`: no thread to open a subscription: {err}",
                        slot.name()
                    );
                    break;
                }
            }
            work();
        });
        Fresh {
            lists: lists
                .into_inner()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
            modern: client.era() == Era::Modern,
        }
    }

    /// Drains what arrived since the last tick.
    pub(crate) fn tick(&self, slot: &Slot, client: &Client, hub: &Hub) -> Wanted {
        let mut wanted = Wanted::default();
        if let Some(lists) = &self.lists {
            while let Some(event) = lists.try_recv() {
                let note = match event {
                    SubscriptionEvent::Notification(note) => note,
                    SubscriptionEvent::Resubscribed { .. } => {
                        // Whatever changed in the gap: list everything again.
                        wanted.tools = true;
                        wanted.prompts = true;
                        continue;
                    }
                };
                match note {
                    ServerNotification::ToolListChanged => wanted.tools = true,
                    ServerNotification::PromptListChanged => wanted.prompts = true,
                    _ => {}
                }
                if self.modern {
                    if let Some(notes) = hub.notes() {
                        notes.push(TaggedNotification {
                            server: slot.name().to_owned(),
                            notification: note,
                            source: NotificationSource::Subscription,
                        });
                    }
                }
            }
        }
        if wanted.tools {
            slot.state().tools_fresh = false;
        }
        if wanted.prompts {
            slot.state().prompts_fresh = false;
        }
        let managed = lock(&slot.subscriptions).clone();
        for sub in managed {
            sub.forward(client);
        }
        wanted
    }
}

/// Opens the subscription to the server's list changes.
fn open_lists(slot: &Slot, client: &Client) -> Option<Subscription> {
    let within = RequestOptions::default().with_timeout(slot.startup_timeout);
    match client.with(&within).listen(SubscriptionFilter::all_lists()) {
        Ok(sub) => Some(sub),
        Err(err) => {
            log::debug!("server `{}`: cannot follow its lists: {err}", slot.name());
            None
        }
    }
}

/// Lists the server's prompts again into its slot.
pub(crate) fn relist_prompts(slot: &Slot, client: &Client) {
    let prompts = if client.server_capabilities().supports_prompts() {
        match client.list_all_prompts() {
            Ok(prompts) => prompts,
            Err(err) => {
                log::debug!("server `{}`: listing prompts failed: {err}", slot.name());
                return;
            }
        }
    } else {
        Vec::new()
    };
    let mut state = slot.state();
    state.prompts = prompts;
    state.prompts_fresh = true;
}

/// A managed subscription as the slot and the handle share it.
pub(crate) struct ManagedSub {
    filter: SubscriptionFilter,
    /// The subscription on the current connection.
    current: Mutex<Option<Subscription>>,
    /// Events for the handle; bounded by count and bytes, the oldest unread dropped when full.
    events: Lossy<SubscriptionEvent>,
    /// An event read from `events` and held back while a gap before it is reported.
    held: Mutex<Option<SubscriptionEvent>>,
    /// The events dropped in all (here, and by the subscriptions on the client), and those
    /// dropped here that the reader has not heard of yet (the client's report their own).
    dropped: AtomicU64,
    unreported: AtomicU64,
    /// How many events the current client-side subscription had dropped when last forwarded.
    seen_dropped: AtomicU64,
    closed: AtomicBool,
    /// After a failed opening: when to ask again, and the wait that led there (doubled on
    /// each failure), so a server that refuses is not asked every watch tick.
    reopen: Mutex<Option<(Instant, Duration)>>,
}

impl ManagedSub {
    /// Opens the subscription on `client`, waiting for its acknowledgement as `within` says.
    fn attach(&self, client: &Client, reconnected: bool, within: &RequestOptions) {
        if self.closed.load(Ordering::SeqCst) {
            return;
        }
        let had_one = lock(&self.current).take().is_some();
        match client.with(within).listen(self.filter.clone()) {
            Ok(sub) => {
                self.seen_dropped.store(0, Ordering::SeqCst);
                *lock(&self.current) = Some(sub);
                *lock(&self.reopen) = None;
                if reconnected || had_one {
                    self.push(SubscriptionEvent::Resubscribed {
                        reason: "the server reconnected".into(),
                    });
                }
            }
            Err(err) => {
                let mut reopen = lock(&self.reopen);
                let wait = reopen.map_or(REOPEN_FIRST, |(_, last)| (last * 2).min(REOPEN_MAX));
                log::debug!("cannot open a managed subscription: {err}; again in {wait:?}");
                *reopen = Some((Instant::now() + wait, wait));
            }
        }
    }

    fn forward(&self, client: &Client) {
        let mut current = lock(&self.current);
        let Some(sub) = current.as_ref() else {
            drop(current);
            // Opening failed on this connection earlier: try again, once its wait is over.
            let due = lock(&self.reopen).is_none_or(|(at, _)| Instant::now() >= at);
            if due {
                self.attach(client, false, &RequestOptions::default());
            }
            return;
        };
        while let Some(event) = sub.try_recv() {
            self.push(event);
        }
        // Drops on the client's side are reported in its stream; here they are only counted.
        let dropped = sub.dropped();
        let seen = self.seen_dropped.swap(dropped, Ordering::SeqCst);
        self.dropped
            .fetch_add(dropped.saturating_sub(seen), Ordering::SeqCst);
        if sub.ended().is_some() && client.closed().is_none() {
            // The server ended it on a live connection: open it again, reporting the gap.
            log::debug!(
                "a managed subscription ended ({:?}); re-opening",
                sub.ended()
            );
            current.take();
            drop(current);
            self.attach(client, true, &RequestOptions::default());
        }
    }

    fn push(&self, event: SubscriptionEvent) {
        let size = match &event {
            SubscriptionEvent::Notification(note) => queued::size(note),
            _ => 0,
        };
        let dropped = self.events.push(event, size) as u64;
        if dropped > 0 {
            self.dropped.fetch_add(dropped, Ordering::SeqCst);
            self.unreported.fetch_add(dropped, Ordering::SeqCst);
            log::debug!("managed subscription queue full; dropped its oldest event");
        }
    }

    /// The next event from `received` (`None`: nothing arrived), after the one held back,
    /// and preceded by the report of a gap when events were dropped before it.
    fn next(
        &self,
        received: impl FnOnce() -> Option<SubscriptionEvent>,
    ) -> Option<SubscriptionEvent> {
        if let Some(event) = lock(&self.held).take() {
            return Some(event);
        }
        let event = received()?;
        let dropped = self.unreported.swap(0, Ordering::SeqCst);
        if dropped == 0 || matches!(event, SubscriptionEvent::Resubscribed { .. }) {
            return Some(event);
        }
        *lock(&self.held) = Some(event);
        Some(SubscriptionEvent::Resubscribed {
            reason: format!("the subscription's queue was full: {dropped} events were dropped"),
        })
    }
}

/// A subscription to one managed server that survives its reconnections: after a restart it
/// is opened again and reports [`SubscriptionEvent::Resubscribed`] before new notifications.
/// Dropping it (or [`close`](ManagedSubscription::close)) ends it.
///
/// It holds 256 unread events (and at most
/// [`NOTIFICATION_BYTES`](crate::NOTIFICATION_BYTES)), which a burst of resource updates
/// fits; past that the oldest unread are dropped, counted
/// ([`dropped`](ManagedSubscription::dropped)) and reported as a
/// [`SubscriptionEvent::Resubscribed`] before the next event.
///
/// See the example on [`Manager::listen`](crate::Manager::listen).
pub struct ManagedSubscription {
    server: String,
    slot: Weak<Slot>,
    sub: Arc<ManagedSub>,
}

impl ManagedSubscription {
    /// Subscribes to `filter` on the server of `slot`, named `server`, now when it is
    /// connected and then after every reconnection.
    pub(super) fn open(server: &str, slot: &Arc<Slot>, filter: SubscriptionFilter) -> Self {
        let sub = Arc::new(ManagedSub {
            filter,
            current: Mutex::new(None),
            events: Lossy::new(MANAGED_CAPACITY),
            held: Mutex::new(None),
            dropped: AtomicU64::new(0),
            unreported: AtomicU64::new(0),
            seen_dropped: AtomicU64::new(0),
            closed: AtomicBool::new(false),
            reopen: Mutex::new(None),
        });
        // Opened here when connected, so the caller misses nothing from now on; otherwise
        // (or if this fails) by the supervisor's next tick.
        if let Ok(client) = slot.client() {
            sub.attach(&client, false, &RequestOptions::default());
        }
        lock(&slot.subscriptions).push(Arc::clone(&sub));
        ManagedSubscription {
            server: server.to_owned(),
            slot: Arc::downgrade(slot),
            sub,
        }
    }

    /// The server's name.
    ///
    /// See the example on [`Manager::listen`](crate::Manager::listen).
    pub fn server(&self) -> &str {
        &self.server
    }

    /// The subset the server honours on the current connection (empty while disconnected).
    ///
    /// See the example on [`Manager::listen`](crate::Manager::listen).
    pub fn acknowledged(&self) -> SubscriptionFilter {
        lock(&self.sub.current)
            .as_ref()
            .map(Subscription::acknowledged)
            .unwrap_or_default()
    }

    /// Waits for the next event; `None` once closed, or once its server is stopped
    /// ([`Manager::remove`](crate::Manager::remove) or [`Manager::close`](crate::Manager::close)).
    ///
    /// See the example on [`Manager::listen`](crate::Manager::listen).
    pub fn recv(&self) -> Option<SubscriptionEvent> {
        // The channel never disconnects (the handle holds both ends): wait in steps, so a
        // closed handle or a stopped server is noticed. A closed manager keeps its stopped
        // servers' slots, so the slot being alive says nothing.
        loop {
            if let Some(event) = self.recv_timeout(Duration::from_secs(1)) {
                return Some(event);
            }
            let stopped = self.slot.upgrade().is_none_or(|slot| slot.is_stopping());
            if self.sub.closed.load(Ordering::SeqCst) || stopped {
                return None;
            }
        }
    }

    /// Like [`recv`](ManagedSubscription::recv), waiting at most `timeout`.
    ///
    /// See the example on [`Manager::listen`](crate::Manager::listen).
    pub fn recv_timeout(&self, timeout: Duration) -> Option<SubscriptionEvent> {
        match Instant::now().checked_add(timeout) {
            Some(deadline) => {
                let events = self.sub.events.receiver();
                self.sub.next(|| events.recv_deadline(deadline).ok())
            }
            None => self.recv(),
        }
    }

    /// The next event if one is waiting.
    ///
    /// See the example on [`Manager::listen`](crate::Manager::listen).
    pub fn try_recv(&self) -> Option<SubscriptionEvent> {
        let events = self.sub.events.receiver();
        self.sub.next(|| events.try_recv().ok())
    }

    /// How many events were dropped unread because a queue was full, in all (see
    /// [`ManagedSubscription`]).
    ///
    /// See the example on [`Manager::listen`](crate::Manager::listen).
    pub fn dropped(&self) -> u64 {
        self.sub.dropped.load(Ordering::SeqCst)
    }

    /// The events until the handle is closed or its server stopped.
    ///
    /// See the example on [`Manager::listen`](crate::Manager::listen).
    pub fn iter(&self) -> impl Iterator<Item = SubscriptionEvent> + '_ {
        std::iter::from_fn(move || self.recv())
    }

    /// Ends the subscription on the server and in the manager. Idempotent.
    ///
    /// See the example on [`Manager::listen`](crate::Manager::listen).
    pub fn close(&self) {
        if self.sub.closed.swap(true, Ordering::SeqCst) {
            return;
        }
        if let Some(slot) = self.slot.upgrade() {
            lock(&slot.subscriptions).retain(|s| !Arc::ptr_eq(s, &self.sub));
        }
        if let Some(sub) = lock(&self.sub.current).take() {
            sub.close();
        }
    }
}

impl Drop for ManagedSubscription {
    fn drop(&mut self) {
        self.close();
    }
}

impl std::fmt::Debug for ManagedSubscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ManagedSubscription")
            .field("server", &self.server)
            .field("filter", &self.sub.filter)
            .finish_non_exhaustive()
    }
}
