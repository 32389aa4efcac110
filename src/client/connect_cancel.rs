//! Cancelling a connect from another thread: the handle's cancel closes the connection under
//! way, so that whatever the connect waits on (a reply, an HTTP request in flight) ends at once.
//!
//! The connection is closed on a thread of its own, `umcp-connect-cancel`, so that `cancel`
//! returns at once (a stdio server that ignores the end of its input is signalled only after
//! its close grace); the connect joins that thread before it returns, so nothing is left
//! behind.

use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::queue::{Receiver, RecvTimeoutError};
use crate::sync::lock;
use crate::transport::Transport;

use super::engine::cancel::Attached;
use super::handle::Client;
use super::options::Options;

/// The `method` of the [`Error::Cancelled`] a cancelled connect fails with: not a request's,
/// since a connect may be cancelled before, between or during its requests.
const CONNECT: &str = "connect";

/// How long a connect waits for the thread closing its connection, once its own close (which
/// waits for that one, within the transport's bound) has returned: only a margin.
const STOPPER_WAIT: Duration = Duration::from_secs(5);

/// One connect's registration with its cancel handle, and the connection it would close.
pub(crate) struct Watch {
    state: Arc<Mutex<State>>,
    /// `None` without a handle: nothing to watch.
    attached: Option<Attached>,
}

#[derive(Default)]
struct State {
    cancelled: bool,
    /// The connect is returning: a cancel from now on leaves its client alone.
    done: bool,
    /// The transport of the connection under way.
    transport: Option<Arc<dyn Transport>>,
    /// The thread closing it, with a receiver that disconnects when it ends.
    stopper: Option<(JoinHandle<()>, Receiver<()>)>,
}

impl Watch {
    /// Watches a connect with `options`; fails at once when their handle is cancelled already.
    pub(crate) fn new(options: &Options) -> Result<Watch> {
        let state = Arc::new(Mutex::new(State::default()));
        let Some(handle) = &options.connect_cancel else {
            return Ok(Watch {
                state,
                attached: None,
            });
        };
        let hooked = Arc::clone(&state);
        let attached = handle
            .on_cancel(Arc::new(move || cancel(&hooked)))
            .ok_or_else(cancelled)?;
        Ok(Watch {
            state,
            attached: Some(attached),
        })
    }

    /// Whether the connect was cancelled: nothing new is to be started.
    pub(crate) fn check(&self) -> Result<()> {
        match lock(&self.state).cancelled {
            true => Err(cancelled()),
            false => Ok(()),
        }
    }

    /// Records the connection `client` just started, for a cancel to close; fails when the
    /// connect was cancelled meanwhile (the caller closes it).
    pub(crate) fn track(&self, client: &Client) -> Result<()> {
        if self.attached.is_none() {
            return Ok(());
        }
        let mut state = lock(&self.state);
        if state.cancelled {
            return Err(cancelled());
        }
        state.transport = Some(Arc::clone(&client.session.conn.transport));
        Ok(())
    }

    /// Forgets a connection that was closed: the watch holds no transport it does not need.
    pub(crate) fn untrack(&self) {
        let old = lock(&self.state).transport.take();
        drop(old);
    }

    /// Ends the watch with the connect's outcome: [`Error::Cancelled`] when it was cancelled
    /// (a client connected meanwhile is closed), once the connection the cancel closed is.
    pub(crate) fn finish(mut self, connected: Result<Client>) -> Result<Client> {
        let (was_cancelled, transport, stopper) = {
            let mut state = lock(&self.state);
            state.done = true;
            (
                state.cancelled,
                state.transport.take(),
                state.stopper.take(),
            )
        };
        drop(transport);
        drop(self.attached.take());
        let outcome = match connected {
            Ok(client) if was_cancelled => {
                client.close();
                Err(cancelled())
            }
            Err(err) if was_cancelled => {
                log::debug!("connect cancelled ({err})");
                Err(cancelled())
            }
            other => other,
        };
        if let Some((thread, ended)) = stopper {
            // The connection is closed by now (closing the client waited for it): the thread
            // ends at once, within the transport's close bound at worst.
            match ended.recv_timeout(STOPPER_WAIT) {
                Err(RecvTimeoutError::Timeout) => log::debug!("a cancelled connect is closing"),
                _ => {
                    let _ = thread.join();
                }
            }
        }
        outcome
    }
}

/// The hook run on the cancelling thread: marks the connect cancelled and closes its
/// connection on a thread of its own.
fn cancel(state: &Mutex<State>) {
    let mut guard = lock(state);
    if guard.done {
        return;
    }
    guard.cancelled = true;
    let Some(transport) = guard.transport.clone() else {
        // Not started yet, or between two starts: the connect sees the flag before the next.
        return;
    };
    let closing = Arc::clone(&transport);
    let (ended_tx, ended) = crate::queue::bounded::<()>(1);
    let spawned = crate::threads::spawn(
        "umcp-connect-cancel",
        Box::new(move || {
            closing.close();
            drop(ended_tx);
        }),
    );
    match spawned {
        Ok(thread) => guard.stopper = Some((thread, ended)),
        Err(err) => {
            drop(guard);
            log::debug!("no thread to close a cancelled connect ({err}); closing here");
            transport.close();
        }
    }
}

/// The error of a cancelled connect.
fn cancelled() -> Error {
    Error::Cancelled {
        method: CONNECT.into(),
    }
}
