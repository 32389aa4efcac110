//! One client's connection to a fake server: the thread that reads what the client sends,
//! the built-in methods of both eras, the handler threads, and the waits of a handler for
//! the client (server requests, input rounds).

use std::collections::{HashMap, HashSet};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender};
use serde::Serialize;
use serde_json::{json, Map, Value};

use super::context::{Call, Context, MULTI_ROUND};
use super::MemoryEnd;
use super::{lock, Definition, Fault, Shared, MAX_HANDLERS};
use crate::client::Era;
use crate::error::{Closed, Error, Result, TimeoutKind};
use crate::jsonrpc::{ErrorCode, ErrorObject, Message, Notification, Request, RequestId, Response};
use crate::types::{
    is_modern_protocol_version, is_supported_protocol_version, CompleteRequestParams,
    LATEST_PROTOCOL_VERSION, META_PROTOCOL_VERSION, META_SERVER_INFO, META_SUBSCRIPTION_ID,
    MODERN_PROTOCOL_VERSIONS, SUBSCRIPTIONS_ACKNOWLEDGED,
};

/// The outcome of a request: its `result` or its `error`.
type Reply = std::result::Result<Value, ErrorObject>;

/// A handler waiting for the retry of its input round, and where its answers go.
type Parked = (Arc<Call>, Sender<Value>);

/// One open connection.
pub(super) struct Connection {
    definition: Arc<Definition>,
    shared: Arc<Shared>,
    end: MemoryEnd,
    /// The era the client chose: `initialize`, or the first stateless request.
    era: Mutex<Option<Era>>,
    /// Numbers the server's own request ids and input-round states.
    next: AtomicU64,
    /// The handshake era's server requests waiting for the client's answer.
    replies: Mutex<HashMap<RequestId, Sender<Response>>>,
    /// The stateless era's handlers waiting for a retry, by the `requestState` they sent.
    parked: Mutex<HashMap<String, Parked>>,
    /// The requests a handler serves, for `notifications/cancelled`.
    running: Mutex<HashMap<RequestId, Arc<Call>>>,
    handlers: AtomicUsize,
    /// The stateless era's subscriptions: the listen request and what it was granted.
    listens: Mutex<Vec<(RequestId, Value)>>,
    /// The URIs the handshake era's client subscribed to.
    subscribed: Mutex<HashSet<String>>,
    /// Dropped when the connection ends, which wakes every handler waiting.
    open: Mutex<Option<Sender<()>>>,
    ended: Receiver<()>,
}

impl Connection {
    /// Serves a new connection on a thread of its own; a connection whose thread cannot
    /// start is closed at once.
    pub(super) fn start(definition: Arc<Definition>, shared: Arc<Shared>, end: MemoryEnd) {
        let (open, ended) = crossbeam_channel::bounded(0);
        let connection = Arc::new(Connection {
            definition,
            shared: Arc::clone(&shared),
            end: end.clone(),
            era: Mutex::new(None),
            next: AtomicU64::new(1),
            replies: Mutex::default(),
            parked: Mutex::default(),
            running: Mutex::default(),
            handlers: AtomicUsize::new(0),
            listens: Mutex::default(),
            subscribed: Mutex::default(),
            open: Mutex::new(Some(open)),
            ended,
        });
        lock(&shared.connections).push(Arc::downgrade(&connection));
        let started = std::thread::Builder::new()
            .name("umcp-fake-server".into())
            .spawn(move || connection.serve());
        if let Err(e) = started {
            end.close(&format!("the fake server could not start a thread: {e}"));
        }
    }

    /// Receives every message until the client closes the connection.
    fn serve(self: Arc<Self>) {
        while let Some(message) = self.end.recv() {
            self.shared.record(&message);
            match message {
                Message::Request(request) => self.on_request(request),
                Message::Response(response) => {
                    let waiting = response
                        .id
                        .as_ref()
                        .and_then(|id| lock(&self.replies).remove(id));
                    if let Some(waiting) = waiting {
                        let _ = waiting.try_send(response);
                    }
                }
                Message::Notification(note) => self.on_notification(&note),
            }
        }
        log::debug!("fake server {}: connection ended", self.definition.key);
        lock(&self.open).take();
    }

    /// Disconnected once the connection is over.
    pub(super) fn closed(&self) -> &Receiver<()> {
        &self.ended
    }

    /// Ends the connection from the server's side.
    pub(super) fn hang_up(&self, reason: &str) {
        self.end.close(reason);
    }

    fn on_notification(&self, note: &Notification) {
        if note.method != "notifications/cancelled" {
            return;
        }
        let params = note.params.clone().unwrap_or_default();
        let Some(id) = params.get("requestId").cloned().and_then(read_id) else {
            return;
        };
        if let Some(call) = lock(&self.running).get(&id) {
            call.cancel();
        }
        // On stdio the stateless era ends a subscription this way.
        lock(&self.listens).retain(|(listen, _)| *listen != id);
    }

    fn on_request(self: &Arc<Self>, request: Request) {
        let params = request.params.clone().unwrap_or_else(|| json!({}));
        let modern = match self.era_of(&request.method, &params) {
            Ok(modern) => modern,
            Err(refusal) => return self.answer(&request.id, Err(refusal), false),
        };
        if modern {
            *lock(&self.era) = Some(Era::Modern);
        }
        // A retry carrying the answers of an input round goes to the handler that asked.
        let state = params.get("requestState").and_then(Value::as_str);
        if let (true, Some(state)) = (modern, state) {
            if MULTI_ROUND.contains(&request.method.as_str()) {
                return self.resume(request.id.clone(), state.to_owned(), params.clone());
            }
        }
        let mut delay = None;
        match self.shared.fault(&self.definition, &request.method) {
            Some(Fault::Error(error)) => return self.answer(&request.id, Err(error), false),
            Some(Fault::Result(result)) => return self.answer(&request.id, Ok(result), false),
            Some(Fault::Silence) => return,
            Some(Fault::Disconnect) => return self.hang_up("the server hung up"),
            Some(Fault::Delay(wait)) => delay = Some(wait),
            None => {}
        }
        if delay.is_none() {
            if let Some(reply) = self.built_in(&request, &params, modern) {
                return self.answer(&request.id, reply, modern);
            }
            if request.method == "subscriptions/listen" {
                return self.listen(&request.id, &params);
            }
        }
        self.spawn_handler(request, params, modern, delay);
    }

    /// Whether a request speaks the stateless era, or why the server refuses it.
    fn era_of(&self, method: &str, params: &Value) -> std::result::Result<bool, ErrorObject> {
        let version = params
            .get("_meta")
            .and_then(|meta| meta.get(META_PROTOCOL_VERSION))
            .and_then(Value::as_str);
        let speaks = self.definition.era;
        if speaks == Some(Era::Legacy) {
            return Ok(false);
        }
        if let Some(version) = version {
            if !is_modern_protocol_version(version) {
                return Err(unsupported_version(version));
            }
            return Ok(true);
        }
        if speaks != Some(Era::Modern) {
            return Ok(false);
        }
        if method == "initialize" {
            let requested = params.get("protocolVersion").and_then(Value::as_str);
            return Err(unsupported_version(requested.unwrap_or_default()));
        }
        Err(ErrorObject::new(
            ErrorCode::INVALID_PARAMS,
            format!("_meta needs {META_PROTOCOL_VERSION}"),
        ))
    }

    /// The answer of the methods the server itself implements; `None` for those a handler
    /// answers (or a listen, which is answered when it ends).
    fn built_in(&self, request: &Request, params: &Value, modern: bool) -> Option<Reply> {
        let removed = || {
            let text = format!("`{}` does not exist in the stateless era", request.method);
            Err(ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, text))
        };
        let d = &self.definition;
        Some(match request.method.as_str() {
            "initialize" => {
                *lock(&self.era) = Some(Era::Legacy);
                Ok(self.initialize(params))
            }
            "server/discover" if d.era == Some(Era::Legacy) => Err(not_found(&request.method)),
            "server/discover" => Ok(self.discover()),
            "ping" | "logging/setLevel" if modern => removed(),
            "ping" | "logging/setLevel" => Ok(json!({})),
            "resources/subscribe" | "resources/unsubscribe" if modern => removed(),
            "resources/subscribe" | "resources/unsubscribe" => {
                let uri = params
                    .get("uri")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let mut subscribed = lock(&self.subscribed);
                if request.method == "resources/subscribe" {
                    subscribed.insert(uri.to_owned());
                } else {
                    subscribed.remove(uri);
                }
                Ok(json!({}))
            }
            "subscriptions/listen" if modern => return None,
            "tools/list" => self.page("tools", d.tools.iter().map(|(t, _)| t), params),
            "resources/list" => self.page("resources", d.resources.iter().map(|(r, _)| r), params),
            "resources/templates/list" => Ok(json!({"resourceTemplates": []})),
            "prompts/list" => self.page("prompts", d.prompts.iter().map(|(p, _)| p), params),
            "tools/call" | "resources/read" | "prompts/get" | "completion/complete" => return None,
            other => Err(not_found(other)),
        })
    }

    fn initialize(&self, params: &Value) -> Value {
        let requested = params.get("protocolVersion").and_then(Value::as_str);
        let version = requested
            .filter(|v| is_supported_protocol_version(v))
            .unwrap_or(LATEST_PROTOCOL_VERSION);
        let mut result = json!({
            "protocolVersion": version,
            "capabilities": self.capabilities(Era::Legacy),
            "serverInfo": self.definition.info,
        });
        if let Some(instructions) = &self.definition.instructions {
            result["instructions"] = json!(instructions);
        }
        result
    }

    fn discover(&self) -> Value {
        let mut result = json!({
            "supportedVersions": MODERN_PROTOCOL_VERSIONS,
            "capabilities": self.capabilities(Era::Modern),
        });
        if let Some(instructions) = &self.definition.instructions {
            result["instructions"] = json!(instructions);
        }
        result
    }

    fn capabilities(&self, era: Era) -> Value {
        let d = &self.definition;
        let mut capabilities = json!({});
        if !d.tools.is_empty() {
            capabilities["tools"] = json!({"listChanged": true});
        }
        if !d.resources.is_empty() {
            capabilities["resources"] = json!({"subscribe": true, "listChanged": true});
        }
        if !d.prompts.is_empty() {
            capabilities["prompts"] = json!({"listChanged": true});
        }
        if d.completion.is_some() {
            capabilities["completions"] = json!({});
        }
        if era == Era::Legacy {
            capabilities["logging"] = json!({});
        }
        capabilities
    }

    /// One page of a list, from the request's `cursor` (the index of its first item).
    fn page<'a, T: Serialize + 'a>(
        &self,
        key: &str,
        items: impl Iterator<Item = &'a T>,
        params: &Value,
    ) -> Reply {
        let items: Vec<Value> = items.filter_map(|i| serde_json::to_value(i).ok()).collect();
        let start = match params.get("cursor").and_then(Value::as_str) {
            None => 0,
            Some(cursor) => cursor
                .parse::<usize>()
                .ok()
                .filter(|s| *s <= items.len())
                .ok_or_else(|| {
                    ErrorObject::new(ErrorCode::INVALID_PARAMS, format!("bad cursor {cursor:?}"))
                })?,
        };
        let size = self.definition.page_size.unwrap_or(usize::MAX);
        let end = start.saturating_add(size).min(items.len());
        let mut result = json!({ key: items[start..end] });
        if end < items.len() {
            result["nextCursor"] = json!(end.to_string());
        }
        Ok(result)
    }

    /// Opens a stateless-era subscription: grants what was asked (resources the server has)
    /// and acknowledges; the listen request is never answered while the connection lasts.
    fn listen(&self, id: &RequestId, params: &Value) {
        let asked = &params["notifications"];
        let mut granted = json!({});
        for key in [
            "toolsListChanged",
            "promptsListChanged",
            "resourcesListChanged",
        ] {
            if asked[key] == json!(true) {
                granted[key] = json!(true);
            }
        }
        let known = |uri: &&Value| {
            let resources = &self.definition.resources;
            resources.iter().any(|(r, _)| uri.as_str() == Some(&r.uri))
        };
        let uris: Vec<Value> = asked["resourceSubscriptions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(known)
            .cloned()
            .collect();
        if !uris.is_empty() {
            granted["resourceSubscriptions"] = Value::Array(uris);
        }
        lock(&self.listens).push((id.clone(), granted.clone()));
        let params = json!({
            "_meta": { META_SUBSCRIPTION_ID: id.to_value() },
            "notifications": granted,
        });
        self.send_notification(SUBSCRIPTIONS_ACKNOWLEDGED, Some(params));
    }

    /// Sends a notification as a server's list or resource change: see
    /// [`FakeServer::notify`](super::FakeServer::notify).
    pub(super) fn broadcast(&self, method: &str, params: Option<Value>) {
        let key = match method {
            "notifications/tools/list_changed" => "toolsListChanged",
            "notifications/prompts/list_changed" => "promptsListChanged",
            "notifications/resources/list_changed" => "resourcesListChanged",
            "notifications/resources/updated" => "resourceSubscriptions",
            _ => {
                self.send_notification(method, params);
                return;
            }
        };
        let uri = params
            .as_ref()
            .and_then(|p| p.get("uri"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        if *lock(&self.era) != Some(Era::Modern) {
            let wanted = match &uri {
                Some(uri) if key == "resourceSubscriptions" => lock(&self.subscribed).contains(uri),
                _ => true,
            };
            if wanted {
                self.send_notification(method, params);
            }
            return;
        }
        let listens = lock(&self.listens).clone();
        for (id, granted) in listens {
            let wanted = match &uri {
                Some(uri) if key == "resourceSubscriptions" => granted[key]
                    .as_array()
                    .is_some_and(|uris| uris.iter().any(|u| u.as_str() == Some(uri))),
                _ => granted[key] == json!(true),
            };
            if !wanted {
                continue;
            }
            let mut tagged = match params.clone() {
                Some(Value::Object(map)) => map,
                _ => Map::new(),
            };
            let meta = tagged.entry("_meta").or_insert_with(|| json!({}));
            if let Value::Object(meta) = meta {
                meta.insert(META_SUBSCRIPTION_ID.into(), id.to_value());
            }
            self.send_notification(method, Some(Value::Object(tagged)));
        }
    }

    pub(super) fn send_notification(&self, method: &str, params: Option<Value>) -> bool {
        self.end.send(&Notification::new(method, params).into())
    }

    /// Answers request `id`, marked as a stateless result when `modern`.
    fn answer(&self, id: &RequestId, reply: Reply, modern: bool) {
        let reply = reply.map(|result| match modern {
            true => self.stamped(result),
            false => result,
        });
        let response = Response {
            id: Some(id.clone()),
            result: reply,
        };
        self.end.send(&response.into());
    }

    /// A stateless result: `resultType` (unless it has one) and the server's identity.
    fn stamped(&self, mut result: Value) -> Value {
        if let Value::Object(object) = &mut result {
            object
                .entry("resultType")
                .or_insert_with(|| json!("complete"));
            let meta = object.entry("_meta").or_insert_with(|| json!({}));
            if let Value::Object(meta) = meta {
                let info = serde_json::to_value(&self.definition.info).unwrap_or_default();
                meta.insert(META_SERVER_INFO.into(), info);
            }
        }
        result
    }

    /// Runs a request on a handler thread, after `delay`; refused when too many run.
    fn spawn_handler(
        self: &Arc<Self>,
        request: Request,
        params: Value,
        modern: bool,
        delay: Option<Duration>,
    ) {
        if self.handlers.fetch_add(1, Ordering::SeqCst) >= MAX_HANDLERS {
            self.handlers.fetch_sub(1, Ordering::SeqCst);
            let busy = format!("the fake server runs at most {MAX_HANDLERS} handlers at once");
            let error = ErrorObject::new(ErrorCode::INTERNAL_ERROR, busy);
            return self.answer(&request.id, Err(error), modern);
        }
        let call = Call::new(request.id.clone(), params.clone());
        lock(&self.running).insert(request.id.clone(), Arc::clone(&call));
        let era = if modern { Era::Modern } else { Era::Legacy };
        let context = Context::new(Arc::clone(self), Arc::clone(&call), &request.method, era);
        let connection = Arc::clone(self);
        let id = request.id.clone();
        let run = move || {
            let _count = Running(&connection.handlers);
            let go = delay.is_none_or(|wait| context.sleep(wait));
            let reply = match go {
                true => match connection.built_in(&request, &params, modern) {
                    Some(reply) => Some(reply),
                    None if request.method == "subscriptions/listen" => {
                        connection.listen(&request.id, &params);
                        None
                    }
                    None => Some(connection.run(&context, &request.method, params)),
                },
                false => None,
            };
            let id = call.id();
            lock(&connection.running).remove(&id);
            // A cancelled request gets no answer.
            if let (Some(reply), false) = (reply, call.is_cancelled()) {
                connection.answer(&id, reply, modern);
            }
        };
        let started = std::thread::Builder::new()
            .name("umcp-fake-handler".into())
            .spawn(run);
        if let Err(e) = started {
            lock(&self.running).remove(&id);
            self.handlers.fetch_sub(1, Ordering::SeqCst);
            let why = format!("the fake server could not start a handler: {e}");
            self.answer(
                &id,
                Err(ErrorObject::new(ErrorCode::INTERNAL_ERROR, why)),
                modern,
            );
        }
    }

    /// Runs the user's handler for a request; a panic is answered as an internal error.
    fn run(&self, context: &Context, method: &str, params: Value) -> Reply {
        let d = &self.definition;
        let name = params
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let invalid = |what: String| {
            Err(Error::Rpc(ErrorObject::new(
                ErrorCode::INVALID_PARAMS,
                what,
            )))
        };
        let outcome = catch_unwind(AssertUnwindSafe(|| match method {
            "tools/call" => match d.tools.iter().find(|(t, _)| t.name == name) {
                Some((_, handler)) => {
                    let arguments = params.get("arguments").cloned();
                    let arguments = arguments
                        .filter(|a| !a.is_null())
                        .unwrap_or_else(|| json!({}));
                    handler(context, arguments).and_then(to_value)
                }
                None => invalid(format!("unknown tool `{name}`")),
            },
            "prompts/get" => match d.prompts.iter().find(|(p, _)| p.name == name) {
                Some((_, handler)) => {
                    let arguments = params.get("arguments").and_then(Value::as_object);
                    handler(context, arguments.cloned().unwrap_or_default()).and_then(to_value)
                }
                None => invalid(format!("unknown prompt `{name}`")),
            },
            "resources/read" => {
                let uri = params
                    .get("uri")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                match d.resources.iter().find(|(r, _)| r.uri == uri) {
                    Some((_, handler)) => handler(context, uri).and_then(to_value),
                    None => {
                        // -32002 before the stateless era, -32602 in it.
                        let code = match context.era() {
                            Era::Legacy => ErrorCode::RESOURCE_NOT_FOUND,
                            Era::Modern => ErrorCode::INVALID_PARAMS,
                        };
                        let error = ErrorObject::new(code, format!("no resource `{uri}`"))
                            .with_data(json!({"uri": uri}));
                        Err(Error::Rpc(error))
                    }
                }
            }
            "completion/complete" => match &d.completion {
                Some(handler) => serde_json::from_value::<CompleteRequestParams>(params.clone())
                    .map_err(|e| {
                        Error::Rpc(ErrorObject::new(ErrorCode::INVALID_PARAMS, e.to_string()))
                    })
                    .and_then(|asked| handler(context, asked))
                    .and_then(to_value),
                None => Err(Error::Rpc(not_found(method))),
            },
            other => Err(Error::Rpc(not_found(other))),
        }));
        match outcome {
            Ok(Ok(result)) => Ok(result),
            Ok(Err(Error::Rpc(error))) => Err(error),
            Ok(Err(other)) => Err(ErrorObject::new(
                ErrorCode::INTERNAL_ERROR,
                other.to_string(),
            )),
            Err(_) => Err(ErrorObject::new(
                ErrorCode::INTERNAL_ERROR,
                format!("the `{method}` handler panicked"),
            )),
        }
    }

    /// A handshake-era request to the client: sent, and its answer waited for.
    pub(super) fn ask(&self, call: &Call, method: &str, params: Value) -> Result<Value> {
        let number = self.next.fetch_add(1, Ordering::Relaxed);
        let id = RequestId::from(format!("fake-{number}"));
        let (tx, rx) = crossbeam_channel::bounded(1);
        lock(&self.replies).insert(id.clone(), tx);
        if !self
            .end
            .send(&Request::new(id.clone(), method, Some(params)).into())
        {
            lock(&self.replies).remove(&id);
            return Err(self.closed_error());
        }
        let timeout = self.definition.input_timeout;
        let outcome = crossbeam_channel::select! {
            recv(rx) -> response => match response {
                Ok(response) => return response.result.map_err(Error::Rpc),
                Err(_) => Err(self.closed_error()),
            },
            recv(self.ended) -> _ => Err(self.closed_error()),
            recv(call.cancelled) -> _ => Err(Error::Cancelled { method: method.to_owned() }),
            default(timeout) => Err(timeout_error(method, timeout)),
        };
        if lock(&self.replies).remove(&id).is_some() {
            // Nobody waits for the answer any more: the client may stop working on it.
            let params = json!({"requestId": id.to_value(), "reason": "no longer needed"});
            self.send_notification("notifications/cancelled", Some(params));
        }
        outcome
    }

    /// A stateless-era input round: the request served is answered `input_required`, and the
    /// handler waits for the client's retry with the answer.
    pub(super) fn input_round(
        &self,
        call: &Arc<Call>,
        method: &str,
        params: Value,
    ) -> Result<Value> {
        let key = call.input_key();
        let number = self.next.fetch_add(1, Ordering::Relaxed);
        let state = format!("fake-state-{number}");
        let (tx, rx) = crossbeam_channel::bounded(1);
        // Parked before the client hears of it, so that its retry always finds the handler.
        lock(&self.parked).insert(state.clone(), (Arc::clone(call), tx));
        let id = call.id();
        lock(&self.running).remove(&id);
        let asked = json!({
            "resultType": "input_required",
            "inputRequests": { key.as_str(): {"method": method, "params": params} },
            "requestState": state,
        });
        self.answer(&id, Ok(asked), true);
        let timeout = self.definition.input_timeout;
        let responses = crossbeam_channel::select! {
            recv(rx) -> responses => responses.map_err(|_| self.closed_error()),
            recv(self.ended) -> _ => Err(self.closed_error()),
            default(timeout) => {
                lock(&self.parked).remove(&state);
                // A retry that came as the wait ended still counts.
                rx.try_recv().map_err(|_| timeout_error(method, timeout))
            }
        }?;
        responses
            .get(&key)
            .cloned()
            .ok_or_else(|| Error::Protocol(format!("the retry did not answer `{key}` ({method})")))
    }

    /// Hands a retry's answers to the handler that asked, which answers the retry.
    fn resume(&self, id: RequestId, state: String, params: Value) {
        let Some((call, input)) = lock(&self.parked).remove(&state) else {
            let error = ErrorObject::new(
                ErrorCode::INVALID_PARAMS,
                format!("unknown or expired requestState {state:?}"),
            );
            return self.answer(&id, Err(error), true);
        };
        let responses = params
            .get("inputResponses")
            .cloned()
            .unwrap_or_else(|| json!({}));
        call.next_round(id.clone(), params);
        lock(&self.running).insert(id.clone(), Arc::clone(&call));
        if input.try_send(responses).is_err() {
            lock(&self.running).remove(&id);
            let error = ErrorObject::new(ErrorCode::INVALID_PARAMS, "the input round expired");
            self.answer(&id, Err(error), true);
        }
    }

    fn closed_error(&self) -> Error {
        Error::Closed(Arc::new(Closed {
            reason: "the connection to the client ended".into(),
            ..Closed::default()
        }))
    }
}

/// Counts a running handler thread while it lives.
struct Running<'a>(&'a AtomicUsize);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

fn to_value<T: Serialize>(result: T) -> Result<Value> {
    serde_json::to_value(result).map_err(|e| Error::Protocol(e.to_string()))
}

fn not_found(method: &str) -> ErrorObject {
    ErrorObject::new(
        ErrorCode::METHOD_NOT_FOUND,
        format!("method not found: {method}"),
    )
}

fn unsupported_version(requested: &str) -> ErrorObject {
    ErrorObject::new(
        ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
        format!("unsupported protocol version {requested:?}"),
    )
    .with_data(json!({"supported": MODERN_PROTOCOL_VERSIONS, "requested": requested}))
}

fn timeout_error(method: &str, timeout: Duration) -> Error {
    Error::Timeout {
        method: method.to_owned(),
        elapsed: timeout,
        kind: TimeoutKind::Request,
        stderr_tail: None,
    }
}

/// A request id from its JSON value.
fn read_id(value: Value) -> Option<RequestId> {
    match value {
        Value::String(s) => Some(RequestId::from(s)),
        Value::Number(n) => n
            .as_i64()
            .map(RequestId::from)
            .or_else(|| n.as_u64().map(RequestId::from)),
        _ => None,
    }
}
