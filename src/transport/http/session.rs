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

use std::sync::{Condvar, Mutex};
use std::thread::ThreadId;
use std::time::Instant;

use super::streams::lock;
use super::wire::{self, HttpResponse};
use crate::error::{Error, Result, TimeoutKind};

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

    /// Forgets the session if it is still `sent` (the server answered 404 to it); returns
    /// whether it was.
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

/// The session id among request headers.
pub(crate) fn sent_session<'h>(headers: &'h [(&'static str, String)]) -> Option<&'h str> {
    headers
        .iter()
        .find(|(name, _)| *name == "mcp-session-id")
        .map(|(_, value)| value.as_str())
}
