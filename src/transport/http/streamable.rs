//! The Streamable HTTP transport: one POST per message, JSON or event-stream replies, the
//! session and protocol-version headers, the standalone GET stream and DELETE on close.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::streams::{self, lock, Stop, Streams};
use super::wire::{self, Call, HttpResponse, Method, Wire, ACCEPT_BOTH};
use super::{get_stream, post_stream};
use crate::error::{Closed, Error, Result};
use crate::jsonrpc::{Message, Payload, RequestId};
use crate::transport::{Inbox, SessionEvent, Transport};

/// The longest `close` waits for the server to acknowledge `DELETE`.
const DELETE_TIMEOUT: Duration = Duration::from_secs(2);

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
    closed: AtomicBool,
    /// The stop signal of the running GET stream, if any.
    get_stream: Mutex<Option<Arc<Stop>>>,
    /// Set by [`SessionEvent::Stateless`]: no session, no GET stream, no resumption.
    stateless: AtomicBool,
}

/// What the server and the layer above established.
#[derive(Debug, Default)]
struct Session {
    id: Option<String>,
    protocol_version: Option<String>,
}

impl Shared {
    /// The session id and protocol-version headers every request after initialization carries.
    pub fn session_headers(&self) -> Vec<(&'static str, String)> {
        let session = lock(&self.session);
        let mut headers = Vec::new();
        if let Some(id) = &session.id {
            headers.push(("mcp-session-id", id.clone()));
        }
        if let Some(version) = &session.protocol_version {
            headers.push(("mcp-protocol-version", version.clone()));
        }
        headers
    }

    /// Forgets the session if it is still the one `headers` carried: the server answered 404.
    pub fn expire_session(&self, headers: &[(&'static str, String)]) -> bool {
        let Some(sent) = sent_session(headers) else {
            return false;
        };
        let mut session = lock(&self.session);
        if session.id.as_deref() == Some(sent) {
            log::debug!("session {sent} expired on the server");
            *session = Session::default();
            drop(session);
            self.stop_get_stream();
        }
        true
    }

    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    /// Whether the layer above speaks the stateless protocol.
    pub fn is_stateless(&self) -> bool {
        self.stateless.load(Ordering::SeqCst)
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
        if self.is_stateless() {
            return;
        }
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
                closed: AtomicBool::new(false),
                get_stream: Mutex::new(None),
                stateless: AtomicBool::new(false),
            }),
        }
    }

    /// Handles a 2xx answer to a request: the response arrives in the body or on a stream.
    fn accept_reply(&self, id: RequestId, response: HttpResponse, what: &str) -> Result<()> {
        if response.status().as_u16() == 202 || wire::is_empty_body(&response) {
            return Ok(());
        }
        let media_type = wire::media_type(&response);
        if media_type == "text/event-stream" {
            return post_stream::start(&self.shared, id, response);
        }
        let config = &self.shared.wire.config;
        let text = wire::read_text(response, config.max_event_size, what)?;
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
}

impl Transport for StreamableHttp {
    fn send(&self, message: &Message, deadline: Instant) -> Result<()> {
        self.send_with_headers(message, deadline, &[])
    }

    fn send_with_headers(
        &self,
        message: &Message,
        deadline: Instant,
        extra: &[(String, String)],
    ) -> Result<()> {
        if self.shared.is_closed() {
            return Err(closed_by_client());
        }
        let config = &self.shared.wire.config;
        let body = message.encode();
        let what = describe(message);
        log::trace!("> {body}");
        let (deadline, per_read) = self.shared.wire.post_limits(deadline);
        let headers = self.shared.session_headers();
        let call = Call {
            method: Method::Post,
            url: &config.url,
            body: Some(&body),
            accept: ACCEPT_BOTH,
            headers,
            extra,
            deadline,
            per_read,
            what,
        };
        let response = self.shared.wire.perform(&call)?;
        let status = response.status().as_u16();
        let request_id = match message {
            Message::Request(r) => Some(r.id.clone()),
            _ => None,
        };
        if !(200..300).contains(&status) {
            if status == 404 && self.shared.expire_session(&call.headers) {
                wire::drain(response);
                return Err(Error::SessionExpired);
            }
            return Err(wire::status_error(
                response,
                &config.url,
                request_id.as_ref(),
            ));
        }
        self.shared.remember_session(&response);
        match request_id {
            Some(id) => self.accept_reply(id, response, what),
            None => {
                // Notifications and responses get 202; some servers send a body anyway,
                // which carries nothing for us.
                wire::drain(response);
                Ok(())
            }
        }
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
                let wanted = self.shared.wire.config.get_stream && !self.shared.is_stateless();
                if wanted && !self.shared.is_closed() {
                    get_stream::start(&self.shared);
                }
            }
            SessionEvent::Reset => {
                *lock(&self.shared.session) = Session::default();
                self.shared.stateless.store(false, Ordering::SeqCst);
                self.shared.stop_get_stream();
            }
            SessionEvent::Stateless => {
                *lock(&self.shared.session) = Session::default();
                self.shared.stateless.store(true, Ordering::SeqCst);
                self.shared.stop_get_stream();
            }
        }
    }

    fn close(&self) {
        if self.shared.closed.swap(true, Ordering::SeqCst) {
            return;
        }
        // Reader threads notice the stop signal after their next event or read timeout; they
        // hold nothing the caller waits for, so they are not joined.
        self.shared.stop_get_stream();
        self.shared.streams.stop_all();
        let headers = self.shared.session_headers();
        if sent_session(&headers).is_some() {
            let config = &self.shared.wire.config;
            let limit = config
                .request_timeout
                .unwrap_or(DELETE_TIMEOUT)
                .min(DELETE_TIMEOUT);
            let call = Call {
                method: Method::Delete,
                url: &config.url,
                body: None,
                accept: ACCEPT_BOTH,
                headers,
                extra: &[],
                deadline: Instant::now() + limit,
                per_read: limit,
                what: "DELETE session",
            };
            match self.shared.wire.perform(&call) {
                Ok(response) => {
                    log::debug!("DELETE session: HTTP {}", response.status().as_u16());
                    wire::drain(response);
                }
                Err(e) => log::debug!("DELETE session failed: {e}"),
            }
        }
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
