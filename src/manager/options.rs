//! How a [`Manager`](crate::Manager) behaves: naming, start-up deadlines, reconnection, the
//! tool cache and, with the `oauth` feature, authorization.

use std::path::PathBuf;
#[cfg(feature = "oauth")]
use std::sync::Arc;
use std::time::Duration;

use crate::client::Options;
use crate::config::ServerConfig;
use crate::jsonrpc::ErrorObject;
use crate::lock::Lockfile;
use crate::types::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
};

use super::asking::{ServerElicitation, ServerSampling};
use super::health::HealthCheck;

#[cfg(feature = "oauth")]
use super::auth::{AuthOptions, UserStep};
#[cfg(feature = "oauth")]
use crate::auth::{AuthorizationHandler, TokenStore};

/// Options of a [`Manager`](crate::Manager); `Default` plus `with_*` setters.
///
/// ```
/// use std::time::Duration;
/// use umcp::{ManagerOptions, Options};
///
/// let options = ManagerOptions::default()
///     .with_client_options(Options::default().with_request_timeout(Duration::from_secs(60)))
///     .with_separator("__")
///     .with_startup_timeout(Duration::from_secs(20))
///     .with_reconnect_attempts(3)
///     .with_reconnect_delay(Duration::from_millis(250), Duration::from_secs(10))
///     .with_close_timeout(Duration::from_secs(3))
///     .with_queue_capacity(4096)
///     .without_cache();
/// assert_eq!(options.separator(), "__");
/// assert_eq!(options.startup_timeout(), Duration::from_secs(20));
/// assert!(options.cache_dir().is_none());
/// assert!(4096 <= ManagerOptions::MAX_QUEUE_CAPACITY);
/// ```
#[derive(Debug, Clone)]
pub struct ManagerOptions {
    pub(crate) client: Options,
    pub(crate) separator: String,
    pub(crate) portable_names: Option<usize>,
    pub(crate) startup_timeout: Duration,
    pub(crate) cache_dir: Option<PathBuf>,
    pub(crate) reconnect_attempts: u32,
    pub(crate) reconnect_initial: Duration,
    pub(crate) reconnect_max: Duration,
    pub(crate) close_timeout: Duration,
    pub(crate) queue_capacity: usize,
    pub(crate) health: Option<HealthCheck>,
    /// The handlers told which server asks.
    pub(crate) elicitation: Option<ServerElicitation>,
    pub(crate) sampling: Option<ServerSampling>,
    #[cfg(feature = "oauth")]
    pub(crate) auth: AuthOptions,
    /// The lock every server's tools are pinned to.
    pub(crate) tool_lock: Option<std::sync::Arc<Lockfile>>,
}

impl Default for ManagerOptions {
    fn default() -> ManagerOptions {
        ManagerOptions {
            client: Options::default(),
            separator: "__".into(),
            portable_names: None,
            startup_timeout: Duration::from_secs(30),
            cache_dir: ManagerOptions::default_cache_dir(),
            reconnect_attempts: 5,
            reconnect_initial: Duration::from_millis(500),
            reconnect_max: Duration::from_secs(30),
            close_timeout: Duration::from_secs(5),
            queue_capacity: 1024,
            health: None,
            elicitation: None,
            sampling: None,
            #[cfg(feature = "oauth")]
            auth: AuthOptions::default(),
            tool_lock: None,
        }
    }
}

impl ManagerOptions {
    /// The options every server's [`Client`](crate::Client) starts from (identity, request
    /// timeout, sampling, elicitation and roots handlers, notification callback). The
    /// manager sets the start-up timeout to each server's own, and a
    /// server's own `requestTimeoutMs` wins over the request timeout here. Notifications are
    /// delivered on [`Manager::notifications`](crate::Manager::notifications) (after the
    /// callback, if any), not on each client's own queue.
    ///
    /// See the example on [`ManagerOptions`].
    pub fn with_client_options(mut self, options: Options) -> ManagerOptions {
        self.client = options;
        self
    }

    /// Answers every server's `elicitation/create` with `handler`, called with the name of
    /// the server that asks (its [`ServerConfig::name`](crate::ServerConfig::name)) and the
    /// request. The spec has a client make clear to the user which server is asking; a
    /// handler set in [`with_client_options`](Self::with_client_options) is not told.
    ///
    /// It takes the place of that handler, for every server. The modes declared are still
    /// those of the client options ([`Options::with_elicitation_modes`]).
    ///
    /// ```
    /// use umcp::types::{ElicitRequestParams, ElicitResult};
    /// use umcp::ManagerOptions;
    ///
    /// let options = ManagerOptions::default().with_elicitation_handler(|server, request| {
    ///     log::info!("server `{server}` asks: {}", request.message());
    ///     match request {
    ///         ElicitRequestParams::Form(form) => Ok(ElicitResult::accept_defaults(&form)),
    ///         _ => Ok(ElicitResult::decline()),
    ///     }
    /// });
    /// # let _ = options;
    /// ```
    pub fn with_elicitation_handler<F>(mut self, handler: F) -> ManagerOptions
    where
        F: Fn(&str, ElicitRequestParams) -> Result<ElicitResult, ErrorObject>
            + Send
            + Sync
            + 'static,
    {
        self.elicitation = Some(ServerElicitation::new(handler));
        self
    }

    /// Answers every server's `sampling/createMessage` with `handler`, called with the name of
    /// the server that asks and the request: a host shows its user whose prompt is about to
    /// go to the model, and may treat servers differently. A handler set in
    /// [`with_client_options`](Self::with_client_options) is not told.
    ///
    /// It takes the place of that handler, for every server; whether tools may be offered
    /// is still the client options' ([`Options::with_sampling_tools`]).
    ///
    /// ```
    /// use umcp::jsonrpc::{ErrorCode, ErrorObject};
    /// use umcp::ManagerOptions;
    ///
    /// let options = ManagerOptions::default().with_sampling_handler(|server, request| {
    ///     log::info!("server `{server}` asks the model: {:?}", request.messages.len());
    ///     Err(ErrorObject::new(ErrorCode::INVALID_REQUEST, format!("`{server}` may not sample")))
    /// });
    /// # let _ = options;
    /// ```
    pub fn with_sampling_handler<F>(mut self, handler: F) -> ManagerOptions
    where
        F: Fn(&str, CreateMessageRequestParams) -> Result<CreateMessageResult, ErrorObject>
            + Send
            + Sync
            + 'static,
    {
        self.sampling = Some(ServerSampling::new(handler));
        self
    }

    /// What joins a server's name and a tool's or prompt's name (default `__`, giving
    /// `server__tool`). An empty separator is ignored.
    ///
    /// See the example on [`ManagerOptions`].
    pub fn with_separator(mut self, separator: impl Into<String>) -> ManagerOptions {
        let separator = separator.into();
        if !separator.is_empty() {
            self.separator = separator;
        }
        self
    }

    /// Makes every namespaced tool and prompt name fit LLM tool-calling APIs: only
    /// `A–Z a–z 0–9 _ -` (any other character, in a server's name, an item's or the
    /// separator, becomes `_`) and at most `max_chars` characters (64 for OpenAI's and
    /// Anthropic's APIs; at least 16). A longer name keeps its beginning and ends in `_` and
    /// eight hex digits of a hash of the whole name, the same in every process. Names that
    /// become equal are told apart by numbered suffixes, as any others, and every name still
    /// routes to its own server's item. Off by default: names are `server{separator}item` as
    /// they are.
    ///
    /// ```
    /// use umcp::ManagerOptions;
    ///
    /// let options = ManagerOptions::default().with_portable_names(64);
    /// assert_eq!(options.portable_names(), Some(64));
    /// ```
    pub fn with_portable_names(mut self, max_chars: usize) -> ManagerOptions {
        self.portable_names = Some(max_chars.max(16));
        self
    }

    /// The bound of portable names, if they are on.
    ///
    /// See the example on [`ManagerOptions::with_portable_names`].
    pub fn portable_names(&self) -> Option<usize> {
        self.portable_names
    }

    /// How namespaced names are made.
    pub(crate) fn name_shape(&self) -> super::names::Shape {
        super::names::Shape {
            separator: self.separator.clone(),
            portable: self.portable_names,
        }
    }

    /// How long connecting may take for servers whose configuration does not say (default
    /// 30 s): one deadline for the whole connect, the `server/discover` probe and `initialize`
    /// included (see [`Options::with_startup_timeout`]). A start that times out leaves the server
    /// [`Failed`](crate::ServerStatus::Failed) with an [`Error::Timeout`](crate::Error::Timeout)(crate::Error::Timeout)
    /// that carries a stdio server's last stderr lines, once the server is closed. Calls to a
    /// server that is still starting wait this long at most.
    ///
    /// See the example on [`ManagerOptions`].
    pub fn with_startup_timeout(mut self, timeout: Duration) -> ManagerOptions {
        self.startup_timeout = timeout;
        self
    }

    /// Where each server's last tool list is saved, so that it can be offered (marked stale)
    /// while the server starts next time. The default is [`ManagerOptions::default_cache_dir`].
    ///
    /// ```
    /// use std::path::Path;
    /// use umcp::{ManagerOptions, ServerConfig};
    ///
    /// let options = ManagerOptions::default().with_cache_dir("/var/cache/my-agent/mcp");
    /// let files = ServerConfig::stdio("files", "mcp-files");
    /// assert_eq!(options.cache_dir(), Some(Path::new("/var/cache/my-agent/mcp")));
    /// // One file per server configuration, so a changed command starts with an empty cache:
    /// let file = options.cache_file(&files);
    /// assert!(file.is_some_and(|file| file.starts_with("/var/cache/my-agent/mcp")));
    /// // Without a directory of its own, the manager caches under the user's cache directory:
    /// log::info!("{:?}", ManagerOptions::default_cache_dir());
    /// ```
    pub fn with_cache_dir(mut self, dir: impl Into<PathBuf>) -> ManagerOptions {
        self.cache_dir = Some(dir.into());
        self
    }

    /// Neither reads nor writes a tool cache.
    ///
    /// See the example on [`ManagerOptions`].
    pub fn without_cache(mut self) -> ManagerOptions {
        self.cache_dir = None;
        self
    }

    /// How many times in a row a failed start or a lost connection is retried before the
    /// server is marked failed for good (default 5; 0 never retries). A connection that
    /// stayed up longer than the largest reconnect delay starts the count over.
    ///
    /// See the example on [`ManagerOptions`].
    pub fn with_reconnect_attempts(mut self, attempts: u32) -> ManagerOptions {
        self.reconnect_attempts = attempts;
        self
    }

    /// The delay before the first retry and the largest delay; each retry doubles the
    /// previous delay (default 0.5 s up to 30 s). A connection that was up and then lost is
    /// first retried at once.
    ///
    /// See the example on [`ManagerOptions`].
    pub fn with_reconnect_delay(mut self, initial: Duration, max: Duration) -> ManagerOptions {
        self.reconnect_initial = initial;
        self.reconnect_max = max.max(initial);
        self
    }

    /// How long [`Manager::close`](crate::Manager::close) and
    /// [`Manager::remove`](crate::Manager::remove) wait for servers to shut down (default 5 s).
    ///
    /// See the example on [`ManagerOptions`].
    pub fn with_close_timeout(mut self, timeout: Duration) -> ManagerOptions {
        self.close_timeout = timeout;
        self
    }

    /// Checks that connected servers still answer: a server that has sent nothing for
    /// `interval` is pinged (`ping` in the handshake era, `server/discover` in the stateless
    /// era, as [`Client::ping`](crate::Client::ping) does), and one that then sends nothing at all within
    /// `timeout`, neither the answer nor anything else, is taken as hung. Its connection is
    /// closed (a stdio server is stopped: stdin closed, then TERM, then KILL) and it is
    /// reconnected as after a lost connection, its status showing the ping's
    /// [`Error::Timeout`](crate::Error::Timeout) in between. A server that answers with an error is alive.
    ///
    /// Off by default. A server that handles one request at a time and reports no progress
    /// says nothing during a long call either: choose `interval + timeout` longer than its
    /// longest call. A [`Manager::restart`](crate::Manager::restart) or stop cancels a ping
    /// under way.
    ///
    /// ```
    /// use std::time::Duration;
    /// use umcp::ManagerOptions;
    ///
    /// let options = ManagerOptions::default()
    ///     .with_health_check(Duration::from_secs(30), Duration::from_secs(10));
    /// assert_eq!(
    ///     options.health_check(),
    ///     Some((Duration::from_secs(30), Duration::from_secs(10)))
    /// );
    /// assert_eq!(ManagerOptions::default().health_check(), None);
    /// ```
    pub fn with_health_check(mut self, interval: Duration, timeout: Duration) -> ManagerOptions {
        self.health = Some(HealthCheck { interval, timeout });
        self
    }

    /// The health check's interval and timeout, when it is on.
    ///
    /// See the example on [`ManagerOptions::with_health_check`].
    pub fn health_check(&self) -> Option<(Duration, Duration)> {
        self.health.map(|h| (h.interval, h.timeout))
    }

    /// How many unread notifications, and separately status events, are kept (default 1024,
    /// at least 1 and at most [`ManagerOptions::MAX_QUEUE_CAPACITY`], so `usize::MAX` means
    /// "as many as allowed"); past that the oldest are dropped.
    ///
    /// See the example on [`ManagerOptions`].
    pub fn with_queue_capacity(mut self, capacity: usize) -> ManagerOptions {
        self.queue_capacity = capacity.clamp(1, ManagerOptions::MAX_QUEUE_CAPACITY);
        self
    }

    /// The largest queue capacity: each queue's room is taken up front, so a larger one
    /// would cost memory that is never used (or, near `usize::MAX`, cannot be had).
    ///
    /// See the example on [`ManagerOptions`].
    pub const MAX_QUEUE_CAPACITY: usize = 65_536;

    /// Who takes the user through authorization, for servers with
    /// [OAuth settings](crate::OAuthSettings) that have no usable token: `handler` is used as
    /// is for every such server (its own redirect URI wins over `redirectPort`).
    ///
    /// Without one (the default), such a server ends in
    /// [`NeedsAuthorization`](crate::ServerStatus::NeedsAuthorization) until
    /// [`Manager::authorize`](crate::Manager::authorize) is called. With one, the manager
    /// asks the user between connection attempts, never inside the start-up handshake; the
    /// server's status stays `Connecting` meanwhile, for as long as the handler allows. Once
    /// connected, the handler also serves step-up authorizations (a 403
    /// `insufficient_scope`) and a new authorization when tokens are revoked.
    ///
    /// See the example on [`ManagerOptions::with_token_store`].
    #[cfg(feature = "oauth")]
    pub fn with_authorization_handler(
        mut self,
        handler: Arc<dyn AuthorizationHandler>,
    ) -> ManagerOptions {
        self.auth.user = Some(UserStep::Handler(handler));
        self
    }

    /// The browser flow for servers with OAuth settings: each gets its own
    /// [`LoopbackHandler`](crate::auth::LoopbackHandler) listening on 127.0.0.1 at its
    /// `redirectPort` (any free port without one), which calls `opener` with the server's
    /// name and the authorization URL, then waits up to 5 minutes for the browser to come
    /// back. `opener` shows the URL: it prints it, or starts a browser with the URL as one
    /// argument, never through a shell. Otherwise as
    /// [`with_authorization_handler`](Self::with_authorization_handler).
    ///
    /// ```
    /// let options = umcp::ManagerOptions::default().with_loopback_authorization(|server, url| {
    ///     log::info!("{server}: open this page to authorize: {url}");
    ///     Ok(())
    /// });
    /// # let _ = options;
    /// ```
    #[cfg(feature = "oauth")]
    pub fn with_loopback_authorization(
        mut self,
        opener: impl Fn(&str, &str) -> std::io::Result<()> + Send + Sync + 'static,
    ) -> ManagerOptions {
        self.auth.user = Some(UserStep::Loopback(Arc::new(opener)));
        self
    }

    /// Prefers the device authorization grant (RFC 8628) for servers whose authorization
    /// server offers it: `prompt` shows the user, with the server's name, the page to visit on
    /// any device and the code to enter there, and the manager polls until the user is done.
    /// Servers whose authorization server does not offer it keep the handler of
    /// [`with_authorization_handler`](Self::with_authorization_handler) or
    /// [`with_loopback_authorization`](Self::with_loopback_authorization), which is still
    /// needed. As there, the user is asked between connection attempts, never inside the
    /// start-up handshake. A program without a browser at hand chooses it (over SSH, in a
    /// container).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use umcp::auth::{PasteHandler, PastePrompt};
    ///
    /// let paste = PasteHandler::new(|prompt: PastePrompt<'_>| {
    ///     eprintln!("{prompt}");
    ///     Ok(())
    /// });
    /// let options = umcp::ManagerOptions::default()
    ///     .with_authorization_handler(Arc::new(paste))
    ///     .with_device_authorization(|server, device| {
    ///         eprintln!("{server}: visit {} and enter {}", device.verification_uri, device.user_code);
    ///         Ok(())
    ///     });
    /// # let _ = options;
    /// ```
    #[cfg(feature = "oauth")]
    pub fn with_device_authorization(
        mut self,
        prompt: impl Fn(&str, &crate::auth::DeviceAuthorization) -> std::io::Result<()>
            + Send
            + Sync
            + 'static,
    ) -> ManagerOptions {
        self.auth.device = Some(Arc::new(prompt));
        self
    }

    /// Where OAuth credentials (client registrations and tokens) are kept. The default is a
    /// [`FileStore`](crate::auth::FileStore) at [`ManagerOptions::default_token_file`] (or,
    /// when there is no home directory, a [`MemoryStore`](crate::auth::MemoryStore) for the
    /// life of the options). Every server has its own entries, keyed by its name and its
    /// canonical URL (`name url`), so two servers at one URL keep separate credentials and a
    /// renamed server authorizes anew. Pass a `MemoryStore` to keep nothing on disk.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use umcp::auth::{FileStore, HeadlessHandler};
    /// use umcp::ManagerOptions;
    ///
    /// let store = Arc::new(FileStore::new("/home/me/.config/my-agent/tokens.json"));
    /// let options = ManagerOptions::default()
    ///     .with_token_store(store)
    ///     .with_authorization_handler(Arc::new(HeadlessHandler::new()));
    /// // Where the manager keeps tokens when not told otherwise:
    /// log::info!("{:?}", ManagerOptions::default_token_file());
    /// # let _ = options;
    /// ```
    #[cfg(feature = "oauth")]
    pub fn with_token_store(mut self, store: Arc<dyn TokenStore>) -> ManagerOptions {
        self.auth.store = store;
        self
    }

    /// The default token file, next to the tool cache: `oauth/tokens.json` in the directory
    /// that holds [`ManagerOptions::default_cache_dir`] (e.g. `~/.cache/umcp/oauth/tokens.json`).
    /// It is written with owner-only permissions. `None` when the environment names no home.
    ///
    /// See the example on [`ManagerOptions::with_token_store`].
    #[cfg(feature = "oauth")]
    pub fn default_token_file() -> Option<PathBuf> {
        super::auth::default_token_file()
    }

    /// Pins every server's tools to its part of `lock` (the entry under the server's name),
    /// failing closed on drift: a tool whose definition differs from the lock, or that the
    /// lock does not have, is hidden from [`Manager::known_tools`](crate::Manager::known_tools)
    /// and a call to it is refused with [`Error::ToolHidden`](crate::Error::ToolHidden) naming
    /// what changed; a server the lock does not have offers no tools. A server that announces a
    /// tool-list change is listed again, and what drifted is hidden and logged (at `warn`),
    /// never taken in silently; [`Manager::hidden_tools`](crate::Manager::hidden_tools) says
    /// what is hidden and why. See [`lock`](crate::lock) and
    /// [`Options::with_tool_lock`], which this sets for each server.
    ///
    /// ```no_run
    /// use umcp::lock::Lockfile;
    /// use umcp::{ConfigFile, Manager, ManagerOptions};
    ///
    /// # fn main() -> umcp::Result<()> {
    /// let file = ConfigFile::load(".mcp.json")?;
    /// let lock = Lockfile::load(Lockfile::beside(".mcp.json"))?;
    /// let manager = Manager::start(file.servers, ManagerOptions::default().with_tool_lock(lock));
    /// manager.wait_ready(std::time::Duration::from_secs(30));
    /// for hidden in manager.hidden_tools() {
    ///     log::warn!("{hidden}");
    /// }
    /// # Ok(()) }
    /// ```
    pub fn with_tool_lock(mut self, lock: Lockfile) -> ManagerOptions {
        self.tool_lock = Some(std::sync::Arc::new(lock));
        self
    }

    /// The lock the servers' tools are pinned to, if any.
    ///
    /// See the example on [`ManagerOptions::with_tool_lock`].
    pub fn tool_lock(&self) -> Option<&Lockfile> {
        self.tool_lock.as_deref()
    }

    /// The separator between server and tool names.
    ///
    /// See the example on [`ManagerOptions`].
    pub fn separator(&self) -> &str {
        &self.separator
    }

    /// The default start-up timeout.
    ///
    /// See the example on [`ManagerOptions`].
    pub fn startup_timeout(&self) -> Duration {
        self.startup_timeout
    }

    /// The tool cache directory, if the cache is on.
    ///
    /// See the example on [`ManagerOptions::with_cache_dir`].
    pub fn cache_dir(&self) -> Option<&std::path::Path> {
        self.cache_dir.as_deref()
    }

    /// The file where the tools of `server` are cached, if the cache is on.
    ///
    /// Its name is a hash of what starts the server (command, arguments, environment and
    /// working directory, or URL, headers and transport) with every value that may be a
    /// secret left out (environment and header values, secret-looking arguments, URL query
    /// values), so a changed configuration starts afresh and the name reveals no secret. It
    /// holds `{"version": 1, "server": name, "savedAt": unix seconds, "era": "legacy" or the
    /// stateless version spoken, "tools": [Tool, …]}`; deleting it is always safe (the next
    /// connect then probes the server's era again).
    ///
    /// Only its owner may read or write it (unix mode 0600, in a directory created 0700); it
    /// is written under an unpredictable temporary name, created exclusively, then renamed.
    /// A file others may read or write, or a symbolic link, is ignored: in a shared
    /// directory, another user could have planted it.
    ///
    /// See the example on [`ManagerOptions::with_cache_dir`].
    pub fn cache_file(&self, server: &ServerConfig) -> Option<PathBuf> {
        self.cache_dir
            .as_deref()
            .map(|dir| super::cache::file(dir, server))
    }

    /// The per-user cache directory for tool lists: `%LOCALAPPDATA%\umcp\cache\tools` on
    /// Windows, `~/Library/Caches/umcp/tools` on macOS, and `$XDG_CACHE_HOME/umcp/tools`
    /// (or `~/.cache/umcp/tools`) elsewhere. `None` when the environment names no home.
    ///
    /// See the example on [`ManagerOptions::with_cache_dir`].
    pub fn default_cache_dir() -> Option<PathBuf> {
        super::cache::user_base().map(|b| b.join("tools"))
    }

    /// The delay before retry number `failures` (1 for the first retry).
    pub(crate) fn backoff(&self, failures: u32) -> Duration {
        let doublings = failures.saturating_sub(1).min(20);
        self.reconnect_initial
            .saturating_mul(1 << doublings)
            .min(self.reconnect_max)
    }

    /// [`backoff`](Self::backoff) shortened by up to a quarter at random, so servers that
    /// failed together (a network outage, a laptop waking up) do not all retry in step.
    pub(crate) fn backoff_with_jitter(&self, failures: u32, server: &str) -> Duration {
        use std::collections::hash_map::DefaultHasher;
        use std::hash::{Hash, Hasher};
        let mut hasher = DefaultHasher::new();
        std::time::SystemTime::now().hash(&mut hasher);
        server.hash(&mut hasher);
        failures.hash(&mut hasher);
        let unit = (hasher.finish() >> 11) as f64 / (1u64 << 53) as f64;
        // Scaling the whole delay by 0.75..1 overflows (a panic in `mul_f64`) when it is
        // near `Duration::MAX`; scaling only the quarter that may be cut never does.
        let delay = self.backoff(failures);
        delay.saturating_sub((delay / 4).mul_f64(1.0 - unit))
    }
}

#[cfg(test)]
mod tests;
