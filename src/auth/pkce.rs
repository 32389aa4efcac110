//! PKCE (RFC 7636, S256 only) and the random values of a flow, from the OS random source.

use std::fmt;

use sha2::{Digest, Sha256};

use super::encoding::base64url;
use crate::error::{AuthError, AuthStep};

/// A random URL-safe string of `bytes` random bytes (43 characters for 32 bytes).
pub(crate) fn random_string(bytes: usize) -> Result<String, AuthError> {
    let mut buffer = vec![0u8; bytes];
    getrandom::getrandom(&mut buffer).map_err(|e| {
        AuthError::new(
            AuthStep::Authorization,
            format!("the operating system's random source failed: {e}"),
        )
    })?;
    Ok(base64url(&buffer))
}

/// The S256 code challenge of a verifier: `base64url(sha256(verifier))`.
pub(crate) fn challenge(verifier: &str) -> String {
    base64url(&Sha256::digest(verifier.as_bytes()))
}

/// A code verifier and its challenge.
pub(crate) struct Pkce {
    /// The secret sent with the token request.
    pub verifier: String,
    /// What the authorization request carries.
    pub challenge: String,
}

impl Pkce {
    /// A fresh verifier of 32 random bytes (43 characters, within RFC 7636's 43–128).
    pub fn new() -> Result<Pkce, AuthError> {
        let verifier = random_string(32)?;
        let challenge = challenge(&verifier);
        Ok(Pkce {
            verifier,
            challenge,
        })
    }
}

impl fmt::Debug for Pkce {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pkce")
            .field("verifier", &"<redacted>")
            .field("challenge", &self.challenge)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenge_matches_rfc7636_appendix_b() {
        assert_eq!(
            challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }

    #[test]
    fn verifiers_are_fresh_and_well_formed() {
        let a = Pkce::new().unwrap();
        let b = Pkce::new().unwrap();
        assert_ne!(a.verifier, b.verifier);
        assert_eq!(a.verifier.len(), 43);
        assert!(a
            .verifier
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_'));
        assert_eq!(a.challenge, challenge(&a.verifier));
        assert!(!format!("{a:?}").contains(&a.verifier));
    }
}
