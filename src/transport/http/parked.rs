//! One run of the GET stream as the connection keeps it: its stop signal, and the requests the
//! server accepted without their response (`202 Accepted`, an empty `200`), parked on the
//! stream that may still bring it, and failed when that stream ends for good.

use std::sync::{Arc, Mutex};

use super::streams::{lock, Claim, Stop, Streams};
use crate::error::Error;
use crate::jsonrpc::RequestId;
use crate::transport::Inbox;

/// One run of the GET stream: its stop signal, whether the stream is open, and the requests
/// waiting for their responses on it.
#[derive(Debug, Default)]
pub(crate) struct GetStream {
    pub stop: Stop,
    pub parked: Parked,
}

/// Whether one run of the GET stream is open, and the requests waiting for a response on it.
#[derive(Debug, Default)]
pub(crate) struct Parked {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// The server gave a stream, and it has not ended for good since. A stream that dropped
    /// and is being reopened counts as open: what the server sends meanwhile may be replayed.
    open: bool,
    /// The stream ended for good: nothing parks here any more.
    ended: bool,
    waiting: Vec<Waiting>,
}

/// A request waiting for its response on the GET stream.
#[derive(Debug)]
struct Waiting {
    id: RequestId,
    /// Its method and how the server answered its POST, for the error.
    what: String,
    answer: String,
    /// Its place among the live streams, so that its stop signal is raised when the response
    /// arrives (on any stream), when it is abandoned and when the connection closes.
    key: u64,
    stop: Arc<Stop>,
}

impl Parked {
    /// The server gave the stream.
    pub fn opened(&self) {
        let mut state = lock(&self.state);
        state.open = !state.ended;
    }

    /// Parks request `id` (method `what`, accepted with `answer`) to wait for its response
    /// here, as `claim` (which it keeps); whether it did: not once the stream has ended, nor
    /// before it opened.
    pub fn park(&self, id: RequestId, what: &str, answer: &str, claim: Claim<'_>) -> bool {
        let mut state = lock(&self.state);
        if !state.open {
            return false;
        }
        // Requests answered or abandoned since the last one parked leave now, so that a long
        // stream does not collect them.
        state.waiting.retain(|waiting| {
            let settled = waiting.stop.is_stopped();
            if settled {
                claim.streams().unregister(waiting.key);
            }
            !settled
        });
        let (key, stop) = claim.keep();
        state.waiting.push(Waiting {
            id,
            what: what.to_owned(),
            answer: answer.to_owned(),
            key,
            stop,
        });
        true
    }

    /// The stream ended for good: the requests waiting here leave `streams` and fail now in
    /// `inbox` with [`Error::ResponseLost`] (a `closed` connection fails them all with `Closed`
    /// instead). Idempotent. The server is not asked to cancel them: the session that knew them
    /// is gone.
    pub fn end(&self, streams: &Streams, inbox: &Inbox, closed: bool, why: &str) {
        let waiting = {
            let mut state = lock(&self.state);
            state.open = false;
            state.ended = true;
            std::mem::take(&mut state.waiting)
        };
        for waiting in waiting {
            streams.unregister(waiting.key);
            if waiting.stop.is_stopped() || closed {
                continue;
            }
            let Waiting {
                id, what, answer, ..
            } = waiting;
            log::debug!("request {id} `{what}` loses its response: the GET stream ended ({why})");
            inbox.fail(
                id.clone(),
                Error::ResponseLost(format!(
                    "the server accepted request {id} `{what}` with {answer} and no response, \
                     and the GET stream that was to carry the response ended: {why}"
                )),
            );
        }
    }
}
