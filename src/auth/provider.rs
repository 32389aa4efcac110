//! [`OAuth`]: the [`CredentialProvider`](crate::CredentialProvider) that runs the flow on 401,
//! refreshes tokens, and steps up on 403 `insufficient_scope`.

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};

use super::config::{Grant, OAuthConfig};
use super::discovery;
use super::dpop::{DpopKey, Nonces};
use super::flow_lock::{FlowGuard, FlowLock, Purpose, Refused};
use super::http::Http;
use super::revocation::{self, Revocation};
use super::state::{self, State};
use super::store::{StoredCredentials, TokenSet};
use super::tokens::AuthMethod;
use super::urls;
use crate::error::{AuthError, AuthStep, Error, HttpError, Result};
use crate::sync::lock;
use crate::transport::http::{provider_deadline, url};

mod credentials;
mod obtain;
mod proofs;
mod refresh;

/// OAuth 2.1 credentials for one MCP server, following the MCP authorization spec.
///
/// Create it with the server's URL and an [`OAuthConfig`], and give it to
/// [`HttpConfig::credentials`](crate::HttpConfig::credentials). The first request goes out
/// with a stored token when there is one; a 401 runs discovery, registration and the
/// configured grant, and the request is repeated. See the [module docs](super).
///
/// With a user in the loop, authorize before connecting (when
/// [`has_token`](OAuth::has_token) says there is nothing stored): the request that meets
/// the 401 otherwise waits for the user within the client's request timeout.
///
/// ```no_run
/// # use umcp::auth::{LoopbackHandler, OAuth, OAuthConfig};
/// # let handler = LoopbackHandler::new(|url: &str| { let _ = url; Ok(()) });
/// let oauth = OAuth::new("https://mcp.example.com/mcp", OAuthConfig::new(handler))?;
/// if !oauth.has_token()? {
///     oauth.authorize()?;
/// }
/// # Ok::<(), umcp::Error>(())
/// ```
pub struct OAuth {
    server: String,
    resource: String,
    /// The key of the token store: the resource, and the profile when there is one.
    key: String,
    config: OAuthConfig,
    http: Http,
    id: u64,
    state: Mutex<State>,
    /// Held while credentials are being obtained, so concurrent 401s run one flow (and share
    /// its failure); waited for at most `config.authorization_wait`.
    flow: FlowLock,
    /// The DPoP nonces servers provided, per origin.
    nonces: Arc<Nonces>,
    /// The DPoP key in use, parsed once: `(PEM, key)`.
    dpop_key: Mutex<Option<(String, Arc<DpopKey>)>>,
}

impl OAuth {
    /// A provider for the MCP server at `server_url` (the URL given to
    /// [`HttpConfig::new`](crate::HttpConfig::new)).
    ///
    /// See the example in the [`auth`](crate::auth) module.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] when `server_url` is not an http(s) URL, the client ID metadata
    /// document URL is not an https URL with a path, or the profile name is not one.
    pub fn new(server_url: impl Into<String>, config: OAuthConfig) -> Result<OAuth> {
        let server = server_url.into();
        let Some(resource) = urls::canonical_resource(&server) else {
            return Err(Error::Config(format!(
                "not an http(s) URL: `{}`",
                crate::redact::url(&server)
            )));
        };
        if let Some(document) = config.client_metadata_url.as_deref() {
            let has_path = url::parse(document).is_some_and(|p| p.path.len() > 1);
            if !document.starts_with("https://") || !has_path {
                return Err(Error::Config(format!(
                    "a client ID metadata document URL must be https with a path: `{document}`"
                )));
            }
        }
        if let Some(profile) = config.profile.as_deref() {
            let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '@');
            if profile.is_empty() || profile.len() > 64 || !profile.chars().all(allowed) {
                return Err(Error::Config(format!(
                    "a profile name is 1 to 64 letters, digits, `.`, `_`, `-` or `@`, not `{}`",
                    crate::redact::clip(profile)
                )));
            }
        }
        let key = match config.profile.as_deref() {
            Some(profile) => format!("{resource}#{profile}"),
            None => resource.clone(),
        };
        Ok(OAuth {
            http: Http::new(config.timeout, config.network.clone()),
            server,
            resource,
            key,
            config,
            id: state::next_provider_id(),
            state: Mutex::new(State::default()),
            flow: FlowLock::default(),
            nonces: Arc::default(),
            dpop_key: Mutex::new(None),
        })
    }

    /// The canonical URI of the server, sent as the RFC 8707 `resource` and used as the key
    /// of the token store.
    ///
    /// See the example on [`auth::OAuth::authorize`](crate::auth::OAuth::authorize).
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// Finds the server's authorization server as the next authorization would (from the
    /// challenge of `refused`, a 401 or 403 the server answered, else the well-known URLs),
    /// and nothing more: no registration, no token, nothing stored. For showing a person how a
    /// server is protected (`umcp doctor`).
    ///
    /// ```no_run
    /// use umcp::auth::{HeadlessHandler, OAuth, OAuthConfig};
    ///
    /// let oauth = OAuth::new("https://mcp.example.com/mcp", OAuthConfig::new(HeadlessHandler::new()))?;
    /// let found = oauth.discover(None)?;
    /// log::info!("{} issues tokens for {}", found.issuer, found.resource);
    /// # Ok::<(), umcp::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Auth`] when a document cannot be fetched or does not hold what it must.
    pub fn discover(&self, refused: Option<&HttpError>) -> Result<super::AuthorizationDiscovery> {
        let challenge = refused.and_then(|e| e.www_authenticate.as_ref());
        let version = refused.and_then(|e| e.protocol_version.as_deref());
        let allowed = |issuer: &str| self.check_bound(issuer).is_ok();
        let found = discovery::discover(
            &self.http,
            &self.server,
            &self.resource,
            challenge,
            version,
            allowed,
        )?;
        Ok(found.into())
    }

    /// Obtains credentials now, before connecting (for a `login` command): discovery from
    /// the well-known URLs, then the configured grant.
    ///
    /// ```no_run
    /// use umcp::auth::{HeadlessHandler, OAuth, OAuthConfig};
    ///
    /// # fn main() -> umcp::Result<()> {
    /// let config = OAuthConfig::new(HeadlessHandler::new());
    /// let oauth = OAuth::new("https://mcp.example.com/mcp", config)?;
    /// // A `login` command: take the user through the authorization server now, not on the
    /// // first 401.
    /// if !oauth.has_token()? {
    ///     oauth.authorize()?;
    /// }
    /// log::info!("signed in to {}", oauth.resource());
    /// // And `logout`: revoke the tokens where the server offers it, and forget them and the
    /// // client registration, here and in the store.
    /// let revocation = oauth.logout()?;
    /// log::info!("signed out: {revocation}");
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Auth`] naming the step that failed, or the handler's or store's error.
    pub fn authorize(&self) -> Result<()> {
        let mut flow = self.flow(Purpose::Authorize)?;
        flow.outcome(self.obtain(None, None, None))
    }

    /// True when an access token is at hand (from this session or the store).
    ///
    /// See the example on [`auth::OAuth::authorize`](crate::auth::OAuth::authorize).
    ///
    /// # Errors
    ///
    /// When the token store cannot be read.
    pub fn has_token(&self) -> Result<bool> {
        let state = self.loaded_state()?;
        Ok(state_token(&state).is_some())
    }

    /// Signs out: revokes the tokens at the authorization server where it offers revocation
    /// (RFC 7009), then forgets this server's tokens and client registrations (of this
    /// profile), here and in the store, whatever the revocation's outcome.
    ///
    /// See the example on [`auth::OAuth::authorize`](crate::auth::OAuth::authorize).
    ///
    /// # Errors
    ///
    /// When the token store cannot be read or written; a failed revocation is not an error but
    /// [`Revocation::Failed`].
    pub fn logout(&self) -> Result<Revocation> {
        let _flow = self.flow(Purpose::Logout)?;
        let held = self.loaded_state()?.credentials.clone();
        let revocation = match held {
            Some(credentials) => self.revoke(&credentials),
            None => Revocation::NothingHeld,
        };
        let mut state = lock(&self.state);
        *state = State {
            loaded: true,
            generation: state.generation + 1,
            context: state.context + 1,
            ..State::default()
        };
        self.config.store.remove(&self.key, None)?;
        Ok(revocation)
    }

    /// Revokes the tokens of `credentials` where their authorization server offers it.
    fn revoke(&self, credentials: &StoredCredentials) -> Revocation {
        let (Some(token), Some(client)) = (&credentials.token, &credentials.client) else {
            return Revocation::NothingHeld;
        };
        let Some(endpoint) = credentials.revocation_endpoint.as_deref() else {
            return Revocation::NotOffered;
        };
        let method = AuthMethod::choose(
            client.token_endpoint_auth_method.as_deref(),
            client.client_secret.is_some(),
            self.config.private_key_pem.is_some(),
            &Default::default(),
        );
        let revoked = self
            .check_bound(&credentials.issuer)
            .map_err(Error::from)
            .and_then(|()| self.client_auth(client, method, &credentials.issuer))
            .and_then(|auth| Ok(revocation::revoke(&self.http, endpoint, &auth, token)?));
        match revoked {
            Ok(()) => Revocation::Revoked,
            Err(Error::Auth(error)) => Revocation::Failed(error),
            Err(other) => {
                Revocation::Failed(Box::new(AuthError::new(AuthStep::Token, other.to_string())))
            }
        }
    }

    /// Takes the flow lock for `purpose`, waiting at most the configured time behind another
    /// thread's authorization. One that failed with the server's answer returns its error: the flow
    /// is not run again at once (see [`FlowLock`]).
    fn flow(&self, purpose: Purpose) -> Result<FlowGuard<'_>> {
        // Within the deadline of the call waiting, when there is one.
        let wait = provider_deadline::capped(self.config.authorization_wait);
        let acquired = self.flow.acquire(wait, purpose);
        acquired.map_err(|refused| match refused {
            Refused::Failed(error) => {
                log::debug!("oauth: the authorization waited for failed: {error}");
                error
            }
            Refused::Busy => AuthError::new(
                AuthStep::Authorization,
                format!(
                    "another authorization of {} is still running after {wait:?}",
                    self.resource
                ),
            )
            .into(),
            Refused::Closed => AuthError::new(
                AuthStep::Authorization,
                "the connection closed while waiting for another authorization",
            )
            .into(),
        })
    }

    /// The state, with the store consulted once.
    fn loaded_state(&self) -> Result<MutexGuard<'_, State>> {
        let mut state = lock(&self.state);
        if !state.loaded {
            state.credentials = self.config.store.load(&self.key, None)?;
            state.loaded = true;
        }
        Ok(state)
    }

    /// Saves credentials. A store that fails is reported but does not fail the request: the
    /// credentials are valid for this session all the same.
    fn persist(&self, credentials: &StoredCredentials) {
        if let Err(e) = self.config.store.save(&self.key, credentials) {
            log::warn!(
                "oauth: cannot save the credentials of {}: {e}",
                crate::redact::url(&self.resource)
            );
        }
    }

    /// Whether another thread replaced the credentials since this thread sent its request.
    fn replaced_since_sent(&self, state: &State) -> bool {
        state::sent_generation(self.id).is_some_and(|sent| sent != state.generation)
    }
}

impl OAuth {
    /// Refuses the authorization server `offered` when the configuration binds the credentials to
    /// another (the workload identity's issuer, [`OAuthConfig::issuer`]), before anything is sent
    /// to it or credentials kept for it are used.
    fn check_bound(&self, offered: &str) -> std::result::Result<(), AuthError> {
        let workload = match &self.config.grant {
            Grant::WorkloadIdentity(identity) => Some(identity.get_issuer()),
            _ => None,
        };
        let bindings = [
            ("the workload identity is", workload),
            ("the client is registered", self.config.issuer.as_deref()),
        ];
        for (what, expected) in bindings {
            let Some(expected) = expected else { continue };
            if urls::same_issuer(expected, offered) {
                continue;
            }
            let expected = match expected {
                "" => "(none named)".to_owned(),
                named => format!("`{}`", crate::redact::url(named)),
            };
            return Err(AuthError::new(
                AuthStep::Discovery,
                format!(
                    "{what} for the authorization server {expected}, but {} is protected by \
                     `{}`; no credentials are sent there",
                    crate::redact::url(&self.server),
                    crate::redact::url(offered)
                ),
            ));
        }
        Ok(())
    }
}

impl fmt::Debug for OAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let has_token = lock(&self.state).access_token().is_some();
        f.debug_struct("OAuth")
            .field("server", &crate::redact::url(&self.server))
            .field("resource", &crate::redact::url(&self.resource))
            .field("config", &self.config)
            .field("has_token", &has_token)
            .finish_non_exhaustive()
    }
}

/// The current token set.
fn state_token(state: &State) -> Option<&TokenSet> {
    state.credentials.as_ref().and_then(|c| c.token.as_ref())
}
