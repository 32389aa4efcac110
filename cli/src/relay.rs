//! `umcp record` and `umcp replay`: umcp as a stdio MCP server. `record` relays every message
//! to the server given (stdio or HTTP) and records the session into `--out FILE`, so any
//! host can be recorded by wrapping its server's command line; `replay FILE` serves a
//! recording, with no server at all.
//!
//! One line a message on stdin and stdout, as a stdio server speaks. A message that cannot
//! be sent on (an HTTP server refusing it) is answered, when it is a request, with a JSON-RPC
//! error carrying the server's own error when its body holds one, so the client hears what
//! it would have heard over HTTP.

use crate::sync::lock;
use std::collections::{HashMap, HashSet};
use std::io::{BufRead, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use umcp::jsonrpc::{ErrorCode, ErrorObject, Message, Payload, RequestId, Response};
use umcp::testing::{RecordingTransport, ReplayTransport};
use umcp::transport::{Connect, Inbound, Inbox, SessionEvent, Transport};
use umcp::types::{is_modern_protocol_version, META_PROTOCOL_VERSION};
use umcp::{ConfigFile, Error};

use crate::args::Args;
use crate::exit::{usage, Exit};
use crate::servers;

/// How long the end of the session may take once stdin has ended: the server's close, and
/// what it still sends.
const END_WAIT: Duration = Duration::from_secs(10);

/// How many requests may be on their way to an HTTP server at once; beyond that the next
/// one waits for its own send.
const MAX_SENDS: usize = 32;

/// Runs `record` or `replay` until the client ends the session (closes stdin) or the server
/// goes away.
pub fn run(command: &str, args: &Args, rest: &[&str]) -> Result<(), Exit> {
    match command {
        "record" => record(args),
        _ => {
            let file = rest.first().copied().unwrap_or_default();
            let replay = ReplayTransport::open(Path::new(file))
                .map_err(|e| Exit(1, format!("replay {file}: {e}")))?;
            relay(&replay, args.timeout)
        }
    }
}

/// `--out` belongs to `record` and `lock` alone.
pub fn check(command: &str, args: &Args) -> Result<(), Exit> {
    if args.out.is_some() && !matches!(command, "record" | "lock") {
        return Err(usage(format!(
            "--out is for record and lock, not {command}"
        )));
    }
    Ok(())
}

fn record(args: &Args) -> Result<(), Exit> {
    let out = args
        .out
        .as_deref()
        .ok_or_else(|| usage("record needs --out FILE, where the session is written"))?;
    let servers = servers::servers(args)?.list;
    let [server] = servers.as_slice() else {
        return Err(usage("record needs one server: add --server NAME"));
    };
    if server.oauth().is_some() {
        return Err(usage(
            "record does not run OAuth: give the server's token with --header",
        ));
    }
    let recording = RecordingTransport::for_server(server, Path::new(out))
        .map_err(|e| Exit(1, format!("record: {e}")))?;
    // The values of the `${VAR}`s the command line used are secrets, whatever their names.
    let raw = args.url.iter().chain(args.headers.iter().map(|(_, v)| v));
    let recording = raw
        .flat_map(|text| variables(text))
        .filter_map(|name| ConfigFile::expand(&format!("${{{name}}}")).ok())
        .fold(recording, RecordingTransport::with_secret);
    relay(&recording, args.timeout)
}

/// The names of the `${VAR}`s in `text` (a `${VAR:-default}` names `VAR`).
fn variables(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        rest = &rest[start + 2..];
        let Some(end) = rest.find('}') else { break };
        let name = rest[..end].split(":-").next().unwrap_or_default();
        names.push(name.to_owned());
        rest = &rest[end + 1..];
    }
    names
}

/// Relays stdin to the transport `connect` starts, and what it delivers to stdout.
fn relay(connect: &dyn Connect, timeout: Duration) -> Result<(), Exit> {
    let (inbox, inbound) = Inbox::new();
    let transport: Arc<dyn Transport> = Arc::from(
        connect
            .connect(inbox)
            .map_err(|e| Exit(3, format!("{}: {e}", connect.describe())))?,
    );
    let stdout = Arc::new(Lines(Mutex::new(std::io::stdout())));
    let session = Arc::new(Session::default());
    // Disconnected when the writing thread ends: the connection is over.
    let (done_tx, done) = crossbeam_channel::bounded::<()>(0);
    {
        let (transport, stdout, session) = (
            Arc::clone(&transport),
            Arc::clone(&stdout),
            Arc::clone(&session),
        );
        spawn("umcp-relay-out", move || {
            let _done = done_tx;
            deliver(&inbound, &*transport, &stdout, &session);
        })?;
    }
    // Stdin is read on a thread of its own, so that a server going away ends the relay
    // while stdin is still open; that thread ends with the process.
    let (lines_tx, lines) = crossbeam_channel::bounded::<String>(64);
    spawn("umcp-relay-in", move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if lines_tx.send(line).is_err() {
                break;
            }
        }
    })?;
    // Over HTTP a send waits for the server, and a request's may wait as long as its stream
    // lasts (a subscription): requests then go out on threads of their own, a bounded few.
    let concurrent = transport.send_waits_for_peer();
    let sending = Arc::new(AtomicUsize::new(0));
    loop {
        crossbeam_channel::select! {
            recv(lines) -> line => {
                let Ok(line) = line else { break };
                for message in decode(&line) {
                    let request = matches!(message, Message::Request(_));
                    if request && concurrent && sending.fetch_add(1, Ordering::SeqCst) < MAX_SENDS {
                        let (transport, stdout, session, sending) = (
                            Arc::clone(&transport),
                            Arc::clone(&stdout),
                            Arc::clone(&session),
                            Arc::clone(&sending),
                        );
                        spawn("umcp-relay-send", move || {
                            forward(&message, &*transport, &stdout, &session, timeout);
                            sending.fetch_sub(1, Ordering::SeqCst);
                        })?;
                        continue;
                    }
                    if request && concurrent {
                        sending.fetch_sub(1, Ordering::SeqCst);
                    }
                    forward(&message, &*transport, &stdout, &session, timeout);
                }
            }
            recv(done) -> _ => break,
        }
    }
    transport.close();
    let _ = done.recv_timeout(END_WAIT);
    match session.over.load(Ordering::Relaxed) {
        true => Err(Exit(3, String::new())),
        false => Ok(()),
    }
}

fn spawn(name: &str, run: impl FnOnce() + Send + 'static) -> Result<(), Exit> {
    std::thread::Builder::new()
        .name(name.into())
        .spawn(run)
        .map(drop)
        .map_err(|e| Exit(1, format!("could not start a thread: {e}")))
}

/// The messages of one line from the client; a line that holds none is said on stderr.
fn decode(line: &str) -> Vec<Message> {
    if line.trim().is_empty() {
        return Vec::new();
    }
    match Payload::decode(line) {
        Ok(Payload::Single(message)) => vec![message],
        Ok(Payload::Batch(messages, _, _)) => messages,
        Err(e) => {
            eprintln!("umcp: skipping a line that is no JSON-RPC message: {e}");
            Vec::new()
        }
    }
}

/// A tool argument sent as a header: its path through `properties`, and the header's name
/// after `Mcp-Param-`.
type Mirrored = (Vec<String>, String);

/// What the relay follows of the session, for a transport that keeps one (HTTP): the
/// events the client would have given it itself.
#[derive(Default)]
struct Session {
    /// The id of the client's `initialize`, whose answer names the protocol version.
    initialize: Mutex<Option<RequestId>>,
    /// The id of the client's `server/discover`, whose answer, when it is one, sets up the
    /// stateless session.
    discover: Mutex<Option<RequestId>>,
    stateless: AtomicBool,
    /// The `tools/list` requests under way, whose answers say which arguments of which tool
    /// travel in `Mcp-Param-*` headers.
    listings: Mutex<HashSet<RequestId>>,
    /// Per tool, the argument paths mirrored into headers and the headers' names.
    mirrored: Mutex<HashMap<String, Vec<Mirrored>>>,
    /// The server went away.
    over: AtomicBool,
}

/// Sends one client message on; a request that cannot go is answered with an error.
fn forward(
    message: &Message,
    transport: &dyn Transport,
    stdout: &Lines,
    session: &Session,
    timeout: Duration,
) {
    let deadline = Instant::now() + timeout;
    let mut headers = Vec::new();
    match message {
        Message::Request(request) => {
            if request.method == "initialize" {
                *lock(&session.initialize) = Some(request.id.clone());
                // A client that falls back from the stateless era starts a session.
                if session.stateless.swap(false, Ordering::Relaxed) {
                    transport.session_event(SessionEvent::Reset);
                }
            }
            let params = request.params.as_ref();
            let version = params
                .and_then(|p| p.get("_meta"))
                .and_then(|m| m.get(META_PROTOCOL_VERSION))
                .and_then(Value::as_str)
                .filter(|v| is_modern_protocol_version(v));
            if let Some(version) = version {
                if request.method == "server/discover" {
                    *lock(&session.discover) = Some(request.id.clone());
                    if !session.stateless.swap(true, Ordering::Relaxed) {
                        transport.session_event(SessionEvent::Stateless);
                    }
                }
                if request.method == "tools/list" {
                    lock(&session.listings).insert(request.id.clone());
                }
                headers = routing_headers(version, &request.method, params, session);
            }
        }
        Message::Notification(note) if note.method == "notifications/cancelled" => {
            // Over HTTP, ending the request's stream is what cancels it.
            let id = note.params.as_ref().and_then(|p| p.get("requestId"));
            if let Some(id) = id.and_then(|id| serde_json::from_value(id.clone()).ok()) {
                transport.abandon(&id);
            }
        }
        Message::Notification(_) | Message::Response(_) => {}
    }
    let sent = match headers.is_empty() {
        true => transport.send(message, deadline),
        false => transport.send_with_headers(message, deadline, &headers),
    };
    match (sent, message) {
        (Ok(()), Message::Notification(note)) if note.method == "notifications/initialized" => {
            transport.session_event(SessionEvent::Ready);
        }
        (Ok(()), _) => {}
        (Err(error), Message::Request(request)) => {
            let answer = Response::err(request.id.clone(), refusal(&error));
            stdout.write(&answer.into());
        }
        (Err(error), _) => eprintln!("umcp: a message was not sent: {error}"),
    }
}

/// The JSON-RPC error a client hears for a request that could not be sent: the server's
/// own, when its refusal carries one.
fn refusal(error: &Error) -> ErrorObject {
    let body = match error {
        Error::Http(http) | Error::Unauthorized(http) | Error::Forbidden(http) => {
            serde_json::from_str::<Value>(&http.body).ok()
        }
        _ => None,
    };
    let carried = body
        .and_then(|b| b.get("error").cloned())
        .and_then(|e| serde_json::from_value::<ErrorObject>(e).ok());
    carried.unwrap_or_else(|| ErrorObject::new(ErrorCode::INTERNAL_ERROR, error.to_string()))
}

/// The stateless era's routing headers of a request: what the client would have sent over
/// HTTP itself. A value that is not plain visible ASCII is left out (the server says so).
fn routing_headers(
    version: &str,
    method: &str,
    params: Option<&Value>,
    session: &Session,
) -> Vec<(String, String)> {
    let plain = |v: &str| !v.is_empty() && v.bytes().all(|b| (0x21..0x7f).contains(&b));
    let mut headers = vec![
        ("MCP-Protocol-Version".to_owned(), version.to_owned()),
        ("Mcp-Method".to_owned(), method.to_owned()),
    ];
    let key = match method {
        "tools/call" | "prompts/get" => "name",
        "resources/read" => "uri",
        "tasks/get" | "tasks/update" | "tasks/cancel" => "taskId",
        _ => return headers,
    };
    let name = params.and_then(|p| p.get(key)).and_then(Value::as_str);
    let Some(name) = name.filter(|n| plain(n)) else {
        return headers;
    };
    headers.push(("Mcp-Name".to_owned(), name.to_owned()));
    let arguments = params.and_then(|p| p.get("arguments"));
    let mirrored = lock(&session.mirrored)
        .get(name)
        .cloned()
        .unwrap_or_default();
    for (path, header) in mirrored {
        let value = arguments.and_then(|a| path.iter().try_fold(a, |v, key| v.get(key)));
        let value = match value {
            Some(Value::String(text)) if plain(text.as_str()) => text.clone(),
            Some(Value::Bool(b)) => b.to_string(),
            Some(Value::Number(n)) if n.is_i64() || n.is_u64() => n.to_string(),
            _ => continue,
        };
        headers.push((format!("Mcp-Param-{header}"), value));
    }
    headers
}

/// Learns from a `tools/list` answer which tool arguments travel in `Mcp-Param-*` headers
/// (their `x-mcp-header` annotations, reached through `properties`).
fn mirror(result: &Value, session: &Session) {
    fn walk(schema: &Value, path: &mut Vec<String>, out: &mut Vec<Mirrored>) {
        let properties = schema.get("properties").and_then(Value::as_object);
        for (name, property) in properties.into_iter().flatten() {
            path.push(name.clone());
            if let Some(header) = property.get("x-mcp-header").and_then(Value::as_str) {
                out.push((path.clone(), header.to_owned()));
            }
            walk(property, path, out);
            path.pop();
        }
    }
    let tools = result.get("tools").and_then(Value::as_array);
    let mut mirrored = lock(&session.mirrored);
    for tool in tools.into_iter().flatten() {
        let Some(name) = tool.get("name").and_then(Value::as_str) else {
            continue;
        };
        let mut found = Vec::new();
        walk(&tool["inputSchema"], &mut Vec::new(), &mut found);
        mirrored.insert(name.to_owned(), found);
    }
}

/// Writes what the transport delivers to stdout until the connection ends.
fn deliver(
    inbound: &crossbeam_channel::Receiver<Inbound>,
    transport: &dyn Transport,
    stdout: &Lines,
    session: &Session,
) {
    for delivered in inbound.iter() {
        match delivered {
            Inbound::Message(message) => {
                negotiated(&message, transport, session);
                stdout.write(&message);
            }
            Inbound::Batch(messages, _) => {
                for message in &messages {
                    stdout.write(message);
                }
            }
            Inbound::Failed(id, error) | Inbound::Unanswered(id, error) => {
                let lost = ErrorObject::new(ErrorCode::INTERNAL_ERROR, error.to_string());
                stdout.write(&Response::err(id, lost).into());
            }
            Inbound::Closed(closed) => {
                if !closed.is_client_close() {
                    session.over.store(true, Ordering::Relaxed);
                    eprintln!("umcp: the server went away: {}", closed.reason);
                }
                return;
            }
            // Requests JSON-RPC rejects and stream gaps: nothing a client could act on.
            _ => {}
        }
    }
}

/// Tells the transport what the server's answer to `initialize` or `server/discover` set up,
/// before the client hears it (and sends its next request).
fn negotiated(message: &Message, transport: &dyn Transport, session: &Session) {
    let Message::Response(response) = message else {
        return;
    };
    let Some(id) = response.id.as_ref() else {
        return;
    };
    if lock(&session.listings).remove(id) {
        if let Ok(result) = &response.result {
            mirror(result, session);
        }
        return;
    }
    if lock(&session.discover).as_ref() == Some(id) {
        let adopted = response
            .result
            .as_ref()
            .is_ok_and(|r| r.get("supportedVersions").is_some());
        if adopted {
            transport.session_event(SessionEvent::Ready);
        }
        return;
    }
    let initialize = lock(&session.initialize).clone();
    if response.id.is_none() || response.id != initialize {
        return;
    }
    let version = response.result.as_ref().ok().and_then(|r| {
        r.get("protocolVersion")
            .and_then(Value::as_str)
            .map(str::to_owned)
    });
    if let Some(version) = version {
        transport.session_event(SessionEvent::Negotiated {
            protocol_version: &version,
        });
    }
}

/// Stdout, one message a line, each flushed as it is written. A client that stopped reading
/// only loses what it would not read.
struct Lines(Mutex<std::io::Stdout>);

impl Lines {
    fn write(&self, message: &Message) {
        let mut out = lock(&self.0);
        let mut line = message.encode();
        line.push('\n');
        let _ = out.write_all(line.as_bytes()).and_then(|()| out.flush());
    }
}
