//! A small blocking MCP server over stdin/stdout or Streamable HTTP, used by the demo and,
//! with `--fixtures` and the behaviours, as the tests' server.
//!
//! Over stdio one thread reads stdin line by line and dispatches; over HTTP every POST is
//! dispatched on its own thread. Quick requests are answered inline, and every `tools/call`
//! runs on its own thread so slow calls overlap and requests pipeline. Everything written to
//! stdout goes through one mutex, one line per message, flushed each time, so concurrent
//! writers never interleave bytes; over HTTP each message goes to one open event stream.
//!
//! A panic here would look like a client bug in the tests, so I/O failures end the process
//! with a line on stderr instead.

mod asks;
mod behaviours;
mod catalog;
mod fixtures;
mod http;
mod listen;
mod modern;
mod out;
mod routes;
mod stdio;
mod tools;

use std::collections::{HashMap, HashSet};
use std::process;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::Duration;

use serde_json::{json, Value};
use umcp::jsonrpc::{ErrorCode, ErrorObject, Message, Notification, Request, RequestId, Response};

pub use behaviours::sleep_forever;
use behaviours::{Behaviour, Flood, Opts};
use out::Out;

/// The protocol versions this server speaks, newest first.
const VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// The outcome of a request handler: a `result` or an `error` member.
type Reply = Result<Value, ErrorObject>;

/// Runs the server until stdin ends, or with `--http` until the process is ended. `args` are
/// the command-line arguments after `--server`.
pub fn run(args: &[String]) -> ! {
    let opts = match Opts::parse(args) {
        Ok(opts) => opts,
        Err(e) => {
            eprintln!("demo server: {e}");
            process::exit(2);
        }
    };
    if let Some(address) = opts.http.clone() {
        http::serve(opts, &address);
    }
    let garbage = match opts.behaviour {
        Behaviour::Garbage => behaviours::garbage_block(opts.garbage),
        _ => Vec::new(),
    };
    let delay = opts.start_delay;
    let server = Arc::new(Server::new(opts, Out::stdio(garbage)));
    behaviours::on_start(&server);
    if !delay.is_zero() {
        // A slow start: what the client sent meanwhile waits in the pipe.
        eprintln!("demo server: starting in {} ms", delay.as_millis());
        thread::sleep(delay);
    }
    stdio::serve(&server)
}

/// Locks a mutex, ignoring poisoning: a panicking tool thread must not take the server down.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Session state that requests read and change.
#[derive(Default)]
struct State {
    /// The negotiated protocol version, once `initialize` was answered.
    protocol_version: Option<String>,
    /// The `initialize` params the client sent, for the `client_info` tool.
    client_init: Value,
    /// The minimum level of `notifications/message`, as an index into `catalog::LEVELS`.
    log_level: usize,
    /// Resource URIs the client subscribed to.
    subscriptions: HashSet<String>,
    /// The `requestId` of every `notifications/cancelled` received, in order.
    cancelled: Vec<Value>,
    /// How many requests of each method arrived, for tests of client-side caching.
    seen: HashMap<String, u64>,
    /// The open `subscriptions/listen` subscriptions (`--modern`).
    listens: Vec<listen::Listen>,
    /// Descriptions that replace the listed ones, by tool name: `--describe`, then the
    /// `redescribe` fixture.
    descriptions: HashMap<String, String>,
}

/// The server: options, where its messages go and the session.
pub struct Server {
    opts: Opts,
    out: Out,
    state: Mutex<State>,
    /// Cancellation flags of the `tools/call` requests still running.
    active: Mutex<HashMap<RequestId, Arc<AtomicBool>>>,
    /// Requests this server sent to the client, waiting for the client's response.
    pending: Mutex<HashMap<RequestId, mpsc::Sender<Reply>>>,
    next_id: AtomicU64,
    /// Set once `initialize` was answered (the `never-answer` behaviour starts then).
    initialized: AtomicBool,
    /// The stderr flood of the `stderr-flood` behaviour.
    flood: Flood,
}

impl Server {
    fn new(opts: Opts, out: Out) -> Server {
        let state = State {
            descriptions: opts.describe.iter().cloned().collect(),
            ..State::default()
        };
        Server {
            out,
            state: Mutex::new(state),
            active: Mutex::new(HashMap::new()),
            pending: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
            initialized: AtomicBool::new(false),
            flood: Flood::new(opts.behaviour == Behaviour::StderrFlood),
            opts,
        }
    }

    /// The tools this server offers: the demo's own, the stateless era's with `--modern`, and
    /// the tests' with `--fixtures`.
    fn tools(&self) -> Vec<Value> {
        let mut all = tools::list();
        if self.opts.modern {
            all.extend(modern::extra_tools());
        }
        if self.opts.fixtures {
            all.extend(fixtures::list());
            if self.opts.modern {
                all.extend(modern::fixture_tools());
            }
        }
        let descriptions = &lock(&self.state).descriptions;
        for tool in &mut all {
            let name = tool["name"].as_str().unwrap_or_default();
            if let Some(description) = descriptions.get(name) {
                tool["description"] = json!(description);
            }
        }
        all
    }

    /// Whether `tools/list` lists tool `name`.
    fn offers(&self, name: &str) -> bool {
        self.tools().iter().any(|tool| tool["name"] == name)
    }

    fn handle(self: &Arc<Self>, message: Message) {
        match message {
            Message::Request(request) => self.on_request(request),
            Message::Notification(note) => self.on_notification(note),
            Message::Response(response) => self.on_response(response),
        }
    }

    fn on_request(self: &Arc<Self>, request: Request) {
        if self.opts.behaviour == Behaviour::NeverAnswer && self.initialized.load(Ordering::SeqCst)
        {
            return;
        }
        let first = !self.initialized.load(Ordering::SeqCst);
        *lock(&self.state)
            .seen
            .entry(request.method.clone())
            .or_default() += 1;
        match self.opts.behaviour {
            // As some handshake-era servers do: anything before `initialize` is fatal.
            Behaviour::StrictInit if first && request.method != "initialize" => {
                eprintln!("demo server: `{}` before initialize", request.method);
                process::exit(3);
            }
            // As some handshake-era servers do: unknown requests get no answer at all.
            Behaviour::SilentProbe if request.method == "server/discover" => return,
            _ => {}
        }
        if self.opts.modern && modern::on_request(self, &request) {
            return;
        }
        let params = request.params.clone().unwrap_or_else(|| json!({}));
        let page = |items, key| catalog::page(items, key, &params, self.opts.page_size);
        let reply = match request.method.as_str() {
            "initialize" => return self.initialize(request),
            "tools/call" => return self.spawn_call(request, params),
            "ping" => Ok(json!({})),
            "tools/list" => page(self.tools(), "tools"),
            "resources/list" => page(catalog::resources(), "resources"),
            "resources/templates/list" => page(catalog::templates(), "resourceTemplates"),
            "resources/read" => catalog::read(&params),
            "resources/subscribe" => self.subscribe(&params, true),
            "resources/unsubscribe" => self.subscribe(&params, false),
            "prompts/list" => page(catalog::prompts(), "prompts"),
            "prompts/get" => catalog::get_prompt(&params),
            "completion/complete" => catalog::complete(&params),
            "logging/setLevel" => self.set_level(&params),
            other => Err(ErrorObject::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("method not found: {other}"),
            )),
        };
        self.reply(request.id, reply);
    }

    fn initialize(self: &Arc<Self>, request: Request) {
        match self.opts.behaviour {
            Behaviour::ExitOnInit => {
                eprintln!("fatal: config missing");
                process::exit(1);
            }
            // The client's answer to our ping arrives through the read loop, so the wait for
            // it cannot happen on the read loop's thread.
            Behaviour::PingFirst => {
                let server = Arc::clone(self);
                spawn("demo-ping-first", move || {
                    match server.request_client("ping", None, Duration::from_secs(30)) {
                        Ok(_) => server.answer_initialize(request),
                        Err(e) => {
                            eprintln!("demo server: the client did not answer ping: {e}");
                            process::exit(1);
                        }
                    }
                });
            }
            _ => self.answer_initialize(request),
        }
    }

    fn answer_initialize(&self, request: Request) {
        let params = request.params.unwrap_or_default();
        let Some(requested) = params.get("protocolVersion").and_then(Value::as_str) else {
            let error = ErrorObject::new(ErrorCode::INVALID_PARAMS, "missing protocolVersion");
            return self.reply(request.id, Err(error));
        };
        let version = match self.opts.behaviour {
            Behaviour::BadVersion => "1999-01-01",
            _ => VERSIONS
                .iter()
                .copied()
                .find(|v| *v == requested)
                .unwrap_or(VERSIONS[0]),
        };
        {
            let mut state = lock(&self.state);
            state.protocol_version = Some(version.to_owned());
            state.client_init = params.clone();
        }
        let result = json!({
            "protocolVersion": version,
            "capabilities": {
                "tools": {"listChanged": true},
                "resources": {"subscribe": true, "listChanged": true},
                "prompts": {"listChanged": true},
                "logging": {},
                "completions": {},
            },
            "serverInfo": {
                "name": "umcp-demo",
                "title": "umcp demo server",
                "version": env!("CARGO_PKG_VERSION"),
            },
            "instructions": "A demo server: try the echo, add and slow tools.",
        });
        self.reply(request.id, Ok(result));
        self.initialized.store(true, Ordering::SeqCst);
        if self.opts.behaviour == Behaviour::StopReading {
            // The read loop runs on this thread: sleeping here means stdin is never read
            // again, so the client's writes fill the pipe and then block.
            sleep_forever();
        }
    }

    /// Runs a `tools/call` on its own thread, so a slow tool never holds up other requests.
    fn spawn_call(self: &Arc<Self>, request: Request, params: Value) {
        let name = params
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        if self.opts.behaviour == Behaviour::CrashMidCall && name == "slow" {
            eprintln!("demo server: crashing in the middle of a call to `slow`");
            process::exit(1);
        }
        let call = tools::Call {
            server: Arc::clone(self),
            id: request.id.clone(),
            progress_token: params.pointer("/_meta/progressToken").cloned(),
            cancelled: Arc::new(AtomicBool::new(false)),
        };
        lock(&self.active).insert(request.id.clone(), Arc::clone(&call.cancelled));
        let arguments = params
            .get("arguments")
            .cloned()
            .unwrap_or_else(|| json!({}));
        spawn(&format!("demo-call-{}", request.id), move || {
            // What the tool sends belongs to this request (over HTTP: goes on its stream).
            out::set_origin(Some(call.id.clone()));
            let reply = tools::call(&call, &name, &arguments);
            lock(&call.server.active).remove(&call.id);
            // A cancelled request gets no response at all, as the spec asks.
            if call.cancelled.load(Ordering::SeqCst) {
                call.server.out.abandon(&call.id);
            } else {
                call.server.reply(call.id.clone(), reply);
            }
        });
    }

    fn on_notification(self: &Arc<Self>, note: Notification) {
        behaviours::record(&note);
        match note.method.as_str() {
            "notifications/initialized" => behaviours::on_initialized(self),
            "notifications/cancelled" => {
                let id = note
                    .params
                    .as_ref()
                    .and_then(|p| p.get("requestId"))
                    .cloned();
                let Some(id) = id else { return };
                lock(&self.state).cancelled.push(id.clone());
                if let Ok(id) = serde_json::from_value::<RequestId>(id) {
                    listen::cancel(self, &id);
                    if let Some(flag) = lock(&self.active).get(&id) {
                        flag.store(true, Ordering::SeqCst);
                    }
                }
            }
            _ => {}
        }
    }

    fn on_response(&self, response: Response) {
        let Some(id) = response.id else {
            eprintln!("demo server: the client sent an error without an id: {response:?}");
            return;
        };
        match lock(&self.pending).remove(&id) {
            // The tool thread may have given up already; then nobody needs the answer.
            Some(waiter) => {
                let _ = waiter.send(response.result);
            }
            None => eprintln!("demo server: a response to {id}, which is not waited for"),
        }
    }

    fn subscribe(&self, params: &Value, on: bool) -> Reply {
        let uri = catalog::str_param(params, "uri")?;
        catalog::read(&json!({ "uri": uri }))?;
        let mut state = lock(&self.state);
        if on {
            state.subscriptions.insert(uri.to_owned());
        } else {
            state.subscriptions.remove(uri);
        }
        Ok(json!({}))
    }

    fn set_level(&self, params: &Value) -> Reply {
        let level = catalog::str_param(params, "level")?;
        let index = catalog::level_index(level).ok_or_else(|| {
            ErrorObject::new(
                ErrorCode::INVALID_PARAMS,
                format!("unknown level `{level}`"),
            )
        })?;
        lock(&self.state).log_level = index;
        Ok(json!({}))
    }

    /// Sends a request to the client and waits for its response.
    ///
    /// On timeout the request is cancelled with `notifications/cancelled`, as a well-behaved
    /// server would, which also lets tests see how the client handles a cancelled handler.
    fn request_client(&self, method: &str, params: Option<Value>, timeout: Duration) -> Reply {
        // String ids, so clients are tested with the id form they do not use themselves.
        let id = RequestId::from(format!("s-{}", self.next_id.fetch_add(1, Ordering::SeqCst)));
        let (tx, rx) = mpsc::channel();
        lock(&self.pending).insert(id.clone(), tx);
        self.send(Request::new(id.clone(), method, params).into());
        match rx.recv_timeout(timeout) {
            Ok(reply) => reply,
            Err(_) => {
                lock(&self.pending).remove(&id);
                let reason = format!("no answer within {} ms", timeout.as_millis());
                let params = json!({"requestId": id.to_value(), "reason": reason});
                self.notify("notifications/cancelled", Some(params));
                Err(ErrorObject::new(
                    ErrorCode::INTERNAL_ERROR,
                    format!("{method}: {reason}"),
                ))
            }
        }
    }

    fn reply(&self, id: RequestId, reply: Reply) {
        let reply = match reply {
            Ok(result) if self.opts.modern => Ok(modern::complete(result)),
            other => other,
        };
        self.send(
            Response {
                id: Some(id),
                result: reply,
            }
            .into(),
        );
    }

    fn notify(&self, method: &str, params: Option<Value>) {
        self.send(Notification::new(method, params).into());
    }

    fn send(&self, message: Message) {
        self.out.send(&message);
    }
}

/// Spawns a named thread; a failure to spawn ends the process with a clear message.
fn spawn(name: &str, work: impl FnOnce() + Send + 'static) {
    if let Err(e) = thread::Builder::new().name(name.to_owned()).spawn(work) {
        eprintln!("demo server: cannot start thread {name}: {e}");
        process::exit(1);
    }
}
