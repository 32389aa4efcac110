//! Signing out at the authorization server: token revocation (RFC 7009), and what became of it.

use std::fmt;

use super::http::Http;
use super::store::TokenSet;
use super::tokens::ClientAuth;
use super::urls;
use crate::error::{AuthError, AuthStep};

/// What signing out did at the authorization server ([`OAuth::logout`](super::OAuth::logout)).
///
/// The credentials are forgotten here in every case; only [`Revoked`](Revocation::Revoked)
/// means the server will not honour the tokens any more.
///
/// ```
/// use umcp::auth::Revocation;
///
/// let done = Revocation::Revoked;
/// assert!(done.is_revoked());
/// assert_eq!(done.to_string(), "the authorization server revoked the tokens");
/// assert!(!Revocation::NotOffered.is_revoked());
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Revocation {
    /// The authorization server took the tokens back (RFC 7009): the refresh token, which
    /// takes its access tokens with it, and the access token.
    Revoked,
    /// The authorization server offers no revocation endpoint: its tokens stay valid there until
    /// they expire.
    NotOffered,
    /// No tokens were held, so nothing was sent.
    NothingHeld,
    /// The revocation request failed (the server refused it, or could not be reached): the
    /// tokens may stay valid there until they expire.
    Failed(Box<AuthError>),
}

impl Revocation {
    /// True when the authorization server revoked the tokens.
    ///
    /// See the example on [`Revocation`].
    pub fn is_revoked(&self) -> bool {
        matches!(self, Revocation::Revoked)
    }
}

impl fmt::Display for Revocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Revocation::Revoked => f.write_str("the authorization server revoked the tokens"),
            Revocation::NotOffered => f.write_str(
                "the authorization server offers no revocation; its tokens stay valid until they \
                 expire",
            ),
            Revocation::NothingHeld => f.write_str("no tokens were held"),
            Revocation::Failed(error) => write!(
                f,
                "revoking the tokens failed ({error}); they may stay valid until they expire"
            ),
        }
    }
}

/// Revokes `token` at `endpoint`: the refresh token first (RFC 7009 §2.1: the server then drops
/// the access tokens issued with it), then the access token, each authenticated as the client
/// is at the token endpoint. A token the server no longer knows counts as revoked (§2.2).
pub(crate) fn revoke(
    http: &Http,
    endpoint: &str,
    client: &ClientAuth,
    token: &TokenSet,
) -> Result<(), AuthError> {
    const STEP: AuthStep = AuthStep::Token;
    urls::check_endpoint(STEP, "revocation endpoint", endpoint)?;
    let tokens = [
        (token.refresh_token.as_deref(), "refresh_token"),
        (Some(token.access_token.as_str()), "access_token"),
    ];
    for (value, hint) in tokens {
        let Some(value) = value.filter(|v| !v.is_empty()) else {
            continue;
        };
        let mut params = vec![("token", value), ("token_type_hint", hint)];
        let basic = client.apply(&mut params);
        log::debug!(
            "oauth: revoking the {hint} at {}",
            crate::redact::url(endpoint)
        );
        let answer = http.post_form(STEP, endpoint, &params, basic.as_deref(), None)?;
        if !answer.is_success() {
            return Err(answer.error(STEP, format!("the server refused to revoke the {hint}")));
        }
    }
    Ok(())
}
