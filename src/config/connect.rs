//! Turning a [`ServerConfig`] into the transport configuration that connects to it.

use std::time::Duration;

use super::{ServerConfig, ServerTransport};
use crate::error::{Error, Result, Unsupported};
use crate::transport::Connect;

impl ServerConfig {
    /// The transport configuration that connects to this server: a
    /// [`StdioConfig`](crate::StdioConfig) or, with the `http` feature, an
    /// `umcp::transport::http::HttpConfig` carrying the configured timeouts and headers.
    ///
    /// OAuth settings are not applied here: they need the user's step and a token store,
    /// which the [`Manager`](crate::Manager) supplies. To connect such a server yourself,
    /// build an `umcp::auth::OAuth` from `OAuthSettings::to_oauth_config` and give it to
    /// `HttpConfig::credentials`.
    ///
    /// ```no_run
    /// use umcp::{Client, ServerConfig};
    ///
    /// # fn main() -> umcp::Result<()> {
    /// // The same server a manager would start, on a client of its own:
    /// let config = ServerConfig::stdio("files", "npx")
    ///     .with_args(["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]);
    /// let client = Client::connect(config.connector()?)?;
    /// # let _ = client;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Unsupported`] for an HTTP server in a build without the `http` feature, and
    /// for a server with OAuth settings in a build without the `oauth` feature.
    pub fn connector(&self) -> Result<Box<dyn Connect>> {
        self.connector_with(self.startup_timeout, self.request_timeout)
    }

    /// As [`connector`](Self::connector), with the timeouts given (the manager passes its
    /// defaults for the ones the configuration leaves out).
    pub(crate) fn connector_with(
        &self,
        startup: Option<Duration>,
        request: Option<Duration>,
    ) -> Result<Box<dyn Connect>> {
        match &self.transport {
            ServerTransport::Stdio {
                command,
                args,
                env,
                cwd,
                env_policy,
            } => {
                let mut config = crate::StdioConfig::new(command.clone())
                    .args(args.iter().cloned())
                    .envs(env.iter().cloned())
                    .env_policy(*env_policy);
                if let Some(cwd) = cwd {
                    config = config.cwd(cwd.clone());
                }
                Ok(Box::new(config))
            }
            ServerTransport::Http { url, oauth, .. } => {
                #[cfg(feature = "http")]
                if oauth.is_none() || cfg!(feature = "oauth") {
                    if let Some(config) = self.http_config(startup, request) {
                        return Ok(Box::new(config));
                    }
                }
                let _ = (startup, request);
                let missing = if cfg!(feature = "http") && oauth.is_some() {
                    "its OAuth settings need the `oauth` feature"
                } else {
                    "umcp was built without the `http` feature"
                };
                Err(Error::Unsupported(Unsupported::Feature(format!(
                    "HTTP server `{url}`: {missing}"
                ))))
            }
        }
    }

    /// The HTTP configuration of an HTTP server, with its headers, transport and timeouts
    /// but no credentials; `None` for a stdio server.
    #[cfg(feature = "http")]
    pub(crate) fn http_config(
        &self,
        startup: Option<Duration>,
        request: Option<Duration>,
    ) -> Option<crate::HttpConfig> {
        use super::HttpKind;
        use crate::transport::http::{HttpConfig, HttpTransportKind};
        let ServerTransport::Http {
            url, headers, kind, ..
        } = &self.transport
        else {
            return None;
        };
        let kind = match kind {
            HttpKind::Auto => HttpTransportKind::Auto,
            HttpKind::StreamableHttp => HttpTransportKind::StreamableHttp,
            HttpKind::Sse => HttpTransportKind::Sse,
        };
        let mut config = HttpConfig::new(url).transport(kind);
        for (name, value) in headers {
            config = config.header(name.clone(), value.clone());
        }
        if let Some(startup) = startup {
            config = config.connect_timeout(startup);
        }
        if let Some(request) = request {
            config = config.request_timeout(request);
        }
        Some(config)
    }
}
