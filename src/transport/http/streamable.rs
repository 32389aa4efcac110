//! The Streamable HTTP transport: one POST per message, JSON or event-stream replies, the
//! session and protocol-version headers, the standalone GET stream and DELETE on close.
//!
//! While the layer above re-initializes an expired session, messages from other threads
//! wait for the new one (see `session`).
//!
//! The connection reports itself closed, with no call from the layer above, when the server
//! is gone: a request someone waits on finds nothing listening (see [`Shared::perform`]), or
//! the GET stream cannot be reopened within the reconnection policy (see `get_stream`).

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::get_stream::{self, GetStream};
use super::reply;
use super::session::{self, sent_session, Headers, Refusal, Session};
use super::socket;
use super::streams::{lock, Claim, Streams};
use super::wire::{self, Call, HttpResponse, Method, Wire, ACCEPT_BOTH};
use crate::error::{Closed, Error, Result, CLOSED_BY_CLIENT};
use crate::jsonrpc::{Message, RequestId};
use crate::transport::{Closing, Inbox, SessionEvent, Transport};

/// The longest `close` (and so `Drop`) takes, whatever the server does: the one `DELETE`
/// that ends the session, headers and body, must be done by then.
///
/// See the example on [`Client::close`](crate::Client::close).
pub const CLOSE_TIMEOUT: Duration = Duration::from_secs(2);

/// A Streamable HTTP connection.
pub(crate) struct StreamableHttp {
    shared: Arc<Shared>,
    /// A second `close` waits for the first one's `DELETE`.
    close_once: Closing,
}

/// The state every thread of one connection shares.
pub(crate) struct Shared {
    pub wire: Wire,
    pub inbox: Inbox,
    pub streams: Streams,
    session: Session,
    /// A session was set up once: from then on a refused connection means the server is gone
    /// (see [`Shared::perform`]).
    ready: AtomicBool,
    closed: AtomicBool,
    /// Why the transport itself ended the connection, when it did.
    ended: Mutex<Option<Arc<Closed>>>,
    /// The running GET stream, if any.
    get_stream: Mutex<Option<Arc<GetStream>>>,
    /// Set by [`SessionEvent::Stateless`]: no session, no GET stream, no resumption.
    stateless: AtomicBool,
    /// The caller's start-up deadline: the first GET stream is waited for until then at most.
    pub startup: Instant,
}

impl Shared {
    /// The session id and protocol-version headers every request after initialization carries.
    pub fn session_headers(&self) -> Headers {
        self.session.headers()
    }

    /// Ends the connection from the transport's side (the server is gone): reported to the
    /// inbox once, unless the client closed it first.
    pub fn end(&self, reason: String) {
        if self.closed.swap(true, Ordering::SeqCst) {
            return;
        }
        log::debug!("streamable HTTP connection closed: {reason}");
        let closed = Arc::new(Closed {
            reason,
            ..Closed::default()
        });
        *lock(&self.ended) = Some(Arc::clone(&closed));
        self.shut_down(Arc::clone(&closed));
        self.inbox.closed(Closed::clone(&closed));
    }

    /// The error for sending on this connection once it has closed.
    fn closed_error(&self) -> Error {
        match lock(&self.ended).clone() {
            Some(closed) => Error::Closed(closed),
            None => closed_by_client(),
        }
    }

    /// Stops every stream and cuts every connection, waking every waiting thread; what the
    /// credential provider does for a request ends with [`Error::Closed`] for `why`.
    fn shut_down(&self, why: Arc<Closed>) {
        self.stop_get_stream("the connection closed");
        self.streams.stop_all();
        self.wire.shutdown(why);
        self.session.end_reset();
    }
}

impl Shared {
    /// Performs `call`, a request someone waits on: a POST, or a call's stream resumed (see
    /// [`Wire::perform`]).
    ///
    /// A connection refused once a session was set up means nothing listens at the URL any
    /// more: the server is gone (a proxy in front of it that is gone counts the same; a proxy
    /// answering 502 or 503 does not). The request is lost either way, and waiting out the
    /// reconnection policy would only delay what its caller, the layer above and a manager
    /// watching it must learn, so the connection ends at once and the call fails with
    /// [`Error::Closed`], as every pending request does. Timeouts, resets and 5xx statuses
    /// say nothing of the kind: a resumed stream keeps the reconnection policy then.
    ///
    /// The GET stream does not come through here: nobody waits on its reopening, which
    /// retries a refused connection under the policy, for a server restarting on its port.
    ///
    /// # Errors
    ///
    /// Those of [`Wire::perform`], and [`Error::Closed`] as above.
    pub fn perform(&self, call: &Call<'_>) -> Result<HttpResponse> {
        let performed = self.wire.perform(call);
        if let Err(error) = &performed {
            let refused =
                matches!(error, Error::Io(e) if e.kind() == io::ErrorKind::ConnectionRefused);
            if refused && self.ready.load(Ordering::SeqCst) {
                self.end(format!(
                    "the server is gone (nothing listens any more): {error}"
                ));
                return Err(self.closed_error());
            }
        }
        performed
    }

    /// Forgets the session if it is still the one `headers` carried: the server no longer
    /// knows it (see [`session::refusal`]).
    pub fn expire_session(&self, headers: &[(&'static str, String)]) {
        if sent_session(headers).is_some_and(|sent| self.session.expire(sent)) {
            self.stop_get_stream("the session expired");
        }
    }

    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    /// Whether the layer above speaks the stateless protocol.
    pub fn is_stateless(&self) -> bool {
        self.stateless.load(Ordering::SeqCst)
    }

    /// Registers a new GET stream unless one is running; returns it.
    pub fn claim_get_stream(&self) -> Option<Arc<GetStream>> {
        let mut slot = lock(&self.get_stream);
        if slot
            .as_ref()
            .is_some_and(|stream| !stream.stop.is_stopped())
        {
            return None;
        }
        let stream = Arc::new(GetStream::default());
        *slot = Some(Arc::clone(&stream));
        Some(stream)
    }

    /// Parks request `id` (method `what`, accepted with `answer` and no response) on the GET
    /// stream, as `claim`, when one is open or being reopened after it dropped: the response
    /// may still arrive there. Whether it did.
    pub fn park_on_get_stream(
        &self,
        id: RequestId,
        what: &str,
        answer: &str,
        claim: Claim<'_>,
    ) -> bool {
        lock(&self.get_stream)
            .as_ref()
            .is_some_and(|stream| stream.parked.park(id, what, answer, claim))
    }

    /// Fails request `id`, which the server accepted without its response and which nothing
    /// can bring: the layer above hears that the server may still be working on it.
    pub fn unanswered(&self, id: RequestId, error: Error) {
        // As after a failed send: a re-initialization whose handshake ends here sends nothing
        // more, and the messages it holds go out.
        self.session.end_reset_by(std::thread::current().id());
        self.inbox.unanswered(id, error);
    }

    /// Stops the GET stream, which ends for good (`why`).
    fn stop_get_stream(&self, why: &str) {
        let stream = lock(&self.get_stream).take();
        if let Some(stream) = stream {
            // Before the stop wakes its reader, whose end would fail them without the reason.
            stream.parked.end(self, why);
            stream.stop.stop();
        }
    }
}

/// The error for sending on a closed connection.
pub(crate) fn closed_by_client() -> Error {
    Error::Closed(by_client())
}

/// Why a connection the client closed is closed.
pub(crate) fn by_client() -> Arc<Closed> {
    Arc::new(Closed {
        reason: CLOSED_BY_CLIENT.into(),
        ..Closed::default()
    })
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
    pub fn new(wire: Wire, inbox: Inbox, startup: Instant) -> StreamableHttp {
        StreamableHttp {
            shared: Arc::new(Shared {
                wire,
                inbox,
                streams: Streams::default(),
                session: Session::default(),
                ready: AtomicBool::new(false),
                closed: AtomicBool::new(false),
                ended: Mutex::new(None),
                get_stream: Mutex::new(None),
                stateless: AtomicBool::new(false),
                startup,
            }),
            close_once: Closing::default(),
        }
    }

    /// One POST of `message` with the layer above's per-message headers, answered by
    /// `deadline`.
    fn post(&self, message: &Message, deadline: Instant, extra: &[(String, String)]) -> Result<()> {
        let config = &self.shared.wire.config;
        let body = message.encode();
        let what = describe(message);
        log::trace!("> {body}");
        let deadline = self.shared.wire.post_deadline(deadline);
        let shared = &self.shared;
        let request_id = match message {
            Message::Request(r) => Some(r.id.clone()),
            _ => None,
        };
        // Before the POST: abandoning the request while it waits for its answer must stop
        // the stream that answer opens.
        let claim = request_id.clone().map(|id| shared.streams.claim(id));
        let headers = shared.session.headers_by(deadline, what, || {
            shared.is_closed().then(|| shared.closed_error())
        })?;
        let call = Call {
            method: Method::Post,
            url: &config.url,
            body: Some(&body),
            accept: ACCEPT_BOTH,
            headers,
            extra,
            deadline,
            what,
        };
        let response = self.shared.perform(&call)?;
        let socket = socket::take_last();
        let status = response.status().as_u16();
        if !(200..300).contains(&status) {
            let id = request_id.as_ref();
            return Err(
                match session::refusal(response, &config.url, &call.headers, id, deadline) {
                    Refusal::Expired => {
                        self.shared.expire_session(&call.headers);
                        Error::SessionExpired
                    }
                    Refusal::Error(error) => error,
                },
            );
        }
        if !self.shared.is_stateless() {
            self.shared.session.remember(&response);
        }
        match request_id.zip(claim) {
            Some((id, claim)) => {
                reply::accept(&self.shared, id, response, what, deadline, socket, claim)
            }
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
        self.send_with_headers(message, deadline, &[])
    }

    fn send_with_headers(
        &self,
        message: &Message,
        deadline: Instant,
        extra: &[(String, String)],
    ) -> Result<()> {
        if self.shared.is_closed() {
            return Err(self.shared.closed_error());
        }
        let sent = self.post(message, deadline, extra);
        // Closing cut the exchange: that is why it failed, whatever the socket said.
        if sent.is_err() && self.shared.is_closed() {
            return Err(self.shared.closed_error());
        }
        if sent.is_err() {
            // A re-initialization that failed to send ends here: the held messages go out.
            self.shared
                .session
                .end_reset_by(std::thread::current().id());
        }
        sent
    }

    fn abandon(&self, id: &RequestId) {
        self.shared.streams.stop_request(id);
    }

    fn session_event(&self, event: SessionEvent<'_>) {
        match event {
            SessionEvent::Negotiated { protocol_version } => {
                self.shared.session.set_protocol_version(protocol_version);
            }
            SessionEvent::Ready => {
                self.shared.ready.store(true, Ordering::SeqCst);
                self.shared.session.end_reset();
                let wanted = self.shared.wire.config.get_stream && !self.shared.is_stateless();
                if wanted && !self.shared.is_closed() {
                    get_stream::start(&self.shared);
                }
            }
            SessionEvent::Reset => {
                self.shared.session.reset();
                self.shared.stateless.store(false, Ordering::SeqCst);
                self.shared
                    .stop_get_stream("the session ended, and a new one is being set up");
            }
            SessionEvent::Stateless => {
                // No session to set up, so nothing to hold other messages for.
                self.shared.session.reset();
                self.shared.session.end_reset();
                self.shared.stateless.store(true, Ordering::SeqCst);
                self.shared
                    .stop_get_stream("the connection switched to the stateless protocol");
            }
        }
    }

    /// Sends at most one `DELETE` for the session. Authorization belongs on every request
    /// of a session, so it carries the credentials the provider holds already; but never a
    /// refresh and never a retry, so closing cannot start an authorization or wait for one.
    /// Returns within [`CLOSE_TIMEOUT`] whatever the server does, and leaves no stream, thread
    /// or connection behind (reader threads end as their sockets are shut down).
    fn close(&self) {
        // The slack covers the shutting down after the `DELETE`.
        if !self
            .close_once
            .start(CLOSE_TIMEOUT.saturating_add(Duration::from_secs(1)))
        {
            return;
        }
        if self.shared.closed.swap(true, Ordering::SeqCst) {
            // The transport ended the connection itself (the server is gone): nothing to send.
            self.close_once.finish();
            return;
        }
        // A call obtaining credentials (refreshing a token, waiting behind another thread's
        // authorization) ends now, not once the `DELETE` is done.
        self.shared.wire.end_credentials(by_client());
        self.shared.stop_get_stream("the connection closed");
        self.shared.streams.stop_all();
        self.shared.session.end_reset();
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
                extra: &[],
                deadline,
                what: "DELETE session",
            };
            match self.shared.wire.perform_cached(&call) {
                Ok(response) => {
                    log::debug!("DELETE session: HTTP {}", response.status().as_u16());
                    wire::drain(response, deadline);
                }
                Err(e) => log::debug!("DELETE session failed: {e}"),
            }
        }
        let why = by_client();
        self.shared.shut_down(Arc::clone(&why));
        self.shared.inbox.closed(Closed::clone(&why));
        self.close_once.finish();
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
