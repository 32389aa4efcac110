//! The DPoP key pair (P-256) and the proofs it signs (`dpop+jwt`, ES256).

use std::fmt;

use p256::ecdsa::signature::Signer;
use p256::ecdsa::{Signature, SigningKey};
use p256::pkcs8::{EncodePrivateKey, LineEnding};
use serde_json::{json, Map, Value};

use super::{ath, thumbprint, ALGORITHM};
use crate::auth::encoding::base64url;
use crate::auth::pkce::random_string;
use crate::auth::store::unix_now;
use crate::error::{AuthError, AuthStep};

/// A DPoP private key. `Debug` shows only its public thumbprint.
pub(crate) struct DpopKey {
    key: SigningKey,
}

impl DpopKey {
    /// A new key from the operating system's random source.
    pub fn generate() -> Result<DpopKey, AuthError> {
        // A random scalar is valid unless it is zero or not below the group order, which
        // happens with probability ~2^-32; a few draws always suffice.
        for _ in 0..8 {
            let mut bytes = [0u8; 32];
            getrandom::getrandom(&mut bytes).map_err(|e| {
                AuthError::new(
                    AuthStep::Token,
                    format!("the operating system's random source failed: {e}"),
                )
            })?;
            if let Ok(key) = SigningKey::from_bytes(&bytes.into()) {
                return Ok(DpopKey { key });
            }
        }
        Err(AuthError::new(
            AuthStep::Token,
            "cannot draw a DPoP key from the random source",
        ))
    }

    /// A key from PKCS#8 (or SEC1) PEM.
    pub fn from_pem(pem: &str) -> Result<DpopKey, AuthError> {
        crate::auth::jwt::parse_key(pem).map(|key| DpopKey { key })
    }

    /// The key as PKCS#8 PEM, to keep it with the tokens it binds.
    pub fn to_pem(&self) -> Result<String, AuthError> {
        self.key
            .to_pkcs8_pem(LineEnding::LF)
            .map(|pem| pem.to_string())
            .map_err(|_| AuthError::new(AuthStep::Token, "cannot encode the DPoP key"))
    }

    /// The public key as a JWK (RFC 7517): `kty`, `crv`, `x`, `y`, never `d`.
    pub fn public_jwk(&self) -> Value {
        let (x, y) = self.coordinates();
        json!({"kty": "EC", "crv": "P-256", "x": x, "y": y})
    }

    /// The RFC 7638 thumbprint of the public key (the `jkt` a bound token carries).
    pub fn thumbprint(&self) -> String {
        let (x, y) = self.coordinates();
        thumbprint(&x, &y)
    }

    /// A DPoP proof (RFC 9449 §4.2) for `method` on `htu` (already without query and fragment),
    /// with the server's `nonce` if any and `ath` when presenting `access_token`.
    pub fn proof(
        &self,
        method: &str,
        htu: &str,
        nonce: Option<&str>,
        access_token: Option<&str>,
    ) -> Result<String, AuthError> {
        let header = json!({"typ": "dpop+jwt", "alg": ALGORITHM, "jwk": self.public_jwk()});
        let mut claims = Map::new();
        claims.insert("jti".into(), random_string(16)?.into());
        claims.insert("htm".into(), method.into());
        claims.insert("htu".into(), htu.into());
        claims.insert("iat".into(), unix_now().into());
        if let Some(nonce) = nonce {
            claims.insert("nonce".into(), nonce.into());
        }
        if let Some(token) = access_token {
            claims.insert("ath".into(), ath(token).into());
        }
        let signing_input = format!(
            "{}.{}",
            base64url(header.to_string().as_bytes()),
            base64url(Value::Object(claims).to_string().as_bytes())
        );
        let signature: Signature = self.key.sign(signing_input.as_bytes());
        Ok(format!(
            "{signing_input}.{}",
            base64url(&signature.to_bytes())
        ))
    }

    fn coordinates(&self) -> (String, String) {
        let point = self.key.verifying_key().to_encoded_point(false);
        let coordinate = |c: Option<&p256::FieldBytes>| c.map_or(String::new(), |b| base64url(b));
        (coordinate(point.x()), coordinate(point.y()))
    }
}

impl fmt::Debug for DpopKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DpopKey")
            .field("thumbprint", &self.thumbprint())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use base64::Engine;
    use p256::ecdsa::signature::Verifier;
    use p256::ecdsa::VerifyingKey;
    use p256::EncodedPoint;

    fn decode(part: &str) -> Value {
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).unwrap()).unwrap()
    }

    /// Checks a proof the way RFC 9449 §4.3 has servers check it, and returns its claims.
    fn verify(proof: &str) -> Value {
        let parts: Vec<&str> = proof.split('.').collect();
        assert_eq!(parts.len(), 3, "a JWS in compact serialization");
        let header = decode(parts[0]);
        // The header of RFC 9449 §4.1's example: typ, alg, and the public key only.
        assert_eq!(header["typ"], "dpop+jwt");
        assert_eq!(header["alg"], "ES256");
        let jwk = &header["jwk"];
        assert_eq!(jwk["kty"], "EC");
        assert_eq!(jwk["crv"], "P-256");
        assert!(jwk.get("d").is_none(), "no private key in the proof");
        let coordinate = |name: &str| URL_SAFE_NO_PAD.decode(jwk[name].as_str().unwrap()).unwrap();
        let point = EncodedPoint::from_affine_coordinates(
            coordinate("x").as_slice().into(),
            coordinate("y").as_slice().into(),
            false,
        );
        let key = VerifyingKey::from_encoded_point(&point).unwrap();
        let signature = Signature::from_slice(&URL_SAFE_NO_PAD.decode(parts[2]).unwrap()).unwrap();
        key.verify(format!("{}.{}", parts[0], parts[1]).as_bytes(), &signature)
            .expect("the signature verifies with the embedded key");
        decode(parts[1])
    }

    #[test]
    fn proofs_have_the_claims_of_rfc_9449() {
        let key = DpopKey::generate().unwrap();
        // RFC 9449 §4.1: a token request proof.
        let proof = key
            .proof("POST", "https://server.example.com/token", None, None)
            .unwrap();
        let claims = verify(&proof);
        assert_eq!(claims["htm"], "POST");
        assert_eq!(claims["htu"], "https://server.example.com/token");
        assert!(claims["iat"].as_u64().unwrap() + 5 >= unix_now());
        assert!(claims["jti"].as_str().is_some_and(|j| j.len() >= 16));
        assert!(claims.get("ath").is_none() && claims.get("nonce").is_none());
        // RFC 9449 §7.1: a resource request proof carries the token's hash, and §8 the nonce.
        let token = "Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU";
        let proof = key
            .proof(
                "GET",
                "https://resource.example.org/protectedresource",
                Some("eyJ7S_zG.eyJH0-Z.HX4w-7v"),
                Some(token),
            )
            .unwrap();
        let claims = verify(&proof);
        assert_eq!(claims["htm"], "GET");
        assert_eq!(claims["ath"], "fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo");
        assert_eq!(claims["nonce"], "eyJ7S_zG.eyJH0-Z.HX4w-7v");
        let again = key
            .proof(
                "GET",
                "https://resource.example.org/protectedresource",
                None,
                Some(token),
            )
            .unwrap();
        assert_ne!(
            verify(&again)["jti"],
            claims["jti"],
            "every proof has its own jti"
        );
    }

    #[test]
    fn the_key_survives_pem_and_its_thumbprint_is_rfc_7638() {
        let key = DpopKey::generate().unwrap();
        let pem = key.to_pem().unwrap();
        let back = DpopKey::from_pem(&pem).unwrap();
        assert_eq!(back.thumbprint(), key.thumbprint());
        let jwk = key.public_jwk();
        assert_eq!(
            key.thumbprint(),
            thumbprint(jwk["x"].as_str().unwrap(), jwk["y"].as_str().unwrap())
        );
        assert_ne!(DpopKey::generate().unwrap().thumbprint(), key.thumbprint());
        assert!(!format!("{key:?}").contains(&pem));
    }
}
