//! The replaying transport: a recording served to a client, with no server at all.

use crate::sync::lock;
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::{SendTimeoutError, Sender};
use serde_json::{json, Value};

use crate::error::{Closed, Error, HttpError, Result, TimeoutKind, CLOSED_BY_CLIENT};
use crate::jsonrpc::{ErrorCode, ErrorObject, Message, Notification, Request, RequestId, Response};
use crate::redact::{clip, REDACTED};
use crate::transport::{Connect, Inbox, Transport};
use crate::types::META_SUBSCRIPTION_ID;

/// The JSON-RPC error code of a request the recording does not hold (one of the codes
/// JSON-RPC leaves to implementations).
///
/// ```
/// use serde_json::json;
/// use umcp::testing::{ReplayTransport, NOT_RECORDED};
/// use umcp::{Client, Options, ProtocolMode};
///
/// let recording = [
///     r#"{"recording":"umcp","version":1,"session":1,"server":"calc"}"#,
///     r#"{"ms":0.1,"from":"client","message":{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}}"#,
///     r#"{"ms":2.0,"from":"server","message":{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"calc","version":"1"}}}}"#,
///     r#"{"ms":2.2,"from":"client","message":{"jsonrpc":"2.0","method":"notifications/initialized"}}"#,
///     r#"{"ms":3.0,"from":"client","message":{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}}}"#,
///     r#"{"ms":3.5,"from":"server","message":{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"5"}]}}}"#,
/// ].join("\n");
/// let replay = ReplayTransport::parse("calc.jsonl", &recording)?;
/// let options = Options::default().with_protocol_mode(ProtocolMode::Legacy);
/// let client = Client::connect_with_options(replay, options)?;
/// assert_eq!(client.call_tool("add", json!({"b": 3, "a": 2}))?.text(), "5");
/// let other = client.call_tool("add", json!({"a": 2, "b": 4})).unwrap_err();
/// let error = other.rpc_error().unwrap();
/// assert_eq!(error.code, NOT_RECORDED);
/// assert!(error.message.contains("line 5"), "{}", error.message);
/// assert!(error.message.contains("/arguments/b: recorded 3, sent 4"), "{}", error.message);
/// # Ok::<(), umcp::Error>(())
/// ```
pub const NOT_RECORDED: ErrorCode = ErrorCode(-32010);

/// How many messages may wait to be delivered to the client; a client that lets this many
/// pile up waits in its `send`, within its deadline.
const QUEUE: usize = 1024;

/// How long `close` waits for the messages already on their way to be delivered.
const DRAIN_WAIT: Duration = Duration::from_secs(2);

/// The longest recording [`ReplayTransport::open`] reads: it is held in memory, whole.
const MAX_RECORDING_BYTES: u64 = 256 << 20;

/// How much of a request's params an error quotes.
const QUOTE_CHARS: usize = 300;

/// A [`Connect`] that serves a recording made by
/// [`RecordingTransport`](super::RecordingTransport) to a client, with no server at all.
///
/// Each connection plays the next session of the recording (the last one again once they
/// are used up). What the client sends is matched against what the recorded client sent, and
/// what the recorded server sent is played back in its order, as soon as what it answered
/// has been matched. Recorded timing is not reproduced: everything comes at once.
///
/// # How requests are matched
///
/// A request matches a recorded one of the same method whose params are equal after these
/// volatile parts are left out on both sides:
///
/// - the request id (the response goes back under the id the client used);
/// - in `_meta`: the `progressToken` and every `io.modelcontextprotocol/…` entry (protocol
///   version, client capabilities and info, log level); an emptied `_meta` counts as absent,
///   and so do empty params;
/// - all params of `initialize` and `server/discover`, which depend on the client's version
///   and handlers: these match on their method alone.
///
/// Numbers compare by value (`2` equals `2.0`), and a recorded string holding `<redacted>`
/// matches any string with the same text around it. The first recorded request that matches
/// and has not been used yet is chosen; when all that match are used, the last of them is
/// played again. A notification is matched the same way (a `notifications/cancelled` by the
/// recorded request its id stands for) and one that matches nothing is ignored. A response
/// to a server request is compared with the recorded one: when it differs, the answers that
/// depended on it come back as errors saying how.
///
/// A request that matches nothing is answered with the JSON-RPC error [`NOT_RECORDED`]
/// (the client returns it as [`Error::Rpc`]), whose message names the
/// closest recorded request, its line in the file and how it differs:
///
/// ```text
/// `tools/call` is not in the recording: the closest recorded request, line 12, is
/// `tools/call` {"arguments":{"a":2,"b":3},"name":"add"}, which differs at /arguments/b:
/// recorded 3, sent 4
/// ```
///
/// # What is played back when
///
/// Every message the server sent has an owner: the recorded request it answers, the one whose
/// progress token or subscription id it carries, or else the latest request still unanswered
/// at that point of the recording (or, failing that, the client's latest message). It is
/// played once its owner has been matched and the client has answered every server request
/// recorded before it for the same owner, in the recorded order among those of its owner:
/// progress and an elicitation come before the result they preceded, and a notification the
/// server sent on its own comes after the client message that preceded it. Progress tokens,
/// subscription ids and the ids of cancelled requests are rewritten to the client's own, and
/// server requests get fresh ids. A recorded end of the connection by the server is played
/// back as one, unless the client closed first, and a message that failed to go out when it
/// was recorded (an HTTP server's refusal, say) fails the same way.
///
/// See the example on [`NOT_RECORDED`], and the testing guide,
/// [`umcp::guide::testing`](crate::guide::testing), for a whole test.
pub struct ReplayTransport {
    name: String,
    /// What `describe` says: unique to this replay, so that no era verdict a client
    /// remembers from another carries over.
    key: String,
    sessions: Vec<Arc<Script>>,
    next: AtomicUsize,
}

impl ReplayTransport {
    /// The recording in the file at `path`, of at most 256 MiB (a longer one is refused
    /// unread).
    ///
    /// See the example on [`NOT_RECORDED`].
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when the file cannot be read or is too long; as
    /// [`ReplayTransport::parse`] otherwise.
    pub fn open(path: &Path) -> Result<ReplayTransport> {
        let text = crate::capped::read_text(path, MAX_RECORDING_BYTES).map_err(Error::io)?;
        ReplayTransport::parse(&path.display().to_string(), &text)
    }

    /// The recording `text`, named `name` in errors and logs.
    ///
    /// See the example on [`NOT_RECORDED`].
    ///
    /// # Errors
    ///
    /// [`Error::Config`] naming the line, for a line that is no JSON object or an entry
    /// before the first session's header line, and when the recording has no session.
    pub fn parse(name: &str, text: &str) -> Result<ReplayTransport> {
        static REPLAYS: AtomicU64 = AtomicU64::new(1);
        let mut sessions: Vec<Vec<(usize, Value)>> = Vec::new();
        for (at, line) in text.lines().enumerate() {
            let number = at + 1;
            if line.trim().is_empty() {
                continue;
            }
            let entry: Value = serde_json::from_str(line)
                .map_err(|e| Error::Config(format!("{name}, line {number}: {e}")))?;
            if !entry.is_object() {
                return Err(Error::Config(format!(
                    "{name}, line {number}: not a JSON object"
                )));
            }
            if entry.get("recording").is_some() {
                sessions.push(Vec::new());
                continue;
            }
            let session = sessions.last_mut().ok_or_else(|| {
                Error::Config(format!(
                    "{name}, line {number}: an entry before any session"
                ))
            })?;
            session.push((number, entry));
        }
        if sessions.is_empty() {
            return Err(Error::Config(format!("{name}: no recorded session")));
        }
        let number = REPLAYS.fetch_add(1, Ordering::Relaxed);
        Ok(ReplayTransport {
            name: name.to_owned(),
            key: format!("replay of {name} #{number}"),
            sessions: sessions
                .into_iter()
                .map(|s| Arc::new(Script::new(s)))
                .collect(),
            next: AtomicUsize::new(0),
        })
    }

    /// How many sessions (connections) the recording holds.
    ///
    /// See the example on [`NOT_RECORDED`].
    pub fn sessions(&self) -> usize {
        self.sessions.len()
    }
}

impl Connect for ReplayTransport {
    fn connect(&self, inbox: Inbox) -> Result<Box<dyn Transport>> {
        let index = self.next.fetch_add(1, Ordering::Relaxed);
        let script = self
            .sessions
            .get(index)
            .or(self.sessions.last())
            .cloned()
            .ok_or_else(|| Error::Config(format!("{}: no recorded session", self.name)))?;
        log::debug!("{}: playing session {}", self.name, index + 1);
        Ok(Box::new(Player::start(&self.name, script, inbox)?))
    }

    fn describe(&self) -> String {
        self.key.clone()
    }
}

impl std::fmt::Debug for ReplayTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReplayTransport")
            .field("name", &self.name)
            .field("sessions", &self.sessions.len())
            .finish_non_exhaustive()
    }
}

/// One recorded session, read for playing.
struct Script {
    clients: Vec<ClientEntry>,
    servers: Vec<ServerEntry>,
}

/// What the recorded client sent.
struct ClientEntry {
    line: usize,
    message: Message,
    /// What matching compares: the normalized params, or a response's outcome.
    compared: Value,
    /// The error the message failed with instead of going out (a `not_sent` entry).
    refused: Option<Value>,
}

/// What the recorded server sent, and when it may be played.
struct ServerEntry {
    what: Played,
    /// The client entry it belongs to; `None`: at connect.
    owner: Option<usize>,
    /// Client answers to server requests that must have been matched first.
    waits: Vec<usize>,
}

enum Played {
    Message(Message),
    Closed(String),
}

impl Script {
    fn new(entries: Vec<(usize, Value)>) -> Script {
        let mut reading = Reading::default();
        for (line, entry) in entries {
            reading.entry(line, &entry);
        }
        Script {
            clients: reading.clients,
            servers: reading.servers,
        }
    }
}

/// A session being read, entry by entry, with what tells the owner of each server message.
#[derive(Default)]
struct Reading {
    clients: Vec<ClientEntry>,
    servers: Vec<ServerEntry>,
    /// The client entry of each recorded request, by its id.
    request_of: HashMap<RequestId, usize>,
    /// The client entry of each recorded progress token.
    token_of: HashMap<String, usize>,
    /// The client's requests not answered yet, in the order they were sent.
    open: Vec<usize>,
    /// The owner of each server request, by its id.
    asked_for: HashMap<RequestId, Option<usize>>,
    /// The client's answers to server requests, by the owner of those requests.
    answers: HashMap<Option<usize>, Vec<usize>>,
    client_closed: bool,
}

impl Reading {
    fn entry(&mut self, line: usize, entry: &Value) {
        let from = entry
            .get("from")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let message = entry
            .get("message")
            .cloned()
            .and_then(|m| Message::from_value(m).ok());
        match (from, message) {
            ("client", Some(message)) => self.client(line, message),
            ("server", Some(message)) => self.server(message),
            ("client", None) if entry.get("closed").is_some() => self.client_closed = true,
            ("transport", None) if entry.get("not_sent").is_some() => {
                // The message just recorded never reached the server.
                if let Some(last) = self.clients.last_mut() {
                    last.refused = entry.get("not_sent").cloned();
                    let index = self.clients.len() - 1;
                    self.open.retain(|o| *o != index);
                }
            }
            ("server", None) if entry.get("closed").is_some() && !self.client_closed => {
                let reason = entry["closed"].as_str().unwrap_or("server closed");
                self.servers.push(ServerEntry {
                    what: Played::Closed(reason.to_owned()),
                    owner: self.clients.len().checked_sub(1),
                    waits: Vec::new(),
                });
            }
            // Transport notes, texts that were no JSON, lines of newer formats.
            _ => {}
        }
    }

    fn client(&mut self, line: usize, message: Message) {
        let index = self.clients.len();
        match &message {
            Message::Request(request) => {
                self.request_of.insert(request.id.clone(), index);
                self.open.push(index);
                let params = request.params.as_ref();
                if let Some(token) = params.and_then(|p| p.pointer("/_meta/progressToken")) {
                    self.token_of.insert(token.to_string(), index);
                }
            }
            Message::Response(response) => {
                let asked = response.id.as_ref().and_then(|id| self.asked_for.get(id));
                let owner = asked.copied().flatten();
                self.answers.entry(owner).or_default().push(index);
            }
            Message::Notification(_) => {}
        }
        let request_of = |id: &RequestId| self.request_of.get(id).copied();
        let compared = compared(&message, &request_of, &self.clients);
        self.clients.push(ClientEntry {
            line,
            message,
            compared,
            refused: None,
        });
    }

    fn server(&mut self, message: Message) {
        let owner = self.owner(&message);
        let waits = self.answers.get(&owner).cloned().unwrap_or_default();
        self.servers.push(ServerEntry {
            what: Played::Message(message),
            owner,
            waits,
        });
    }

    /// The client entry a server message belongs to: the request it answers, the one whose
    /// progress token or subscription id it carries, or else the latest request still
    /// unanswered (failing that, the client's latest message).
    fn owner(&mut self, message: &Message) -> Option<usize> {
        let latest = self
            .open
            .last()
            .copied()
            .or(self.clients.len().checked_sub(1));
        match message {
            Message::Response(response) => {
                let answered = response.id.as_ref().and_then(|id| self.request_of.get(id));
                if let Some(index) = answered {
                    self.open.retain(|o| o != index);
                }
                answered.copied().or(latest)
            }
            Message::Notification(note) => {
                let params = note.params.as_ref();
                let token = params.and_then(|p| p.get("progressToken"));
                let tagged = params.and_then(|p| p.pointer(SUBSCRIPTION_POINTER));
                let cancelled = params
                    .filter(|_| note.method == "notifications/cancelled")
                    .and_then(|p| p.get("requestId"));
                let by_token = token.and_then(|t| self.token_of.get(&t.to_string()));
                let by_id = tagged
                    .or(cancelled)
                    .and_then(|id| id_of(id).and_then(|id| self.request_of.get(&id).copied()));
                by_token.copied().or(by_id).or(latest)
            }
            Message::Request(request) => {
                self.asked_for.insert(request.id.clone(), latest);
                latest
            }
        }
    }
}

/// Where a stateless-era notification names its subscription.
const SUBSCRIPTION_POINTER: &str = "/_meta/io.modelcontextprotocol~1subscriptionId";

/// What matching compares for a recorded or live client message; `recorded` finds the
/// recorded request an id stands for (the ids a `notifications/cancelled` names).
fn compared(
    message: &Message,
    recorded: &dyn Fn(&RequestId) -> Option<usize>,
    clients: &[ClientEntry],
) -> Value {
    match message {
        Message::Request(request) => normalized(&request.method, request.params.as_ref()),
        Message::Notification(note) => {
            let mut params = normalized(&note.method, note.params.as_ref());
            let named = params.get("requestId").cloned().and_then(|id| id_of(&id));
            if let Some(index) = named.and_then(|id| recorded(&id)) {
                // Compared by the request it stands for, whatever its id.
                params["requestId"] = json!(format!("request@{}", clients_line(clients, index)));
            }
            params
        }
        Message::Response(response) => match &response.result {
            Ok(result) => json!({ "result": result }),
            Err(error) => json!({ "error": {"code": error.code.0, "message": error.message} }),
        },
    }
}

fn clients_line(clients: &[ClientEntry], index: usize) -> usize {
    clients.get(index).map_or(0, |c| c.line)
}

/// A request's params as matching sees them (see "How requests are matched" on [`ReplayTransport`]).
fn normalized(method: &str, params: Option<&Value>) -> Value {
    if method == "initialize" || method == "server/discover" {
        return Value::Null;
    }
    let mut params = params.cloned().unwrap_or(Value::Null);
    if let Some(object) = params.as_object_mut() {
        if let Some(meta) = object.get_mut("_meta").and_then(Value::as_object_mut) {
            meta.remove("progressToken");
            meta.retain(|key, _| !key.starts_with("io.modelcontextprotocol/"));
        }
        let empty_meta = object
            .get("_meta")
            .is_some_and(|m| m.is_null() || m.as_object().is_some_and(|m| m.is_empty()));
        if empty_meta {
            object.remove("_meta");
        }
        if object.is_empty() {
            return Value::Null;
        }
    }
    params
}

/// One connection playing a session.
struct Player {
    name: String,
    script: Arc<Script>,
    state: Mutex<State>,
    /// To the thread that delivers; dropped on close.
    out: Mutex<Option<Sender<Out>>>,
    /// Disconnected when the delivering thread has ended.
    done: crossbeam_channel::Receiver<()>,
    ended: Arc<Ended>,
    /// For the end of the connection; dropped then, as it holds the client's queues.
    inbox: Mutex<Option<Inbox>>,
}

/// What the client did so far, as the recording sees it.
struct State {
    matched: Vec<bool>,
    emitted: Vec<bool>,
    /// The live request each matched recorded request stands for (the latest, if repeated).
    live: HashMap<usize, Live>,
    /// Client answers that differ from the recorded ones, and how.
    diverged: HashMap<usize, String>,
    /// The fresh ids of the server requests played, and the recorded ids they stand for.
    asked: HashMap<RequestId, RequestId>,
    next: u64,
}

/// A live request: its id and progress token.
struct Live {
    id: RequestId,
    token: Option<Value>,
}

/// Something for the delivering thread.
enum Out {
    Text(String),
    Closed(String),
}

/// Whether the client heard the end of the connection; shared with the delivering thread.
#[derive(Default)]
struct Ended {
    closed: Mutex<Option<Arc<Closed>>>,
}

impl Ended {
    /// Reports the end once.
    fn report(&self, inbox: &Inbox, reason: &str) {
        let closed = Closed {
            reason: reason.to_owned(),
            ..Closed::default()
        };
        {
            let mut slot = lock(&self.closed);
            if slot.is_some() {
                return;
            }
            *slot = Some(Arc::new(closed.clone()));
        }
        inbox.closed(closed);
    }
}

impl Player {
    fn start(name: &str, script: Arc<Script>, inbox: Inbox) -> Result<Player> {
        let (out, queue) = crossbeam_channel::bounded::<Out>(QUEUE);
        let (finished, done) = crossbeam_channel::bounded::<()>(0);
        let ended = Arc::new(Ended::default());
        let delivering = Arc::clone(&ended);
        let deliver_to = inbox.clone();
        std::thread::Builder::new()
            .name("umcp-replay".into())
            .spawn(move || {
                let _finished = finished;
                for out in queue.iter() {
                    match out {
                        Out::Text(text) => {
                            let _ = deliver_to.deliver_text(&text);
                        }
                        Out::Closed(reason) => delivering.report(&deliver_to, &reason),
                    }
                }
            })
            .map_err(Error::io)?;
        let player = Player {
            name: name.to_owned(),
            state: Mutex::new(State {
                matched: vec![false; script.clients.len()],
                emitted: vec![false; script.servers.len()],
                live: HashMap::new(),
                diverged: HashMap::new(),
                asked: HashMap::new(),
                next: 1,
            }),
            script,
            out: Mutex::new(Some(out)),
            done,
            ended,
            inbox: Mutex::new(Some(inbox)),
        };
        // What the server sent before the client said anything.
        let queued = player.pump(&mut lock(&player.state));
        player.queue(queued, Instant::now() + DRAIN_WAIT, "connect")?;
        Ok(player)
    }

    /// Everything that may be played now, in the recorded order, marked played.
    fn pump(&self, state: &mut State) -> Vec<Out> {
        let mut out = Vec::new();
        let mut blocked: HashSet<Option<usize>> = HashSet::new();
        for (index, entry) in self.script.servers.iter().enumerate() {
            if state.emitted[index] || blocked.contains(&entry.owner) {
                continue;
            }
            if entry.owner.is_some_and(|owner| !state.matched[owner]) {
                continue;
            }
            if !entry.waits.iter().all(|w| state.matched[*w]) {
                blocked.insert(entry.owner);
                continue;
            }
            state.emitted[index] = true;
            out.extend(self.rewritten(state, entry));
        }
        out
    }

    /// A recorded server message as the live client must get it.
    fn rewritten(&self, state: &mut State, entry: &ServerEntry) -> Option<Out> {
        let message = match &entry.what {
            Played::Closed(reason) => return Some(Out::Closed(reason.clone())),
            Played::Message(message) => message.clone(),
        };
        let live = entry.owner.and_then(|o| state.live.get(&o));
        let live_id = live.map(|l| l.id.to_value());
        let message = match message {
            Message::Response(mut response) => {
                let Some(live) = live else {
                    // An answer to a request the client never sent in this form.
                    return None;
                };
                response.id = Some(live.id.clone());
                let diverged: Vec<&String> = entry
                    .waits
                    .iter()
                    .filter_map(|w| state.diverged.get(w))
                    .collect();
                if let Some(how) = diverged.first() {
                    let why = format!(
                        "the client's answer differs from the recording, so the recorded \
                         result does not apply: {how}"
                    );
                    response.result = Err(ErrorObject::new(NOT_RECORDED, why));
                } else if let (Ok(result), Some(id)) = (&mut response.result, &live_id) {
                    retag(result, id);
                }
                Message::Response(response)
            }
            Message::Notification(mut note) => {
                if let Some(params) = note.params.as_mut() {
                    if params.get("progressToken").is_some() {
                        if let Some(token) = live.and_then(|l| l.token.clone()) {
                            params["progressToken"] = token;
                        }
                    }
                    if let Some(id) = &live_id {
                        retag(params, id);
                        if note.method == "notifications/cancelled" {
                            params["requestId"] = id.clone();
                        }
                    }
                }
                Message::Notification(note)
            }
            Message::Request(mut request) => {
                let fresh = RequestId::from(format!("replay-{}", state.next));
                state.next += 1;
                state
                    .asked
                    .insert(fresh.clone(), std::mem::replace(&mut request.id, fresh));
                Message::Request(request)
            }
        };
        Some(Out::Text(message.encode()))
    }

    /// Matches one live message and says what to play in answer; an error when the recorded
    /// message failed to go out.
    fn play(&self, message: &Message) -> Result<Vec<Out>> {
        let mut state = lock(&self.state);
        match message {
            Message::Request(request) => self.play_request(&mut state, message, request),
            Message::Notification(note) => self.play_notification(&mut state, message, note),
            Message::Response(_) => Ok(self.play_response(&mut state, message)),
        }
    }

    /// A live request: the first recorded one it matches that is not used yet, or else the
    /// last it matches played again, or else the error naming the closest.
    fn play_request(
        &self,
        state: &mut State,
        message: &Message,
        request: &Request,
    ) -> Result<Vec<Out>> {
        let clients = &self.script.clients;
        let live = compared(message, &|_| None, clients);
        let candidates: Vec<usize> = (0..clients.len())
            .filter(|i| {
                matches!(&clients[*i].message, Message::Request(r) if r.method == request.method)
                    && matches(&clients[*i].compared, &live)
            })
            .collect();
        let fresh = candidates.iter().find(|i| !state.matched[**i]).copied();
        let chosen = fresh.or(candidates.last().copied());
        if let Some(refused) = chosen.and_then(|i| clients[i].refused.as_ref()) {
            if let Some(index) = fresh {
                state.matched[index] = true;
            }
            return Err(refusal(refused));
        }
        let token = request
            .params
            .as_ref()
            .and_then(|p| p.pointer("/_meta/progressToken"))
            .cloned();
        let id = request.id.clone();
        Ok(match (fresh, chosen) {
            (Some(index), _) => {
                state.matched[index] = true;
                state.live.insert(index, Live { id, token });
                self.pump(state)
            }
            (None, Some(index)) => {
                log::debug!("{}: `{}` played again", self.name, request.method);
                state.live.insert(index, Live { id, token });
                self.replayed(state, index)
            }
            (None, None) => {
                let error = self.not_recorded(&request.method, &live);
                let response = Response::err(request.id.clone(), error);
                vec![Out::Text(Message::from(response).encode())]
            }
        })
    }

    /// A live notification: the first recorded one it matches that is not used yet, or
    /// nothing.
    fn play_notification(
        &self,
        state: &mut State,
        message: &Message,
        note: &Notification,
    ) -> Result<Vec<Out>> {
        let clients = &self.script.clients;
        let recorded_index = |id: &RequestId| {
            let live = state.live.iter().find(|(_, l)| l.id == *id);
            live.map(|(index, _)| *index)
        };
        let live = compared(message, &recorded_index, clients);
        let found = (0..clients.len()).find(|i| {
            !state.matched[*i]
                && matches!(&clients[*i].message,
                    Message::Notification(n) if n.method == note.method)
                && matches(&clients[*i].compared, &live)
        });
        let Some(index) = found else {
            log::debug!("{}: `{}` is not in the recording", self.name, note.method);
            return Ok(Vec::new());
        };
        state.matched[index] = true;
        if let Some(refused) = &clients[index].refused {
            return Err(refusal(refused));
        }
        Ok(self.pump(state))
    }

    /// A live answer to a server request: compared with the recorded one, whose differences
    /// turn the results that depended on it into errors.
    fn play_response(&self, state: &mut State, message: &Message) -> Vec<Out> {
        let clients = &self.script.clients;
        let Message::Response(response) = message else {
            return Vec::new();
        };
        let recorded = response.id.as_ref().and_then(|id| state.asked.remove(id));
        let found = recorded.and_then(|recorded| {
            (0..clients.len()).find(|i| {
                matches!(&clients[*i].message,
                    Message::Response(r) if r.id.as_ref() == Some(&recorded))
            })
        });
        let Some(index) = found else {
            return Vec::new();
        };
        let live = compared(message, &|_| None, clients);
        let mut differences = Vec::new();
        differ(&clients[index].compared, &live, "", &mut differences);
        if !differences.is_empty() {
            let how = differences.join("; ");
            log::debug!("{}: the client answered differently: {how}", self.name);
            state.diverged.insert(index, how);
        }
        state.matched[index] = true;
        self.pump(state)
    }

    /// A recorded request used up, played again: everything it owned, under its new ids.
    fn replayed(&self, state: &mut State, index: usize) -> Vec<Out> {
        let script = Arc::clone(&self.script);
        let owned = script.servers.iter().filter(|s| s.owner == Some(index));
        owned
            .filter(|s| matches!(s.what, Played::Message(_)))
            .filter_map(|s| self.rewritten(state, s))
            .collect()
    }

    /// The error for a request the recording lacks, naming the closest recorded one.
    fn not_recorded(&self, method: &str, live: &Value) -> ErrorObject {
        let scored = self.script.clients.iter().filter_map(|c| match &c.message {
            Message::Request(r) => {
                let mut differences = Vec::new();
                differ(&c.compared, live, "", &mut differences);
                let score = match r.method == method {
                    true => differences.len(),
                    false => 1000 + edit_distance(&r.method, method),
                };
                Some((score, c, r, differences))
            }
            _ => None,
        });
        let closest = scored.min_by_key(|(score, c, ..)| (*score, c.line));
        let Some((_, entry, request, differences)) = closest else {
            let why = format!("`{method}` is not in the recording, which holds no request");
            return ErrorObject::new(NOT_RECORDED, why);
        };
        let mut why = format!(
            "`{method}` is not in the recording: the closest recorded request, line {}, is `{}` {}",
            entry.line,
            request.method,
            clip_json(&entry.compared),
        );
        if request.method == method && !differences.is_empty() {
            why.push_str(&format!(", which differs at {}", differences.join("; ")));
        }
        ErrorObject::new(NOT_RECORDED, why).with_data(json!({
            "closest": {
                "line": entry.line,
                "method": request.method,
                "params": entry.compared,
            },
        }))
    }

    /// Hands `out` to the delivering thread by `deadline`.
    fn queue(&self, out: Vec<Out>, deadline: Instant, method: &str) -> Result<()> {
        if out.is_empty() {
            return Ok(());
        }
        let Some(sender) = lock(&self.out).clone() else {
            return Err(self.closed_error());
        };
        let start = Instant::now();
        for item in out {
            match sender.send_deadline(item, deadline) {
                Ok(()) => {}
                Err(SendTimeoutError::Timeout(_)) => {
                    return Err(Error::Timeout {
                        method: method.to_owned(),
                        elapsed: start.elapsed(),
                        kind: TimeoutKind::Write,
                        stderr_tail: None,
                    })
                }
                Err(SendTimeoutError::Disconnected(_)) => return Err(self.closed_error()),
            }
        }
        Ok(())
    }

    fn closed_error(&self) -> Error {
        let closed = lock(&self.ended.closed).clone().unwrap_or_else(|| {
            Arc::new(Closed {
                reason: CLOSED_BY_CLIENT.into(),
                ..Closed::default()
            })
        });
        Error::Closed(closed)
    }
}

impl Transport for Player {
    fn send(&self, message: &Message, deadline: Instant) -> Result<()> {
        if lock(&self.ended.closed).is_some() {
            return Err(self.closed_error());
        }
        let method = match message {
            Message::Request(r) => r.method.as_str(),
            Message::Notification(n) => n.method.as_str(),
            Message::Response(_) => "response",
        };
        log::trace!("{}: > {}", self.name, message.encode());
        let out = self.play(message)?;
        self.queue(out, deadline, method)
    }

    fn send_waits_for_peer(&self) -> bool {
        // Playing only queues what answers, as a pipe does.
        false
    }

    fn close(&self) {
        let Some(sender) = lock(&self.out).take() else {
            return;
        };
        drop(sender);
        // What is on its way is delivered first, within a bound.
        let _ = self.done.recv_timeout(DRAIN_WAIT);
        if let Some(inbox) = lock(&self.inbox).take() {
            self.ended.report(&inbox, CLOSED_BY_CLIENT);
        }
    }

    fn kind(&self) -> &'static str {
        "replay"
    }
}

/// The error a recorded `not_sent` entry stands for.
fn refusal(refused: &Value) -> Error {
    let text = |key: &str| refused.get(key).and_then(Value::as_str).unwrap_or_default();
    let http = || {
        Box::new(HttpError {
            status: refused["status"]
                .as_u64()
                .and_then(|s| u16::try_from(s).ok())
                .unwrap_or(0),
            url: text("url").to_owned(),
            body: text("body").to_owned(),
            ..HttpError::default()
        })
    };
    match text("kind") {
        "http" => Error::Http(http()),
        "unauthorized" => Error::Unauthorized(http()),
        "forbidden" => Error::Forbidden(http()),
        "session_expired" => Error::SessionExpired,
        _ => Error::Protocol(format!("not sent when recorded: {}", text("error"))),
    }
}

/// Rewrites the subscription id a stateless-era message carries in its `_meta` to `id`.
fn retag(value: &mut Value, id: &Value) {
    if let Some(tag) = value.pointer_mut(SUBSCRIPTION_POINTER) {
        *tag = id.clone();
    } else if let Some(meta) = value.get_mut("_meta").and_then(Value::as_object_mut) {
        if meta.contains_key(META_SUBSCRIPTION_ID) {
            meta.insert(META_SUBSCRIPTION_ID.into(), id.clone());
        }
    }
}

/// Whether a live value matches a recorded one (see "How requests are matched" on [`ReplayTransport`]).
fn matches(recorded: &Value, live: &Value) -> bool {
    match (recorded, live) {
        (Value::String(r), Value::String(l)) => r == l || glob(r, l),
        (Value::Number(r), Value::Number(l)) => r == l || r.as_f64() == l.as_f64(),
        (Value::Array(r), Value::Array(l)) => {
            r.len() == l.len() && r.iter().zip(l).all(|(r, l)| matches(r, l))
        }
        (Value::Object(r), Value::Object(l)) => {
            r.len() == l.len()
                && r.iter()
                    .all(|(key, r)| l.get(key).is_some_and(|l| matches(r, l)))
        }
        _ => recorded == live,
    }
}

/// Whether `text` is `pattern` with each `<redacted>` standing for any text.
fn glob(pattern: &str, text: &str) -> bool {
    if !pattern.contains(REDACTED) {
        return false;
    }
    let mut parts = pattern.split(REDACTED);
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    for (i, part) in parts.iter().enumerate() {
        if i + 1 == parts.len() {
            return rest.ends_with(part);
        }
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

/// Where a live value differs from a recorded one, one line each (at most 8).
fn differ(recorded: &Value, live: &Value, path: &str, out: &mut Vec<String>) {
    if out.len() >= 8 || matches(recorded, live) {
        return;
    }
    match (recorded, live) {
        (Value::Object(r), Value::Object(l)) => {
            let keys: std::collections::BTreeSet<&String> = r.keys().chain(l.keys()).collect();
            for key in keys {
                let at = format!("{path}/{key}");
                match (r.get(key), l.get(key)) {
                    (Some(r), Some(l)) => differ(r, l, &at, out),
                    (Some(r), None) => {
                        out.push(format!("{at}: recorded {}, sent nothing", clip_json(r)))
                    }
                    (None, Some(l)) => {
                        out.push(format!("{at}: not recorded, sent {}", clip_json(l)))
                    }
                    (None, None) => {}
                }
            }
        }
        (Value::Array(r), Value::Array(l)) if r.len() == l.len() => {
            for (i, (r, l)) in r.iter().zip(l).enumerate() {
                differ(r, l, &format!("{path}/{i}"), out);
            }
        }
        _ => {
            let at = if path.is_empty() { "/" } else { path };
            out.push(format!(
                "{at}: recorded {}, sent {}",
                clip_json(recorded),
                clip_json(live)
            ));
        }
    }
}

/// A value as compact JSON, cut to what an error quotes.
fn clip_json(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(QUOTE_CHARS) {
        Some(_) => clip(&text).to_string(),
        None => text,
    }
}

/// The Levenshtein distance of two method names, for the closest one.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous + usize::from(ca != *cb);
            previous = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(previous + 1);
        }
    }
    row[b.len()]
}

/// A request id from the JSON a message carries.
fn id_of(value: &Value) -> Option<RequestId> {
    match value {
        Value::String(s) => Some(RequestId::from(s.as_str())),
        Value::Number(n) => n
            .as_i64()
            .map(RequestId::from)
            .or_else(|| n.as_u64().map(RequestId::from)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn volatile_parts_are_left_out_and_redacted_values_match_anything() {
        let recorded = normalized(
            "tools/call",
            Some(
                &json!({"name": "login", "arguments": {"key": "<redacted>", "n": 2},
                "_meta": {"progressToken": 7, "io.modelcontextprotocol/protocolVersion": "x"}}),
            ),
        );
        assert_eq!(
            recorded,
            json!({"name": "login", "arguments": {"key": "<redacted>", "n": 2}})
        );
        let live = normalized(
            "tools/call",
            Some(
                &json!({"name": "login", "arguments": {"key": "sk-live", "n": 2.0},
                "_meta": {"progressToken": "other"}}),
            ),
        );
        assert!(matches(&recorded, &live));
        let changed = json!({"name": "login", "arguments": {"key": "k", "n": 3}});
        assert!(!matches(&recorded, &changed));
        let mut differences = Vec::new();
        differ(&recorded, &changed, "", &mut differences);
        assert_eq!(differences, ["/arguments/n: recorded 2, sent 3"]);
        assert_eq!(
            normalized("initialize", Some(&json!({"a": 1}))),
            Value::Null
        );
        assert_eq!(normalized("ping", Some(&json!({"_meta": {}}))), Value::Null);
        assert!(glob("Bearer <redacted> ok", "Bearer abc ok"));
        assert!(!glob("Bearer <redacted> ok", "Basic abc ok"));
        assert_eq!(edit_distance("tools/call", "tools/list"), 4);
    }

    #[test]
    fn a_malformed_recording_is_refused_naming_its_line() {
        let bad = ReplayTransport::parse("f", "{\"recording\":\"umcp\"}\nnot json").unwrap_err();
        assert!(bad.to_string().contains("f, line 2"), "{bad}");
        let orphan = ReplayTransport::parse("f", r#"{"from":"client"}"#).unwrap_err();
        assert!(
            orphan.to_string().contains("before any session"),
            "{orphan}"
        );
        assert!(ReplayTransport::parse("f", "").is_err());
    }
}
