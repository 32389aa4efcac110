//! What a stdio connection and its threads share: the inbox, the end of the connection
//! reported once, and what the server's output showed of it.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError, RwLock};
use std::time::Instant;

use super::lines::Activity;
use super::stderr::Tail;
use crate::error::{Closed, Error};
use crate::sync::lock;
use crate::transport::Inbox;

/// What the transport and its threads share.
pub(super) struct Shared {
    inbox: Inbox,
    /// `program[pid]`, for logs.
    pub(super) label: String,
    pub(super) tail: Mutex<Tail>,
    /// Lines on stdout that were not JSON-RPC; the first few go into `tail` too.
    pub(super) stdout_noise: AtomicU64,
    pub(super) stdout_activity: Activity,
    pub(super) stderr_activity: Activity,
    closed: Mutex<Option<Arc<Closed>>>,
    /// Shared by the reader while it delivers, exclusive while the end is reported, so nothing is
    /// delivered after the end. Only those two take it: a delivery may block (backpressure), so
    /// nobody the layer above waits on may wait for it.
    gate: RwLock<()>,
    reported: Condvar,
    pub(super) closing: AtomicBool,
    /// The close is an abort: the server gets no grace to exit on the end of its input.
    pub(super) aborting: AtomicBool,
}

impl Shared {
    /// The state of the connection to the server `label`, delivering to `inbox` and keeping
    /// the last `tail_lines` lines of its stderr.
    pub(super) fn new(inbox: Inbox, label: String, tail_lines: usize) -> Shared {
        Shared {
            inbox,
            label,
            tail: Mutex::new(Tail::new(tail_lines)),
            stdout_noise: AtomicU64::new(0),
            stdout_activity: Activity::default(),
            stderr_activity: Activity::default(),
            closed: Mutex::new(None),
            gate: RwLock::new(()),
            reported: Condvar::new(),
            closing: AtomicBool::new(false),
            aborting: AtomicBool::new(false),
        }
    }

    /// Reports the end of the connection to the inbox, unless it was reported already.
    pub(super) fn report(&self, closed: Closed) {
        let _gate = self.gate.write().unwrap_or_else(PoisonError::into_inner);
        let mut slot = lock(&self.closed);
        if slot.is_some() {
            return;
        }
        log::debug!("{}: reporting the end: {closed}", self.label);
        *slot = Some(Arc::new(closed.clone()));
        self.inbox.closed(closed);
        self.reported.notify_all();
    }

    /// Hands `deliver` the inbox unless the end was reported already, so that nothing arrives
    /// after [`Inbound::Closed`](crate::transport::Inbound::Closed); `false` when nothing more
    /// should be read (the end was reported, or nobody listens).
    pub(super) fn deliver(&self, deliver: impl FnOnce(&Inbox) -> bool) -> bool {
        let _gate = self.gate.read().unwrap_or_else(PoisonError::into_inner);
        !self.is_reported() && deliver(&self.inbox)
    }

    /// Whether the transport is being closed (so an exit now is the one close asked for).
    pub(super) fn is_closing(&self) -> bool {
        self.closing.load(Ordering::Acquire)
    }

    /// Whether the close is an abort (see [`Transport::abort`](crate::transport::Transport::abort)).
    pub(super) fn is_aborting(&self) -> bool {
        self.aborting.load(Ordering::Acquire)
    }

    /// Whether the end was reported.
    pub(super) fn is_reported(&self) -> bool {
        lock(&self.closed).is_some()
    }

    /// The error for a send on a connection that is closed or closing.
    pub(super) fn closed_error(&self) -> Option<Error> {
        if let Some(closed) = lock(&self.closed).as_ref() {
            return Some(Error::Closed(closed.clone()));
        }
        if self.is_closing() {
            return Some(closed_error("closed by client", self));
        }
        None
    }

    /// Waits until `deadline` for the end to be reported.
    pub(super) fn wait_closed(&self, deadline: Instant) -> Option<Error> {
        let mut slot = lock(&self.closed);
        loop {
            if let Some(closed) = slot.as_ref() {
                return Some(Error::Closed(closed.clone()));
            }
            let left = deadline.checked_duration_since(Instant::now())?;
            slot = self
                .reported
                .wait_timeout(slot, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }
}

/// An [`Error::Closed`] with `reason` and the stderr tail so far.
pub(super) fn closed_error(reason: &str, shared: &Shared) -> Error {
    let tail = lock(&shared.tail).text();
    Error::Closed(Arc::new(Closed {
        reason: reason.into(),
        exit_status: None,
        stderr_tail: Some(tail),
    }))
}
