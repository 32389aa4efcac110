//! `client.listen(filter)`: one subscription API over both protocol eras.
//!
//! In the stateless era (2026-07-28) a [`Subscription`] is a `subscriptions/listen` request
//! that stays open: the router hands it every notification tagged with its id (over stdio the
//! tag is the only way to tell subscriptions apart; over HTTP the request's own response
//! stream carries them), the acknowledgement, and the response that ends it. An untagged
//! notification is none of its business, whatever its filter: it goes to the shared queue. Closing the
//! handle abandons the request: over HTTP that closes its stream, elsewhere it sends
//! `notifications/cancelled`. A broken HTTP stream is opened again by the handle's reading
//! calls, each within its own deadline, which report the gap as
//! [`SubscriptionEvent::Resubscribed`] once the server acknowledged the new request; after a
//! pause when streams keep breaking as soon as they open, and tried again when the server
//! does not acknowledge in time or the attempt fails short of a refusal (see [`reopen`]).
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
use crate::types::{ServerNotification, SubscriptionFilter};

use super::super::era::session::Shared;
use super::super::{Client, Era};

mod fresh;
pub(crate) mod open;
mod reopen;
pub(crate) mod route;
pub(crate) mod state;
mod watch;

pub use fresh::FreshTools;
use open::{cancel, legacy_call, open_legacy, open_modern};
use reopen::Reopening;
use state::{Item, Sub};

/// The bound on sending `notifications/cancelled` or `resources/unsubscribe` on close.
const CLOSE_DEADLINE: Duration = Duration::from_secs(5);

/// Something a [`Subscription`] delivers.
///
/// See the example on [`Client::listen`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum SubscriptionEvent {
    /// A notification the subscription asked for.
    Notification(ServerNotification),
    /// Notifications may have been missed, so re-list what matters: the subscription's
    /// stream broke and was opened again (stateless era), or the connection's stream of
    /// server messages was reopened or a new session began (handshake era).
    Resubscribed {
        /// Why it had to be opened again.
        reason: String,
    },
}

/// How a subscription ended.
///
/// See the example on [`Client::listen`].
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

/// A live subscription: a blocking receiver of the notifications it asked for. Dropping it
/// (or [`close`](Subscription::close)) ends it on the server too.
///
/// [`Client::listen`] has an example that follows one for as long as it lasts; this one reads
/// it in the ways a loop of your own would:
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
/// // Or for as long as it takes (`None` once the subscription ended):
/// if subscription.recv().is_none() {
///     log::info!("ended: {:?}", subscription.ended());
/// }
/// subscription.close();
/// # Ok(()) }
/// ```
pub struct Subscription {
    shared: Weak<Shared>,
    sub: Arc<Sub>,
    reopening: std::sync::Mutex<Reopening>,
}

impl Client {
    /// Subscribes to the notifications `filter` names, in either protocol era, and returns
    /// once the server acknowledged them (see [`Subscription::acknowledged`] for the subset
    /// it honours). In the handshake era each resource URI is subscribed with
    /// `resources/subscribe`, all within one request timeout; a URI the server refuses or does
    /// not confirm in time is left out of the acknowledgement.
    ///
    /// ```no_run
    /// use umcp::types::{ServerNotification, SubscriptionFilter};
    /// use umcp::SubscriptionEvent;
    ///
    /// # fn main() -> umcp::Result<()> {
    /// # let client = umcp::Client::connect(umcp::StdioConfig::new("server"))?;
    /// let filter = SubscriptionFilter::new().tools().resource("file:///project/build.log");
    /// let subscription = client.listen(filter)?;
    /// log::info!("the server honours {:?}", subscription.acknowledged());
    /// for event in subscription.iter() {
    ///     match event {
    ///         SubscriptionEvent::Notification(ServerNotification::ToolListChanged) => {
    ///             log::info!("{} tools now", client.list_all_tools()?.len());
    ///         }
    ///         SubscriptionEvent::Notification(other) => log::info!("{}", other.method()),
    ///         SubscriptionEvent::Resubscribed { reason } => log::warn!("re-list all: {reason}"),
    ///         _ => {}
    ///     }
    /// }
    /// log::info!("ended: {:?}", subscription.ended());
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The server's refusal, a timeout (the request timeout) waiting for the
    /// acknowledgement, or a closed connection.
    pub fn listen(&self, filter: SubscriptionFilter) -> Result<Subscription> {
        open(&self.shared, filter)
    }
}

pub(crate) fn open(shared: &Arc<Shared>, filter: SubscriptionFilter) -> Result<Subscription> {
    if let Some(closed) = shared.closed() {
        return Err(Error::Closed(closed));
    }
    let modern = shared.era.era() == Era::Modern;
    let sub = Sub::new(filter, modern, shared.options.engine.notification_capacity);
    if modern {
        open_modern(shared, &sub)?;
    } else {
        open_legacy(shared, &sub);
    }
    Ok(Subscription {
        shared: Arc::downgrade(shared),
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
    /// See the example on [`Client::listen`].
    pub fn acknowledged(&self) -> SubscriptionFilter {
        lock(&self.sub.status)
            .acknowledged
            .clone()
            .unwrap_or_default()
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
    /// (tell the two apart with [`ended`](Subscription::ended)). Opening a broken stream
    /// again never holds the call past `timeout`: a server slow to acknowledge the reopening
    /// is waited for by the next calls.
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
    /// See the example on [`Subscription`].
    pub fn close(&self) {
        let Some(listening) = self.sub.close() else {
            return;
        };
        let Some(shared) = self.shared.upgrade() else {
            return;
        };
        shared.listens.remove(&self.sub);
        if self.sub.modern {
            // A listen request still being sent is ended by its sender, once sent.
            if let Some(id) = listening {
                cancel(&shared, id, "subscription closed");
            }
            return;
        }
        // Unsubscribe what no other subscription of this connection still follows, all within
        // one close deadline: this runs on drop.
        let deadline = Instant::now() + CLOSE_DEADLINE;
        let others = shared.listens.snapshot();
        for uri in self.acknowledged().resource_subscriptions {
            let held = others
                .iter()
                .any(|s| !s.modern && s.effective().resource_subscriptions.contains(&uri));
            if held || shared.closed().is_some() {
                continue;
            }
            lock(&shared.subscriptions).retain(|s| s != &uri);
            if let Err(err) = legacy_call(&shared, "resources/unsubscribe", &uri, deadline) {
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
                Item::Event(event) => return Some(self.event_arrived(event)),
                Item::End => return None,
                Item::Settled => {}
                Item::Broken(reason) => self.stream_broke(reason),
            }
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
