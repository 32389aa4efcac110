//! JSON-RPC 2.0 wire types and their one-line encoding, with no I/O.
//!
//! ```
//! use serde_json::json;
//! use umcp::jsonrpc::{ErrorCode, ErrorObject, Message, Notification, Payload, Request, Response};
//!
//! let line = Message::from(Request::new(1, "tools/list", None)).encode();
//! assert_eq!(line, r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
//! match Payload::decode(&line).unwrap() {
//!     Payload::Single(Message::Request(req)) => assert_eq!(req.method, "tools/list"),
//!     other => panic!("{other:?}"),
//! }
//!
//! // The other kinds: a one-way notification, and the two outcomes of a request.
//! let note = Message::from(Notification::new("notifications/initialized", None));
//! assert_eq!(note.encode(), r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
//! let ok = Message::from(Response::ok(1.into(), json!({})));
//! assert_eq!(ok.encode(), r#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
//! let unknown = ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, "no such method");
//! let failed = Message::from(Response::err("a".into(), unknown)).to_value();
//! assert_eq!(failed["error"]["code"], -32601);
//! ```

use serde_json::Value;

mod decode;
mod error;
mod id;
mod invalid;
pub(crate) mod surrogates;
mod wire;

pub use decode::DecodeError;
pub use error::{ErrorCode, ErrorObject};
pub use id::RequestId;
pub use invalid::InvalidRequest;

pub(crate) use decode::value_kind;
pub(crate) use wire::decode_value;
use wire::Wire;

/// The `jsonrpc` member every message carries.
///
/// See the example in the [`jsonrpc`](crate::jsonrpc) module.
pub const VERSION: &str = "2.0";

/// A request: a method call that expects a response with the same id.
///
/// See the example in the [`jsonrpc`](crate::jsonrpc) module.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// The id the response will carry.
    pub id: RequestId,
    /// The method name, e.g. `tools/call`.
    pub method: String,
    /// The parameters; `None` omits the member.
    pub params: Option<Value>,
}

impl Request {
    /// A request.
    ///
    /// See the example in the [`jsonrpc`](crate::jsonrpc) module.
    pub fn new(id: impl Into<RequestId>, method: impl Into<String>, params: Option<Value>) -> Self {
        Request {
            id: id.into(),
            method: method.into(),
            params,
        }
    }
}

/// A notification: a one-way message that gets no response.
///
/// See the example in the [`jsonrpc`](crate::jsonrpc) module.
#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    /// The method name, e.g. `notifications/progress`.
    pub method: String,
    /// The parameters; `None` omits the member.
    pub params: Option<Value>,
}

impl Notification {
    /// A notification.
    ///
    /// See the example in the [`jsonrpc`](crate::jsonrpc) module.
    pub fn new(method: impl Into<String>, params: Option<Value>) -> Notification {
        Notification {
            method: method.into(),
            params,
        }
    }
}

/// A response: the outcome of a request, matched to it by id.
///
/// See the example in the [`jsonrpc`](crate::jsonrpc) module.
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    /// The id of the request; `None` only for errors about requests that could not be parsed.
    pub id: Option<RequestId>,
    /// The `result` member, or the `error` member.
    pub result: Result<Value, ErrorObject>,
}

impl Response {
    /// A successful response.
    ///
    /// See the example in the [`jsonrpc`](crate::jsonrpc) module.
    pub fn ok(id: RequestId, result: Value) -> Response {
        Response {
            id: Some(id),
            result: Ok(result),
        }
    }

    /// A failed response.
    ///
    /// See the example in the [`jsonrpc`](crate::jsonrpc) module.
    pub fn err(id: RequestId, error: ErrorObject) -> Response {
        Response {
            id: Some(id),
            result: Err(error),
        }
    }
}

/// Any JSON-RPC message.
///
/// See the example in the [`jsonrpc`](crate::jsonrpc) module.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// A request.
    Request(Request),
    /// A response.
    Response(Response),
    /// A notification.
    ///
    /// See the example in the [`jsonrpc`](crate::jsonrpc) module.
    Notification(Notification),
}

impl From<Request> for Message {
    fn from(r: Request) -> Message {
        Message::Request(r)
    }
}

impl From<Response> for Message {
    fn from(r: Response) -> Message {
        Message::Response(r)
    }
}

impl From<Notification> for Message {
    fn from(n: Notification) -> Message {
        Message::Notification(n)
    }
}

impl Message {
    /// Encodes the message as one compact line of JSON, without the trailing newline.
    ///
    /// Members come in the conventional order (`jsonrpc`, `id`, `method`, `params`, …), which
    /// keeps wire traces readable.
    ///
    /// See the example in the [`jsonrpc`](crate::jsonrpc) module.
    pub fn encode(&self) -> String {
        // Serialising plain structs of owned values cannot fail.
        serde_json::to_string(&Wire::from(self)).unwrap_or_default()
    }

    /// The message as a JSON value.
    ///
    /// See the example in the [`jsonrpc`](crate::jsonrpc) module.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(Wire::from(self)).unwrap_or_default()
    }
}

/// What one line (or one HTTP body or SSE event) decodes to.
///
/// See the example in the [`jsonrpc`](crate::jsonrpc) module.
#[derive(Debug, Clone, PartialEq)]
pub enum Payload {
    /// A single message.
    Single(Message),
    /// A JSON array batch (legal only under protocol 2025-03-26): its messages, the requests
    /// among its elements JSON-RPC rejects (each owed its [`InvalidRequest::reply`], as when
    /// it comes alone), and the count of the other elements, which are no messages at all and
    /// are dropped (kept so callers can log it).
    Batch(Vec<Message>, Vec<InvalidRequest>, usize),
}

impl Payload {
    /// Decodes one text holding a message or a batch.
    ///
    /// See the example in the [`jsonrpc`](crate::jsonrpc) module.
    ///
    /// # Errors
    ///
    /// Fails when the text is not JSON, is an empty batch, or is not a JSON-RPC message (a
    /// request JSON-RPC rejects, for its id or its `method`, is not one: see
    /// [`InvalidRequest`]). Members of a batch that are not messages are dropped and counted,
    /// and those that are requests JSON-RPC rejects are kept apart, without failing it.
    pub fn decode(text: &str) -> Result<Payload, DecodeError> {
        let value: Value = serde_json::from_str(text)
            .or_else(|e| {
                // Text holding a lone surrogate is read with U+FFFD in its place.
                let mended = surrogates::mend(text).ok_or(e)?;
                serde_json::from_str(&mended)
            })
            .map_err(|e| DecodeError::new(format!("invalid JSON: {e}")))?;
        match value {
            Value::Array(items) if items.is_empty() => Err(DecodeError::new("empty batch")),
            Value::Array(items) => Ok(decode::batch(text, items)),
            other => decode::single(text, other),
        }
    }
}

#[cfg(test)]
mod tests;
