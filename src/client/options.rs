//! Client-wide options (per-request ones are in `request_options`).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::jsonrpc::ErrorObject;
use crate::types::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    Implementation, ListRootsResult, ProgressNotificationParams, Root, ServerNotification,
};

// Where the rest of the client has always found them.
pub(crate) use super::engine::request_options::RequestOptions;
pub(crate) use crate::sync::lock;

pub(crate) type SamplingHandler = Arc<
    dyn Fn(CreateMessageRequestParams) -> Result<CreateMessageResult, ErrorObject> + Send + Sync,
>;
pub(crate) type ElicitationHandler =
    Arc<dyn Fn(ElicitRequestParams) -> Result<ElicitResult, ErrorObject> + Send + Sync>;
pub(crate) type RootsHandler = Arc<dyn Fn() -> Result<ListRootsResult, ErrorObject> + Send + Sync>;
pub(crate) type NotificationCallback = Arc<dyn Fn(&ServerNotification) + Send + Sync>;
/// How many server requests are handled at once by default.
const DEFAULT_HANDLER_THREADS: usize = 4;

pub(crate) type ProgressCallback = Arc<dyn Fn(&ProgressNotificationParams) + Send + Sync>;

/// How a [`Client`](crate::Client) behaves: identity, timeouts, and the handlers that answer
/// the server's requests.
///
/// Registering a handler declares the matching client capability in `initialize`.
///
/// ```
/// use std::time::Duration;
/// use umcp::Options;
/// use umcp::types::{Implementation, Root};
///
/// let options = Options::default()
///     .with_client_info(Implementation::new("my-tool", "1.2.0"))
///     .with_request_timeout(Duration::from_secs(10))
///     .with_init_timeout(Duration::from_secs(60))
///     .with_notification_capacity(256)
///     .with_handler_threads(2)
///     .with_reinitialize_on_expiry(false)
///     .with_roots(vec![Root::new("file:///home/me/project")]);
/// assert_eq!(options.request_timeout(), Duration::from_secs(10));
/// assert_eq!(options.init_timeout(), Duration::from_secs(60));
/// assert_eq!(options.handler_threads(), 2);
/// ```
#[derive(Clone)]
pub struct Options {
    pub(crate) client_info: Implementation,
    pub(crate) request_timeout: Duration,
    pub(crate) init_timeout: Duration,
    pub(crate) notification_capacity: usize,
    pub(crate) handler_threads: usize,
    pub(crate) reinitialize_on_expiry: bool,
    pub(crate) sampling: Option<SamplingHandler>,
    /// Whether `sampling.tools` is declared; builder in `sampling.rs`.
    pub(crate) sampling_tools: bool,
    pub(crate) elicitation: Option<ElicitationHandler>,
    /// The modes declared with the elicitation handler; builder in `elicitation.rs`.
    pub(crate) elicitation_modes: super::elicitation::ElicitationModes,
    pub(crate) roots: Option<RootsHandler>,
    pub(crate) on_notification: Option<NotificationCallback>,
    pub(crate) experimental: Option<Map<String, Value>>,
    /// The protocol era settings; builders in `era.rs`.
    pub(crate) era: super::era::state::EraOptions,
    /// The response cache settings; builders in `cache.rs`.
    pub(crate) cache: super::follow::cache::CacheOptions,
    /// The late-response handler; its builder is in `late.rs`.
    pub(crate) late: super::engine::late::LateOptions,
    /// Cancels a connect in progress; builder in `connect_cancel.rs`.
    pub(crate) connect_cancel: Option<super::engine::cancel::CancelHandle>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            client_info: Implementation::new("umcp", env!("CARGO_PKG_VERSION")),
            request_timeout: Duration::from_secs(30),
            init_timeout: Duration::from_secs(30),
            notification_capacity: 1024,
            handler_threads: DEFAULT_HANDLER_THREADS,
            reinitialize_on_expiry: true,
            sampling: None,
            sampling_tools: false,
            elicitation: None,
            elicitation_modes: super::elicitation::ElicitationModes::ALL,
            roots: None,
            on_notification: None,
            experimental: None,
            era: super::era::state::EraOptions::default(),
            cache: super::follow::cache::CacheOptions::default(),
            late: super::engine::late::LateOptions::default(),
            connect_cancel: None,
        }
    }
}

impl Options {
    /// The name and version sent as `clientInfo` (default: `umcp` and this crate's version).
    ///
    /// See the example on [`Options`].
    pub fn with_client_info(mut self, info: Implementation) -> Options {
        self.client_info = info;
        self
    }

    /// The default timeout of every request (default 30 s). [`RequestOptions`] override it.
    ///
    /// See the example on [`Options`].
    pub fn with_request_timeout(mut self, timeout: Duration) -> Options {
        self.request_timeout = timeout;
        self
    }

    /// How long connecting may take in all (default 30 s): one deadline for the
    /// `server/discover` probe, `initialize`, and any new start of the server or fallback in
    /// between, a legacy SSE server's `endpoint` event included
    /// ([`Client::connect_with`](crate::Client::connect_with)); also how long `initialize` may
    /// take when a session is started again after it expired. As for any request, time a
    /// transport spends obtaining credentials (a user authorizing in a browser) does not
    /// count. A connect that times out fails with [`Error::Timeout`](crate::Error::Timeout),
    /// carrying a stdio server's last stderr lines.
    ///
    /// See the example on [`Options`].
    pub fn with_init_timeout(mut self, timeout: Duration) -> Options {
        self.init_timeout = timeout;
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
        self.notification_capacity = capacity.max(1);
        self
    }

    /// How many of the server's requests (`roots/list`, `sampling/createMessage`,
    /// `elicitation/create`) are answered at once, each on a thread of its own (default 4, at
    /// least 1). The threads start when first needed and last as long as the connection. As
    /// many requests again may wait for a free thread; beyond that the server gets a JSON-RPC
    /// error at once. `ping` needs no handler thread: it is answered as it arrives (over HTTP,
    /// where the reply is a POST, by one more thread that sends such replies one at a time).
    ///
    /// See the example on [`Options`].
    pub fn with_handler_threads(mut self, threads: usize) -> Options {
        self.handler_threads = threads.max(1);
        self
    }

    /// Whether an expired HTTP session is re-initialized transparently and the request retried
    /// once (default `true`). With `false` the caller gets [`Error::SessionExpired`](crate::Error::SessionExpired).
    ///
    /// See the example on [`Options`].
    pub fn with_reinitialize_on_expiry(mut self, enabled: bool) -> Options {
        self.reinitialize_on_expiry = enabled;
        self
    }

    /// Answers `sampling/createMessage`, and declares the `sampling` capability.
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
        self.sampling = Some(Arc::new(handler));
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
        self.elicitation = Some(Arc::new(handler));
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
        self.roots = Some(Arc::new(move || {
            handler().map(ListRootsResult::file_roots_only)
        }));
        self
    }

    /// Calls `callback` for every server notification that goes to
    /// [`Notifications`](crate::Notifications), before it is queued there. Progress
    /// notifications do not: they go to the request that asked for them
    /// ([`RequestOptions::with_progress`]), and the notifications of a stateless-era
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
    /// let client = Arc::new(Client::connect_with(StdioConfig::new("my-server"), options)?);
    /// let _ = slot.set(Arc::downgrade(&client));
    /// # Ok(()) }
    /// ```
    pub fn with_notification_callback<F>(mut self, callback: F) -> Options
    where
        F: Fn(&ServerNotification) + Send + Sync + 'static,
    {
        self.on_notification = Some(Arc::new(callback));
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

    /// The default request timeout.
    ///
    /// See the example on [`Options`].
    pub fn request_timeout(&self) -> Duration {
        self.request_timeout
    }

    /// The `initialize` timeout.
    ///
    /// See the example on [`Options`].
    pub fn init_timeout(&self) -> Duration {
        self.init_timeout
    }

    /// How many server requests are handled at once.
    ///
    /// See the example on [`Options`].
    pub fn handler_threads(&self) -> usize {
        self.handler_threads
    }
}

impl fmt::Debug for Options {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Options")
            .field("client_info", &self.client_info)
            .field("request_timeout", &self.request_timeout)
            .field("init_timeout", &self.init_timeout)
            .field("sampling", &self.sampling.is_some())
            .field("sampling_tools", &self.sampling_tools)
            .field("elicitation", &self.elicitation.is_some())
            .field("elicitation_modes", &self.elicitation_modes)
            .field("roots", &self.roots.is_some())
            .finish_non_exhaustive()
    }
}
