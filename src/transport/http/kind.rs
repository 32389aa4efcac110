//! Which HTTP transport to speak, and how a dropped event stream is reconnected.

use std::fmt;
use std::time::Duration;

/// Which HTTP transport to speak: [`HttpConfig::transport`](super::HttpConfig::transport),
/// and the `type` of an HTTP server in a configuration file
/// ([`HttpTransportKind::parse`]).
///
/// See the example on [`HttpConfig`](super::HttpConfig).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum HttpTransportKind {
    /// Streamable HTTP first, then legacy SSE if the server rejects the first request with
    /// 400, 404 or 405.
    #[default]
    Auto,
    /// Streamable HTTP only (protocol 2025-03-26 and later).
    StreamableHttp,
    /// The legacy HTTP+SSE transport only (protocol 2024-11-05): the URL is the SSE endpoint.
    Sse,
}

impl HttpTransportKind {
    /// The name used in configuration files and logs: `auto`, `streamable-http` or `sse`.
    ///
    /// ```
    /// use umcp::HttpTransportKind;
    ///
    /// assert_eq!(HttpTransportKind::StreamableHttp.as_str(), "streamable-http");
    /// assert_eq!(HttpTransportKind::Sse.to_string(), "sse");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            HttpTransportKind::Auto => "auto",
            HttpTransportKind::StreamableHttp => "streamable-http",
            HttpTransportKind::Sse => "sse",
        }
    }

    /// Reads a configuration file's `type`: `auto`, `http` (the same as `auto`),
    /// `streamable-http` (or `streamableHttp`, `streamable_http`) and `sse`; `None` for
    /// anything else.
    ///
    /// ```
    /// use umcp::HttpTransportKind;
    ///
    /// assert_eq!(HttpTransportKind::parse("http"), Some(HttpTransportKind::Auto));
    /// assert_eq!(HttpTransportKind::parse("streamableHttp"), Some(HttpTransportKind::StreamableHttp));
    /// assert_eq!(HttpTransportKind::parse("websocket"), None);
    /// ```
    pub fn parse(name: &str) -> Option<HttpTransportKind> {
        match name {
            "auto" | "http" => Some(HttpTransportKind::Auto),
            "streamable-http" | "streamableHttp" | "streamable_http" => {
                Some(HttpTransportKind::StreamableHttp)
            }
            "sse" => Some(HttpTransportKind::Sse),
            _ => None,
        }
    }
}

impl fmt::Display for HttpTransportKind {
    /// The name of [`as_str`](HttpTransportKind::as_str).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What [`HttpTransportKind::Auto`] tries, in order. New transports extend this list.
pub(super) const AUTO_CANDIDATES: [HttpTransportKind; 2] =
    [HttpTransportKind::StreamableHttp, HttpTransportKind::Sse];

/// How a dropped event stream is reconnected: the standalone GET stream, and a POST's stream
/// resumed with `Last-Event-ID`.
///
/// The first delay is the server's `retry` value when it sent one, exactly; otherwise
/// `initial_delay`. Each further attempt doubles the delay up to `max_delay`, with jitter.
/// The attempt count starts over once a reconnected stream delivers an event.
///
/// The GET stream retries every failure under the policy, a refused connection (nothing
/// listening at the URL) included: an idle client outlives a server that restarts on its port
/// within the attempts, and the next request initializes a new session if the server forgot
/// the old one. The connection is reported closed when the attempts are spent.
///
/// A call's stream resumed with `Last-Event-ID` retries timeouts, reset connections and 5xx
/// statuses (a proxy answering 502 or 503) under the policy, but not a refused connection:
/// once a session is running, that ends the connection at once, as it does for any POST, and
/// every pending request fails with [`Error::Closed`](crate::Error::Closed). A call is
/// waiting, and its request is lost either way.
///
/// See the example on [`HttpConfig`](super::HttpConfig).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReconnectPolicy {
    /// Attempts before giving up (0 disables reconnection).
    pub max_attempts: u32,
    /// The first delay when the server sent no `retry`.
    pub initial_delay: Duration,
    /// The largest delay between attempts, unless the server's `retry` asks for more: no
    /// attempt waits less than that.
    pub max_delay: Duration,
}

impl ReconnectPolicy {
    /// A policy with the given values.
    ///
    /// See the example on [`HttpConfig`](super::HttpConfig).
    pub fn new(max_attempts: u32, initial_delay: Duration, max_delay: Duration) -> Self {
        ReconnectPolicy {
            max_attempts,
            initial_delay,
            max_delay,
        }
    }
}

impl Default for ReconnectPolicy {
    /// 5 attempts, from 1 s up to 30 s.
    fn default() -> Self {
        ReconnectPolicy::new(5, Duration::from_secs(1), Duration::from_secs(30))
    }
}
