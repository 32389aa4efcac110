//! The session of a Streamable HTTP connection: the id the server issued, the negotiated
//! protocol version, and the hold on other threads' messages while the layer above
//! re-initializes an expired session.
//!
//! Between [`SessionEvent::Reset`](crate::transport::SessionEvent::Reset) and
//! [`SessionEvent::Ready`](crate::transport::SessionEvent::Ready) only the thread that
//! reported the reset sends (it runs the new handshake); messages from other threads wait,
//! each by its own deadline, for the new session instead of going out with none. A failed
//! send from the re-initializing thread, the deadline of its last send passing (a handshake
//! the server answered with an error sends nothing more), or the end of the connection ends
//! the wait too.
//!
//! A session has expired when the server answers a request that carried it with 404, or with
//! a 400 whose body names the session (see [`refusal`]).

use std::sync::{Condvar, Mutex};
use std::thread::ThreadId;
use std::time::Instant;

use super::streams::lock;
use super::wire::{self, HttpResponse};
use crate::error::{Error, Result, TimeoutKind};
use crate::jsonrpc::RequestId;

/// Session headers: `Mcp-Session-Id` and `MCP-Protocol-Version`, when known.
pub(crate) type Headers = Vec<(&'static str, String)>;

/// The session state of one connection.
#[derive(Debug, Default)]
pub(crate) struct Session {
    state: Mutex<State>,
    /// Signalled when a re-initialization ends.
    reset_done: Condvar,
}

#[derive(Debug, Default)]
struct State {
    id: Option<String>,
    protocol_version: Option<String>,
    /// The thread re-initializing the session, while it does.
    resetting: Option<ThreadId>,
    /// The deadline of the re-initializing thread's last send: the hold ends by then.
    hold_until: Option<Instant>,
}

impl State {
    fn headers(&self) -> Headers {
        let mut headers = Vec::with_capacity(2);
        if let Some(id) = &self.id {
            headers.push(("mcp-session-id", id.clone()));
        }
        if let Some(version) = &self.protocol_version {
            headers.push(("mcp-protocol-version", version.clone()));
        }
        headers
    }
}

impl Session {
    /// The headers every request after initialization carries.
    pub fn headers(&self) -> Headers {
        lock(&self.state).headers()
    }

    /// The headers for a message sent by `deadline`, once no re-initialization by another
    /// thread is under way. `closed` is asked while waiting, and returns the error to give up
    /// with when the connection has ended.
    pub fn headers_by(
        &self,
        deadline: Instant,
        what: &str,
        closed: impl Fn() -> Option<Error>,
    ) -> Result<Headers> {
        let started = Instant::now();
        let me = std::thread::current().id();
        let mut state = lock(&self.state);
        if state.resetting == Some(me) {
            state.hold_until = Some(deadline);
        }
        while state.resetting.is_some_and(|thread| thread != me) {
            if let Some(error) = closed() {
                return Err(error);
            }
            let now = Instant::now();
            if state.hold_until.is_some_and(|until| until <= now) {
                log::debug!("the re-initialization ran past its deadline; sending held messages");
                state.resetting = None;
                self.reset_done.notify_all();
                break;
            }
            let wake = state
                .hold_until
                .map_or(deadline, |until| until.min(deadline));
            if wake == deadline && deadline <= now {
                return Err(Error::Timeout {
                    method: what.to_owned(),
                    elapsed: started.elapsed(),
                    kind: TimeoutKind::Write,
                    stderr_tail: None,
                });
            }
            let left = wake.saturating_duration_since(now);
            state = self
                .reset_done
                .wait_timeout(state, left)
                .map(|(guard, _)| guard)
                .unwrap_or_else(|e| e.into_inner().0);
        }
        Ok(state.headers())
    }

    pub fn set_protocol_version(&self, version: &str) {
        lock(&self.state).protocol_version = Some(version.to_owned());
    }

    /// Forgets the session; the calling thread re-initializes it and others wait.
    pub fn reset(&self) {
        *lock(&self.state) = State {
            resetting: Some(std::thread::current().id()),
            ..State::default()
        };
    }

    /// Ends a re-initialization: held messages go out (with the new session, if any).
    pub fn end_reset(&self) {
        let mut state = lock(&self.state);
        state.hold_until = None;
        if state.resetting.take().is_some() {
            drop(state);
            self.reset_done.notify_all();
        }
    }

    /// Ends a re-initialization if `thread` runs it (its send failed).
    pub fn end_reset_by(&self, thread: ThreadId) {
        if lock(&self.state).resetting == Some(thread) {
            self.end_reset();
        }
    }

    /// Forgets the session if it is still `sent` (the server no longer knows it, see
    /// [`refusal`]); returns whether it was.
    pub fn expire(&self, sent: &str) -> bool {
        let mut state = lock(&self.state);
        if state.id.as_deref() != Some(sent) {
            return false;
        }
        // The id is a credential for the session: never logged.
        log::debug!("the session expired on the server");
        state.id = None;
        state.protocol_version = None;
        true
    }

    /// Stores the session id the server issued, if it is a valid one.
    pub fn remember(&self, response: &HttpResponse) {
        let Some(id) = wire::header(response, "mcp-session-id") else {
            return;
        };
        if !wire::valid_session_id(id) {
            log::debug!("ignoring a session id that is not visible ASCII");
            return;
        }
        let mut state = lock(&self.state);
        if state.id.as_deref() != Some(id) {
            log::debug!("the server started a session");
            state.id = Some(id.to_owned());
        }
    }
}

/// What the refusal of a request (a status outside 2xx) says.
pub(crate) enum Refusal {
    /// The server no longer knows the session the request carried.
    Expired,
    /// Anything else, as the error to report.
    Error(Error),
}

/// Reads the refusal of a request that carried `headers`. Besides the spec's 404, a 400 whose body
/// mentions the session counts as expiry when one was sent: the TypeScript SDK's servers answer an
/// unknown session so ("Bad Request: No valid session ID provided").
pub(crate) fn refusal(
    response: HttpResponse,
    url: &str,
    headers: &[(&'static str, String)],
    request: Option<&RequestId>,
    deadline: Instant,
) -> Refusal {
    let sent = sent_session(headers).is_some();
    match response.status().as_u16() {
        404 if sent => {
            wire::drain(response, deadline);
            Refusal::Expired
        }
        400 if sent => {
            let error = wire::http_error(response, url, deadline);
            if error.body.to_ascii_lowercase().contains("session") {
                log::debug!("HTTP 400 about the session: {}", wire::snippet(&error.body));
                Refusal::Expired
            } else {
                Refusal::Error(wire::error_of(error, request))
            }
        }
        _ => Refusal::Error(wire::status_error(response, url, request, deadline)),
    }
}

/// The session id among request headers.
pub(crate) fn sent_session<'h>(headers: &'h [(&'static str, String)]) -> Option<&'h str> {
    headers
        .iter()
        .find(|(name, _)| *name == "mcp-session-id")
        .map(|(_, value)| value.as_str())
}
