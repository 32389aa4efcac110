//! One connection's request engine: ids, the pending table, deadlines, progress and cancel.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use serde_json::{json, Map, Value};

use crate::error::{Closed, Error, Result, TimeoutKind};
use crate::jsonrpc::{Message, Notification, Request, RequestId};
use crate::transport::Transport;
use crate::types::{InitializeResult, ProgressNotificationParams, ServerNotification};

use super::options::{lock, Options, RequestOptions};

/// How long sending `notifications/cancelled` may take.
const CANCEL_DEADLINE: Duration = Duration::from_secs(5);

/// What the router hands a waiting caller.
pub(crate) enum Reply {
    /// Progress for the caller's token.
    Progress(ProgressNotificationParams),
    /// The outcome.
    Done(Result<Value>),
    /// The caller's cancel handle fired.
    Cancel,
    /// The request was handed over from a sending thread (see `send_cancellable`).
    Sent,
    /// Sending the request failed (see `send_cancellable`).
    SendFailed(Error),
}

pub(crate) struct PendingEntry {
    pub(crate) tx: Sender<Reply>,
    pub(crate) method: String,
}

/// The pending table and the closed state live under one lock, so a request is either
/// registered before the connection closed (and then failed by the router) or sees the
/// closed state and fails at once. No request can slip in between and wait for nothing.
#[derive(Default)]
pub(crate) struct Pending {
    pub(crate) entries: HashMap<i64, PendingEntry>,
    pub(crate) closed: Option<Arc<Closed>>,
}

/// State shared by the client handle, the router thread and handler threads.
pub(crate) struct Shared {
    pub(crate) transport: Arc<dyn Transport>,
    pub(crate) options: Options,
    pub(crate) pending: Mutex<Pending>,
    next_id: AtomicI64,
    pub(crate) init: RwLock<Option<Arc<InitializeResult>>>,
    pub(crate) capabilities: RwLock<Value>,
    pub(crate) protocol_version: RwLock<String>,
    /// Bumped on every successful (re-)initialize, so concurrent callers that all saw the
    /// same expired session re-initialize once.
    pub(crate) generation: AtomicU64,
    pub(crate) reinit_lock: Mutex<()>,
    pub(crate) subscriptions: Mutex<Vec<String>>,
    /// The sending side is dropped when the connection closes, so readers of the queue see
    /// its end once they have read what is left.
    pub(crate) notify_tx: Mutex<Option<Sender<ServerNotification>>>,
    pub(crate) notify_rx: Receiver<ServerNotification>,
    pub(crate) router: Mutex<Option<JoinHandle<()>>>,
    pub(crate) cancelled_by_server: Mutex<Vec<RequestId>>,
    /// The protocol era; the transport above is wrapped to stamp stateless requests.
    pub(crate) era: Arc<super::era::EraState>,
    /// The open subscriptions (`client.listen`), which the router feeds.
    pub(crate) listens: super::listen::state::Registry,
    /// Cached results (`cache.rs`).
    pub(crate) cache: super::cache::Cache,
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
    pub(crate) fn new(transport: Box<dyn Transport>, options: Options) -> Shared {
        let (notify_tx, notify_rx) = crossbeam_channel::bounded(options.notification_capacity);
        let era = Arc::new(super::era::EraState::new(
            &options,
            transport.kind() == "streamable-http",
        ));
        let transport = super::era_transport::EraTransport::new(transport, Arc::clone(&era));
        Shared {
            transport: Arc::new(transport),
            options,
            pending: Mutex::new(Pending::default()),
            next_id: AtomicI64::new(1),
            init: RwLock::new(None),
            capabilities: RwLock::new(Value::Null),
            protocol_version: RwLock::new(String::new()),
            generation: AtomicU64::new(0),
            reinit_lock: Mutex::new(()),
            subscriptions: Mutex::new(Vec::new()),
            notify_tx: Mutex::new(Some(notify_tx)),
            notify_rx,
            router: Mutex::new(None),
            cancelled_by_server: Mutex::new(Vec::new()),
            era,
            listens: super::listen::state::Registry::default(),
            cache: super::cache::Cache::default(),
        }
    }

    /// A fresh request id, for requests sent outside [`Shared::call`] (`subscriptions/listen`).
    pub(crate) fn next_request_id(&self) -> i64 {
        self.next_id.fetch_add(1, Ordering::SeqCst)
    }

    /// The reason the connection closed, if it has.
    pub(crate) fn closed(&self) -> Option<Arc<Closed>> {
        lock(&self.pending).closed.clone()
    }

    /// Sends a request and waits for its outcome, honouring timeouts, progress and cancel.
    pub(crate) fn call(&self, spec: CallSpec<'_>) -> Result<Value> {
        if self.era.modern_version().is_some() {
            return super::mrtr::call(self, &spec);
        }
        let generation = self.generation.load(Ordering::SeqCst);
        match self.call_once(&spec) {
            Err(Error::SessionExpired)
                if !spec.handshake && self.options.reinitialize_on_expiry =>
            {
                log::debug!("session expired during `{}`; re-initializing", spec.method);
                super::lifecycle::reinitialize(self, generation)?;
                self.call_once(&spec)
            }
            other => other,
        }
    }

    pub(crate) fn call_once(&self, spec: &CallSpec<'_>) -> Result<Value> {
        // Hook: a fresh cached result answers without a round trip (`cache.rs`).
        super::cache::through(self, spec, |spec| self.call_wire(spec))
    }

    fn call_wire(&self, spec: &CallSpec<'_>) -> Result<Value> {
        let opts = spec.options;
        let timeout = opts.timeout.unwrap_or(self.options.request_timeout);
        let started = Instant::now();
        let total_deadline = opts.max_total.map(|max| started + max);
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        let params = with_meta(spec.params.clone(), id, opts);
        let (tx, rx) = crossbeam_channel::unbounded();
        {
            let mut pending = lock(&self.pending);
            if let Some(closed) = &pending.closed {
                return Err(Error::Closed(closed.clone()));
            }
            pending.entries.insert(
                id,
                PendingEntry {
                    tx: tx.clone(),
                    method: spec.method.to_owned(),
                },
            );
        }
        let cancellable = opts.cancel.as_ref().filter(|_| !spec.handshake);
        if let Some(cancel) = cancellable {
            if !cancel.attach(tx.clone()) {
                self.forget(id);
                return Err(Error::Cancelled {
                    method: spec.method.to_owned(),
                });
            }
        }
        let send_failed = |err: Error| match err {
            Error::Timeout { kind, .. } => Error::Timeout {
                method: spec.method.to_owned(),
                elapsed: started.elapsed(),
                kind,
            },
            other => other,
        };
        let mut deadline = started + timeout;
        let send_deadline = total_deadline.map_or(deadline, |t| t.min(deadline));
        let request = Message::Request(Request::new(id, spec.method, params));
        let sent = match cancellable {
            Some(_) => self.send_cancellable(request, send_deadline, tx),
            None => self.transport.send(&request, send_deadline),
        };
        if let Err(err) = sent {
            self.forget(id);
            return Err(send_failed(err));
        }
        // The timeout is the server's time to answer, counted from the hand-over: a send that
        // waited on credentials (a token refresh, a user authorizing) does not eat it. The
        // hand-over itself is bounded by the transport's send deadline, and the maximum total
        // time still counts from the start.
        let mut handed_over = cancellable.is_none();
        if handed_over {
            deadline = Instant::now() + timeout;
        }
        loop {
            let (wait_until, kind) = match total_deadline {
                Some(total) if total <= deadline => (total, TimeoutKind::Total),
                _ => (deadline, TimeoutKind::Request),
            };
            match rx.recv_deadline(wait_until) {
                Ok(Reply::Done(result)) => return result,
                Ok(Reply::Progress(progress)) => {
                    if let Some(callback) = &opts.progress {
                        callback(&progress);
                    }
                    if opts.reset_on_progress {
                        deadline = Instant::now() + timeout;
                    }
                }
                Ok(Reply::Sent) => {
                    handed_over = true;
                    deadline = Instant::now() + timeout;
                }
                Ok(Reply::SendFailed(err)) => {
                    self.forget(id);
                    return Err(send_failed(err));
                }
                Ok(Reply::Cancel) => {
                    self.abandon(id, spec, "cancelled by the client");
                    return Err(Error::Cancelled {
                        method: spec.method.to_owned(),
                    });
                }
                Err(RecvTimeoutError::Timeout) if !handed_over && kind == TimeoutKind::Request => {
                    // Still in the sending thread, whose own deadline ends it with `Sent` or
                    // `SendFailed`: keep waiting for that rather than time out a request the
                    // server may not have seen yet.
                    deadline = Instant::now() + timeout;
                }
                Err(RecvTimeoutError::Timeout) => {
                    self.abandon(id, spec, "timed out");
                    return Err(Error::Timeout {
                        method: spec.method.to_owned(),
                        elapsed: started.elapsed(),
                        kind,
                    });
                }
                Err(RecvTimeoutError::Disconnected) => {
                    // The router always answers before dropping an entry; getting here means
                    // it is gone, so the connection is.
                    return Err(Error::Closed(self.closed().unwrap_or_else(|| {
                        Arc::new(Closed {
                            reason: "connection ended".into(),
                            ..Closed::default()
                        })
                    })));
                }
            }
        }
    }

    /// Sends a cancellable request from a thread of its own, reporting a failure to the
    /// waiting caller as [`Reply::SendFailed`].
    ///
    /// A transport may return from `send` only once the server has answered: Streamable HTTP
    /// reads a JSON reply to the end before returning, which for a long tool call is the whole
    /// call. Sending on the caller's thread would leave the cancel handle unheard until then;
    /// from here the caller waits on its channel at once. The thread ends by `deadline`, which
    /// bounds every send. A cancel that fires before the request is written may reach the
    /// server first; a server ignores a cancellation for a request it does not know, and the
    /// late response is dropped by the router.
    fn send_cancellable(
        &self,
        request: Message,
        deadline: Instant,
        tx: Sender<Reply>,
    ) -> Result<()> {
        let transport = Arc::clone(&self.transport);
        let spawned = std::thread::Builder::new()
            .name("umcp-send".into())
            .spawn(move || {
                // Nobody listens any more when the caller has given up already.
                let _ = match transport.send(&request, deadline) {
                    Ok(()) => tx.send(Reply::Sent),
                    Err(err) => tx.send(Reply::SendFailed(err)),
                };
            });
        match spawned {
            Ok(_) => Ok(()),
            Err(err) => Err(Error::io(err)),
        }
    }

    /// Removes a pending entry without telling the server.
    fn forget(&self, id: i64) {
        lock(&self.pending).entries.remove(&id);
    }

    /// Gives up on a request: forget it, let the transport stop reading for it, and ask the
    /// server to stop working on it. A response arriving later is dropped by the router.
    fn abandon(&self, id: i64, spec: &CallSpec<'_>, reason: &str) {
        self.forget(id);
        let request_id = RequestId::from(id);
        self.transport.abandon(&request_id);
        if spec.handshake {
            return;
        }
        log::debug!(
            "request {id} `{}` {reason}; sending notifications/cancelled",
            spec.method
        );
        let params = json!({ "requestId": id, "reason": reason });
        let message =
            Message::Notification(Notification::new("notifications/cancelled", Some(params)));
        // The caller's deadline has passed already: the notice goes out from its own thread
        // so a server that stopped reading cannot hold the caller any longer.
        let transport = Arc::clone(&self.transport);
        let sent = std::thread::Builder::new()
            .name("umcp-cancel".into())
            .spawn(move || {
                if let Err(err) = transport.send(&message, Instant::now() + CANCEL_DEADLINE) {
                    log::debug!("could not send notifications/cancelled for {id}: {err}");
                }
            });
        if let Err(err) = sent {
            log::debug!("could not start a thread to cancel {id}: {err}");
        }
    }

    /// Sends a notification.
    pub(crate) fn notify(&self, method: &str, params: Option<Value>) -> Result<()> {
        if let Some(closed) = self.closed() {
            return Err(Error::Closed(closed));
        }
        let deadline = Instant::now() + self.options.request_timeout.min(Duration::from_secs(10));
        let message = Message::Notification(Notification::new(method, params));
        self.transport.send(&message, deadline)
    }
}

/// Adds the progress token and caller `_meta` to the params, creating the object if needed.
fn with_meta(params: Option<Value>, id: i64, opts: &RequestOptions) -> Option<Value> {
    if opts.progress.is_none() && opts.meta.is_none() {
        return params;
    }
    let mut object = match params {
        Some(Value::Object(map)) => map,
        None | Some(Value::Null) => Map::new(),
        Some(other) => return Some(other),
    };
    let meta = object
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(meta) = meta {
        if let Some(extra) = &opts.meta {
            meta.extend(extra.clone());
        }
        if opts.progress.is_some() {
            // The request id doubles as the progress token: unique among active requests.
            meta.insert("progressToken".into(), Value::from(id));
        }
    }
    Some(Value::Object(object))
}
