//! One subscription's shared state (what it delivers and how it ends), and the registry of a
//! connection's subscriptions.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

use crossbeam_channel::Receiver;

use crate::error::Error;
use crate::sync::lock;
use crate::types::{ServerNotification, SubscriptionFilter};

use super::super::engine::queued::{self, Lossy};

/// Something a [`Subscription`](crate::Subscription) delivers.
///
/// See the example on [`Client::listen`](crate::Client::listen).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum SubscriptionEvent {
    /// A notification the subscription asked for.
    Notification(ServerNotification),
    /// Notifications may have been missed, so re-list what matters: the subscription's
    /// stream broke and was opened again (stateless era), the connection's stream of
    /// server messages was reopened or a new session began (handshake era), or the
    /// subscription's queue was full and its oldest unread events were dropped (counted by
    /// [`Subscription::dropped`](crate::Subscription::dropped)); the event comes before the
    /// first event read after the gap. After a broken stream or a new session the client's
    /// cached results are dropped too, so the re-listing reaches the server.
    ///
    /// A broken stateless HTTP stream is opened again under a new id: at once after a
    /// stream that lived 10 s or delivered events, otherwise after a pause that starts at
    /// 100 ms and doubles with each quick break up to 10 s, so a server that acknowledges and
    /// drops every stream cannot make the client spin (see
    /// [`Subscription::recv_timeout`](crate::Subscription::recv_timeout) for what the reading
    /// calls do meanwhile). A handshake-era session GET stream that drops and is opened
    /// again is reported even when resumed with `Last-Event-ID`, since servers need not
    /// replay.
    Resubscribed {
        /// Why it had to be opened again.
        reason: String,
    },
}

/// How a subscription ended.
///
/// See the example on [`Client::listen`](crate::Client::listen).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SubscriptionEnd {
    /// The server ended it gracefully with a `subscriptions/listen` result.
    Completed,
    /// The server cancelled the listen request (`notifications/cancelled`, stdio).
    CancelledByServer {
        /// The reason the server gave.
        reason: Option<String>,
    },
    /// The handle was closed or dropped.
    Closed,
    /// The connection ended.
    ConnectionLost {
        /// Why.
        reason: String,
    },
    /// The server answered the listen request, or the one opening it again, with an error
    /// (other failures to open it again are tried again after a pause).
    Failed {
        /// The error.
        reason: String,
    },
}

/// What the router hands to a subscription's handle.
pub(crate) enum Item {
    /// Something for the caller.
    Event(SubscriptionEvent),
    /// The stream broke without a result; the handle opens it again.
    Broken(String),
    /// The current listen request was acknowledged or refused (stateless era): wakes a
    /// handle waiting for its reopening, which reads the outcome from the state.
    Settled,
    /// The subscription ended (the reason is in the state).
    End,
}

/// The mutable part of a subscription.
#[derive(Default)]
pub(crate) struct Status {
    /// The JSON-RPC id of the current `subscriptions/listen` request (stateless era), which
    /// is also the subscription id notifications carry.
    pub(crate) id: Option<i64>,
    /// The subset the server honours, once known.
    pub(crate) acknowledged: Option<SubscriptionFilter>,
    /// The server's refusal of the current listen request, for the opener.
    pub(crate) refused: Option<Error>,
    /// The listen request handed over for sending and not sent yet. Whoever lets go of it
    /// meanwhile (a close, a reopening given up on) leaves ending it on the server to its
    /// sender: a cancellation must not reach the server before its request.
    pub(crate) unsent: Option<i64>,
    /// How it ended, once it did.
    pub(crate) ended: Option<SubscriptionEnd>,
}

/// A subscription as the router and the handle share it.
pub(crate) struct Sub {
    /// What the caller asked for.
    pub(crate) requested: SubscriptionFilter,
    /// Whether it is served by `subscriptions/listen` (else by the handshake era's means).
    pub(crate) modern: bool,
    pub(crate) status: Mutex<Status>,
    /// Signalled when `status` changes (acknowledged, refused, ended).
    pub(crate) changed: Condvar,
    /// Bounded by capacity and by [`NOTIFICATION_BYTES`](crate::NOTIFICATION_BYTES): when full, the
    /// oldest unread event goes, counted and reported as a gap. The markers (`Broken`, `Settled`,
    /// `End`) are never dropped, so a flood cannot hide an end or a reopening.
    events: Lossy<Item>,
    pub(crate) rx: Receiver<Item>,
    /// The events dropped in all, and those the reader has not heard of yet.
    dropped: AtomicU64,
    unreported: AtomicU64,
}

impl Sub {
    /// A subscription whose queue holds `capacity` events (at least 2).
    pub(crate) fn new(requested: SubscriptionFilter, modern: bool, capacity: usize) -> Arc<Sub> {
        let events = Lossy::keeping(capacity.max(2), |item| !matches!(item, Item::Event(_)));
        let rx = events.receiver().clone();
        Arc::new(Sub {
            requested,
            modern,
            status: Mutex::new(Status::default()),
            changed: Condvar::new(),
            events,
            rx,
            dropped: AtomicU64::new(0),
            unreported: AtomicU64::new(0),
        })
    }

    /// How many events were dropped because the queue was full.
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// The events dropped since the reader last heard of a drop; zero when none were.
    pub(crate) fn take_unreported(&self) -> u64 {
        self.unreported.swap(0, Ordering::Relaxed)
    }

    pub(crate) fn id(&self) -> Option<i64> {
        lock(&self.status).id
    }

    /// The filter notifications are matched against: what the server honours, or, before it
    /// said so, what was asked for.
    pub(crate) fn effective(&self) -> SubscriptionFilter {
        let status = lock(&self.status);
        status
            .acknowledged
            .clone()
            .unwrap_or_else(|| self.requested.clone())
    }

    pub(crate) fn is_ended(&self) -> bool {
        lock(&self.status).ended.is_some()
    }

    pub(crate) fn push(&self, item: Item) {
        let size = match &item {
            Item::Event(SubscriptionEvent::Notification(note)) => queued::size(note),
            _ => 0,
        };
        let dropped = self.events.push(item, size) as u64;
        if dropped > 0 {
            self.dropped.fetch_add(dropped, Ordering::Relaxed);
            self.unreported.fetch_add(dropped, Ordering::Relaxed);
            log::debug!("subscription queue full; dropped its oldest event");
        }
    }

    pub(crate) fn deliver(&self, notification: ServerNotification) {
        self.push(Item::Event(SubscriptionEvent::Notification(notification)));
    }

    /// The handshake era's acknowledgement, from the server's capabilities.
    pub(crate) fn acknowledge(&self, filter: SubscriptionFilter) {
        self.acknowledged(None, filter);
    }

    /// Listen request `id` was acknowledged (ignored once another took its place). Only what was
    /// asked for is honoured, whatever the server claims beyond it.
    pub(crate) fn acknowledge_listen(&self, id: i64, filter: SubscriptionFilter) {
        let asked = &self.requested;
        let mut honoured = SubscriptionFilter {
            tools_list_changed: filter.tools_list_changed && asked.tools_list_changed,
            prompts_list_changed: filter.prompts_list_changed && asked.prompts_list_changed,
            resources_list_changed: filter.resources_list_changed && asked.resources_list_changed,
            ..SubscriptionFilter::default()
        };
        honoured.resource_subscriptions = filter
            .resource_subscriptions
            .into_iter()
            .filter(|uri| asked.wants("notifications/resources/updated", Some(uri)))
            .collect();
        self.acknowledged(Some(id), honoured);
    }

    fn acknowledged(&self, id: Option<i64>, filter: SubscriptionFilter) {
        {
            let mut status = lock(&self.status);
            if let Some(id) = id.filter(|id| status.id != Some(*id)) {
                log::debug!("subscription: dropping the acknowledgement of listen request {id}");
                return;
            }
            if status.acknowledged.is_some() {
                return;
            }
            status.acknowledged = Some(filter);
            self.changed.notify_all();
        }
        if self.modern {
            self.push(Item::Settled);
        }
    }

    /// Listen request `id` was refused, or could not be sent; ignored once another request
    /// has taken its place.
    pub(crate) fn refuse(&self, id: i64, err: Error) {
        {
            let mut status = lock(&self.status);
            if status.id != Some(id) {
                log::debug!("subscription: dropping the failure of listen request {id}: {err}");
                return;
            }
            status.refused = Some(err);
            self.changed.notify_all();
        }
        self.push(Item::Settled);
    }

    /// Listen request `id` was handed to the transport, or failed to be: whether the
    /// subscription still follows it. When it does not, it was let go of while it was being
    /// sent (closed, given up on), and ending it on the server falls to the sender.
    pub(crate) fn sent(&self, id: i64) -> bool {
        let mut status = lock(&self.status);
        if status.unsent == Some(id) {
            status.unsent = None;
        }
        status.id == Some(id) && !matches!(status.ended, Some(SubscriptionEnd::Closed))
    }

    /// Lets go of listen request `id`: whether the caller must end it on the server now (not once
    /// the subscription ended or moved on, nor while it is being sent: its sender ends it).
    pub(crate) fn give_up(&self, id: i64) -> bool {
        let mut status = lock(&self.status);
        if status.ended.is_some() || status.id != Some(id) {
            return false;
        }
        status.id = None;
        status.unsent != Some(id)
    }

    /// Ends the subscription as closed: `None` when it had ended already, else the listen
    /// request the caller must end on the server now, if any (one still being sent is ended
    /// by its sender once sent).
    pub(crate) fn close(&self) -> Option<Option<i64>> {
        let id = {
            let mut status = lock(&self.status);
            if status.ended.is_some() {
                return None;
            }
            status.ended = Some(SubscriptionEnd::Closed);
            self.changed.notify_all();
            status.id.filter(|id| status.unsent != Some(*id))
        };
        self.push(Item::End);
        Some(id)
    }

    /// Records the end; `false` when it had ended already.
    pub(crate) fn end(&self, end: SubscriptionEnd) -> bool {
        {
            let mut status = lock(&self.status);
            if status.ended.is_some() {
                return false;
            }
            status.ended = Some(end);
            self.changed.notify_all();
        }
        self.push(Item::End);
        true
    }

    /// Waits until the subscription is acknowledged, refused or ended, or `deadline` passes.
    pub(crate) fn wait_settled(&self, deadline: Instant) -> Settled {
        let mut status = lock(&self.status);
        loop {
            if let Some(err) = status.refused.take() {
                return Settled::Refused(err);
            }
            // Acknowledged and already ended (a server honouring nothing may do both at
            // once) is still a subscription: its handle reports the end.
            if status.acknowledged.is_some() {
                return Settled::Acknowledged;
            }
            if let Some(end) = &status.ended {
                return Settled::Ended(end.clone());
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Settled::TimedOut;
            }
            status = match self.changed.wait_timeout(status, left) {
                Ok((guard, _)) => guard,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
    }
}

/// How an opening listen settled.
pub(crate) enum Settled {
    Acknowledged,
    Refused(Error),
    Ended(SubscriptionEnd),
    TimedOut,
}

/// A connection's live subscriptions. Bounded by the caller: each entry is a handle the
/// caller holds, removed when it is closed or dropped.
#[derive(Default)]
pub(crate) struct Registry {
    subs: Mutex<Vec<Arc<Sub>>>,
}

impl Registry {
    pub(crate) fn insert(&self, sub: &Arc<Sub>) {
        let mut subs = lock(&self.subs);
        if !subs.iter().any(|s| Arc::ptr_eq(s, sub)) {
            subs.push(Arc::clone(sub));
        }
    }

    /// Makes listen request `id`, about to be sent, the one `sub` follows, and registers
    /// `sub` for it; `false` once the subscription has ended (closed meanwhile by another
    /// thread), which must then stay out of the registry.
    pub(crate) fn follow(&self, sub: &Arc<Sub>, id: i64) -> bool {
        {
            let mut status = lock(&sub.status);
            if status.ended.is_some() {
                return false;
            }
            status.id = Some(id);
            status.unsent = Some(id);
            status.acknowledged = None;
            status.refused = None;
        }
        // Registered before sending, so an early acknowledgement finds it.
        self.insert(sub);
        // A close since the check above removed it before this insert: take it out again
        // (the close sets the end before it removes, so one of the two sees the other).
        if sub.is_ended() {
            self.remove(sub);
            return false;
        }
        true
    }

    pub(crate) fn remove(&self, sub: &Arc<Sub>) {
        lock(&self.subs).retain(|s| !Arc::ptr_eq(s, sub));
    }

    pub(crate) fn snapshot(&self) -> Vec<Arc<Sub>> {
        lock(&self.subs).clone()
    }

    /// The stateless-era subscription whose current listen request is `id`.
    pub(crate) fn by_id(&self, id: i64) -> Option<Arc<Sub>> {
        lock(&self.subs)
            .iter()
            .find(|s| s.modern && s.id() == Some(id))
            .cloned()
    }

    /// Ends every subscription (the connection is gone).
    pub(crate) fn end_all(&self, reason: &str) {
        let subs = std::mem::take(&mut *lock(&self.subs));
        for sub in subs {
            sub.end(SubscriptionEnd::ConnectionLost {
                reason: reason.to_owned(),
            });
        }
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        // A handle outliving its client must not wait for events that cannot come.
        self.end_all("the client was dropped");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn modern_sub() -> Arc<Sub> {
        Sub::new(SubscriptionFilter::new().tools(), true, 8)
    }

    #[test]
    fn a_closed_subscription_is_not_registered_for_a_new_listen_request() {
        let registry = Registry::default();
        let sub = modern_sub();
        assert!(registry.follow(&sub, 1));
        assert!(sub.sent(1));
        // Closed by another thread just before its reader sends a reopening.
        registry.remove(&sub);
        assert_eq!(sub.close(), Some(Some(1)));
        assert!(
            !registry.follow(&sub, 2),
            "a closed subscription follows nothing new"
        );
        assert!(registry.snapshot().is_empty(), "nor is it registered again");
        assert!(registry.by_id(2).is_none());
    }

    #[test]
    fn an_acknowledgement_of_an_earlier_listen_request_is_ignored() {
        let registry = Registry::default();
        let sub = modern_sub();
        assert!(registry.follow(&sub, 1));
        assert!(registry.follow(&sub, 2));
        sub.acknowledge_listen(1, SubscriptionFilter::new().tools());
        assert!(lock(&sub.status).acknowledged.is_none());
        sub.acknowledge_listen(2, SubscriptionFilter::new().tools());
        assert!(lock(&sub.status).acknowledged.is_some());
    }

    #[test]
    fn a_request_let_go_of_while_being_sent_is_ended_by_its_sender() {
        let registry = Registry::default();
        let closed = modern_sub();
        assert!(registry.follow(&closed, 1));
        assert_eq!(
            closed.close(),
            Some(None),
            "not sent yet: not the closer's to end"
        );
        assert!(!closed.sent(1), "the sender's");

        let given_up = modern_sub();
        assert!(registry.follow(&given_up, 2));
        assert!(!given_up.give_up(2));
        assert!(!given_up.sent(2));
        assert!(registry.follow(&given_up, 3));
        assert!(given_up.sent(3));
        assert!(given_up.give_up(3), "sent: the one giving up ends it");
        assert_eq!(given_up.close(), Some(None), "given up on already");
    }
}
