//! Sorting what the transport delivers, on the thread that read it: responses and progress go
//! straight to the waiting caller, notifications to their queue, and only server requests,
//! notification callbacks and late responses for their handler take the slower road through
//! the router thread (`router_thread`). What is not the engine's own (a subscription's
//! notifications and responses, gaps) goes to the layers above through the [`Observer`],
//! which also hears of the close, when everything still pending fails.
//!
//! Bounds and policies:
//!
//! * the notification queue holds
//!   [`Options::with_notification_capacity`](crate::Options::with_notification_capacity) entries;
//!   when it is full the oldest unread one is dropped and counted
//!   ([`Client::notifications_dropped`](crate::Client::notifications_dropped));
//! * the router's queue holds [`ROUTER_QUEUE`] server requests (those JSON-RPC rejects for
//!   their id too), callback notifications and late responses; when it is full the
//!   transport's reader waits for room, which slows the reading of the server's output
//!   (backpressure to the server). The router itself never waits on user code for long
//!   except in the notification callback and the late-response handler, so only one of those
//!   that blocks can fill it. A notification waits at most [`CALLBACK_PATIENCE`] for room and
//!   is then dropped and counted like one the queue had no room for: a callback that blocks
//!   loses notifications, but never stops the responses behind them.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use crate::error::{Closed, Error};
use crate::jsonrpc::decode_value;
use crate::jsonrpc::{InvalidRequest, Message, Notification, Request, RequestId, Response};
use crate::queue::{self, Receiver, SendTimeoutError, Sender};
use crate::sync::lock;
use crate::transport::{Inbound, Inbox};

use super::late::{Abandoned, LateResponse};
use super::notes::Notes;
use super::observer::Observer;
use super::pending::{Answer, Pending, Reply, Slot};
use super::settings::{RawCallback, Settings};

/// How many server requests and callback notifications wait for the router.
pub(crate) const ROUTER_QUEUE: usize = 64;

/// How often a reader waiting for room in the router's queue checks whether the client closes.
const ROUTER_WAIT: Duration = Duration::from_millis(50);

/// How long a notification waits for room in the router's queue before it is dropped.
const CALLBACK_PATIENCE: Duration = Duration::from_secs(1);

/// The part of a connection's state the transport's reading threads use.
pub(crate) struct Core {
    pub(crate) pending: Mutex<Pending>,
    /// The notifications for [`Client::notifications`](crate::Client::notifications), closed
    /// when the connection closes, so readers see its end once they have read what is left.
    pub(crate) notes: Notes,
    pub(crate) dropped: AtomicU64,
    /// Whether the last notification for the callback was dropped for want of room.
    stalled: AtomicBool,
    /// Messages the server sent (responses, notifications, requests): the manager's health
    /// check tells a silent server from a busy one by it.
    pub(crate) received: AtomicU64,
    /// Whether notifications go through the router for the callback.
    has_callback: bool,
    /// Taken by the router when it ends: the transport's threads may outlive the client a
    /// little (they hold the inbox), and the user's callback (with whatever it holds) must not.
    pub(super) callback: Mutex<Option<RawCallback>>,
    /// The router's queue; closed to stop the router.
    work_tx: Sender<Work>,
    /// Set by `close`: the reader stops waiting for room in the router's queue.
    pub(crate) closing: AtomicBool,
    /// Whether the protocol in use allows JSON-RPC batches (set by the era above).
    pub(crate) batches: AtomicBool,
    /// Server requests being answered, by id; `true` once the server cancelled one. Only
    /// requests in flight are kept, so the map is bounded by the router queue and the pool.
    pub(crate) server_requests: Mutex<HashMap<RequestId, bool>>,
    /// The layers above, told of what is theirs: the notifications and responses of their
    /// subscriptions, gaps and the close. Installed when the client first follows the
    /// server (a subscription, a cacheable request): until then nothing is theirs.
    observer: OnceLock<Arc<dyn Observer>>,
    /// Requests given up, for the late-response handler.
    pub(crate) abandoned: Abandoned,
}

/// What the router thread does.
pub(crate) enum Work {
    /// Call the notification callback, then queue the notification.
    Notification(Notification),
    /// Answer a server request.
    Request(Request),
    /// Answer a request JSON-RPC rejects with the error it prescribes.
    Invalid(InvalidRequest),
    /// Pass a response that came after its request was given up to the handler.
    Late(LateResponse),
}

/// The receiving ends the router thread reads.
pub(crate) struct RouterChannels {
    pub(super) work: Receiver<Work>,
}

impl Core {
    /// The core of a connection with `settings`, with no observer yet.
    pub(crate) fn new(settings: &Settings) -> (Arc<Core>, RouterChannels) {
        let (work_tx, work) = queue::bounded(ROUTER_QUEUE);
        let core = Core {
            pending: Mutex::new(Pending::default()),
            notes: Notes::new(settings.notification_capacity),
            dropped: AtomicU64::new(0),
            stalled: AtomicBool::new(false),
            received: AtomicU64::new(0),
            has_callback: settings.on_raw_notification.is_some(),
            callback: Mutex::new(settings.on_raw_notification.clone()),
            work_tx,
            closing: AtomicBool::new(false),
            batches: AtomicBool::new(false),
            server_requests: Mutex::new(HashMap::new()),
            observer: OnceLock::new(),
            abandoned: Abandoned::new(settings.on_late_response.is_some()),
        };
        (Arc::new(core), RouterChannels { work })
    }

    /// Tells `observer` from now on what is not the engine's; the first one installed stays.
    pub(crate) fn observe(&self, observer: Arc<dyn Observer>) {
        let _ = self.observer.set(observer);
    }

    /// Notifications may have been lost, for `reason`: the observer hears of it.
    pub(crate) fn gap(&self, reason: &str) {
        if let Some(observer) = self.observer.get() {
            observer.gap(reason);
        }
    }

    /// The inbox the transport delivers into.
    pub(crate) fn inbox(self: &Arc<Core>) -> Inbox {
        let (core, fast) = (Arc::clone(self), Arc::clone(self));
        Inbox::with_sink(move |inbound| core.accept(inbound))
            .with_text_sink(move |text| fast.accept_response_text(text))
    }

    /// Takes a successful response to one of this client's requests straight from its text,
    /// keeping its result raw for the caller to decode once; `None` for anything else (which
    /// then takes the ordinary road).
    fn accept_response_text(&self, text: &str) -> Option<bool> {
        /// Just enough of a message to tell a successful response with an integer id.
        #[derive(Deserialize)]
        struct Envelope<'a> {
            id: Option<i64>,
            #[serde(borrow)]
            result: Option<&'a RawValue>,
            method: Option<serde::de::IgnoredAny>,
            error: Option<serde::de::IgnoredAny>,
        }
        if !text.starts_with('{') {
            return None;
        }
        let envelope: Envelope<'_> = serde_json::from_str(text).ok()?;
        let (Some(id), Some(result), None, None) = (
            envelope.id,
            envelope.result,
            envelope.method,
            envelope.error,
        ) else {
            return None;
        };
        self.received.fetch_add(1, Ordering::Relaxed);
        self.finish(id, Ok(Answer::raw(result.to_owned())));
        Some(lock(&self.pending).closed.is_none())
    }

    /// The reason the connection closed, if it has.
    pub(crate) fn closed(&self) -> Option<Arc<Closed>> {
        lock(&self.pending).closed.clone()
    }

    /// Takes one delivery; `false` once the connection is over.
    fn accept(&self, inbound: Inbound) -> bool {
        match inbound {
            Inbound::Message(message) => {
                self.received.fetch_add(1, Ordering::Relaxed);
                self.route(message)
            }
            Inbound::Batch(messages, invalid) => {
                self.received.fetch_add(1, Ordering::Relaxed);
                // Batches exist only in protocol 2025-03-26; elsewhere they break the protocol.
                if self.batches.load(Ordering::Relaxed) {
                    for message in messages {
                        self.route(message);
                    }
                    // Each answered alone, as other requests of a batch are, and by the same
                    // road as one that came alone.
                    for invalid in invalid {
                        self.to_router(Work::Invalid(invalid));
                    }
                } else {
                    let count = messages.len() + invalid.len();
                    log::debug!("dropping a batch of {count} messages");
                    // The batch is not taken, but a request it answers would otherwise
                    // wait for its deadline for a response that came and went.
                    for message in messages {
                        if let Message::Response(Response { id: Some(id), .. }) = message {
                            if let Some(n) = id.as_i64() {
                                let why = format!(
                                    "the server answered request {id} in a JSON-RPC batch, \
                                     which only protocol 2025-03-26 allows"
                                );
                                self.finish(n, Err(Error::Protocol(why)));
                            }
                        }
                    }
                }
            }
            Inbound::Invalid(invalid) => {
                self.received.fetch_add(1, Ordering::Relaxed);
                // Answered by the router like a ping: never by a handler, and never by
                // waiting for the server here.
                self.to_router(Work::Invalid(invalid));
            }
            Inbound::Failed(id, error) => {
                if let Some(n) = id.as_i64() {
                    self.finish(n, Err(error));
                }
            }
            Inbound::Unanswered(id, error) => {
                if let Some(n) = id.as_i64() {
                    self.unanswered(n, error);
                }
            }
            Inbound::Gap(reason) => {
                log::debug!("notifications may have been lost: {reason}");
                self.gap(&reason);
            }
            Inbound::Closed(closed) => {
                self.close_all(closed);
                return false;
            }
        }
        lock(&self.pending).closed.is_none()
    }

    fn route(&self, message: Message) {
        match message {
            Message::Response(Response {
                id: Some(id),
                result,
            }) => match id.as_i64() {
                Some(n) => {
                    let answer = result.map(|value| Answer::from_value(&value));
                    self.finish(n, answer.map_err(Error::Rpc))
                }
                None => log::debug!("dropping a response with unknown id {id}"),
            },
            Message::Response(Response { id: None, result }) => {
                log::debug!("server reported an uncorrelated error: {result:?}");
            }
            Message::Notification(notification) => self.notify(notification),
            Message::Request(request) => {
                lock(&self.server_requests).insert(request.id.clone(), false);
                self.to_router(Work::Request(request));
            }
        }
    }

    /// Hands the outcome to the waiting caller, or drops it when nobody waits any more.
    fn finish(&self, id: i64, result: crate::Result<Answer>) {
        let slot = lock(&self.pending).entries.remove(&id);
        match slot {
            Some(slot) => slot.put(id, Reply::Done(result)),
            // One of the layers above may have sent it (a subscription's request).
            None => match self.unmatched_above(id, result) {
                None => {}
                Some(result) => match self.abandoned.response(id, result) {
                    Some(late) => self.to_router(Work::Late(late)),
                    None => log::debug!("dropping a late or unknown response for request {id}"),
                },
            },
        }
    }

    /// A response no caller waits for, offered to the observer: `None` when it took it.
    fn unmatched_above(
        &self,
        id: i64,
        result: crate::Result<Answer>,
    ) -> Option<crate::Result<Answer>> {
        match self.observer.get() {
            Some(observer) => observer.unmatched(id, result),
            None => Some(result),
        }
    }

    /// Hands the caller of request `id`, which the server accepted and cannot answer, its
    /// error; the caller asks the server to stop working on it. A request nobody waits for
    /// (a subscription's, one given up on) ends as on any other failure.
    fn unanswered(&self, id: i64, error: Error) {
        let slot = lock(&self.pending).entries.remove(&id);
        match slot {
            Some(slot) => slot.put(id, Reply::Unanswered(error)),
            None => self.finish(id, Err(error)),
        }
    }

    fn notify(&self, notification: Notification) {
        // The layers above take what is theirs (a subscription's) and copy what they follow.
        let notification = match self.observer.get() {
            Some(observer) => match observer.notification(notification) {
                Some(notification) => notification,
                None => return,
            },
            None => notification,
        };
        let tokened = |p: &Value| p.get("progressToken").is_some();
        if notification.method == "notifications/progress"
            && notification.params.as_ref().is_some_and(tokened)
        {
            if let Some(params) = notification.params {
                self.progress(params);
            }
            return;
        }
        if notification.method == "notifications/cancelled" {
            let id = notification
                .params
                .as_ref()
                .and_then(|p| p.get("requestId"));
            if let Some(id) = id.and_then(|id| decode_value::<RequestId>(id).ok()) {
                // Only a request in flight can be withdrawn; ids of others are not kept.
                if let Some(cancelled) = lock(&self.server_requests).get_mut(&id) {
                    *cancelled = true;
                }
            }
        }
        if self.has_callback {
            self.to_router(Work::Notification(notification));
        } else {
            self.queue(notification);
        }
    }

    /// Queues work for the router, waiting for room: backpressure to the server (see the
    /// module docs). Gives up once the client is closing, so a router stuck in a callback
    /// cannot hold up close, and drops a notification that waited [`CALLBACK_PATIENCE`].
    fn to_router(&self, work: Work) {
        let mut work = work;
        // Once one notification gave up, the next ones do not wait until one gets through.
        let patience = match self.stalled.load(Ordering::Relaxed) {
            true => Instant::now(),
            false => Instant::now() + CALLBACK_PATIENCE,
        };
        loop {
            let wait = match &work {
                Work::Notification(_) => {
                    ROUTER_WAIT.min(patience.saturating_duration_since(Instant::now()))
                }
                _ => ROUTER_WAIT,
            };
            match self.work_tx.send_timeout(work, wait) {
                Ok(()) => {
                    self.stalled.store(false, Ordering::Relaxed);
                    return;
                }
                Err(SendTimeoutError::Disconnected(_)) => return,
                Err(SendTimeoutError::Timeout(back)) => {
                    if self.closing.load(Ordering::Acquire) || self.closed().is_some() {
                        log::debug!("the router is not keeping up with a closing client");
                        return;
                    }
                    if let Work::Notification(note) = &back {
                        if Instant::now() >= patience {
                            self.dropped.fetch_add(1, Ordering::Relaxed);
                            let level = match self.stalled.swap(true, Ordering::Relaxed) {
                                false => log::Level::Warn,
                                true => log::Level::Debug,
                            };
                            log::log!(
                                level,
                                "the notification callback has not kept up for \
                                 {CALLBACK_PATIENCE:?}; dropping notifications ({})",
                                note.method
                            );
                            return;
                        }
                    }
                    work = back;
                }
            }
        }
    }

    /// Progress (its params, as sent) goes to the request that asked for it; the token is that
    /// request's id.
    fn progress(&self, progress: Value) {
        let Some(id) = token_id(&progress) else {
            log::debug!("dropping progress with a token this client did not issue");
            return;
        };
        let slot = lock(&self.pending).entries.get(&id).cloned();
        match slot {
            Some(slot) => slot.put(id, Reply::Progress(progress)),
            None => log::debug!("dropping progress for an unknown token"),
        }
    }

    /// Queues a notification, dropping the oldest unread ones (counted) when the queue is
    /// full by count or by bytes.
    pub(crate) fn queue(&self, note: Notification) {
        let dropped = self.notes.push(note);
        if dropped > 0 {
            self.dropped.fetch_add(dropped as u64, Ordering::Relaxed);
            log::debug!("notification queue full; dropped the oldest {dropped}");
        }
    }

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
        self.work_tx.close();
        // A closed connection ends every subscription.
        if let Some(observer) = self.observer.get() {
            observer.closed(&closed);
        }
        log::debug!(
            "connection closed ({}); failing {} pending",
            closed.reason,
            entries.len()
        );
        fail(entries, &closed);
    }

    /// Fails the requests pending now, leaving the connection's closing (and its reason) to the
    /// transport's report: a closing client releases its callers before the server has exited.
    pub(crate) fn release_pending(&self, closed: &Arc<Closed>) {
        let entries = std::mem::take(&mut lock(&self.pending).entries);
        fail(entries, closed);
    }
}

/// Fails each of `entries` with `closed`.
fn fail(entries: impl IntoIterator<Item = (i64, Arc<Slot>)>, closed: &Arc<Closed>) {
    for (id, slot) in entries {
        slot.put(id, Reply::Done(Err(Error::Closed(closed.clone()))));
    }
}

/// The request id the progress token of `params` stands for.
fn token_id(params: &Value) -> Option<i64> {
    let token = params.get("progressToken")?;
    token
        .as_i64()
        .or_else(|| token.as_str().and_then(|s| s.parse().ok()))
}
