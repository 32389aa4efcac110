//! The request JSON-RPC rejects as invalid, owed a `-32600 Invalid Request` reply: what is
//! wrong with it, in words, and that reply.

use std::fmt;

use serde::Deserialize;
use serde_json::value::RawValue;

#[cfg(doc)]
use super::{DecodeError, Message, Payload};
use super::{ErrorCode, ErrorObject, RequestId, Response};

/// What an id is when it reads as a number that is not an integer.
pub(super) const NOT_INTEGER: &str = "a number that is not an integer";

/// What an id is when it is an integer beyond 64 bits, which umcp takes as no request's id.
pub(super) const WIDE: &str = "an integer beyond 64 bits";

/// A request JSON-RPC rejects as invalid: its `id` has a type no request id may have (null, a
/// number that is not an integer, a boolean, an array or an object: MCP ids are strings or
/// integers, never null), or its `method` is not a string. An integer id beyond 64 bits,
/// which umcp cannot take, makes one too.
///
/// Nothing runs for it, and its answer is the error [`reply`](InvalidRequest::reply),
/// `-32600 Invalid Request`, with the request's id when that is a string or an integer and
/// a null id when it cannot be given back. Decoding it fails with a [`DecodeError`] that
/// carries it; in a batch it is one of the batch's [`Payload::Batch`] elements, owed its reply
/// all the same. A [`Response`] with such an id is an ordinary [`DecodeError`] (it answers no
/// request that could have been sent, and the client drops it), and so is a message with
/// neither an `id` (a notification, which is never answered) nor a string `method`. A
/// `notifications/…` message that carries `"id": null`, as some servers write them, is none
/// of these: it decodes as the notification it is.
///
/// The [`Client`](crate::Client) answers it as it answers a `ping`, without a handler (see
/// [`Options::with_handler_threads`](crate::Options::with_handler_threads) for how such
/// replies are sent); in the stateless era, which has no server requests, such a request gets
/// no reply either.
///
/// An integer id beyond 64 bits is given back in the server's own digits when the request is
/// decoded from its text ([`Payload::decode`]); [`Message::from_value`] reads a `Value`, which
/// holds such a number only as a float, so it takes that id for a number that is not an
/// integer, answered with a null id.
///
/// ```
/// use umcp::jsonrpc::{ErrorCode, Message, Payload};
///
/// let text = r#"{"jsonrpc":"2.0","id":1.5,"method":"roots/list"}"#;
/// let error = Payload::decode(text).unwrap_err();
/// let invalid = error.invalid_request().expect("a request with an id of a forbidden type");
/// assert_eq!(invalid.method(), Some("roots/list"));
/// assert_eq!(invalid.id_type(), Some("a number that is not an integer"));
/// let reply = Message::from(invalid.reply()).encode();
/// assert!(reply.starts_with(
///     r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","#
/// ));
///
/// // A method that is not a string: the reply carries the request's own id.
/// let error = Payload::decode(r#"{"jsonrpc":"2.0","id":7,"method":42}"#).unwrap_err();
/// let invalid = error.invalid_request().expect("a request whose method is a number");
/// assert_eq!((invalid.method(), invalid.method_type()), (None, Some("a number")));
/// let reply = Message::from(invalid.reply()).encode();
/// assert!(reply.starts_with(r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"#));
///
/// // An integer id beyond 64 bits: refused, and given back digit for digit.
/// let error = Payload::decode(r#"{"jsonrpc":"2.0","id":18446744073709551616,"method":"ping"}"#)
///     .unwrap_err();
/// let invalid = error.invalid_request().expect("a request with an id beyond 64 bits");
/// assert_eq!(invalid.id_type(), Some("an integer beyond 64 bits"));
/// let reply = Message::from(invalid.reply()).encode();
/// assert!(reply.starts_with(r#"{"jsonrpc":"2.0","id":18446744073709551616,"error":"#));
///
/// // A response with such an id, and a notification (no `id` at all), are no such thing.
/// let response = Payload::decode(r#"{"jsonrpc":"2.0","id":1.5,"result":{}}"#).unwrap_err();
/// assert!(response.invalid_request().is_none());
/// assert!(Payload::decode(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).is_ok());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidRequest {
    /// The id the reply carries: the request's own, unless its type is what is wrong.
    pub(super) id: Option<RequestId>,
    /// What is wrong with the id, in words: a type no id may have, or [`WIDE`].
    pub(super) id_type: Option<&'static str>,
    /// The method, or what `method` is in words when it is not a string.
    pub(super) method: Result<String, &'static str>,
}

impl InvalidRequest {
    /// The request's id, when it is a string or an integer (one beyond 64 bits too, in the
    /// server's digits): the reply carries it.
    ///
    /// See the example on [`InvalidRequest`].
    pub fn id(&self) -> Option<&RequestId> {
        self.id.as_ref()
    }

    /// What its id is, in words, when that is what is wrong: a type no id may have
    /// (`"null"`, `"a boolean"`, `"an object"`, …), or `"an integer beyond 64 bits"`; `None`
    /// when the id is a string or an integer umcp takes.
    ///
    /// See the example on [`InvalidRequest`].
    pub fn id_type(&self) -> Option<&'static str> {
        self.id_type
    }

    /// The method the request names, when `method` is a string.
    ///
    /// See the example on [`InvalidRequest`].
    pub fn method(&self) -> Option<&str> {
        self.method.as_deref().ok()
    }

    /// What its `method` is, in words, when it is not a string: `"a number"`, `"null"`, …;
    /// `None` when it is a string.
    ///
    /// See the example on [`InvalidRequest`].
    pub fn method_type(&self) -> Option<&'static str> {
        self.method.as_ref().err().copied()
    }

    /// What makes the request invalid, in words: the `data` of its reply.
    pub(crate) fn faults(&self) -> String {
        let id = self.id_type.map(|t| match t {
            WIDE => "a request id that is an integer must lie within 64 bits \
                     (from -2^63 to 2^64 - 1)"
                .to_owned(),
            t => format!("a request id must be a string or an integer, not {t}"),
        });
        let method = self
            .method_type()
            .map(|t| format!("a request method must be a string, not {t}"));
        [id, method]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// Takes the id from `text`, the request's own text, when it is an integer beyond 64 bits
    /// that was read as [`NOT_INTEGER`]; whether it did.
    pub(super) fn keep_wide_id(&mut self, text: &str) -> bool {
        /// A message's `id` member, as the server wrote it.
        #[derive(Deserialize)]
        struct IdText<'a> {
            #[serde(borrow)]
            id: Option<&'a RawValue>,
        }
        if self.id.is_some() || self.id_type != Some(NOT_INTEGER) {
            return false;
        }
        let wide = serde_json::from_str::<IdText<'_>>(text)
            .ok()
            .and_then(|message| message.id)
            .and_then(|id| RequestId::wide(id.get()));
        let Some(id) = wide else { return false };
        (self.id, self.id_type) = (Some(id), Some(WIDE));
        true
    }

    /// The response JSON-RPC prescribes: `-32600 Invalid Request`, with the request's id (null
    /// when its type is what is wrong), and what is wrong in `data`.
    ///
    /// See the example on [`InvalidRequest`].
    pub fn reply(&self) -> Response {
        Response {
            id: self.id().cloned(),
            result: Err(
                ErrorObject::new(ErrorCode::INVALID_REQUEST, "Invalid Request")
                    .with_data(self.faults().into()),
            ),
        }
    }
}

impl fmt::Display for InvalidRequest {
    /// The request, as far as it can be named, and what is wrong with it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("invalid request")?;
        if let Some(method) = self.method() {
            write!(f, " `{method}`")?;
        }
        if let Some(id) = self.id() {
            write!(f, " {id}")?;
        }
        write!(f, ": {}", self.faults())
    }
}
