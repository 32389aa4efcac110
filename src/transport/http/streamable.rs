//! The Streamable HTTP transport: one POST per message, JSON or event-stream replies, the
//! session and protocol-version headers, the standalone GET stream and DELETE on close.
//!
//! While the layer above re-initializes an expired session, messages from other threads
//! wait for the new one (see `session`).
//!
//! The connection reports itself closed, with no call from the layer above, when the server
//! is gone: a request someone waits on finds nothing listening (see [`Shared::perform`]), or
//! the GET stream cannot be reopened within the reconnection policy (see `get_stream`, and `HttpConfig::standalone_stream`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::call::{by_client, describe};
use super::get_stream;
use super::reply;
use super::session::{self, sent_session, Refusal, Session};
use super::shared::Shared;
use super::socket;
use super::streams::Streams;
use super::wire::{self, Call, Method, Wire, ACCEPT_BOTH};
use crate::error::{Closed, Error, Result};
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
                let wanted =
                    self.shared.wire.config.standalone_stream && !self.shared.is_stateless();
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

    /// At most one `DELETE`, with the credentials held already and never a refresh or retry, so
    /// closing cannot start or wait for an authorization. Returns within [`CLOSE_TIMEOUT`].
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

    fn authorization_context(&self) -> u64 {
        self.shared.wire.authorization_context()
    }
}

impl Drop for StreamableHttp {
    fn drop(&mut self) {
        self.close();
    }
}
