//! [`Inbox`], where a transport delivers what the server sends, and the [`Inbound`] it carries.

use std::sync::Arc;

use crossbeam_channel::{Receiver, Sender};

use crate::error::{Closed, Error};
use crate::jsonrpc::{DecodeError, InvalidRequest, Message, Payload, RequestId};

/// What a transport delivers to the layer above.
///
/// See the example in the [`transport`](crate::transport) module.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Inbound {
    /// One message from the server.
    Message(Message),
    /// A JSON array batch from the server (legal only under protocol 2025-03-26; the layer
    /// above decides): its messages, and its elements that are requests JSON-RPC rejects,
    /// each owed its [`InvalidRequest::reply`] like an [`Inbound::Invalid`].
    Batch(Vec<Message>, Vec<InvalidRequest>),
    /// A request from the server that JSON-RPC rejects, for its id (of a type no request id
    /// may have) or its `method` (not a string). It is owed the error
    /// [`InvalidRequest::reply`], and nothing else: the layer above sends it.
    Invalid(InvalidRequest),
    /// A request the transport sent can never get its response (for example an HTTP stream
    /// that ended before the response and cannot be resumed). The waiting caller gets `Error`.
    Failed(RequestId, Error),
    /// A request the server accepted, and may still be working on, can never get its response
    /// to the client (an HTTP server took it with `202 Accepted` and has no stream to send the
    /// response on). The waiting caller gets `Error`, as with [`Inbound::Failed`]; unlike
    /// there, the request reached the server and nothing says the server is done with it, so
    /// the layer above asks the server to stop working on it (the client sends
    /// `notifications/cancelled`).
    Unanswered(RequestId, Error),
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
    /// implementers of [`Transport`](super::Transport) and for tests. The channel is
    /// unbounded: whoever reads it decides how fast it drains.
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
    /// A request JSON-RPC rejects is delivered as [`Inbound::Invalid`], for the layer above to
    /// answer; one inside a batch goes with the batch.
    ///
    /// # Errors
    ///
    /// Fails when the text is not a JSON-RPC message or batch; nothing was delivered.
    pub fn deliver_text(&self, text: &str) -> std::result::Result<bool, DecodeError> {
        if let Some(listening) = self.text.as_ref().and_then(|take| take(text)) {
            return Ok(listening);
        }
        let payload = match Payload::decode(text) {
            Ok(payload) => payload,
            Err(e) => match e.invalid_request() {
                Some(invalid) => return Ok(self.deliver_invalid(invalid.clone())),
                None => return Err(e),
            },
        };
        Ok(match payload {
            Payload::Single(message) => self.deliver(message),
            Payload::Batch(messages, invalid, dropped) => {
                if dropped > 0 {
                    log::debug!("dropped {dropped} malformed members of a batch");
                }
                self.deliver_batch(messages, invalid)
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

    /// Delivers a batch: its messages, and its elements that are requests JSON-RPC rejects
    /// (what [`Payload::Batch`] holds), for the client to answer each of those like one that
    /// came alone.
    ///
    /// The client takes a batch only under protocol 2025-03-26, the one version that has
    /// them: each request in it gets its own reply, sent alone and by the same bounded road
    /// as one that came alone, so a batch of thousands costs no more than as many sent one by
    /// one. At any other version the batch is dropped whole, and a request it answers fails
    /// at once with [`Error::Protocol`] rather than at its deadline.
    ///
    /// ```
    /// use umcp::jsonrpc::Payload;
    /// use umcp::transport::{Inbound, Inbox};
    ///
    /// let (inbox, inbound) = Inbox::new();
    /// let text = r#"[{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","id":1.5,"method":"ping"}]"#;
    /// if let Ok(Payload::Batch(messages, invalid, _dropped)) = Payload::decode(text) {
    ///     inbox.deliver_batch(messages, invalid);
    /// }
    /// assert!(matches!(
    ///     inbound.try_recv(),
    ///     Ok(Inbound::Batch(messages, invalid)) if messages.len() == 1 && invalid.len() == 1
    /// ));
    /// ```
    pub fn deliver_batch(&self, messages: Vec<Message>, invalid: Vec<InvalidRequest>) -> bool {
        (self.sink)(Inbound::Batch(messages, invalid))
    }

    /// Delivers a request JSON-RPC rejects (see [`Inbound::Invalid`]), for the client to
    /// answer `-32600 Invalid Request`: a transport that decodes its messages itself passes on
    /// what [`DecodeError::invalid_request`](crate::jsonrpc::DecodeError::invalid_request)
    /// carries.
    ///
    /// ```
    /// use umcp::jsonrpc::Message;
    /// use umcp::transport::{Inbound, Inbox};
    ///
    /// let (inbox, inbound) = Inbox::new();
    /// let value = serde_json::json!({"jsonrpc": "2.0", "id": 1.5, "method": "roots/list"});
    /// let error = Message::from_value(value).unwrap_err();
    /// if let Some(invalid) = error.invalid_request() {
    ///     inbox.deliver_invalid(invalid.clone());
    /// }
    /// assert!(matches!(inbound.try_recv(), Ok(Inbound::Invalid(_))));
    /// ```
    pub fn deliver_invalid(&self, request: InvalidRequest) -> bool {
        (self.sink)(Inbound::Invalid(request))
    }

    /// Fails one request locally: its response will never arrive (see [`Inbound::Failed`]).
    ///
    /// See the example on [`transport::Inbox::new`](crate::transport::Inbox::new).
    pub fn fail(&self, id: RequestId, error: Error) -> bool {
        (self.sink)(Inbound::Failed(id, error))
    }

    /// Fails one request the server accepted and may still be working on, whose response
    /// cannot reach the client (see [`Inbound::Unanswered`]).
    ///
    /// ```
    /// use umcp::jsonrpc::RequestId;
    /// use umcp::transport::{Inbound, Inbox};
    /// use umcp::Error;
    ///
    /// let (inbox, inbound) = Inbox::new();
    /// let id = RequestId::from(7);
    /// inbox.unanswered(id.clone(), Error::Protocol("accepted, never answered".into()));
    /// assert!(matches!(inbound.try_recv(), Ok(Inbound::Unanswered(got, _)) if got == id));
    /// ```
    pub fn unanswered(&self, id: RequestId, error: Error) -> bool {
        (self.sink)(Inbound::Unanswered(id, error))
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
