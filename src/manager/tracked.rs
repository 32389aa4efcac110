//! A connector wrapper that keeps hold of the transport it starts, so the manager can close a
//! connection that is still in its handshake (a stuck server would otherwise hold `close`
//! until its start-up deadline).

use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

use crossbeam_channel::{Receiver, RecvTimeoutError, TryRecvError};

use crate::error::{Closed, Error, Result};
use crate::jsonrpc::{Message, RequestId};
use crate::transport::{Connect, Inbox, SessionEvent, Transport};

use crate::sync::lock;

/// The transport of a server's current attempt, and whether that attempt was interrupted.
#[derive(Default)]
pub(crate) struct Tracker {
    state: Mutex<TrackState>,
}

#[derive(Default)]
struct TrackState {
    interrupted: bool,
    /// Between [`Tracker::reset`] and [`Tracker::finished`]: an attempt is under way, from
    /// the start to the first listings of a connection made.
    connecting: bool,
    transport: Option<Arc<dyn Transport>>,
    /// The `umcp-manager-stop` threads still closing a transport, each with a receiver that
    /// disconnects when it ends. Finished ones are joined at the next interrupt, the rest by
    /// [`Tracker::join_stoppers`]; each ends within its transport's close bound.
    stoppers: Vec<(JoinHandle<()>, Receiver<()>)>,
}

impl Tracker {
    /// Forgets the previous attempt before a new one starts.
    pub(crate) fn reset(&self) {
        let old = {
            let mut state = lock(&self.state);
            state.interrupted = false;
            state.connecting = true;
            state.transport.take()
        };
        drop(old);
    }

    /// The attempt is over: it failed, or its connection is made and listed.
    pub(crate) fn finished(&self) {
        lock(&self.state).connecting = false;
    }

    /// Interrupts the attempt under way, if there is one; a live connection is left alone.
    pub(crate) fn interrupt_attempt(&self) {
        if lock(&self.state).connecting {
            self.interrupt();
        }
    }

    /// Closes the current attempt's transport, or the next as soon as it starts, on its own
    /// `umcp-manager-stop` thread: a close may take a whole shutdown sequence, and servers stop in
    /// parallel.
    pub(crate) fn interrupt(&self) {
        let (transport, finished) = {
            let mut state = lock(&self.state);
            state.interrupted = true;
            let (finished, running) = std::mem::take(&mut state.stoppers)
                .into_iter()
                .partition(|(_, done)| done.try_recv() == Err(TryRecvError::Disconnected));
            state.stoppers = running;
            (state.transport.clone(), finished)
        };
        join_all(finished);
        if let Some(transport) = transport {
            let closing = Arc::clone(&transport);
            let (done_tx, done) = crossbeam_channel::bounded::<()>(0);
            let spawned = std::thread::Builder::new()
                .name("umcp-manager-stop".into())
                .spawn(move || {
                    closing.close();
                    drop(done_tx);
                });
            match spawned {
                Ok(handle) => lock(&self.state).stoppers.push((handle, done)),
                Err(_) => transport.close(),
            }
        }
    }

    /// Joins the stopping threads that end by `deadline`; one still closing then (bounded
    /// by its transport's close) is left to end on its own.
    pub(crate) fn join_stoppers(&self, deadline: Instant) {
        let stoppers = std::mem::take(&mut lock(&self.state).stoppers);
        let mut ended = Vec::new();
        for (handle, done) in stoppers {
            match done.recv_deadline(deadline) {
                Err(RecvTimeoutError::Timeout) => log::debug!("a transport did not close in time"),
                _ => ended.push((handle, done)),
            }
        }
        join_all(ended);
    }
}

/// Joins threads that have ended (their `done` receivers disconnected).
fn join_all(ended: Vec<(JoinHandle<()>, Receiver<()>)>) {
    for (handle, _) in ended {
        let _ = handle.join();
    }
}

/// Starts `inner` and records the transport in `tracker`.
pub(crate) struct Tracked {
    pub(crate) inner: Box<dyn Connect>,
    pub(crate) tracker: Arc<Tracker>,
}

impl Connect for Tracked {
    fn connect(&self, inbox: Inbox) -> Result<Box<dyn Transport>> {
        self.track(self.inner.connect(inbox)?)
    }

    fn connect_by(&self, inbox: Inbox, deadline: Instant) -> Result<Box<dyn Transport>> {
        self.track(self.inner.connect_by(inbox, deadline)?)
    }

    fn fallback(&self) -> Option<Box<dyn Connect>> {
        let inner = self.inner.fallback()?;
        Some(Box::new(Tracked {
            inner,
            tracker: Arc::clone(&self.tracker),
        }))
    }

    fn describe(&self) -> String {
        self.inner.describe()
    }
}

impl Tracked {
    /// Records a started transport, or closes it when the manager stopped the attempt
    /// meanwhile.
    fn track(&self, transport: Box<dyn Transport>) -> Result<Box<dyn Transport>> {
        let transport: Arc<dyn Transport> = Arc::from(transport);
        let interrupted = {
            let mut state = lock(&self.tracker.state);
            if !state.interrupted {
                state.transport = Some(Arc::clone(&transport));
            }
            state.interrupted
        };
        if interrupted {
            // Not kept: the transport holds the client's inbox, and through it the notification
            // callback with the manager's queue, which must end when the manager closes.
            transport.close();
            return Err(Error::Closed(Arc::new(Closed {
                reason: "stopped by the manager".into(),
                ..Closed::default()
            })));
        }
        Ok(Box::new(SharedTransport(transport)))
    }
}

/// A transport shared between the client and the tracker.
struct SharedTransport(Arc<dyn Transport>);

impl Transport for SharedTransport {
    fn send(&self, message: &Message, deadline: Instant) -> Result<()> {
        self.0.send(message, deadline)
    }

    // The stateless era's routing headers (`MCP-Protocol-Version`, `Mcp-Method`, …) must
    // reach the transport: the default would drop them.
    fn send_with_headers(
        &self,
        message: &Message,
        deadline: Instant,
        headers: &[(String, String)],
    ) -> Result<()> {
        self.0.send_with_headers(message, deadline, headers)
    }

    // Stdio queues its sends: the client then sends from the calling thread (one hand-off).
    fn send_waits_for_peer(&self) -> bool {
        self.0.send_waits_for_peer()
    }

    fn abandon(&self, id: &RequestId) {
        self.0.abandon(id);
    }

    fn session_event(&self, event: SessionEvent<'_>) {
        self.0.session_event(event);
    }

    fn close(&self) {
        self.0.close();
    }

    fn abort(&self) {
        self.0.abort();
    }

    fn kind(&self) -> &'static str {
        self.0.kind()
    }

    fn authorization_context(&self) -> u64 {
        self.0.authorization_context()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A transport that holds its inbox, as real ones do, and a token to see it dropped.
    struct Holding(#[allow(dead_code)] Inbox, #[allow(dead_code)] Arc<()>);

    impl Transport for Holding {
        fn send(&self, _message: &Message, _deadline: Instant) -> Result<()> {
            Ok(())
        }
        fn close(&self) {}
        fn kind(&self) -> &'static str {
            "test"
        }
    }

    struct Starts(Arc<()>);

    impl Connect for Starts {
        fn connect(&self, inbox: Inbox) -> Result<Box<dyn Transport>> {
            Ok(Box::new(Holding(inbox, Arc::clone(&self.0))))
        }
        fn describe(&self) -> String {
            "test".into()
        }
    }

    #[test]
    fn a_stop_during_the_start_keeps_nothing_of_the_attempt() {
        let token = Arc::new(());
        let tracker = Arc::new(Tracker::default());
        tracker.reset();
        // The stop arrives while the server is being started, before there is a transport.
        tracker.interrupt();
        let tracked = Tracked {
            inner: Box::new(Starts(Arc::clone(&token))),
            tracker: Arc::clone(&tracker),
        };
        let (inbox, _inbound) = Inbox::new();
        assert!(tracked.connect(inbox).is_err());
        // The token's holders: this test and the connector.
        assert_eq!(Arc::strong_count(&token), 2, "the transport was kept");
        // Without a stop the transport is kept, so that a later stop can close it.
        tracker.reset();
        let (inbox, _inbound) = Inbox::new();
        let transport = tracked.connect(inbox).expect("connects");
        drop(transport);
        assert_eq!(Arc::strong_count(&token), 3);
    }
}
