//! The Streamable HTTP front end (protocol 2025-11-25): POST, GET and DELETE on `/mcp`, one
//! thread per HTTP request, one session (and one [`Server`]) per `initialize`.
//!
//! tiny_http's own chunked writer buffers 8 KiB before it sends anything, so a sampling
//! request would sit in that buffer while the tool waits for its answer. Event streams are
//! therefore written through the raw connection: the head, then one flushed chunk per event.

use std::collections::hash_map::RandomState;
use std::collections::{HashMap, HashSet};
use std::hash::BuildHasher;
use std::io::{self, Read, Write};
use std::process;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use tiny_http::{Header, Method, Request};
use umcp::jsonrpc::{ErrorCode, ErrorObject, Message, Payload, Request as RpcRequest, Response};

use super::behaviours::Opts;
use super::out::{self, Out};
use super::routes::{Frame, Routes};
use super::{lock, spawn, Server, VERSIONS};

mod stateless;

/// The endpoint's path.
const PATH: &str = "/mcp";
/// How often an idle event stream gets a comment, which also notices a client that left.
const KEEPALIVE: Duration = Duration::from_secs(15);
/// The largest POST body read.
const MAX_BODY: u64 = 16 * 1024 * 1024;

/// One session: its server (state, pending requests) and where its messages go.
#[derive(Clone)]
struct Session {
    server: Arc<Server>,
    routes: Arc<Routes>,
}

/// The sessions, by id.
struct Front {
    opts: Opts,
    sessions: Mutex<HashMap<String, Session>>,
    /// The one server of `--modern` mode, which keeps no sessions.
    stateless: Session,
    /// Methods whose first response was lost on purpose (`lose-first-response`).
    lost: Mutex<HashSet<String>>,
}

/// Binds `address`, prints `listening on http://<address>/mcp` and serves until the process
/// is ended.
pub fn serve(opts: Opts, address: &str) -> ! {
    let listener = match tiny_http::Server::http(address) {
        Ok(listener) => listener,
        Err(e) => {
            eprintln!("demo server: cannot listen on {address}: {e}");
            process::exit(1);
        }
    };
    let Some(bound) = listener.server_addr().to_ip() else {
        eprintln!("demo server: {address} is not an IP address");
        process::exit(1);
    };
    // The one line on stdout: whoever started us reads the URL from it.
    let mut stdout = io::stdout();
    if writeln!(stdout, "listening on http://{bound}{PATH}")
        .and_then(|()| stdout.flush())
        .is_err()
    {
        process::exit(1);
    }
    let routes = Arc::new(Routes::default());
    let stateless = Session {
        server: Arc::new(Server::new(opts.clone(), Out::Http(Arc::clone(&routes)))),
        routes,
    };
    let front = Arc::new(Front {
        opts,
        sessions: Mutex::new(HashMap::new()),
        stateless,
        lost: Mutex::new(HashSet::new()),
    });
    loop {
        match listener.recv() {
            Ok(request) => {
                let front = Arc::clone(&front);
                spawn("demo-http", move || front.handle(request));
            }
            Err(e) => {
                eprintln!("demo server: accepting a connection failed: {e}");
                process::exit(1);
            }
        }
    }
}

impl Front {
    fn handle(&self, request: Request) {
        let path = request.url().split('?').next().unwrap_or_default();
        if path != PATH {
            return status(request, 404, "not found: the endpoint is /mcp");
        }
        if !local_origin(&request) {
            return status(request, 403, "forbidden: the origin is not local");
        }
        match request.method() {
            Method::Post if self.opts.modern => self.post_modern(request),
            _ if self.opts.modern => {
                let allow = [("Allow", "POST")];
                let _ = request.respond(with_headers(tiny_http::Response::empty(405), &allow));
            }
            Method::Post => self.post(request),
            Method::Get => self.get(request),
            Method::Delete => self.delete(request),
            _ => {
                let allow = [("Allow", "GET, POST, DELETE")];
                let _ = request.respond(with_headers(tiny_http::Response::empty(405), &allow));
            }
        }
    }

    fn post(&self, mut request: Request) {
        let mut body = String::new();
        let read = request.as_reader().take(MAX_BODY).read_to_string(&mut body);
        if let Err(e) = read {
            return rpc_error(request, 400, ErrorCode::PARSE_ERROR, &e.to_string());
        }
        let message = match Payload::decode(body.trim()) {
            Ok(Payload::Single(message)) => message,
            Ok(Payload::Batch(..)) => {
                let why = "one JSON-RPC message per POST";
                return rpc_error(request, 400, ErrorCode::INVALID_REQUEST, why);
            }
            Err(e) => return rpc_error(request, 400, ErrorCode::PARSE_ERROR, &e.to_string()),
        };
        let initialize = matches!(&message, Message::Request(r) if r.method == "initialize");
        let (session, new_id) = if initialize {
            let (id, session) = self.open_session();
            (session, Some(id))
        } else {
            match self.session(&request) {
                Ok(session) => (session, None),
                Err((code, why)) => return status(request, code, why),
            }
        };
        match message {
            Message::Request(call) => self.answer(request, &session, call, new_id.as_deref()),
            // Notifications and the client's responses are accepted without a body.
            message => {
                session.server.handle(message);
                status(request, 202, "");
            }
        }
    }

    /// Hands request `call` to the session's server and writes what belongs to it (messages
    /// sent while it runs, then its response) as an event stream, or the response alone as
    /// JSON when the client does not accept event streams. A new session's id goes with it.
    fn answer(&self, request: Request, session: &Session, call: RpcRequest, new_id: Option<&str>) {
        let event_stream = accepts_event_stream(&request);
        let Some((key, frames)) = session.routes.open_post(call.id.clone(), event_stream) else {
            return status(request, 404, "session not found");
        };
        let headers: Vec<(&str, &str)> = new_id
            .map(|id| ("Mcp-Session-Id", id))
            .into_iter()
            .collect();
        // Whatever the server sends while handling the request on this thread belongs to it.
        out::set_origin(Some(call.id.clone()));
        if !event_stream {
            session.server.handle(Message::Request(call));
            json_reply(request, &frames, &headers);
        } else if let Ok(mut stream) = EventStream::open(request, &headers) {
            session.server.handle(Message::Request(call));
            stream.pump(&frames);
            stream.end();
        }
        session.routes.close_stream(key);
    }

    fn get(&self, request: Request) {
        let session = match self.session(&request) {
            Ok(session) => session,
            Err((code, why)) => return status(request, code, why),
        };
        if !accepts_event_stream(&request) {
            return status(request, 405, "GET serves text/event-stream only");
        }
        let Some((key, frames)) = session.routes.open_get() else {
            return status(request, 404, "session not found");
        };
        if let Ok(mut stream) = EventStream::open(request, &[]) {
            stream.pump(&frames);
            stream.end();
        }
        session.routes.close_stream(key);
    }

    fn delete(&self, request: Request) {
        if let Err((code, why)) = self.session(&request) {
            return status(request, code, why);
        }
        let removed =
            header(&request, "Mcp-Session-Id").and_then(|id| lock(&self.sessions).remove(id));
        if let Some(session) = removed {
            session.routes.close();
        }
        status(request, 200, "");
    }

    /// A new session with a fresh id.
    fn open_session(&self) -> (String, Session) {
        let routes = Arc::new(Routes::default());
        let server = Server::new(self.opts.clone(), Out::Http(Arc::clone(&routes)));
        let session = Session {
            server: Arc::new(server),
            routes,
        };
        let id = session_id();
        lock(&self.sessions).insert(id.clone(), session.clone());
        (id, session)
    }

    /// The session a request names, or the status to refuse it with: 400 without a session
    /// id or with a protocol version we do not speak, 404 for an unknown (or deleted) one.
    fn session(&self, request: &Request) -> Result<Session, (u16, &'static str)> {
        let id = header(request, "Mcp-Session-Id").ok_or((400, "missing Mcp-Session-Id header"))?;
        let session = lock(&self.sessions)
            .get(id)
            .cloned()
            .ok_or((404, "session not found"))?;
        let version = header(request, "MCP-Protocol-Version");
        if version.is_some_and(|v| !VERSIONS.contains(&v)) {
            return Err((400, "unsupported MCP-Protocol-Version"));
        }
        Ok(session)
    }
}

/// An event-stream reply being written: chunked by hand, flushed after every event.
struct EventStream {
    writer: Box<dyn Write + Send>,
}

impl EventStream {
    /// Writes the head of a `200 text/event-stream` reply.
    fn open(request: Request, headers: &[(&str, &str)]) -> io::Result<EventStream> {
        let mut writer = request.into_writer();
        let mut head = String::from(
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n\
             Transfer-Encoding: chunked\r\n",
        );
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        writer.write_all(head.as_bytes())?;
        writer.flush()?;
        Ok(EventStream { writer })
    }

    /// Writes `text` as one chunk and flushes it.
    fn chunk(&mut self, text: &str) -> io::Result<()> {
        write!(self.writer, "{:x}\r\n{text}\r\n", text.len())?;
        self.writer.flush()
    }

    /// Writes the frames it is handed until the last one, the session's end, or a write that
    /// fails because the client went away.
    fn pump(&mut self, frames: &Receiver<Frame>) {
        loop {
            let written = match frames.recv_timeout(KEEPALIVE) {
                Ok(Frame::Event(json)) => self.chunk(&format!("event: message\ndata: {json}\n\n")),
                Ok(Frame::Last(json)) => {
                    let _ = self.chunk(&format!("event: message\ndata: {json}\n\n"));
                    return;
                }
                Err(RecvTimeoutError::Timeout) => self.chunk(": keepalive\n\n"),
                Err(RecvTimeoutError::Disconnected) => return,
            };
            if written.is_err() {
                return;
            }
        }
    }

    /// Ends the reply with the last chunk, so the client sees a clean end of stream.
    fn end(mut self) {
        let _ = self
            .writer
            .write_all(b"0\r\n\r\n")
            .and_then(|()| self.writer.flush());
    }
}

/// Answers with the response alone, as `application/json`; with `202` and no body if the
/// request ends without one (it was cancelled).
fn json_reply(request: Request, frames: &Receiver<Frame>, headers: &[(&str, &str)]) {
    // Only the response is routed to a JSON reply; the wait ends with it or with the session.
    let response = loop {
        match frames.recv() {
            Ok(Frame::Last(json)) => break json,
            Ok(Frame::Event(_)) => {}
            Err(_) => return status(request, 202, ""),
        }
    };
    let reply = tiny_http::Response::from_string(response);
    let reply = with_headers(reply, &[("Content-Type", "application/json")]);
    let _ = request.respond(with_headers(reply, headers));
}

/// Answers with `code`; a refusal carries `why` as a JSON-RPC error without an id.
fn status(request: Request, code: u16, why: &str) {
    if code >= 400 {
        return rpc_error(request, code, ErrorCode::INVALID_REQUEST, why);
    }
    let _ = request.respond(tiny_http::Response::empty(code));
}

fn rpc_error(request: Request, status: u16, code: ErrorCode, why: &str) {
    let error = Response {
        id: None,
        result: Err(ErrorObject::new(code, why)),
    };
    let body = Message::from(error).encode();
    let reply = tiny_http::Response::from_string(body).with_status_code(status);
    let _ = request.respond(with_headers(reply, &[("Content-Type", "application/json")]));
}

/// The value of header `name` (any case).
fn header<'r>(request: &'r Request, name: &'static str) -> Option<&'r str> {
    request
        .headers()
        .iter()
        .find(|h| h.field.equiv(name))
        .map(|h| h.value.as_str())
}

/// `reply` with `headers` added (all plain ASCII here, which tiny_http accepts).
fn with_headers<R: Read>(
    mut reply: tiny_http::Response<R>,
    headers: &[(&str, &str)],
) -> tiny_http::Response<R> {
    for (name, value) in headers {
        if let Ok(header) = Header::from_bytes(name.as_bytes(), value.as_bytes()) {
            reply.add_header(header);
        }
    }
    reply
}

fn accepts_event_stream(request: &Request) -> bool {
    header(request, "Accept").is_some_and(|accept| {
        accept.split(',').any(|media| {
            let media = media.split(';').next().unwrap_or_default().trim();
            media.eq_ignore_ascii_case("text/event-stream")
        })
    })
}

/// Browsers send `Origin`; only pages served from this machine may talk to the server, which
/// keeps DNS-rebinding pages out, as the spec asks.
fn local_origin(request: &Request) -> bool {
    let Some(origin) = header(request, "Origin") else {
        return true;
    };
    let host = origin.split("://").nth(1).unwrap_or_default();
    ["localhost", "127.0.0.1", "[::1]"].iter().any(|local| {
        host.strip_prefix(local)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(':'))
    })
}

/// A session id nobody can guess from the outside: 32 hex digits from two randomly keyed
/// hashes of the time, the process id and a counter.
fn session_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    let count = COUNTER.fetch_add(1, Ordering::SeqCst);
    (0..2u8)
        .map(|round| {
            let hash = RandomState::new().hash_one((now.as_nanos(), process::id(), count, round));
            format!("{hash:016x}")
        })
        .collect()
}
