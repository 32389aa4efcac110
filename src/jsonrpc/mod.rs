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

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

mod decode;
mod error;
pub(crate) mod surrogates;
mod wire;

pub use decode::{DecodeError, InvalidRequest};
pub use error::{ErrorCode, ErrorObject};

pub(crate) use decode::value_kind;
pub(crate) use wire::decode_value;
use wire::Wire;

/// The `jsonrpc` member every message carries.
///
/// See the example in the [`jsonrpc`](crate::jsonrpc) module.
pub const VERSION: &str = "2.0";

/// A request id: an integer or a string, never null.
///
/// umcp sends increasing integers; servers may use either form, and any integer from
/// `i64::MIN` to `u64::MAX` (an id beyond `i64::MAX` is given back as the server sent it).
/// `Display` quotes string ids so `7` and `"7"` never look alike in logs.
///
/// ```
/// use umcp::jsonrpc::RequestId;
///
/// let (number, text) = (RequestId::from(7), RequestId::from("7"));
/// assert_eq!((number.as_i64(), number.as_str()), (Some(7), None));
/// assert_eq!((text.as_i64(), text.as_str()), (None, Some("7")));
/// assert_eq!(text.to_value(), serde_json::json!("7"));
/// assert_eq!(format!("{number} {text}"), r#"7 "7""#);
///
/// // Beyond `i64`: an integer all the same, with one form whichever way it was made.
/// let big = RequestId::from(u64::MAX);
/// assert_eq!((big.as_i64(), big.as_u64()), (None, Some(u64::MAX)));
/// assert_eq!(big.to_value(), serde_json::json!(u64::MAX));
/// assert_eq!(RequestId::from(7_u64), number);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RequestId(IdRepr);

/// The forms of an id. An integer is `Int` whenever it fits, so each id has one form (and
/// equal ids compare equal); `Big` comes after `Int`, which keeps integers in order.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(untagged)]
enum IdRepr {
    Int(i64),
    /// An integer beyond `i64::MAX`, which servers counting in unsigned 64 bits reach.
    Big(u64),
    Str(String),
}

impl RequestId {
    /// The integer value, if this id is an integer that fits an `i64`.
    ///
    /// See the example on [`RequestId`].
    pub fn as_i64(&self) -> Option<i64> {
        match &self.0 {
            IdRepr::Int(n) => Some(*n),
            IdRepr::Big(_) | IdRepr::Str(_) => None,
        }
    }

    /// The integer value, if this id is an integer that fits a `u64`.
    ///
    /// See the example on [`RequestId`].
    pub fn as_u64(&self) -> Option<u64> {
        match &self.0 {
            IdRepr::Int(n) => u64::try_from(*n).ok(),
            IdRepr::Big(n) => Some(*n),
            IdRepr::Str(_) => None,
        }
    }

    /// The string value, if this id is a string.
    ///
    /// See the example on [`RequestId`].
    pub fn as_str(&self) -> Option<&str> {
        match &self.0 {
            IdRepr::Int(_) | IdRepr::Big(_) => None,
            IdRepr::Str(s) => Some(s),
        }
    }

    /// The id as a JSON value.
    ///
    /// See the example on [`RequestId`].
    pub fn to_value(&self) -> Value {
        match &self.0 {
            IdRepr::Int(n) => Value::from(*n),
            IdRepr::Big(n) => Value::from(*n),
            IdRepr::Str(s) => Value::from(s.as_str()),
        }
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> RequestId {
        RequestId(IdRepr::Int(n))
    }
}

impl From<u64> for RequestId {
    fn from(n: u64) -> RequestId {
        match i64::try_from(n) {
            Ok(n) => RequestId(IdRepr::Int(n)),
            Err(_) => RequestId(IdRepr::Big(n)),
        }
    }
}

impl From<i32> for RequestId {
    fn from(n: i32) -> RequestId {
        RequestId(IdRepr::Int(n.into()))
    }
}

impl From<String> for RequestId {
    fn from(s: String) -> RequestId {
        RequestId(IdRepr::Str(s))
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> RequestId {
        RequestId(IdRepr::Str(s.to_owned()))
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            IdRepr::Int(n) => write!(f, "{n}"),
            IdRepr::Big(n) => write!(f, "{n}"),
            IdRepr::Str(s) => write!(f, "{s:?}"),
        }
    }
}

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
    /// A JSON array batch (legal only under protocol 2025-03-26). Malformed elements (requests
    /// JSON-RPC rejects among them) are dropped; the count of dropped elements
    /// is kept so callers can log it.
    Batch(Vec<Message>, usize),
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
    /// [`InvalidRequest`]). Members of
    /// a batch that are not messages are dropped and counted, without failing it.
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
            Value::Array(items) => {
                let total = items.len();
                let messages: Vec<Message> = items
                    .into_iter()
                    .filter_map(|item| Message::from_value(item).ok())
                    .collect();
                let dropped = total - messages.len();
                Ok(Payload::Batch(messages, dropped))
            }
            other => Message::from_value(other).map(Payload::Single),
        }
    }
}

#[cfg(test)]
mod tests;
