//! JSON-RPC error objects and the error codes JSON-RPC and MCP define.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A JSON-RPC error code. An open set: codes this crate has no name for still round-trip.
///
/// See the example on [`Error`](crate::Error).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ErrorCode(pub i64);

impl ErrorCode {
    /// Invalid JSON was received.
    ///
    /// See the example on [`Error`](crate::Error).
    pub const PARSE_ERROR: ErrorCode = ErrorCode(-32700);
    /// The JSON sent is not a valid request object.
    ///
    /// See the example on [`Error`](crate::Error).
    pub const INVALID_REQUEST: ErrorCode = ErrorCode(-32600);
    /// The method does not exist or is not available.
    ///
    /// See the example on [`Error`](crate::Error).
    pub const METHOD_NOT_FOUND: ErrorCode = ErrorCode(-32601);
    /// Invalid method parameters (also: unknown tool, unsupported version in `initialize`).
    ///
    /// See the example on [`Error`](crate::Error).
    pub const INVALID_PARAMS: ErrorCode = ErrorCode(-32602);
    /// Internal JSON-RPC error.
    ///
    /// See the example on [`Error`](crate::Error).
    pub const INTERNAL_ERROR: ErrorCode = ErrorCode(-32603);
    /// MCP: resource not found (2024-11-05 to 2025-11-25).
    ///
    /// See the example on [`Error`](crate::Error).
    pub const RESOURCE_NOT_FOUND: ErrorCode = ErrorCode(-32002);
    /// MCP: URL elicitation required (2025-11-25).
    ///
    /// See the example on [`Error`](crate::Error).
    pub const URL_ELICITATION_REQUIRED: ErrorCode = ErrorCode(-32042);
    /// MCP: HTTP header and body disagree (2026-07-28).
    ///
    /// See the example on [`Error`](crate::Error).
    pub const HEADER_MISMATCH: ErrorCode = ErrorCode(-32020);
    /// MCP: the request needs a client capability that was not declared (2026-07-28).
    ///
    /// See the example on [`Error`](crate::Error).
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: ErrorCode = ErrorCode(-32021);
    /// MCP tasks extension (`io.modelcontextprotocol/tasks`, draft): the request needs a
    /// client capability that was not declared, named in `data.requiredCapabilities` as with
    /// [`MISSING_REQUIRED_CLIENT_CAPABILITY`](Self::MISSING_REQUIRED_CLIENT_CAPABILITY),
    /// which servers of the extension's draft answer with instead.
    ///
    /// See the example on [`Error`](crate::Error).
    pub const TASKS_MISSING_REQUIRED_CLIENT_CAPABILITY: ErrorCode = ErrorCode(-32003);
    /// MCP: the server does not support the requested protocol version (2026-07-28).
    ///
    /// See the example on [`Error`](crate::Error).
    pub const UNSUPPORTED_PROTOCOL_VERSION: ErrorCode = ErrorCode(-32022);
}

/// The `error` member of a failed response.
///
/// See the example on [`Error`](crate::Error).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The error code.
    pub code: ErrorCode,
    /// A short description.
    #[serde(default)]
    pub message: String,
    /// Extra information defined by the server. Boxed: a [`Value`] object grows several
    /// times over when anything in the program turns on `serde_json`'s `preserve_order`
    /// feature, and this object travels inside every [`Error`](crate::Error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Box<Value>>,
}

impl ErrorObject {
    /// An error object with no data.
    ///
    /// See the example on [`Error`](crate::Error).
    pub fn new(code: ErrorCode, message: impl Into<String>) -> ErrorObject {
        ErrorObject {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// Adds `data`.
    ///
    /// See the example on [`Error`](crate::Error).
    pub fn with_data(mut self, data: Value) -> ErrorObject {
        self.data = Some(Box::new(data));
        self
    }
}

impl ErrorObject {
    /// The message without the code the TypeScript SDK writes before it
    /// (`MCP error -32602: Invalid arguments`), which a display that shows the code would
    /// say twice.
    pub(crate) fn own_message(&self) -> &str {
        let code = self.code.0.to_string();
        self.message
            .strip_prefix("MCP error ")
            .and_then(|rest| rest.strip_prefix(code.as_str()))
            .and_then(|rest| rest.strip_prefix(':'))
            .map_or(self.message.as_str(), str::trim_start)
    }
}

impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (code {})", self.own_message(), self.code.0)
    }
}

impl std::error::Error for ErrorObject {}
