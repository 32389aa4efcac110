//! An [`AuthorizationHandler`] without a user: it requests the authorization URL itself and
//! reads the redirect from the `Location` header, without following it.

use std::time::Duration;

use super::handler::AuthorizationHandler;
use super::http::Http;
use super::urls;
use crate::error::{AuthStep, Result};

/// Requests the authorization URL and returns where the server redirects to.
///
/// Only for authorization servers that grant without showing a page: test servers, the MCP
/// conformance suite, or a server that has already recorded the user's consent. Nothing has
/// to listen on the redirect URI, which is never visited.
///
/// ```
/// use std::time::Duration;
/// use umcp::auth::{HeadlessHandler, OAuthConfig};
///
/// let handler = HeadlessHandler::new()
///     .redirect_uri("http://127.0.0.1:33418/callback")
///     .timeout(Duration::from_secs(10));
/// let config = OAuthConfig::new(handler);
/// # let _ = config;
/// ```
#[derive(Debug, Clone)]
pub struct HeadlessHandler {
    redirect_uri: String,
    timeout: Duration,
}

impl HeadlessHandler {
    /// A handler with the redirect URI `http://127.0.0.1/callback` and a 30 s timeout.
    ///
    /// See the example on [`HeadlessHandler`].
    pub fn new() -> HeadlessHandler {
        HeadlessHandler {
            redirect_uri: "http://127.0.0.1/callback".into(),
            timeout: Duration::from_secs(30),
        }
    }

    /// Uses `redirect_uri` (an `http` URI on a loopback host).
    ///
    /// See the example on [`HeadlessHandler`].
    pub fn redirect_uri(mut self, redirect_uri: impl Into<String>) -> HeadlessHandler {
        self.redirect_uri = redirect_uri.into();
        self
    }

    /// How long the authorization request may take (default 30 s).
    ///
    /// See the example on [`HeadlessHandler`].
    pub fn timeout(mut self, timeout: Duration) -> HeadlessHandler {
        self.timeout = timeout;
        self
    }
}

impl Default for HeadlessHandler {
    fn default() -> HeadlessHandler {
        HeadlessHandler::new()
    }
}

impl AuthorizationHandler for HeadlessHandler {
    fn redirect_uri(&self) -> Result<String> {
        Ok(self.redirect_uri.clone())
    }

    fn authorize(&self, authorization_url: &str) -> Result<String> {
        let answer = Http::new(self.timeout, Default::default())
            .get(AuthStep::Authorization, authorization_url)?;
        let location = answer
            .location
            .as_deref()
            .filter(|_| (300..400).contains(&answer.status));
        match location.and_then(|l| urls::resolve(authorization_url, l)) {
            Some(redirect) => Ok(redirect),
            None => Err(answer
                .error(
                    AuthStep::Authorization,
                    "the authorization endpoint did not redirect; it needs a user (use a \
                     LoopbackHandler)",
                )
                .into()),
        }
    }
}
