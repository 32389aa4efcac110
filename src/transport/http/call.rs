//! One HTTP request a transport makes, described apart from the client that performs it, and
//! the words a failed one is told in.

use std::sync::Arc;
use std::time::Instant;

use crate::error::{Closed, Error, CLOSED_BY_CLIENT};
use crate::jsonrpc::Message;

/// The HTTP method of a [`Call`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Method {
    Get,
    Post,
    Delete,
}

impl Method {
    /// The method's name on the wire.
    pub fn as_str(&self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Delete => "DELETE",
        }
    }
}

/// One HTTP request to make.
pub(crate) struct Call<'a> {
    pub method: Method,
    pub url: &'a str,
    /// The JSON body of a POST.
    pub body: Option<&'a str>,
    pub accept: &'static str,
    /// Session, version and `Last-Event-ID` headers.
    pub headers: Vec<(&'static str, String)>,
    /// Per-message headers from the layer above (see [`Transport::send_with_headers`]).
    ///
    /// [`Transport::send_with_headers`]: crate::transport::Transport::send_with_headers
    pub extra: &'a [(String, String)],
    /// When the response headers must have arrived (connecting and sending included).
    pub deadline: Instant,
    /// What is waited for, for timeout errors: a JSON-RPC method or an HTTP step.
    pub what: &'a str,
}

impl Call<'_> {
    /// The `MCP-Protocol-Version` header this request carries, from the session or from the
    /// layer above.
    pub fn protocol_version(&self) -> Option<&str> {
        let named = |name: &str| name.eq_ignore_ascii_case("mcp-protocol-version");
        self.headers
            .iter()
            .find(|(n, _)| named(n))
            .map(|(_, v)| v.as_str())
            .or_else(|| {
                self.extra
                    .iter()
                    .find(|(n, _)| named(n))
                    .map(|(_, v)| v.as_str())
            })
    }
}

/// The error for sending on a closed connection.
pub(crate) fn closed_by_client() -> Error {
    Error::Closed(by_client())
}

/// Why a connection the client closed is closed.
pub(crate) fn by_client() -> Arc<Closed> {
    Arc::new(Closed {
        reason: CLOSED_BY_CLIENT.into(),
        ..Closed::default()
    })
}

/// What a POST is waited for, for timeout errors.
pub(crate) fn describe(message: &Message) -> &str {
    match message {
        Message::Request(r) => &r.method,
        Message::Notification(n) => &n.method,
        Message::Response(_) => "response",
    }
}
