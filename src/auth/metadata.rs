//! The metadata documents of discovery: protected resource metadata (RFC 9728) and
//! authorization server metadata (RFC 8414, OpenID Connect discovery).

use serde::{Deserialize, Serialize};

/// Protected resource metadata (RFC 9728 §2), the members a client uses.
///
/// See the example in the [`auth`](crate::auth) module.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ProtectedResourceMetadata {
    /// The resource identifier; it must name the server it was fetched for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// The issuers of the authorization servers that protect the resource.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub authorization_servers: Vec<String>,
    /// The scopes the resource understands.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
}

/// Authorization server metadata (RFC 8414 §2, OpenID Connect Discovery §3), the members a
/// client uses.
///
/// See the example in the [`auth`](crate::auth) module.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct AuthorizationServerMetadata {
    /// The issuer identifier.
    #[serde(default)]
    pub issuer: String,
    /// Where the user is sent to authorize.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_endpoint: Option<String>,
    /// Where codes, refresh tokens and other grants are exchanged for tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint: Option<String>,
    /// Dynamic client registration (RFC 7591), when offered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registration_endpoint: Option<String>,
    /// The device authorization endpoint (RFC 8628 §4), when the server offers the device
    /// authorization grant: a sign-in finished on another device, without a browser here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_authorization_endpoint: Option<String>,
    /// Where tokens are revoked (RFC 7009), when the server offers it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revocation_endpoint: Option<String>,
    /// The scopes the server knows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
    /// The grant types the server supports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant_types_supported: Option<Vec<String>>,
    /// The PKCE methods; a client must not proceed without it (MCP 2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_challenge_methods_supported: Option<Vec<String>>,
    /// How clients may authenticate at the token endpoint (RFC 8414 default:
    /// `client_secret_basic`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    /// Whether an https URL of a client ID metadata document may be used as `client_id`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id_metadata_document_supported: Option<bool>,
    /// Whether authorization responses carry `iss` (RFC 9207).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_response_iss_parameter_supported: Option<bool>,
    /// The algorithms the server accepts for DPoP proofs (RFC 9449 §5.1); its presence says
    /// the server binds tokens to a DPoP key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_signing_alg_values_supported: Option<Vec<String>>,
}

impl AuthorizationServerMetadata {
    /// Metadata with just the three endpoints, for servers that publish none (the defaults of
    /// the 2025-03-26 revision).
    pub(crate) fn fallback(base: &str) -> AuthorizationServerMetadata {
        AuthorizationServerMetadata {
            issuer: base.to_owned(),
            authorization_endpoint: Some(format!("{base}/authorize")),
            token_endpoint: Some(format!("{base}/token")),
            registration_endpoint: Some(format!("{base}/register")),
            ..AuthorizationServerMetadata::default()
        }
    }

    /// True when `scope` is listed in `scopes_supported`.
    pub(crate) fn supports_scope(&self, scope: &str) -> bool {
        self.scopes_supported
            .as_ref()
            .is_some_and(|s| s.iter().any(|x| x == scope))
    }

    /// True when the server may issue refresh tokens: it lists the `refresh_token` grant or
    /// the `offline_access` scope.
    pub(crate) fn supports_offline_access(&self) -> bool {
        self.supports_scope("offline_access")
            || self
                .grant_types_supported
                .as_ref()
                .is_some_and(|g| g.iter().any(|x| x == "refresh_token"))
    }

    /// True when `method` may be used at the token endpoint; an absent list means
    /// `client_secret_basic` only (RFC 8414 §2).
    pub(crate) fn supports_auth_method(&self, method: &str) -> bool {
        match &self.token_endpoint_auth_methods_supported {
            Some(methods) => methods.iter().any(|m| m == method),
            None => method == "client_secret_basic",
        }
    }
}
