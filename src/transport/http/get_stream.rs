//! The standalone GET stream that carries server-initiated messages, reconnected with
//! `Last-Event-ID` when it drops.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::delivery::deliver_event;
use super::parked::Parked;
use super::session::{self, Refusal};
use super::socket;
use super::streamable::Shared;
use super::streams::{self, backoff, End, Flow, Stop, StreamState};
use super::wire::{self, Call, HttpResponse, Method, ACCEPT_SSE};
use crate::error::{AuthStep, Error};

const WHAT: &str = "GET stream";

/// One run of the GET stream: its stop signal, whether the stream is open, and the requests
/// waiting for their responses on it.
#[derive(Debug, Default)]
pub(crate) struct GetStream {
    pub stop: Stop,
    pub parked: Parked,
}

/// Opens the GET stream (unless running) and waits, within the connect timeout and the start-up
/// deadline, for its first answer: servers send messages of no request only to an open GET stream.
pub(crate) fn start(shared: &Arc<Shared>) {
    let Some(stream) = shared.claim_get_stream() else {
        return;
    };
    let thread_shared = Arc::clone(shared);
    let thread_stream = Arc::clone(&stream);
    let (opened_tx, opened_rx) = crossbeam_channel::bounded(1);
    let spawned = streams::spawn("umcp-http-get", move || {
        run(&thread_shared, &thread_stream, &opened_tx);
        thread_stream.parked.end(&thread_shared, "its reader ended");
    });
    match spawned {
        Ok(()) => {
            let _ = opened_rx.recv_timeout(wait(shared));
        }
        Err(e) => {
            log::debug!("could not start the GET stream: {e}");
            stream.stop.stop();
        }
    }
}

/// How long to wait for the server to answer the GET that opens the stream: a few times what
/// its answers took so far (a proxy may hold this one back, see
/// [`Route::stream_answer_wait`](super::route::Route::stream_answer_wait)), at most the connect
/// timeout, and no later than the start-up deadline while the client is still starting.
fn wait(shared: &Shared) -> Duration {
    let timeout = shared
        .wire
        .config
        .connect_timeout
        .min(shared.wire.route.stream_answer_wait());
    match shared.startup.checked_duration_since(Instant::now()) {
        Some(left) if !left.is_zero() => timeout.min(left),
        _ => timeout,
    }
}

/// What opening the stream gave.
enum Opened {
    Stream(HttpResponse),
    /// The server offers no stream (405 and the like).
    Refused(String),
    /// The server no longer knows the session (404, or a 400 saying so).
    Expired,
    /// Worth another attempt.
    Failed(Error),
}

/// Keeps the stream open until stopped. Never opened is no error; a forgotten session is left for
/// the next request to re-initialize; a stream that was open and cannot be reopened means the
/// server is gone, and the connection is reported closed.
fn run(shared: &Shared, stream: &GetStream, opened: &crossbeam_channel::Sender<()>) {
    let stop = &stream.stop;
    let policy = shared.wire.config.reconnect;
    let mut state = StreamState::default();
    let mut attempt = 0;
    let mut was_open = false;
    // Why the stream last dropped, until it is open again.
    let mut dropped: Option<String> = None;
    loop {
        if stop.is_stopped() || shared.is_closed() {
            return;
        }
        let attempt_result = open(shared, &state, stop);
        if let Opened::Stream(_) = attempt_result {
            // Before the waiting `start` hears of it: the next request may count on it.
            stream.parked.opened();
        }
        let _ = opened.try_send(());
        let end = match attempt_result {
            Opened::Stream(response) => {
                log::debug!("GET stream open");
                was_open = true;
                if let Some(why) = dropped.take() {
                    // Even a stream resumed with `Last-Event-ID` may have skipped what was
                    // sent meanwhile: servers may replay, and need not.
                    let resumed = match &state.last_event_id {
                        Some(id) => format!("resumed after event {id}"),
                        None => "without resumption".to_owned(),
                    };
                    shared.inbox.gap(format!(
                        "the GET stream dropped ({why}) and was opened again, {resumed}"
                    ));
                }
                let max = shared.wire.config.max_event_size;
                streams::pump(response, max, true, stop, &mut state, WHAT, |event| {
                    deliver_event(&shared.inbox, Some(&shared.streams), &event, None);
                    Flow::Continue
                })
            }
            Opened::Refused(why) if !was_open => {
                log::debug!("no GET stream: {why}");
                return;
            }
            Opened::Refused(why) => {
                gone(
                    shared,
                    stop,
                    format!("the server refused to reopen the GET stream: {why}"),
                );
                return;
            }
            Opened::Expired => {
                log::debug!("GET stream: the session expired; the next request starts a new one");
                stream.parked.end(shared, "the session expired");
                return;
            }
            Opened::Failed(e) => {
                state.events = 0;
                End::Failed(e)
            }
        };
        let why = match end {
            End::Done | End::Stopped => return,
            End::Eof => "the server ended it".to_owned(),
            End::Failed(e) => e.to_string(),
        };
        log::debug!("GET stream dropped: {why}");
        if was_open && dropped.is_none() {
            dropped = Some(why.clone());
        }
        if state.events > 0 {
            attempt = 0;
        }
        attempt += 1;
        if attempt > policy.max_attempts && !was_open {
            // A server that never gave a stream (a GET it answers with 500, say) may still
            // serve POSTs: no stream, as with a refusal.
            log::debug!("no GET stream: {why}");
            return;
        }
        if attempt > policy.max_attempts {
            gone(
                shared,
                stop,
                format!(
                    "the server stopped answering: the GET stream could not be reopened \
                     after {} attempts ({why})",
                    policy.max_attempts
                ),
            );
            return;
        }
        if stop.sleep(backoff(&policy, state.retry, attempt)) {
            return;
        }
    }
}

/// Reports the connection closed, unless the stream was stopped on purpose meanwhile.
fn gone(shared: &Shared, stop: &Stop, reason: String) {
    if !stop.is_stopped() {
        shared.end(reason);
    }
}

fn open(shared: &Shared, state: &StreamState, stop: &Stop) -> Opened {
    let config = &shared.wire.config;
    let mut headers = shared.session_headers();
    if let Some(id) = &state.last_event_id {
        headers.push(("last-event-id", id.clone()));
    }
    let call = Call {
        method: Method::Get,
        url: &config.url,
        body: None,
        accept: ACCEPT_SSE,
        headers,
        extra: &[],
        deadline: shared.wire.internal_deadline(),
        what: WHAT,
    };
    // Not `Shared::perform`: a refused connection here is one more failed attempt, so an idle
    // client survives a server restarting on its port within the policy's attempts (the next
    // request then finds the session expired and starts a new one). Only a request someone
    // waits on ends the connection at the first refusal. A refusal is the server's answer
    // (401 or 403 its credentials could not mend, or a status below) or an authorization that
    // answered no (a user who declined, a server refusing a registration or a grant): asked
    // again, the user would be asked again at every attempt. Any other error, a credential
    // provider's included (a token service that is briefly down), is one more failed attempt.
    let response = match shared.wire.perform(&call) {
        Ok(response) => response,
        Err(e) if refuses(&e) => return Opened::Refused(e.to_string()),
        Err(e) => return Opened::Failed(e),
    };
    let status = response.status().as_u16();
    let media_type = wire::media_type(&response);
    if (200..300).contains(&status) && media_type == "text/event-stream" {
        // Only a stream's connection is tied to the stop signal: any other goes back to the
        // pool and must not be shut down later.
        stop.attach(socket::take_last());
        return Opened::Stream(response);
    }
    let retry = status >= 500 || status == 429;
    let why = if (200..300).contains(&status) {
        wire::drain(response, call.deadline);
        format!("HTTP {status} with `{media_type}`")
    } else {
        match session::refusal(response, &config.url, &call.headers, None, call.deadline) {
            Refusal::Expired => return Opened::Expired,
            Refusal::Error(error) => error.to_string(),
        }
    };
    if retry {
        Opened::Failed(Error::Protocol(why))
    } else {
        Opened::Refused(why)
    }
}

/// Whether `error` is an answer of no, which another attempt would only repeat.
fn refuses(error: &Error) -> bool {
    match error {
        Error::Unauthorized(_) | Error::Forbidden(_) => true,
        Error::Auth(auth) => {
            matches!(auth.step, AuthStep::Authorization | AuthStep::Registration)
                || auth.status.is_some()
        }
        _ => false,
    }
}
