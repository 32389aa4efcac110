//! The legacy HTTP+SSE transport (protocol 2024-11-05): one long-lived GET event stream
//! that announces a POST endpoint and carries every server message, including responses.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::call::{by_client, describe};
use super::delivery::deliver_event;
use super::socket;
use super::streams::{self, lock, End, Flow, Stop, StreamState};
use super::url;
use super::wire::{self, Call, HttpResponse, Method, Wire, ACCEPT_BOTH, ACCEPT_SSE};
use crate::error::{Closed, Error, Result, TimeoutKind};
use crate::jsonrpc::Message;
use crate::queue::{self, RecvTimeoutError};
use crate::redact;
use crate::transport::{Inbox, SessionEvent, Transport};

const WHAT: &str = "SSE endpoint";

/// A legacy HTTP+SSE connection.
struct LegacySse {
    shared: Arc<Shared>,
    /// Where messages are POSTed, from the `endpoint` event.
    endpoint: String,
}

struct Shared {
    wire: Wire,
    inbox: Inbox,
    stop: Arc<Stop>,
    /// Why the connection ended, once it has; reported to the inbox once.
    closed: Mutex<Option<Closed>>,
    protocol_version: Mutex<Option<String>>,
}

impl Shared {
    fn report_closed(&self, reason: String) {
        if let Some(info) = self.mark_closed(reason) {
            self.inbox.closed(info);
        }
    }

    /// Records why the connection ended, unless it had already: what is then owed to the
    /// inbox, once.
    fn mark_closed(&self, reason: String) -> Option<Closed> {
        let mut closed = lock(&self.closed);
        if closed.is_some() {
            return None;
        }
        log::debug!("SSE connection closed: {reason}");
        let info = Closed {
            reason,
            ..Closed::default()
        };
        *closed = Some(info.clone());
        Some(info)
    }

    /// The error for sending on this connection, once it has ended.
    fn closed_error(&self) -> Option<Error> {
        lock(&self.closed)
            .clone()
            .map(|closed| Error::Closed(Arc::new(closed)))
    }
}

/// Opens the event stream and waits for the `endpoint` event until the connect timeout or
/// `startup`, whichever is first: a server sending only keep-alives cannot hold a connect.
pub(crate) fn connect(wire: Wire, inbox: Inbox, startup: Instant) -> Result<Box<dyn Transport>> {
    let started = Instant::now();
    let own = socket::deadline_after(started, wire.config.connect_timeout);
    let (deadline, kind) = if startup < own {
        (startup, TimeoutKind::Startup)
    } else {
        (own, TimeoutKind::Connect)
    };
    let response = open(&wire, deadline, kind)?;
    let socket = socket::take_last();
    let shared = Arc::new(Shared {
        wire,
        inbox,
        stop: Stop::new(),
        closed: Mutex::new(None),
        protocol_version: Mutex::new(None),
    });
    shared.stop.attach(socket);
    let (endpoint_tx, endpoint_rx) = queue::bounded(1);
    let reader = Arc::clone(&shared);
    streams::spawn("umcp-sse-reader", move || {
        read(&reader, response, &endpoint_tx)
    })?;
    let wait = deadline.saturating_duration_since(Instant::now());
    let endpoint = match endpoint_rx.recv_timeout(wait) {
        Ok(Ok(endpoint)) => endpoint,
        Ok(Err(e)) => {
            shared.stop.stop();
            return Err(e);
        }
        Err(RecvTimeoutError::Timeout) => {
            shared.stop.stop();
            return Err(Error::Timeout {
                method: "endpoint event".into(),
                elapsed: started.elapsed(),
                kind,
                stderr_tail: None,
            });
        }
        Err(RecvTimeoutError::Disconnected) => {
            return Err(Error::Protocol(
                "the event stream ended before the endpoint event".into(),
            ))
        }
    };
    log::debug!("SSE endpoint {}", redact::url(&endpoint));
    Ok(Box::new(LegacySse { shared, endpoint }))
}

/// The GET of the event stream, answered with one by `deadline` (a timeout told as `kind`).
fn open(wire: &Wire, deadline: Instant, kind: TimeoutKind) -> Result<HttpResponse> {
    let config = &wire.config;
    let call = Call {
        method: Method::Get,
        url: &config.url,
        body: None,
        accept: ACCEPT_SSE,
        headers: Vec::new(),
        extra: &[],
        deadline,
        what: WHAT,
    };
    let response = wire.perform(&call).map_err(|e| match e {
        Error::Timeout {
            method, elapsed, ..
        } => Error::Timeout {
            method,
            elapsed,
            kind,
            stderr_tail: None,
        },
        e => e,
    })?;
    let status = response.status().as_u16();
    if !(200..300).contains(&status) {
        return Err(wire::status_error(response, &config.url, None, deadline));
    }
    let media_type = wire::media_type(&response);
    if media_type != "text/event-stream" {
        wire::drain(response, deadline);
        return Err(Error::Protocol(format!(
            "{} answered `{media_type}`, not an event stream",
            config.url
        )));
    }
    Ok(response)
}

/// The reader thread: resolves the endpoint, delivers messages, reports the end.
fn read(shared: &Shared, response: HttpResponse, endpoint_tx: &queue::Sender<Result<String>>) {
    let config = &shared.wire.config;
    let mut announced = false;
    let mut state = StreamState::default();
    let end = streams::pump(
        response,
        config.max_event_size,
        true,
        &shared.stop,
        &mut state,
        WHAT,
        |event| {
            // An event without data is no event to the standard (the reader yields it only
            // for its id and retry): an empty endpoint would resolve to the SSE URL itself.
            if event.event.as_deref() == Some("endpoint") && !event.data.is_empty() {
                if announced {
                    log::debug!("ignoring a second endpoint event");
                    return Flow::Continue;
                }
                announced = true;
                let endpoint = resolve_endpoint(&config.url, &event.data);
                let failed = endpoint.is_err();
                let _ = endpoint_tx.try_send(endpoint);
                return if failed { Flow::Done } else { Flow::Continue };
            }
            deliver_event(&shared.inbox, None, &event, None);
            Flow::Continue
        },
    );
    let reason = match end {
        End::Stopped => return,
        End::Done => return,
        End::Eof => "the server ended the event stream".to_owned(),
        End::Failed(e) => format!("the event stream failed: {e}"),
    };
    if announced {
        shared.report_closed(reason);
    }
}

/// Resolves the `endpoint` event's URI against the SSE URL, refusing other origins: a
/// server must not be able to send this client's messages elsewhere.
fn resolve_endpoint(sse_url: &str, data: &str) -> Result<String> {
    let endpoint = url::resolve(sse_url, data).ok_or_else(|| {
        Error::Protocol(format!(
            "invalid endpoint `{}`",
            redact::url(&wire::snippet(data))
        ))
    })?;
    if url::origin(&endpoint) != url::origin(sse_url) {
        return Err(Error::Protocol(format!(
            "the endpoint `{}` is not on the origin of {}",
            redact::url(&endpoint),
            redact::url(sse_url)
        )));
    }
    Ok(endpoint)
}

impl LegacySse {
    /// One POST of `message` to the endpoint, answered by `deadline`.
    fn post(&self, message: &Message, deadline: Instant) -> Result<()> {
        let body = message.encode();
        log::trace!("> {body}");
        let deadline = self.shared.wire.post_deadline(deadline);
        let mut headers = Vec::new();
        if let Some(version) = lock(&self.shared.protocol_version).clone() {
            headers.push(("mcp-protocol-version", version));
        }
        let call = Call {
            method: Method::Post,
            url: &self.endpoint,
            body: Some(&body),
            accept: ACCEPT_BOTH,
            headers,
            extra: &[],
            deadline,
            what: describe(message),
        };
        let response = self.shared.wire.perform(&call)?;
        if (200..300).contains(&response.status().as_u16()) {
            // The reply carries nothing: responses arrive on the event stream.
            wire::drain(response, deadline);
            return Ok(());
        }
        let id = match message {
            Message::Request(r) => Some(&r.id),
            _ => None,
        };
        Err(wire::status_error(response, &self.endpoint, id, deadline))
    }
}

impl Transport for LegacySse {
    fn send(&self, message: &Message, deadline: Instant) -> Result<()> {
        if let Some(closed) = self.shared.closed_error() {
            return Err(closed);
        }
        // Closing cut the exchange: that is why it failed, whatever the socket said.
        self.post(message, deadline)
            .map_err(|error| self.shared.closed_error().unwrap_or(error))
    }

    fn session_event(&self, event: SessionEvent<'_>) {
        match event {
            SessionEvent::Negotiated { protocol_version } => {
                *lock(&self.shared.protocol_version) = Some(protocol_version.to_owned());
            }
            SessionEvent::Reset => *lock(&self.shared.protocol_version) = None,
            _ => {}
        }
    }

    /// Stops the event stream and shuts its connection down: the reader thread ends at once.
    fn close(&self) {
        // Closed before the sockets are cut, so a POST they cut fails as closed, not with
        // the socket's error.
        let why = by_client();
        let owed = self.shared.mark_closed(why.reason.clone());
        self.shared.stop.stop();
        self.shared.wire.shutdown(why);
        if let Some(info) = owed {
            self.shared.inbox.closed(info);
        }
    }

    fn kind(&self) -> &'static str {
        "sse"
    }

    fn authorization_context(&self) -> u64 {
        self.shared.wire.authorization_context()
    }
}

impl Drop for LegacySse {
    fn drop(&mut self) {
        self.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_resolve_on_the_same_origin_only() {
        let sse = "http://127.0.0.1:9000/sse";
        assert_eq!(
            resolve_endpoint(sse, "/message?sessionId=a").unwrap(),
            "http://127.0.0.1:9000/message?sessionId=a"
        );
        assert_eq!(
            resolve_endpoint(sse, "http://127.0.0.1:9000/m").unwrap(),
            "http://127.0.0.1:9000/m"
        );
        for other in [
            "http://127.0.0.1:9001/m",
            "https://127.0.0.1:9000/m",
            "//evil.example/m",
        ] {
            assert!(
                matches!(resolve_endpoint(sse, other), Err(Error::Protocol(_))),
                "{other}"
            );
        }
    }
}
