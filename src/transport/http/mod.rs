//! HTTP transports: Streamable HTTP (protocol 2025-03-26 on, the stateless 2026-07-28
//! included) and the legacy HTTP+SSE transport (2024-11-05), configured by one
//! [`HttpConfig`].
//!
//! The configuration types are in every build, so a configured HTTP server reads the same
//! everywhere; the transports themselves need the `http` feature (without it, connecting
//! fails with [`Error::Unsupported`](crate::Error::Unsupported)).
//!
//! With [`HttpTransportKind::Auto`] (the default) the client speaks Streamable HTTP and, when
//! the server rejects the very first request with 400, 404 or 405, falls back to legacy SSE
//! through [`Connect::fallback`](crate::transport::Connect::fallback). 401 and 403 never fall back: they surface as
//! [`Error::Unauthorized`](crate::Error::Unauthorized) and
//! [`Error::Forbidden`](crate::Error::Forbidden) with the parsed `WWW-Authenticate` hints.
//!
//! ```no_run
//! use std::time::Duration;
//! use umcp::transport::http::HttpConfig;
//!
//! let config = HttpConfig::new("https://mcp.example.com/mcp")
//!     .header("Authorization", "Bearer secret-token")
//!     .connect_timeout(Duration::from_secs(5))
//!     .idle_timeout(Duration::from_secs(120));
//! # let _ = config;
//! ```

// Without the transports (and OAuth) the items some docs link to are not built; the docs are
// built, and their links checked, with every feature.
#![cfg_attr(not(feature = "oauth"), allow(rustdoc::broken_intra_doc_links))]

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

#[cfg(feature = "http")]
mod certificate;
mod credentials;
mod kind;
mod network;
mod network_setters;
mod proxy;
mod trust;

#[cfg(feature = "http")]
mod auth_header;
#[cfg(feature = "http")]
mod body;
#[cfg(feature = "http")]
mod call;
#[cfg(feature = "http")]
mod check;
#[cfg(feature = "http")]
mod connect;
#[cfg(feature = "http")]
mod delivery;
#[cfg(feature = "http")]
mod get_stream;
#[cfg(feature = "http")]
mod legacy;
#[cfg(feature = "http")]
mod parked;
#[cfg(feature = "http")]
mod post_stream;
#[cfg(feature = "http")]
pub(crate) mod provider_deadline;
#[cfg(feature = "http")]
mod reply;
#[cfg(feature = "http")]
pub(crate) mod route;
#[cfg(feature = "http")]
mod session;
#[cfg(feature = "http")]
mod socket;
#[cfg(feature = "http")]
mod stop;
#[cfg(feature = "http")]
mod streamable;
#[cfg(feature = "http")]
mod streams;
#[cfg(feature = "http")]
pub(crate) mod tls;
#[cfg(feature = "http")]
pub(crate) mod url;
#[cfg(feature = "http")]
mod wire;

pub use crate::error::{NetworkError, NetworkProblem};
#[cfg(feature = "http")]
pub use check::{NetworkCheck, NetworkStep};
pub use credentials::{CredentialProvider, MAX_CREDENTIAL_RETRIES};
pub use kind::{HttpTransportKind, ReconnectPolicy};
pub(crate) use network::Network;
pub use proxy::Proxy;
#[cfg(feature = "http")]
pub use streamable::CLOSE_TIMEOUT;
pub use trust::{ClientIdentity, PemSource, TrustRoots};

use kind::AUTO_CANDIDATES;

/// Configuration of an HTTP server connection; implements [`Connect`](crate::transport::Connect).
///
/// Build it with [`HttpConfig::new`] and the setters below; read it back with the `get_*`
/// methods.
///
/// ```
/// use std::time::Duration;
/// use umcp::{HttpConfig, HttpTransportKind, ReconnectPolicy};
///
/// let config = HttpConfig::new("https://mcp.example.com/mcp")
///     .header("X-Api-Key", "not-a-real-key")
///     .transport(HttpTransportKind::StreamableHttp)
///     .connect_timeout(Duration::from_secs(5))
///     .request_timeout(Duration::from_secs(60))
///     .idle_timeout(Duration::from_secs(300))
///     .standalone_stream(false)
///     .max_event_size(4 << 20)
///     .reconnect(ReconnectPolicy::new(3, Duration::from_millis(500), Duration::from_secs(10)));
/// assert_eq!(config.get_url(), "https://mcp.example.com/mcp");
/// assert_eq!(config.get_transport(), HttpTransportKind::StreamableHttp);
/// assert_eq!(config.get_headers(), [("X-Api-Key".to_owned(), "not-a-real-key".to_owned())]);
/// assert_eq!(config.get_connect_timeout(), Duration::from_secs(5));
/// assert_eq!(config.get_request_timeout(), Some(Duration::from_secs(60)));
/// assert_eq!(config.get_idle_timeout(), Duration::from_secs(300));
/// assert_eq!(config.get_max_event_size(), 4 << 20);
/// assert_eq!(config.get_reconnect().max_attempts, 3);
/// assert!(!config.get_standalone_stream() && config.get_credentials().is_none());
/// // Then: umcp::Client::connect(config)
/// ```
#[derive(Clone)]
pub struct HttpConfig {
    url: String,
    headers: Vec<(String, String)>,
    kind: HttpTransportKind,
    /// Position in [`AUTO_CANDIDATES`] when `kind` is `Auto`.
    candidate: usize,
    connect_timeout: Duration,
    request_timeout: Option<Duration>,
    idle_timeout: Duration,
    standalone_stream: bool,
    max_event_size: usize,
    reconnect: ReconnectPolicy,
    credentials: Option<Arc<dyn CredentialProvider>>,
    /// The proxy, TLS trust and client certificate, and Unix socket.
    pub(crate) network: Network,
}

impl HttpConfig {
    /// A configuration for the MCP endpoint (or, for [`HttpTransportKind::Sse`], the SSE
    /// endpoint) at `url`.
    ///
    /// See the example on [`HttpConfig`].
    pub fn new(url: impl Into<String>) -> HttpConfig {
        HttpConfig {
            url: url.into(),
            headers: Vec::new(),
            kind: HttpTransportKind::Auto,
            candidate: 0,
            connect_timeout: Duration::from_secs(10),
            request_timeout: None,
            idle_timeout: Duration::from_secs(300),
            standalone_stream: true,
            max_event_size: crate::transport::sse::DEFAULT_MAX_EVENT_SIZE,
            reconnect: ReconnectPolicy::default(),
            credentials: None,
            network: Network::default(),
        }
    }

    /// Adds a header sent on every request, e.g. `Authorization: Bearer …`.
    ///
    /// See the example on [`HttpConfig`].
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> HttpConfig {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Chooses the transport (default [`HttpTransportKind::Auto`]).
    ///
    /// See the example on [`HttpConfig`].
    pub fn transport(mut self, kind: HttpTransportKind) -> HttpConfig {
        self.kind = kind;
        self.candidate = 0;
        self
    }

    /// The limit for establishing a connection, and for the legacy SSE `endpoint` event to
    /// arrive (default 10 s; `Duration::MAX` means none). A client's start-up deadline
    /// ([`Options::with_startup_timeout`](crate::Options::with_startup_timeout)) ends the wait for
    /// the endpoint too, when it comes first.
    ///
    /// See the example on [`HttpConfig`].
    pub fn connect_timeout(mut self, timeout: Duration) -> HttpConfig {
        self.connect_timeout = timeout;
        self
    }

    /// Caps how long any one HTTP request may wait for its response. Without it (the
    /// default), a message is bounded by the deadline of [`Transport::send`](crate::transport::Transport::send) (the request
    /// timeout of the client), and requests the transport makes on its own (opening the GET
    /// stream, resuming a stream) by 30 s. Either bound covers the whole exchange, body
    /// included (an event stream is bounded by the idle timeout instead). The `DELETE` of
    /// `close` is bounded by [`CLOSE_TIMEOUT`] in any case. `Duration::MAX` means no cap.
    ///
    /// See the example on [`HttpConfig`].
    pub fn request_timeout(mut self, timeout: Duration) -> HttpConfig {
        self.request_timeout = Some(timeout);
        self
    }

    /// How long an event stream may stay silent before it is treated as dropped (default
    /// 300 s; `Duration::MAX` means forever). Comments and keep-alives count as activity; a
    /// stream nobody waits for any more is dropped at once whatever it sends.
    ///
    /// See the example on [`HttpConfig`].
    pub fn idle_timeout(mut self, timeout: Duration) -> HttpConfig {
        self.idle_timeout = timeout;
        self
    }

    /// Whether to open the standalone GET stream for server-initiated messages once the
    /// session is ready (default `true`).
    ///
    /// [`SessionEvent::Ready`](crate::transport::SessionEvent::Ready) then waits, at most the
    /// connect timeout, for the server to answer the GET, so that server messages sent after
    /// the next request find the stream open. A server that answers 405 (or anything but an
    /// event stream) offers no stream; that is not an error.
    ///
    /// A request the server accepts with `202 Accepted` or an empty `200` instead of its
    /// response (against the rules) waits for the response on this stream while it is open,
    /// within the request's deadline, and fails with
    /// [`Error::ResponseLost`](crate::Error::ResponseLost) as soon as the stream ends for good
    /// (its session gone); with no stream open it fails at once with
    /// [`Error::Protocol`](crate::Error::Protocol), and the server is sent
    /// `notifications/cancelled` for it.
    ///
    /// See the example on [`HttpConfig`].
    pub fn standalone_stream(mut self, enabled: bool) -> HttpConfig {
        self.standalone_stream = enabled;
        self
    }

    /// The largest accepted message: one SSE event or one JSON body (default 16 MiB;
    /// `usize::MAX` means no limit).
    ///
    /// See the example on [`HttpConfig`].
    pub fn max_event_size(mut self, bytes: usize) -> HttpConfig {
        self.max_event_size = bytes;
        self
    }

    /// How dropped event streams are reconnected (default [`ReconnectPolicy::default`]).
    ///
    /// See the example on [`HttpConfig`].
    pub fn reconnect(mut self, policy: ReconnectPolicy) -> HttpConfig {
        self.reconnect = policy;
        self
    }

    /// Sets the provider asked for credentials before every request.
    ///
    /// See the example on [`auth::OAuth`](crate::auth::OAuth).
    pub fn credentials(mut self, provider: Arc<dyn CredentialProvider>) -> HttpConfig {
        self.credentials = Some(provider);
        self
    }

    /// The URL.
    ///
    /// See the example on [`HttpConfig`].
    pub fn get_url(&self) -> &str {
        &self.url
    }

    /// The extra headers, in the order added.
    ///
    /// See the example on [`HttpConfig`].
    pub fn get_headers(&self) -> &[(String, String)] {
        &self.headers
    }

    /// The configured transport kind.
    ///
    /// See the example on [`HttpConfig`].
    pub fn get_transport(&self) -> HttpTransportKind {
        self.kind
    }

    /// The connect timeout.
    ///
    /// See the example on [`HttpConfig`].
    pub fn get_connect_timeout(&self) -> Duration {
        self.connect_timeout
    }

    /// The request timeout, when one is set.
    ///
    /// See the example on [`HttpConfig`].
    pub fn get_request_timeout(&self) -> Option<Duration> {
        self.request_timeout
    }

    /// The idle timeout of event streams.
    ///
    /// See the example on [`HttpConfig`].
    pub fn get_idle_timeout(&self) -> Duration {
        self.idle_timeout
    }

    /// Whether the standalone GET stream is opened.
    ///
    /// See the example on [`HttpConfig`].
    pub fn get_standalone_stream(&self) -> bool {
        self.standalone_stream
    }

    /// The message size limit in bytes.
    ///
    /// See the example on [`HttpConfig`].
    pub fn get_max_event_size(&self) -> usize {
        self.max_event_size
    }

    /// The reconnection policy.
    ///
    /// See the example on [`HttpConfig`].
    pub fn get_reconnect(&self) -> ReconnectPolicy {
        self.reconnect
    }

    /// The credential provider, when one is set.
    ///
    /// See the example on [`HttpConfig`].
    pub fn get_credentials(&self) -> Option<&Arc<dyn CredentialProvider>> {
        self.credentials.as_ref()
    }

    /// The concrete transport this configuration connects with.
    fn effective_kind(&self) -> HttpTransportKind {
        match self.kind {
            HttpTransportKind::Auto => {
                AUTO_CANDIDATES[self.candidate.min(AUTO_CANDIDATES.len() - 1)]
            }
            kind => kind,
        }
    }
}

impl fmt::Debug for HttpConfig {
    /// Header values, and the password and query values of the URL, are not shown: they
    /// often hold credentials.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let header_names: Vec<&str> = self.headers.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("HttpConfig")
            .field("url", &crate::redact::url(&self.url))
            .field("headers", &header_names)
            .field("kind", &self.effective_kind())
            .field("connect_timeout", &self.connect_timeout)
            .field("request_timeout", &self.request_timeout)
            .field("idle_timeout", &self.idle_timeout)
            .field("standalone_stream", &self.standalone_stream)
            .field("max_event_size", &self.max_event_size)
            .field("reconnect", &self.reconnect)
            .field("credentials", &self.credentials.is_some())
            .field("proxy", &self.network.proxy)
            .field("tls", &self.network.tls)
            .field("unix_socket", &self.network.unix_socket)
            .finish()
    }
}

/// Without the `http` feature there is no HTTP stack: connecting fails at once, naming it.
#[cfg(not(feature = "http"))]
impl crate::transport::Connect for HttpConfig {
    fn connect(
        &self,
        _inbox: crate::transport::Inbox,
    ) -> crate::Result<Box<dyn crate::transport::Transport>> {
        Err(crate::Error::Unsupported(crate::Unsupported::Feature(
            format!(
                "HTTP server `{}`: umcp was built without the `http` feature",
                self.describe()
            ),
        )))
    }

    fn describe(&self) -> String {
        crate::redact::url(&self.url)
    }
}

#[cfg(all(test, feature = "http"))]
mod tests;
