//! Turning a [`ServerConfig`] into the transport configuration that connects to it.

use std::time::Duration;

use super::{ServerConfig, ServerTransport};
use crate::error::{Error, Result, Unsupported};
use crate::transport::http::HttpConfig;
use crate::transport::Connect;

impl ServerConfig {
    /// The transport configuration that connects to this server: its
    /// [`StdioConfig`](crate::StdioConfig), or its [`HttpConfig`] with the configured
    /// timeouts.
    ///
    /// OAuth settings are not applied here: they need the user's step and a token store,
    /// which the [`Manager`](crate::Manager) supplies. To connect such a server yourself,
    /// build an `umcp::auth::OAuth` from `OAuthSettings::to_oauth_config` and give it to
    /// [`HttpConfig::credentials`].
    ///
    /// ```no_run
    /// use umcp::{Client, ServerConfig, StdioConfig};
    ///
    /// # fn main() -> umcp::Result<()> {
    /// // The same server a manager would start, on a client of its own:
    /// let files = StdioConfig::new("npx").args(["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]);
    /// let config = ServerConfig::new("files", files);
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
            ServerTransport::Stdio(config) => Ok(Box::new(config.clone())),
            ServerTransport::Http(config, oauth) => {
                let missing = if !cfg!(feature = "http") {
                    "umcp was built without the `http` feature"
                } else if oauth.is_some() && !cfg!(feature = "oauth") {
                    "its OAuth settings need the `oauth` feature"
                } else {
                    return Ok(Box::new(with_timeouts(config.clone(), startup, request)));
                };
                Err(Error::Unsupported(Unsupported::Feature(format!(
                    "HTTP server `{}`: {missing}",
                    crate::redact::url(config.get_url())
                ))))
            }
        }
    }

    /// The HTTP configuration of an HTTP server, with the timeouts given, its own
    /// credentials but not its OAuth settings' (the manager adds those); `None` for a stdio
    /// server.
    #[cfg(feature = "oauth")]
    pub(crate) fn http_config(
        &self,
        startup: Option<Duration>,
        request: Option<Duration>,
    ) -> Option<HttpConfig> {
        match &self.transport {
            ServerTransport::Http(config, _) => {
                Some(with_timeouts(config.clone(), startup, request))
            }
            ServerTransport::Stdio(_) => None,
        }
    }
}

/// `config` with the configured start-up deadline as its connect timeout and the request
/// timeout as its own, where they are set.
fn with_timeouts(
    mut config: HttpConfig,
    startup: Option<Duration>,
    request: Option<Duration>,
) -> HttpConfig {
    if let Some(startup) = startup {
        config = config.connect_timeout(startup);
    }
    if let Some(request) = request {
        config = config.request_timeout(request);
    }
    config
}
