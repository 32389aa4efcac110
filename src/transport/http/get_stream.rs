//! The standalone GET stream that carries server-initiated messages, reconnected with
//! `Last-Event-ID` when it drops.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::delivery::deliver_event;
use super::parked::GetStream;
use super::session::{self, Refusal};
use super::shared::Shared;
use super::socket;
use super::streams::{self, backoff, End, Flow, Stop, StreamState};
use super::wire::{self, HttpResponse};
use crate::error::{AuthStep, Error};
use crate::queue::{self, Sender};

const WHAT: &str = "GET stream";

/// Opens the GET stream (unless running) and waits, within the connect timeout and the start-up
/// deadline, for its first answer: servers send messages of no request only to an open GET stream.
pub(crate) fn start(shared: &Arc<Shared>) {
    let Some(stream) = shared.claim_get_stream() else {
        return;
    };
    let thread_shared = Arc::clone(shared);
    let thread_stream = Arc::clone(&stream);
    let (opened_tx, opened_rx) = queue::bounded(1);
    let spawned = streams::spawn("umcp-http-get", move || {
        run(&thread_shared, &thread_stream, &opened_tx);
        thread_shared.end_parked(&thread_stream, "its reader ended");
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
fn run(shared: &Shared, stream: &GetStream, opened: &Sender<()>) {
    let stop = &stream.stop;
    let mut reading = Reading::default();
    loop {
        if stop.is_stopped() || shared.is_closed() {
            return;
        }
        let attempt = open(shared, &reading.state, stop);
        if let Opened::Stream(_) = attempt {
            // Before the waiting `start` hears of it: the next request may count on it.
            stream.parked.opened();
        }
        let _ = opened.try_send(());
        let Some(end) = reading.read(shared, stream, attempt) else {
            return;
        };
        if !reading.again(shared, stop, end) {
            return;
        }
    }
}

/// The GET stream across its attempts: where it is in the event stream, and how it went.
#[derive(Default)]
struct Reading {
    state: StreamState,
    /// Failed attempts in a row (reset by a stream that brought events).
    attempt: u32,
    was_open: bool,
    /// Why the stream last dropped, until it is open again.
    dropped: Option<String>,
}

impl Reading {
    /// Reads what one attempt opened until it ends; `None` when the stream is over for good.
    fn read(&mut self, shared: &Shared, stream: &GetStream, attempt: Opened) -> Option<End> {
        let stop = &stream.stop;
        match attempt {
            Opened::Stream(response) => {
                log::debug!("GET stream open");
                self.was_open = true;
                if let Some(why) = self.dropped.take() {
                    // Even a stream resumed with `Last-Event-ID` may have skipped what was
                    // sent meanwhile: servers may replay, and need not.
                    let resumed = match &self.state.last_event_id {
                        Some(id) => format!("resumed after event {id}"),
                        None => "without resumption".to_owned(),
                    };
                    shared.inbox.gap(format!(
                        "the GET stream dropped ({why}) and was opened again, {resumed}"
                    ));
                }
                let max = shared.wire.config.max_event_size;
                let state = &mut self.state;
                Some(streams::pump(
                    response,
                    max,
                    true,
                    stop,
                    state,
                    WHAT,
                    |event| {
                        deliver_event(&shared.inbox, Some(&shared.streams), &event, None);
                        Flow::Continue
                    },
                ))
            }
            Opened::Refused(why) if !self.was_open => {
                log::debug!("no GET stream: {why}");
                None
            }
            Opened::Refused(why) => {
                let why = format!("the server refused to reopen the GET stream: {why}");
                gone(shared, stop, why);
                None
            }
            Opened::Expired => {
                log::debug!("GET stream: the session expired; the next request starts a new one");
                shared.end_parked(stream, "the session expired");
                None
            }
            Opened::Failed(e) => {
                self.state.events = 0;
                Some(End::Failed(e))
            }
        }
    }

    /// After the stream ended with `end`: whether to open it again, once the policy's backoff
    /// has passed. A server that never gave a stream (a GET it answers with 500, say) may still
    /// serve POSTs: no stream then, as with a refusal; one that did and stops answering is gone.
    fn again(&mut self, shared: &Shared, stop: &Stop, end: End) -> bool {
        let policy = shared.wire.config.reconnect;
        let why = match end {
            End::Done | End::Stopped => return false,
            End::Eof => "the server ended it".to_owned(),
            End::Failed(e) => e.to_string(),
        };
        log::debug!("GET stream dropped: {why}");
        if self.was_open && self.dropped.is_none() {
            self.dropped = Some(why.clone());
        }
        if self.state.events > 0 {
            self.attempt = 0;
        }
        self.attempt += 1;
        if self.attempt > policy.max_attempts {
            match self.was_open {
                false => log::debug!("no GET stream: {why}"),
                true => gone(
                    shared,
                    stop,
                    format!(
                        "the server stopped answering: the GET stream could not be reopened \
                         after {} attempts ({why})",
                        policy.max_attempts
                    ),
                ),
            }
            return false;
        }
        !stop.sleep(backoff(&policy, self.state.retry, self.attempt))
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
    let call = shared.stream_get(state.last_event_id.as_deref(), WHAT);
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
