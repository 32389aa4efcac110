//! Health checks of connected servers: one that has been silent for a while is pinged, and
//! one that then sends nothing at all until the ping's deadline is taken as hung.
//!
//! A process that deadlocks, or a remote server that stops answering, keeps its connection
//! open, so nothing else would notice it until a caller's request timed out. The rule looks
//! only at whether the server sends anything: a ping that times out while other answers,
//! progress or notifications still arrive is a busy server, not a hung one. Checks cost
//! nothing while the server talks (no ping is sent then), and at most one ping is in flight
//! per server.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::client::{CancelHandle, Client, RequestOptions};
use crate::error::Error;
use crate::sync::lock;

/// When and how long to check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HealthCheck {
    /// How long a server may be silent before it is pinged.
    pub(crate) interval: Duration,
    /// How long the ping may take.
    pub(crate) timeout: Duration,
}

/// The ping under way, so that a restart or stop does not wait for it.
#[derive(Default)]
pub(crate) struct PingSlot {
    cancel: Mutex<Option<CancelHandle>>,
}

impl PingSlot {
    /// Cancels the ping under way, if there is one.
    pub(crate) fn cancel(&self) {
        if let Some(handle) = lock(&self.cancel).as_ref() {
            handle.cancel();
        }
    }
}

/// The check of one connection, run from the supervisor's watch loop.
pub(crate) struct Watch {
    check: HealthCheck,
    /// The server's message count when it last changed, and when that was seen.
    heard: u64,
    since: Instant,
}

impl Watch {
    pub(crate) fn new(check: HealthCheck, client: &Client) -> Watch {
        Watch {
            check,
            heard: client.messages_received(),
            since: Instant::now(),
        }
    }

    /// Pings the server when it has been silent for the interval; `Some` with the reason
    /// when it is hung or gone.
    pub(crate) fn tick(&mut self, client: &Client, ping: &PingSlot) -> Option<Error> {
        let heard = client.messages_received();
        if heard != self.heard {
            (self.heard, self.since) = (heard, Instant::now());
            return None;
        }
        if self.since.elapsed() < self.check.interval {
            return None;
        }
        let cancel = CancelHandle::new();
        *lock(&ping.cancel) = Some(cancel.clone());
        let options = RequestOptions::default()
            .with_timeout(self.check.timeout)
            .with_cancel(cancel);
        let outcome = client.with(&options).ping();
        *lock(&ping.cancel) = None;
        let now = client.messages_received();
        // Whatever happened, the next ping waits for another silent interval.
        (self.heard, self.since) = (now, Instant::now());
        match outcome {
            Err(error @ Error::Timeout { .. }) if now == heard => Some(error),
            Err(error @ (Error::Closed(_) | Error::Io(_) | Error::Http(_))) => Some(error),
            // An answer, even an error, or a timeout while other messages came: alive.
            // A cancelled ping leaves the restart or stop that cancelled it to the caller.
            _ => None,
        }
    }
}
