//! Where credentials live between requests and sessions: the [`TokenStore`] trait, what it
//! stores, and the in-memory default.

use std::fmt;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result, Unsupported};

/// Keeps the credentials of MCP servers, keyed by the server's canonical URI and the issuer
/// of the authorization server that issued them.
///
/// Credentials are bound to their authorization server: when a server moves to another one,
/// the client registers anew there and the old entry stays under the old issuer. Implement
/// it to keep credentials in a keyring or a database; [`MemoryStore`] (the default) and
/// [`FileStore`](super::FileStore) come with the crate.
///
/// ```
/// use std::collections::HashMap;
/// use std::sync::Mutex;
/// use umcp::auth::{StoredCredentials, TokenStore};
/// use umcp::Result;
///
/// /// Stands in for a keyring: one entry per server, the last saved issuer only.
/// #[derive(Default)]
/// struct Keyring(Mutex<HashMap<String, StoredCredentials>>);
///
/// impl TokenStore for Keyring {
///     fn load(&self, server: &str, issuer: Option<&str>) -> Result<Option<StoredCredentials>> {
///         let entries = self.0.lock().unwrap_or_else(|e| e.into_inner());
///         let found = entries.get(server).filter(|c| issuer.is_none_or(|i| c.issuer == i));
///         Ok(found.cloned())
///     }
///
///     fn save(&self, server: &str, credentials: &StoredCredentials) -> Result<()> {
///         let mut entries = self.0.lock().unwrap_or_else(|e| e.into_inner());
///         entries.insert(server.to_owned(), credentials.clone());
///         Ok(())
///     }
///
///     fn remove(&self, server: &str, issuer: Option<&str>) -> Result<()> {
///         let mut entries = self.0.lock().unwrap_or_else(|e| e.into_inner());
///         if entries.get(server).is_some_and(|c| issuer.is_none_or(|i| c.issuer == i)) {
///             entries.remove(server);
///         }
///         Ok(())
///     }
/// }
///
/// let keyring = Keyring::default();
/// let server = "https://mcp.example.com/mcp";
/// keyring.save(server, &StoredCredentials::new("https://auth.example.com"))?;
/// assert!(keyring.load(server, Some("https://auth.example.com"))?.is_some());
/// assert!(keyring.load(server, Some("https://other.example.com"))?.is_none());
/// keyring.remove(server, None)?;
/// assert!(keyring.load(server, None)?.is_none());
/// # Ok::<(), umcp::Error>(())
/// ```
///
/// Give it to the manager with
/// [`ManagerOptions::with_token_store`](crate::ManagerOptions::with_token_store), or to one
/// client with [`OAuthConfig::token_store`](super::OAuthConfig::token_store).
pub trait TokenStore: Send + Sync {
    /// The credentials of `server` issued by `issuer`, or with `issuer` `None` the ones
    /// saved last for `server` (used before discovery has named an issuer).
    ///
    /// See the example on [`TokenStore`].
    ///
    /// # Errors
    ///
    /// When the store cannot be read.
    fn load(&self, server: &str, issuer: Option<&str>) -> Result<Option<StoredCredentials>>;

    /// Saves `credentials` for `server` under `credentials.issuer`, replacing what was there.
    ///
    /// See the example on [`TokenStore`].
    ///
    /// # Errors
    ///
    /// When the store cannot be written.
    fn save(&self, server: &str, credentials: &StoredCredentials) -> Result<()>;

    /// Forgets the credentials of `server` from `issuer`, or from every issuer when `None`.
    ///
    /// See the example on [`TokenStore`].
    ///
    /// # Errors
    ///
    /// When the store cannot be written.
    fn remove(&self, server: &str, issuer: Option<&str>) -> Result<()>;

    /// Every entry, with the key it was saved under, to list who is signed in where. The
    /// default says the store cannot list.
    ///
    /// ```
    /// use umcp::auth::{MemoryStore, StoredCredentials, TokenStore};
    ///
    /// let store = MemoryStore::new();
    /// store.save("https://mcp.example.com/mcp", &StoredCredentials::new("https://auth.example.com"))?;
    /// let entries = store.entries()?;
    /// assert_eq!(entries.len(), 1);
    /// assert_eq!(entries[0].0, "https://mcp.example.com/mcp");
    /// assert_eq!(store.location(), "memory (forgotten when the program ends)");
    /// assert!(store.lock(std::time::Duration::from_secs(1))?.is_none(), "nothing to share");
    /// # Ok::<(), umcp::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// When the store cannot be read, or cannot list at all
    /// ([`Error::Unsupported`]).
    fn entries(&self) -> Result<Vec<(String, StoredCredentials)>> {
        Err(Error::Unsupported(Unsupported::Feature(
            "listing the entries of this token store".into(),
        )))
    }

    /// Where the credentials live, in words for the user: a file's path, a keychain's name.
    ///
    /// See the example on [`TokenStore::entries`].
    fn location(&self) -> String {
        "a token store of the application's own".into()
    }

    /// Takes the store's lock, shared with other processes using the same store, waiting at most
    /// `wait`: held while a token is refreshed, so that processes that find one token expired
    /// together refresh it once, the others reading the result, and a rotated refresh token is
    /// never lost to a race. `None` for a store no other process shares (the default).
    ///
    /// See the example on [`TokenStore::entries`].
    ///
    /// # Errors
    ///
    /// When the lock cannot be taken within `wait`, or its file cannot be opened.
    fn lock(&self, wait: Duration) -> Result<Option<StoreLock>> {
        let _ = wait;
        Ok(None)
    }
}

/// A lock on a [`TokenStore`] shared between processes, released when dropped.
///
/// [`FileStore`](super::FileStore) locks a file next to its own; a store of your own can wrap
/// whatever releases its lock when dropped.
///
/// ```
/// use umcp::auth::StoreLock;
///
/// struct Released;
/// impl Drop for Released {
///     fn drop(&mut self) { /* unlock */ }
/// }
/// let lock = StoreLock::new(Released);
/// drop(lock);
/// ```
pub struct StoreLock {
    _held: Box<dyn Send>,
}

impl StoreLock {
    /// A lock that holds `held` until it is dropped.
    ///
    /// See the example on [`StoreLock`].
    pub fn new(held: impl Send + 'static) -> StoreLock {
        StoreLock {
            _held: Box::new(held),
        }
    }
}

impl fmt::Debug for StoreLock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoreLock").finish_non_exhaustive()
    }
}

/// What is kept for one server and one authorization server.
///
/// ```
/// use std::time::Duration;
/// use umcp::auth::{ClientRegistration, MemoryStore, StoredCredentials, TokenSet, TokenStore};
///
/// let mut token = TokenSet::default();
/// token.access_token = "…".into();
/// token.token_type = Some("DPoP".into());
/// token.expires_at = Some(1); // long gone
/// assert!(token.is_dpop());
/// assert!(token.expires_within(Duration::from_secs(60)));
///
/// let client = ClientRegistration::new("my-client", None);
/// assert!(!client.is_expired(), "a registration without a secret expiry never expires");
///
/// let mut credentials = StoredCredentials::new("https://auth.example.com");
/// credentials.client = Some(client);
/// credentials.token = Some(token);
/// let store = MemoryStore::new();
/// store.save("https://mcp.example.com/mcp", &credentials)?;
/// assert_eq!(store.load("https://mcp.example.com/mcp", None)?, Some(credentials));
/// # Ok::<(), umcp::Error>(())
/// ```
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct StoredCredentials {
    /// The issuer of the authorization server these credentials belong to.
    pub issuer: String,
    /// The token endpoint, so tokens can be refreshed without discovery.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint: Option<String>,
    /// The profile the sign-in belongs to ([`OAuthConfig::profile`](super::OAuthConfig::profile)),
    /// `None` for the server's default one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// Where the tokens can be revoked (RFC 7009), when the authorization server offers it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revocation_endpoint: Option<String>,
    /// The RFC 8707 `resource` the tokens were obtained for, exactly as the protected
    /// resource metadata published it; refreshes send the same value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// The client identity at that authorization server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<ClientRegistration>,
    /// The current tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<TokenSet>,
    /// The DPoP private key (PKCS#8 PEM) the tokens are bound to (RFC 9449), kept with them
    /// so a restarted process can still use them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_key: Option<String>,
}

impl StoredCredentials {
    /// Empty credentials for `issuer`.
    ///
    /// See the example on [`StoredCredentials`].
    pub fn new(issuer: impl Into<String>) -> StoredCredentials {
        StoredCredentials {
            issuer: issuer.into(),
            ..StoredCredentials::default()
        }
    }
}

/// A client identity at an authorization server: registered dynamically, pre-registered,
/// or a client ID metadata document URL.
///
/// See the example on [`StoredCredentials`].
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ClientRegistration {
    /// The `client_id`.
    pub client_id: String,
    /// The `client_secret` of a confidential client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// How the client authenticates at the token endpoint: `client_secret_basic`,
    /// `client_secret_post`, `private_key_jwt` or `none`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_method: Option<String>,
    /// The redirect URI the registration was made with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redirect_uri: Option<String>,
    /// When the secret expires, in seconds since the Unix epoch (RFC 7591
    /// `client_secret_expires_at`; absent or 0: never).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
}

impl ClientRegistration {
    /// A registration of `client_id` with an optional secret.
    ///
    /// See the example on [`StoredCredentials`].
    pub fn new(client_id: impl Into<String>, client_secret: Option<String>) -> ClientRegistration {
        ClientRegistration {
            client_id: client_id.into(),
            client_secret,
            ..ClientRegistration::default()
        }
    }

    /// True when the secret has expired.
    ///
    /// See the example on [`StoredCredentials`].
    pub fn is_expired(&self) -> bool {
        self.expires_at
            .is_some_and(|at| at != 0 && at <= unix_now())
    }
}

/// The tokens of one authorization.
///
/// See the example on [`StoredCredentials`].
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TokenSet {
    /// The access token sent as `Authorization: Bearer …`.
    pub access_token: String,
    /// The refresh token, when the server issued one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// When the access token expires, in seconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    /// The granted scopes (space-separated), or the requested ones when the server did not
    /// say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// The token type when it is not `Bearer`: `DPoP` for a token bound to the DPoP key,
    /// sent as `Authorization: DPoP …` with a proof.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_type: Option<String>,
}

impl TokenSet {
    /// True for a DPoP-bound token.
    ///
    /// See the example on [`StoredCredentials`].
    pub fn is_dpop(&self) -> bool {
        self.token_type
            .as_deref()
            .is_some_and(|t| t.eq_ignore_ascii_case("dpop"))
    }

    /// True when the access token expires within `margin`.
    ///
    /// See the example on [`StoredCredentials`].
    pub fn expires_within(&self, margin: Duration) -> bool {
        self.expires_at
            .is_some_and(|at| at <= unix_now().saturating_add(margin.as_secs()))
    }
}

/// Seconds since the Unix epoch.
pub(crate) fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Shows a secret's presence, never its value.
fn hidden(secret: &Option<String>) -> &'static str {
    if secret.is_some() {
        "Some(<redacted>)"
    } else {
        "None"
    }
}

impl fmt::Debug for StoredCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoredCredentials")
            .field("issuer", &crate::redact::url(&self.issuer))
            .field(
                "token_endpoint",
                &self.token_endpoint.as_deref().map(crate::redact::url),
            )
            .field("profile", &self.profile)
            .field("client", &self.client)
            .field("token", &self.token)
            .field("dpop_key", &hidden(&self.dpop_key))
            .finish()
    }
}

impl fmt::Debug for ClientRegistration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientRegistration")
            .field("client_id", &self.client_id)
            .field("client_secret", &hidden(&self.client_secret))
            .field(
                "token_endpoint_auth_method",
                &self.token_endpoint_auth_method,
            )
            .field("redirect_uri", &self.redirect_uri)
            .field("expires_at", &self.expires_at)
            .finish()
    }
}

impl fmt::Debug for TokenSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenSet")
            .field("access_token", &"<redacted>")
            .field("refresh_token", &hidden(&self.refresh_token))
            .field("expires_at", &self.expires_at)
            .field("scope", &self.scope)
            .field("token_type", &self.token_type)
            .finish()
    }
}

/// Keeps credentials in memory for the life of the process (the default store).
///
/// See the example on [`StoredCredentials`].
#[derive(Default)]
pub struct MemoryStore {
    /// `(server, credentials)`, the last saved last.
    entries: Mutex<Vec<(String, StoredCredentials)>>,
}

impl MemoryStore {
    /// An empty store.
    ///
    /// See the example on [`StoredCredentials`].
    pub fn new() -> MemoryStore {
        MemoryStore::default()
    }
}

impl fmt::Debug for MemoryStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = self.entries.lock().map_or(0, |e| e.len());
        f.debug_struct("MemoryStore")
            .field("entries", &count)
            .finish()
    }
}

impl TokenStore for MemoryStore {
    fn load(&self, server: &str, issuer: Option<&str>) -> Result<Option<StoredCredentials>> {
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        Ok(find(&entries, server, issuer).cloned())
    }

    fn save(&self, server: &str, credentials: &StoredCredentials) -> Result<()> {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        upsert(&mut entries, server, credentials);
        Ok(())
    }

    fn remove(&self, server: &str, issuer: Option<&str>) -> Result<()> {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        retain_others(&mut entries, server, issuer);
        Ok(())
    }

    fn entries(&self) -> Result<Vec<(String, StoredCredentials)>> {
        Ok(self
            .entries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone())
    }

    fn location(&self) -> String {
        "memory (forgotten when the program ends)".into()
    }
}

/// The entry of `server` from `issuer`, or the last saved one for `server`.
pub(crate) fn find<'a>(
    entries: &'a [(String, StoredCredentials)],
    server: &str,
    issuer: Option<&str>,
) -> Option<&'a StoredCredentials> {
    entries
        .iter()
        .rev()
        .find(|(s, c)| s == server && issuer.is_none_or(|i| c.issuer == i))
        .map(|(_, c)| c)
}

/// Replaces the entry of `server` and `credentials.issuer`, moving it to the end.
pub(crate) fn upsert(
    entries: &mut Vec<(String, StoredCredentials)>,
    server: &str,
    credentials: &StoredCredentials,
) {
    retain_others(entries, server, Some(&credentials.issuer));
    entries.push((server.to_owned(), credentials.clone()));
}

/// Drops the entries of `server` from `issuer` (or every issuer).
pub(crate) fn retain_others(
    entries: &mut Vec<(String, StoredCredentials)>,
    server: &str,
    issuer: Option<&str>,
) {
    entries.retain(|(s, c)| !(s == server && issuer.is_none_or(|i| c.issuer == i)));
}

#[cfg(test)]
mod tests;
