//! One HTTP request of a host, answered: who may ask (`Origin`, the bearer token), then a
//! POST's message taken in the era it is of, and its answer sent back as JSON when nothing
//! comes before it, as an event stream otherwise (progress, a question for a handshake-era
//! host, a listen stream's notifications); a GET opens a handshake-era session's stream, a
//! DELETE ends the session.
//!
//! A stateless-era request stands alone: it gets a host of its own for the time it runs, and
//! closing its stream cancels it. A handshake-era request belongs to its session, and a
//! closed stream cancels nothing (the host sends `notifications/cancelled`), as the 2025
//! revisions of the transport say.

use std::io::ErrorKind;
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError};
use umcp::jsonrpc::{ErrorCode, ErrorObject, Message, Request, RequestId, Response};

use super::check;
use super::message::{self, end_stream, event, keep_alive, respond, start_stream};
use super::sessions::{Relay, Session, Sessions};
use crate::bridge::context::Bridge;
use crate::bridge::dispatch;
use crate::bridge::host::Host;
use crate::bridge::outbox::{Nowhere, Queue};
use crate::bridge::token::Token;
use crate::bridge::wire::{decode, era_of, modern_refusal, Era};

/// The path of the MCP endpoint.
pub const ENDPOINT: &str = "/mcp";

/// How often a connection waiting for an answer looks whether its host left.
const WATCH: Duration = Duration::from_millis(250);

/// How often an idle event stream gets a comment, to stay open through proxies.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// How many messages wait for one request's stream.
const REPLY_QUEUE: usize = 256;

/// What every connection shares.
pub struct Served {
    pub bridge: Arc<Bridge>,
    pub token: Token,
    pub origins: Vec<String>,
    pub sessions: Sessions,
}

/// Answers `request`; false when the connection should close after it.
pub fn exchange(served: &Served, out: &mut TcpStream, request: &message::Request) -> bool {
    let answered = if !check::origin_allowed(request.header("Origin"), &served.origins) {
        refuse(
            out,
            403,
            ErrorCode::INVALID_REQUEST,
            "this web origin may not use the bridge",
        )
    } else if !served.token.admits(request.header("Authorization")) {
        let challenge = [(
            "WWW-Authenticate",
            "Bearer realm=\"umcp bridge\"".to_owned(),
        )];
        let body = error_body(
            None,
            ErrorCode::INVALID_REQUEST,
            "a bearer token is required",
        );
        respond(out, 401, &challenge, Some(&body))
    } else if request.path != ENDPOINT {
        respond(out, 404, &[], None)
    } else {
        match request.method.as_str() {
            "POST" => post(served, out, request),
            "GET" => get(served, out, request),
            "DELETE" => delete(served, out, request),
            _ => respond(out, 405, &[("Allow", "GET, POST, DELETE".into())], None),
        }
    };
    answered.is_ok() && request.keep_alive()
}

fn error_body(id: Option<&RequestId>, code: ErrorCode, message: &str) -> String {
    let error = ErrorObject::new(code, format!("umcp bridge: {message}"));
    let response = Response {
        id: id.cloned(),
        result: Err(error),
    };
    Message::from(response).encode()
}

fn refuse(out: &mut TcpStream, status: u16, code: ErrorCode, message: &str) -> std::io::Result<()> {
    respond(out, status, &[], Some(&error_body(None, code, message)))
}

fn post(served: &Served, out: &mut TcpStream, http: &message::Request) -> std::io::Result<()> {
    let Ok(text) = std::str::from_utf8(&http.body) else {
        return refuse(out, 400, ErrorCode::PARSE_ERROR, "the body is not UTF-8");
    };
    let (mut messages, owed) = decode(text);
    if let Some(owed) = owed.into_iter().next() {
        return respond(out, 400, &[], Some(&Message::from(owed).encode()));
    }
    let (Some(message), true) = (messages.pop(), messages.is_empty()) else {
        return refuse(
            out,
            400,
            ErrorCode::INVALID_REQUEST,
            "one message per request",
        );
    };
    let session = http.header("Mcp-Session-Id");
    match message {
        Message::Request(request) if era_of(request.params.as_ref()) == Era::Modern => {
            stateless(served, out, http, request)
        }
        Message::Request(request) if request.method == "initialize" && session.is_none() => {
            initialize(served, out, request)
        }
        // Answered whoever asks: a host may check the bridge before it opens a session.
        Message::Request(request) if request.method == "ping" && session.is_none() => {
            let pong = Message::from(Response::ok(request.id, serde_json::json!({})));
            respond(out, 200, &[], Some(&pong.encode()))
        }
        other => in_session(served, out, session, other),
    }
}

/// A stateless-era request, checked, taken and answered on this connection.
fn stateless(
    served: &Served,
    out: &mut TcpStream,
    http: &message::Request,
    request: Request,
) -> std::io::Result<()> {
    let refused = check::routing(http, &request)
        .err()
        .or_else(|| modern_refusal(request.params.as_ref()));
    if let Some(error) = refused {
        let body = Message::from(Response::err(request.id, error)).encode();
        return respond(out, 400, &[], Some(&body));
    }
    // A host of its own, for as long as the request runs.
    let host = Host::new(Arc::new(Nowhere));
    let id = request.id.clone();
    let bridge = &served.bridge;
    let (queue, replies) = Queue::new(REPLY_QUEUE, bridge.settings.timeout);
    dispatch::take(bridge, &host, Message::Request(request), Arc::new(queue));
    let left = || match bridge.jobs.find(host.id, &id) {
        Some(job) => job.cancel(),
        None => {
            bridge.followers.unlisten(host.id, &id);
        }
    };
    answer(out, &replies, &id, &[], left)
}

/// A handshake-era `initialize`: opens a session.
fn initialize(served: &Served, out: &mut TcpStream, request: Request) -> std::io::Result<()> {
    let bridge = &served.bridge;
    let relay = Arc::new(Relay::new(bridge.settings.timeout));
    let host = Host::new(Arc::clone(&relay) as _);
    let (session, evicted) = served.sessions.open(host, relay);
    if let Some(evicted) = evicted {
        end(bridge, &evicted);
    }
    bridge.hosts.add(&session.host);
    let id = request.id.clone();
    let (queue, replies) = Queue::new(REPLY_QUEUE, bridge.settings.timeout);
    dispatch::take(
        bridge,
        &session.host,
        Message::Request(request),
        Arc::new(queue),
    );
    let named = [("Mcp-Session-Id", session.id.clone())];
    answer(out, &replies, &id, &named, || {})
}

/// A message of a handshake-era session: a request answered here, anything else accepted.
fn in_session(
    served: &Served,
    out: &mut TcpStream,
    session: Option<&str>,
    message: Message,
) -> std::io::Result<()> {
    let Some(session) = session else {
        return refuse(
            out,
            400,
            ErrorCode::INVALID_REQUEST,
            "Mcp-Session-Id header is required",
        );
    };
    let Some(session) = served.sessions.find(session) else {
        return refuse(
            out,
            404,
            ErrorCode::INVALID_REQUEST,
            "no such session (it ended)",
        );
    };
    let bridge = &served.bridge;
    match message {
        Message::Request(request) => {
            let id = request.id.clone();
            let (queue, replies) = Queue::new(REPLY_QUEUE, bridge.settings.timeout);
            dispatch::take(
                bridge,
                &session.host,
                Message::Request(request),
                Arc::new(queue),
            );
            answer(out, &replies, &id, &[], || {})
        }
        other => {
            dispatch::take(bridge, &session.host, other, Arc::clone(&session.host.out));
            respond(out, 202, &[], None)
        }
    }
}

/// Sends the answer to request `id` from `replies`: as JSON when it comes first, as an event
/// stream after whatever comes before it. `left` runs when the host closes the connection
/// before the answer.
fn answer(
    out: &mut TcpStream,
    replies: &Receiver<Message>,
    id: &RequestId,
    headers: &[(&str, String)],
    left: impl Fn(),
) -> std::io::Result<()> {
    let sent = stream(out, replies, id, headers);
    if sent.is_err() {
        // The host left (or stopped reading) before its answer.
        left();
    }
    sent
}

/// Streams what comes for request `id` until its answer (see [`answer`]).
fn stream(
    out: &mut TcpStream,
    replies: &Receiver<Message>,
    id: &RequestId,
    headers: &[(&str, String)],
) -> std::io::Result<()> {
    let ends =
        |message: &Message| matches!(message, Message::Response(r) if r.id.as_ref() == Some(id));
    let Some(first) = next(out, replies, None)? else {
        let why = "the request ended unanswered";
        return refuse(out, 500, ErrorCode::INTERNAL_ERROR, why);
    };
    if ends(&first) {
        return respond(out, 200, headers, Some(&first.encode()));
    }
    start_stream(out, headers)?;
    event(out, &first)?;
    loop {
        let Some(message) = next(out, replies, Some(KEEP_ALIVE))? else {
            return end_stream(out);
        };
        event(out, &message)?;
        if ends(&message) {
            return end_stream(out);
        }
    }
}

/// The next message for the host; `None` once nothing more can come. Meanwhile the connection
/// is watched: a host that left is an error; an open stream gets a comment every `keep`.
fn next(
    out: &mut TcpStream,
    replies: &Receiver<Message>,
    keep: Option<Duration>,
) -> std::io::Result<Option<Message>> {
    let mut quiet = Instant::now();
    loop {
        match replies.recv_timeout(WATCH) {
            Ok(message) => return Ok(Some(message)),
            Err(RecvTimeoutError::Disconnected) => return Ok(None),
            Err(RecvTimeoutError::Timeout) => {}
        }
        if gone(out) {
            let left = std::io::Error::new(ErrorKind::ConnectionAborted, "the host left");
            return Err(left);
        }
        if keep.is_some_and(|k| quiet.elapsed() >= k) {
            keep_alive(out)?;
            quiet = Instant::now();
        }
    }
}

/// Whether the host closed the connection (it sends nothing while it waits for an answer).
fn gone(out: &TcpStream) -> bool {
    if out.set_nonblocking(true).is_err() {
        return true;
    }
    let closed = match out.peek(&mut [0u8; 1]) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => e.kind() != ErrorKind::WouldBlock,
    };
    closed || out.set_nonblocking(false).is_err()
}

/// A GET: the stream of a handshake-era session, for what answers none of its requests.
fn get(served: &Served, out: &mut TcpStream, http: &message::Request) -> std::io::Result<()> {
    let Some(id) = http.header("Mcp-Session-Id") else {
        // The stateless era has no such stream.
        return respond(out, 405, &[("Allow", "POST".into())], None);
    };
    let Some(session) = served.sessions.find(id) else {
        return refuse(
            out,
            404,
            ErrorCode::INVALID_REQUEST,
            "no such session (it ended)",
        );
    };
    let Some(stream) = session.relay.open() else {
        return refuse(
            out,
            409,
            ErrorCode::INVALID_REQUEST,
            "the session's stream is open already",
        );
    };
    let streamed = start_stream(out, &[]).and_then(|()| loop {
        match next(out, &stream, Some(KEEP_ALIVE))? {
            Some(message) => event(out, &message)?,
            None => break end_stream(out),
        }
    });
    session.relay.close();
    streamed
}

/// A DELETE: ends a handshake-era session.
fn delete(served: &Served, out: &mut TcpStream, http: &message::Request) -> std::io::Result<()> {
    let ended = http
        .header("Mcp-Session-Id")
        .and_then(|id| served.sessions.end(id));
    match ended {
        Some(session) => {
            end(&served.bridge, &session);
            respond(out, 200, &[], None)
        }
        None => respond(out, 404, &[], None),
    }
}

/// Ends a session: its questions fail, what it followed is dropped, its stream closes.
fn end(bridge: &Bridge, session: &Session) {
    session.host.end();
    bridge.followers.forget(&session.host);
    session.relay.close();
}
