//! Workload identity federation: the client presents a JWT its platform issued (a
//! Kubernetes service account token, a cloud workload identity token, a CI job's OIDC token)
//! as an RFC 7523 JWT-bearer grant. No browser, no stored secret.

use std::fmt;
use std::io::Read;
use std::path::PathBuf;

use super::discovery::Discovered;
use super::http::Http;
use super::store::TokenSet;
use super::tokens::{self, ClientAuth};
use crate::error::{AuthError, AuthStep};

/// The grant type of RFC 7523 §2.1.
pub(crate) const JWT_BEARER_GRANT: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/// The largest identity token read (platform tokens are a few kilobytes).
const MAX_TOKEN_BYTES: u64 = 64 * 1024;

/// A workload's identity: the authorization server its platform token is for, and where the
/// token is read from.
///
/// The token is a bearer credential of the workload: whoever holds it can redeem it at the
/// authorization server it was minted for, for anything that server serves. So it goes only
/// to the token endpoint of the authorization server named here (`issuer`, as its metadata
/// names itself; usually the token's audience). An MCP server that names any other
/// authorization server, in its protected resource metadata or otherwise, gets no token: the
/// request fails with an [`AuthError`] at
/// [`AuthStep::Discovery`] naming both issuers, and nothing is
/// sent to the server it named.
///
/// The token is read again for every token request: platforms rotate these tokens (often
/// hourly), and the file or variable always holds the current one.
///
/// ```
/// use umcp::auth::{OAuthConfig, WorkloadIdentity};
///
/// let identity = WorkloadIdentity::token_file(
///     "https://auth.example.com",
///     "/var/run/secrets/tokens/mcp-token",
/// );
/// assert_eq!(identity.get_issuer(), "https://auth.example.com");
/// let config = OAuthConfig::workload_identity("my-workload", identity);
/// # let _ = config;
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct WorkloadIdentity {
    issuer: String,
    source: Source,
}

#[derive(Clone, PartialEq, Eq)]
enum Source {
    File(PathBuf),
    Env(String),
}

impl WorkloadIdentity {
    /// The token for the authorization server `issuer` is the content of the file at `path`
    /// (surrounding whitespace ignored).
    ///
    /// `issuer` is compared with the issuer discovery finds as a URL: scheme and host case,
    /// a default port and a trailing slash do not matter; anything else does.
    ///
    /// See the example on [`WorkloadIdentity`].
    pub fn token_file(issuer: impl Into<String>, path: impl Into<PathBuf>) -> WorkloadIdentity {
        WorkloadIdentity {
            issuer: issuer.into(),
            source: Source::File(path.into()),
        }
    }

    /// The token for the authorization server `issuer` is the value of the environment
    /// variable `name`.
    ///
    /// ```
    /// // A platform that hands the token over in a variable rather than a file:
    /// let identity =
    ///     umcp::auth::WorkloadIdentity::env("https://auth.example.com", "MCP_IDENTITY_TOKEN");
    /// # let _ = identity;
    /// ```
    pub fn env(issuer: impl Into<String>, name: impl Into<String>) -> WorkloadIdentity {
        WorkloadIdentity {
            issuer: issuer.into(),
            source: Source::Env(name.into()),
        }
    }

    /// The issuer of the only authorization server the token is sent to.
    ///
    /// See the example on [`WorkloadIdentity`].
    pub fn get_issuer(&self) -> &str {
        &self.issuer
    }

    /// The current token (missing, unreadable, empty or over 64 KiB is an error).
    pub(crate) fn read(&self) -> Result<String, AuthError> {
        let fail = |what: String| AuthError::new(AuthStep::Token, what);
        let text = match &self.source {
            Source::File(path) => {
                let file = std::fs::File::open(path).map_err(|e| {
                    fail(format!(
                        "cannot read the workload identity token {}: {e}",
                        path.display()
                    ))
                })?;
                let mut text = String::new();
                file.take(MAX_TOKEN_BYTES + 1)
                    .read_to_string(&mut text)
                    .map_err(|e| {
                        fail(format!(
                            "cannot read the workload identity token {}: {e}",
                            path.display()
                        ))
                    })?;
                text
            }
            Source::Env(name) => std::env::var(name)
                .map_err(|_| fail(format!("the workload identity variable {name} is not set")))?,
        };
        let token = text.trim();
        if token.is_empty() || token.len() as u64 > MAX_TOKEN_BYTES {
            return Err(fail(format!(
                "the workload identity token from {self:?} is empty or larger than 64 KiB"
            )));
        }
        Ok(token.to_owned())
    }
}

impl fmt::Debug for WorkloadIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let issuer = crate::redact::url(&self.issuer);
        match &self.source {
            Source::File(path) => {
                write!(f, "WorkloadIdentity({issuer}, file {})", path.display())
            }
            Source::Env(name) => write!(f, "WorkloadIdentity({issuer}, env {name})"),
        }
    }
}

/// The JWT-bearer grant with the workload's current identity token. A refusal is returned as is:
/// the same assertion would be refused again.
pub(crate) fn jwt_bearer(
    http: &Http,
    discovered: &Discovered,
    identity: &WorkloadIdentity,
    client: &ClientAuth,
    scope: Option<&str>,
) -> Result<TokenSet, AuthError> {
    let endpoint = super::client_credentials::token_endpoint(discovered)?;
    let assertion = identity.read()?;
    grant(http, endpoint, discovered, &assertion, client, scope)
}

/// The JWT-bearer grant (RFC 7523) of `assertion` at `endpoint`, for the discovered resource:
/// a workload's identity token, or an enterprise identity assertion.
pub(crate) fn grant(
    http: &Http,
    endpoint: &str,
    discovered: &Discovered,
    assertion: &str,
    client: &ClientAuth,
    scope: Option<&str>,
) -> Result<TokenSet, AuthError> {
    let mut params = vec![
        ("grant_type", JWT_BEARER_GRANT),
        ("assertion", assertion),
        ("resource", discovered.resource.as_str()),
    ];
    if let Some(scope) = scope {
        params.push(("scope", scope));
    }
    tokens::request(http, endpoint, params, Some(client), scope)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_is_read_anew_each_time_and_trimmed() {
        let path = std::env::temp_dir().join(format!("umcp-wif-{}.jwt", std::process::id()));
        let identity = WorkloadIdentity::token_file("https://as.example", &path);
        assert!(identity.read().is_err(), "a missing file is an error");
        std::fs::write(&path, "first.jwt.token\n").unwrap();
        assert_eq!(identity.read().unwrap(), "first.jwt.token");
        std::fs::write(&path, "rotated.jwt.token").unwrap();
        assert_eq!(identity.read().unwrap(), "rotated.jwt.token");
        std::fs::write(&path, "  \n").unwrap();
        assert!(identity.read().is_err(), "an empty token is an error");
        std::fs::write(&path, vec![b'a'; MAX_TOKEN_BYTES as usize + 1]).unwrap();
        assert!(identity.read().is_err(), "an oversized token is an error");
        let _ = std::fs::remove_file(&path);
        let missing = WorkloadIdentity::env(
            "https://as.example",
            "UMCP_TEST_UNSET_WORKLOAD_TOKEN_VARIABLE",
        );
        let err = missing.read().unwrap_err();
        assert!(err
            .message
            .contains("UMCP_TEST_UNSET_WORKLOAD_TOKEN_VARIABLE"));
    }
}
