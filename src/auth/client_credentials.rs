//! Grants without a user: `client_credentials` (the MCP client-credentials extension) and
//! cross-app access (an RFC 8693 token exchange at the identity provider, then an RFC 7523
//! JWT-bearer grant at the authorization server).

use std::fmt;

use serde_json::Value;

use super::discovery::Discovered;
use super::encoding::basic_auth;
use super::http::Http;
use super::store::TokenSet;
use super::tokens::{self, ClientAuth};
use super::urls;
use super::workload;
use crate::error::{AuthError, AuthStep};

const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const ID_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:id_token";
const ID_JAG_TYPE: &str = "urn:ietf:params:oauth:token-type:id-jag";

/// The identity provider side of enterprise-managed authorization (cross-app access): where
/// the user's ID token is exchanged for an identity assertion authorization grant (ID-JAG)
/// for the MCP server's authorization server. The [module docs](super) describe the flow.
///
/// See the example on [`OAuthConfig::cross_app_access`](super::OAuthConfig::cross_app_access).
#[derive(Clone)]
pub struct CrossAppAccess {
    idp_token_endpoint: String,
    idp_client_id: String,
    idp_client_secret: Option<String>,
    id_token: String,
}

impl CrossAppAccess {
    /// Exchanges `id_token` (from the user's single sign-on) at the identity provider's
    /// token endpoint, as the client `idp_client_id` there.
    ///
    /// See the example on [`OAuthConfig::cross_app_access`](super::OAuthConfig::cross_app_access).
    pub fn new(
        idp_token_endpoint: impl Into<String>,
        idp_client_id: impl Into<String>,
        id_token: impl Into<String>,
    ) -> CrossAppAccess {
        CrossAppAccess {
            idp_token_endpoint: idp_token_endpoint.into(),
            idp_client_id: idp_client_id.into(),
            idp_client_secret: None,
            id_token: id_token.into(),
        }
    }

    /// The client's secret at the identity provider (HTTP Basic); without it the client id
    /// goes in the body.
    ///
    /// See the example on [`OAuthConfig::cross_app_access`](super::OAuthConfig::cross_app_access).
    pub fn idp_client_secret(mut self, secret: impl Into<String>) -> CrossAppAccess {
        self.idp_client_secret = Some(secret.into());
        self
    }

    /// The identity provider's token endpoint.
    ///
    /// See the example on [`OAuthConfig::cross_app_access`](super::OAuthConfig::cross_app_access).
    pub fn get_idp_token_endpoint(&self) -> &str {
        &self.idp_token_endpoint
    }

    /// The client id at the identity provider.
    ///
    /// See the example on [`OAuthConfig::cross_app_access`](super::OAuthConfig::cross_app_access).
    pub fn get_idp_client_id(&self) -> &str {
        &self.idp_client_id
    }
}

impl fmt::Debug for CrossAppAccess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CrossAppAccess")
            .field(
                "idp_token_endpoint",
                &crate::redact::url(&self.idp_token_endpoint),
            )
            .field("idp_client_id", &self.idp_client_id)
            .field(
                "idp_client_secret",
                &self.idp_client_secret.as_ref().map(|_| "<redacted>"),
            )
            .field("id_token", &"<redacted>")
            .finish()
    }
}

/// The `client_credentials` grant for the resource `discovered` describes.
pub(crate) fn client_credentials(
    http: &Http,
    discovered: &Discovered,
    client: &ClientAuth,
    scope: Option<&str>,
) -> Result<TokenSet, AuthError> {
    let endpoint = token_endpoint(discovered)?;
    let mut params = vec![
        ("grant_type", "client_credentials"),
        ("resource", discovered.resource.as_str()),
    ];
    if let Some(scope) = scope {
        params.push(("scope", scope));
    }
    tokens::request(http, endpoint, params, Some(client), scope)
}

/// Cross-app access: the token exchange at the identity provider, then the JWT-bearer grant
/// at the authorization server with the client's credentials there.
pub(crate) fn cross_app_access(
    http: &Http,
    discovered: &Discovered,
    access: &CrossAppAccess,
    client: &ClientAuth,
    scope: Option<&str>,
) -> Result<TokenSet, AuthError> {
    let endpoint = token_endpoint(discovered)?;
    let assertion = identity_assertion(http, discovered, access, scope)?;
    workload::grant(http, endpoint, discovered, &assertion, client, scope)
}

/// RFC 8693: exchanges the ID token for an ID-JAG addressed to the authorization server.
fn identity_assertion(
    http: &Http,
    discovered: &Discovered,
    access: &CrossAppAccess,
    scope: Option<&str>,
) -> Result<String, AuthError> {
    let endpoint = access.idp_token_endpoint.as_str();
    urls::check_endpoint(
        AuthStep::Token,
        "identity provider token endpoint",
        endpoint,
    )?;
    let mut params = vec![
        ("grant_type", TOKEN_EXCHANGE),
        ("requested_token_type", ID_JAG_TYPE),
        ("audience", discovered.issuer.as_str()),
        ("resource", discovered.resource.as_str()),
        ("subject_token", access.id_token.as_str()),
        ("subject_token_type", ID_TOKEN_TYPE),
    ];
    if let Some(scope) = scope {
        params.push(("scope", scope));
    }
    let authorization = match &access.idp_client_secret {
        Some(secret) => Some(basic_auth(&access.idp_client_id, secret)),
        None => {
            params.push(("client_id", access.idp_client_id.as_str()));
            None
        }
    };
    log::debug!(
        "oauth: token exchange at {} for an identity assertion grant",
        crate::redact::url(endpoint)
    );
    let answer = http.post_form(
        AuthStep::Token,
        endpoint,
        &params,
        authorization.as_deref(),
        None,
    )?;
    let json = tokens::token_json(&answer, "token-exchange")?;
    let issued_type = json.get("issued_token_type").and_then(Value::as_str);
    if issued_type.is_some_and(|t| t != ID_JAG_TYPE) {
        return Err(answer.error(
            AuthStep::Token,
            format!(
                "the identity provider issued a `{}`, not an ID-JAG",
                issued_type.unwrap_or_default()
            ),
        ));
    }
    json.get("access_token")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .ok_or_else(|| {
            answer.error(
                AuthStep::Token,
                "the token exchange response has no access_token",
            )
        })
}

pub(super) fn token_endpoint(discovered: &Discovered) -> Result<&str, AuthError> {
    discovered
        .metadata
        .token_endpoint
        .as_deref()
        .ok_or_else(|| {
            AuthError::new(
                AuthStep::Discovery,
                format!("{} has no token_endpoint", discovered.issuer),
            )
        })
}
