//! DPoP (RFC 9449): sender-constrained tokens. A per-client P-256 key signs a proof for each
//! token request and each request to the MCP server, so a stolen token is useless without the
//! key; servers may demand a nonce, remembered per origin.
//!
//! The key itself needs the `oauth-jwt` feature (ES256); without it [`DpopKey`] cannot exist
//! and tokens stay Bearer tokens.
//!
//! Nonces are learnt from every answer of the token endpoint and from the MCP server's
//! `use_dpop_nonce` challenges (a nonce the MCP server rotates on a successful response is
//! picked up at its next challenge, one round trip later).

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};

use super::encoding::base64url;
use crate::error::AuthError;
#[cfg(not(feature = "oauth-jwt"))]
use crate::error::AuthStep;
use crate::sync::lock;
use crate::transport::http::url;

/// The most origins whose nonce is remembered; beyond it the map is cleared (a nonce that
/// is forgotten costs one more `use_dpop_nonce` round trip, nothing else).
const MAX_NONCES: usize = 64;

/// The `error` of a nonce challenge (RFC 9449 §8, §9).
pub(crate) const USE_DPOP_NONCE: &str = "use_dpop_nonce";

/// The signing algorithm of the proofs.
pub(crate) const ALGORITHM: &str = "ES256";

#[cfg(feature = "oauth-jwt")]
mod key;
#[cfg(feature = "oauth-jwt")]
pub(crate) use key::DpopKey;

/// Without ES256 there is no DPoP key: this type has no values.
#[cfg(not(feature = "oauth-jwt"))]
#[derive(Debug)]
pub(crate) enum DpopKey {}

#[cfg(not(feature = "oauth-jwt"))]
impl DpopKey {
    pub fn generate() -> Result<DpopKey, AuthError> {
        Err(AuthError::new(
            AuthStep::Token,
            "DPoP needs the `oauth-jwt` feature",
        ))
    }

    pub fn from_pem(_: &str) -> Result<DpopKey, AuthError> {
        DpopKey::generate()
    }

    pub fn to_pem(&self) -> Result<String, AuthError> {
        match *self {}
    }

    pub fn proof(
        &self,
        _: &str,
        _: &str,
        _: Option<&str>,
        _: Option<&str>,
    ) -> Result<String, AuthError> {
        match *self {}
    }
}

/// The server-provided nonces, per origin (RFC 9449 §8: a nonce is for the server that
/// issued it).
#[derive(Default)]
pub(crate) struct Nonces {
    by_origin: Mutex<HashMap<String, String>>,
}

impl Nonces {
    /// The nonce last provided by the origin of `target`.
    pub fn get(&self, target: &str) -> Option<String> {
        let origin = url::origin(target)?;
        lock(&self.by_origin).get(&origin).cloned()
    }

    /// Remembers `nonce` for the origin of `target`.
    pub fn remember(&self, target: &str, nonce: &str) {
        let Some(origin) = url::origin(target) else {
            return;
        };
        let mut map = lock(&self.by_origin);
        if map.len() >= MAX_NONCES && !map.contains_key(&origin) {
            map.clear();
        }
        map.insert(origin, nonce.to_owned());
    }
}

/// A key and the nonces it proves with: what a token request or a resource request needs.
#[derive(Clone)]
pub(crate) struct Prover {
    pub key: Arc<DpopKey>,
    pub nonces: Arc<Nonces>,
}

impl Prover {
    /// A proof for `method` on `target`, with the origin's nonce and, for a resource
    /// request, the access token's hash.
    pub fn proof(
        &self,
        method: &str,
        target: &str,
        access_token: Option<&str>,
    ) -> Result<String, AuthError> {
        let nonce = self.nonces.get(target);
        self.key
            .proof(method, &htu(target), nonce.as_deref(), access_token)
    }
}

impl fmt::Debug for Prover {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Prover(<redacted>)")
    }
}

/// The `htu` of a request: its URL without query and fragment (RFC 9449 §4.2).
pub(crate) fn htu(target: &str) -> String {
    let end = target.find(['?', '#']).unwrap_or(target.len());
    target[..end].to_owned()
}

#[cfg_attr(not(feature = "oauth-jwt"), allow(dead_code))]
/// The `ath` of an access token: base64url(SHA-256(token)) (RFC 9449 §4.2).
pub(crate) fn ath(access_token: &str) -> String {
    base64url(&Sha256::digest(access_token.as_bytes()))
}

#[cfg_attr(not(feature = "oauth-jwt"), allow(dead_code))]
/// The RFC 7638 thumbprint of a P-256 public key given by its coordinates (base64url): the
/// SHA-256 of the required members in lexicographic order, no whitespace.
pub(crate) fn thumbprint(x: &str, y: &str) -> String {
    let canonical = format!(r#"{{"crv":"P-256","kty":"EC","x":"{x}","y":"{y}"}}"#);
    base64url(&Sha256::digest(canonical.as_bytes()))
}

/// Whether an authorization server's metadata lets a client bind tokens with ES256 proofs.
pub(crate) fn supported(algorithms: Option<&[String]>) -> bool {
    algorithms.is_some_and(|a| a.iter().any(|alg| alg == ALGORITHM))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ath_and_thumbprint_match_rfc_9449_examples() {
        // RFC 9449 §7.1: the access token and its `ath`.
        assert_eq!(
            ath("Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU"),
            "fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo"
        );
        // RFC 9449 §4.1's public key and the `jkt` of §6.1.
        assert_eq!(
            thumbprint(
                "l8tFrhx-34tV3hRICRDY9zCkDlpBhF42UQUfWVAWBFs",
                "9VE4jf_Ok_o64zbTTlcuNJajHmt6v9TDVrU0CdvGRDA"
            ),
            "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"
        );
    }

    #[test]
    fn htu_drops_query_and_fragment() {
        assert_eq!(
            htu("https://server.example.com/token"),
            "https://server.example.com/token"
        );
        assert_eq!(
            htu("https://r.example/mcp?api_key=1#frag"),
            "https://r.example/mcp"
        );
        assert_eq!(htu("https://r.example/mcp#f?x"), "https://r.example/mcp");
    }

    #[test]
    fn nonces_are_per_origin_and_bounded() {
        let nonces = Nonces::default();
        nonces.remember("http://as.example:9/token", "n1");
        assert_eq!(
            nonces.get("http://as.example:9/other").as_deref(),
            Some("n1")
        );
        assert_eq!(nonces.get("http://as.example:10/token"), None);
        assert_eq!(nonces.get("https://as.example:9/token"), None);
        nonces.remember("http://as.example:9/x", "n2");
        assert_eq!(
            nonces.get("http://as.example:9/token").as_deref(),
            Some("n2")
        );
        for port in 0..(MAX_NONCES as u16 * 2) {
            nonces.remember(&format!("http://h:{port}/"), "n");
        }
        assert!(lock(&nonces.by_origin).len() <= MAX_NONCES);
    }

    #[test]
    fn only_es256_is_used() {
        let list = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(supported(Some(&list(&["RS256", "ES256"]))));
        assert!(!supported(Some(&list(&["RS256"]))));
        assert!(!supported(Some(&[])));
        assert!(!supported(None));
    }
}
