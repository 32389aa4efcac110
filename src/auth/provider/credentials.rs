//! How [`OAuth`] serves as a [`CredentialProvider`]: the headers of each request, and the
//! answers to a 401 (refresh or authorize) and to a 403 `insufficient_scope` (step up).

use super::{lock, state_token, OAuth};
use crate::auth::dpop::USE_DPOP_NONCE;
use crate::auth::flow_lock::Purpose;
use crate::auth::state::{self, State};
use crate::auth::store::TokenSet;
use crate::error::{AuthError, AuthStep, HttpError, Result};
use crate::transport::http::{provider_deadline, url};
use crate::CredentialProvider;

impl CredentialProvider for OAuth {
    fn headers(&self, url: &str) -> Result<Vec<(String, String)>> {
        self.request_headers("POST", url)
    }

    fn authorization_context(&self) -> u64 {
        lock(&self.state).context
    }

    fn request_headers(&self, method: &str, url: &str) -> Result<Vec<(String, String)>> {
        // Tokens go to the server they were issued for, never to another origin.
        if url::origin(url) != url::origin(&self.server) {
            return Ok(Vec::new());
        }
        self.refresh_if_expiring()?;
        let state = self.loaded_state()?;
        state::remember_sent(self.id, state.generation);
        self.present_current(&state, method, url)
    }

    /// The token held now, even one about to expire: refreshing could take as long as the
    /// authorization server likes, and the request this is for (the `DELETE` on close) must
    /// not wait. The server's answer, whatever it is, leads to nothing.
    fn cached_headers(&self, method: &str, url: &str) -> Result<Vec<(String, String)>> {
        if url::origin(url) != url::origin(&self.server) {
            return Ok(Vec::new());
        }
        let state = self.loaded_state()?;
        self.present_current(&state, method, url)
    }

    fn on_unauthorized(&self, error: &HttpError) -> Result<bool> {
        if let Some(nonce) = &error.dpop_nonce {
            self.nonces.remember(&error.url, nonce);
            // RFC 9449 §9: the token is fine, the proof lacked the server's nonce. The DPoP
            // challenge saying so may stand beside a Bearer one (§7.1), which is the one
            // `www_authenticate` holds.
            let asks_nonce = error.asks_dpop_nonce
                || error
                    .www_authenticate
                    .as_ref()
                    .is_some_and(|c| c.error.as_deref() == Some(USE_DPOP_NONCE));
            let bound = state_token(&*self.loaded_state()?).is_some_and(TokenSet::is_dpop);
            if asks_nonce && bound {
                log::debug!(
                    "oauth: {} asks for a DPoP nonce; repeating the request",
                    crate::redact::url(&error.url)
                );
                return Ok(true);
            }
        }
        let mut flow = self.flow(Purpose::Authorize)?;
        let (replaced, can_refresh) = {
            let state = lock(&self.state);
            let can_refresh =
                !state.refreshed && state_token(&state).is_some_and(|t| t.refresh_token.is_some());
            (self.replaced_since_sent(&state), can_refresh)
        };
        if replaced {
            return Ok(true);
        }
        if can_refresh {
            match self.refresh(true) {
                Ok(()) => return Ok(true),
                // The connection closed: nothing more is to be obtained for it.
                Err(e) if provider_deadline::closed() => return Err(e),
                Err(e) => log::debug!("oauth: refreshing after 401 failed: {e}"),
            }
        }
        log::debug!(
            "oauth: {} answered 401; authorizing",
            crate::redact::url(&error.url)
        );
        flow.outcome(self.obtain(error.www_authenticate.as_ref(), None, Some(error)))?;
        Ok(true)
    }

    fn on_forbidden(&self, error: &HttpError, retries: u32) -> Result<bool> {
        let Some(challenge) = error
            .www_authenticate
            .as_ref()
            .filter(|c| c.error.as_deref() == Some("insufficient_scope"))
        else {
            return Ok(false);
        };
        let mut flow = self.flow(Purpose::StepUp)?;
        let (replaced, previous) = {
            let state = lock(&self.state);
            let previous = state
                .requested_scope
                .clone()
                .or_else(|| state_token(&state).and_then(|t| t.scope.clone()));
            (self.replaced_since_sent(&state), previous)
        };
        if replaced {
            return Ok(true);
        }
        if retries >= self.config.max_authorization_attempts {
            return Err(AuthError {
                url: Some(error.url.clone()),
                status: Some(error.status),
                error: challenge.error.clone(),
                error_description: challenge.error_description.clone(),
                ..AuthError::new(
                    AuthStep::Authorization,
                    format!(
                        "the server still asks for more scope ({}) after {retries} authorizations; giving up",
                        challenge.scope.as_deref().unwrap_or("unnamed")
                    ),
                )
            }
            .into());
        }
        let scope = state::union(previous.as_deref(), challenge.scope.as_deref());
        log::debug!(
            "oauth: {} answered 403 insufficient_scope; stepping up to {scope:?}",
            crate::redact::url(&error.url)
        );
        flow.outcome(self.obtain(Some(challenge), scope, Some(error)))?;
        Ok(true)
    }
}

impl OAuth {
    /// The headers presenting the current token of `state`, none without one.
    fn present_current(
        &self,
        state: &State,
        method: &str,
        url: &str,
    ) -> Result<Vec<(String, String)>> {
        match state
            .credentials
            .as_ref()
            .and_then(|c| Some((c, c.token.as_ref()?)))
        {
            Some((credentials, token)) => self.presentation(credentials, token, method, url),
            None => Ok(Vec::new()),
        }
    }
}
