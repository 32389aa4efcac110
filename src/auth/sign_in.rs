//! Who is signed in where: the entries of a token store, shown without their secrets.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::store::{StoredCredentials, TokenStore};
use crate::error::Result;

/// One sign-in kept in a [`TokenStore`]: the server, the profile, the authorization server,
/// the scopes and the expiry, and never a token, a secret or a key.
///
/// ```
/// use umcp::auth::{MemoryStore, SignIn, StoredCredentials, TokenSet, TokenStore};
///
/// let store = MemoryStore::new();
/// let mut credentials = StoredCredentials::new("https://auth.example.com");
/// credentials.resource = Some("https://mcp.example.com/mcp".into());
/// let mut token = TokenSet::default();
/// token.access_token = "secret".into();
/// token.scope = Some("files:read".into());
/// credentials.token = Some(token);
/// store.save("https://mcp.example.com/mcp", &credentials)?;
///
/// let signed_in = SignIn::list(&store)?;
/// assert_eq!(signed_in[0].server, "https://mcp.example.com/mcp");
/// assert_eq!(signed_in[0].scope.as_deref(), Some("files:read"));
/// assert!(signed_in[0].has_token && !signed_in[0].refreshable);
/// assert!(!format!("{signed_in:?}").contains("secret"));
/// # Ok::<(), umcp::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SignIn {
    /// The key the entry is stored under (the server's canonical URI, with `#profile` for a
    /// profile's; prefixed by the server's name in a manager's store).
    pub key: String,
    /// The MCP server the tokens are for (its canonical URI, or the `resource` the tokens were
    /// obtained for).
    pub server: String,
    /// The profile, `None` for the server's default sign-in.
    pub profile: Option<String>,
    /// The authorization server that issued the tokens.
    pub issuer: String,
    /// The client id at that authorization server.
    pub client_id: Option<String>,
    /// The scopes granted (space-separated), as far as known.
    pub scope: Option<String>,
    /// When the access token expires, when the server said.
    pub expires_at: Option<SystemTime>,
    /// Whether an access token is held.
    pub has_token: bool,
    /// Whether a refresh token is held, so the sign-in outlives the access token.
    pub refreshable: bool,
    /// Whether the tokens are bound to a DPoP key (RFC 9449).
    pub dpop: bool,
}

impl SignIn {
    /// The sign-ins kept in `store`, in the order it keeps them.
    ///
    /// See the example on [`SignIn`].
    ///
    /// # Errors
    ///
    /// When the store cannot be read or cannot list ([`TokenStore::entries`]).
    pub fn list(store: &dyn TokenStore) -> Result<Vec<SignIn>> {
        let entries = store.entries()?;
        Ok(entries
            .iter()
            .map(|(key, credentials)| SignIn::of(key, credentials))
            .collect())
    }

    /// The sign-in of one store entry, saved under `key`.
    ///
    /// See the example on [`SignIn`].
    pub fn of(key: &str, credentials: &StoredCredentials) -> SignIn {
        let token = credentials.token.as_ref();
        let from_key = key.rsplit(' ').next().unwrap_or(key);
        let (keyed_server, keyed_profile) = match from_key.split_once('#') {
            Some((server, profile)) => (server, Some(profile.to_owned())),
            None => (from_key, None),
        };
        SignIn {
            key: key.to_owned(),
            server: credentials
                .resource
                .clone()
                .unwrap_or_else(|| keyed_server.to_owned()),
            profile: credentials.profile.clone().or(keyed_profile),
            issuer: credentials.issuer.clone(),
            client_id: credentials.client.as_ref().map(|c| c.client_id.clone()),
            scope: token.and_then(|t| t.scope.clone()),
            expires_at: token
                .and_then(|t| t.expires_at)
                .map(|at| UNIX_EPOCH + Duration::from_secs(at)),
            has_token: token.is_some(),
            refreshable: token.is_some_and(|t| t.refresh_token.is_some()),
            dpop: token.is_some_and(|t| t.is_dpop()),
        }
    }
}
