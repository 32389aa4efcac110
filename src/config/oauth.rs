//! The OAuth settings of an HTTP server entry: what a configuration file can say about the
//! client's identity and the scopes, and how they are read.

use std::fmt;

use serde_json::Value;

use super::entry::{kind, Entry};
use super::ServerConfigError;
use crate::redact::clip;

/// How a configured HTTP server is authorized with OAuth 2.1, as far as a configuration file
/// can say: the client's identity, the scopes and the loopback redirect port.
///
/// The user's step (a browser, or none) and the token store are not part of it: the
/// [`Manager`](crate::Manager) supplies them (see `ManagerOptions::with_authorization_handler`
/// and `ManagerOptions::with_token_store`, feature `oauth`). Every field is optional;
/// `OAuthSettings::default()` means "discover everything, register dynamically".
///
/// In a configuration file, an HTTP entry takes either the shorthand `"auth": "oauth"` or an
/// `oauth` object (or both):
///
/// ```json
/// { "type": "http", "url": "https://mcp.example.com/mcp",
///   "oauth": { "clientId": "my-app", "clientSecret": "${MY_APP_SECRET}",
///              "scopes": "files:read files:write", "redirectPort": 8765 } }
/// ```
///
/// The keys are `clientId`, `clientSecret` (only with `clientId`), `issuer` (the
/// authorization server the client's credentials belong to, see below), `scopes` (an array
/// of strings or one space-separated string), `clientMetadataUrl` (an https URL),
/// `clientName`, `redirectPort` (a number or a string, 0 to 65535), `dpop` (`false` keeps
/// Bearer tokens even where the server offers DPoP binding), `profile` (the sign-in to use,
/// of several to one server), `workloadIdentity` and `enabled` (`false` turns OAuth off again). Strings get `${VAR}` expansion like the rest
/// of the entry.
///
/// Without `issuer`, the authorization server is whichever the MCP server names, and a
/// `clientSecret` goes to it: give `issuer` with a secret issued by one authorization
/// server, and any other is refused before the secret is sent
/// ([`OAuthConfig::issuer`](crate::auth::OAuthConfig::issuer)).
///
/// A workload that authenticates with its platform's identity (workload identity
/// federation: the platform's JWT is presented as an RFC 7523 JWT-bearer grant, no browser
/// and no stored secret) names its client, the authorization server the platform's token is
/// for (`issuer`, required: the token is sent to no other) and where the platform puts the
/// token, a file (re-read for every exchange, as platforms rotate it) or an environment
/// variable:
///
/// ```json
/// { "type": "http", "url": "https://mcp.example.com/mcp",
///   "oauth": { "clientId": "build-agent",
///              "workloadIdentity": { "issuer": "https://auth.example.com",
///                                    "tokenFile": "/var/run/secrets/tokens/mcp" } } }
/// ```
///
/// (`"tokenEnv": "MCP_WORKLOAD_TOKEN"` reads a variable instead; exactly one of the two.)
///
/// `Debug` never shows the client secret.
///
/// See the example on [`OAuthSettings::new`].
#[derive(Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct OAuthSettings {
    /// A pre-registered client id; without one, the client registers dynamically or uses
    /// its client ID metadata document.
    pub client_id: Option<String>,
    /// The secret of the pre-registered client.
    pub client_secret: Option<String>,
    /// The authorization server the client's credentials are bound to (`issuer`): any
    /// other is refused before anything is sent to it (`None`: whichever the MCP server
    /// names).
    pub issuer: Option<String>,
    /// The scopes to ask for when the server's challenge names none (`None`: the scopes the
    /// server advertises).
    pub scopes: Option<Vec<String>>,
    /// The https URL of the client's ID metadata document.
    pub client_metadata_url: Option<String>,
    /// The `client_name` sent with dynamic client registration (`None`: `umcp`).
    pub client_name: Option<String>,
    /// The port of the loopback redirect URI `http://127.0.0.1:<port>/callback`, for
    /// clients registered with a fixed one (`None`: any free port). Used when the manager
    /// runs the browser flow itself; a handler supplied as is keeps its own redirect URI.
    pub redirect_port: Option<u16>,
    /// `Some(false)` keeps Bearer tokens where the authorization server offers DPoP binding
    /// (`None`: bind them, with the `oauth-jwt` feature).
    pub dpop: Option<bool>,
    /// The profile the sign-in is kept under (`profile`), so one user can hold two identities
    /// for one server ([`OAuthConfig::profile`](crate::auth::OAuthConfig::profile); `None`: the
    /// server's default sign-in).
    pub profile: Option<String>,
    /// Workload identity federation: the issuer of the authorization server the
    /// platform's token is for, the only one it is sent to (`workloadIdentity.issuer`).
    /// Needed with a token source.
    pub workload_issuer: Option<String>,
    /// Workload identity federation: the file holding the platform's identity token
    /// (`workloadIdentity.tokenFile`). Needs `client_id` and `workload_issuer`.
    pub workload_token_file: Option<String>,
    /// Workload identity federation: the environment variable holding the platform's
    /// identity token (`workloadIdentity.tokenEnv`). Needs `client_id` and
    /// `workload_issuer`.
    pub workload_token_env: Option<String>,
}

impl OAuthSettings {
    /// Settings with nothing fixed: discovery and dynamic registration do the rest.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use umcp::auth::HeadlessHandler;
    /// use umcp::OAuthSettings;
    ///
    /// let settings = OAuthSettings::new()
    ///     .with_client_id("client-1234")
    ///     .with_issuer("https://auth.example.com")
    ///     .with_scopes(["files:read"])
    ///     .with_client_name("my-agent")
    ///     .with_profile("work")
    ///     .with_redirect_port(8765);
    /// assert_eq!(settings.redirect_port, Some(8765));
    /// // Workload identity instead of a user: a token file (or variable) and a client id.
    /// let workload = OAuthSettings::new()
    ///     .with_client_id("ci-runner")
    ///     .with_workload_token_file("https://auth.example.com", "/var/run/secrets/tokens/mcp");
    /// // A connection of your own (a manager does this itself):
    /// let config = workload.to_oauth_config(Arc::new(HeadlessHandler::new()));
    /// # let _ = config;
    /// ```
    pub fn new() -> OAuthSettings {
        OAuthSettings::default()
    }

    /// Uses a pre-registered client id.
    ///
    /// See the example on [`OAuthSettings::new`].
    pub fn with_client_id(mut self, client_id: impl Into<String>) -> OAuthSettings {
        self.client_id = Some(client_id.into());
        self
    }

    /// Uses the secret of the pre-registered client.
    ///
    /// See the example on [`OAuthSettings::new`].
    pub fn with_client_secret(mut self, secret: impl Into<String>) -> OAuthSettings {
        self.client_secret = Some(secret.into());
        self
    }

    /// Asks for these scopes when the server's challenge names none.
    ///
    /// See the example on [`OAuthSettings::new`].
    pub fn with_scopes<S: Into<String>>(
        mut self,
        scopes: impl IntoIterator<Item = S>,
    ) -> OAuthSettings {
        self.scopes = Some(scopes.into_iter().map(Into::into).collect());
        self
    }

    /// Binds the client's credentials to the authorization server `issuer`.
    ///
    /// See the example on [`OAuthSettings::new`].
    pub fn with_issuer(mut self, issuer: impl Into<String>) -> OAuthSettings {
        self.issuer = Some(issuer.into());
        self
    }

    /// Uses a client ID metadata document (an https URL with a path).
    ///
    /// See the example on [`OAuthSettings::new`].
    pub fn with_client_metadata_url(mut self, url: impl Into<String>) -> OAuthSettings {
        self.client_metadata_url = Some(url.into());
        self
    }

    /// The `client_name` sent with dynamic client registration.
    ///
    /// See the example on [`OAuthSettings::new`].
    pub fn with_client_name(mut self, name: impl Into<String>) -> OAuthSettings {
        self.client_name = Some(name.into());
        self
    }

    /// Keeps the sign-in under the profile `profile`.
    ///
    /// See the example on [`OAuthSettings::new`].
    pub fn with_profile(mut self, profile: impl Into<String>) -> OAuthSettings {
        self.profile = Some(profile.into());
        self
    }

    /// Listens for the loopback redirect on this port.
    ///
    /// See the example on [`OAuthSettings::new`].
    pub fn with_redirect_port(mut self, port: u16) -> OAuthSettings {
        self.redirect_port = Some(port);
        self
    }

    /// Authenticates with the platform's identity token for the authorization server
    /// `issuer`, read from `path` (workload identity federation; with a client id).
    ///
    /// See the example on [`OAuthSettings::new`].
    pub fn with_workload_token_file(
        mut self,
        issuer: impl Into<String>,
        path: impl Into<String>,
    ) -> OAuthSettings {
        self.workload_issuer = Some(issuer.into());
        self.workload_token_file = Some(path.into());
        self
    }

    /// Authenticates with the platform's identity token for the authorization server
    /// `issuer`, read from the environment variable `name` (workload identity federation;
    /// with a client id).
    ///
    /// See the example on [`OAuthSettings::new`].
    pub fn with_workload_token_env(
        mut self,
        issuer: impl Into<String>,
        name: impl Into<String>,
    ) -> OAuthSettings {
        self.workload_issuer = Some(issuer.into());
        self.workload_token_env = Some(name.into());
        self
    }

    /// An [`OAuthConfig`](crate::auth::OAuthConfig) with these settings and the default
    /// (in-memory) token store: the authorization code flow with `handler` for the user's
    /// step, or, with a workload token source and a client id, workload identity
    /// federation (no user step; `handler` is not used), bound to `workload_issuer` (without
    /// one, every authorization server is refused). The redirect port is the handler's
    /// business and is not applied here.
    ///
    /// See the example on [`OAuthSettings::new`].
    #[cfg(feature = "oauth")]
    pub fn to_oauth_config(
        &self,
        handler: std::sync::Arc<dyn crate::auth::AuthorizationHandler>,
    ) -> crate::auth::OAuthConfig {
        use crate::auth::{OAuthConfig, WorkloadIdentity};
        let issuer = self.workload_issuer.clone().unwrap_or_default();
        let identity = match (&self.workload_token_file, &self.workload_token_env) {
            (Some(path), _) => Some(WorkloadIdentity::token_file(issuer, path)),
            (None, Some(name)) => Some(WorkloadIdentity::env(issuer, name)),
            (None, None) => None,
        };
        let mut config = match (identity, &self.client_id) {
            (Some(identity), Some(id)) => OAuthConfig::workload_identity(id.clone(), identity),
            _ => OAuthConfig::with_handler(handler),
        };
        if let Some(enabled) = self.dpop {
            config = config.dpop(enabled);
        }
        if let Some(id) = &self.client_id {
            config = config.client_id(id.clone());
        }
        if let Some(secret) = &self.client_secret {
            config = config.client_secret(secret.clone());
        }
        if let Some(issuer) = &self.issuer {
            config = config.issuer(issuer.clone());
        }
        if let Some(scopes) = &self.scopes {
            config = config.scopes(scopes.iter().cloned());
        }
        if let Some(url) = &self.client_metadata_url {
            config = config.client_metadata_url(url.clone());
        }
        if let Some(name) = &self.client_name {
            config = config.client_name(name.clone());
        }
        if let Some(profile) = &self.profile {
            config = config.profile(profile.clone());
        }
        config
    }
}

impl fmt::Debug for OAuthSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secret = self.client_secret.as_ref().map(|_| "<redacted>");
        let url = |s: &Option<String>| s.as_deref().map(crate::redact::url);
        f.debug_struct("OAuthSettings")
            .field("client_id", &self.client_id)
            .field("client_secret", &secret)
            .field("issuer", &url(&self.issuer))
            .field("scopes", &self.scopes)
            .field("client_metadata_url", &url(&self.client_metadata_url))
            .field("client_name", &self.client_name)
            .field("redirect_port", &self.redirect_port)
            .field("dpop", &self.dpop)
            .field("profile", &self.profile)
            .field("workload_issuer", &url(&self.workload_issuer))
            .field("workload_token_file", &self.workload_token_file)
            .field("workload_token_env", &self.workload_token_env)
            .finish()
    }
}

/// Reads `auth` and `oauth` of an HTTP entry; `None` when the entry asks for no OAuth.
pub(super) fn parse(entry: &Entry<'_>) -> Result<Option<OAuthSettings>, ServerConfigError> {
    let shorthand = match entry.string("auth")?.as_deref() {
        None => false,
        Some("oauth") => true,
        Some(other) => {
            return Err(entry.error(
                "auth",
                format!("unknown value `{}` (expected `oauth`)", clip(other)),
            ))
        }
    };
    let object = match entry.object_at("oauth") {
        None | Some(Value::Null) => None,
        Some(Value::Object(object)) => Some(object),
        Some(other) => {
            let message = format!("must be an object, not {}", kind(other));
            return Err(entry.error("oauth", message));
        }
    };
    match object {
        Some(object) => settings(&entry.nested(object, &["oauth"])),
        None if shorthand => Ok(Some(OAuthSettings::default())),
        None => Ok(None),
    }
}

/// Reads the `oauth` object.
fn settings(oauth: &Entry<'_>) -> Result<Option<OAuthSettings>, ServerConfigError> {
    if oauth.bool("enabled")? == Some(false) {
        return Ok(None);
    }
    let (workload_issuer, workload_token_file, workload_token_env) = workload(oauth)?;
    let settings = OAuthSettings {
        client_id: non_empty(oauth, "clientId")?,
        client_secret: non_empty(oauth, "clientSecret")?,
        issuer: non_empty(oauth, "issuer")?,
        scopes: scopes(oauth)?,
        client_metadata_url: non_empty(oauth, "clientMetadataUrl")?,
        client_name: non_empty(oauth, "clientName")?,
        redirect_port: port(oauth)?,
        dpop: oauth.bool("dpop")?,
        profile: non_empty(oauth, "profile")?,
        workload_issuer,
        workload_token_file,
        workload_token_env,
    };
    let workload = settings.workload_token_file.is_some() || settings.workload_token_env.is_some();
    if workload && settings.client_id.is_none() {
        return Err(oauth.error(
            "workloadIdentity",
            "needs `clientId` (the client the platform's token is presented for)",
        ));
    }
    if settings.client_secret.is_some() && settings.client_id.is_none() {
        return Err(oauth.error(
            "clientSecret",
            "needs `clientId` (the client it belongs to)",
        ));
    }
    // Disabled entries keep unexpanded strings, which need not look like URLs yet.
    if let (Some(url), false) = (&settings.client_metadata_url, oauth.lenient) {
        if !url.starts_with("https://") {
            return Err(oauth.error("clientMetadataUrl", "must be an https URL"));
        }
    }
    let issuers = [
        ("issuer", &settings.issuer),
        ("workloadIdentity.issuer", &settings.workload_issuer),
    ];
    for (key, issuer) in issuers {
        if let (Some(url), false) = (issuer, oauth.lenient) {
            let lower = url.to_ascii_lowercase();
            if !lower.starts_with("https://") && !lower.starts_with("http://") {
                return Err(oauth.error(key, "must be an http(s) URL"));
            }
        }
    }
    Ok(Some(settings))
}

/// What `workloadIdentity` says: the issuer, the token file and the token variable.
type Workload = (Option<String>, Option<String>, Option<String>);

/// `workloadIdentity`: `{ "issuer": url, "tokenFile": path }` or `{ "issuer": url,
/// "tokenEnv": name }`, the issuer always, exactly one of the other two.
fn workload(oauth: &Entry<'_>) -> Result<Workload, ServerConfigError> {
    const KEY: &str = "workloadIdentity";
    let object = match oauth.object_at(KEY) {
        None | Some(Value::Null) => return Ok((None, None, None)),
        Some(Value::Object(object)) => object,
        Some(other) => {
            let message = format!("must be an object, not {}", kind(other));
            return Err(oauth.error(KEY, message));
        }
    };
    let inner = oauth.nested(object, &["oauth", "workloadIdentity"]);
    let issuer = non_empty(&inner, "issuer")?;
    let file = non_empty(&inner, "tokenFile")?;
    let env = non_empty(&inner, "tokenEnv")?;
    if file.is_some() == env.is_some() {
        return Err(oauth.error(KEY, "needs exactly one of `tokenFile` and `tokenEnv`"));
    }
    if issuer.is_none() {
        return Err(oauth.error(
            KEY,
            "needs `issuer`: the authorization server the platform's token is for, the only \
             one it is sent to",
        ));
    }
    Ok((issuer, file, env))
}

fn non_empty(oauth: &Entry<'_>, key: &'static str) -> Result<Option<String>, ServerConfigError> {
    match oauth.string(key)? {
        Some(text) if text.trim().is_empty() => Err(oauth.error(key, "is empty")),
        other => Ok(other),
    }
}

/// `scopes`: an array of strings or one space-separated string; empty means the default.
fn scopes(oauth: &Entry<'_>) -> Result<Option<Vec<String>>, ServerConfigError> {
    let scopes = match oauth.get("scopes") {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::String(text)) => oauth
            .expand("scopes", text)?
            .split_whitespace()
            .map(str::to_owned)
            .collect(),
        Some(Value::Array(_)) => {
            let mut scopes = Vec::new();
            for scope in oauth.list("scopes")? {
                scopes.extend(scope.split_whitespace().map(str::to_owned));
            }
            scopes
        }
        Some(other) => {
            let message = format!(
                "must be an array of strings or a space-separated string, not {}",
                kind(other)
            );
            return Err(oauth.error("scopes", message));
        }
    };
    Ok(Some(scopes).filter(|s: &Vec<String>| !s.is_empty()))
}

/// `redirectPort`: a number or a string (which may come from a variable), 0 to 65535.
fn port(oauth: &Entry<'_>) -> Result<Option<u16>, ServerConfigError> {
    const KEY: &str = "redirectPort";
    let invalid = |what: &str| {
        oauth.error(
            KEY,
            format!("must be a port number (0 to 65535), not {what}"),
        )
    };
    match oauth.get(KEY) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_u64()
            .and_then(|n| u16::try_from(n).ok())
            .map(Some)
            .ok_or_else(|| invalid(&n.to_string())),
        Some(Value::String(text)) => {
            let text = oauth.expand(KEY, text)?;
            match text.trim().parse::<u16>() {
                Ok(port) => Ok(Some(port)),
                // A disabled entry keeps `${PORT}` as written; it is never used.
                Err(_) if oauth.lenient => Ok(None),
                Err(_) => Err(invalid(&format!("`{}`", clip(&text)))),
            }
        }
        Some(other) => Err(invalid(kind(other))),
    }
}
