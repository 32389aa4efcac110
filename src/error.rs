//! The one error type of the crate, with variants a caller can act on.

use std::fmt;
use std::io;
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

use crate::jsonrpc::ErrorObject;

mod http;
mod network;
mod skill;
mod summary;
mod tool;

pub use http::{AuthError, AuthStep, HttpError, WwwAuthenticate};
pub use network::{NetworkError, NetworkProblem};
pub use skill::SkillError;
pub use tool::{Hidden, HiddenTool, ToolField};

use summary::DataSummary;

/// A `Result` whose error is [`Error`].
///
/// See the example on [`Client`](crate::Client).
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong talking to an MCP server.
///
/// Match on the variant to decide what to do: retry after [`Error::Timeout`], reconnect after
/// [`Error::Closed`], authorize after [`Error::Unauthorized`], show the server's message after
/// [`Error::Rpc`]. New variants may be added in minor releases.
///
/// Its `Display` is the whole story, the cause included (`failed to start `x`: No such file
/// or directory`), so [`source`](std::error::Error::source) is `None`: a reporter that prints
/// the chain of causes (`anyhow`'s `{:#}`, say) shows each cause once. The underlying error
/// is in the variant ([`Error::Io`], [`Error::Spawn`], [`Error::Rpc`]).
///
/// ```
/// use serde_json::json;
/// use umcp::jsonrpc::{ErrorCode, ErrorObject};
/// use umcp::Error;
///
/// fn advice(error: &Error) -> String {
///     if error.is_timeout() {
///         return "try again later".into();
///     }
///     if let Some(versions) = error.unsupported_protocol_version() {
///         return format!("the server speaks {:?}", versions.supported);
///     }
///     if error.is_resource_not_found() {
///         return "no such resource".into();
///     }
///     if error.needs_authorization() {
///         return "sign in first".into();
///     }
///     if let Some(closed) = error.closed_info() {
///         return format!("reconnect ({})", closed.reason);
///     }
///     match (error.rpc_error(), error.http_status()) {
///         (Some(rpc), _) => format!("the server said: {}", rpc.message),
///         (None, Some(status)) => format!("HTTP {status}"),
///         (None, None) => error.to_string(),
///     }
/// }
///
/// let missing = Error::Rpc(ErrorObject::new(ErrorCode::RESOURCE_NOT_FOUND, "no such file"));
/// assert_eq!(advice(&missing), "no such resource");
/// let too_new = Error::Rpc(
///     ErrorObject::new(ErrorCode::UNSUPPORTED_PROTOCOL_VERSION, "unsupported version")
///         .with_data(json!({ "supported": ["2025-11-25"], "requested": "2026-07-28" })),
/// );
/// assert_eq!(advice(&too_new), r#"the server speaks ["2025-11-25"]"#);
/// let pipe = Error::io(std::io::Error::other("broken pipe"));
/// assert!(!pipe.is_header_mismatch() && pipe.missing_client_capabilities().is_none());
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Error {
    /// An I/O operation failed (reading or writing a pipe or socket).
    Io(Arc<io::Error>),
    /// The server process could not be started.
    Spawn {
        /// The program that was to be run.
        command: String,
        /// Why the operating system refused.
        source: Arc<io::Error>,
    },
    /// The peer broke the protocol: a reply that does not parse or does not fit the request.
    Protocol(String),
    /// The server answered the request with a JSON-RPC error: its code, message and data.
    ///
    /// `Display` ends with a one-line summary of the `data` (compact JSON, a string as its
    /// text, keys sorted, at most 240 characters), so the versions a server lists after
    /// -32022 or the details of a -32602 reach the user. MCP's own codes have named
    /// questions: [`Error::is_header_mismatch`], [`Error::missing_client_capabilities`],
    /// [`Error::unsupported_protocol_version`], [`Error::url_elicitations_required`] and
    /// [`Error::is_resource_not_found`].
    Rpc(ErrorObject),
    /// A deadline passed before the operation finished.
    Timeout {
        /// The JSON-RPC method (or HTTP step) that was waited for.
        method: String,
        /// How long it was waited for.
        elapsed: Duration,
        /// Which deadline it was.
        kind: TimeoutKind,
        /// The last lines a stdio server wrote to stderr, when connecting to it timed out
        /// (they often say why: a download in progress, a missing setting); `None` otherwise.
        /// Shown by `Display` as `Closed` shows it. (An `Arc` keeps [`Error`] small.)
        stderr_tail: Option<Arc<String>>,
    },
    /// The request was cancelled through its [`CancelHandle`](crate::CancelHandle), or the
    /// connect through the one given in
    /// [`Options::with_connect_cancel`](crate::Options::with_connect_cancel).
    Cancelled {
        /// The JSON-RPC method of the cancelled request; `connect` for a cancelled connect.
        method: String,
    },
    /// The connection is gone; nothing more can be sent over it.
    Closed(Arc<Closed>),
    /// The server or the negotiated protocol does not offer what was asked for.
    Unsupported(Unsupported),
    /// A message was larger than the configured maximum and was discarded.
    MessageTooLarge {
        /// The configured limit in bytes.
        limit: usize,
    },
    /// An HTTP request got a non-success status other than 401 and 403.
    Http(Box<HttpError>),
    /// HTTP 401: the server wants credentials; the `WWW-Authenticate` hints say which.
    Unauthorized(Box<HttpError>),
    /// HTTP 403: the credentials are not enough (for example `insufficient_scope`); the
    /// `WWW-Authenticate` hints say what is missing.
    Forbidden(Box<HttpError>),
    /// The network between umcp and an HTTP server failed in a way a person can act on: a
    /// certificate refused (and why, and who issued it), a client certificate required or
    /// refused, a proxy unreachable or refusing. `Display` ends with the remedy.
    Network(Box<NetworkError>),
    /// The HTTP session ended on the server: a request that carried a session id was answered
    /// with 404, or with a 400 whose body names the session (as the TypeScript SDK's servers
    /// answer an unknown session id).
    SessionExpired,
    /// A configuration file, entry, option or argument cannot be used, named in the message;
    /// nothing was sent.
    Config(String),
    /// What the caller asked for does not exist or does not fit, and nothing was sent: a tool
    /// or prompt name the [`Manager`](crate::Manager) never gave, tool or prompt arguments
    /// that are not a JSON object, or a form answer outside its field's schema
    /// ([`ElicitForm`](crate::types::ElicitForm)). Its `Display` is the message
    /// alone (``no tool named `x`; did you mean `a__x`?``).
    Invalid(String),
    /// Obtaining credentials failed: OAuth discovery, client registration, the user's
    /// authorization or the token request. The details name the step and the server's answer.
    Auth(Box<AuthError>),
    /// The stream that was to carry a response ended before the response and cannot be
    /// resumed: the request is lost, and the server may or may not have acted on it. In the
    /// stateless era the client re-issues such a request once, under a new id, as the spec
    /// asks, when that does nothing twice: a read or listing (`resources/read`,
    /// `prompts/get`, `tools/list`, `server/discover`, …), a task's status, result or
    /// cancellation, and a `tools/call` only when the tool's last listing marked it
    /// `readOnlyHint` or `idempotentHint`. Any other request, a vendor's or an extension's
    /// method sent with [`Client::request_raw`](crate::Client::request_raw) among them,
    /// could have acted already and comes back as this error.
    ResponseLost(String),
    /// A skill or one of its files failed the Skills extension's checks: an entry that may
    /// not be loaded, a file the entry does not list (not read), or content whose size,
    /// digest or frontmatter differs from the entry (not returned). Fetch the entry again
    /// ([`Client::get_skill`](crate::Client::get_skill)) before trying once more.
    Skill(Box<SkillError>),
    /// The tool is hidden, and the call was refused before anything was sent: the server's
    /// tool filter leaves it out, or it is not the tool the lock pinned (see [`HiddenTool`]).
    ToolHidden(Box<HiddenTool>),
}

// Every `Result` of the crate, and of its callers, carries an `Error`: it stays within eight
// words whatever the features of the build, which a caller's dependency graph decides (the
// `preserve_order` of serde_json grows every `Value`, hence the boxed `ErrorObject::data`).
// Checked when compiling, so in every feature combination that builds.
const _: () = assert!(std::mem::size_of::<Error>() <= 64);

/// Which deadline a [`Error::Timeout`] refers to.
///
/// See the example on [`Error`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TimeoutKind {
    /// The per-request timeout (reset by progress when that is enabled).
    Request,
    /// The maximum total time of a request, which progress never extends.
    Total,
    /// Establishing a connection (TCP/TLS, or a legacy SSE `endpoint` event).
    Connect,
    /// A stream that went quiet for longer than allowed.
    Idle,
    /// Handing a message to the transport (a server that stopped reading its input).
    Write,
    /// The start-up deadline: connecting, the protocol probe and the handshake together
    /// ([`Options::with_startup_timeout`](crate::Options::with_startup_timeout), or a managed
    /// server's start-up timeout).
    Startup,
}

/// The [`Closed::reason`] of a connection the client closed itself, on every transport.
pub(crate) const CLOSED_BY_CLIENT: &str = "closed by client";

/// Why a connection closed, shared by every request that was pending at that moment.
///
/// Its `Display` is one line; after the client's own [`close`](crate::Client::close) it reads
/// `closed: closed by client`, without the server's stderr (which then holds only what a
/// healthy server prints, such as a start-up banner; it stays in [`Closed::stderr_tail`]).
///
/// See the example on [`Client::close`](crate::Client::close).
#[derive(Debug, Clone, Default)]
pub struct Closed {
    /// What ended the connection, e.g. "server exited", or "closed by client" after the
    /// client's own [`close`](crate::Client::close) (see [`Closed::is_client_close`]).
    pub reason: String,
    /// The server's exit status, for stdio servers that have exited.
    pub exit_status: Option<ExitStatus>,
    /// The last lines the server wrote to stderr, for stdio servers. The first three lines it
    /// wrote to stdout that were not JSON-RPC (a banner, logs) are among them, marked
    /// `[stdout, not JSON-RPC]`: that mistake otherwise shows only as a server that never
    /// answers.
    pub stderr_tail: Option<String>,
}

/// What a [`Error::Unsupported`] was about.
///
/// See the example on [`Error`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Unsupported {
    /// The server did not advertise the capability this method needs, so it was not sent.
    Capability {
        /// The method that was not sent.
        method: String,
        /// The server capability it needs, e.g. `resources.subscribe`.
        capability: &'static str,
    },
    /// The server answered `initialize` with a protocol version this client does not speak.
    Version {
        /// The version the client offered.
        offered: String,
        /// The version the server answered with.
        received: String,
    },
    /// The operation needs something not available on this transport, protocol era or
    /// build: a method the stateless era removed (`resources/subscribe`), an HTTP server in a
    /// build without the `http` feature, or an input round asking for a handler (or an
    /// elicitation mode, or sampling with tools) the client did not declare.
    Feature(String),
}

impl Error {
    /// Wraps an I/O error.
    ///
    /// See the example on [`Error`].
    pub fn io(err: io::Error) -> Error {
        Error::Io(Arc::new(err))
    }

    /// The closed details when this is [`Error::Closed`].
    ///
    /// See the example on [`Error`].
    pub fn closed_info(&self) -> Option<&Closed> {
        match self {
            Error::Closed(info) => Some(info),
            _ => None,
        }
    }

    /// The HTTP status of an HTTP failure (including 401 and 403).
    ///
    /// See the example on [`Error`].
    pub fn http_status(&self) -> Option<u16> {
        match self {
            Error::Http(e) | Error::Unauthorized(e) | Error::Forbidden(e) => Some(e.status),
            _ => None,
        }
    }

    /// An HTTP 400, 404 or 405: how a server refuses a transport it does not speak (legacy SSE
    /// where Streamable HTTP was tried, or the other way round), so another may be tried.
    pub(crate) fn refuses_transport(&self) -> bool {
        matches!(self.http_status(), Some(400 | 404 | 405))
    }

    /// True for [`Error::Unauthorized`] and [`Error::Forbidden`]: the server wants (other)
    /// credentials, so retrying as is will not help.
    ///
    /// See the example on [`Error`].
    pub fn needs_authorization(&self) -> bool {
        matches!(self, Error::Unauthorized(_) | Error::Forbidden(_))
    }

    /// True for [`Error::Timeout`].
    ///
    /// See the example on [`Error`].
    pub fn is_timeout(&self) -> bool {
        matches!(self, Error::Timeout { .. })
    }

    /// The hidden tool when this is [`Error::ToolHidden`].
    ///
    /// See the example on [`HiddenTool`].
    pub fn hidden_tool(&self) -> Option<&HiddenTool> {
        match self {
            Error::ToolHidden(hidden) => Some(hidden),
            _ => None,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io(e) => write!(f, "io: {e}"),
            Error::Spawn { command, source } => write!(f, "failed to start `{command}`: {source}"),
            Error::Protocol(msg) => write!(f, "protocol: {msg}"),
            Error::Rpc(e) => {
                write!(f, "server error {}: {}", e.code.0, e.own_message())?;
                match e.data.as_deref() {
                    None | Some(serde_json::Value::Null) => Ok(()),
                    Some(data) => write!(f, " (data: {})", DataSummary(data)),
                }
            }
            Error::Timeout {
                method,
                elapsed,
                kind,
                stderr_tail,
            } => {
                let what = match kind {
                    TimeoutKind::Request => "request",
                    TimeoutKind::Total => "maximum total time of request",
                    TimeoutKind::Connect => "connect",
                    TimeoutKind::Idle => "idle stream",
                    TimeoutKind::Write => "write",
                    TimeoutKind::Startup => "start-up",
                };
                write!(f, "timeout: {what} `{method}` after {elapsed:.1?}")?;
                write_stderr(f, stderr_tail.as_deref().map(String::as_str))
            }
            Error::Cancelled { method } => write!(f, "cancelled: `{method}`"),
            Error::Closed(info) => fmt::Display::fmt(info, f),
            Error::Unsupported(u) => fmt::Display::fmt(u, f),
            Error::MessageTooLarge { limit } => {
                write!(f, "message too large: over the limit of {limit} bytes")
            }
            Error::Http(e) => write!(f, "http: {e}"),
            Error::Unauthorized(e) => write!(f, "unauthorized: {e}"),
            Error::Forbidden(e) => write!(f, "forbidden: {e}"),
            Error::Network(e) => write!(f, "network: {e}"),
            Error::SessionExpired => f.write_str("session expired: the server ended the session"),
            Error::ResponseLost(why) => write!(f, "response lost: {why}"),
            Error::Config(msg) => write!(f, "config: {msg}"),
            Error::Invalid(msg) => f.write_str(msg),
            Error::Auth(e) => fmt::Display::fmt(e, f),
            Error::Skill(e) => write!(f, "skill: {e}"),
            Error::ToolHidden(hidden) => fmt::Display::fmt(hidden, f),
        }
    }
}

// No `source`: `Display` includes the cause already (see [`Error`]).
impl std::error::Error for Error {}

impl From<SkillError> for Error {
    fn from(err: SkillError) -> Error {
        Error::Skill(Box::new(err))
    }
}

impl From<io::Error> for Error {
    fn from(err: io::Error) -> Error {
        Error::io(err)
    }
}

impl Closed {
    /// Whether the client closed the connection itself (a normal end, not a failure).
    ///
    /// ```no_run
    /// # fn main() -> umcp::Result<()> {
    /// let client = umcp::Client::connect(umcp::StdioConfig::from_command_line("my-server")?)?;
    /// client.close();
    /// let closed = client.closed().expect("closed");
    /// assert!(closed.is_client_close());
    /// assert_eq!(closed.to_string(), "closed: closed by client");
    /// # Ok(()) }
    /// ```
    pub fn is_client_close(&self) -> bool {
        self.reason == CLOSED_BY_CLIENT
    }
}

impl fmt::Display for Closed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "closed: {}", self.reason)?;
        if self.is_client_close() {
            return Ok(());
        }
        if let Some(status) = &self.exit_status {
            write!(f, ": {status}")?;
        }
        write_stderr(f, self.stderr_tail.as_deref())
    }
}

/// Appends a server's stderr tail, when it has anything, as `; stderr: …`.
fn write_stderr(f: &mut fmt::Formatter<'_>, tail: Option<&str>) -> fmt::Result {
    match tail.filter(|t| !t.trim().is_empty()) {
        Some(tail) => write!(f, "; stderr: {}", tail.trim_end()),
        None => Ok(()),
    }
}

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unsupported::Capability { method, capability } => write!(
                f,
                "unsupported: the server does not advertise `{capability}`, needed by `{method}`"
            ),
            Unsupported::Version { offered, received } => write!(
                f,
                "unsupported: protocol version {received} from the server (offered {offered})"
            ),
            Unsupported::Feature(what) => write!(f, "unsupported: {what}"),
        }
    }
}

#[cfg(test)]
mod tests;
