//! How a configured server is reached: a command over stdio, or an HTTP endpoint of one of
//! the HTTP transports.

use std::fmt;
use std::path::PathBuf;

use crate::redact;
use crate::transport::EnvPolicy;

use super::OAuthSettings;

/// How a server is reached.
///
/// `Debug` hides what may be a secret: the values of `env` and `headers`, secret-looking
/// arguments, and the password and query values of the URL.
///
/// See the example on [`ServerConfig`](super::ServerConfig).
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerTransport {
    /// A child process speaking newline-delimited JSON on stdin and stdout.
    #[non_exhaustive]
    Stdio {
        /// The program, found through `PATH` when it has no path separator.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables set in its environment, on top of what [`env_policy`](Self::Stdio::env_policy)
        /// passes from the parent's.
        env: Vec<(String, String)>,
        /// Its working directory (`None`: the parent's).
        cwd: Option<PathBuf>,
        /// Which of the parent's environment variables it sees.
        env_policy: EnvPolicy,
    },
    /// An HTTP endpoint (Streamable HTTP or legacy HTTP+SSE).
    #[non_exhaustive]
    Http {
        /// The endpoint URL (for [`HttpKind::Sse`], the SSE endpoint).
        url: String,
        /// Headers sent with every request, e.g. `Authorization`.
        headers: Vec<(String, String)>,
        /// Which HTTP transport to speak.
        kind: HttpKind,
        /// OAuth 2.1 authorization, applied by the [`Manager`](crate::Manager) (feature
        /// `oauth`); `None` when the server needs none or gets its credentials from a header.
        oauth: Option<OAuthSettings>,
    },
}

impl fmt::Debug for ServerTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Expanded from `${VAR}`s, these values are where configured keys end up.
        match self {
            ServerTransport::Stdio {
                command,
                args,
                env,
                cwd,
                env_policy,
            } => f
                .debug_struct("Stdio")
                .field("command", command)
                .field("args", &redact::args(args))
                .field("env", &redact::values(env))
                .field("cwd", cwd)
                .field("env_policy", env_policy)
                .finish(),
            ServerTransport::Http {
                url,
                headers,
                kind,
                oauth,
            } => f
                .debug_struct("Http")
                .field("url", &redact::url(url))
                .field("headers", &redact::values(headers))
                .field("kind", kind)
                .field("oauth", oauth)
                .finish(),
        }
    }
}

/// Which HTTP transport a configured server speaks.
///
/// The same choice as `umcp::transport::http::HttpTransportKind`, available in every build so
/// configuration files read the same with and without the `http` feature.
///
/// See the example on [`ServerConfig`](super::ServerConfig).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum HttpKind {
    /// Streamable HTTP, falling back to legacy SSE when the server rejects the first request
    /// with 400, 404 or 405.
    #[default]
    Auto,
    /// Streamable HTTP only.
    StreamableHttp,
    /// Legacy HTTP+SSE only.
    Sse,
}

impl HttpKind {
    /// The name used in configuration files: `auto`, `streamable-http` or `sse`.
    ///
    /// See the example on [`ServerConfig`](super::ServerConfig).
    pub fn as_str(self) -> &'static str {
        match self {
            HttpKind::Auto => "auto",
            HttpKind::StreamableHttp => "streamable-http",
            HttpKind::Sse => "sse",
        }
    }

    /// Reads `auto`, `http` (the same as `auto`), `streamable-http` (or `streamableHttp`) and
    /// `sse`; `None` for anything else.
    ///
    /// See the example on [`ServerConfig`](super::ServerConfig).
    pub fn parse(name: &str) -> Option<HttpKind> {
        match name {
            "auto" | "http" => Some(HttpKind::Auto),
            "streamable-http" | "streamableHttp" | "streamable_http" => {
                Some(HttpKind::StreamableHttp)
            }
            "sse" => Some(HttpKind::Sse),
            _ => None,
        }
    }
}

impl fmt::Display for HttpKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
