//! One connection's request engine on the caller's side: the transport, request ids, the
//! sending threads and the threads to join, over the [`Core`] its readers share.
//!
//! Every request goes through [`Connection::exchange`] (in `exchange`); everything else a
//! caller sends (notifications, cancellations, subscription requests) goes through here too.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::error::{Closed, Error, Result, CLOSED_BY_CLIENT};
use crate::jsonrpc::{Message, Notification};
use crate::queue::{Receiver, RecvTimeoutError, Sender};
use crate::sync::{deadline_after, lock};
use crate::transport::Transport;

use super::handover::cancellation;
use super::late::LateHandler;
use super::router::Core;
use super::senders::{cancel_later, Job, Senders};
use super::settings::Settings;

/// How long `close` waits for the router, handler and sending threads after the transport
/// has closed; a thread still inside a user's handler is left to finish on its own.
const THREADS_JOIN_TIMEOUT: Duration = Duration::from_secs(2);

/// The engine of one connection: what callers, the router and the handler threads share.
pub(crate) struct Connection {
    pub(crate) transport: Arc<dyn Transport>,
    /// What the transport's reading threads share with the callers.
    pub(crate) core: Arc<Core>,
    next_id: AtomicI64,
    senders: Arc<Senders>,
    /// The router, handler and sending threads, joined on close.
    pub(crate) threads: Mutex<Vec<JoinHandle<()>>>,
    /// The default timeout of every request.
    request_timeout: Duration,
    /// Takes the responses that come after their request was given up (router thread).
    pub(crate) on_late_response: Option<LateHandler>,
}

impl Connection {
    /// The engine over `transport`, whose deliveries reach `core`. `done` is held by every
    /// thread the connection starts, so that closing can wait for them all.
    pub(crate) fn new(
        transport: Arc<dyn Transport>,
        core: Arc<Core>,
        settings: &Settings,
        done: Sender<()>,
    ) -> Connection {
        Connection {
            senders: Senders::new(Arc::clone(&transport), done),
            transport,
            core,
            next_id: AtomicI64::new(1),
            threads: Mutex::new(Vec::new()),
            request_timeout: settings.request_timeout,
            on_late_response: settings.on_late_response.clone(),
        }
    }

    /// A fresh request id: every request's, and those of requests sent outside
    /// [`Connection::exchange`] (`subscriptions/listen`).
    pub(crate) fn next_request_id(&self) -> i64 {
        self.next_id.fetch_add(1, Ordering::SeqCst)
    }

    /// The default timeout of every request.
    pub(crate) fn request_timeout(&self) -> Duration {
        self.request_timeout
    }

    /// How many unread notifications the connection keeps (and so each subscription).
    pub(crate) fn notification_capacity(&self) -> usize {
        self.core.notes.capacity()
    }

    /// The reason the connection closed, if it has.
    pub(crate) fn closed(&self) -> Option<Arc<Closed>> {
        self.core.closed()
    }

    /// Notifications may have been lost (a new session began): the layers above hear of it.
    pub(crate) fn report_gap(&self, reason: &str) {
        self.core.gap(reason);
    }

    /// Whether the protocol in use allows JSON-RPC batches (only 2025-03-26 does).
    pub(crate) fn allow_batches(&self, allowed: bool) {
        self.core.batches.store(allowed, Ordering::Relaxed);
    }

    /// Sends a notification.
    pub(crate) fn notify(&self, method: &str, params: Option<Value>) -> Result<()> {
        if let Some(closed) = self.closed() {
            return Err(Error::Closed(closed));
        }
        let deadline = deadline_after(
            Instant::now(),
            self.request_timeout.min(Duration::from_secs(10)),
        );
        let message = Message::Notification(Notification::new(method, params));
        self.transport.send(&message, deadline)
    }

    /// Hands `job` to a sending thread; gives it back when none can take it.
    #[allow(clippy::result_large_err)] // As `Senders::submit`.
    pub(crate) fn send_later(&self, job: Job) -> std::result::Result<(), Job> {
        self.senders.submit(job)
    }

    /// Sends `notifications/cancelled` for `id` without holding the caller, whose deadline has
    /// passed: a queued send is tried once and dropped when full, one that waits for the server
    /// goes to a sending thread.
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

    /// Closes the connection: pending requests fail at once, the transport closes (or is aborted),
    /// and its threads are joined within [`THREADS_JOIN_TIMEOUT`] (`threads_done` disconnects
    /// then).
    pub(crate) fn shut_down(&self, abort: bool, threads_done: &Receiver<()>) {
        self.core.closing.store(true, Ordering::Release);
        let by_client = Arc::new(Closed {
            reason: CLOSED_BY_CLIENT.into(),
            ..Closed::default()
        });
        // Callers waiting on the server are released now, not once the server has exited
        // (which may take the close grace and the kill).
        self.core.release_pending(&by_client);
        if abort {
            self.transport.abort();
        } else {
            self.transport.close();
        }
        // The transport reports the close, which fails what is pending and stops the router;
        // this covers a transport that does not.
        self.core.close_all(by_client);
        self.stop_senders();
        // Closed from one of the client's own threads (a callback or a handler): that thread
        // cannot end while it waits here, so waiting would only cost the whole timeout. Every
        // thread ends once the callback returns.
        let me = std::thread::current().id();
        if lock(&self.threads)
            .iter()
            .any(|handle| handle.thread().id() == me)
        {
            lock(&self.core.callback).take();
            return;
        }
        // Threads that do not finish in time (a handler waiting for a user) are left to end
        // on their own.
        match threads_done.recv_timeout(THREADS_JOIN_TIMEOUT) {
            Err(RecvTimeoutError::Timeout) => {
                log::debug!("client threads did not stop within {THREADS_JOIN_TIMEOUT:?}");
                // No callback after `close` returned, from a router still busy.
                lock(&self.core.callback).take();
            }
            _ => {
                let threads = std::mem::take(&mut *lock(&self.threads));
                for handle in threads {
                    let _ = handle.join();
                }
            }
        }
    }

    /// Stops the sending threads (they finish what they hold), to be joined with the others.
    fn stop_senders(&self) {
        let threads = self.senders.close();
        lock(&self.threads).extend(threads);
    }
}
