//! How a configured server is reached: a command over stdio, or an HTTP endpoint of one of
//! the HTTP transports.

use std::fmt;

use crate::redact;
use crate::transport::http::HttpConfig;
use crate::transport::StdioConfig;

use super::OAuthSettings;

/// How a server is reached: the transport configuration [`Client::connect`](crate::Client::connect)
/// takes, which the manager connects with.
///
/// A configuration file's entry fills in what the file can say (command, arguments,
/// environment, working directory; URL, headers, transport kind); a server built in code may
/// set anything its transport offers (say [`StdioConfig::stderr_callback`] or
/// [`HttpConfig::reconnect`]). A [`ServerConfig`](super::ServerConfig)'s timeouts, when set,
/// win over the transport's own ([`HttpConfig::connect_timeout`],
/// [`HttpConfig::request_timeout`]).
///
/// `Debug` hides what may be a secret: the values of environment variables and headers,
/// secret-looking arguments, and the password and query values of the URL.
///
/// ```
/// use umcp::{HttpConfig, OAuthSettings, ServerConfig, ServerTransport, StdioConfig};
///
/// let time = ServerConfig::new(
///     "time",
///     StdioConfig::new("uvx").arg("mcp-server-time").max_message_size(1 << 20),
/// );
/// let ServerTransport::Stdio(stdio) = &time.transport else { unreachable!() };
/// assert_eq!(stdio.get_args(), ["mcp-server-time"]);
///
/// let docs = ServerConfig::new("docs", HttpConfig::new("https://docs.example.com/mcp"))
///     .with_oauth(OAuthSettings::new());
/// let ServerTransport::Http(http, Some(_oauth)) = &docs.transport else { unreachable!() };
/// assert_eq!(http.get_url(), "https://docs.example.com/mcp");
/// ```
#[derive(Clone)]
#[non_exhaustive]
// One value per configured server, built once: boxing the larger variant would cost every
// pattern a dereference and save nothing a caller could measure.
#[allow(clippy::large_enum_variant)]
pub enum ServerTransport {
    /// A child process speaking newline-delimited JSON on stdin and stdout.
    Stdio(StdioConfig),
    /// An HTTP endpoint (Streamable HTTP or legacy HTTP+SSE), and the OAuth 2.1 settings the
    /// [`Manager`](crate::Manager) authorizes it with (feature `oauth`): `None` when the
    /// server needs none, or gets its credentials from a header or
    /// [`HttpConfig::credentials`].
    Http(HttpConfig, Option<OAuthSettings>),
}

impl From<StdioConfig> for ServerTransport {
    fn from(config: StdioConfig) -> ServerTransport {
        ServerTransport::Stdio(config)
    }
}

impl From<HttpConfig> for ServerTransport {
    fn from(config: HttpConfig) -> ServerTransport {
        ServerTransport::Http(config, None)
    }
}

impl fmt::Debug for ServerTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Expanded from `${VAR}`s, these values are where configured keys end up; the
        // transports' own `Debug` is not relied on to hide them.
        match self {
            ServerTransport::Stdio(config) => f
                .debug_struct("Stdio")
                .field("command", &config.get_command())
                .field("args", &redact::args(config.get_args()))
                .field("env", &redact::values(config.get_envs()))
                .field("cwd", &config.get_cwd())
                .field("env_policy", &config.get_env_policy())
                .finish_non_exhaustive(),
            ServerTransport::Http(config, oauth) => f
                .debug_struct("Http")
                .field("url", &redact::url(config.get_url()))
                .field("headers", &redact::values(config.get_headers()))
                .field("kind", &config.get_transport())
                .field("credentials", &config.get_credentials().is_some())
                .field("oauth", oauth)
                .finish_non_exhaustive(),
        }
    }
}
