//! Closing a connection's request table: failing what is pending and stopping the router.

use std::sync::Arc;

use crate::error::{Closed, Error};
use crate::sync::lock;

use super::super::pending::{Reply, Slot};
use super::Core;

impl Core {
    /// Fails every pending request with `closed` and stops the router.
    pub(crate) fn close_all(&self, closed: Arc<Closed>) {
        let entries = {
            let mut pending = lock(&self.pending);
            if pending.closed.is_none() {
                pending.closed = Some(closed.clone());
            }
            std::mem::take(&mut pending.entries)
        };
        if !self.has_callback {
            // With a callback the router ends the queue, after what it still has to pass on.
            self.notes.close();
        }
        let _ = self.stop_tx.try_send(());
        // Hook: a closed connection ends every subscription.
        super::super::super::follow::listen::route::close_all(&self.listens, &closed);
        log::debug!(
            "connection closed ({}); failing {} pending",
            closed.reason,
            entries.len()
        );
        fail(entries, &closed);
    }

    /// Fails the requests pending now with `closed`, leaving the connection's own closing
    /// (and the reason [`Client::closed`] gives) to the transport's report: a client closing
    /// releases its callers before it waits for the server to exit.
    ///
    /// [`Client::closed`]: crate::Client::closed
    pub(crate) fn release_pending(&self, closed: &Arc<Closed>) {
        let entries = std::mem::take(&mut lock(&self.pending).entries);
        fail(entries, closed);
    }
}

fn fail(entries: impl IntoIterator<Item = (i64, Arc<Slot>)>, closed: &Arc<Closed>) {
    for (id, slot) in entries {
        slot.put(id, Reply::Done(Err(Error::Closed(closed.clone()))));
    }
}
