//! The handle on which a client's server notifications arrive.

use std::time::Duration;

use std::sync::Arc;

use crossbeam_channel::Receiver;

use crate::jsonrpc::Notification;
use crate::types::ServerNotification;

use super::notes::Typed;
use super::queued::Lossy;

/// Server notifications (log messages, list changes, resource updates, cancellations and any
/// others), in arrival order.
///
/// All handles of one client share one queue: a notification is taken by whichever handle
/// reads it first. Progress notifications are not here: they go to the request that asked
/// for them. When the queue is full the oldest unread notification is dropped.
///
/// ```no_run
/// # fn main() -> umcp::Result<()> {
/// let client = umcp::Client::connect(umcp::StdioConfig::new("my-server"))?;
/// let notifications = client.notifications();
/// while let Some(note) = notifications.recv_timeout(std::time::Duration::from_secs(1)) {
///     log::info!("{}", note.method());
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct Notifications {
    rx: Receiver<ServerNotification>,
}

impl Notifications {
    pub(crate) fn new(rx: Receiver<ServerNotification>) -> Notifications {
        Notifications { rx }
    }

    /// Waits for the next notification; `None` once the client is closed and the queue is empty.
    ///
    /// See the example on [`Client::notifications`](crate::Client::notifications).
    pub fn recv(&self) -> Option<ServerNotification> {
        self.rx.recv().ok()
    }

    /// Waits up to `timeout` for the next notification; `None` if none came (or the client
    /// is closed and the queue is empty).
    ///
    /// See the example on [`Client::notifications`](crate::Client::notifications).
    pub fn recv_timeout(&self, timeout: Duration) -> Option<ServerNotification> {
        self.rx.recv_timeout(timeout).ok()
    }

    /// The next notification if one is queued.
    ///
    /// See the example on [`Client::notifications`](crate::Client::notifications).
    pub fn try_recv(&self) -> Option<ServerNotification> {
        self.rx.try_recv().ok()
    }

    /// A blocking iterator that ends when the client is closed and the queue is empty.
    ///
    /// See the example on [`Client::notifications`](crate::Client::notifications).
    pub fn iter(&self) -> impl Iterator<Item = ServerNotification> + '_ {
        self.rx.iter()
    }

    /// The underlying crossbeam receiver, for `crossbeam_channel::select!` over several
    /// clients. This exposes crossbeam-channel 0.5 types: a major version bump of that crate
    /// would be a breaking change of this method only.
    ///
    /// See the example on [`Client::notifications`](crate::Client::notifications).
    pub fn receiver(&self) -> &Receiver<ServerNotification> {
        &self.rx
    }
}

/// The typed queue [`Client::notifications`](crate::Client::notifications) reads, holding at
/// most `capacity` notifications: each is decoded as it joins it.
pub(crate) fn typed_queue(capacity: usize) -> Arc<dyn Typed> {
    Arc::new(Lossy::<ServerNotification>::new(capacity))
}

impl Typed for Lossy<ServerNotification> {
    fn push(&self, note: Notification, size: usize) -> usize {
        Lossy::push(self, ServerNotification::from_notification(note), size)
    }

    fn close(&self) {
        Lossy::close(self);
    }

    fn receiver(&self) -> Receiver<ServerNotification> {
        Lossy::receiver(self).clone()
    }
}
