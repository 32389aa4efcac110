//! The errors of HTTP exchanges and of OAuth authorization, with what a caller needs to act.

use std::fmt;

use super::Error;

/// The step of an OAuth authorization that failed, in the order they run.
///
/// See the example on [`Error`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuthStep {
    /// Finding the protected resource metadata and the authorization server metadata.
    Discovery,
    /// Obtaining a client identity (dynamic client registration).
    Registration,
    /// The authorization request: the user's consent, the redirect and its checks.
    Authorization,
    /// A token endpoint request: redeeming a code, refreshing, or another grant.
    Token,
}

impl AuthStep {
    /// The step's name as used in messages: `discovery`, `registration`, `authorization` or
    /// `token`.
    ///
    /// ```
    /// assert_eq!(umcp::AuthStep::Registration.as_str(), "registration");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            AuthStep::Discovery => "discovery",
            AuthStep::Registration => "registration",
            AuthStep::Authorization => "authorization",
            AuthStep::Token => "token",
        }
    }
}

/// Why obtaining credentials failed ([`Error::Auth`]).
///
/// `error` and `error_description` are the authorization server's own words (RFC 6749 §5.2),
/// e.g. `invalid_grant` when a code or refresh token was refused, or `insufficient_scope` when
/// repeated step-up authorizations did not satisfy the server; they are `None` when the client
/// itself refused to go on (a resource mismatch, a missing PKCE capability, a state mismatch).
///
/// `Debug`, like `Display`, shows the URL with its query values and password redacted.
///
/// See the example on [`Error`].
#[derive(Clone)]
#[non_exhaustive]
pub struct AuthError {
    /// The step that failed.
    pub step: AuthStep,
    /// What went wrong, in words; never contains tokens, codes or secrets.
    pub message: String,
    /// The URL that was requested, when the failure concerns one.
    pub url: Option<String>,
    /// The HTTP status of the server's answer, when there was one.
    pub status: Option<u16>,
    /// The OAuth `error` code of the server's answer, e.g. `invalid_client`.
    pub error: Option<String>,
    /// The `error_description` of the server's answer.
    pub error_description: Option<String>,
}

impl AuthError {
    /// An error at `step` described by `message`, with no server details: what a caller's
    /// own authorization handler or token store returns when it fails.
    ///
    /// ```
    /// use umcp::{AuthError, AuthStep, Error};
    ///
    /// let error: Error = AuthError::new(AuthStep::Authorization, "the window was closed").into();
    /// assert_eq!(
    ///     error.to_string(),
    ///     "authorization failed at authorization: the window was closed"
    /// );
    /// ```
    pub fn new(step: AuthStep, message: impl Into<String>) -> AuthError {
        AuthError {
            step,
            message: message.into(),
            url: None,
            status: None,
            error: None,
            error_description: None,
        }
    }
}

impl From<AuthError> for Error {
    fn from(err: AuthError) -> Error {
        Error::Auth(Box::new(err))
    }
}

/// The details of a failed HTTP exchange.
///
/// `Debug`, like `Display`, shows URLs with their query values and password redacted: a
/// server's URL often carries a key (`?api_key=…`), and `fn main() -> umcp::Result<()>`
/// prints an error's `Debug`.
///
/// See the example on [`Error`].
#[derive(Clone, Default)]
pub struct HttpError {
    /// The HTTP status code.
    pub status: u16,
    /// The URL that was requested.
    pub url: String,
    /// The response body as text, truncated to a few kilobytes.
    pub body: String,
    /// The parsed `WWW-Authenticate` challenge to act on, when the server sent one: the
    /// first `Bearer` challenge, else the first.
    pub www_authenticate: Option<WwwAuthenticate>,
    /// Whether a challenge asked for a DPoP nonce (`error="use_dpop_nonce"`, RFC 9449 §9):
    /// the token is fine, the proof lacked the nonce (in `dpop_nonce`). The `DPoP` challenge
    /// saying so may stand beside a `Bearer` one (§7.1), which `www_authenticate` then holds.
    pub asks_dpop_nonce: bool,
    /// The `Mcp-Auth-Server` header, when the server sent one.
    pub mcp_auth_server: Option<String>,
    /// The `DPoP-Nonce` header (RFC 9449 §9), when the server provided a nonce.
    pub dpop_nonce: Option<String>,
    /// The `MCP-Protocol-Version` the refused request carried, when it carried one: OAuth
    /// discovery at a 2025-03-26 server names it too.
    pub protocol_version: Option<String>,
    /// The `Location` of a redirect (3xx), which umcp never follows: where the server says
    /// it moved.
    pub location: Option<String>,
}

/// A parsed `WWW-Authenticate` challenge (RFC 9110 §11.6.1, RFC 6750 §3, RFC 9728 §5.1).
///
/// `Debug` shows `resource_metadata` with its query values redacted, as `Display` of
/// [`HttpError`] does.
///
/// See the example on [`Error`].
#[derive(Clone, Default, PartialEq, Eq)]
pub struct WwwAuthenticate {
    /// The scheme, e.g. `Bearer`.
    pub scheme: String,
    /// The `resource_metadata` URL of the protected resource metadata (RFC 9728).
    pub resource_metadata: Option<String>,
    /// The `scope` the server asks for.
    pub scope: Option<String>,
    /// The `error` code, e.g. `invalid_token` or `insufficient_scope`.
    pub error: Option<String>,
    /// The `error_description`, when given.
    pub error_description: Option<String>,
}

/// A URL for `Debug` output: query values, fragment and password redacted.
fn shown(url: &Option<String>) -> Option<String> {
    url.as_deref().map(crate::redact::url)
}

impl fmt::Debug for AuthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthError")
            .field("step", &self.step)
            .field("message", &self.message)
            .field("url", &shown(&self.url))
            .field("status", &self.status)
            .field("error", &self.error)
            .field("error_description", &self.error_description)
            .finish()
    }
}

impl fmt::Debug for HttpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpError")
            .field("status", &self.status)
            .field("url", &crate::redact::url(&self.url))
            .field("body", &self.body)
            .field("www_authenticate", &self.www_authenticate)
            .field("asks_dpop_nonce", &self.asks_dpop_nonce)
            .field("mcp_auth_server", &shown(&self.mcp_auth_server))
            .field("dpop_nonce", &self.dpop_nonce)
            .field("protocol_version", &self.protocol_version)
            .field("location", &shown(&self.location))
            .finish()
    }
}

impl fmt::Debug for WwwAuthenticate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WwwAuthenticate")
            .field("scheme", &self.scheme)
            .field("resource_metadata", &shown(&self.resource_metadata))
            .field("scope", &self.scope)
            .field("error", &self.error)
            .field("error_description", &self.error_description)
            .finish()
    }
}

impl fmt::Display for AuthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "authorization failed at {}: {}",
            self.step.as_str(),
            self.message
        )?;
        if let Some(status) = self.status {
            write!(f, " (HTTP {status}")?;
            if let Some(url) = &self.url {
                write!(f, " from {}", crate::redact::url(url))?;
            }
            f.write_str(")")?;
        }
        if let Some(error) = &self.error {
            write!(f, ": {error}")?;
            if let Some(description) = &self.error_description {
                write!(f, ": {description}")?;
            }
        }
        Ok(())
    }
}

impl fmt::Display for HttpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // URLs may carry keys (`?api_key=…`); their values are not for error messages.
        write!(
            f,
            "HTTP {} from {}",
            self.status,
            crate::redact::url(&self.url)
        )?;
        let body = super::summary::body_summary(&self.body);
        if !body.is_empty() {
            write!(f, ": {body}")?;
        }
        if let Some(auth) = &self.www_authenticate {
            write!(f, " (WWW-Authenticate: {}", auth.scheme)?;
            if let Some(m) = &auth.resource_metadata {
                write!(f, " resource_metadata={}", crate::redact::url(m))?;
            }
            if let Some(s) = &auth.scope {
                write!(f, " scope={s}")?;
            }
            if let Some(e) = &auth.error {
                write!(f, " error={e}")?;
            }
            f.write_str(")")?;
        }
        if let Some(server) = &self.mcp_auth_server {
            write!(f, " (Mcp-Auth-Server: {})", crate::redact::url(server))?;
        }
        if let Some(location) = &self.location {
            write!(
                f,
                " (moved to {}; redirects are not followed)",
                crate::redact::url(location)
            )?;
        }
        Ok(())
    }
}
