//! The client's identity at an authorization server, in the spec's order: pre-registered
//! credentials, a client ID metadata document URL, then dynamic client registration.

use serde_json::{json, Value};

use super::config::OAuthConfig;
use super::device::DEVICE_CODE_GRANT;
use super::discovery::Discovered;
use super::http::Http;
use super::metadata::AuthorizationServerMetadata;
use super::store::ClientRegistration;
use super::urls;
use crate::error::{AuthError, AuthStep};

/// How the user takes part in the grant the identity is for, which decides what a registration
/// asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UserPart<'a> {
    /// No user (client credentials and the other grants of the client's own).
    None,
    /// The authorization code flow, redirected to this URI.
    Redirect(&'a str),
    /// The device authorization grant: no redirect at all.
    Device,
}

impl UserPart<'_> {
    fn redirect_uri(self) -> Option<String> {
        match self {
            UserPart::Redirect(uri) => Some(uri.to_owned()),
            UserPart::None | UserPart::Device => None,
        }
    }
}

/// The client identity for the authorization server `discovered` names: `stored` is reused while
/// its secret is valid and it was made for the same user part (the same redirect URI; none for
/// the device grant).
pub(crate) fn client_identity(
    http: &Http,
    config: &OAuthConfig,
    discovered: &Discovered,
    stored: Option<&ClientRegistration>,
    user: UserPart<'_>,
) -> Result<ClientRegistration, AuthError> {
    let redirect_uri = user.redirect_uri();
    let redirect_uri = redirect_uri.as_deref();
    if let Some(client_id) = config.client_id.as_deref() {
        return Ok(ClientRegistration {
            redirect_uri: redirect_uri.map(str::to_owned),
            ..ClientRegistration::new(client_id, config.client_secret.clone())
        });
    }
    if let Some(previous) = stored {
        let same_redirect = match user {
            UserPart::None => true,
            UserPart::Redirect(uri) => previous.redirect_uri.as_deref() == Some(uri),
            // A registration made for the code flow may not be allowed the device grant.
            UserPart::Device => previous.redirect_uri.is_none(),
        };
        if same_redirect && !previous.is_expired() {
            log::debug!(
                "oauth: reusing the client registration at {}",
                crate::redact::url(&discovered.issuer)
            );
            return Ok(previous.clone());
        }
    }
    let metadata = &discovered.metadata;
    if let Some(document) = config.client_metadata_url.as_deref() {
        if metadata.client_id_metadata_document_supported == Some(true) {
            log::debug!("oauth: using the client ID metadata document {document}");
            return Ok(ClientRegistration {
                token_endpoint_auth_method: Some("none".into()),
                redirect_uri: redirect_uri.map(str::to_owned),
                ..ClientRegistration::new(document, None)
            });
        }
    }
    let (Some(endpoint), false) = (
        metadata.registration_endpoint.as_deref(),
        user == UserPart::None,
    ) else {
        return Err(AuthError::new(
            AuthStep::Registration,
            format!(
                "no client identity for {}: it offers no dynamic client registration; configure \
                 a client id",
                discovered.issuer
            ),
        ));
    };
    register(http, config, metadata, endpoint, user).map_err(|mut error| {
        // Without any metadata the endpoints are the 2025-03-26 defaults, guessed at the
        // server's origin: a 404 there most likely means the server uses no OAuth at all.
        let guessed = !discovered.published && discovered.resource_metadata.is_none();
        if guessed && error.status == Some(404) {
            error.message.push_str(
                "; the server publishes no OAuth metadata (no protected resource metadata, no \
                 authorization server metadata), so its default /register endpoint was \
                 tried: it may need no authorization at all",
            );
        }
        error
    })
}

/// Dynamic client registration (RFC 7591) of a native client, for the code flow with its
/// redirect URI or for the device grant, which has none.
fn register(
    http: &Http,
    config: &OAuthConfig,
    metadata: &AuthorizationServerMetadata,
    endpoint: &str,
    user: UserPart<'_>,
) -> Result<ClientRegistration, AuthError> {
    urls::check_endpoint(AuthStep::Registration, "registration endpoint", endpoint)?;
    let mut grant_types = match user {
        UserPart::Device => vec![DEVICE_CODE_GRANT],
        _ => vec!["authorization_code"],
    };
    if metadata.supports_offline_access() {
        grant_types.push("refresh_token");
    }
    let requested_method = if metadata.supports_auth_method("none") {
        "none"
    } else if metadata.supports_auth_method("client_secret_basic") {
        "client_secret_basic"
    } else if metadata.supports_auth_method("client_secret_post") {
        "client_secret_post"
    } else {
        "none"
    };
    let mut body = json!({
        "client_name": config.client_name,
        "grant_types": grant_types,
        "token_endpoint_auth_method": requested_method,
        "application_type": "native",
    });
    if let UserPart::Redirect(uri) = user {
        body["redirect_uris"] = json!([uri]);
        body["response_types"] = json!(["code"]);
    }
    log::debug!(
        "oauth: registering a client at {}",
        crate::redact::url(endpoint)
    );
    let answer = http.post_json(AuthStep::Registration, endpoint, &body)?;
    if !answer.is_success() {
        return Err(answer.error(
            AuthStep::Registration,
            "the client registration was refused",
        ));
    }
    let json = answer.json().unwrap_or(Value::Null);
    let text = |name: &str| json.get(name).and_then(Value::as_str).map(str::to_owned);
    let Some(client_id) = text("client_id").filter(|id| !id.is_empty()) else {
        return Err(answer.error(
            AuthStep::Registration,
            "the registration response has no client_id",
        ));
    };
    let client_secret = text("client_secret").filter(|s| !s.is_empty());
    let method = text("token_endpoint_auth_method").unwrap_or_else(|| requested_method.to_owned());
    Ok(ClientRegistration {
        token_endpoint_auth_method: Some(method),
        redirect_uri: user.redirect_uri(),
        expires_at: json.get("client_secret_expires_at").and_then(Value::as_u64),
        ..ClientRegistration::new(client_id, client_secret)
    })
}
