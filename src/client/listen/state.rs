//! One subscription's shared state, and the registry of a connection's subscriptions.

use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

use crossbeam_channel::Receiver;

use crate::error::Error;
use crate::types::{ServerNotification, SubscriptionFilter};

use super::super::options::lock;
use super::super::queued::{self, Lossy};
use super::{SubscriptionEnd, SubscriptionEvent};

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
    /// The events for the handle. Bounded by the connection's notification capacity and by
    /// [`NOTIFICATION_BYTES`](crate::NOTIFICATION_BYTES); when full, the oldest unread event
    /// is dropped to make room (the newest matter most to a caller that re-lists anyway).
    events: Lossy<Item>,
    pub(crate) rx: Receiver<Item>,
}

impl Sub {
    pub(crate) fn new(requested: SubscriptionFilter, modern: bool, capacity: usize) -> Arc<Sub> {
        let events = Lossy::new(capacity.max(2));
        let rx = events.receiver().clone();
        Arc::new(Sub {
            requested,
            modern,
            status: Mutex::new(Status::default()),
            changed: Condvar::new(),
            events,
            rx,
        })
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
        if self.events.push(item, size) > 0 {
            log::debug!("subscription queue full; dropped its oldest event");
        }
    }

    pub(crate) fn deliver(&self, notification: ServerNotification) {
        self.push(Item::Event(SubscriptionEvent::Notification(notification)));
    }

    pub(crate) fn acknowledge(&self, filter: SubscriptionFilter) {
        {
            let mut status = lock(&self.status);
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
