//! Reading a message out of a JSON value, and what is wrong with one that is not a message:
//! among those, the request JSON-RPC answers with an error of its own.

use std::fmt;

use serde_json::Value;

use super::{ErrorCode, ErrorObject, Message, Notification, Request, RequestId, Response};

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

    /// The request the text holds when it is one JSON-RPC rejects for its id, which is owed
    /// the error response [`InvalidRequest::reply`]; `None` for any other text.
    ///
    /// See the example on [`InvalidRequest`].
    pub fn invalid_request(&self) -> Option<&InvalidRequest> {
        self.invalid.as_ref()
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for DecodeError {}

/// A request whose `id` has a type no request id may have: null, a number that is not an
/// integer, a boolean, an array or an object (MCP ids are strings or integers, never null).
///
/// JSON-RPC rejects it as an invalid request: nothing runs for it, and its answer is the error
/// [`reply`](InvalidRequest::reply), `-32600 Invalid Request` with a null id, since its own id
/// cannot be given back. Decoding it fails with a [`DecodeError`] that carries it; a
/// [`Response`] with such an id is an ordinary [`DecodeError`] (it answers no request that
/// could have been sent).
///
/// ```
/// use umcp::jsonrpc::{ErrorCode, Message, Payload};
///
/// let text = r#"{"jsonrpc":"2.0","id":1.5,"method":"roots/list"}"#;
/// let error = Payload::decode(text).unwrap_err();
/// let invalid = error.invalid_request().expect("a request with an id of a forbidden type");
/// assert_eq!((invalid.method(), invalid.id_type()), ("roots/list", "a number that is not an integer"));
/// let reply = Message::from(invalid.reply()).encode();
/// assert!(reply.starts_with(
///     r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","#
/// ));
///
/// // A response with such an id, and a notification (no `id` at all), are no such thing.
/// let response = Payload::decode(r#"{"jsonrpc":"2.0","id":1.5,"result":{}}"#).unwrap_err();
/// assert!(response.invalid_request().is_none());
/// assert!(Payload::decode(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).is_ok());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidRequest {
    method: String,
    id_type: &'static str,
}

impl InvalidRequest {
    /// The method the request names.
    ///
    /// See the example on [`InvalidRequest`].
    pub fn method(&self) -> &str {
        &self.method
    }

    /// What its id is, in words: `"null"`, `"a boolean"`, `"an object"`, ….
    ///
    /// See the example on [`InvalidRequest`].
    pub fn id_type(&self) -> &'static str {
        self.id_type
    }

    /// The response JSON-RPC prescribes: `-32600 Invalid Request`, with a null id, and the
    /// id's type in `data`.
    ///
    /// See the example on [`InvalidRequest`].
    pub fn reply(&self) -> Response {
        let why = format!(
            "a request id must be a string or an integer, not {}",
            self.id_type
        );
        Response {
            id: None,
            result: Err(
                ErrorObject::new(ErrorCode::INVALID_REQUEST, "Invalid Request")
                    .with_data(why.into()),
            ),
        }
    }
}

/// What an `id` member holds.
enum Id {
    Valid(RequestId),
    Null,
    /// Of a type no id may have: what it is, in words.
    Forbidden(&'static str),
    /// An integer beyond what a [`RequestId`] holds.
    TooLarge,
}

impl Id {
    fn read(value: Value) -> Id {
        match value {
            Value::Null => Id::Null,
            Value::String(s) => Id::Valid(RequestId::from(s)),
            Value::Number(n) => match (n.as_i64(), n.is_u64()) {
                (Some(n), _) => Id::Valid(RequestId::from(n)),
                (None, true) => Id::TooLarge,
                (None, false) => Id::Forbidden("a number that is not an integer"),
            },
            Value::Bool(_) => Id::Forbidden("a boolean"),
            Value::Array(_) => Id::Forbidden("an array"),
            Value::Object(_) => Id::Forbidden("an object"),
        }
    }

    /// The id of a response: none when null; an error when no request could have had it.
    fn of_response(self) -> Result<Option<RequestId>, DecodeError> {
        match self {
            Id::Valid(id) => Ok(Some(id)),
            Id::Null => Ok(None),
            Id::Forbidden(_) => Err(DecodeError::new("`id` is neither an integer nor a string")),
            Id::TooLarge => Err(too_large()),
        }
    }
}

fn too_large() -> DecodeError {
    DecodeError::new("`id` is an integer beyond 64 bits")
}

impl Message {
    /// Reads one message from a JSON value, ignoring unknown members.
    ///
    /// See the example in the [`jsonrpc`](crate::jsonrpc) module.
    ///
    /// # Errors
    ///
    /// Fails when the value is not an object shaped like a request, response or notification;
    /// for a request with an id of a forbidden type the error carries it
    /// ([`DecodeError::invalid_request`]).
    pub fn from_value(value: Value) -> Result<Message, DecodeError> {
        let Value::Object(mut obj) = value else {
            return Err(DecodeError::new("not a JSON object"));
        };
        let id = obj.remove("id").map(Id::read);
        let params = obj.remove("params").filter(|p| !p.is_null());
        if let Some(method) = obj.remove("method") {
            let Value::String(method) = method else {
                return Err(DecodeError::new("`method` is not a string"));
            };
            return match id {
                None => Ok(Message::Notification(Notification { method, params })),
                Some(Id::Valid(id)) => Ok(Message::Request(Request { id, method, params })),
                // An `"id": null` makes no notification of it: a notification has no `id`.
                Some(Id::Null) => Err(invalid(method, "null")),
                Some(Id::Forbidden(id_type)) => Err(invalid(method, id_type)),
                Some(Id::TooLarge) => Err(too_large()),
            };
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

/// The error for a request with an id of a forbidden type, carrying it.
fn invalid(method: String, id_type: &'static str) -> DecodeError {
    DecodeError {
        message: format!("the `{method}` request's id is {id_type}, not a string or an integer"),
        invalid: Some(InvalidRequest { method, id_type }),
    }
}
