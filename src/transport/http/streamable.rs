//! The Streamable HTTP transport: one POST per message, JSON or event-stream replies, the
//! session and protocol-version headers, the standalone GET stream and DELETE on close.
//!
//! While the layer above re-initializes an expired session (between
//! [`SessionEvent::Reset`] and [`SessionEvent::Ready`]), only the thread that reported the
//! reset sends; messages from other threads wait, each by its own deadline, for the new
//! session, instead of going out with none. A failed send from the re-initializing thread
//! (or `close`) ends the wait too.
//!
//! The connection reports itself closed, with no call from the layer above, when the server
//! is gone: the GET stream cannot be reopened (see `get_stream`), or a POST finds nothing
//! listening where a session was running.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use super::socket::{self, Socket};
use super::streams::{self, lock, Stop, Streams};
use super::wire::{self, Call, HttpResponse, Method, Wire, ACCEPT_BOTH};
use super::{get_stream, post_stream};
use crate::error::{Closed, Error, Result, TimeoutKind};
use crate::jsonrpc::{Message, Payload, RequestId};
use crate::transport::{Inbox, SessionEvent, Transport};

/// The longest `close` (and so `Drop`) takes, whatever the server does: the one `DELETE`
/// that ends the session, headers and body, must be done by then.
pub const CLOSE_TIMEOUT: Duration = Duration::from_secs(2);

/// A Streamable HTTP connection.
pub(crate) struct StreamableHttp {
    shared: Arc<Shared>,
}

/// The state every thread of one connection shares.
pub(crate) struct Shared {
    pub wire: Wire,
    pub inbox: Inbox,
    pub streams: Streams,
    session: Mutex<Session>,
    /// Signalled when a re-initialization ends (see the module docs).
    session_ready: Condvar,
    /// A session was set up once: from then on a refused connection means the server is gone.
    ready: AtomicBool,
    closed: AtomicBool,
    /// The stop signal of the running GET stream, if any.
    get_stream: Mutex<Option<Arc<Stop>>>,
}

/// What the server and the layer above established.
#[derive(Debug, Default)]
struct Session {
    id: Option<String>,
    protocol_version: Option<String>,
    /// The thread re-initializing the session, while it does.
    resetting: Option<ThreadId>,
}

impl Shared {
    /// The session id and protocol-version headers every request after initialization carries.
    pub fn session_headers(&self) -> Vec<(&'static str, String)> {
        headers_of(&lock(&self.session))
    }

    /// The session headers for a message sent by `deadline`, once no re-initialization by
    /// another thread is under way.
    fn session_headers_by(
        &self,
        deadline: Instant,
        what: &str,
    ) -> Result<Vec<(&'static str, String)>> {
        let started = Instant::now();
        let me = std::thread::current().id();
        let mut session = lock(&self.session);
        while session.resetting.is_some_and(|thread| thread != me) {
            if self.is_closed() {
                return Err(closed_by_client());
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Error::Timeout {
                    method: what.to_owned(),
                    elapsed: started.elapsed(),
                    kind: TimeoutKind::Write,
                });
            }
            session = self
                .session_ready
                .wait_timeout(session, left)
                .map(|(guard, _)| guard)
                .unwrap_or_else(|e| e.into_inner().0);
        }
        Ok(headers_of(&session))
    }

    /// Ends a re-initialization: held messages go out (with the new session, if any).
    fn end_reset(&self) {
        let mut session = lock(&self.session);
        if session.resetting.take().is_some() {
            drop(session);
            self.session_ready.notify_all();
        }
    }

    /// Ends a re-initialization when the thread running it failed to send.
    fn end_reset_by(&self, thread: ThreadId) {
        if lock(&self.session).resetting == Some(thread) {
            self.end_reset();
        }
    }

    /// Ends the connection from the transport's side (the server is gone): reported to the
    /// inbox once, unless the client closed it first.
    pub fn end(&self, reason: String) {
        if self.closed.swap(true, Ordering::SeqCst) {
            return;
        }
        log::debug!("streamable HTTP connection closed: {reason}");
        self.shut_down();
        self.inbox.closed(Closed {
            reason,
            ..Closed::default()
        });
    }

    /// Stops every stream and cuts every connection, waking every waiting thread.
    fn shut_down(&self) {
        self.stop_get_stream();
        self.streams.stop_all();
        self.wire.shutdown();
        self.end_reset();
    }
}

/// The session id and protocol-version headers of `session`.
fn headers_of(session: &Session) -> Vec<(&'static str, String)> {
    let mut headers = Vec::with_capacity(2);
    if let Some(id) = &session.id {
        headers.push(("mcp-session-id", id.clone()));
    }
    if let Some(version) = &session.protocol_version {
        headers.push(("mcp-protocol-version", version.clone()));
    }
    headers
}

impl Shared {
    /// Forgets the session if it is still the one `headers` carried: the server answered 404.
    pub fn expire_session(&self, headers: &[(&'static str, String)]) -> bool {
        let Some(sent) = sent_session(headers) else {
            return false;
        };
        let mut session = lock(&self.session);
        if session.id.as_deref() == Some(sent) {
            log::debug!("session {sent} expired on the server");
            session.id = None;
            session.protocol_version = None;
            drop(session);
            self.stop_get_stream();
        }
        true
    }

    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    /// Registers a new GET stream unless one is running; returns its stop signal.
    pub fn claim_get_stream(&self) -> Option<Arc<Stop>> {
        let mut slot = lock(&self.get_stream);
        if slot.as_ref().is_some_and(|stop| !stop.is_stopped()) {
            return None;
        }
        let stop = Stop::new();
        *slot = Some(stop.clone());
        Some(stop)
    }

    fn stop_get_stream(&self) {
        if let Some(stop) = lock(&self.get_stream).take() {
            stop.stop();
        }
    }

    /// Stores the session id the server issued, if it is a valid one.
    fn remember_session(&self, response: &HttpResponse) {
        let Some(id) = wire::header(response, "mcp-session-id") else {
            return;
        };
        if !wire::valid_session_id(id) {
            log::debug!("ignoring a session id that is not visible ASCII");
            return;
        }
        let mut session = lock(&self.session);
        if session.id.as_deref() != Some(id) {
            log::debug!("session id {id}");
            session.id = Some(id.to_owned());
        }
    }
}

/// The session id among request headers.
pub(crate) fn sent_session<'h>(headers: &'h [(&'static str, String)]) -> Option<&'h str> {
    headers
        .iter()
        .find(|(name, _)| *name == "mcp-session-id")
        .map(|(_, value)| value.as_str())
}

/// The error for sending on a closed connection.
pub(crate) fn closed_by_client() -> Error {
    Error::Closed(Arc::new(Closed {
        reason: "closed by client".into(),
        ..Closed::default()
    }))
}

/// What a POST is waited for, for timeout errors.
pub(crate) fn describe(message: &Message) -> &str {
    match message {
        Message::Request(r) => &r.method,
        Message::Notification(n) => &n.method,
        Message::Response(_) => "response",
    }
}

impl StreamableHttp {
    /// A connection to `wire`'s URL. Nothing is sent until the first message.
    pub fn new(wire: Wire, inbox: Inbox) -> StreamableHttp {
        StreamableHttp {
            shared: Arc::new(Shared {
                wire,
                inbox,
                streams: Streams::default(),
                session: Mutex::new(Session::default()),
                session_ready: Condvar::new(),
                ready: AtomicBool::new(false),
                closed: AtomicBool::new(false),
                get_stream: Mutex::new(None),
            }),
        }
    }

    /// Handles a 2xx answer to a request: the response arrives in the body (read by
    /// `deadline`) or on a stream read from `socket`.
    fn accept_reply(
        &self,
        id: RequestId,
        response: HttpResponse,
        what: &str,
        deadline: Instant,
        socket: Option<Socket>,
    ) -> Result<()> {
        if response.status().as_u16() == 202 || wire::is_empty_body(&response) {
            wire::drain(response, deadline);
            return Ok(());
        }
        let media_type = wire::media_type(&response);
        if media_type == "text/event-stream" {
            return post_stream::start(&self.shared, id, response, socket);
        }
        let config = &self.shared.wire.config;
        let text = wire::read_text(response, config.max_event_size, what, deadline)?;
        if text.trim().is_empty() {
            return Ok(());
        }
        if media_type != "application/json" {
            return Err(Error::Protocol(format!(
                "unexpected content type `{media_type}` in the reply to {what}: {}",
                wire::snippet(&text)
            )));
        }
        log::trace!("< {text}");
        let (messages, batch) = match Payload::decode(&text) {
            Ok(Payload::Single(message)) => (vec![message], false),
            Ok(Payload::Batch(messages, _)) => (messages, true),
            Err(e) => {
                return Err(Error::Protocol(format!(
                    "invalid JSON reply to {what}: {e}: {}",
                    wire::snippet(&text)
                )))
            }
        };
        let inbox = &self.shared.inbox;
        if streams::deliver(
            inbox,
            Some(&self.shared.streams),
            messages,
            batch,
            Some(&id),
        ) {
            Ok(())
        } else {
            Err(Error::Protocol(format!(
                "the JSON reply to {what} holds no response to request {id}: {}",
                wire::snippet(&text)
            )))
        }
    }

    /// One POST of `message`, answered by `deadline`.
    fn post(&self, message: &Message, deadline: Instant) -> Result<()> {
        let config = &self.shared.wire.config;
        let body = message.encode();
        let what = describe(message);
        log::trace!("> {body}");
        let deadline = self.shared.wire.post_deadline(deadline);
        let headers = self.shared.session_headers_by(deadline, what)?;
        let call = Call {
            method: Method::Post,
            url: &config.url,
            body: Some(&body),
            accept: ACCEPT_BOTH,
            headers,
            deadline,
            what,
        };
        let response = self.shared.wire.perform(&call)?;
        let socket = socket::take_last();
        let status = response.status().as_u16();
        let request_id = match message {
            Message::Request(r) => Some(r.id.clone()),
            _ => None,
        };
        if !(200..300).contains(&status) {
            if status == 404 && self.shared.expire_session(&call.headers) {
                wire::drain(response, deadline);
                return Err(Error::SessionExpired);
            }
            return Err(wire::status_error(
                response,
                &config.url,
                request_id.as_ref(),
                deadline,
            ));
        }
        self.shared.remember_session(&response);
        match request_id {
            Some(id) => self.accept_reply(id, response, what, deadline, socket),
            None => {
                // Notifications and responses get 202; some servers send a body anyway,
                // which carries nothing for us.
                wire::drain(response, deadline);
                Ok(())
            }
        }
    }
}

impl Transport for StreamableHttp {
    fn send(&self, message: &Message, deadline: Instant) -> Result<()> {
        if self.shared.is_closed() {
            return Err(closed_by_client());
        }
        let sent = self.post(message, deadline);
        if let Err(error) = &sent {
            // A re-initialization that failed to send ends here: the held messages go out.
            self.shared.end_reset_by(std::thread::current().id());
            // Nothing listens where a session was running: the server is gone, which the
            // layer above (and a manager watching it) learns as the end of the connection.
            let refused =
                matches!(error, Error::Io(e) if e.kind() == io::ErrorKind::ConnectionRefused);
            if refused && self.shared.ready.load(Ordering::SeqCst) {
                self.shared.end(format!("the server is gone: {error}"));
            }
        }
        sent
    }

    fn abandon(&self, id: &RequestId) {
        self.shared.streams.stop_request(id);
    }

    fn session_event(&self, event: SessionEvent<'_>) {
        match event {
            SessionEvent::Negotiated { protocol_version } => {
                lock(&self.shared.session).protocol_version = Some(protocol_version.to_owned());
            }
            SessionEvent::Ready => {
                self.shared.ready.store(true, Ordering::SeqCst);
                self.shared.end_reset();
                if self.shared.wire.config.get_stream && !self.shared.is_closed() {
                    get_stream::start(&self.shared);
                }
            }
            SessionEvent::Reset => {
                *lock(&self.shared.session) = Session {
                    resetting: Some(std::thread::current().id()),
                    ..Session::default()
                };
                self.shared.stop_get_stream();
            }
        }
    }

    /// Sends at most one `DELETE` for the session, with the configured headers only: never
    /// the credential provider, never a retry, so closing cannot start an authorization.
    /// Returns within [`CLOSE_TIMEOUT`] whatever the server does, and leaves no stream, thread
    /// or connection behind (reader threads end as their sockets are shut down).
    fn close(&self) {
        if self.shared.closed.swap(true, Ordering::SeqCst) {
            return;
        }
        self.shared.stop_get_stream();
        self.shared.streams.stop_all();
        self.shared.end_reset();
        let headers = self.shared.session_headers();
        if sent_session(&headers).is_some() {
            let config = &self.shared.wire.config;
            let limit = config
                .request_timeout
                .unwrap_or(CLOSE_TIMEOUT)
                .min(CLOSE_TIMEOUT);
            let deadline = socket::deadline_after(Instant::now(), limit);
            let call = Call {
                method: Method::Delete,
                url: &config.url,
                body: None,
                accept: ACCEPT_BOTH,
                headers,
                deadline,
                what: "DELETE session",
            };
            match self.shared.wire.perform_plain(&call) {
                Ok(response) => {
                    log::debug!("DELETE session: HTTP {}", response.status().as_u16());
                    wire::drain(response, deadline);
                }
                Err(e) => log::debug!("DELETE session failed: {e}"),
            }
        }
        self.shared.shut_down();
        self.shared.inbox.closed(Closed {
            reason: "closed by client".into(),
            ..Closed::default()
        });
    }

    fn kind(&self) -> &'static str {
        "streamable-http"
    }
}

impl Drop for StreamableHttp {
    fn drop(&mut self) {
        self.close();
    }
}
