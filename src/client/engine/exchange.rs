//! One request's round trip, in three steps: [`register`](Connection::register) it with the
//! calling thread's reusable [`Slot`] in the pending table, [`send`](Connection::send) it (on
//! the caller's thread, or a sending thread when the caller must keep hearing its cancel
//! handle), and [`wait`](Connection::wait) on the slot until the transport's reading thread
//! puts the outcome there: one hand-off per response, no channel and no thread per call.
//!
//! A request given up on (timed out, cancelled, unanswerable) is forgotten and cancelled on
//! the server without holding the caller any longer ([`Connection::abandon`]).

use std::cell::Cell;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::error::{Error, Result, TimeoutKind};
use crate::jsonrpc::{Message, RequestId};
use crate::sync::{deadline_after as far, lock};

use super::cancel::Attached;
use super::connection::Connection;
use super::handover::Handover;
use super::pending::{Answer, Reply, Slot, SlotGuard, LONE_CALLER_YIELDS};
use super::request_options::RequestOptions;
use super::senders::{Job, Report};

/// How one request is made.
pub(crate) struct Call<'a> {
    pub(crate) method: &'a str,
    pub(crate) options: &'a RequestOptions,
    /// For the client's own set-up requests (`initialize`, the probe): the deadline of the
    /// whole set-up, pushed back by any time the transport spent past the send's deadline
    /// obtaining credentials. Such a request is never cancelled, nor recorded as given up.
    pub(crate) setup: Option<&'a Mutex<Instant>>,
    /// Set when the request's outcome is the failure of its send (over HTTP, a status outside
    /// 2xx answering the POST, whose body may be the request's JSON-RPC error) rather than a
    /// response the server sent once it had the request: it was refused before it ran.
    pub(crate) refused: Option<&'a Cell<bool>>,
}

impl Call<'_> {
    fn cancelled(&self) -> Error {
        Error::Cancelled {
            method: self.method.to_owned(),
        }
    }

    fn note_refused(&self) {
        if let Some(refused) = self.refused {
            refused.set(true);
        }
    }
}

/// One request in flight: what [`Connection::register`] set up for sending and waiting.
struct Flight<'a> {
    call: &'a Call<'a>,
    id: i64,
    /// The request's registration with its cancel handle, while it waits (dropped before the
    /// slot goes back to the thread).
    attached: Option<Attached>,
    guard: SlotGuard,
    /// Whether it was the only request in flight: a lone caller yields before it parks.
    alone: bool,
    started: Instant,
    timeout: Duration,
    total_deadline: Option<Instant>,
    /// The request while a sending thread has it (see [`Handover`]).
    sending: Option<Arc<Handover>>,
}

impl Flight<'_> {
    fn slot(&self) -> &Arc<Slot> {
        self.guard.slot()
    }

    /// A send that failed: a timeout is told as this request's.
    fn failed(&self, err: Error) -> Error {
        match err {
            Error::Timeout { kind, .. } => Error::Timeout {
                method: self.call.method.to_owned(),
                elapsed: self.started.elapsed(),
                kind,
                stderr_tail: None,
            },
            other => other,
        }
    }
}

impl Connection {
    /// Registers, sends and waits for one request, honouring timeouts, progress and cancel;
    /// `message` gets a fresh id each time, so a request sent again is a new request.
    pub(crate) fn exchange(&self, call: &Call<'_>, message: &mut Message) -> Result<Answer> {
        let mut flight = self.register(call, message)?;
        if let Err(err) = self.send(&mut flight, message) {
            call.note_refused();
            return Err(err);
        }
        self.wait(&flight)
    }

    /// Gives the request its id, progress token and `_meta`, and enters it in the pending
    /// table and with its cancel handle; fails at once when it has no time, the connection
    /// closed or the handle was cancelled already.
    fn register<'a>(&self, call: &'a Call<'a>, message: &mut Message) -> Result<Flight<'a>> {
        let opts = call.options;
        let timeout = opts.timeout.unwrap_or(self.request_timeout());
        let started = Instant::now();
        let max_total = opts.max_total(self.request_timeout());
        let total_deadline = max_total.and_then(|max| started.checked_add(max));
        // A request given no time at all is not sent: the server would only do work nobody
        // waits for, and be told to drop it straight after.
        let no_time = match (timeout.is_zero(), max_total) {
            (true, _) => Some(TimeoutKind::Request),
            (false, Some(max)) if max.is_zero() => Some(TimeoutKind::Total),
            _ => None,
        };
        if let Some(kind) = no_time {
            return Err(Error::Timeout {
                method: call.method.to_owned(),
                elapsed: Duration::ZERO,
                kind,
                stderr_tail: None,
            });
        }
        let id = self.next_request_id();
        if let Message::Request(request) = message {
            request.id = RequestId::from(id);
            opts.add_meta(&mut request.params, id);
        }
        let guard = SlotGuard::acquire();
        let alone;
        {
            let mut pending = lock(&self.core.pending);
            if let Some(closed) = &pending.closed {
                return Err(Error::Closed(closed.clone()));
            }
            pending.entries.insert(id, Arc::clone(guard.slot()));
            alone = pending.entries.len() == 1;
        }
        let cancellable = opts.cancel.as_ref().filter(|_| call.setup.is_none());
        let attached = match cancellable {
            Some(cancel) => match cancel.attach(id, guard.slot()) {
                Some(attached) => Some(attached),
                None => {
                    self.forget(id);
                    return Err(call.cancelled());
                }
            },
            None => None,
        };
        Ok(Flight {
            call,
            id,
            attached,
            guard,
            alone,
            started,
            timeout,
            total_deadline,
            sending: None,
        })
    }

    /// Sends the request by its send deadline. A cancellable request on a transport whose
    /// send waits for the server goes out from a sending thread, so that the caller hears its
    /// cancel handle meanwhile.
    fn send(&self, flight: &mut Flight<'_>, message: &Message) -> Result<()> {
        let (id, started, timeout) = (flight.id, flight.started, flight.timeout);
        let send_deadline =
            far(started, timeout).min(flight.total_deadline.unwrap_or(far(started, timeout)));
        if flight.attached.is_some() && self.transport.send_waits_for_peer() {
            let handover = Handover::new();
            let job = Job {
                message: message.clone(),
                deadline: send_deadline,
                report: Report::Caller(id, Arc::clone(flight.slot()), Arc::clone(&handover)),
            };
            return match self.send_later(job) {
                Ok(()) => {
                    flight.sending = Some(handover);
                    Ok(())
                }
                Err(job) => self
                    .send_now(&job.message, send_deadline, id)
                    .map_err(|err| flight.failed(err)),
            };
        }
        self.send_now(message, send_deadline, id)
            .map_err(|err| flight.failed(err))?;
        // Only a transport obtaining credentials hands a message over past its deadline.
        // Looked at for the set-up alone, so that other calls read no clock for it.
        if let Some(setup) = flight.call.setup {
            let waited = Instant::now().saturating_duration_since(send_deadline);
            if !waited.is_zero() {
                let mut deadline = lock(setup);
                *deadline = far(*deadline, waited);
            }
        }
        Ok(())
    }

    /// Waits for the outcome on the caller's slot, passing progress to the caller's
    /// callback, until the request's deadlines; gives the request up when they pass, the
    /// cancel handle fires or no response can come.
    fn wait(&self, flight: &Flight<'_>) -> Result<Answer> {
        let (call, id, slot) = (flight.call, flight.id, flight.slot());
        let opts = call.options;
        // A request still in a sending thread's hands is not timed out before it went out.
        let mut handed_over = flight.sending.is_none();
        // The timeout is the server's time to answer, counted from the hand-over: a send that
        // waited on credentials (a token refresh, a user authorizing) does not eat it. The
        // hand-over itself is bounded by the send deadline, and the maximum total time still
        // counts from the start.
        let mut deadline = Instant::now().checked_add(flight.timeout);
        loop {
            let (wait_until, kind) = match (flight.total_deadline, deadline) {
                (Some(total), Some(d)) if total <= d => (Some(total), TimeoutKind::Total),
                (Some(total), None) => (Some(total), TimeoutKind::Total),
                _ => (deadline, TimeoutKind::Request),
            };
            let yields = if flight.alone { LONE_CALLER_YIELDS } else { 0 };
            match slot.take_lingering(id, wait_until, yields) {
                Some(Reply::Done(result)) => return result,
                Some(Reply::Progress(progress)) => {
                    if let Some(callback) = &opts.progress {
                        let run = std::panic::AssertUnwindSafe(|| callback(&progress));
                        if std::panic::catch_unwind(run).is_err() {
                            log::error!("the progress callback of `{}` panicked", call.method);
                        }
                    }
                    if opts.reset_on_progress {
                        deadline = Instant::now().checked_add(flight.timeout);
                    }
                }
                Some(Reply::Sent) => {
                    handed_over = true;
                    deadline = Instant::now().checked_add(flight.timeout);
                }
                Some(Reply::SendFailed(err)) => {
                    self.forget(id);
                    call.note_refused();
                    return Err(flight.failed(err));
                }
                Some(Reply::Cancel) => {
                    self.abandon(flight, "cancelled by the client");
                    return Err(call.cancelled());
                }
                Some(Reply::Unanswered(err)) => {
                    self.abandon(flight, "no response can arrive");
                    return Err(err);
                }
                // Still in the sending thread, whose own deadline ends it with `Sent` or
                // `SendFailed`: keep waiting for that rather than time out a request the
                // server may not have seen yet.
                None if !handed_over && kind == TimeoutKind::Request => {
                    deadline = Instant::now().checked_add(flight.timeout);
                }
                None => {
                    self.abandon(flight, "timed out");
                    return Err(Error::Timeout {
                        method: call.method.to_owned(),
                        elapsed: flight.started.elapsed(),
                        kind,
                        stderr_tail: None,
                    });
                }
            }
        }
    }

    /// Sends on the caller's thread; forgets the request when that fails.
    fn send_now(&self, message: &Message, deadline: Instant, id: i64) -> Result<()> {
        let sent = self.transport.send(message, deadline);
        if sent.is_err() {
            self.forget(id);
        }
        sent
    }

    /// Removes a pending entry without telling the server.
    fn forget(&self, id: i64) {
        lock(&self.core.pending).entries.remove(&id);
    }

    /// Gives up on a request: forgotten, its late response dropped, the server asked to stop. One
    /// not written out yet is left for its sending thread to cancel: a cancellation must not
    /// overtake it.
    fn abandon(&self, flight: &Flight<'_>, reason: &'static str) {
        let (id, method) = (flight.id, flight.call.method);
        let setup = flight.call.setup.is_some();
        self.forget(id);
        // The client's own set-up requests (the probe, `initialize`) are not the caller's.
        if !setup {
            self.core.abandoned.record(id, method, reason);
        }
        self.transport.abandon(&RequestId::from(id));
        if setup {
            return;
        }
        let sending = flight.sending.as_deref();
        if sending.is_some_and(|handover| !handover.let_go(reason)) {
            log::debug!(
                "request {id} `{method}` {reason} while not sent; cancelled once it is, if ever"
            );
            return;
        }
        log::debug!("request {id} `{method}` {reason}; sending notifications/cancelled");
        self.send_cancelled(id, reason);
    }
}
