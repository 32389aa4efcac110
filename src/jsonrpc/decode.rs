//! Reading a message out of a JSON value, and what is wrong with one that is not a message:
//! among those, the request JSON-RPC answers with an error of its own.

use std::fmt;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use super::{ErrorCode, ErrorObject, Message, Notification, Payload, Request, RequestId, Response};

/// What an id is when it reads as a number that is not an integer.
const NOT_INTEGER: &str = "a number that is not an integer";

/// What an id is when it is an integer beyond 64 bits, which umcp takes as no request's id.
const WIDE: &str = "an integer beyond 64 bits";

/// Why a text is not a JSON-RPC message.
///
/// See the example in the [`jsonrpc`](crate::jsonrpc) module, and on [`InvalidRequest`] for
/// the one kind a reply is owed for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    message: String,
    invalid: Option<InvalidRequest>,
}

impl DecodeError {
    pub(super) fn new(message: impl Into<String>) -> DecodeError {
        DecodeError {
            message: message.into(),
            invalid: None,
        }
    }

    /// The request the text holds when it is one JSON-RPC rejects (for its id or its
    /// `method`), which is owed the error response [`InvalidRequest::reply`]; `None` for any
    /// other text.
    ///
    /// See the example on [`InvalidRequest`].
    pub fn invalid_request(&self) -> Option<&InvalidRequest> {
        self.invalid.as_ref()
    }

    /// Gives the id of the invalid request this error carries back in the server's digits
    /// when it is an integer beyond 64 bits: the `Value` it was read from holds it only as a
    /// float, so `text`, the message's own text, is read again, and only then.
    fn keep_wide_id(mut self, text: &str) -> DecodeError {
        if let Some(invalid) = self.invalid.as_mut() {
            if invalid.keep_wide_id(text) {
                self.message = invalid.to_string();
            }
        }
        self
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for DecodeError {}

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
/// request that could have been sent), and so is a message with neither an `id` (a
/// notification, which is never answered) nor a string `method`.
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
    id: Option<RequestId>,
    /// What is wrong with the id, in words: a type no id may have, or [`WIDE`].
    id_type: Option<&'static str>,
    /// The method, or what `method` is in words when it is not a string.
    method: Result<String, &'static str>,
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
    fn keep_wide_id(&mut self, text: &str) -> bool {
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

/// What an `id` member holds.
enum Id {
    Valid(RequestId),
    Null,
    /// Of a type no id may have: what it is, in words.
    Forbidden(&'static str),
}

impl Id {
    fn read(value: Value) -> Id {
        match value {
            Value::Null => Id::Null,
            Value::String(s) => Id::Valid(RequestId::from(s)),
            // An integer beyond `u64` reads as a float: only the message's text has its
            // digits (see `InvalidRequest::keep_wide_id`).
            Value::Number(n) => match (n.as_i64(), n.as_u64()) {
                (Some(n), _) => Id::Valid(RequestId::from(n)),
                (None, Some(n)) => Id::Valid(RequestId::from(n)),
                (None, None) => Id::Forbidden(NOT_INTEGER),
            },
            Value::Bool(_) => Id::Forbidden("a boolean"),
            Value::Array(_) => Id::Forbidden("an array"),
            Value::Object(_) => Id::Forbidden("an object"),
        }
    }

    fn is_null(&self) -> bool {
        matches!(self, Id::Null)
    }

    /// The id of a request: an error naming the type when no request id may have it.
    fn of_request(self) -> Result<RequestId, &'static str> {
        match self {
            Id::Valid(id) => Ok(id),
            // An `"id": null` makes no notification of it: a notification has no `id`.
            Id::Null => Err("null"),
            Id::Forbidden(id_type) => Err(id_type),
        }
    }

    /// The id of a response: none when null; an error when no request could have had it.
    fn of_response(self) -> Result<Option<RequestId>, DecodeError> {
        match self {
            Id::Valid(id) => Ok(Some(id)),
            Id::Null => Ok(None),
            Id::Forbidden(_) => Err(DecodeError::new("`id` is neither an integer nor a string")),
        }
    }
}

/// What kind of JSON value `value` is, in words, for messages ("a number", "null", …).
pub(crate) fn value_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

impl Message {
    /// Reads one message from a JSON value, ignoring unknown members.
    ///
    /// See the example in the [`jsonrpc`](crate::jsonrpc) module.
    ///
    /// # Errors
    ///
    /// Fails when the value is not an object shaped like a request, response or notification;
    /// for a request JSON-RPC rejects (an id of a forbidden type, a `method` that is not a
    /// string) the error carries it ([`DecodeError::invalid_request`]).
    pub fn from_value(value: Value) -> Result<Message, DecodeError> {
        let Value::Object(mut obj) = value else {
            return Err(DecodeError::new("not a JSON object"));
        };
        let id = obj.remove("id").map(Id::read);
        let params = obj.remove("params").filter(|p| !p.is_null());
        match obj.remove("method") {
            Some(Value::String(method)) => {
                // Some servers write `"id": null` on their notifications; MCP names them all
                // `notifications/…` and none is a request, so they are taken as meant rather
                // than refused and lost.
                let id = id.filter(|id| !(id.is_null() && method.starts_with("notifications/")));
                return match id.map(Id::of_request) {
                    None => Ok(Message::Notification(Notification { method, params })),
                    Some(Ok(id)) => Ok(Message::Request(Request { id, method, params })),
                    Some(Err(id_type)) => Err(invalid(Err(id_type), Ok(method))),
                };
            }
            // A response some servers write with `"method": null`: read as the response it is.
            Some(Value::Null) if obj.contains_key("result") || obj.contains_key("error") => {}
            Some(method) => {
                let is_response = obj.contains_key("result") || obj.contains_key("error");
                return Err(match id {
                    // A request that names no method: invalid, and owed its error all the same.
                    Some(id) if !is_response => invalid(id.of_request(), Err(value_kind(&method))),
                    _ => DecodeError::new("`method` is not a string"),
                });
            }
            None => {}
        }
        let id = id.map_or(Ok(None), Id::of_response)?;
        if let Some(error) = obj.remove("error") {
            let error = serde_json::from_value::<ErrorObject>(error)
                .map_err(|e| DecodeError::new(format!("malformed `error` member: {e}")))?;
            return Ok(Message::Response(Response {
                id,
                result: Err(error),
            }));
        }
        match (obj.remove("result"), id) {
            (Some(result), Some(id)) => Ok(Message::Response(Response::ok(id, result))),
            (Some(_), None) => Err(DecodeError::new("a result without an `id`")),
            (None, _) => Err(DecodeError::new(
                "neither `method`, `result` nor `error` is present",
            )),
        }
    }
}

/// The error for a request JSON-RPC rejects, carrying it.
fn invalid(
    id: Result<RequestId, &'static str>,
    method: Result<String, &'static str>,
) -> DecodeError {
    let (id, id_type) = match id {
        Ok(id) => (Some(id), None),
        Err(id_type) => (None, Some(id_type)),
    };
    let invalid = InvalidRequest {
        id,
        id_type,
        method,
    };
    DecodeError {
        message: invalid.to_string(),
        invalid: Some(invalid),
    }
}

/// Decodes one message from its `text`, read as `value`.
pub(super) fn single(text: &str, value: Value) -> Result<Payload, DecodeError> {
    Message::from_value(value)
        .map(Payload::Single)
        .map_err(|e| e.keep_wide_id(text))
}

/// Decodes the elements of a batch, `text` read as `items`: its messages, the requests among
/// them JSON-RPC rejects, and how many other elements were dropped.
pub(super) fn batch(text: &str, items: Vec<Value>) -> Payload {
    let total = items.len();
    let (mut messages, mut invalid) = (Vec::new(), Vec::new());
    // The text of each element, read only for an id beyond 64 bits, and then once.
    let mut elements: Option<Vec<&RawValue>> = None;
    for (k, item) in items.into_iter().enumerate() {
        let mut request = match Message::from_value(item) {
            Ok(message) => {
                messages.push(message);
                continue;
            }
            Err(e) => match e.invalid {
                Some(request) => request,
                None => continue,
            },
        };
        if request.id_type == Some(NOT_INTEGER) {
            let elements =
                elements.get_or_insert_with(|| serde_json::from_str(text).unwrap_or_default());
            if let Some(element) = elements.get(k) {
                request.keep_wide_id(element.get());
            }
        }
        invalid.push(request);
    }
    let dropped = total - messages.len() - invalid.len();
    Payload::Batch(messages, invalid, dropped)
}
