//! The state every thread of one Streamable HTTP connection shares (the wire, the session,
//! the streams, the GET stream) and the steps they take on it.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::call::closed_by_client;
use super::parked::GetStream;
use super::session::{sent_session, Headers, Session};
use super::streams::{lock, Claim, Streams};
use super::wire::{Call, HttpResponse, Method, Wire, ACCEPT_SSE};
use crate::error::{Closed, Error, Result};
use crate::jsonrpc::RequestId;
use crate::transport::Inbox;

/// The state every thread of one connection shares.
pub(crate) struct Shared {
    pub wire: Wire,
    pub inbox: Inbox,
    pub streams: Streams,
    pub(super) session: Session,
    /// A session was set up once: from then on a refused connection means the server is gone
    /// (see [`Shared::perform`]).
    pub(super) ready: AtomicBool,
    pub(super) closed: AtomicBool,
    /// Why the transport itself ended the connection, when it did.
    pub(super) ended: Mutex<Option<Arc<Closed>>>,
    /// The running GET stream, if any.
    pub(super) get_stream: Mutex<Option<Arc<GetStream>>>,
    /// Set by [`SessionEvent::Stateless`](crate::transport::SessionEvent::Stateless): no session,
    /// no GET stream, no resumption.
    pub(super) stateless: AtomicBool,
    /// The caller's start-up deadline: the first GET stream is waited for until then at most.
    pub startup: Instant,
}

impl Shared {
    /// The session id and protocol-version headers every request after initialization carries.
    pub fn session_headers(&self) -> Headers {
        self.session.headers()
    }

    /// The GET that opens an event stream (`what`, for errors) on the connection's URL, with
    /// the session headers and, to resume a stream, `Last-Event-ID`: the GET stream's, and a
    /// POST's stream resumed after it dropped.
    pub fn stream_get<'a>(&'a self, last_event_id: Option<&str>, what: &'a str) -> Call<'a> {
        let mut headers = self.session_headers();
        if let Some(id) = last_event_id {
            headers.push(("last-event-id", id.to_owned()));
        }
        Call {
            method: Method::Get,
            url: &self.wire.config.url,
            body: None,
            accept: ACCEPT_SSE,
            headers,
            extra: &[],
            deadline: self.wire.internal_deadline(),
            what,
        }
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
    pub(super) fn closed_error(&self) -> Error {
        match lock(&self.ended).clone() {
            Some(closed) => Error::Closed(closed),
            None => closed_by_client(),
        }
    }

    /// Stops every stream and cuts every connection, waking every waiting thread; what the
    /// credential provider does for a request ends with [`Error::Closed`] for `why`.
    pub(super) fn shut_down(&self, why: Arc<Closed>) {
        self.stop_get_stream("the connection closed");
        self.streams.stop_all();
        self.wire.shutdown(why);
        self.session.end_reset();
    }
}

impl Shared {
    /// Performs `call`, a request someone waits on. A connection refused once a session is set up
    /// means the server is gone: the connection ends at once ([`Error::Closed`]) rather than wait
    /// out the reconnection policy, which timeouts, resets and 5xx statuses keep.
    pub fn perform(&self, call: &Call<'_>) -> Result<HttpResponse> {
        // Refused when connecting, not by the credential provider's own service: a provider's
        // error fails its request alone.
        let refused = Cell::new(false);
        let performed = self.wire.perform_noting(call, &refused);
        if let Err(error) = &performed {
            if refused.get() && self.ready.load(Ordering::SeqCst) {
                self.end(format!(
                    "the server is gone (nothing listens any more): {error}"
                ));
                return Err(self.closed_error());
            }
        }
        performed
    }

    /// Forgets the session if it is still the one `headers` carried: the server no longer
    /// knows it (see [`session::refusal`](super::session::refusal)).
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
    pub(super) fn stop_get_stream(&self, why: &str) {
        let stream = lock(&self.get_stream).take();
        if let Some(stream) = stream {
            // Before the stop wakes its reader, whose end would fail them without the reason.
            self.end_parked(&stream, why);
            stream.stop.stop();
        }
    }

    /// The requests parked on `stream`, which ended for good (`why`), fail (see
    /// [`Parked::end`](super::parked::Parked::end)).
    pub fn end_parked(&self, stream: &GetStream, why: &str) {
        stream
            .parked
            .end(&self.streams, &self.inbox, self.is_closed(), why);
    }
}
