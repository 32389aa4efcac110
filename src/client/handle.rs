//! The `Client` handle: what one connection is to its callers, what it tells about the
//! server, and how it closes.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use crossbeam_channel::Receiver;

use crate::error::Closed;
use crate::types::{Implementation, InitializeResult, ServerCapabilities};

use super::engine::notifications::Notifications;
use super::era::session::Session;
use super::era::state::{Era, ProtocolMode};
use super::follow::route::Follower;
use super::screen::Screened;
use super::tasks::TaskTools;

/// A connection to one MCP server.
///
/// `Client` is `Send + Sync`: share it between threads (for example in an `Arc`) and call it from
/// all of them at once; requests are pipelined over the one connection and each caller gets its own
/// response. Every call has a deadline (the client's request timeout unless the call's
/// [`RequestOptions`](crate::RequestOptions), given through [`Client::with`], say otherwise).
/// Dropping the client closes the connection.
///
/// ```no_run
/// use umcp::{Client, StdioConfig};
///
/// # fn main() -> umcp::Result<()> {
/// let client = Client::connect(StdioConfig::new("npx").args(["-y", "@modelcontextprotocol/server-everything"]))?;
/// for tool in client.list_all_tools()? {
///     log::info!("{}", tool.name);
/// }
/// let result = client.call_tool("echo", serde_json::json!({ "message": "hi" }))?;
/// log::info!("{}", result.text());
/// # Ok(()) }
/// ```
///
/// # Threads and queues
///
/// A call runs on its caller's thread. Besides its transport's threads (a stdio server's
/// five, six with a stderr callback, are listed in [`transport::stdio`](crate::transport::stdio)),
/// a connection runs one router thread, which hands the server's requests to handler threads
/// and runs the notification callback and the late-response handler, and at most
/// [`Options::with_handler_threads`](crate::Options::with_handler_threads) handler threads,
/// each started when first needed: a stdio client runs six threads, plus its handler threads.
/// Over HTTP one more thread sends the router's own replies, and up to 4 sending threads,
/// each started when first needed, send what must not hold up a caller or the router.
///
/// Every queue is bounded, with a policy when full:
///
/// - unread notifications: at most
///   [`Options::with_notification_capacity`](crate::Options::with_notification_capacity)
///   (1,024) and [`NOTIFICATION_BYTES`](crate::NOTIFICATION_BYTES) (16 MiB) together; past
///   either, the oldest is dropped and counted ([`Client::notifications_dropped`]);
/// - the router's: 64 server requests, callback notifications and late responses; then the
///   reading of the server's output waits for room, save that a notification for a callback
///   that has not made room within a second is dropped and counted, so a callback that
///   blocks loses notifications but never delays responses
///   ([`Options::with_notification_callback`](crate::Options::with_notification_callback));
/// - server requests beyond the handler threads and as many again waiting for them get a
///   JSON-RPC error at once, and the router's own replies are never waited for
///   ([`Options::with_handler_threads`](crate::Options::with_handler_threads)).
pub struct Client {
    pub(super) session: Arc<Session>,
    /// The subscriptions and the response cache.
    pub(super) follower: Arc<Follower>,
    /// Disconnects once the router, handler and sending threads have all ended.
    pub(super) threads_done: Receiver<()>,
    /// The tools that must run as tasks (handshake era), as far as the listings told.
    pub(super) task_tools: Mutex<TaskTools>,
    /// The tools it offers, and what its listings told of the others.
    pub(super) screen: Screened,
}

impl Client {
    /// The full `initialize` result of the current session. In the stateless era it is built
    /// from the `server/discover` result: the version in use, the capabilities, the
    /// instructions and the `serverInfo` of its `_meta` (kept up to date from later results).
    ///
    /// See the example on [`Client::server_info`].
    pub fn initialize_result(&self) -> Arc<InitializeResult> {
        self.session
            .initialize_result()
            .unwrap_or_else(|| Arc::new(InitializeResult::new("", Implementation::new("", ""))))
    }

    /// The server's name, version and other self-description.
    ///
    /// ```no_run
    /// # fn main() -> umcp::Result<()> {
    /// # let client = umcp::Client::connect(umcp::StdioConfig::new("server"))?;
    /// let info = client.server_info();
    /// log::info!(
    ///     "{} {} over {}, protocol {} ({:?} era)",
    ///     info.name,
    ///     info.version,
    ///     client.transport_kind(),
    ///     client.protocol_version(),
    ///     client.era(),
    /// );
    /// if let Some(instructions) = client.instructions() {
    ///     log::info!("{instructions}");
    /// }
    /// // Everything the server answered, as it answered it:
    /// let answered = client.initialize_result();
    /// log::debug!("{:?}", answered.capabilities);
    /// if client.server_capabilities().tools.is_some() {
    ///     log::info!("{} tools", client.list_all_tools()?.len());
    /// }
    /// # Ok(()) }
    /// ```
    pub fn server_info(&self) -> Implementation {
        self.initialize_result().server_info.clone()
    }

    /// What the server advertised it can do.
    ///
    /// See the example on [`Client::server_info`].
    pub fn server_capabilities(&self) -> ServerCapabilities {
        self.initialize_result().capabilities.clone()
    }

    /// The extensions the server declared (`capabilities.extensions`), by id, with their
    /// settings exactly as the server wrote them (`{}`, nested `null`s and numbers included);
    /// empty when it declared none.
    ///
    /// ```no_run
    /// # fn main() -> umcp::Result<()> {
    /// # let client = umcp::Client::connect(umcp::StdioConfig::new("server"))?;
    /// if let Some(ui) = client.server_extensions().get("io.modelcontextprotocol/ui") {
    ///     log::info!("the server renders apps: {ui}");
    /// }
    /// # Ok(()) }
    /// ```
    pub fn server_extensions(&self) -> serde_json::Map<String, serde_json::Value> {
        self.session.extensions()
    }

    /// The server's usage instructions, if it gave any.
    ///
    /// See the example on [`Client::server_info`].
    pub fn instructions(&self) -> Option<String> {
        self.initialize_result().instructions.clone()
    }

    /// The negotiated protocol version, e.g. `2025-11-25`.
    ///
    /// See the example on [`Client::server_info`].
    pub fn protocol_version(&self) -> String {
        self.initialize_result().protocol_version.clone()
    }

    /// The transport the connection ended up on: `"stdio"`, `"streamable-http"` or `"sse"`.
    ///
    /// See the example on [`Client::server_info`].
    pub fn transport_kind(&self) -> &'static str {
        self.session.conn.transport.kind()
    }

    /// The protocol era the connection speaks: [`Era::Legacy`] after `initialize`,
    /// [`Era::Modern`] after `server/discover`. Either way [`Client::server_info`],
    /// [`Client::server_capabilities`], [`Client::instructions`] and
    /// [`Client::protocol_version`] answer alike (see [`Client::initialize_result`]).
    ///
    /// See the example on [`Client::server_info`].
    pub fn era(&self) -> Era {
        self.session.era.era()
    }

    /// The era verdict for this server, to hand to a later connection with
    /// [`Options::with_protocol_mode`](crate::Options::with_protocol_mode) so it skips the
    /// probe: [`ProtocolMode::Legacy`], or a pin to the stateless version in use. Within one
    /// process [`ProtocolMode::Auto`] remembers it already, and forgets it when the server
    /// contradicts it. A verdict passed as the mode is held to, with no fallback: it suits
    /// another process, with `Auto` to connect again with when it fails.
    ///
    /// ```no_run
    /// use umcp::{Client, Options, StdioConfig};
    ///
    /// # fn main() -> umcp::Result<()> {
    /// # let client = umcp::Client::connect(umcp::StdioConfig::new("server"))?;
    /// let verdict = client.verdict();
    /// // A later connection to the same server skips the probe:
    /// let options = Options::default().with_protocol_mode(verdict);
    /// let again = Client::connect_with_options(StdioConfig::new("server"), options)?;
    /// # let _ = again;
    /// # Ok(()) }
    /// ```
    pub fn verdict(&self) -> ProtocolMode {
        match self.session.era.modern_version() {
            Some(version) => ProtocolMode::Pinned(version),
            None => ProtocolMode::Legacy,
        }
    }

    /// The queue of server notifications. See [`Notifications`].
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use umcp::types::ServerNotification;
    ///
    /// # fn main() -> umcp::Result<()> {
    /// # let client = umcp::Client::connect(umcp::StdioConfig::new("server"))?;
    /// let notifications = client.notifications();
    /// while let Some(notification) = notifications.recv_timeout(Duration::from_secs(1)) {
    ///     match notification {
    ///         ServerNotification::ToolListChanged => {
    ///             log::info!("{} tools now", client.list_all_tools()?.len());
    ///         }
    ///         ServerNotification::LoggingMessage(message) => log::info!("{}", message.data),
    ///         other => log::debug!("{}", other.method()),
    ///     }
    /// }
    /// if client.notifications_dropped() > 0 {
    ///     log::warn!("{} notifications were dropped unread", client.notifications_dropped());
    /// }
    /// # Ok(()) }
    /// ```
    pub fn notifications(&self) -> Notifications {
        Notifications::new(self.session.conn.core.notes.receiver().clone())
    }

    /// How many notifications were dropped because the queue was full, by count or by bytes (the
    /// oldest unread one goes; see
    /// [`Options::with_notification_capacity`](crate::Options::with_notification_capacity)),
    /// or because the notification callback had not made room for them within a second (see
    /// [`Options::with_notification_callback`](crate::Options::with_notification_callback)).
    ///
    /// See the example on [`Client::notifications`].
    pub fn notifications_dropped(&self) -> u64 {
        self.session.conn.core.dropped.load(Ordering::Relaxed)
    }

    /// How many messages the server has sent so far: a counter that moves while it talks.
    pub(crate) fn messages_received(&self) -> u64 {
        self.session.conn.core.received.load(Ordering::Relaxed)
    }

    /// Why the connection closed, or `None` while it is open.
    ///
    /// When the server exits, every pending request fails at once with
    /// [`Error::Closed`](crate::Error::Closed), carrying this: the exit status and the last
    /// lines of the server's stderr. A `Client` is one connection and stays closed once its
    /// server is gone: connect again (the era verdict is remembered, so a handshake-era server
    /// is not probed again), or let a [`Manager`](crate::Manager) restart the server with
    /// backoff and reopen its subscriptions.
    ///
    /// See the example on [`Client::close`].
    pub fn closed(&self) -> Option<Arc<Closed>> {
        self.session.closed()
    }

    /// Closes the connection: pending requests fail with [`Error::Closed`](crate::Error::Closed),
    /// and the transport shuts down within its bounded grace periods. Idempotent; also done on
    /// drop. [`Client::closed`] then reads plainly `closed: closed by client`, without the
    /// server's stderr (a healthy server's start-up banner stays in
    /// [`Closed::stderr_tail`](crate::Closed::stderr_tail)).
    ///
    /// ```no_run
    /// # fn main() -> umcp::Result<()> {
    /// # let client = umcp::Client::connect(umcp::StdioConfig::new("server"))?;
    /// client.close();
    /// if let Some(closed) = client.closed() {
    ///     assert_eq!(closed.reason, "closed by client");
    /// }
    /// assert!(matches!(client.ping(), Err(umcp::Error::Closed(_))));
    /// # Ok(()) }
    /// ```
    pub fn close(&self) {
        self.shut_down(false);
    }

    /// Closes a client whose server failed its handshake: see [`Transport::abort`].
    ///
    /// [`Transport::abort`]: crate::transport::Transport::abort
    pub(crate) fn abort(&self) {
        self.shut_down(true);
    }

    fn shut_down(&self, abort: bool) {
        self.session.conn.shut_down(abort, &self.threads_done);
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        self.close();
    }
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("transport", &self.session.conn.transport.kind())
            .field("closed", &self.closed().is_some())
            .finish_non_exhaustive()
    }
}
