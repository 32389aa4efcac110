//! Renewing credentials without the user: refreshing tokens (before they expire and after a
//! 401) and the client authentication of token requests.

use super::{lock, state_token, OAuth};
use crate::auth::state::State;
use crate::auth::store::{ClientRegistration, StoredCredentials, TokenSet};
use crate::auth::tokens::{self, AuthMethod, ClientAuth};
use crate::error::{AuthError, AuthStep, Result};
use crate::transport::http::provider_deadline;

impl OAuth {
    /// Refreshes the current token and saves it; after a 401 (`rejected`), a rejection of the new
    /// one asks a new authorization. Other processes share the store and may rotate first: the
    /// refresh runs under the store's lock (see [`TokenStore::lock`]), the store is read again
    /// once it is held, and only credentials it still holds are overwritten.
    ///
    /// [`TokenStore::lock`]: crate::auth::TokenStore::lock
    pub(super) fn refresh(&self, rejected: bool) -> Result<()> {
        let Some(mut credentials) = lock(&self.state).credentials.clone() else {
            return Err(AuthError::new(AuthStep::Token, "no credentials to refresh").into());
        };
        // Held until the new tokens are saved: another process waits, then reads them.
        let _shared = self
            .config
            .store
            .lock(provider_deadline::capped(self.config.timeout))?;
        if self.adopt_rotated(&credentials) {
            return Ok(());
        }
        // Credentials kept from an authorization server the configuration no longer allows
        // are not sent back there.
        self.check_bound(&credentials.issuer)?;
        let (Some(old), Some(client), Some(endpoint)) = (
            credentials.token.clone(),
            credentials.client.clone(),
            credentials.token_endpoint.clone(),
        ) else {
            return Err(AuthError::new(AuthStep::Token, "nothing to refresh with").into());
        };
        let Some(refresh_token) = old.refresh_token.clone() else {
            return Err(AuthError::new(AuthStep::Token, "no refresh token").into());
        };
        let method = AuthMethod::choose(
            client.token_endpoint_auth_method.as_deref(),
            client.client_secret.is_some(),
            self.config.private_key_pem.is_some(),
            &Default::default(),
        );
        let mut auth = self.client_auth(&client, method, &credentials.issuer)?;
        // A bound token is refreshed with a proof of the key it is bound to.
        if old.is_dpop() {
            auth.dpop = self.prover(&mut credentials, None);
        }
        let resource = credentials.resource.clone();
        let params = vec![
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh_token.as_str()),
            ("resource", resource.as_deref().unwrap_or(&self.resource)),
        ];
        let result = tokens::request(
            &self.http,
            &endpoint,
            params,
            Some(&auth),
            old.scope.as_deref(),
        );
        let token = match result {
            Ok(token) => token,
            Err(e) => return self.refresh_failed(credentials, &old, e),
        };
        log::debug!(
            "oauth: refreshed the token from {}",
            crate::redact::url(&credentials.issuer)
        );
        credentials.token = Some(TokenSet {
            refresh_token: token.refresh_token.clone().or(old.refresh_token),
            scope: token.scope.clone().or(old.scope),
            ..token
        });
        self.persist(&credentials);
        lock(&self.state).replace(credentials, rejected);
        Ok(())
    }

    /// After the refresh of `old` failed with `error`: the tokens another process rotated to
    /// just before, when there are; else a refused refresh token is dropped (here, and in the
    /// store while it still holds it), not to be tried again, and the error returned. A network
    /// failure may pass, and keeps it.
    fn refresh_failed(
        &self,
        mut credentials: StoredCredentials,
        old: &TokenSet,
        error: AuthError,
    ) -> Result<()> {
        if self.adopt_rotated(&credentials) {
            return Ok(());
        }
        if error.status.is_some() {
            if let Some(token) = credentials.token.as_mut() {
                token.refresh_token = None;
            }
            lock(&self.state).credentials = Some(credentials.clone());
            if self.store_holds(old) {
                self.persist(&credentials);
            }
        }
        Err(error.into())
    }

    /// Installs the credentials in the store when they hold another token than `current`
    /// (another process refreshed or re-authorized); true when it did.
    fn adopt_rotated(&self, current: &StoredCredentials) -> bool {
        let stored = match self.config.store.load(&self.key, Some(&current.issuer)) {
            Ok(stored) => stored,
            Err(e) => {
                log::debug!("oauth: cannot re-read the token store: {e}");
                return false;
            }
        };
        let Some(stored) = stored.filter(|s| s.token.is_some() && s.token != current.token) else {
            return false;
        };
        log::debug!(
            "oauth: the token store has newer tokens from {}; using them",
            crate::redact::url(&stored.issuer)
        );
        lock(&self.state).replace(stored, false);
        true
    }

    /// Whether the store still holds `token` (or nothing) for this server's issuer.
    fn store_holds(&self, token: &TokenSet) -> bool {
        let issuer = lock(&self.state)
            .credentials
            .as_ref()
            .map(|c| c.issuer.clone());
        match self.config.store.load(&self.key, issuer.as_deref()) {
            Ok(Some(stored)) => stored.token.as_ref().is_none_or(|t| t == token),
            Ok(None) => true,
            Err(_) => false,
        }
    }

    /// The client authentication for one token request (a fresh assertion for JWTs).
    pub(super) fn client_auth(
        &self,
        client: &ClientRegistration,
        method: AuthMethod,
        issuer: &str,
    ) -> Result<ClientAuth> {
        #[cfg_attr(not(feature = "oauth-jwt"), allow(unused_mut))]
        let mut auth = ClientAuth::new(client, method);
        if method == AuthMethod::PrivateKeyJwt {
            #[cfg(feature = "oauth-jwt")]
            {
                let pem = self.config.private_key_pem.as_deref().unwrap_or_default();
                auth.assertion = Some(crate::auth::jwt::client_assertion(
                    pem,
                    &client.client_id,
                    issuer,
                )?);
            }
            #[cfg(not(feature = "oauth-jwt"))]
            {
                let _ = issuer;
                return Err(AuthError::new(
                    AuthStep::Token,
                    "private_key_jwt needs the `oauth-jwt` feature",
                )
                .into());
            }
        }
        Ok(auth)
    }

    /// Refreshes a token that is about to expire. Failures only get logged, and are not
    /// retried for the same token: the server will answer 401, and a refresh or a new
    /// authorization follows from there.
    pub(super) fn refresh_if_expiring(&self) -> Result<()> {
        let expiring = |state: &State| {
            state.refresh_failed != Some(state.generation)
                && state_token(state).is_some_and(|t| {
                    t.refresh_token.is_some() && t.expires_within(self.config.refresh_margin)
                })
        };
        if !expiring(&*self.loaded_state()?) {
            return Ok(());
        }
        // Never waits behind another thread's authorization: the token is still usable, and
        // a 401 leads to new credentials from there.
        let Some(_flow) = self.flow.try_acquire() else {
            return Ok(());
        };
        if expiring(&lock(&self.state)) {
            if let Err(e) = self.refresh(false) {
                log::debug!("oauth: refreshing the token before it expires failed: {e}");
                // Cut short by the connection's closing, it may be tried again for another.
                if !provider_deadline::closed() {
                    let mut state = lock(&self.state);
                    state.refresh_failed = Some(state.generation);
                }
            }
        }
        Ok(())
    }
}
