//! Client-wide options: every builder of [`Options`], over the settings each layer reads
//! (per-request options are [`RequestOptions`](crate::RequestOptions)).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Map, Value};

use crate::jsonrpc::{ErrorObject, Notification};
use crate::types::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    Implementation, ListRootsResult, LoggingLevel, Root, ServerNotification,
};

use super::elicitation::ElicitationModes;
use super::engine::cancel::CancelHandle;
use super::engine::late::LateResponse;
use super::engine::pool::handler_threads;
use super::engine::settings::Settings;
use super::era::session::Follow;
use super::era::state::{Era, EraOptions, ProtocolMode};
use super::era::task;
use super::era::verdicts::{VerdictStore, Verdicts};
use super::follow::cache::CacheOptions;
use super::screen::ToolScreen;
use super::server_requests::{self, Handlers};
use super::tasks::{self as task_tools, TaskCall};
use super::tool_filter::ToolFilter;
use crate::lock::ServerLock;

/// How a [`Client`](crate::Client) behaves: identity, timeouts, and the handlers that answer
/// the server's requests.
///
/// Registering a handler declares the matching client capability (in `initialize`, or in
/// every stateless request's `_meta`); the same handlers answer a stateless server's input
/// rounds (see [`Options::with_max_input_rounds`]).
///
/// ```
/// use std::time::Duration;
/// use umcp::Options;
/// use umcp::types::{Implementation, Root};
///
/// let options = Options::default()
///     .with_client_info(Implementation::new("my-tool", "1.2.0"))
///     .with_request_timeout(Duration::from_secs(10))
///     .with_startup_timeout(Duration::from_secs(60))
///     .with_notification_capacity(256)
///     .with_handler_threads(2)
///     .with_reinitialize_on_expiry(false)
///     .with_roots(vec![Root::new("file:///home/me/project")]);
/// assert_eq!(options.request_timeout(), Duration::from_secs(10));
/// assert_eq!(options.startup_timeout(), Duration::from_secs(60));
/// assert_eq!(options.handler_threads(), 2);
/// ```
#[derive(Clone, Default)]
pub struct Options {
    /// What the engine reads: the request timeout, the notification queue and callback, the
    /// handler threads and the late-response handler.
    pub(crate) engine: Settings,
    /// What the eras read: the mode, the probe, input rounds, the log level, the client's
    /// identity, the start-up timeout and re-initialization.
    pub(crate) era: EraOptions,
    /// The response cache.
    pub(crate) cache: CacheOptions,
    /// The handlers that answer the server's requests, and what they declare.
    pub(crate) handlers: Handlers,
    pub(crate) experimental: Option<Map<String, Value>>,
    /// The extensions the application declares, by id, with their settings as given.
    pub(crate) extensions: Map<String, Value>,
    /// Cancels a connect in progress.
    pub(crate) connect_cancel: Option<CancelHandle>,
    /// How `call_tool` runs a handshake-era tool that must run as a task (`with_tasks`).
    pub(crate) task_call: Option<TaskCall>,
    /// How a task a call came back with is followed, in either era (`with_tasks`).
    pub(crate) task_follow: Option<Follow>,
    /// What a subscription's queue holds, when not the notification capacity: the manager
    /// reads notifications through the callback and keeps that queue tiny, but reads its
    /// clients' subscriptions only on its ticks.
    pub(crate) listen_capacity: Option<usize>,
    /// Which of the server's tools are offered: the filter and the lock.
    pub(crate) tools: ToolScreen,
}

impl Options {
    /// The name and version sent as `clientInfo` (default: `umcp` and this crate's version).
    ///
    /// See the example on [`Options`].
    pub fn with_client_info(mut self, info: Implementation) -> Options {
        self.era.client_info = info;
        self
    }

    /// The default timeout of every request (default 30 s).
    /// [`RequestOptions`](crate::RequestOptions) override it.
    ///
    /// See the example on [`Options`].
    pub fn with_request_timeout(mut self, timeout: Duration) -> Options {
        self.engine.request_timeout = timeout;
        self
    }

    /// How long connecting may take in all (default 30 s): one deadline for the
    /// `server/discover` probe, `initialize`, and any new start of the server or fallback in
    /// between, a legacy SSE server's `endpoint` event included, whatever
    /// [`HttpConfig::connect_timeout`](crate::HttpConfig::connect_timeout) says
    /// ([`Client::connect_with_options`](crate::Client::connect_with_options)); also how long `initialize` may
    /// take when a session is started again after it expired. To give up on a connect sooner
    /// (a Cancel button, Ctrl-C), see [`Options::with_connect_cancel`]. As for any request, time a
    /// transport spends obtaining credentials (a user authorizing in a browser) does not
    /// count. A connect that times out fails with [`Error::Timeout`](crate::Error::Timeout),
    /// carrying a stdio server's last stderr lines.
    ///
    /// See the example on [`Options`].
    pub fn with_startup_timeout(mut self, timeout: Duration) -> Options {
        self.era.startup_timeout = timeout;
        self
    }

    /// How many unread notifications are kept (default 1024, `usize::MAX` for no limit); past
    /// that the oldest are dropped and counted
    /// ([`Client::notifications_dropped`](crate::Client::notifications_dropped)). They also
    /// hold at most [`NOTIFICATION_BYTES`](crate::NOTIFICATION_BYTES) (16 MiB as JSON) together,
    /// whatever the count: past that the oldest are dropped the same way.
    ///
    /// See the example on [`Options`].
    pub fn with_notification_capacity(mut self, capacity: usize) -> Options {
        self.engine.notification_capacity = capacity.max(1);
        self
    }

    /// How many of the server's requests (`roots/list`, `sampling/createMessage`,
    /// `elicitation/create`) are answered at once, each on a thread of its own (default 4, at
    /// least 1). The threads start when first needed and last as long as the connection. As
    /// many requests again may wait for a free thread; beyond that the server gets a JSON-RPC
    /// error at once.
    ///
    /// `ping` needs no handler thread: the router answers it as it arrives, and never waits
    /// to send that reply (nor the busy error above, nor `Invalid Request` for a request
    /// whose id or method is of a forbidden type). Over stdio such a reply that finds the
    /// transport's write queue full is dropped, since a server sending requests without
    /// reading its input would otherwise stall the reading of its own output, and both sides
    /// would wait for good. Over HTTP, where a reply is a POST the server must answer, one
    /// more thread (`umcp-reply`, started on the first such reply) sends them one at a time
    /// from a queue of 4, and drops them past that: a server that never acknowledges its ping
    /// replies stalls neither the stream they came on nor the requests and notifications
    /// behind them.
    ///
    /// See the example on [`Options`].
    pub fn with_handler_threads(mut self, threads: usize) -> Options {
        self.engine.handler_threads = threads.max(1);
        self
    }

    /// Whether an expired HTTP session is re-initialized transparently and the request retried
    /// once (default `true`). With `false` the caller gets
    /// [`Error::SessionExpired`](crate::Error::SessionExpired).
    ///
    /// See the example on [`Options`].
    pub fn with_reinitialize_on_expiry(mut self, enabled: bool) -> Options {
        self.era.reinitialize_on_expiry = enabled;
        self
    }

    /// Answers `sampling/createMessage`, and declares the `sampling` capability.
    ///
    /// A request whose tool uses and results do not balance (a tool use without its result in
    /// the next message, a result for no tool use, results mixed with other content) is
    /// refused with a `-32602` error before the handler runs.
    ///
    /// ```
    /// use umcp::types::{ContentBlock, CreateMessageResult};
    /// use umcp::Options;
    ///
    /// let options = Options::default().with_sampling_handler(|request| {
    ///     // Ask the model of your choice; here, a canned answer.
    ///     let last = request.messages.last();
    ///     let prompt = last.map(|message| message.content.text()).unwrap_or_default();
    ///     let answer = ContentBlock::text(format!("You said: {prompt}"));
    ///     Ok(CreateMessageResult::new("my-model", answer)
    ///         .with_stop_reason("endTurn"))
    /// });
    /// # let _ = options;
    /// ```
    pub fn with_sampling_handler<F>(mut self, handler: F) -> Options
    where
        F: Fn(CreateMessageRequestParams) -> Result<CreateMessageResult, ErrorObject>
            + Send
            + Sync
            + 'static,
    {
        self.handlers.sampling = Some(server_requests::sampling(handler));
        self.handlers.threads = Some(handler_threads);
        self
    }

    /// Whether the sampling handler takes tool-enabled requests (default `false`): with
    /// `true`, and a handler set, the `sampling` capability declares `tools`, and the handler
    /// receives the `tools` and `toolChoice` of protocol 2025-11-25 and later.
    ///
    /// A client MUST declare `sampling.tools` to receive such requests. Without it, a
    /// `sampling/createMessage` carrying either field is answered with a `-32602` error (in a
    /// stateless input round, the call fails with
    /// [`Error::Unsupported`](crate::Error::Unsupported)), and the handler is
    /// not called.
    ///
    /// ```
    /// use umcp::types::{ContentBlock, CreateMessageResult};
    /// use umcp::Options;
    ///
    /// let options = Options::default()
    ///     .with_sampling_handler(|request| {
    ///         let tools = request.tools.as_ref().and_then(|t| t.as_array());
    ///         let offered = tools.map_or(0, Vec::len);
    ///         let answer = ContentBlock::text(format!("{offered} tools offered; none used"));
    ///         Ok(CreateMessageResult::new("my-model", answer).with_stop_reason("endTurn"))
    ///     })
    ///     .with_sampling_tools(true);
    /// # let _ = options;
    /// ```
    pub fn with_sampling_tools(mut self, enabled: bool) -> Options {
        self.handlers.declared.sampling_tools = enabled;
        self
    }

    /// Answers `elicitation/create`, and declares the `elicitation` capability with the modes
    /// of [`Options::with_elicitation_modes`] (by default form and URL mode). For form mode,
    /// [`ElicitForm`](crate::types::ElicitForm) checks each value against the requested
    /// schema and builds an answer only when every required field has one;
    /// [`ElicitResult::accept_defaults`] (below) sends the schema's defaults unchecked.
    ///
    /// ```
    /// use umcp::types::{ElicitRequestParams, ElicitResult};
    /// use umcp::Options;
    ///
    /// let options = Options::default().with_elicitation_handler(|request| match request {
    ///     // Fill the form from its defaults; see `ElicitForm` to ask the user field by field.
    ///     ElicitRequestParams::Form(form) => Ok(ElicitResult::accept_defaults(&form)),
    ///     // Never open URLs on the server's say-so in this tool.
    ///     _ => Ok(ElicitResult::decline()),
    /// });
    /// # let _ = options;
    /// ```
    pub fn with_elicitation_handler<F>(mut self, handler: F) -> Options
    where
        F: Fn(ElicitRequestParams) -> Result<ElicitResult, ErrorObject> + Send + Sync + 'static,
    {
        self.handlers.elicitation = Some(server_requests::elicitation(handler));
        self.handlers.threads = Some(handler_threads);
        self
    }

    /// Which elicitation modes the elicitation handler takes (default
    /// [`ElicitationModes::ALL`]). Only these are declared in the `elicitation` capability,
    /// and a server must send no other: an `elicitation/create` of a mode not declared is
    /// answered with a `-32602` error (in a stateless input round, the call fails with
    /// [`Error::Unsupported`](crate::Error::Unsupported)), and the handler is not called.
    ///
    /// A request without a `mode` is form mode, as the spec says. Servers of protocol versions
    /// before 2025-11-25 know no modes and read the capability as form mode, so a URL-only
    /// client may still get their form requests; those are refused the same way.
    ///
    /// ```
    /// use umcp::types::{ElicitRequestParams, ElicitResult};
    /// use umcp::{ElicitationModes, Options};
    ///
    /// let options = Options::default()
    ///     .with_elicitation_handler(|request| match request {
    ///         ElicitRequestParams::Form(form) => Ok(ElicitResult::accept_defaults(&form)),
    ///         // Never reached: URL mode is not declared, so it is refused before the handler.
    ///         ElicitRequestParams::Url(_) => Ok(ElicitResult::decline()),
    ///     })
    ///     .with_elicitation_modes(ElicitationModes::FORM);
    /// assert!(options.elicitation_modes().form() && !options.elicitation_modes().url());
    /// ```
    pub fn with_elicitation_modes(mut self, modes: ElicitationModes) -> Options {
        self.handlers.declared.elicitation_modes = modes;
        self
    }

    /// Answers `roots/list` with these roots, and declares the `roots` capability.
    ///
    /// Roots whose URI is not `file://` are left out (see [`Options::with_roots_handler`]).
    ///
    /// See the example on [`Options`].
    pub fn with_roots(self, roots: Vec<Root>) -> Options {
        self.with_roots_handler(move || Ok(ListRootsResult::new(roots.clone())))
    }

    /// Answers `roots/list` by calling `handler`, and declares the `roots` capability (with
    /// `listChanged` in the handshake era; see
    /// [`Client::notify_roots_list_changed`](crate::Client::notify_roots_list_changed)).
    ///
    /// A root's URI MUST be a `file://` URI. Other roots are left out of the answer, each
    /// with a warning logged, rather than failing the request: the server still gets the roots
    /// it may use, and the client's log names the wrong entry.
    ///
    /// See the example on
    /// [`Client::notify_roots_list_changed`](crate::Client::notify_roots_list_changed).
    pub fn with_roots_handler<F>(mut self, handler: F) -> Options
    where
        F: Fn() -> Result<ListRootsResult, ErrorObject> + Send + Sync + 'static,
    {
        self.handlers.roots = Some(server_requests::roots(handler));
        self.handlers.threads = Some(handler_threads);
        self
    }

    /// Calls `callback` for every server notification that goes to
    /// [`Notifications`](crate::Notifications), before it is queued there. Progress
    /// notifications do not: they go to the request that asked for them
    /// ([`RequestOptions::with_progress`](crate::RequestOptions::with_progress)), and the
    /// notifications of a stateless-era
    /// subscription go to its [`Subscription`](crate::Subscription) alone.
    ///
    /// It runs on the client's router thread, one notification after the other, with panics
    /// caught and logged. It may call the client (responses do not pass through the router),
    /// but keep it short: while it runs, later notifications and server requests wait (up to
    /// 64 of them; then a server request waits for room, slowing the reading of the server's
    /// output, and a notification waits at most a second and is then dropped and counted in
    /// [`Client::notifications_dropped`](crate::Client::notifications_dropped), so that a
    /// callback that blocks never holds up responses), and a response may overtake a
    /// notification still waiting for the callback.
    ///
    /// ```
    /// use umcp::types::ServerNotification;
    /// use umcp::Options;
    ///
    /// let options = Options::default().with_notification_callback(|notification| {
    ///     if let ServerNotification::LoggingMessage(message) = notification {
    ///         log::info!("server log: {}", message.data);
    ///     }
    /// });
    /// # let _ = options;
    /// ```
    ///
    /// To call the client from the callback, give it a [`Weak`](std::sync::Weak) reference
    /// once the client exists: the client owns the callback, so a strong one would keep both
    /// alive for good (and dropping the client would no longer close the server).
    ///
    /// ```no_run
    /// use std::sync::{Arc, OnceLock, Weak};
    /// use umcp::types::ServerNotification;
    /// use umcp::{Client, Options, StdioConfig};
    ///
    /// # fn main() -> umcp::Result<()> {
    /// let slot: Arc<OnceLock<Weak<Client>>> = Arc::default();
    /// let reach = Arc::clone(&slot);
    /// let options = Options::default().with_notification_callback(move |notification| {
    ///     if let ServerNotification::ToolListChanged = notification {
    ///         if let Some(client) = reach.get().and_then(Weak::upgrade) {
    ///             match client.list_all_tools() {
    ///                 Ok(tools) => log::info!("{} tools now", tools.len()),
    ///                 Err(e) => log::warn!("listing the tools failed: {e}"),
    ///             }
    ///         }
    ///     }
    /// });
    /// let client = Arc::new(Client::connect_with_options(StdioConfig::new("my-server"), options)?);
    /// let _ = slot.set(Arc::downgrade(&client));
    /// # Ok(()) }
    /// ```
    pub fn with_notification_callback<F>(mut self, callback: F) -> Options
    where
        F: Fn(&ServerNotification) + Send + Sync + 'static,
    {
        let callback: Arc<dyn Fn(&ServerNotification) + Send + Sync> = Arc::new(callback);
        let user = Arc::clone(&callback);
        self.engine.on_notification = Some(callback);
        self.engine.on_raw_notification = Some(Arc::new(move |note: &Notification| {
            user(&ServerNotification::from_notification(note.clone()))
        }));
        self
    }

    /// Passes responses that arrive after their request timed out or was cancelled to
    /// `handler`, instead of dropping them: a tool call that outlived its deadline may still
    /// have done its work, and its result says what that was.
    ///
    /// The handler runs on the client's router thread, as the notification callback does,
    /// so it should be quick; a panic in it is caught and logged. The last 256 requests given
    /// up are remembered for their responses.
    ///
    /// ```
    /// use umcp::Options;
    ///
    /// let options = Options::default().with_late_response_handler(|late| {
    ///     log::warn!("`{}` ({}) answered after all: {:?}", late.method, late.reason, late.result);
    /// });
    /// # let _ = options;
    /// ```
    pub fn with_late_response_handler<F>(mut self, handler: F) -> Options
    where
        F: Fn(LateResponse) + Send + Sync + 'static,
    {
        self.engine.on_late_response = Some(Arc::new(handler));
        self
    }

    /// Declares `experimental` client capabilities.
    ///
    /// ```
    /// use serde_json::{json, Map};
    /// use umcp::Options;
    ///
    /// let mut experimental = Map::new();
    /// experimental.insert("vendor.streaming".into(), json!({ "chunked": true }));
    /// let options = Options::default().with_experimental_capabilities(experimental);
    /// # let _ = options;
    /// ```
    pub fn with_experimental_capabilities(mut self, experimental: Map<String, Value>) -> Options {
        self.experimental = Some(experimental);
        self
    }

    /// Declares the extension `id` (such as `io.modelcontextprotocol/ui`) with its `settings`,
    /// in either era: in the stateless era in every request's client capabilities
    /// (`_meta["io.modelcontextprotocol/clientCapabilities"].extensions`), in the handshake
    /// era in `initialize`'s `capabilities.extensions` (as SEP-2133 has it). The settings are
    /// sent exactly as given (`{}` for an extension without any); declaring the same id again
    /// replaces them.
    ///
    /// Declaring an extension tells the server the application handles what it defines: for
    /// the tasks extension (`io.modelcontextprotocol/tasks`) every tool call may then come
    /// back as a task, which the client follows to its end. To ask for a task on one call
    /// only, use [`RequestOptions::with_task`](crate::RequestOptions::with_task).
    ///
    /// ```
    /// use serde_json::json;
    /// use umcp::Options;
    ///
    /// let options = Options::default()
    ///     .with_extension(
    ///         "io.modelcontextprotocol/ui",
    ///         json!({ "mimeTypes": ["text/html;profile=mcp-app"] }),
    ///     )
    ///     .with_extension("com.example/empty", json!({}));
    /// assert_eq!(options.extensions().len(), 2);
    /// assert_eq!(options.extensions()["com.example/empty"], json!({}));
    /// ```
    pub fn with_extension(mut self, id: impl Into<String>, settings: Value) -> Options {
        self.extensions.insert(id.into(), settings);
        self
    }

    /// Declares every extension of `extensions` (id to settings), as
    /// [`Options::with_extension`] does one by one.
    ///
    /// See the example on [`Options::with_extension`].
    pub fn with_extensions(mut self, extensions: Map<String, Value>) -> Options {
        self.extensions.extend(extensions);
        self
    }

    /// The extensions declared, by id, with their settings.
    ///
    /// See the example on [`Options::with_extension`].
    pub fn extensions(&self) -> &Map<String, Value> {
        &self.extensions
    }

    /// Where [`ProtocolMode::Auto`] keeps what it learned a server speaks, and looks it up
    /// before connecting (default: this process's memory). A second connection to a server
    /// whose era the store knows starts in that era: a handshake-era server gets `initialize`
    /// with no `server/discover` probe first, so connecting costs no more round trips than the
    /// handshake itself; a stateless one gets the `server/discover` its era begins with anyway.
    /// A server changed meanwhile is followed: a refused `initialize` forgets the verdict and
    /// the server is probed again, and a stateless server's refusal of `server/discover` means
    /// `initialize` on the same connection (see [`ProtocolMode::Auto`]).
    ///
    /// Give a store that outlives the process (a file, the application's settings) to skip
    /// the probe on a program's every start; see the example on
    /// [`VerdictStore`].
    pub fn with_verdict_store(mut self, store: Arc<dyn VerdictStore>) -> Options {
        self.era.verdicts = Verdicts::of(store);
        self
    }

    /// How the protocol era is chosen at connect time (default [`ProtocolMode::Auto`]).
    ///
    /// Pass a verdict saved from [`Client::verdict`](crate::Client::verdict) to skip the
    /// probe for a server already known.
    ///
    /// ```
    /// use std::time::Duration;
    /// use umcp::types::LoggingLevel;
    /// use umcp::{Options, ProtocolMode};
    ///
    /// // The default probes with `server/discover` and falls back to `initialize`.
    /// assert_eq!(*Options::default().protocol_mode(), ProtocolMode::Auto);
    /// let handshake_only = Options::default().with_protocol_mode(ProtocolMode::Legacy);
    /// let stateless_only = Options::default()
    ///     .with_protocol_mode(ProtocolMode::modern())
    ///     .with_max_input_rounds(4)
    ///     .with_log_level(LoggingLevel::Warning);
    /// let quick_probe = Options::default().with_probe_timeout(Duration::from_secs(2));
    /// assert_eq!(ProtocolMode::parse("legacy"), Some(ProtocolMode::Legacy));
    /// # let _ = (handshake_only, stateless_only, quick_probe);
    /// ```
    pub fn with_protocol_mode(mut self, mode: ProtocolMode) -> Options {
        self.era.mode = mode;
        self
    }

    /// How long the `server/discover` probe of [`ProtocolMode::Auto`] waits for an answer
    /// before the server counts as legacy (default 10 s, and never more than half of the
    /// start-up timeout, which bounds the whole connect, so that `initialize` has time after a silent
    /// probe). The clock starts once the server is started. A server slower to start than
    /// this still connects in its era: `initialize` follows, and a server that then exits is
    /// started again for `initialize` alone, and one that refuses it is asked
    /// `server/discover` again.
    ///
    /// See the example on [`Options::with_protocol_mode`].
    pub fn with_probe_timeout(mut self, timeout: Duration) -> Options {
        self.era.probe_timeout = timeout;
        self
    }

    /// How many times one stateless request may come back asking for input
    /// (`input_required`) before it fails (default 8). Whatever the number, the request's
    /// timeout and its maximum total time span all its rounds and the handlers that answer
    /// them. [`Client::request_once`](crate::Client::request_once) returns the raw
    /// `input_required` result instead, for callers who drive the rounds themselves.
    ///
    /// # Handlers in input rounds
    ///
    /// The elicitation, sampling and roots handlers answer an input round's requests exactly
    /// as they answer a handshake-era server's requests, save that a round cannot carry a
    /// handler's error back to the server: the call fails with
    /// [`Error::Protocol`](crate::Error::Protocol) naming the handler's code and message (in
    /// the handshake era the error goes to the server, which decides what to make of it). A
    /// round asking for a handler that is not set fails the call with
    /// [`Error::Unsupported`](crate::Error::Unsupported), and one asking for more than 64
    /// inputs at once with `Error::Protocol`, before any handler runs.
    ///
    /// The handlers run on the call's clock: its timeout counts from its start across every
    /// round and handler, unless it resets on progress, when each answer from the server
    /// restarts it. A handler is never interrupted, but none starts once the call's time is
    /// up, it was cancelled or the client closed.
    ///
    /// See the example on [`Options::with_protocol_mode`].
    pub fn with_max_input_rounds(mut self, rounds: u32) -> Options {
        self.era.max_input_rounds = rounds;
        self
    }

    /// The server's log messages to ask for, from `level` up, in either era: sent in every
    /// stateless request's `_meta` (the stateless era has no `logging/setLevel`), and with
    /// `logging/setLevel` at the start of every handshake-era session whose server offers
    /// logging. Unset by default: servers then choose, and stateless ones send none.
    /// [`Client::set_logging_level`](crate::Client::set_logging_level) changes it later.
    ///
    /// See the example on [`Options::with_protocol_mode`].
    pub fn with_log_level(mut self, level: LoggingLevel) -> Options {
        self.era.log_level = Some(level);
        self
    }

    /// Whether results with caching hints are cached at all (default on).
    ///
    /// Results with caching hints (`ttlMs`, `cacheScope` on `server/discover`, the list
    /// methods and `resources/read`) are cached per connection, at most 256 of them: a fresh
    /// entry answers the same method with the same params (`_meta` aside) without a round
    /// trip. An absent or non-positive `ttlMs` is stale at once, and the rounds of a multi
    /// round-trip request are never cached. List-changed and resource-updated notifications
    /// drop the matching entries as they arrive (on any subscription, or the session), and a
    /// broken subscription stream or a new session drops them all
    /// ([`SubscriptionEvent::Resubscribed`](crate::SubscriptionEvent::Resubscribed)).
    ///
    /// No entry is shared with another connection. Those not marked `cacheScope: "public"`
    /// belong to the credentials that fetched them, and are dropped when their authorization
    /// context changes
    /// ([`CredentialProvider::authorization_context`](crate::CredentialProvider::authorization_context):
    /// umcp's OAuth provider changes it on a logout and on a new grant, not on a refresh).
    /// One request skips the cache with
    /// [`RequestOptions::with_no_cache`](crate::RequestOptions::with_no_cache). Handshake-era
    /// servers send no hints, so nothing of theirs is cached unless
    /// [`Options::with_cache_ttl_without_hints`] asks for it.
    ///
    /// ```
    /// use std::time::Duration;
    /// use umcp::{Options, RequestOptions};
    ///
    /// let options = Options::default()
    ///     .with_response_cache(true)
    ///     // Lists from servers that give no cache hints are kept this long:
    ///     .with_cache_ttl_without_hints(Duration::from_secs(30));
    /// // One request that must see the server's current answer:
    /// let fresh = RequestOptions::default().with_no_cache();
    /// # let _ = (options, fresh);
    /// ```
    pub fn with_response_cache(mut self, enabled: bool) -> Options {
        self.cache.enabled = enabled;
        self
    }

    /// Caches results that carry no hints (handshake-era servers) for `ttl`; by default
    /// they are not cached.
    ///
    /// See the example on [`Options::with_response_cache`].
    pub fn with_cache_ttl_without_hints(mut self, ttl: Duration) -> Options {
        self.cache.ttl_without_hints = Some(ttl);
        self
    }

    /// Whether a tool call that runs as a task is followed to its end, so that
    /// [`Client::call_tool`](crate::Client::call_tool) returns the task's result like any
    /// other (default `false`).
    ///
    /// - Handshake era (2025-11-25): a tool whose listing requires a task
    ///   (`execution.taskSupport: "required"`), on a server offering task-augmented tool
    ///   calls, is sent task-augmented and its result fetched with `tasks/result`. To learn
    ///   which tools need one, the client lists the tools once before its first call, unless
    ///   the caller listed them already.
    /// - Stateless era: a call the server refuses for want of the tasks extension (-32021) is
    ///   sent again declaring it, and a task it answers with is polled with `tasks/get` (its
    ///   input requests answered through the handlers) to its end.
    ///
    /// Without it a call of the stateless era that the server would run only as a task fails
    /// with [`Error::Unsupported`](crate::Error::Unsupported) naming this builder, as does a
    /// call asking for a task with
    /// [`RequestOptions::with_task`](crate::RequestOptions::with_task) (nothing is sent); a
    /// handshake-era server refuses a call of a tool that requires a task with its own error.
    /// [`Client::call_tool_as_task`](crate::Client::call_tool_as_task) needs no task support:
    /// the application holds the task. Left off, a program carries none of the code that
    /// follows tasks.
    ///
    /// ```
    /// use umcp::Options;
    ///
    /// // `call_tool` waits for tools that run as tasks, such as server-everything's
    /// // `simulate-research-query`, and returns their result.
    /// let options = Options::default().with_tasks(true);
    /// # let _ = options;
    /// ```
    pub fn with_tasks(mut self, enabled: bool) -> Options {
        self.task_follow = enabled.then_some(task::follow as Follow);
        self.task_call = enabled.then_some(task_tools::call_as_task as TaskCall);
        self
    }

    /// Makes [`Client::connect`](crate::Client::connect_with_options) with these options cancellable
    /// through `handle`, from any thread.
    ///
    /// Cancelling ends the connect at whatever stage it is: the connection under way is
    /// closed as a failed connect's is (a stdio server gets the end of its input, and is
    /// signalled if it does not exit within its close grace; an HTTP request in flight is
    /// cut), and the connect returns [`Error::Cancelled`](crate::Error::Cancelled) with `method`
    /// `"connect"` once that
    /// close is done. [`CancelHandle::cancel`] itself returns at once. A handle cancelled
    /// before the connect starts makes it fail at once, starting nothing; a cancel after the
    /// connect returned leaves the client alone. One stage is not cut short: a legacy
    /// HTTP+SSE start waiting for its `endpoint` event, which ends by the start-up timeout.
    ///
    /// The handle applies to every connect made with these options (a
    /// [`Manager`](crate::Manager)'s too, when set in its client options): once cancelled,
    /// they all fail at once. Use a fresh handle for each attempt.
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use umcp::{CancelHandle, Client, Error, Options, StdioConfig};
    ///
    /// let cancel = CancelHandle::new();
    /// let options = Options::default()
    ///     .with_startup_timeout(Duration::from_secs(60))
    ///     .with_connect_cancel(cancel.clone());
    /// // A "Cancel" button, say, on another thread.
    /// let stopper = cancel.clone();
    /// let button = std::thread::spawn(move || {
    ///     std::thread::sleep(Duration::from_secs(2));
    ///     stopper.cancel();
    /// });
    /// match Client::connect_with_options(StdioConfig::new("slow-server"), options) {
    ///     Ok(client) => log::info!("connected to {}", client.server_info().name),
    ///     Err(Error::Cancelled { .. }) => log::info!("gave up"),
    ///     Err(err) => log::warn!("{err}"),
    /// }
    /// # let _ = button.join();
    /// ```
    pub fn with_connect_cancel(mut self, handle: CancelHandle) -> Options {
        self.connect_cancel = Some(handle);
        self
    }

    /// Offers only the tools `filter` lets through: the others are hidden, not listed by
    /// [`list_tools`](crate::Client::list_tools) and its kin, and a call to one is refused with
    /// [`Error::ToolHidden`](crate::Error::ToolHidden) before anything is sent (also through
    /// [`request`](crate::Client::request) and [`request_raw`](crate::Client::request_raw),
    /// whose listings are left as the server sent them). Default: every tool.
    ///
    /// ```no_run
    /// use umcp::{Client, Error, Hidden, Options, StdioConfig, ToolFilter};
    ///
    /// # fn main() -> umcp::Result<()> {
    /// let filter = ToolFilter::new().with_allowed(["read_*", "list_*"]);
    /// let options = Options::default().with_tool_filter(filter);
    /// assert!(options.tool_filter().allows("read_file"));
    /// let client = Client::connect_with_options(StdioConfig::new("mcp-server-files"), options)?;
    /// match client.call_tool("delete_file", serde_json::json!({ "path": "notes.txt" })) {
    ///     Err(Error::ToolHidden(hidden)) => assert_eq!(hidden.why, Hidden::Filtered),
    ///     other => panic!("sent: {other:?}"),
    /// }
    /// # Ok(()) }
    /// ```
    pub fn with_tool_filter(mut self, filter: ToolFilter) -> Options {
        self.tools.filter = filter;
        self.tools.checked();
        self
    }

    /// Pins the server's tools to `lock`, failing closed on drift: a tool whose definition
    /// differs from the lock, or that the lock does not have, is hidden (as by
    /// [`with_tool_filter`](Options::with_tool_filter)), and a call to it is refused with
    /// [`Error::ToolHidden`](crate::Error::ToolHidden) naming what changed. A call is checked
    /// against the connection's last listing of every page; the client lists first, within
    /// the call's time, when it has none or the server announced a tool-list change since,
    /// and logs each tool a listing newly hides (at `warn`). See [`lock`](crate::lock).
    ///
    /// ```no_run
    /// use umcp::lock::Lockfile;
    /// use umcp::{Client, Options, StdioConfig};
    ///
    /// # fn main() -> umcp::Result<()> {
    /// let lock = Lockfile::load("mcp.lock")?;
    /// let pinned = lock.server("files").cloned().expect("files is locked");
    /// let options = Options::default().with_tool_lock(pinned);
    /// let client = Client::connect_with_options(StdioConfig::new("mcp-server-files"), options)?;
    /// let tools = client.list_all_tools()?; // only the tools as locked
    /// for hidden in client.hidden_tools() {
    ///     log::warn!("{hidden}"); // e.g. "tool `read_file` of server `files` differs …"
    /// }
    /// # let _ = tools; Ok(()) }
    /// ```
    pub fn with_tool_lock(mut self, lock: ServerLock) -> Options {
        self.tools.lock = Some(Arc::new(lock));
        self.tools.checked();
        self
    }

    /// The tool filter.
    ///
    /// See the example on [`Options::with_tool_filter`].
    pub fn tool_filter(&self) -> &ToolFilter {
        &self.tools.filter
    }

    /// The lock the server's tools are pinned to, if any.
    ///
    /// See the example on [`Options::with_tool_lock`].
    pub fn tool_lock(&self) -> Option<&ServerLock> {
        self.tools.lock.as_deref()
    }

    /// The default request timeout.
    ///
    /// See the example on [`Options`].
    pub fn request_timeout(&self) -> Duration {
        self.engine.request_timeout
    }

    /// How long connecting may take in all.
    ///
    /// See the example on [`Options`].
    pub fn startup_timeout(&self) -> Duration {
        self.era.startup_timeout
    }

    /// How many server requests are handled at once.
    ///
    /// See the example on [`Options`].
    pub fn handler_threads(&self) -> usize {
        self.engine.handler_threads
    }

    /// The configured protocol mode.
    ///
    /// See the example on [`Options::with_protocol_mode`].
    pub fn protocol_mode(&self) -> &ProtocolMode {
        &self.era.mode
    }

    /// The elicitation modes declared when an elicitation handler is set.
    ///
    /// See the example on [`Options::with_elicitation_modes`].
    pub fn elicitation_modes(&self) -> ElicitationModes {
        self.handlers.declared.elicitation_modes
    }
}

impl Options {
    /// The client capabilities the registered handlers imply, as sent in `initialize`
    /// ([`Era::Legacy`]) and in every stateless request's `_meta` ([`Era::Modern`]).
    pub(crate) fn capabilities(&self, era: Era) -> Value {
        let mut capabilities = Map::new();
        let handlers = &self.handlers;
        if handlers.roots.is_some() {
            // The stateless era removed `notifications/roots/list_changed`, and with it the
            // flag.
            let roots = match era {
                Era::Legacy => json!({ "listChanged": true }),
                Era::Modern => json!({}),
            };
            capabilities.insert("roots".into(), roots);
        }
        if handlers.sampling.is_some() {
            let sampling = if handlers.declared.sampling_tools {
                json!({ "tools": {} })
            } else {
                json!({})
            };
            capabilities.insert("sampling".into(), sampling);
        }
        if handlers.elicitation.is_some() {
            // The same object in every version: those before 2025-11-25 know no modes and read
            // any `elicitation` as form mode.
            let modes = handlers.declared.elicitation_modes.capability();
            capabilities.insert("elicitation".into(), modes);
        }
        if let Some(experimental) = &self.experimental {
            capabilities.insert("experimental".into(), Value::Object(experimental.clone()));
        }
        // The same object in both eras: the stateless era has `extensions` in its schema, the
        // handshake era takes it in `initialize` as SEP-2133 defines it.
        if !self.extensions.is_empty() {
            capabilities.insert("extensions".into(), Value::Object(self.extensions.clone()));
        }
        Value::Object(capabilities)
    }
}

impl fmt::Debug for Options {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let handlers = &self.handlers;
        f.debug_struct("Options")
            .field("client_info", &self.era.client_info)
            .field("request_timeout", &self.engine.request_timeout)
            .field("startup_timeout", &self.era.startup_timeout)
            .field("sampling", &handlers.sampling.is_some())
            .field("sampling_tools", &handlers.declared.sampling_tools)
            .field("elicitation", &handlers.elicitation.is_some())
            .field("elicitation_modes", &handlers.declared.elicitation_modes)
            .field("roots", &handlers.roots.is_some())
            .field("tasks", &self.task_follow.is_some())
            .field("extensions", &self.extensions.keys().collect::<Vec<_>>())
            .field("tool_filter", &self.tools.filter)
            .field(
                "tool_lock",
                &self.tools.lock.as_ref().map(|lock| lock.name()),
            )
            .finish_non_exhaustive()
    }
}
