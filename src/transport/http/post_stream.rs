//! Reading the event stream that answers a POST, and resuming it with `GET` and
//! `Last-Event-ID` when the server closes it before the response (2025-11-25 polling).

use std::sync::Arc;
use std::time::Instant;

use super::delivery::deliver_event;
use super::shared::Shared;
use super::socket::{self, Socket};
use super::streams::{self, backoff, Claim, End, Flow, Stop, StreamState};
use super::wire::{self, HttpResponse};
use crate::error::Error;
use crate::jsonrpc::RequestId;
use crate::transport::waiting;

/// Reads the stream of the POST that sent `id` until the response arrives; `socket` is shut
/// down once nobody waits for it, and an abandoned request's stream is dropped. When the
/// caller only waits for the answer after its send (see [`waiting`]),
/// the stream is read here, by `deadline`, as a JSON body is: no thread, and no hand-over to
/// the caller; one that drops before the response is resumed on a thread of its own.
pub(crate) fn start(
    shared: &Arc<Shared>,
    id: RequestId,
    response: HttpResponse,
    socket: Option<Socket>,
    claim: Claim<'_>,
    deadline: Instant,
) -> crate::Result<()> {
    if claim.is_stopped() {
        log::debug!("request {id} was abandoned before its event stream opened; dropping it");
        if let Some(socket) = socket {
            socket.shutdown();
        }
        return Ok(());
    }
    let (key, stop) = claim.keep();
    stop.attach(socket);
    let pending = match waiting::is_waiting_here() {
        true => {
            let mut state = StreamState::default();
            let what = format!("response to request {id}");
            let end = socket::with_deadline(deadline, || {
                read(shared, &id, response, &stop, &mut state, &what)
            });
            match end {
                End::Done | End::Stopped => {
                    shared.streams.unregister(key);
                    return Ok(());
                }
                // As a JSON body read too slowly, or too large: the request fails with it.
                End::Failed(e @ (Error::Timeout { .. } | Error::MessageTooLarge { .. })) => {
                    stop.stop();
                    shared.streams.unregister(key);
                    return Err(e);
                }
                // Dropped before the response: resumed on a thread of its own.
                dropped => Pending::Dropped(dropped, state),
            }
        }
        false => Pending::Unread(response),
    };
    let thread_shared = Arc::clone(shared);
    let spawned = streams::spawn("umcp-http-post", move || {
        run(&thread_shared, &id, pending, &stop);
        thread_shared.streams.unregister(key);
    });
    if spawned.is_err() {
        shared.streams.unregister(key);
    }
    spawned
}

/// Where the reading thread of a POST's stream starts.
enum Pending {
    /// The stream as the server answered, not read yet.
    Unread(HttpResponse),
    /// Read on the caller's thread until it ended this way, before the response.
    Dropped(End, StreamState),
}

/// Why a resumption attempt failed.
enum Resume {
    /// Worth another attempt (network trouble, 5xx).
    Retry(Error),
    /// Will not get better (the server refuses resumption, the session is gone).
    Fatal(Error),
}

fn run(shared: &Shared, id: &RequestId, pending: Pending, stop: &Stop) {
    let what = format!("response to request {id}");
    let policy = shared.wire.config.reconnect;
    let (mut end, mut state) = match pending {
        Pending::Unread(response) => {
            let mut state = StreamState::default();
            (read(shared, id, response, stop, &mut state, &what), state)
        }
        Pending::Dropped(end, state) => (end, state),
    };
    let mut attempt = 0;
    loop {
        let error = match end {
            End::Done | End::Stopped => return,
            End::Failed(e @ Error::MessageTooLarge { .. }) => {
                shared.inbox.fail(id.clone(), e);
                return;
            }
            End::Eof => None,
            End::Failed(e) => Some(e),
        };
        if shared.is_closed() || stop.is_stopped() {
            return;
        }
        // A stateless protocol has no resumption: whatever the event ids, the response is lost.
        let last_event_id = state
            .last_event_id
            .clone()
            .filter(|_| !shared.is_stateless());
        let Some(last_event_id) = last_event_id else {
            // Without an event id there is nothing to resume from: the response is lost
            // (a silent stream stays a timeout: nothing says the server stopped working).
            let error = match error {
                Some(timeout @ Error::Timeout { .. }) => timeout,
                other => {
                    let why = other.map(|e| format!(": {e}")).unwrap_or_default();
                    Error::ResponseLost(format!("the event stream ended before the {what}{why}"))
                }
            };
            shared.inbox.fail(id.clone(), error);
            return;
        };
        // A stream that delivered events made progress: its drop starts a new series.
        if state.events > 0 {
            attempt = 0;
        }
        attempt += 1;
        if attempt > policy.max_attempts {
            let why = error.map(|e| format!(": {e}")).unwrap_or_default();
            shared.inbox.fail(
                id.clone(),
                Error::Protocol(format!(
                    "the event stream ended before the {what} and could not be resumed \
                     after {} attempts{why}",
                    policy.max_attempts
                )),
            );
            return;
        }
        let delay = backoff(&policy, state.retry, attempt);
        log::debug!("resuming the stream of request {id} after event {last_event_id} in {delay:?}");
        if stop.sleep(delay) || shared.is_closed() {
            return;
        }
        end = match resume(shared, &last_event_id, &what, stop) {
            Ok(response) => read(shared, id, response, stop, &mut state, &what),
            Err(Resume::Retry(e)) => {
                state.events = 0;
                End::Failed(e)
            }
            // The connection ended meanwhile: its end fails every pending request, this one
            // included, for the reason it gives.
            Err(Resume::Fatal(_)) if shared.is_closed() => return,
            Err(Resume::Fatal(e)) => {
                shared.inbox.fail(id.clone(), e);
                return;
            }
        };
    }
}

fn read(
    shared: &Shared,
    id: &RequestId,
    response: HttpResponse,
    stop: &Stop,
    state: &mut StreamState,
    what: &str,
) -> End {
    let max = shared.wire.config.max_event_size;
    streams::pump(response, max, false, stop, state, what, |event| {
        if deliver_event(&shared.inbox, Some(&shared.streams), &event, Some(id)) {
            Flow::Done
        } else {
            Flow::Continue
        }
    })
}

/// Opens the GET that continues a stream after `last_event_id`. A 404 here is [`Error::Http`],
/// never `SessionExpired`: the request may have run, so it must not be sent again.
fn resume(
    shared: &Shared,
    last_event_id: &str,
    what: &str,
    stop: &Stop,
) -> Result<HttpResponse, Resume> {
    let config = &shared.wire.config;
    let call = shared.stream_get(Some(last_event_id), what);
    // Nothing listening ends the connection at once (see `Shared::perform`): no retry then.
    let response = shared.perform(&call).map_err(|e| match e {
        Error::Io(_) | Error::Timeout { .. } => Resume::Retry(e),
        e => Resume::Fatal(e),
    })?;
    let deadline = call.deadline;
    let status = response.status().as_u16();
    if (200..300).contains(&status) {
        let media_type = wire::media_type(&response);
        if media_type == "text/event-stream" {
            stop.attach(socket::take_last());
            return Ok(response);
        }
        wire::drain(response, deadline);
        return Err(Resume::Fatal(Error::Protocol(format!(
            "resuming the stream of the {what}: the server answered `{media_type}` \
             instead of an event stream"
        ))));
    }
    let error = wire::status_error(response, &config.url, None, deadline);
    if status >= 500 || status == 429 {
        Err(Resume::Retry(error))
    } else {
        Err(Resume::Fatal(error))
    }
}
