//! A kit for testing code that uses umcp: a fake MCP server built from closures, run in the
//! same process, that speaks either protocol era; the in-memory transport beneath it; and real
//! sessions recorded and played back.
//!
//! A [`FakeServer`] lists the tools, resources and prompts it was given and answers with their
//! handlers. It is a [`Connect`], so a real [`Client`](crate::Client) connects to it as to any
//! server and runs its production code path above an in-memory transport
//! ([`MemoryConfig`]): no process, no socket. A handler gets
//! a [`Context`] to reach back to the client while it runs: progress, notifications, log
//! messages, and the requests a server makes (elicitation, sampling, roots), which it waits
//! for like a blocking call in both eras.
//!
//! Which era a connection speaks is the client's choice, as with a real server that speaks
//! both: `initialize` starts the handshake era (2024-11-05 … 2025-11-25), where the server's
//! requests go to the client as requests; `server/discover` and the per-request `_meta` of the
//! stateless era (2026-07-28) make every request stand alone, and a handler's request to the
//! client becomes an input round (`input_required`, then the client's retry with its answer),
//! while the handler waits where it asked. [`FakeServer::with_era`] makes the server speak
//! one era only. Faults ([`Fault`]) make it fail, stall or hang up on request.
//!
//! ```
//! use serde_json::json;
//! use umcp::testing::FakeServer;
//! use umcp::types::{CallToolResult, ContentBlock, Tool};
//! use umcp::{Client, Options, ProtocolMode};
//!
//! let schema = json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}});
//! let server = FakeServer::new("calculator").with_tool(Tool::new("add", schema), |_, args| {
//!     let sum = args["a"].as_f64().unwrap_or(0.0) + args["b"].as_f64().unwrap_or(0.0);
//!     Ok(CallToolResult::new(vec![ContentBlock::text(sum.to_string())]))
//! });
//! for mode in [ProtocolMode::Legacy, ProtocolMode::modern()] {
//!     let options = Options::default().with_protocol_mode(mode);
//!     let client = Client::connect_with_options(server.clone(), options)?;
//!     assert_eq!(client.call_tool("add", json!({"a": 2, "b": 3}))?.text(), "5");
//! }
//! // What the client sent, across both connections:
//! assert_eq!(server.requests("tools/call").len(), 2);
//! # Ok::<(), umcp::Error>(())
//! ```
//!
//! A real server's session can be recorded ([`RecordingTransport`]) and played back
//! ([`ReplayTransport`]) with no server at all, and a hand-written server can sit on the other
//! end of the in-memory transport itself ([`MemoryEnd`]). The testing guide,
//! [`guide::testing`](crate::guide::testing), walks through a whole test.
//!
//! Bounds: each connection runs at most [`MAX_HANDLERS`] handlers at once (a request beyond
//! that is answered with an error), and the server keeps the last [`MAX_RECEIVED`] messages
//! the client sent. Every wait of a handler for the client ends by the server's input timeout
//! ([`FakeServer::with_input_timeout`]) or when the connection closes, and
//! [`Context::sleep`] wakes when the request is cancelled or the connection closes, so a
//! delay never holds up the client's `close`.

use crate::sync::lock;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use crate::client::Era;
use crate::error::Result;
use crate::jsonrpc::{ErrorObject, Message};
use crate::transport::{Connect, Inbox, Transport};
use crate::types::{
    CallToolResult, CompleteRequestParams, CompleteResult, GetPromptResult, Implementation, Prompt,
    ReadResourceResult, Resource, Tool,
};

mod connection;
mod context;
mod memory;
mod record;
mod replay;

pub use context::Context;
pub use memory::{MemoryConfig, MemoryEnd, MEMORY_CAPACITY};
pub use record::{RecordingTransport, MIN_SECRET_CHARS};
pub use replay::{ReplayTransport, NOT_RECORDED};

use connection::Connection;

/// How many handlers one connection runs at once.
///
/// See the example in the [module](crate::testing).
pub const MAX_HANDLERS: usize = 64;

/// How many of the messages the client sent a [`FakeServer`] keeps (the oldest go first).
///
/// See the example on [`FakeServer::requests`].
pub const MAX_RECEIVED: usize = 10_000;

/// How long a handler waits for the client by default: its answer to a server request, or
/// the retry that carries an input round's answer.
///
/// See the example on [`Context::elicit`].
pub const DEFAULT_INPUT_TIMEOUT: Duration = Duration::from_secs(30);

/// A tool's handler: the context and the call's `arguments` (an empty object when absent).
type ToolHandler = Arc<dyn Fn(&Context, Value) -> Result<CallToolResult> + Send + Sync>;
/// A resource's reader: the context and the URI asked for.
type ResourceHandler = Arc<dyn Fn(&Context, &str) -> Result<ReadResourceResult> + Send + Sync>;
/// A prompt's handler: the context and the prompt's `arguments`.
type PromptHandler =
    Arc<dyn Fn(&Context, Map<String, Value>) -> Result<GetPromptResult> + Send + Sync>;
/// The completion handler.
type CompletionHandler =
    Arc<dyn Fn(&Context, CompleteRequestParams) -> Result<CompleteResult> + Send + Sync>;

/// A fake MCP server, built from closures, for tests; see the [module](crate::testing).
///
/// Build it with the `with_` methods, then hand a clone to [`Client::connect`] (or to several
/// clients): the definitions are taken as they are when a client connects, and the clones
/// share what the server saw ([`received`](FakeServer::received)) and its open connections
/// ([`notify`](FakeServer::notify), [`fault_once`](FakeServer::fault_once)).
///
/// A handler's `Err` answers the request with a JSON-RPC error: the [`ErrorObject`] of an
/// [`Error::Rpc`](crate::Error::Rpc) as it is, any other error as an internal error
/// (-32603) with its text; a handler that panics is answered the same way. A tool that fails
/// as tools do, with `isError`, returns [`CallToolResult::error`].
///
/// See the example in the [module](crate::testing).
///
/// [`Client::connect`]: crate::Client::connect
#[derive(Clone)]
pub struct FakeServer {
    definition: Definition,
    shared: Arc<Shared>,
}

/// What a fake server does to a request instead of, or before, answering it.
///
/// ```
/// use std::time::Duration;
/// use serde_json::json;
/// use umcp::jsonrpc::{ErrorCode, ErrorObject};
/// use umcp::testing::{Fault, FakeServer};
/// use umcp::types::{CallToolResult, ContentBlock, Tool};
/// use umcp::{Client, Error, RequestOptions};
///
/// let server = FakeServer::new("flaky")
///     .with_tool(Tool::new("echo", json!({"type": "object"})), |_, args| {
///         Ok(CallToolResult::new(vec![ContentBlock::text(args.to_string())]))
///     })
///     .with_fault("prompts/list", Fault::Error(ErrorObject::new(ErrorCode::INTERNAL_ERROR, "down")));
/// let client = Client::connect(server.clone())?;
/// server.fault_once("tools/call", Fault::Delay(Duration::from_secs(60)));
/// let quick = RequestOptions::default().with_timeout(Duration::from_millis(200));
/// let late = client.with(&quick).call_tool("echo", json!({}));
/// assert!(matches!(late, Err(Error::Timeout { .. })));
/// // Once only: the next call is answered at once.
/// assert_eq!(client.call_tool("echo", json!({"n": 1}))?.text(), r#"{"n":1}"#);
/// server.fault_once("tools/call", Fault::Disconnect);
/// assert!(matches!(client.call_tool("echo", json!({})), Err(Error::Closed(_))));
/// # Ok::<(), umcp::Error>(())
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Fault {
    /// Answer with this JSON-RPC error.
    Error(ErrorObject),
    /// Answer with this `result`, whatever it holds (a shape the client must refuse, say).
    Result(Value),
    /// Answer as usual after this delay, cut short when the request is cancelled (then it is
    /// not answered) or the connection closes.
    Delay(Duration),
    /// Never answer.
    Silence,
    /// Hang up: the connection ends, as when a server exits.
    Disconnect,
}

impl FakeServer {
    /// A server named `name` (its `serverInfo`, version `1.0.0`, until
    /// [`with_server_info`](FakeServer::with_server_info)) with nothing to offer yet.
    ///
    /// See the example in the [module](crate::testing).
    pub fn new(name: &str) -> FakeServer {
        static SERVERS: AtomicU64 = AtomicU64::new(1);
        let number = SERVERS.fetch_add(1, Ordering::Relaxed);
        FakeServer {
            definition: Definition {
                // Each server its own key in the client's cache of era verdicts.
                key: format!("fake server {name} #{number}"),
                info: Implementation::new(name, "1.0.0"),
                era: None,
                instructions: None,
                tools: Vec::new(),
                resources: Vec::new(),
                prompts: Vec::new(),
                completion: None,
                page_size: None,
                faults: Vec::new(),
                input_timeout: DEFAULT_INPUT_TIMEOUT,
            },
            shared: Arc::default(),
        }
    }

    /// Speaks only `era`: a handshake-era server refuses `server/discover` (-32601, so a
    /// client probing falls back to `initialize`), a stateless one refuses `initialize` and
    /// any request without the stateless `_meta`. By default the server speaks both, and each
    /// client's protocol mode chooses.
    ///
    /// ```
    /// use umcp::testing::FakeServer;
    /// use umcp::{Client, Era};
    ///
    /// let old = FakeServer::new("old").with_era(Era::Legacy);
    /// assert_eq!(Client::connect(old)?.era(), Era::Legacy);
    /// let new = FakeServer::new("new").with_era(Era::Modern);
    /// assert_eq!(Client::connect(new)?.era(), Era::Modern);
    /// # Ok::<(), umcp::Error>(())
    /// ```
    pub fn with_era(mut self, era: Era) -> FakeServer {
        self.definition.era = Some(era);
        self
    }

    /// The `serverInfo` the server gives.
    ///
    /// See the example on [`FakeServer::with_prompt`].
    pub fn with_server_info(mut self, info: Implementation) -> FakeServer {
        self.definition.info = info;
        self
    }

    /// The usage instructions the server gives.
    ///
    /// See the example on [`FakeServer::with_prompt`].
    pub fn with_instructions(mut self, instructions: impl Into<String>) -> FakeServer {
        self.definition.instructions = Some(instructions.into());
        self
    }

    /// Adds a tool, listed as `tool` says (its input schema included), run by `handler` with
    /// the call's arguments. A second tool of the same name replaces the first.
    ///
    /// See the example in the [module](crate::testing).
    pub fn with_tool<F>(mut self, tool: Tool, handler: F) -> FakeServer
    where
        F: Fn(&Context, Value) -> Result<CallToolResult> + Send + Sync + 'static,
    {
        self.definition.tools.retain(|(t, _)| t.name != tool.name);
        self.definition.tools.push((tool, Arc::new(handler)));
        self
    }

    /// Adds a resource, listed as `resource` says and read with `read`, which gets the URI.
    /// Reading a URI no resource has is answered "resource not found" (-32002 in the
    /// handshake era, -32602 in the stateless one).
    ///
    /// ```
    /// use umcp::testing::FakeServer;
    /// use umcp::types::{ReadResourceResult, Resource, ResourceContents};
    /// use umcp::Client;
    ///
    /// let server = FakeServer::new("files").with_resource(
    ///     Resource::new("file:///notes.txt", "notes").with_mime_type("text/plain"),
    ///     |_, uri| Ok(ReadResourceResult::new(vec![ResourceContents::text(uri, "remember the milk")])),
    /// );
    /// let client = Client::connect(server)?;
    /// assert_eq!(client.list_all_resources()?[0].name, "notes");
    /// let read = client.read_resource("file:///notes.txt")?;
    /// assert_eq!(read.contents[0].as_text(), Some("remember the milk"));
    /// let missing = client.read_resource("file:///other.txt").unwrap_err();
    /// assert!(missing.is_resource_not_found());
    /// # Ok::<(), umcp::Error>(())
    /// ```
    pub fn with_resource<F>(mut self, resource: Resource, read: F) -> FakeServer
    where
        F: Fn(&Context, &str) -> Result<ReadResourceResult> + Send + Sync + 'static,
    {
        self.definition
            .resources
            .retain(|(r, _)| r.uri != resource.uri);
        self.definition.resources.push((resource, Arc::new(read)));
        self
    }

    /// Adds a prompt, listed as `prompt` says and got with `get`, which receives the
    /// arguments.
    ///
    /// ```
    /// use umcp::testing::FakeServer;
    /// use umcp::types::{ContentBlock, GetPromptResult, Implementation, Prompt, PromptMessage, Role};
    /// use umcp::Client;
    ///
    /// let server = FakeServer::new("prompts")
    ///     .with_server_info(Implementation::new("prompt-shop", "2.0.0"))
    ///     .with_instructions("Ask for a greeting.")
    ///     .with_prompt(Prompt::new("greet"), |_, args| {
    ///         let name = args.get("name").and_then(|n| n.as_str()).unwrap_or("you");
    ///         let text = ContentBlock::text(format!("Say hello to {name}."));
    ///         let messages = vec![PromptMessage::new(Role::User, text)];
    ///         Ok(GetPromptResult { messages, ..GetPromptResult::default() })
    ///     });
    /// let client = Client::connect(server)?;
    /// assert_eq!(client.server_info().name, "prompt-shop");
    /// assert_eq!(client.instructions().as_deref(), Some("Ask for a greeting."));
    /// let got = client.get_prompt("greet", serde_json::json!({"name": "Ada"}))?;
    /// assert_eq!(got.messages[0].content.as_text(), Some("Say hello to Ada."));
    /// # Ok::<(), umcp::Error>(())
    /// ```
    pub fn with_prompt<F>(mut self, prompt: Prompt, get: F) -> FakeServer
    where
        F: Fn(&Context, Map<String, Value>) -> Result<GetPromptResult> + Send + Sync + 'static,
    {
        self.definition
            .prompts
            .retain(|(p, _)| p.name != prompt.name);
        self.definition.prompts.push((prompt, Arc::new(get)));
        self
    }

    /// Answers `completion/complete` with `complete` (and advertises completions).
    ///
    /// ```
    /// use umcp::testing::FakeServer;
    /// use umcp::types::{CompleteReference, CompleteRequestParams, CompleteResult};
    /// use umcp::Client;
    ///
    /// let server = FakeServer::new("cities").with_completion(|_, params| {
    ///     let typed = params.argument.value.to_lowercase();
    ///     let cities = ["Paris", "Porto", "Prague", "Oslo"];
    ///     let matching = cities.iter().filter(|c| c.to_lowercase().starts_with(&typed));
    ///     Ok(CompleteResult::new(matching.map(|c| c.to_string()).collect()))
    /// });
    /// let client = Client::connect(server)?;
    /// let asked = CompleteRequestParams::new(CompleteReference::prompt("trip"), "city", "p");
    /// assert_eq!(client.complete(asked)?.completion.values, ["Paris", "Porto", "Prague"]);
    /// # Ok::<(), umcp::Error>(())
    /// ```
    pub fn with_completion<F>(mut self, complete: F) -> FakeServer
    where
        F: Fn(&Context, CompleteRequestParams) -> Result<CompleteResult> + Send + Sync + 'static,
    {
        self.definition.completion = Some(Arc::new(complete));
        self
    }

    /// Lists tools, resources and prompts `size` to a page, so that the client follows
    /// `nextCursor` (default: everything on one page).
    ///
    /// See the example on [`FakeServer::requests`].
    pub fn with_page_size(mut self, size: usize) -> FakeServer {
        self.definition.page_size = Some(size.max(1));
        self
    }

    /// Applies `fault` to every request of `method` (`*` for every method), before anything
    /// [`fault_once`](FakeServer::fault_once) queued.
    ///
    /// See the example on [`Fault`].
    pub fn with_fault(mut self, method: &str, fault: Fault) -> FakeServer {
        self.definition.faults.push((method.to_owned(), fault));
        self
    }

    /// How long a handler waits for the client (its answer to a server request, or the retry
    /// of an input round) before the wait fails with [`Error::Timeout`](crate::Error::Timeout)
    /// (default [`DEFAULT_INPUT_TIMEOUT`]).
    ///
    /// See the example on [`Context::elicit`].
    pub fn with_input_timeout(mut self, timeout: Duration) -> FakeServer {
        self.definition.input_timeout = timeout;
        self
    }

    /// Applies `fault` to the next request of `method` (`*` for any method) on any
    /// connection, once. Faults queued this way are used in the order they were queued.
    ///
    /// See the example on [`Fault`].
    pub fn fault_once(&self, method: &str, fault: Fault) {
        lock(&self.shared.once).push((method.to_owned(), fault));
    }

    /// Sends a notification on every open connection, as a server does when its lists or
    /// resources change: in the handshake era as it is (`notifications/resources/updated`
    /// only where the client subscribed to the URI), in the stateless era to the
    /// subscriptions (`subscriptions/listen`) that asked for it, tagged with their id. Other
    /// notifications go out as they are. Returns how many connections it went to.
    ///
    /// ```
    /// use std::time::Duration;
    /// use umcp::testing::FakeServer;
    /// use umcp::types::{CallToolResult, ServerNotification, SubscriptionFilter, Tool};
    /// use umcp::{Client, Options, ProtocolMode, SubscriptionEvent};
    ///
    /// let tool = Tool::new("noop", serde_json::json!({"type": "object"}));
    /// let server = FakeServer::new("changing").with_tool(tool, |_, _| Ok(CallToolResult::default()));
    /// for mode in [ProtocolMode::Legacy, ProtocolMode::modern()] {
    ///     let options = Options::default().with_protocol_mode(mode);
    ///     let client = Client::connect_with_options(server.clone(), options)?;
    ///     let changes = client.listen(SubscriptionFilter::new().tools())?;
    ///     assert_eq!(server.notify("notifications/tools/list_changed", None), 1);
    ///     let event = changes.recv_timeout(Duration::from_secs(5));
    ///     assert!(matches!(event, Some(SubscriptionEvent::Notification(ServerNotification::ToolListChanged))));
    /// }
    /// # Ok::<(), umcp::Error>(())
    /// ```
    pub fn notify(&self, method: &str, params: Option<Value>) -> usize {
        let open = self.shared.open();
        for connection in &open {
            connection.broadcast(method, params.clone());
        }
        open.len()
    }

    /// Ends every open connection from the server's side, as a server that crashes: the
    /// clients' pending requests fail with [`Error::Closed`](crate::Error::Closed) carrying
    /// `reason`.
    ///
    /// See the example on [`FakeServer::requests`].
    pub fn disconnect(&self, reason: &str) {
        for connection in self.shared.open() {
            connection.hang_up(reason);
        }
    }

    /// How many connections are open.
    ///
    /// See the example on [`FakeServer::requests`].
    pub fn connections(&self) -> usize {
        self.shared.open().len()
    }

    /// Every message the client sent, oldest first (the last [`MAX_RECEIVED`]).
    ///
    /// See the example on [`FakeServer::requests`].
    pub fn received(&self) -> Vec<Message> {
        lock(&self.shared.received.0).iter().cloned().collect()
    }

    /// The params of every request of `method` the client sent (`null` for none), oldest
    /// first.
    ///
    /// ```
    /// use serde_json::json;
    /// use umcp::testing::FakeServer;
    /// use umcp::types::{CallToolResult, Tool};
    /// use umcp::{Client, Error};
    ///
    /// let mut server = FakeServer::new("many").with_page_size(2);
    /// for name in ["a", "b", "c"] {
    ///     server = server.with_tool(Tool::new(name, json!({"type": "object"})), |_, _| {
    ///         Ok(CallToolResult::default())
    ///     });
    /// }
    /// let client = Client::connect(server.clone())?;
    /// assert_eq!(client.list_all_tools()?.len(), 3);
    /// // Two pages: the second asked with the first's cursor.
    /// let pages = server.requests("tools/list");
    /// assert_eq!(pages.len(), 2);
    /// assert_eq!(pages[1]["cursor"], "2");
    /// assert!(server.received().len() >= 3);
    /// assert_eq!(server.connections(), 1);
    /// server.disconnect("maintenance");
    /// match client.list_all_tools() {
    ///     Err(Error::Closed(closed)) => assert_eq!(closed.reason, "maintenance"),
    ///     other => panic!("{other:?}"),
    /// }
    /// # Ok::<(), umcp::Error>(())
    /// ```
    pub fn requests(&self, method: &str) -> Vec<Value> {
        self.params_of(method, |m| matches!(m, Message::Request(_)))
    }

    /// The params of every notification of `method` the client sent (`null` for none), oldest
    /// first.
    ///
    /// See the example on [`FakeServer::wait_for`].
    pub fn notifications(&self, method: &str) -> Vec<Value> {
        self.params_of(method, |m| matches!(m, Message::Notification(_)))
    }

    /// Waits until the client has sent a request or notification of `method`, at most
    /// `timeout`, and returns the params of the latest one (`null` for none); `None` if none
    /// came in time. For what the client sends on its own threads: a cancellation, a
    /// `notifications/roots/list_changed`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use umcp::testing::FakeServer;
    /// use umcp::types::Root;
    /// use umcp::{Client, Options, ProtocolMode};
    ///
    /// let server = FakeServer::new("roots");
    /// let options = Options::default()
    ///     .with_protocol_mode(ProtocolMode::Legacy)
    ///     .with_roots(vec![Root::new("file:///work")]);
    /// let client = Client::connect_with_options(server.clone(), options)?;
    /// client.notify_roots_list_changed()?;
    /// let changed = "notifications/roots/list_changed";
    /// assert!(server.wait_for(changed, Duration::from_secs(5)).is_some());
    /// assert_eq!(server.notifications(changed).len(), 1);
    /// # Ok::<(), umcp::Error>(())
    /// ```
    pub fn wait_for(&self, method: &str, timeout: Duration) -> Option<Value> {
        let deadline = crate::transport::deadline_after(Instant::now(), timeout);
        let (received, arrived) = &self.shared.received;
        let mut log = lock(received);
        loop {
            if let Some(message) = log.iter().rev().find(|m| method_of(m) == Some(method)) {
                return Some(params_of(message));
            }
            let left = deadline.checked_duration_since(Instant::now())?;
            log = arrived
                .wait_timeout(log, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    fn params_of(&self, method: &str, kind: impl Fn(&Message) -> bool) -> Vec<Value> {
        lock(&self.shared.received.0)
            .iter()
            .filter(|m| kind(m) && method_of(m) == Some(method))
            .map(params_of)
            .collect()
    }
}

impl Connect for FakeServer {
    fn connect(&self, inbox: Inbox) -> Result<Box<dyn Transport>> {
        let definition = Arc::new(self.definition.clone());
        let shared = Arc::clone(&self.shared);
        let memory = MemoryConfig::new(self.definition.key.clone(), move |end| {
            Connection::start(Arc::clone(&definition), Arc::clone(&shared), end);
        });
        memory.connect(inbox)
    }

    fn describe(&self) -> String {
        self.definition.key.clone()
    }
}

impl std::fmt::Debug for FakeServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names = |names: Vec<&str>| names.join(", ");
        let d = &self.definition;
        f.debug_struct("FakeServer")
            .field("name", &d.info.name)
            .field("era", &d.era)
            .field(
                "tools",
                &names(d.tools.iter().map(|(t, _)| t.name.as_str()).collect()),
            )
            .field(
                "resources",
                &names(d.resources.iter().map(|(r, _)| r.uri.as_str()).collect()),
            )
            .field(
                "prompts",
                &names(d.prompts.iter().map(|(p, _)| p.name.as_str()).collect()),
            )
            .finish_non_exhaustive()
    }
}

/// What a server offers and how it behaves: fixed for a connection when it opens.
#[derive(Clone)]
struct Definition {
    /// What `describe` says: unique to the server.
    key: String,
    info: Implementation,
    era: Option<Era>,
    instructions: Option<String>,
    tools: Vec<(Tool, ToolHandler)>,
    resources: Vec<(Resource, ResourceHandler)>,
    prompts: Vec<(Prompt, PromptHandler)>,
    completion: Option<CompletionHandler>,
    page_size: Option<usize>,
    faults: Vec<(String, Fault)>,
    input_timeout: Duration,
}

/// What the clones of a server share while clients use it.
#[derive(Default)]
struct Shared {
    /// What the clients sent, and a signal for [`FakeServer::wait_for`].
    received: (Mutex<VecDeque<Message>>, Condvar),
    connections: Mutex<Vec<Weak<Connection>>>,
    /// Faults queued by [`FakeServer::fault_once`].
    once: Mutex<Vec<(String, Fault)>>,
}

impl Shared {
    fn record(&self, message: &Message) {
        let (received, arrived) = &self.received;
        let mut log = lock(received);
        if log.len() == MAX_RECEIVED {
            log.pop_front();
        }
        log.push_back(message.clone());
        arrived.notify_all();
    }

    /// The fault for a request of `method`: a queued one first, then the definition's.
    fn fault(&self, definition: &Definition, method: &str) -> Option<Fault> {
        let applies = |m: &str| m == method || m == "*";
        let mut once = lock(&self.once);
        if let Some(at) = once.iter().position(|(m, _)| applies(m)) {
            return Some(once.remove(at).1);
        }
        drop(once);
        let permanent = definition.faults.iter().find(|(m, _)| applies(m));
        permanent.map(|(_, fault)| fault.clone())
    }

    fn open(&self) -> Vec<Arc<Connection>> {
        let mut connections = lock(&self.connections);
        connections.retain(|c| c.strong_count() > 0);
        connections.iter().filter_map(Weak::upgrade).collect()
    }
}

fn method_of(message: &Message) -> Option<&str> {
    match message {
        Message::Request(r) => Some(&r.method),
        Message::Notification(n) => Some(&n.method),
        Message::Response(_) => None,
    }
}

fn params_of(message: &Message) -> Value {
    let params = match message {
        Message::Request(r) => r.params.clone(),
        Message::Notification(n) => n.params.clone(),
        Message::Response(_) => None,
    };
    params.unwrap_or(Value::Null)
}
