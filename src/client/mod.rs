//! The blocking MCP client: connect, handshake, calls, notifications and close.

use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::Receiver;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::{Closed, Error, Result, CLOSED_BY_CLIENT};
use crate::types::{Implementation, InitializeResult, ServerCapabilities};

mod connect;
mod connect_cancel;
mod elicitation;
mod engine;
mod era;
mod errors;
mod follow;
mod methods;
mod modern;
mod one_shot;
mod options;
mod requests;
mod sampling;
mod server_requests;

pub use elicitation::ElicitationModes;
pub use engine::cancel::CancelHandle;
pub use engine::late::LateResponse;
pub use engine::notifications::Notifications;
pub(crate) use engine::queued;
pub use engine::queued::NOTIFICATION_BYTES;
pub use engine::request_options::RequestOptions;
pub use era::state::{Era, ProtocolMode, DEFAULT_MAX_INPUT_ROUNDS, DEFAULT_PROBE_TIMEOUT};
pub use follow::listen::{FreshTools, Subscription, SubscriptionEnd, SubscriptionEvent};
#[cfg(feature = "http")]
pub use one_shot::one_shot;
pub use options::Options;

use crate::sync::lock;
use era::session::Shared;

/// How long `close` waits for the router, handler and sending threads after the transport
/// has closed; a thread still inside a user's handler is left to finish on its own.
const ROUTER_JOIN_TIMEOUT: Duration = Duration::from_secs(2);

/// A connection to one MCP server.
///
/// `Client` is `Send + Sync`: share it between threads (for example in an `Arc`) and call it
/// from all of them at once; requests are pipelined over the one connection and each caller
/// gets its own response. Every call has a deadline (the client's request timeout unless the
/// call's [`RequestOptions`] say otherwise). Dropping the client closes the connection.
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
pub struct Client {
    shared: Arc<Shared>,
    /// Disconnects once the router, handler and sending threads have all ended.
    threads_done: Receiver<()>,
}

impl Client {
    /// The full `initialize` result of the current session. In the stateless era it is built
    /// from the `server/discover` result: the version in use, the capabilities, the
    /// instructions and the `serverInfo` of its `_meta` (kept up to date from later results).
    ///
    /// See the example on [`Client::server_info`].
    pub fn initialize_result(&self) -> Arc<InitializeResult> {
        match self.shared.init.read() {
            Ok(init) => init.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
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
        self.shared.transport.kind()
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
        Notifications::new(self.shared.core.notes.receiver().clone())
    }

    /// How many notifications were dropped because the queue was full, by count or by bytes
    /// (the oldest unread one goes; see [`Options::with_notification_capacity`]).
    ///
    /// See the example on [`Client::notifications`].
    pub fn notifications_dropped(&self) -> u64 {
        self.shared
            .core
            .dropped
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// How many messages the server has sent so far: a counter that moves while it talks.
    pub(crate) fn messages_received(&self) -> u64 {
        self.shared
            .core
            .received
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Why the connection closed, or `None` while it is open.
    ///
    /// See the example on [`Client::close`].
    pub fn closed(&self) -> Option<Arc<Closed>> {
        self.shared.closed()
    }

    /// Closes the connection: pending requests fail with [`Error::Closed`], and the transport
    /// shuts down within its bounded grace periods. Idempotent; also done on drop.
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
        self.shared
            .core
            .closing
            .store(true, std::sync::atomic::Ordering::Release);
        let by_client = Arc::new(Closed {
            reason: CLOSED_BY_CLIENT.into(),
            ..Closed::default()
        });
        // Callers waiting on the server are released now, not once the server has exited
        // (which may take the close grace and the kill).
        self.shared.core.release_pending(&by_client);
        if abort {
            self.shared.transport.abort();
        } else {
            self.shared.transport.close();
        }
        // The transport reports the close, which fails what is pending and stops the router;
        // this covers a transport that does not.
        self.shared.core.close_all(by_client);
        self.shared.stop_senders();
        // Closed from one of the client's own threads (a callback or a handler): that thread
        // cannot end while it waits here, so waiting would only cost the whole timeout. Every
        // thread ends once the callback returns.
        let me = std::thread::current().id();
        if lock(&self.shared.threads)
            .iter()
            .any(|handle| handle.thread().id() == me)
        {
            return;
        }
        // Threads that do not finish in time (a handler waiting for a user) are left to end
        // on their own.
        match self.threads_done.recv_timeout(ROUTER_JOIN_TIMEOUT) {
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => {
                log::debug!("client threads did not stop within {ROUTER_JOIN_TIMEOUT:?}");
            }
            _ => {
                let threads = std::mem::take(&mut *lock(&self.shared.threads));
                for handle in threads {
                    let _ = handle.join();
                }
            }
        }
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
            .field("transport", &self.shared.transport.kind())
            .field("closed", &self.closed().is_some())
            .finish_non_exhaustive()
    }
}

fn decode<T: DeserializeOwned>(method: &str, value: Value) -> Result<T> {
    serde_json::from_value(value)
        .map_err(|e| Error::Protocol(format!("malformed `{method}` result: {e}")))
}

#[cfg(test)]
mod tests;
