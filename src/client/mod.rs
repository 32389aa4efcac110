//! The blocking MCP client: connect, handshake, calls, notifications and close.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::Receiver;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::{Closed, Error, Result};
use crate::transport::Connect;
use crate::types::{Implementation, InitializeResult, ServerCapabilities};

mod cache;
mod cancel;
mod discover;
mod era;
mod era_transport;
mod errors;
mod late;
mod lifecycle;
mod listen;
mod meta;
mod methods;
mod modern;
mod mrtr;
mod notifications;
mod one_shot;
mod options;
mod pending;
mod request_options;
mod requests;
mod router;
mod router_thread;
mod sampling;
mod senders;
mod server_requests;
mod session;

pub use cancel::CancelHandle;
pub use era::{Era, ProtocolMode, DEFAULT_MAX_INPUT_ROUNDS, DEFAULT_PROBE_TIMEOUT};
pub use late::LateResponse;
pub use listen::{FreshTools, Subscription, SubscriptionEnd, SubscriptionEvent};
pub use notifications::Notifications;
#[cfg(feature = "http")]
pub use one_shot::one_shot;
pub use options::Options;
pub use request_options::RequestOptions;

use options::lock;
use session::Shared;

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
    /// Connects with default [`Options`]: probes with `server/discover` and speaks the era the
    /// server answers in (see [`ProtocolMode::Auto`]), running `initialize` for a
    /// handshake-era server.
    ///
    /// See the example on [`Client`].
    ///
    /// # Errors
    ///
    /// Fails when the transport cannot start ([`Error::Spawn`], [`Error::Io`], HTTP errors),
    /// the server dies or times out during the handshake ([`Error::Closed`], [`Error::Timeout`],
    /// both with a stdio server's last stderr lines), or answers with a protocol version this
    /// client does not speak ([`Error::Unsupported`]).
    pub fn connect(transport: impl Connect + 'static) -> Result<Client> {
        Client::connect_with(transport, Options::default())
    }

    /// Connects with `options` and sets up the protocol era they ask for
    /// ([`Options::with_protocol_mode`]): `server/discover`, `initialize`, or both in turn.
    ///
    /// When the server rejects the very first request with HTTP 400, 404 or 405 and the
    /// transport names a fallback (the `auto` HTTP kind falls back to legacy SSE), the
    /// fallback is tried. Authorization errors never fall back.
    ///
    /// The init timeout ([`Options::with_init_timeout`]) bounds the whole connect: the
    /// `server/discover` probe, `initialize`, and any new start or fallback in between (time
    /// spent obtaining credentials aside). A connection that fails is then closed, within the transport's own bounds (for stdio,
    /// [`StdioConfig::close_grace`](crate::StdioConfig::close_grace) and
    /// [`kill_grace`](crate::StdioConfig::kill_grace) at most when the server does not exit).
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use umcp::types::Implementation;
    /// use umcp::{Client, Options, StdioConfig};
    ///
    /// # fn main() -> umcp::Result<()> {
    /// let options = Options::default()
    ///     .with_client_info(Implementation::new("my-tool", "1.0.0"))
    ///     .with_request_timeout(Duration::from_secs(10));
    /// let server = StdioConfig::new("npx")
    ///     .args(["-y", "@modelcontextprotocol/server-everything"]);
    /// let client = Client::connect_with(server, options)?;
    /// log::info!("connected to {}", client.server_info().name);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Client::connect`].
    pub fn connect_with(transport: impl Connect + 'static, mut options: Options) -> Result<Client> {
        let started = Instant::now();
        let mut deadline = crate::transport::deadline_after(started, options.init_timeout);
        let mut connector: Box<dyn Connect> = Box::new(transport);
        // The error that sent us to a fallback: when the fallback is refused just as plainly,
        // this one (a 400 with the server's reason, say) says more than the fallback's 405.
        let mut first: Option<Error> = None;
        loop {
            let client = match Client::start(connector.as_ref(), options.clone()) {
                Ok(client) => client,
                Err(err) => return Err(after_fallback(first, err)),
            };
            // One deadline for every attempt; credentials obtained meanwhile push it back.
            *lock(&client.shared.handshake_deadline) = deadline;
            let established = discover::establish(&client.shared, &connector.describe());
            deadline = *lock(&client.shared.handshake_deadline);
            let err = match established {
                Ok(discover::Established::Ready) => return Ok(client),
                Ok(discover::Established::Restart) => {
                    // The server exited on the probe (at once, or once it was up after a
                    // slow start): start it again for `initialize`.
                    client.close();
                    options = options.with_protocol_mode(ProtocolMode::Legacy);
                    continue;
                }
                Ok(discover::Established::Again) => {
                    // The cached verdict was wrong and is forgotten: the next round probes.
                    client.close();
                    continue;
                }
                Err(err) => err,
            };
            let elapsed = started.elapsed();
            client.close();
            let err = timed_out_connect(err, elapsed, &client);
            if first.is_some() {
                return Err(after_fallback(first, err));
            }
            match refused(&err).then(|| connector.fallback()).flatten() {
                Some(next) => {
                    log::debug!(
                        "{} answered {err}; falling back to {}",
                        connector.describe(),
                        next.describe()
                    );
                    first = Some(err);
                    connector = next;
                }
                None => return Err(err),
            }
        }
    }

    fn start(connector: &dyn Connect, options: Options) -> Result<Client> {
        let (core, channels) = router::Core::new(&options);
        let transport = connector.connect(core.inbox())?;
        log::debug!(
            "connected to {} over {}",
            connector.describe(),
            transport.kind()
        );
        let (done_tx, threads_done) = crossbeam_channel::bounded(0);
        let shared = Arc::new(Shared::new(transport, options, core, done_tx.clone()));
        let client = Client {
            shared,
            threads_done,
        };
        // On failure the client's drop closes the transport.
        router_thread::spawn(&client.shared, channels, done_tx).map_err(Error::io)?;
        Ok(client)
    }

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
        Notifications::new(self.shared.core.notify_rx.clone())
    }

    /// How many notifications were dropped because the queue was full (the oldest unread one
    /// goes; see [`Options::with_notification_capacity`]).
    ///
    /// See the example on [`Client::notifications`].
    pub fn notifications_dropped(&self) -> u64 {
        self.shared
            .core
            .dropped
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
        self.shared
            .core
            .closing
            .store(true, std::sync::atomic::Ordering::Release);
        self.shared.transport.close();
        // The transport reports the close, which fails what is pending and stops the router;
        // this covers a transport that does not.
        self.shared.core.close_all(Arc::new(Closed {
            reason: "closed by client".into(),
            ..Closed::default()
        }));
        self.shared.stop_senders();
        // Threads that do not finish in time (a handler waiting for a user) are left to end
        // on their own.
        match self.threads_done.recv_timeout(ROUTER_JOIN_TIMEOUT) {
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => {
                log::debug!("client threads did not stop within {ROUTER_JOIN_TIMEOUT:?}");
            }
            _ => {
                let threads = std::mem::take(&mut *lock(&self.shared.threads));
                for handle in threads {
                    if handle.thread().id() != std::thread::current().id() {
                        let _ = handle.join();
                    }
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

/// Whether a transport refused the very first request in a way its fallback may not.
fn refused(err: &Error) -> bool {
    matches!(err.http_status(), Some(400 | 404 | 405))
}

/// The error to report once a fallback failed too: the first refusal (a 400 with the server's
/// reason, say) when the fallback was refused just as plainly (a 405 to its GET), since it
/// says more; the fallback's own error when that got further (it timed out, or needs
/// authorization), since that is the one to act on.
fn after_fallback(first: Option<Error>, err: Error) -> Error {
    match first {
        Some(first) if refused(&err) => {
            log::debug!("the fallback was refused too ({err}); reporting {first}");
            first
        }
        Some(first) => {
            log::debug!("falling back after {first} failed with {err}");
            err
        }
        None => err,
    }
}

/// A connect that timed out says how long it took in all and, like a server that exits, what
/// the server wrote on stderr (read once the connection is closed, so that nothing is missed).
fn timed_out_connect(err: Error, elapsed: Duration, client: &Client) -> Error {
    match err {
        Error::Timeout {
            method,
            kind,
            stderr_tail,
            ..
        } => Error::Timeout {
            method,
            elapsed,
            kind,
            stderr_tail: stderr_tail.or_else(|| {
                let closed = client.closed()?;
                let tail = closed.stderr_tail.as_deref()?;
                (!tail.trim().is_empty()).then(|| Arc::new(tail.to_owned()))
            }),
        },
        other => other,
    }
}

fn decode<T: DeserializeOwned>(method: &str, value: Value) -> Result<T> {
    serde_json::from_value(value)
        .map_err(|e| Error::Protocol(format!("malformed `{method}` result: {e}")))
}

#[cfg(test)]
mod tests;
