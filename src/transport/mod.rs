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
//! Streamable HTTP and legacy HTTP+SSE; the testing kit (`umcp::testing`, with the `testing`
//! feature) adds an in-memory transport and the recording and replaying ones. Implement
//! [`Connect`] and [`Transport`] to plug in another one (a TCP socket, …).
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
//!     fn connect_by(&self, inbox: Inbox, deadline: Instant) -> umcp::Result<Box<dyn Transport>> {
//!         Ok(Box::new(LoggedTransport(self.0.connect_by(inbox, deadline)?)))
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
//!     fn abort(&self) {
//!         self.0.abort()
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

use std::time::Instant;

use crate::error::Result;
use crate::jsonrpc::{Message, RequestId};

mod closing;
pub mod http;
mod inbox;
pub mod sse;
pub mod stdio;
pub(crate) mod written;

pub(crate) use closing::Closing;
pub use inbox::{Inbound, Inbox};
pub use stdio::{EnvPolicy, StdioConfig};

/// One live connection to a server.
///
/// Implementations are shared between threads: `send` may be called from many threads at once.
///
/// See the example in the [`transport`](crate::transport) module.
pub trait Transport: Send + Sync {
    /// Sends one message, returning once it has been handed over, or with an error at the
    /// latest when `deadline` passes ([`Error::Timeout`](crate::Error::Timeout) with
    /// [`TimeoutKind::Write`](crate::TimeoutKind::Write) when the peer does not take it).
    ///
    /// Replies to requests do not come back from `send`; they arrive in the [`Inbox`].
    ///
    /// See the example in the [`transport`](crate::transport) module.
    ///
    /// # Errors
    ///
    /// Any error means the message was not delivered. [`Error::Closed`](crate::Error::Closed)
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
    /// waits on a send it no longer wants; a request cancelled while its `send` is under way
    /// is cancelled on the server once that `send` succeeded, so that the notice never
    /// overtakes it. `true` unless a transport says otherwise.
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

    /// Closes a connection that failed (a server that did not answer its handshake in
    /// time) without the grace a healthy server gets to exit on its own: a stdio server is
    /// sent SIGTERM at once rather than after its close grace. The default is [`close`].
    ///
    /// See the example in the [`transport`](crate::transport) module.
    ///
    /// [`close`]: Transport::close
    fn abort(&self) {
        self.close();
    }

    /// The transport's kind, e.g. `"stdio"`, `"streamable-http"` or `"sse"`.
    ///
    /// See the example in the [`transport`](crate::transport) module.
    fn kind(&self) -> &'static str;

    /// The authorization context of the credentials this transport sends (see
    /// `CredentialProvider::authorization_context` under the `http` feature): when it
    /// changes, the client drops the cached results the server marked private. By default 0;
    /// a transport that wraps another forwards it.
    ///
    /// See the example in the [`transport`](crate::transport) module.
    fn authorization_context(&self) -> u64 {
        0
    }
}

pub(crate) use crate::sync::deadline_after;

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
    /// The session is fully set up (MCP: `notifications/initialized` was sent, or, in the
    /// stateless era, `server/discover` answered), so server-initiated streams may be opened
    /// (never in the stateless era).
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

    /// Starts the transport as [`connect`](Connect::connect) does, giving up by `deadline`:
    /// the caller's start-up deadline (the client passes the end of its start-up timeout).
    ///
    /// A start that waits on the server (legacy SSE waits for its `endpoint` event) ends by
    /// this deadline or its own limit, whichever comes first, with
    /// [`Error::Timeout`](crate::Error::Timeout) of kind
    /// [`TimeoutKind::Startup`](crate::TimeoutKind::Startup) when it was this one. The
    /// default ignores the deadline and calls `connect`, which suits a start that does not
    /// wait (spawning a process); a connector wrapping another forwards it.
    ///
    /// See the example in the [`transport`](crate::transport) module.
    ///
    /// # Errors
    ///
    /// As [`Connect::connect`].
    fn connect_by(&self, inbox: Inbox, deadline: Instant) -> Result<Box<dyn Transport>> {
        let _ = deadline;
        self.connect(inbox)
    }

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

    fn connect_by(&self, inbox: Inbox, deadline: Instant) -> Result<Box<dyn Transport>> {
        (**self).connect_by(inbox, deadline)
    }

    fn fallback(&self) -> Option<Box<dyn Connect>> {
        (**self).fallback()
    }

    fn describe(&self) -> String {
        (**self).describe()
    }
}
