//! The provider's side of DPoP (RFC 9449): which key binds a client's tokens, and the
//! headers that present a bound token.

use std::sync::Arc;

use super::{lock, OAuth};
use crate::auth::dpop::{DpopKey, Prover};
use crate::auth::metadata::AuthorizationServerMetadata;
use crate::auth::store::{StoredCredentials, TokenSet};
use crate::error::Result;

impl OAuth {
    /// The DPoP prover for token requests of `credentials`: the configured key, else the stored
    /// one, else a new one stored with them so the binding survives a restart. For a new grant
    /// (`metadata`) only if the server advertises ES256; `None` when DPoP is off or unavailable.
    pub(super) fn prover(
        &self,
        credentials: &mut StoredCredentials,
        metadata: Option<&AuthorizationServerMetadata>,
    ) -> Option<Prover> {
        if !self.config.dpop || !cfg!(feature = "oauth-jwt") {
            return None;
        }
        let supported = metadata.is_none_or(|m| {
            crate::auth::dpop::supported(m.dpop_signing_alg_values_supported.as_deref())
        });
        if !supported {
            return None;
        }
        if let Some(pem) = self.config.dpop_key_pem.as_deref() {
            return self.cached_key(pem).map(|key| self.with_nonces(key));
        }
        if let Some(pem) = credentials.dpop_key.clone() {
            return self.cached_key(&pem).map(|key| self.with_nonces(key));
        }
        // Without metadata this refreshes a token that had no key: there is none to bind to.
        metadata?;
        let generated = DpopKey::generate().and_then(|key| Ok((key.to_pem()?, key)));
        match generated {
            Ok((pem, key)) => {
                log::debug!(
                    "oauth: binding tokens of {} to a new DPoP key",
                    crate::redact::url(&self.resource)
                );
                let key = Arc::new(key);
                *lock(&self.dpop_key) = Some((pem.clone(), Arc::clone(&key)));
                credentials.dpop_key = Some(pem);
                Some(self.with_nonces(key))
            }
            Err(e) => {
                log::warn!("oauth: cannot create a DPoP key ({e}); using Bearer tokens");
                None
            }
        }
    }

    /// The headers presenting `token`: `DPoP` with a proof for a bound token, `Bearer` otherwise. A
    /// bound token whose key is gone is not sent at all, so the server's 401 leads to new
    /// credentials.
    pub(super) fn presentation(
        &self,
        credentials: &StoredCredentials,
        token: &TokenSet,
        method: &str,
        url: &str,
    ) -> Result<Vec<(String, String)>> {
        if !token.is_dpop() {
            return Ok(vec![(
                "Authorization".to_owned(),
                format!("Bearer {}", token.access_token),
            )]);
        }
        let pem = self
            .config
            .dpop_key_pem
            .as_deref()
            .or(credentials.dpop_key.as_deref());
        let Some(key) = pem.and_then(|pem| self.cached_key(pem)) else {
            log::debug!("oauth: the DPoP key of the token is missing; sending no token");
            return Ok(Vec::new());
        };
        let proof = self
            .with_nonces(key)
            .proof(method, url, Some(&token.access_token))?;
        Ok(vec![
            (
                "Authorization".to_owned(),
                format!("DPoP {}", token.access_token),
            ),
            ("DPoP".to_owned(), proof),
        ])
    }

    /// The key of `pem`, parsed once and kept while it stays the same.
    fn cached_key(&self, pem: &str) -> Option<Arc<DpopKey>> {
        let mut cache = lock(&self.dpop_key);
        if let Some((cached, key)) = cache.as_ref() {
            if cached == pem {
                return Some(Arc::clone(key));
            }
        }
        match DpopKey::from_pem(pem) {
            Ok(key) => {
                let key = Arc::new(key);
                *cache = Some((pem.to_owned(), Arc::clone(&key)));
                Some(key)
            }
            Err(e) => {
                log::warn!(
                    "oauth: the DPoP key of {} is unusable: {e}",
                    crate::redact::url(&self.resource)
                );
                None
            }
        }
    }

    fn with_nonces(&self, key: Arc<DpopKey>) -> Prover {
        Prover {
            key,
            nonces: Arc::clone(&self.nonces),
        }
    }
}
