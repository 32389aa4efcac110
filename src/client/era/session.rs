//! One connection's request engine: ids, deadlines, progress, cancel, and the one function
//! through which every request is built and sent ([`Shared::call`]).
//!
//! A call registers its id with the calling thread's reusable
//! [`Slot`](crate::client::engine::pending::Slot)
//! in the pending table, sends on its own thread, then parks on the slot until the
//! transport's reading thread puts the outcome there: one hand-off per response, no channel
//! per call, no thread per call.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::error::{Closed, Error, Result, TimeoutKind};
use crate::jsonrpc::{Message, Notification, Request, RequestId};
use crate::sync::deadline_after as far;
use crate::sync::lock;
use crate::transport::Transport;
use crate::types::InitializeResult;

use super::super::engine::handover::Handover;
use super::super::engine::pending::{Answer, Reply, SlotGuard, LONE_CALLER_YIELDS};
use super::super::engine::request_options::RequestOptions;
use super::super::engine::router::Core;
use super::super::engine::senders::{Job, Report, Senders};
use super::super::options::Options;

mod abandon;

/// State shared by the client handle, the router thread and handler threads.
pub(crate) struct Shared {
    pub(crate) transport: Arc<dyn Transport>,
    pub(crate) options: Options,
    pub(crate) core: Arc<Core>,
    next_id: AtomicI64,
    pub(crate) init: RwLock<Option<Arc<InitializeResult>>>,
    pub(crate) capabilities: RwLock<Value>,
    /// Bumped on every successful (re-)initialize, so concurrent callers that all saw the
    /// same expired session re-initialize once.
    pub(crate) generation: AtomicU64,
    pub(crate) reinit_lock: Mutex<()>,
    pub(crate) subscriptions: Mutex<Vec<String>>,
    /// The router, handler and sending threads, joined on close.
    pub(crate) threads: Mutex<Vec<JoinHandle<()>>>,
    senders: Arc<Senders>,
    /// The protocol era; the transport above is wrapped to stamp stateless requests.
    pub(crate) era: Arc<super::state::EraState>,
    /// The open subscriptions (`client.listen`), which the router feeds.
    pub(crate) listens: Arc<super::super::follow::listen::state::Registry>,
    /// Cached results (`cache.rs`).
    pub(crate) cache: Arc<super::super::follow::cache::Cache>,
    /// When the handshake under way (connect, or a new session) must be done: one deadline
    /// for all its requests, pushed back by any time a transport spent past a request's
    /// deadline obtaining credentials, which counts no more here than for one request.
    pub(crate) handshake_deadline: Mutex<Instant>,
}

/// How one call is made.
pub(crate) struct CallSpec<'a> {
    pub(crate) method: &'a str,
    pub(crate) params: Option<Value>,
    pub(crate) options: &'a RequestOptions,
    /// `initialize` must never be cancelled, nor retried after a session expiry.
    pub(crate) handshake: bool,
}

impl Shared {
    pub(crate) fn new(
        transport: Box<dyn Transport>,
        options: Options,
        core: Arc<Core>,
        done: crossbeam_channel::Sender<()>,
    ) -> Shared {
        let era = Arc::new(super::state::EraState::new(
            &options,
            transport.kind() == "streamable-http",
        ));
        let transport: Arc<dyn Transport> = Arc::new(super::transport::EraTransport::new(
            transport,
            Arc::clone(&era),
        ));
        let (listens, cache) = (Arc::clone(&core.listens), Arc::clone(&core.cache));
        let handshake_deadline = Mutex::new(far(Instant::now(), options.era.init_timeout));
        Shared {
            senders: Senders::new(Arc::clone(&transport), done),
            transport,
            options,
            core,
            next_id: AtomicI64::new(1),
            init: RwLock::new(None),
            capabilities: RwLock::new(Value::Null),
            generation: AtomicU64::new(0),
            reinit_lock: Mutex::new(()),
            subscriptions: Mutex::new(Vec::new()),
            threads: Mutex::new(Vec::new()),
            era,
            listens,
            cache,
            handshake_deadline,
        }
    }

    /// A fresh request id, for requests sent outside [`Shared::call`] (`subscriptions/listen`).
    pub(crate) fn next_request_id(&self) -> i64 {
        self.next_id.fetch_add(1, Ordering::SeqCst)
    }

    /// The reason the connection closed, if it has.
    pub(crate) fn closed(&self) -> Option<Arc<Closed>> {
        self.core.closed()
    }

    /// Stops the sending threads (they finish what they hold), to be joined with the others.
    pub(crate) fn stop_senders(&self) {
        let threads = self.senders.close();
        lock(&self.threads).extend(threads);
    }

    /// Sends a request and waits for its outcome, honouring timeouts, progress and cancel.
    ///
    /// Every request of the client goes through here. The params are not copied: a request
    /// retried after a session expiry is sent again with a new id. In the stateless era the
    /// call runs its input rounds (see [`rounds`](super::rounds)).
    pub(crate) fn call(&self, spec: CallSpec<'_>) -> Result<Answer> {
        if self.era.modern_version().is_some() {
            return super::rounds::call(self, &spec);
        }
        if super::super::follow::cache::wanted_in_legacy(self, spec.method) {
            // Only when the user asked to cache a handshake-era server's lists: the common
            // path below sends the params without copying them.
            let call = |spec: &CallSpec<'_>| {
                let message = Request::new(0, spec.method, spec.params.clone());
                self.call_legacy(spec, Message::Request(message))
            };
            return super::super::follow::cache::through(self, &spec, call);
        }
        let message = Message::Request(Request::new(0, spec.method, spec.params));
        let spec = CallSpec {
            params: None,
            ..spec
        };
        self.call_legacy(&spec, message)
    }

    /// A handshake-era call of `message` (whose params `spec` no longer holds), sent again
    /// with a new id after a session expiry.
    fn call_legacy(&self, spec: &CallSpec<'_>, mut message: Message) -> Result<Answer> {
        let generation = self.generation.load(Ordering::SeqCst);
        let call = Call {
            method: spec.method,
            options: spec.options,
            handshake: spec.handshake,
        };
        match self.exchange(&call, &mut message) {
            Err(Error::SessionExpired)
                if !call.handshake && self.options.era.reinitialize_on_expiry =>
            {
                log::debug!("session expired during `{}`; re-initializing", call.method);
                super::lifecycle::reinitialize(self, generation)?;
                self.exchange(&call, &mut message)
            }
            other => other,
        }
    }

    /// One request as `spec` says, without input rounds or a retry after a session expiry;
    /// its raw result. For the era's own requests (the probe, input rounds, re-listing).
    pub(crate) fn call_once(&self, spec: &CallSpec<'_>) -> Result<Answer> {
        // Hook: a fresh cached result answers without a round trip (`cache.rs`).
        super::super::follow::cache::through(self, spec, |spec| {
            let mut message = Message::Request(Request::new(0, spec.method, spec.params.clone()));
            let call = Call {
                method: spec.method,
                options: spec.options,
                handshake: spec.handshake,
            };
            self.exchange(&call, &mut message)
        })
    }

    /// Registers, sends and waits for one request; `message` gets a fresh id each time.
    fn exchange(&self, call: &Call<'_>, message: &mut Message) -> Result<Answer> {
        let opts = call.options;
        let timeout = opts.timeout.unwrap_or(self.options.engine.request_timeout);
        let started = Instant::now();
        let max_total = opts.max_total(self.options.engine.request_timeout);
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
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        if let Message::Request(request) = message {
            request.id = RequestId::from(id);
            opts.add_meta(&mut request.params, id);
        }
        let guard = SlotGuard::acquire();
        let slot = guard.slot();
        let alone;
        {
            let mut pending = lock(&self.core.pending);
            if let Some(closed) = &pending.closed {
                return Err(Error::Closed(closed.clone()));
            }
            pending.entries.insert(id, Arc::clone(slot));
            alone = pending.entries.len() == 1;
        }
        let cancellable = opts.cancel.as_ref().filter(|_| !call.handshake);
        let _attached = match cancellable {
            Some(cancel) => match cancel.attach(id, slot) {
                Some(attached) => Some(attached),
                None => {
                    self.forget(id);
                    return Err(call.cancelled());
                }
            },
            None => None,
        };
        let send_failed = |err: Error| match err {
            Error::Timeout { kind, .. } => Error::Timeout {
                method: call.method.to_owned(),
                elapsed: started.elapsed(),
                kind,
                stderr_tail: None,
            },
            other => other,
        };
        let send_deadline =
            far(started, timeout).min(total_deadline.unwrap_or(far(started, timeout)));
        // A cancellable request on a transport whose send waits for the server goes out from a
        // sending thread, so that the caller hears its cancel handle meanwhile.
        let mut handed_over = true;
        let mut sending = None;
        if cancellable.is_some() && self.transport.send_waits_for_peer() {
            let handover = Handover::new();
            let job = Job {
                message: message.clone(),
                deadline: send_deadline,
                report: Report::Caller(id, Arc::clone(slot), Arc::clone(&handover)),
            };
            match self.send_later(job) {
                Ok(()) => {
                    handed_over = false;
                    sending = Some(handover);
                }
                Err(job) => self
                    .send_now(&job.message, send_deadline, id)
                    .map_err(send_failed)?,
            }
        } else {
            self.send_now(message, send_deadline, id)
                .map_err(send_failed)?;
            // Only a transport obtaining credentials hands a message over past its deadline.
            // Looked at for the handshake alone, so that other calls read no clock for it.
            if call.handshake {
                let waited = Instant::now().saturating_duration_since(send_deadline);
                if !waited.is_zero() {
                    let mut deadline = lock(&self.handshake_deadline);
                    *deadline = far(*deadline, waited);
                }
            }
        }
        // The timeout is the server's time to answer, counted from the hand-over: a send that
        // waited on credentials (a token refresh, a user authorizing) does not eat it. The
        // hand-over itself is bounded by the send deadline, and the maximum total time still
        // counts from the start.
        let mut deadline = Instant::now().checked_add(timeout);
        loop {
            let (wait_until, kind) = match (total_deadline, deadline) {
                (Some(total), Some(d)) if total <= d => (Some(total), TimeoutKind::Total),
                (Some(total), None) => (Some(total), TimeoutKind::Total),
                _ => (deadline, TimeoutKind::Request),
            };
            let yields = if alone { LONE_CALLER_YIELDS } else { 0 };
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
                        deadline = Instant::now().checked_add(timeout);
                    }
                }
                Some(Reply::Sent) => {
                    handed_over = true;
                    deadline = Instant::now().checked_add(timeout);
                }
                Some(Reply::SendFailed(err)) => {
                    self.forget(id);
                    return Err(send_failed(err));
                }
                Some(Reply::Cancel) => {
                    self.abandon(id, call, "cancelled by the client", sending.as_deref());
                    return Err(call.cancelled());
                }
                Some(Reply::Unanswered(err)) => {
                    self.abandon(id, call, "no response can arrive", sending.as_deref());
                    return Err(err);
                }
                None if !handed_over && kind == TimeoutKind::Request => {
                    // Still in the sending thread, whose own deadline ends it with `Sent` or
                    // `SendFailed`: keep waiting for that rather than time out a request the
                    // server may not have seen yet.
                    deadline = Instant::now().checked_add(timeout);
                }
                None => {
                    self.abandon(id, call, "timed out", sending.as_deref());
                    return Err(Error::Timeout {
                        method: call.method.to_owned(),
                        elapsed: started.elapsed(),
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

    /// Hands `job` to a sending thread; gives it back when none can take it.
    #[allow(clippy::result_large_err)] // As `Senders::submit`.
    pub(crate) fn send_later(&self, job: Job) -> std::result::Result<(), Job> {
        self.senders.submit(job)
    }

    /// Sends a notification.
    pub(crate) fn notify(&self, method: &str, params: Option<Value>) -> Result<()> {
        if let Some(closed) = self.closed() {
            return Err(Error::Closed(closed));
        }
        let deadline = far(
            Instant::now(),
            self.options
                .engine
                .request_timeout
                .min(Duration::from_secs(10)),
        );
        let message = Message::Notification(Notification::new(method, params));
        self.transport.send(&message, deadline)
    }
}

/// The parts of a [`CallSpec`] a call keeps once its params are in the message.
struct Call<'a> {
    method: &'a str,
    options: &'a RequestOptions,
    handshake: bool,
}

impl Call<'_> {
    fn cancelled(&self) -> Error {
        Error::Cancelled {
            method: self.method.to_owned(),
        }
    }
}
