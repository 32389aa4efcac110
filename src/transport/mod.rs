//! Transports move JSON-RPC messages to and from a server and know nothing of MCP methods.
//!
//! A transport is started by a [`Connect`] implementation, which receives an [`Inbox`]: every
//! message the server sends, whatever the stream it arrived on, is delivered there, and the end
//! of the connection is reported there once. Outgoing messages go through
//! [`Transport::send`], which must return by the deadline it is given.
//!
//! Some protocols route on per-message HTTP headers (MCP 2026-07-28 names the method, the tool
//! and selected arguments in `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*`). A transport still
//! never looks inside a message for them: the layer above computes them and hands them over
//! with the message through [`Transport::send_with_headers`], which transports without headers
//! need not implement.
//!
//! Delivery is where a response's one hand-off happens: the client builds its [`Inbox`] around
//! its pending table, so the transport's reading thread puts a response straight into the slot
//! its caller sleeps on (prefer [`Inbox::deliver_text`] when a message arrives as text: the
//! result is then decoded once, by the caller, into the type it wants). Only notifications and
//! server requests queue for the client's router thread.
//!
//! The built-in transports are [`StdioConfig`] (a child process) and, with the `http` feature,
//! Streamable HTTP and legacy HTTP+SSE. Implement [`Connect`] and [`Transport`] to plug in
//! another one (an in-memory pair for tests, a TCP socket, …).
//!
//! A transport that wraps another, here to log every message it sends:
//!
//! ```no_run
//! use std::time::Instant;
//! use umcp::jsonrpc::{Message, RequestId};
//! use umcp::transport::{Connect, Inbox, SessionEvent, Transport};
//! use umcp::{Client, StdioConfig};
//!
//! struct Logged(Box<dyn Connect>);
//!
//! impl Connect for Logged {
//!     fn connect(&self, inbox: Inbox) -> umcp::Result<Box<dyn Transport>> {
//!         Ok(Box::new(LoggedTransport(self.0.connect(inbox)?)))
//!     }
//!
//!     fn fallback(&self) -> Option<Box<dyn Connect>> {
//!         let next = self.0.fallback()?;
//!         Some(Box::new(Logged(next)))
//!     }
//!
//!     fn describe(&self) -> String {
//!         format!("{} (logged)", self.0.describe())
//!     }
//! }
//!
//! struct LoggedTransport(Box<dyn Transport>);
//!
//! impl Transport for LoggedTransport {
//!     fn send(&self, message: &Message, deadline: Instant) -> umcp::Result<()> {
//!         log::trace!("-> {}", message.encode());
//!         self.0.send(message, deadline)
//!     }
//!
//!     fn send_with_headers(
//!         &self,
//!         message: &Message,
//!         deadline: Instant,
//!         headers: &[(String, String)],
//!     ) -> umcp::Result<()> {
//!         log::trace!("-> {}", message.encode());
//!         self.0.send_with_headers(message, deadline, headers)
//!     }
//!
//!     fn send_waits_for_peer(&self) -> bool {
//!         self.0.send_waits_for_peer()
//!     }
//!
//!     fn abandon(&self, id: &RequestId) {
//!         self.0.abandon(id)
//!     }
//!
//!     fn session_event(&self, event: SessionEvent<'_>) {
//!         self.0.session_event(event)
//!     }
//!
//!     fn close(&self) {
//!         self.0.close()
//!     }
//!
//!     fn kind(&self) -> &'static str {
//!         self.0.kind()
//!     }
//! }
//!
//! let client = Client::connect(Logged(Box::new(StdioConfig::new("mcp-server-time"))))?;
//! # let _ = client;
//! # Ok::<(), umcp::Error>(())
//! ```

use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};

use crate::error::{Closed, Error, Result};
use crate::jsonrpc::{DecodeError, Message, Payload, RequestId};

#[cfg(feature = "http")]
pub mod http;
pub mod sse;
pub mod stdio;

pub use stdio::{EnvPolicy, StdioConfig};

/// One live connection to a server.
///
/// Implementations are shared between threads: `send` may be called from many threads at once.
///
/// See the example in the [`transport`](crate::transport) module.
pub trait Transport: Send + Sync {
    /// Sends one message, returning once it has been handed over, or with an error at the
    /// latest when `deadline` passes ([`Error::Timeout`] with
    /// [`TimeoutKind::Write`](crate::TimeoutKind::Write) when the peer does not take it).
    ///
    /// Replies to requests do not come back from `send`; they arrive in the [`Inbox`].
    ///
    /// See the example in the [`transport`](crate::transport) module.
    ///
    /// # Errors
    ///
    /// Any error means the message was not delivered. [`Error::Closed`]
    /// means it never will be on this connection.
    fn send(&self, message: &Message, deadline: Instant) -> Result<()>;

    /// Sends one message with per-message headers the layer above derived from it.
    ///
    /// This is how protocol-level routing information reaches a transport that knows no MCP
    /// methods: the client computes the headers of the stateless protocol (`Mcp-Method`,
    /// `Mcp-Name`, `Mcp-Param-*`, `MCP-Protocol-Version`) from the request and hands them over
    /// with it. HTTP transports add them to the request that carries the message; transports
    /// without headers (stdio) ignore them, which is the default.
    ///
    /// See the example in the [`transport`](crate::transport) module.
    ///
    /// # Errors
    ///
    /// As [`Transport::send`].
    fn send_with_headers(
        &self,
        message: &Message,
        deadline: Instant,
        _headers: &[(String, String)],
    ) -> Result<()> {
        self.send(message, deadline)
    }

    /// Whether `send` may wait for the server (an HTTP POST waits for its status, and often
    /// for the reply) rather than only queue the message. The client then sends cancellable
    /// requests and cancellation notices from a few threads of its own, so that a caller never
    /// waits on a send it no longer wants. `true` unless a transport says otherwise.
    ///
    /// See the example in the [`transport`](crate::transport) module.
    fn send_waits_for_peer(&self) -> bool {
        true
    }

    /// Tells the transport that nobody waits for the response to `id` any more (timeout or
    /// cancel), so it can stop reading a stream that only carries that response.
    ///
    /// See the example in the [`transport`](crate::transport) module.
    fn abandon(&self, _id: &RequestId) {}

    /// Tells the transport about the session set up by the layer above.
    ///
    /// See the example in the [`transport`](crate::transport) module.
    fn session_event(&self, _event: SessionEvent<'_>) {}

    /// Closes the connection within a bounded time. Idempotent; the inbox gets its
    /// [`Inbound::Closed`] if it has not already.
    ///
    /// See the example in the [`transport`](crate::transport) module.
    fn close(&self);

    /// The transport's kind, e.g. `"stdio"`, `"streamable-http"` or `"sse"`.
    ///
    /// See the example in the [`transport`](crate::transport) module.
    fn kind(&self) -> &'static str;
}

/// Stands for "no deadline" where an `Instant` is needed and a user's duration does not fit.
const FAR_FUTURE: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

/// `start + duration`, or a point far in the future when that does not fit: a user's
/// `Duration::MAX` means "no limit", never a panic.
pub(crate) fn deadline_after(start: Instant, duration: Duration) -> Instant {
    start
        .checked_add(duration)
        .or_else(|| start.checked_add(FAR_FUTURE))
        .unwrap_or(start)
}

/// What the layer above tells a transport about the session it runs over it.
///
/// See the example in the [`transport`](crate::transport) module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SessionEvent<'a> {
    /// A protocol version was negotiated (HTTP sends it as `MCP-Protocol-Version` from now on).
    Negotiated {
        /// The negotiated version, e.g. `2025-11-25`.
        protocol_version: &'a str,
    },
    /// The session is fully set up (MCP: `notifications/initialized` was sent), so
    /// server-initiated streams may be opened.
    Ready,
    /// The session is gone and a new one is about to be set up: drop session state (HTTP:
    /// the session id, the protocol-version header and the GET stream). Also ends
    /// [`Stateless`](SessionEvent::Stateless).
    Reset,
    /// The layer above speaks a stateless protocol (MCP 2026-07-28): keep no session (HTTP:
    /// ignore session ids, so no `DELETE` either), open no server-initiated stream, and do not
    /// resume a broken response stream (its request is lost; the layer above decides).
    /// Per-message headers come through [`Transport::send_with_headers`].
    Stateless,
}

/// Starts a transport. Implemented by the transport configurations.
///
/// See the example in the [`transport`](crate::transport) module.
pub trait Connect: Send + Sync {
    /// Starts the transport; server messages go to `inbox` from now on.
    ///
    /// See the example in the [`transport`](crate::transport) module.
    ///
    /// # Errors
    ///
    /// Fails when the connection cannot be set up (a program that does not exist, a URL that
    /// does not answer).
    fn connect(&self, inbox: Inbox) -> Result<Box<dyn Transport>>;

    /// The transport to try next when the server rejects the very first request with a
    /// status that means "not this transport" (HTTP 400, 404 or 405). `None` disables fallback.
    ///
    /// See the example in the [`transport`](crate::transport) module.
    fn fallback(&self) -> Option<Box<dyn Connect>> {
        None
    }

    /// A short description for logs and errors, e.g. the command line or the URL.
    ///
    /// See the example in the [`transport`](crate::transport) module.
    fn describe(&self) -> String;
}

/// A boxed connector connects as the one inside it, so what
/// [`ServerConfig::connector`](crate::ServerConfig::connector) returns goes straight to
/// [`Client::connect`](crate::Client::connect), as the example there shows.
impl Connect for Box<dyn Connect> {
    fn connect(&self, inbox: Inbox) -> Result<Box<dyn Transport>> {
        (**self).connect(inbox)
    }

    fn fallback(&self) -> Option<Box<dyn Connect>> {
        (**self).fallback()
    }

    fn describe(&self) -> String {
        (**self).describe()
    }
}

/// What a transport delivers to the layer above.
///
/// See the example in the [`transport`](crate::transport) module.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Inbound {
    /// One message from the server.
    Message(Message),
    /// A JSON array batch from the server (legal only under protocol 2025-03-26; the layer
    /// above decides).
    Batch(Vec<Message>),
    /// A request the transport sent can never get its response (for example an HTTP stream
    /// that ended before the response and cannot be resumed). The waiting caller gets `Error`.
    Failed(RequestId, Error),
    /// Messages that belong to no request may have been lost, though the connection goes
    /// on: a stream of server-initiated messages broke and was opened again, and the server
    /// may not have replayed what it sent in between. The layer above should treat anything
    /// it learnt from such messages as stale. The text says why.
    Gap(String),
    /// The connection ended; nothing more will arrive.
    Closed(Arc<Closed>),
}

/// Where a transport delivers what the server sends.
///
/// Cheap to clone: every reader thread of a transport holds one. Delivery never waits on a
/// caller; it may wait for room when the layer above applies backpressure (a bounded queue of
/// server requests or notification callbacks that are not keeping up), which in turn slows the
/// reading of the server's output.
///
/// The client builds its inbox around its own sink: a response goes straight from the thread
/// that read it to the caller waiting for it, in one hand-off, and only notifications and
/// server requests take a queue. [`Inbox::new`] builds one around a channel instead, for other
/// uses of a transport (and tests).
///
/// See the example in the [`transport`](crate::transport) module.
#[derive(Clone)]
pub struct Inbox {
    sink: Arc<dyn Fn(Inbound) -> bool + Send + Sync>,
    /// Takes a message from its text when it can (`Some(listening)`) without building a
    /// [`Message`] first: the client's response fast path.
    text: Option<TextSink>,
}

/// See [`Inbox::deliver_text`].
type TextSink = Arc<dyn Fn(&str) -> Option<bool> + Send + Sync>;

impl Inbox {
    /// A new inbox and the receiving end the layer above reads from.
    ///
    /// The receiver is a crossbeam channel: the one place this crate shows crossbeam, for
    /// implementers of [`Transport`] and for tests. The channel is unbounded: whoever reads it
    /// decides how fast it drains.
    ///
    /// ```
    /// use umcp::jsonrpc::Message;
    /// use umcp::transport::{Inbound, Inbox};
    /// use umcp::Closed;
    ///
    /// let (inbox, inbound) = Inbox::new();
    /// let changed = "notifications/tools/list_changed";
    /// let text = format!(r#"{{"jsonrpc":"2.0","method":"{changed}"}}"#);
    /// assert!(inbox.deliver_text(&text)?); // true: somebody listens
    /// let delivered = inbound.try_recv();
    /// assert!(matches!(
    ///     delivered,
    ///     Ok(Inbound::Message(Message::Notification(n))) if n.method == changed
    /// ));
    /// // A stream of server-initiated messages was reopened; some may be lost:
    /// inbox.gap("the event stream dropped and was opened again");
    /// assert!(matches!(inbound.try_recv(), Ok(Inbound::Gap(why)) if why.contains("dropped")));
    /// // A transport whose connection ends says so once:
    /// inbox.closed(Closed { reason: "server exited".into(), ..Closed::default() });
    /// assert!(matches!(inbound.try_recv(), Ok(Inbound::Closed(_))));
    /// # Ok::<(), umcp::jsonrpc::DecodeError>(())
    /// ```
    pub fn new() -> (Inbox, Receiver<Inbound>) {
        let (tx, rx): (Sender<Inbound>, _) = crossbeam_channel::unbounded();
        let inbox = Inbox::with_sink(move |inbound| tx.send(inbound).is_ok());
        (inbox, rx)
    }

    /// An inbox that hands everything to `sink`, which returns `false` once nobody listens.
    pub(crate) fn with_sink(sink: impl Fn(Inbound) -> bool + Send + Sync + 'static) -> Inbox {
        Inbox {
            sink: Arc::new(sink),
            text: None,
        }
    }

    /// Adds a sink that may take a message straight from its text (see
    /// [`Inbox::deliver_text`]).
    pub(crate) fn with_text_sink(
        mut self,
        text: impl Fn(&str) -> Option<bool> + Send + Sync + 'static,
    ) -> Inbox {
        self.text = Some(Arc::new(text));
        self
    }

    /// Decodes one JSON-RPC text (a message or a batch) and delivers it. Prefer this to
    /// decoding first: the client takes a response from its text, so its result is parsed
    /// once, straight into the type the caller wants.
    ///
    /// See the example on [`transport::Inbox::new`](crate::transport::Inbox::new).
    ///
    /// # Errors
    ///
    /// Fails when the text is not a JSON-RPC message or batch; nothing was delivered.
    pub fn deliver_text(&self, text: &str) -> std::result::Result<bool, DecodeError> {
        if let Some(listening) = self.text.as_ref().and_then(|take| take(text)) {
            return Ok(listening);
        }
        Ok(match Payload::decode(text)? {
            Payload::Single(message) => self.deliver(message),
            Payload::Batch(messages, dropped) => {
                if dropped > 0 {
                    log::debug!("dropped {dropped} malformed members of a batch");
                }
                self.deliver_batch(messages)
            }
        })
    }

    /// Delivers one message. Returns `false` when nobody listens any more, which tells a
    /// reader thread it can stop.
    ///
    /// See the example on [`transport::Inbox::new`](crate::transport::Inbox::new).
    pub fn deliver(&self, message: Message) -> bool {
        (self.sink)(Inbound::Message(message))
    }

    /// Delivers a batch.
    ///
    /// See the example on [`transport::Inbox::new`](crate::transport::Inbox::new).
    pub fn deliver_batch(&self, messages: Vec<Message>) -> bool {
        (self.sink)(Inbound::Batch(messages))
    }

    /// Fails one request locally: its response will never arrive (see [`Inbound::Failed`]).
    ///
    /// See the example on [`transport::Inbox::new`](crate::transport::Inbox::new).
    pub fn fail(&self, id: RequestId, error: Error) -> bool {
        (self.sink)(Inbound::Failed(id, error))
    }

    /// Reports that messages belonging to no request may have been lost (see
    /// [`Inbound::Gap`]).
    ///
    /// See the example on [`transport::Inbox::new`](crate::transport::Inbox::new).
    pub fn gap(&self, reason: impl Into<String>) {
        (self.sink)(Inbound::Gap(reason.into()));
    }

    /// Reports the end of the connection.
    ///
    /// See the example on [`transport::Inbox::new`](crate::transport::Inbox::new).
    pub fn closed(&self, closed: Closed) {
        (self.sink)(Inbound::Closed(Arc::new(closed)));
    }
}

impl std::fmt::Debug for Inbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inbox").finish_non_exhaustive()
    }
}
