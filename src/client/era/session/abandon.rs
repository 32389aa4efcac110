//! Giving up on a request: forgetting it, and asking the server to stop working on it
//! without holding the caller any longer.

use std::time::Instant;

use crate::jsonrpc::RequestId;
use crate::sync::lock;

use super::super::super::engine::handover::{cancellation, Handover};
use super::super::super::engine::senders::cancel_later;
use super::{Call, Shared};

impl Shared {
    /// Removes a pending entry without telling the server.
    pub(super) fn forget(&self, id: i64) {
        lock(&self.core.pending).entries.remove(&id);
    }

    /// Gives up on a request: forget it, let the transport stop reading for it, and ask the
    /// server to stop working on it. A response arriving later is dropped. A request a
    /// sending thread has not written out yet (`sending`) is left for that thread to cancel
    /// once it has: a cancellation must not reach the server before its request.
    pub(super) fn abandon(
        &self,
        id: i64,
        call: &Call<'_>,
        reason: &'static str,
        sending: Option<&Handover>,
    ) {
        self.forget(id);
        // The client's own set-up requests (the probe, `initialize`) are not the caller's.
        if !call.handshake {
            self.core.abandoned.record(id, call.method, reason);
        }
        let request_id = RequestId::from(id);
        self.transport.abandon(&request_id);
        if call.handshake {
            return;
        }
        if sending.is_some_and(|handover| !handover.let_go(reason)) {
            log::debug!(
                "request {id} `{}` {reason} while not sent; cancelled once it is, if ever",
                call.method
            );
            return;
        }
        log::debug!(
            "request {id} `{}` {reason}; sending notifications/cancelled",
            call.method
        );
        self.send_cancelled(id, reason);
    }

    /// Sends `notifications/cancelled` for request `id` without holding the caller, whose
    /// deadline has passed already: a server that stopped reading must not hold it any
    /// longer. A queued send (stdio) is tried at once and dropped when the queue is full; a
    /// send that waits for the server goes to a sending thread.
    pub(crate) fn send_cancelled(&self, id: i64, reason: &str) {
        if self.transport.send_waits_for_peer() {
            return cancel_later(&self.senders, id, reason);
        }
        if let Err(err) = self
            .transport
            .send(&cancellation(id, reason), Instant::now())
        {
            log::debug!("could not send notifications/cancelled for {id}: {err}");
        }
    }
}
