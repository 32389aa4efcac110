//! Token endpoint requests: client authentication, the grants' common request, and reading
//! the token response (RFC 6749 §5).

use std::fmt;

use serde_json::Value;

use super::dpop::{Prover, USE_DPOP_NONCE};
use super::encoding::basic_auth;
use super::http::{Answer, Http};
use super::metadata::AuthorizationServerMetadata;
use super::store::{unix_now, ClientRegistration, TokenSet};
use super::urls;
use crate::error::{AuthError, AuthStep};

/// The client assertion type of RFC 7523 §2.2.
pub(crate) const JWT_BEARER_ASSERTION: &str =
    "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// How a client authenticates at the token endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AuthMethod {
    /// A public client: `client_id` in the body only.
    None,
    /// HTTP Basic with the form-encoded id and secret.
    ClientSecretBasic,
    /// `client_id` and `client_secret` in the body.
    ClientSecretPost,
    /// A signed JWT assertion (RFC 7523).
    PrivateKeyJwt,
}

impl AuthMethod {
    /// The registered name of the method.
    pub fn as_str(self) -> &'static str {
        match self {
            AuthMethod::None => "none",
            AuthMethod::ClientSecretBasic => "client_secret_basic",
            AuthMethod::ClientSecretPost => "client_secret_post",
            AuthMethod::PrivateKeyJwt => "private_key_jwt",
        }
    }

    fn parse(name: &str) -> Option<AuthMethod> {
        [
            AuthMethod::None,
            AuthMethod::ClientSecretBasic,
            AuthMethod::ClientSecretPost,
            AuthMethod::PrivateKeyJwt,
        ]
        .into_iter()
        .find(|m| m.as_str() == name)
    }

    /// The method to use: the registered one when known, else what the server advertises
    /// for the credentials at hand (a key, a secret, or nothing).
    pub fn choose(
        registered: Option<&str>,
        has_secret: bool,
        has_key: bool,
        metadata: &AuthorizationServerMetadata,
    ) -> AuthMethod {
        let usable = |m: AuthMethod| match m {
            AuthMethod::ClientSecretBasic | AuthMethod::ClientSecretPost => has_secret,
            AuthMethod::PrivateKeyJwt => has_key,
            AuthMethod::None => true,
        };
        if let Some(method) = registered
            .and_then(AuthMethod::parse)
            .filter(|m| usable(*m))
        {
            return method;
        }
        if has_key {
            return AuthMethod::PrivateKeyJwt;
        }
        if !has_secret {
            return AuthMethod::None;
        }
        if !metadata.supports_auth_method("client_secret_basic")
            && metadata.supports_auth_method("client_secret_post")
        {
            AuthMethod::ClientSecretPost
        } else {
            AuthMethod::ClientSecretBasic
        }
    }
}

/// A client's credentials for one token request.
#[derive(Clone)]
pub(crate) struct ClientAuth {
    pub client_id: String,
    pub secret: Option<String>,
    pub method: AuthMethod,
    /// A fresh signed assertion, for [`AuthMethod::PrivateKeyJwt`].
    pub assertion: Option<String>,
    /// The DPoP key that proves possession at the token endpoint, binding the tokens to it.
    pub dpop: Option<Prover>,
}

impl ClientAuth {
    /// The credentials of a registration, with its method.
    pub fn new(client: &ClientRegistration, method: AuthMethod) -> ClientAuth {
        ClientAuth {
            client_id: client.client_id.clone(),
            secret: client.client_secret.clone(),
            method,
            assertion: None,
            dpop: None,
        }
    }

    /// Adds the body parameters of the method to `params`; returns the `Authorization`
    /// header of HTTP Basic.
    pub(crate) fn apply<'a>(&'a self, params: &mut Vec<(&'a str, &'a str)>) -> Option<String> {
        let secret = self.secret.as_deref().unwrap_or_default();
        match self.method {
            AuthMethod::ClientSecretBasic => return Some(basic_auth(&self.client_id, secret)),
            AuthMethod::ClientSecretPost => {
                params.push(("client_id", &self.client_id));
                params.push(("client_secret", secret));
            }
            AuthMethod::None => params.push(("client_id", &self.client_id)),
            AuthMethod::PrivateKeyJwt => {
                params.push(("client_id", &self.client_id));
                params.push(("client_assertion_type", JWT_BEARER_ASSERTION));
                params.push((
                    "client_assertion",
                    self.assertion.as_deref().unwrap_or_default(),
                ));
            }
        }
        None
    }
}

impl fmt::Debug for ClientAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientAuth")
            .field("client_id", &self.client_id)
            .field("method", &self.method)
            .field("dpop", &self.dpop.is_some())
            .finish_non_exhaustive()
    }
}

/// Posts a grant to `endpoint` with the client's authentication and reads the tokens
/// (`requested_scope` stands in for an unnamed granted scope). With DPoP, a `use_dpop_nonce`
/// refusal is repeated once with the server's nonce (RFC 9449 §8).
pub(crate) fn request<'a>(
    http: &Http,
    endpoint: &str,
    mut params: Vec<(&'a str, &'a str)>,
    client: Option<&'a ClientAuth>,
    requested_scope: Option<&str>,
) -> Result<TokenSet, AuthError> {
    urls::check_endpoint(AuthStep::Token, "token endpoint", endpoint)?;
    let grant = params
        .iter()
        .find(|(n, _)| *n == "grant_type")
        .map(|(_, v)| (*v).to_owned())
        .unwrap_or_default();
    let authorization = client.and_then(|c| c.apply(&mut params));
    let prover = client.and_then(|c| c.dpop.as_ref());
    log::debug!(
        "oauth: {grant} grant at {} ({}{})",
        crate::redact::url(endpoint),
        client.map_or("no client authentication", |c| c.method.as_str()),
        if prover.is_some() { ", DPoP" } else { "" }
    );
    let mut nonce_retried = false;
    let answer = loop {
        let proof = prover
            .map(|p| p.proof("POST", endpoint, None))
            .transpose()?;
        let answer = http.post_form(
            AuthStep::Token,
            endpoint,
            &params,
            authorization.as_deref(),
            proof.as_deref(),
        )?;
        let Some(prover) = prover else {
            break answer;
        };
        if let Some(nonce) = &answer.dpop_nonce {
            prover.nonces.remember(endpoint, nonce);
        }
        let asks_nonce = !answer.is_success()
            && answer.dpop_nonce.is_some()
            && answer.json().and_then(|j| j.get("error").cloned())
                == Some(Value::from(USE_DPOP_NONCE));
        if !asks_nonce || nonce_retried {
            break answer;
        }
        log::debug!(
            "oauth: {} asks for a DPoP nonce; repeating the request once",
            crate::redact::url(endpoint)
        );
        nonce_retried = true;
    };
    let json = token_json(&answer, &grant)?;
    let token = parse_token(&answer, &json, prover.is_some())?;
    Ok(TokenSet {
        scope: token.scope.or_else(|| requested_scope.map(str::to_owned)),
        ..token
    })
}

/// The JSON body of a successful token response.
pub(crate) fn token_json(answer: &Answer, grant: &str) -> Result<Value, AuthError> {
    if !answer.is_success() {
        return Err(answer.error(
            AuthStep::Token,
            format!("the token endpoint refused the {grant} grant"),
        ));
    }
    answer
        .json()
        .filter(Value::is_object)
        .ok_or_else(|| answer.error(AuthStep::Token, "the token response is not a JSON object"))
}

/// Reads an access token response: `access_token` is required and `token_type` must be
/// `Bearer`, or `DPoP` when the request carried a proof (`dpop`).
fn parse_token(answer: &Answer, json: &Value, dpop: bool) -> Result<TokenSet, AuthError> {
    let text = |name: &str| json.get(name).and_then(Value::as_str).map(str::to_owned);
    let Some(access_token) = text("access_token").filter(|t| !t.is_empty()) else {
        return Err(answer.error(AuthStep::Token, "the token response has no access_token"));
    };
    let token_type = text("token_type").unwrap_or_default();
    let bound = dpop && token_type.eq_ignore_ascii_case("dpop");
    if !token_type.eq_ignore_ascii_case("bearer") && !bound {
        return Err(answer.error(
            AuthStep::Token,
            format!("the token type is `{token_type}`, not Bearer"),
        ));
    }
    // Some servers send expires_in as a string.
    let expires_in = match json.get("expires_in") {
        Some(Value::Number(n)) => n.as_u64().or_else(|| n.as_f64().map(|f| f.max(0.0) as u64)),
        Some(Value::String(s)) => s.trim().parse().ok(),
        _ => None,
    };
    Ok(TokenSet {
        access_token,
        refresh_token: text("refresh_token").filter(|t| !t.is_empty()),
        expires_at: expires_in.map(|secs| unix_now().saturating_add(secs)),
        scope: text("scope").filter(|s| !s.trim().is_empty()),
        token_type: bound.then(|| "DPoP".to_owned()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metadata(methods: Option<&[&str]>) -> AuthorizationServerMetadata {
        AuthorizationServerMetadata {
            token_endpoint_auth_methods_supported: methods
                .map(|m| m.iter().map(|s| s.to_string()).collect()),
            ..AuthorizationServerMetadata::default()
        }
    }

    #[test]
    fn the_method_follows_registration_then_advertisement() {
        let post_only = metadata(Some(&["client_secret_post"]));
        let basic_only = metadata(Some(&["client_secret_basic"]));
        let choose = AuthMethod::choose;
        assert_eq!(
            choose(Some("client_secret_post"), true, false, &basic_only),
            AuthMethod::ClientSecretPost
        );
        assert_eq!(
            choose(Some("client_secret_basic"), false, false, &basic_only),
            AuthMethod::None
        );
        assert_eq!(
            choose(None, true, false, &post_only),
            AuthMethod::ClientSecretPost
        );
        assert_eq!(
            choose(None, true, false, &basic_only),
            AuthMethod::ClientSecretBasic
        );
        assert_eq!(
            choose(None, true, false, &metadata(None)),
            AuthMethod::ClientSecretBasic
        );
        assert_eq!(choose(None, false, false, &basic_only), AuthMethod::None);
        assert_eq!(
            choose(None, false, true, &basic_only),
            AuthMethod::PrivateKeyJwt
        );
    }

    #[test]
    fn token_responses_need_a_bearer_token() {
        let answer = |body: &str| Answer {
            url: "http://as/token".into(),
            status: 200,
            location: None,
            dpop_nonce: None,
            body: body.into(),
        };
        let ok =
            answer(r#"{"access_token":"t","token_type":"bearer","expires_in":"60","scope":""}"#);
        let token = parse_token(&ok, &ok.json().unwrap(), false).unwrap();
        assert_eq!(token.access_token, "t");
        assert_eq!(token.scope, None);
        assert!(token.expires_at.is_some_and(|at| at >= unix_now() + 59));
        let mac = answer(r#"{"access_token":"t","token_type":"mac"}"#);
        assert!(parse_token(&mac, &mac.json().unwrap(), false).is_err());
        let empty = answer(r#"{"token_type":"Bearer"}"#);
        assert!(parse_token(&empty, &empty.json().unwrap(), false).is_err());
        let bound = answer(r#"{"access_token":"t","token_type":"DPoP"}"#);
        let json = bound.json().unwrap();
        assert!(
            parse_token(&bound, &json, false).is_err(),
            "a DPoP token is only taken when a proof was sent"
        );
        assert!(parse_token(&bound, &json, true).unwrap().is_dpop());
        assert!(!parse_token(&ok, &ok.json().unwrap(), true)
            .unwrap()
            .is_dpop());
    }
}
