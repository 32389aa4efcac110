//! `client.listen(filter)`: one subscription API over both protocol eras.
//!
//! In the stateless era (2026-07-28) a [`Subscription`] is a `subscriptions/listen` request that
//! stays open: the engine's reading thread hands it (through the [`Follower`]) every notification
//! tagged with its id (over stdio the tag is the only way to tell subscriptions apart; over HTTP
//! the request's own response stream carries them), the acknowledgement, and the response that ends
//! it. An untagged notification is none of its business, whatever its filter: it goes to the shared
//! queue. Closing the handle abandons the request: over HTTP that closes its stream, elsewhere it
//! sends `notifications/cancelled`. A broken HTTP stream is opened again by the handle's reading
//! calls, each within its own deadline, which report the gap as [`SubscriptionEvent::Resubscribed`]
//! once the server acknowledged the new request; after a pause when streams keep breaking as soon
//! as they open, and tried again when the server does not acknowledge in time or the attempt fails
//! short of a refusal (see [`reopen`](super::reopen)).
//!
//! In the handshake era the same handle is served by what that era has: list changes arrive
//! untagged (stdio, the HTTP GET stream) and are copied to every subscription that wants
//! them, resource URIs are subscribed with `resources/subscribe` and unsubscribed on close,
//! and the acknowledged subset is what the server's capabilities promise.

use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use crossbeam_channel::RecvTimeoutError;

use crate::error::{Error, Result};
use crate::sync::lock;
use crate::types::SubscriptionFilter;

use super::super::era::session::Session;
use super::super::era::state::Era;
use super::open::{cancel, legacy_call, open_legacy, open_modern, CLOSE_DEADLINE};
use super::reopen::Reopening;
use super::route::Follower;
use super::state::{Item, Sub, SubscriptionEnd, SubscriptionEvent};

/// A live subscription: a blocking receiver of the notifications it asked for. Dropping it
/// (or [`close`](Subscription::close)) ends it on the server too.
///
/// [`Client::listen`](crate::Client::listen) has an example that follows one for as long as it
/// lasts; this one reads it in the ways a loop of your own would:
///
/// ```no_run
/// use std::time::Duration;
/// use umcp::types::SubscriptionFilter;
/// use umcp::SubscriptionEvent;
///
/// # fn main() -> umcp::Result<()> {
/// # let client = umcp::Client::connect(umcp::StdioConfig::new("server"))?;
/// let subscription = client.listen(SubscriptionFilter::new().resources())?;
/// log::info!("asked for {:?} ({:?} era)", subscription.requested(), subscription.era());
/// // What has arrived, without waiting:
/// while let Some(event) = subscription.try_recv() {
///     log::info!("{event:?}");
/// }
/// // Wait a while for the next one:
/// let next = subscription.recv_timeout(Duration::from_secs(5));
/// if let Some(SubscriptionEvent::Notification(n)) = next {
///     log::info!("{}", n.method());
/// }
/// if subscription.dropped() > 0 {
///     log::warn!("{} events were dropped unread", subscription.dropped());
/// }
/// // Or for as long as it takes (`None` once the subscription ended):
/// if subscription.recv().is_none() {
///     log::info!("ended: {:?}", subscription.ended());
/// }
/// subscription.close();
/// # Ok(()) }
/// ```
pub struct Subscription {
    pub(super) session: Weak<Session>,
    pub(super) follower: Weak<Follower>,
    pub(super) sub: Arc<Sub>,
    pub(super) reopening: std::sync::Mutex<Reopening>,
}

/// Opens a subscription to what `filter` names, with the means of the era `session` speaks,
/// followed by `follower`, whose queue holds `capacity` events; returns once the server
/// acknowledged it.
pub(crate) fn open(
    session: &Arc<Session>,
    follower: &Arc<Follower>,
    filter: SubscriptionFilter,
    capacity: usize,
    timeout: Duration,
) -> Result<Subscription> {
    if let Some(closed) = session.closed() {
        return Err(Error::Closed(closed));
    }
    let modern = session.era.era() == Era::Modern;
    let sub = Sub::new(filter, modern, capacity);
    if modern {
        open_modern(session, follower, &sub, timeout)?;
    } else {
        open_legacy(session, follower, &sub);
    }
    Ok(Subscription {
        session: Arc::downgrade(session),
        follower: Arc::downgrade(follower),
        sub,
        reopening: std::sync::Mutex::new(Reopening::new()),
    })
}

impl Subscription {
    /// What was asked for.
    ///
    /// See the example on [`Subscription`].
    pub fn requested(&self) -> &SubscriptionFilter {
        &self.sub.requested
    }

    /// The subset the server honours: from its acknowledgement in the stateless era, from its
    /// capabilities (and the URIs `resources/subscribe` accepted) in the handshake era.
    ///
    /// See the example on [`Client::listen`](crate::Client::listen).
    pub fn acknowledged(&self) -> SubscriptionFilter {
        lock(&self.sub.status)
            .acknowledged
            .clone()
            .unwrap_or_default()
    }

    /// How many events were dropped unread because the queue was full, in all. Each drop is
    /// also reported in the stream, as a [`SubscriptionEvent::Resubscribed`] before the next
    /// event. The queue holds the client's notification capacity
    /// ([`Options::with_notification_capacity`](crate::Options::with_notification_capacity),
    /// at least 2) and at most [`NOTIFICATION_BYTES`](crate::NOTIFICATION_BYTES); when full,
    /// its oldest unread event goes. Its end, and a break of its stream, are never dropped.
    ///
    /// See the example on [`Subscription`].
    pub fn dropped(&self) -> u64 {
        self.sub.dropped()
    }

    /// The era serving this subscription.
    ///
    /// See the example on [`Subscription`].
    pub fn era(&self) -> Era {
        if self.sub.modern {
            Era::Modern
        } else {
            Era::Legacy
        }
    }

    /// How it ended, once it did (events received before the end can still be read).
    ///
    /// See the example on [`Subscription`].
    pub fn ended(&self) -> Option<SubscriptionEnd> {
        lock(&self.sub.status).ended.clone()
    }

    /// Waits for the next event; `None` once the subscription ended and everything before
    /// the end was read.
    ///
    /// See the example on [`Subscription`].
    pub fn recv(&self) -> Option<SubscriptionEvent> {
        self.next(None)
    }

    /// Like [`recv`](Subscription::recv), waiting at most `timeout`; `None` also on timeout
    /// (tell the two apart with [`ended`](Subscription::ended)).
    ///
    /// # Opening a broken stream again
    ///
    /// In the stateless era, the reading calls open a broken stream again (see
    /// [`SubscriptionEvent::Resubscribed`] for when), and this never holds `recv_timeout` or
    /// [`try_recv`](Subscription::try_recv) past its deadline: the new request is sent from a
    /// sending thread, and a server slow to acknowledge it is waited for by the next calls. A
    /// reopening not acknowledged within the request timeout, or that fails on the way (its
    /// stream breaks before the acknowledgement, a 5xx, a network error, a credential flow
    /// busy elsewhere), is abandoned and asked again after a pause that grows to 10 s. So
    /// the subscription ends only when the server refuses it ([`SubscriptionEnd::Failed`]) or
    /// the connection ends ([`SubscriptionEnd::ConnectionLost`]). A request abandoned while
    /// still being sent is ended on the server once sent: nothing is left listening there,
    /// and its cancellation never arrives before it.
    ///
    /// See the example on [`Subscription`].
    pub fn recv_timeout(&self, timeout: Duration) -> Option<SubscriptionEvent> {
        // A wait too long for the clock (`Duration::MAX`) is a wait without a deadline.
        self.next(Instant::now().checked_add(timeout))
    }

    /// The next event if one is waiting.
    ///
    /// See the example on [`Subscription`].
    pub fn try_recv(&self) -> Option<SubscriptionEvent> {
        self.next(Some(Instant::now()))
    }

    /// The events until the subscription ends.
    ///
    /// See the example on [`Subscription`].
    pub fn iter(&self) -> impl Iterator<Item = SubscriptionEvent> + '_ {
        std::iter::from_fn(move || self.recv())
    }

    /// Ends the subscription (also on the server). Idempotent; dropping does the same.
    ///
    /// In the stateless era the listen request is given up: over HTTP its stream's
    /// connection is shut down, elsewhere `notifications/cancelled` is sent (once the request
    /// itself was, if it is still being sent). In the handshake era the resource URIs no
    /// other subscription of the client still follows are unsubscribed, waiting at most 5 s
    /// for all of them.
    ///
    /// See the example on [`Subscription`].
    pub fn close(&self) {
        let Some(listening) = self.sub.close() else {
            return;
        };
        let (Some(session), Some(follower)) = (self.session.upgrade(), self.follower.upgrade())
        else {
            return;
        };
        follower.listens.remove(&self.sub);
        if self.sub.modern {
            // A listen request still being sent is ended by its sender, once sent.
            if let Some(id) = listening {
                cancel(&session, id, "subscription closed");
            }
            return;
        }
        // Unsubscribe what no other subscription of this connection still follows, all within
        // one close deadline: this runs on drop.
        let deadline = Instant::now() + CLOSE_DEADLINE;
        let others = follower.listens.snapshot();
        for uri in self.acknowledged().resource_subscriptions {
            let held = others
                .iter()
                .any(|s| !s.modern && s.effective().resource_subscriptions.contains(&uri));
            if held || session.closed().is_some() {
                continue;
            }
            lock(&session.subscriptions).retain(|s| s != &uri);
            if let Err(err) = legacy_call(&session, "resources/unsubscribe", &uri, deadline) {
                log::debug!(
                    "resources/unsubscribe {} failed: {err}",
                    crate::redact::url(&uri)
                );
            }
        }
    }

    fn next(&self, deadline: Option<Instant>) -> Option<SubscriptionEvent> {
        loop {
            // A reopen under way moves along without waiting for the server (see `reopen`).
            if let Some(event) = self.reopen_step(deadline) {
                return Some(event);
            }
            if self.sub.is_ended() && self.sub.rx.is_empty() {
                return None;
            }
            // Wait for an item, the caller's deadline, or the reopen's next step.
            let step = lock(&self.reopening).next_step();
            let until = match (step, deadline) {
                (Some(step), Some(deadline)) => Some(step.min(deadline)),
                (step, deadline) => step.or(deadline),
            };
            let item = match until {
                Some(until) => match self.sub.rx.recv_deadline(until) {
                    Ok(item) => item,
                    Err(RecvTimeoutError::Timeout)
                        if deadline.is_none_or(|deadline| Instant::now() < deadline) =>
                    {
                        continue;
                    }
                    Err(_) => return None,
                },
                None => self.sub.rx.recv().ok()?,
            };
            match item {
                Item::Event(event) => {
                    let event = self.event_arrived(event);
                    return Some(self.after_drops(event));
                }
                Item::End => return None,
                Item::Settled => {}
                Item::Broken(reason) => self.stream_broke(reason),
            }
        }
    }
}

impl Subscription {
    /// `event`, or first the report of the events dropped before it (`event` is then handed
    /// out next): a caller re-lists after a gap, and a full queue is one.
    fn after_drops(&self, event: SubscriptionEvent) -> SubscriptionEvent {
        let dropped = self.sub.take_unreported();
        if dropped == 0 || matches!(event, SubscriptionEvent::Resubscribed { .. }) {
            return event;
        }
        lock(&self.reopening).hold(event);
        SubscriptionEvent::Resubscribed {
            reason: format!("the subscription's queue was full: {dropped} events were dropped"),
        }
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.close();
    }
}

impl std::fmt::Debug for Subscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscription")
            .field("requested", &self.sub.requested)
            .field("ended", &self.ended())
            .finish_non_exhaustive()
    }
}
