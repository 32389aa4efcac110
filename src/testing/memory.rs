//! The in-memory transport: a server in the same process, reached through channels.

use crate::sync::{deadline_after, lock};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, SendTimeoutError, Sender};

use crate::error::{Closed, Error, Result, TimeoutKind, CLOSED_BY_CLIENT};
use crate::jsonrpc::{DecodeError, Message};
use crate::transport::{Connect, Inbox, Transport};

/// How many messages the client may have sent that the server has not read yet. A client that
/// gets this far ahead waits in [`Transport::send`], within its deadline, as it waits on a
/// full pipe.
///
/// See the example on [`MemoryEnd::recv_timeout`].
pub const MEMORY_CAPACITY: usize = 256;

/// Connects to a server in the same process: the client's side of an in-memory transport,
/// with no process and no socket.
///
/// Each connection calls the function given to [`MemoryConfig::new`] with the server's side,
/// a [`MemoryEnd`], on the connecting thread: start the server's thread there and return. A
/// client connects more than once when it reconnects, and each connection gets its own end.
///
/// The messages cross as the text a wire would carry: what the client sends is encoded, and
/// what the server sends is delivered with [`Inbox::deliver_text`], as the stdio transport
/// delivers a line. Everything above the transport, the client's handshake, routing and
/// decoding, runs exactly as it does over a pipe.
///
/// ```
/// use serde_json::json;
/// use umcp::jsonrpc::{Message, Response};
/// use umcp::testing::{MemoryConfig, MemoryEnd};
/// use umcp::{Client, Options, ProtocolMode};
///
/// // A server that answers `initialize` and `tools/list`, on a thread of its own.
/// fn serve(end: MemoryEnd) {
///     while let Some(message) = end.recv() {
///         let Message::Request(request) = message else { continue };
///         let result = match request.method.as_str() {
///             "initialize" => json!({
///                 "protocolVersion": "2025-11-25",
///                 "capabilities": {"tools": {}},
///                 "serverInfo": {"name": "hand-made", "version": "1.0.0"},
///             }),
///             _ => json!({"tools": []}),
///         };
///         end.send(&Response::ok(request.id, result).into());
///     }
/// }
///
/// let server = MemoryConfig::new("hand-made", |end| {
///     std::thread::spawn(move || serve(end));
/// });
/// let options = Options::default().with_protocol_mode(ProtocolMode::Legacy);
/// let client = Client::connect_with_options(server, options)?;
/// assert_eq!(client.server_info().name, "hand-made");
/// assert_eq!(client.transport_kind(), "memory");
/// assert!(client.list_all_tools()?.is_empty());
/// # Ok::<(), umcp::Error>(())
/// ```
#[derive(Clone)]
pub struct MemoryConfig {
    name: String,
    accept: Arc<dyn Fn(MemoryEnd) + Send + Sync>,
}

/// The server's side of one in-memory connection.
///
/// Clones share the connection: any of them may send, from any thread, and each message the
/// client sent is received by one of them.
///
/// See the example on [`MemoryConfig`].
#[derive(Clone)]
pub struct MemoryEnd {
    incoming: Receiver<String>,
    link: Arc<Link>,
}

impl MemoryConfig {
    /// An in-memory server named `name` (what [`Connect::describe`] says, and so the key of
    /// the client's remembered protocol era: give each server its own name), started by
    /// `accept` for every connection.
    ///
    /// See the example on [`MemoryConfig`].
    pub fn new(
        name: impl Into<String>,
        accept: impl Fn(MemoryEnd) + Send + Sync + 'static,
    ) -> Self {
        MemoryConfig {
            name: name.into(),
            accept: Arc::new(accept),
        }
    }
}

impl MemoryEnd {
    /// The next message the client sent, waiting for it; `None` once the client closed the
    /// connection (or the server did) and everything it sent has been read.
    ///
    /// See the example on [`MemoryConfig`].
    pub fn recv(&self) -> Option<Message> {
        loop {
            let text = self.incoming.recv().ok()?;
            if let Some(message) = decode(&text) {
                return Some(message);
            }
        }
    }

    /// As [`recv`](MemoryEnd::recv), waiting at most `timeout`: `Ok(None)` when nothing came
    /// in time, `Err(Closed)` once the connection is over.
    ///
    /// ```
    /// use std::time::Duration;
    /// use umcp::testing::MemoryConfig;
    /// use umcp::{Client, Options};
    ///
    /// let (ends, accepted) = std::sync::mpsc::channel();
    /// let server = MemoryConfig::new("silent", move |end| drop(ends.send(end)));
    /// let options = Options::default().with_startup_timeout(Duration::from_millis(300));
    /// let waiting = std::thread::spawn(move || Client::connect_with_options(server, options));
    /// let end = accepted.recv().unwrap();
    /// // The client asks first (the era probe), and nobody answers it.
    /// assert!(end.recv_timeout(Duration::from_secs(5)).unwrap().is_some());
    /// assert!(waiting.join().unwrap().is_err());
    /// // The client gave up and closed the connection.
    /// while let Ok(Some(_)) = end.recv_timeout(Duration::from_secs(5)) {}
    /// assert!(end.is_closed());
    /// ```
    ///
    /// # Errors
    ///
    /// [`Closed`] once the connection is over and everything the client sent has been read.
    pub fn recv_timeout(&self, timeout: Duration) -> std::result::Result<Option<Message>, Closed> {
        let deadline = deadline_after(Instant::now(), timeout);
        loop {
            match self.incoming.recv_deadline(deadline) {
                Ok(text) => match decode(&text) {
                    Some(message) => return Ok(Some(message)),
                    None => continue,
                },
                Err(RecvTimeoutError::Timeout) => return Ok(None),
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(self.link.closed().map(|c| (*c).clone()).unwrap_or_default())
                }
            }
        }
    }

    /// Sends `message` to the client, encoded and delivered as a transport delivers a line it
    /// read. Returns `false` once nobody listens (the connection is closed). It may wait while
    /// the client holds back delivery (its queue of server requests is full), as a server's
    /// write waits on a full pipe.
    ///
    /// See the example on [`MemoryConfig`].
    pub fn send(&self, message: &Message) -> bool {
        // A message always encodes to a text that decodes.
        self.send_text(&message.encode()).unwrap_or(false)
    }

    /// Sends a text as a server writes it, for what no [`Message`] holds (an id of a type
    /// JSON-RPC forbids, a batch, a member the types drop). Returns whether the client still
    /// listens.
    ///
    /// ```
    /// use umcp::testing::MemoryConfig;
    ///
    /// let server = MemoryConfig::new("raw", |end| {
    ///     assert!(end.send_text("not json").is_err());
    ///     // An id of a type JSON-RPC forbids: delivered, for the client to refuse.
    ///     let text = r#"{"jsonrpc":"2.0","id":1.5,"method":"roots/list"}"#;
    ///     assert_eq!(end.send_text(text), Ok(true));
    ///     end.close("gone");
    /// });
    /// assert!(umcp::Client::connect(server).is_err());
    /// ```
    ///
    /// # Errors
    ///
    /// Fails, delivering nothing, when the text is no JSON-RPC message or batch (a server
    /// writing it to a pipe would only get it logged and skipped).
    pub fn send_text(&self, text: &str) -> std::result::Result<bool, DecodeError> {
        let Some(inbox) = lock(&self.link.inbox).clone() else {
            return Ok(false);
        };
        log::trace!("{}: < {text}", self.link.name);
        inbox.deliver_text(text)
    }

    /// Ends the connection from the server's side, as a server that exits: the client's
    /// pending requests fail with [`Error::Closed`] carrying `reason`, and so does anything it
    /// sends from now on. Idempotent.
    ///
    /// See the example on [`MemoryEnd::recv_timeout`].
    pub fn close(&self, reason: &str) {
        self.link.close(reason);
    }

    /// Whether the connection is over (closed by either side).
    ///
    /// See the example on [`MemoryEnd::recv_timeout`].
    pub fn is_closed(&self) -> bool {
        self.link.closed().is_some()
    }

    /// A number that tells this connection from every other of the process, for logs and
    /// names.
    ///
    /// See the example on [`MemoryConfig`].
    pub fn connection(&self) -> u64 {
        self.link.number
    }
}

impl Connect for MemoryConfig {
    fn connect(&self, inbox: Inbox) -> Result<Box<dyn Transport>> {
        static CONNECTIONS: AtomicU64 = AtomicU64::new(1);
        let (tx, rx) = crossbeam_channel::bounded(MEMORY_CAPACITY);
        let link = Arc::new(Link {
            name: self.name.clone(),
            number: CONNECTIONS.fetch_add(1, Ordering::Relaxed),
            inbox: Mutex::new(Some(inbox)),
            closed: Mutex::new(None),
            outgoing: Mutex::new(Some(tx)),
        });
        log::debug!("{}: connected in memory ({})", self.name, link.number);
        (self.accept)(MemoryEnd {
            incoming: rx,
            link: Arc::clone(&link),
        });
        Ok(Box::new(MemoryTransport { link }))
    }

    fn describe(&self) -> String {
        self.name.clone()
    }
}

impl std::fmt::Debug for MemoryConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryConfig")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for MemoryEnd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryEnd")
            .field("name", &self.link.name)
            .field("connection", &self.link.number)
            .field("closed", &self.is_closed())
            .finish()
    }
}

/// What both sides of one connection share.
struct Link {
    name: String,
    number: u64,
    /// Dropped once the connection is over: it holds the client's queues and callbacks,
    /// which must not outlive the client through this link.
    inbox: Mutex<Option<Inbox>>,
    /// Why the connection ended, once it has.
    closed: Mutex<Option<Arc<Closed>>>,
    /// The client's way to the server; dropped on close, which ends the server's `recv`.
    outgoing: Mutex<Option<Sender<String>>>,
}

impl Link {
    fn closed(&self) -> Option<Arc<Closed>> {
        lock(&self.closed).clone()
    }

    /// Ends the connection once: the server's `recv` ends after what was sent, and the client
    /// hears why.
    fn close(&self, reason: &str) {
        let closed = Closed {
            reason: reason.to_owned(),
            ..Closed::default()
        };
        {
            let mut slot = lock(&self.closed);
            if slot.is_some() {
                return;
            }
            *slot = Some(Arc::new(closed.clone()));
        }
        lock(&self.outgoing).take();
        log::debug!("{}: closed ({reason})", self.name);
        if let Some(inbox) = lock(&self.inbox).take() {
            inbox.closed(closed);
        }
    }
}

/// The client's side of one connection.
struct MemoryTransport {
    link: Arc<Link>,
}

impl Transport for MemoryTransport {
    fn send(&self, message: &Message, deadline: Instant) -> Result<()> {
        let closed = || {
            let closed = self.link.closed().unwrap_or_else(|| {
                Arc::new(Closed {
                    reason: "the server's end was dropped".into(),
                    ..Closed::default()
                })
            });
            Error::Closed(closed)
        };
        let Some(outgoing) = lock(&self.link.outgoing).clone() else {
            return Err(closed());
        };
        let text = message.encode();
        log::trace!("{}: > {text}", self.link.name);
        let start = Instant::now();
        match outgoing.send_deadline(text, deadline) {
            Ok(()) => Ok(()),
            Err(SendTimeoutError::Timeout(_)) => Err(Error::Timeout {
                method: method_of(message),
                elapsed: start.elapsed(),
                kind: TimeoutKind::Write,
                stderr_tail: None,
            }),
            Err(SendTimeoutError::Disconnected(_)) => Err(closed()),
        }
    }

    fn send_waits_for_peer(&self) -> bool {
        // Sending only queues the message, as on a pipe.
        false
    }

    fn close(&self) {
        self.link.close(CLOSED_BY_CLIENT);
    }

    fn kind(&self) -> &'static str {
        "memory"
    }
}

/// The method a message names, for a timeout's error.
fn method_of(message: &Message) -> String {
    match message {
        Message::Request(r) => r.method.clone(),
        Message::Notification(n) => n.method.clone(),
        Message::Response(_) => "response".to_owned(),
    }
}

/// A message the client sent; it always encodes one, so `None` is only logged.
fn decode(text: &str) -> Option<Message> {
    match serde_json::from_str(text).map(Message::from_value) {
        Ok(Ok(message)) => Some(message),
        _ => {
            log::debug!("memory transport: skipping a text that is no message: {text}");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonrpc::{Notification, Request};
    use crate::transport::Inbound;

    fn pair() -> (Box<dyn Transport>, MemoryEnd, Receiver<Inbound>) {
        let (ends, accepted) = crossbeam_channel::bounded(1);
        let config = MemoryConfig::new("pair", move |end| {
            let _ = ends.send(end);
        });
        let (inbox, inbound) = Inbox::new();
        let transport = config.connect(inbox).expect("connects");
        let end = accepted.try_recv().expect("accepted on connect");
        (transport, end, inbound)
    }

    #[test]
    fn messages_cross_both_ways_as_text() {
        let (transport, end, inbound) = pair();
        let far = Instant::now() + Duration::from_secs(5);
        let request = Message::from(Request::new(1, "tools/list", None));
        transport.send(&request, far).expect("sent");
        assert_eq!(end.recv(), Some(request));
        assert!(end.send(&Notification::new("notifications/tools/list_changed", None).into()));
        match inbound.recv_timeout(Duration::from_secs(5)) {
            Ok(Inbound::Message(Message::Notification(n))) => {
                assert_eq!(n.method, "notifications/tools/list_changed");
            }
            other => panic!("{other:?}"),
        }
        assert!(end.send_text("[1, 2").is_err());
    }

    #[test]
    fn a_full_queue_times_out_the_write_and_a_close_ends_both_sides() {
        let (transport, end, inbound) = pair();
        let note = Message::from(Notification::new("n", None));
        let soon = Instant::now() + Duration::from_millis(50);
        for _ in 0..MEMORY_CAPACITY {
            transport.send(&note, soon).expect("room");
        }
        match transport.send(&note, soon) {
            Err(Error::Timeout { kind, .. }) => assert_eq!(kind, TimeoutKind::Write),
            other => panic!("{other:?}"),
        }
        transport.close();
        transport.close();
        // What was sent is still read, then the end says the connection is over.
        let mut read = 0;
        while let Ok(Some(_)) = end.recv_timeout(Duration::from_secs(5)) {
            read += 1;
        }
        assert_eq!(read, MEMORY_CAPACITY);
        assert_eq!(
            end.recv_timeout(Duration::ZERO).unwrap_err().reason,
            CLOSED_BY_CLIENT
        );
        assert!(matches!(inbound.try_recv(), Ok(Inbound::Closed(_))));
        assert!(!end.send(&note));
        assert!(matches!(transport.send(&note, soon), Err(Error::Closed(_))));
    }

    #[test]
    fn the_server_hanging_up_fails_the_client_with_its_reason() {
        let (transport, end, inbound) = pair();
        end.close("server crashed");
        match inbound.try_recv() {
            Ok(Inbound::Closed(closed)) => assert_eq!(closed.reason, "server crashed"),
            other => panic!("{other:?}"),
        }
        let far = Instant::now() + Duration::from_secs(5);
        match transport.send(&Notification::new("n", None).into(), far) {
            Err(Error::Closed(closed)) => assert_eq!(closed.reason, "server crashed"),
            other => panic!("{other:?}"),
        }
        assert!(end.recv().is_none());
    }
}
