//! The threads of a stdio connection: named, and joined by a deadline or left to finish.

use std::thread::{self, JoinHandle};
use std::time::Instant;

use crossbeam_channel::{Receiver, RecvTimeoutError};

/// A named thread and a way to wait for it with a deadline.
pub(super) struct Worker {
    name: &'static str,
    handle: JoinHandle<()>,
    /// Disconnects when the thread has finished its work.
    pub(super) done: Receiver<()>,
}

impl Worker {
    /// Starts `work` on a thread named `name`.
    pub(super) fn spawn(
        name: &'static str,
        work: impl FnOnce() + Send + 'static,
    ) -> std::io::Result<Worker> {
        let (done_tx, done) = crossbeam_channel::bounded::<()>(0);
        let handle = thread::Builder::new().name(name.into()).spawn(move || {
            let _done = done_tx;
            work();
        })?;
        Ok(Worker { name, handle, done })
    }

    /// Joins the thread if it finishes by `deadline`; otherwise leaves it to finish alone.
    pub(super) fn join_by(self, deadline: Instant, label: &str) {
        // Close may run on this very thread (a stderr callback dropping the last handle).
        if self.handle.thread().id() == thread::current().id() {
            return;
        }
        match self.done.recv_deadline(deadline) {
            Err(RecvTimeoutError::Disconnected) => {
                let _ = self.handle.join();
            }
            _ => log::debug!(
                "{label}: {} is still blocked; leaving it to finish",
                self.name
            ),
        }
    }
}
