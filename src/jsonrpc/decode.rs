//! Reading a message out of a JSON value, and what is wrong with one that is not a message:
//! among those, the request JSON-RPC answers with an error of its own.

use std::fmt;

use serde_json::value::RawValue;
use serde_json::Value;

use super::invalid::{InvalidRequest, NOT_INTEGER};
use super::{ErrorObject, Message, Notification, Payload, Request, RequestId, Response};

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
