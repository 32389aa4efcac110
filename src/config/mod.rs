//! Server configuration: one server's transport and timeouts, and the common JSON files that
//! list many of them.
//!
//! A [`ServerConfig`] names a server and says how to reach it: a command run over stdio, or an
//! HTTP endpoint. Build one in code with [`ServerConfig::stdio`] or [`ServerConfig::http`], or
//! read a whole file with [`ConfigFile::load`], which understands the `mcpServers` files of
//! Claude Desktop, Cursor and `.mcp.json`, and the `servers` files of VS Code.

use std::path::PathBuf;
use std::time::Duration;

use crate::client::ProtocolMode;
use crate::transport::EnvPolicy;

mod connect;
mod entry;
mod env_file;
mod jsonc;
mod oauth;
mod parse;
mod repeated;
mod sections;
mod transport;
mod vars;

pub use oauth::OAuthSettings;
pub use parse::{ConfigFile, ServerConfigError};
pub use transport::{HttpKind, ServerTransport};

/// One configured server: its name, how to reach it, and its timeouts.
///
/// An HTTP server gets credentials from a header, or with OAuth 2.1 from
/// [`with_oauth`](ServerConfig::with_oauth) (in a file: `"auth": "oauth"` for the defaults,
/// or an `oauth` object of [`OAuthSettings`]), which the [`Manager`](crate::Manager) applies.
///
/// ```
/// use std::time::Duration;
/// use umcp::{EnvPolicy, HttpKind, OAuthSettings, ProtocolMode, ServerConfig, ServerTransport};
///
/// let files = ServerConfig::stdio("files", "npx")
///     .with_args(["-y", "@modelcontextprotocol/server-filesystem", "/tmp"])
///     .with_env("NODE_OPTIONS", "--max-old-space-size=256")
///     .with_cwd("/tmp")
///     .with_env_policy(EnvPolicy::AllowList)
///     .with_startup_timeout(Duration::from_secs(60))
///     .with_request_timeout(Duration::from_secs(20));
/// let search = ServerConfig::http("search", "https://mcp.example.com/mcp")
///     .with_header("X-Api-Key", "not-a-real-key")
///     .with_http_kind(HttpKind::StreamableHttp);
/// let docs = ServerConfig::http("docs", "https://docs.example.com/mcp")
///     .with_oauth(OAuthSettings::new().with_scopes(["docs:read"]));
/// let legacy = ServerConfig::http("legacy", "https://old.example.com/sse")
///     .with_http_kind(HttpKind::parse("sse").unwrap_or_default())
///     .with_protocol(ProtocolMode::Legacy)
///     .with_disabled(true);
/// assert_eq!(files.name, "files");
/// assert_eq!((files.kind(), search.kind()), ("stdio", "streamable-http"));
/// assert!(docs.oauth().is_some() && search.oauth().is_none());
/// assert!(matches!(&legacy.transport, ServerTransport::Http { kind: HttpKind::Sse, .. }));
/// assert!(legacy.disabled);
/// assert_eq!(legacy.protocol, Some(ProtocolMode::Legacy));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
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
}

impl ServerConfig {
    /// A server run as `command` over stdio, with no arguments and the default environment
    /// policy ([`EnvPolicy::AllowList`]).
    ///
    /// See the example on [`ServerConfig`].
    pub fn stdio(name: impl Into<String>, command: impl Into<String>) -> ServerConfig {
        ServerConfig::new(
            name.into(),
            ServerTransport::Stdio {
                command: command.into(),
                args: Vec::new(),
                env: Vec::new(),
                cwd: None,
                env_policy: EnvPolicy::AllowList,
            },
        )
    }

    /// A server at an HTTP `url`, with [`HttpKind::Auto`].
    ///
    /// See the example on [`ServerConfig`].
    pub fn http(name: impl Into<String>, url: impl Into<String>) -> ServerConfig {
        ServerConfig::new(
            name.into(),
            ServerTransport::Http {
                url: url.into(),
                headers: Vec::new(),
                kind: HttpKind::Auto,
                oauth: None,
            },
        )
    }

    fn new(name: String, transport: ServerTransport) -> ServerConfig {
        ServerConfig {
            name,
            transport,
            disabled: false,
            startup_timeout: None,
            request_timeout: None,
            protocol: None,
        }
    }

    /// Appends arguments (stdio only; ignored for HTTP).
    ///
    /// See the example on [`ServerConfig`].
    pub fn with_args<I, S>(mut self, new_args: I) -> ServerConfig
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        if let ServerTransport::Stdio { args, .. } = &mut self.transport {
            args.extend(new_args.into_iter().map(Into::into));
        }
        self
    }

    /// Sets an environment variable (stdio only; ignored for HTTP).
    ///
    /// See the example on [`ServerConfig`].
    pub fn with_env(mut self, key: impl Into<String>, value: impl Into<String>) -> ServerConfig {
        if let ServerTransport::Stdio { env, .. } = &mut self.transport {
            env.push((key.into(), value.into()));
        }
        self
    }

    /// Sets the working directory (stdio only; ignored for HTTP).
    ///
    /// See the example on [`ServerConfig`].
    pub fn with_cwd(mut self, dir: impl Into<PathBuf>) -> ServerConfig {
        if let ServerTransport::Stdio { cwd, .. } = &mut self.transport {
            *cwd = Some(dir.into());
        }
        self
    }

    /// Sets which of the parent's variables the server sees (stdio only; ignored for HTTP).
    ///
    /// See the example on [`ServerConfig`].
    pub fn with_env_policy(mut self, policy: EnvPolicy) -> ServerConfig {
        if let ServerTransport::Stdio { env_policy, .. } = &mut self.transport {
            *env_policy = policy;
        }
        self
    }

    /// Adds a header sent with every request (HTTP only; ignored for stdio).
    ///
    /// See the example on [`ServerConfig`].
    pub fn with_header(
        mut self,
        name: impl Into<String>,
        value: impl Into<String>,
    ) -> ServerConfig {
        if let ServerTransport::Http { headers, .. } = &mut self.transport {
            headers.push((name.into(), value.into()));
        }
        self
    }

    /// Sets the HTTP transport (HTTP only; ignored for stdio).
    ///
    /// See the example on [`ServerConfig`].
    pub fn with_http_kind(mut self, http_kind: HttpKind) -> ServerConfig {
        if let ServerTransport::Http { kind, .. } = &mut self.transport {
            *kind = http_kind;
        }
        self
    }

    /// Authorizes the server with OAuth 2.1 (HTTP only; ignored for stdio). The
    /// [`Manager`](crate::Manager) supplies the user's step and the token store; see
    /// [`OAuthSettings`].
    ///
    /// See the example on [`ServerConfig`].
    pub fn with_oauth(mut self, settings: OAuthSettings) -> ServerConfig {
        if let ServerTransport::Http { oauth, .. } = &mut self.transport {
            *oauth = Some(settings);
        }
        self
    }

    /// The OAuth settings of an HTTP server that has them.
    ///
    /// See the example on [`ServerConfig`].
    pub fn oauth(&self) -> Option<&OAuthSettings> {
        match &self.transport {
            ServerTransport::Http { oauth, .. } => oauth.as_ref(),
            ServerTransport::Stdio { .. } => None,
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

    /// The transport's kind as configured: `stdio`, `auto`, `streamable-http` or `sse`.
    ///
    /// See the example on [`ServerConfig`].
    pub fn kind(&self) -> &'static str {
        match &self.transport {
            ServerTransport::Stdio { .. } => "stdio",
            ServerTransport::Http { kind, .. } => kind.as_str(),
        }
    }
}

#[cfg(test)]
mod tests;
