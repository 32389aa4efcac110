//! ES256 client assertions for `private_key_jwt` (RFC 7523 §2.2), signed with a P-256 key.

use p256::ecdsa::signature::Signer;
use p256::ecdsa::{Signature, SigningKey};
use p256::pkcs8::DecodePrivateKey;
use serde_json::json;

use super::encoding::base64url;
use super::pkce::random_string;
use super::store::unix_now;
use crate::error::{AuthError, AuthStep};

/// How long an assertion is valid.
const LIFETIME_SECS: u64 = 300;

/// A signed assertion of `client_id` (as `iss` and `sub`) for the authorization server
/// `audience` (its issuer), with `iat`, `exp` and a random `jti`.
pub(crate) fn client_assertion(
    pem: &str,
    client_id: &str,
    audience: &str,
) -> Result<String, AuthError> {
    let key = parse_key(pem)?;
    let now = unix_now();
    let header = json!({"alg": "ES256", "typ": "JWT"});
    let claims = json!({
        "iss": client_id,
        "sub": client_id,
        "aud": audience,
        "iat": now,
        "exp": now + LIFETIME_SECS,
        "jti": random_string(16)?,
    });
    let signing_input = format!(
        "{}.{}",
        base64url(header.to_string().as_bytes()),
        base64url(claims.to_string().as_bytes())
    );
    let signature: Signature = key.sign(signing_input.as_bytes());
    Ok(format!(
        "{signing_input}.{}",
        base64url(&signature.to_bytes())
    ))
}

pub(crate) fn parse_key(pem: &str) -> Result<SigningKey, AuthError> {
    let pem = pem.trim();
    if let Ok(key) = SigningKey::from_pkcs8_pem(pem) {
        return Ok(key);
    }
    p256::SecretKey::from_sec1_pem(pem)
        .map(SigningKey::from)
        .map_err(|_| {
            AuthError::new(
                AuthStep::Token,
                "the private key is not a P-256 key in PKCS#8 or SEC1 PEM (ES256 needs one)",
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use base64::Engine;
    use p256::ecdsa::signature::Verifier;
    use p256::ecdsa::VerifyingKey;
    use p256::pkcs8::{EncodePrivateKey, LineEnding};
    use serde_json::Value;

    #[test]
    fn assertions_are_es256_jwts_with_the_client_claims() {
        let key = SigningKey::from_bytes(&[7u8; 32].into()).unwrap();
        let pem = key.to_pkcs8_pem(LineEnding::LF).unwrap();
        let jwt = client_assertion(&pem, "client-1", "https://as.example").unwrap();
        let parts: Vec<&str> = jwt.split('.').collect();
        assert_eq!(parts.len(), 3);
        let decode = |s: &str| URL_SAFE_NO_PAD.decode(s).unwrap();
        let header: Value = serde_json::from_slice(&decode(parts[0])).unwrap();
        assert_eq!(header["alg"], "ES256");
        let claims: Value = serde_json::from_slice(&decode(parts[1])).unwrap();
        assert_eq!(claims["iss"], "client-1");
        assert_eq!(claims["sub"], "client-1");
        assert_eq!(claims["aud"], "https://as.example");
        assert!(claims["exp"].as_u64() > claims["iat"].as_u64());
        assert!(claims["jti"].as_str().is_some_and(|j| !j.is_empty()));
        let signature = Signature::from_slice(&decode(parts[2])).unwrap();
        let input = format!("{}.{}", parts[0], parts[1]);
        VerifyingKey::from(&key)
            .verify(input.as_bytes(), &signature)
            .unwrap();
        let other = client_assertion(&pem, "client-1", "https://as.example").unwrap();
        assert_ne!(jwt, other, "every assertion has its own jti");
        assert!(client_assertion("not a key", "c", "a").is_err());
    }
}
