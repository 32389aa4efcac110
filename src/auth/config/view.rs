//! What an [`OAuthConfig`] holds, read back: its getters, and a `Debug` that hides secrets.

use std::fmt;

use super::{Grant, OAuthConfig};

impl OAuthConfig {
    /// Whether tokens are bound to a DPoP key when the server supports it.
    ///
    /// See the example on [`auth::OAuthConfig`](crate::auth::OAuthConfig).
    pub fn get_dpop(&self) -> bool {
        self.dpop
    }

    /// The `client_name` sent with dynamic client registration.
    ///
    /// See the example on [`auth::OAuthConfig`](crate::auth::OAuthConfig).
    pub fn get_client_name(&self) -> &str {
        &self.client_name
    }

    /// The pre-registered client id, when set.
    ///
    /// See the example on [`auth::OAuthConfig`](crate::auth::OAuthConfig).
    pub fn get_client_id(&self) -> Option<&str> {
        self.client_id.as_deref()
    }

    /// The authorization server the client's credentials are bound to, when set.
    ///
    /// See the example on [`OAuthConfig::issuer`].
    pub fn get_issuer(&self) -> Option<&str> {
        self.issuer.as_deref()
    }

    /// The client ID metadata document URL, when set.
    ///
    /// See the example on [`auth::OAuthConfig`](crate::auth::OAuthConfig).
    pub fn get_client_metadata_url(&self) -> Option<&str> {
        self.client_metadata_url.as_deref()
    }

    /// The profile the sign-in is kept under, when set.
    ///
    /// See the example on [`OAuthConfig::profile`].
    pub fn get_profile(&self) -> Option<&str> {
        self.profile.as_deref()
    }

    /// The most authorizations one request may cause.
    ///
    /// See the example on [`auth::OAuthConfig`](crate::auth::OAuthConfig).
    pub fn get_max_authorization_attempts(&self) -> u32 {
        self.max_authorization_attempts
    }
}

impl fmt::Debug for OAuthConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let grant = match &self.grant {
            Grant::AuthorizationCode(_) => "authorization_code",
            Grant::Device(_, None) => "device_code",
            Grant::Device(_, Some(_)) => "device_code, else authorization_code",
            Grant::ClientCredentials => "client_credentials",
            Grant::CrossAppAccess(_) => "cross_app_access",
            Grant::WorkloadIdentity(_) => "workload_identity",
        };
        let url = |s: &Option<String>| s.as_deref().map(crate::redact::url);
        let hidden = |s: &Option<String>| {
            if s.is_some() {
                "Some(<redacted>)"
            } else {
                "None"
            }
        };
        f.debug_struct("OAuthConfig")
            .field("grant", &grant)
            .field("client_id", &self.client_id)
            .field("client_secret", &hidden(&self.client_secret))
            .field("private_key_pem", &hidden(&self.private_key_pem))
            .field("issuer", &url(&self.issuer))
            .field("client_metadata_url", &url(&self.client_metadata_url))
            .field("client_name", &self.client_name)
            .field("scopes", &self.scopes)
            .field("offline_access", &self.offline_access)
            .field(
                "max_authorization_attempts",
                &self.max_authorization_attempts,
            )
            .field("timeout", &self.timeout)
            .field("refresh_margin", &self.refresh_margin)
            .field("authorization_wait", &self.authorization_wait)
            .field("dpop", &self.dpop)
            .field("profile", &self.profile)
            .field("dpop_key_pem", &hidden(&self.dpop_key_pem))
            .finish_non_exhaustive()
    }
}
