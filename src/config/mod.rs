//! Server configuration: one server's transport and timeouts, and the common JSON files that
//! list many of them.
//!
//! A [`ServerConfig`] names a server and says how to reach it: a command run over stdio, or an
//! HTTP endpoint. Build one in code with [`ServerConfig::stdio`] or [`ServerConfig::http`], or
//! read a whole file with [`ConfigFile::load`], which understands the `mcpServers` files of
//! Claude Desktop, Claude Code, Cursor, Windsurf and Gemini CLI, the `servers` files of VS
//! Code, and Zed's `context_servers`.

use std::time::Duration;

use crate::client::{ProtocolMode, ToolFilter};
use crate::transport::http::HttpConfig;
use crate::transport::StdioConfig;

mod connect;
mod entry;
mod env_file;
mod frozen;
mod jsonc;
mod network;
mod oauth;
mod parse;
mod redacted;
mod repeated;
mod sections;
mod server;
mod tool_filter;
mod transport;
mod vars;

pub use entry::ServerConfigError;
pub use oauth::OAuthSettings;
pub use parse::ConfigFile;
pub use redacted::Redacted;
pub use transport::ServerTransport;

/// One configured server: its name, how to reach it, and its timeouts.
///
/// How to reach it is a transport's own configuration, a [`StdioConfig`] or an [`HttpConfig`]
/// built with its setters: `ServerConfig::new(name, StdioConfig::new(…).arg(…))`.
///
/// An HTTP server gets credentials from a header, or with OAuth 2.1 from
/// [`with_oauth`](ServerConfig::with_oauth) (in a file: `"auth": "oauth"` for the defaults,
/// or an `oauth` object of [`OAuthSettings`]), which the [`Manager`](crate::Manager) applies.
///
/// ```
/// use std::time::Duration;
/// use umcp::{EnvPolicy, HttpConfig, HttpTransportKind, OAuthSettings, ProtocolMode};
/// use umcp::{ServerConfig, ServerTransport, StdioConfig};
///
/// let files = ServerConfig::new(
///     "files",
///     StdioConfig::new("npx")
///         .args(["-y", "@modelcontextprotocol/server-filesystem", "/tmp"])
///         .env("NODE_OPTIONS", "--max-old-space-size=256")
///         .cwd("/tmp")
///         .env_policy(EnvPolicy::AllowList),
/// )
/// .with_startup_timeout(Duration::from_secs(60))
/// .with_request_timeout(Duration::from_secs(20));
/// let search = ServerConfig::new(
///     "search",
///     HttpConfig::new("https://mcp.example.com/mcp")
///         .header("X-Api-Key", "not-a-real-key")
///         .transport(HttpTransportKind::StreamableHttp),
/// );
/// let docs = ServerConfig::http("docs", "https://docs.example.com/mcp")
///     .with_oauth(OAuthSettings::new().with_scopes(["docs:read"]));
/// let old = HttpConfig::new("https://old.example.com/sse").transport(HttpTransportKind::Sse);
/// let legacy = ServerConfig::new("legacy", old)
///     .with_protocol(ProtocolMode::Legacy)
///     .with_disabled(true);
/// assert_eq!(files.name, "files");
/// assert_eq!((files.kind(), search.kind()), ("stdio", "streamable-http"));
/// assert!(docs.oauth().is_some() && search.oauth().is_none());
/// let ServerTransport::Http(http, _) = &legacy.transport else { unreachable!() };
/// assert_eq!(http.get_transport(), HttpTransportKind::Sse);
/// assert!(legacy.disabled);
/// assert_eq!(legacy.protocol, Some(ProtocolMode::Legacy));
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ServerConfig {
    /// The server's name, unique within a manager; it prefixes the server's tool names.
    pub name: String,
    /// How the server is reached.
    pub transport: ServerTransport,
    /// A disabled server is kept in the configuration but never started.
    pub disabled: bool,
    /// How long connecting and the `initialize` handshake may take (`None`: the manager's
    /// default).
    pub startup_timeout: Option<Duration>,
    /// The default timeout of every request to this server (`None`: the client's default).
    pub request_timeout: Option<Duration>,
    /// The protocol era to speak with this server (`None`: the client options' mode, by
    /// default [`ProtocolMode::Auto`]). The `protocol` key of a configuration file: `auto`,
    /// `legacy`, `modern` or a stateless-era version such as `2026-07-28`.
    pub protocol: Option<ProtocolMode>,
    /// Which of the server's tools are offered (default: all). In a file: `allowedTools` and
    /// `excludedTools`, or another host's spelling of them (see [`ConfigFile`]).
    pub tool_filter: ToolFilter,
}

impl ServerConfig {
    /// A server named `name`, reached through `transport`: a [`StdioConfig`], an
    /// [`HttpConfig`], or a [`ServerTransport`].
    ///
    /// See the example on [`ServerTransport`].
    pub fn new(name: impl Into<String>, transport: impl Into<ServerTransport>) -> ServerConfig {
        ServerConfig {
            name: name.into(),
            transport: transport.into(),
            disabled: false,
            startup_timeout: None,
            request_timeout: None,
            protocol: None,
            tool_filter: ToolFilter::new(),
        }
    }

    /// A server run as `command` over stdio, with no arguments and the default environment
    /// policy ([`EnvPolicy::AllowList`](crate::EnvPolicy::AllowList)); give
    /// [`ServerConfig::new`] a [`StdioConfig`] for more.
    ///
    /// See the example on [`ServerConfig`].
    pub fn stdio(name: impl Into<String>, command: impl Into<String>) -> ServerConfig {
        ServerConfig::new(name, StdioConfig::new(command))
    }

    /// A server at an HTTP `url`, with
    /// [`HttpTransportKind::Auto`](crate::HttpTransportKind::Auto); give [`ServerConfig::new`]
    /// an [`HttpConfig`] for more.
    ///
    /// See the example on [`ServerConfig`].
    pub fn http(name: impl Into<String>, url: impl Into<String>) -> ServerConfig {
        ServerConfig::new(name, HttpConfig::new(url))
    }

    /// Authorizes the server with OAuth 2.1 (HTTP only; ignored for stdio). The
    /// [`Manager`](crate::Manager) supplies the user's step and the token store; see
    /// [`OAuthSettings`].
    ///
    /// See the example on [`ServerConfig`].
    pub fn with_oauth(mut self, settings: OAuthSettings) -> ServerConfig {
        if let ServerTransport::Http(_, oauth) = &mut self.transport {
            *oauth = Some(settings);
        }
        self
    }

    /// The OAuth settings of an HTTP server that has them.
    ///
    /// See the example on [`ServerConfig`].
    pub fn oauth(&self) -> Option<&OAuthSettings> {
        match &self.transport {
            ServerTransport::Http(_, oauth) => oauth.as_ref(),
            ServerTransport::Stdio(_) => None,
        }
    }

    /// Disables (or enables) the server.
    ///
    /// See the example on [`ServerConfig`].
    pub fn with_disabled(mut self, disabled: bool) -> ServerConfig {
        self.disabled = disabled;
        self
    }

    /// How long connecting and `initialize` may take.
    ///
    /// See the example on [`ServerConfig`].
    pub fn with_startup_timeout(mut self, timeout: Duration) -> ServerConfig {
        self.startup_timeout = Some(timeout);
        self
    }

    /// The default timeout of every request to this server.
    ///
    /// See the example on [`ServerConfig`].
    pub fn with_request_timeout(mut self, timeout: Duration) -> ServerConfig {
        self.request_timeout = Some(timeout);
        self
    }

    /// The protocol era to speak with this server, whatever the manager's client options say:
    /// [`ProtocolMode::Legacy`] for a server that misbehaves on the `server/discover` probe,
    /// or a pinned stateless-era version for one known to speak it.
    ///
    /// See the example on [`ServerConfig`].
    pub fn with_protocol(mut self, mode: ProtocolMode) -> ServerConfig {
        self.protocol = Some(mode);
        self
    }

    /// Offers only the server's tools that `filter` lets through: the manager neither lists
    /// the others nor calls them, refusing such a call with
    /// [`Error::ToolHidden`](crate::Error::ToolHidden) before anything is sent. Replaces the
    /// filter the configuration file gave.
    ///
    /// ```
    /// use umcp::{ServerConfig, StdioConfig, ToolFilter};
    ///
    /// let npx = StdioConfig::new("npx").args(["-y", "@modelcontextprotocol/server-everything"]);
    /// let everything = ServerConfig::new("everything", npx)
    ///     .with_tool_filter(ToolFilter::new().with_denied(["echo", "get-env"]));
    /// assert!(!everything.tool_filter.allows("echo"));
    /// assert!(everything.tool_filter.allows("get-sum"));
    /// ```
    pub fn with_tool_filter(mut self, filter: ToolFilter) -> ServerConfig {
        self.tool_filter = filter;
        self
    }

    /// The transport's kind as configured: `stdio`, `auto`, `streamable-http` or `sse`.
    ///
    /// See the example on [`ServerConfig`].
    pub fn kind(&self) -> &'static str {
        match &self.transport {
            ServerTransport::Stdio(_) => "stdio",
            ServerTransport::Http(config, _) => config.get_transport().as_str(),
        }
    }
}

#[cfg(test)]
mod tests;
