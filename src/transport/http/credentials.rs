//! Credentials for HTTP requests: the provider trait every request asks, and its bound on
//! repeated requests.

use crate::error::{HttpError, Result};

/// Supplies credentials for every HTTP request, and hears about 401 and 403 answers.
///
/// The transport asks [`headers`](CredentialProvider::headers) before each request (POST
/// and GET), so a provider can refresh a token whenever it likes; the `DELETE` on close asks
/// [`cached_headers`](CredentialProvider::cached_headers). On a 401 it calls
/// [`on_unauthorized`](CredentialProvider::on_unauthorized) and, when that returns `true`,
/// repeats the request once with fresh headers. On a 403 it calls
/// [`on_forbidden`](CredentialProvider::on_forbidden) and repeats the request while that
/// returns `true`, at most [`MAX_CREDENTIAL_RETRIES`] times in all. A repeated request gets
/// the time budget it started with, counted from the moment the provider returned.
///
/// Closing the connection does not interrupt a provider of your own: a request whose
/// provider call is under way when the connection closes fails with
/// [`Error::Closed`](crate::Error::Closed) once the call returns, whatever it returned.
/// (umcp's [`OAuth`](crate::auth::OAuth) ends its own work at the close, see
/// [`OAuthConfig::timeout`](crate::auth::OAuthConfig::timeout).)
///
/// [`OAuth`](crate::auth::OAuth) (feature `oauth`) is the provider for the MCP
/// authorization spec. A provider of your own, for a bearer token that another process keeps
/// fresh in a file:
///
/// ```no_run
/// use std::path::PathBuf;
/// use std::sync::Arc;
/// use umcp::{Client, CredentialProvider, HttpConfig, HttpError};
///
/// struct TokenFile(PathBuf);
///
/// impl CredentialProvider for TokenFile {
///     fn headers(&self, _url: &str) -> umcp::Result<Vec<(String, String)>> {
///         let token = std::fs::read_to_string(&self.0).map_err(umcp::Error::io)?;
///         Ok(vec![("Authorization".into(), format!("Bearer {}", token.trim()))])
///     }
///
///     fn on_unauthorized(&self, _error: &HttpError) -> umcp::Result<bool> {
///         Ok(true) // the file may have been rotated since: read it again, once
///     }
///
///     // A file read does not wait, so the `DELETE` that ends the session is authorized too.
///     fn cached_headers(&self, _method: &str, url: &str) -> umcp::Result<Vec<(String, String)>> {
///         self.headers(url)
///     }
/// }
///
/// let provider = Arc::new(TokenFile("/run/secrets/mcp-token".into()));
/// let server = HttpConfig::new("https://mcp.example.com/mcp").credentials(provider);
/// let client = Client::connect(server)?;
/// # let _ = client;
/// # Ok::<(), umcp::Error>(())
/// ```
pub trait CredentialProvider: Send + Sync {
    /// The headers to add to a request for `url`, e.g. `("Authorization", "Bearer …")`.
    ///
    /// See the example on [`CredentialProvider`].
    ///
    /// # Errors
    ///
    /// An error fails the request before anything is sent.
    fn headers(&self, url: &str) -> Result<Vec<(String, String)>>;

    /// The headers to add to a `method` request (`GET`, `POST`, `DELETE`) for `url`; by
    /// default [`headers`](Self::headers). Providers whose headers sign the request override
    /// it (a DPoP proof names the method and URL, RFC 9449).
    ///
    /// See the example on [`CredentialProvider`].
    ///
    /// # Errors
    ///
    /// An error fails the request before anything is sent.
    fn request_headers(&self, method: &str, url: &str) -> Result<Vec<(String, String)>> {
        let _ = method;
        self.headers(url)
    }

    /// The headers for a `method` request to `url` that must not wait: the credentials at
    /// hand, neither refreshed nor obtained. Asked for the `DELETE` ending a session on close,
    /// which is authorized like every request (the spec asks for it) but must not wait for a
    /// provider. By default none, since `close` cannot bound a provider that refreshes or
    /// asks a user: a provider whose credentials are at hand should return them here (umcp's
    /// OAuth provider returns the token it holds).
    ///
    /// See the example on [`CredentialProvider`].
    ///
    /// # Errors
    ///
    /// An error means the `DELETE` is not sent.
    fn cached_headers(&self, method: &str, url: &str) -> Result<Vec<(String, String)>> {
        let _ = (method, url);
        Ok(Vec::new())
    }

    /// Called when the server answered 401; return `true` to have the request repeated once.
    ///
    /// See the example on [`CredentialProvider`].
    ///
    /// # Errors
    ///
    /// An error is returned to the caller instead of the 401.
    fn on_unauthorized(&self, _error: &HttpError) -> Result<bool> {
        Ok(false)
    }

    /// Called when the server answered 403 (for example `insufficient_scope`, asking for a
    /// step-up authorization); return `true` to have the request repeated. `retries` is how
    /// many times this request was already repeated for credentials (after a 401 or a 403),
    /// so a provider can bound its attempts per request.
    ///
    /// See the example on [`CredentialProvider`].
    ///
    /// # Errors
    ///
    /// An error is returned to the caller instead of the 403.
    fn on_forbidden(&self, _error: &HttpError, _retries: u32) -> Result<bool> {
        Ok(false)
    }

    /// A number that changes whenever the identity these credentials speak for may have
    /// changed: a logout, a new authorization, another subject (not a refresh of the same
    /// grant). When it changes, the client drops the cached results the server marked
    /// `private` (`cacheScope`), which belonged to the identity before. By default 0:
    /// never changes.
    ///
    /// See the example on [`CredentialProvider`].
    fn authorization_context(&self) -> u64 {
        0
    }
}

/// The most times one request is repeated for credentials, whatever the provider says.
///
/// See the example on [`CredentialProvider`].
pub const MAX_CREDENTIAL_RETRIES: u32 = 8;
