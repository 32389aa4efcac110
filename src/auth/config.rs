//! [`OAuthConfig`]: which grant to use, the client's identity, where tokens are kept, and
//! the limits of the flow.

use std::sync::Arc;
use std::time::Duration;

use super::client_credentials::CrossAppAccess;
use super::device::{DeviceAuthorization, Prompt};
use super::handler::AuthorizationHandler;
use super::store::{MemoryStore, TokenStore};
use super::workload::WorkloadIdentity;

mod view;

/// Whether the user can be asked now; its error ends the authorization before it starts.
pub(crate) type UserReady = Arc<dyn Fn() -> crate::error::Result<()> + Send + Sync>;

/// How tokens are obtained.
#[derive(Clone)]
pub(crate) enum Grant {
    /// The authorization code flow with PKCE, through a handler for the user's step.
    AuthorizationCode(Arc<dyn AuthorizationHandler>),
    /// The device authorization grant, showing the user a code; with a handler, the code flow
    /// where the authorization server does not offer the device grant.
    Device(Arc<Prompt>, Option<Arc<dyn AuthorizationHandler>>),
    /// `client_credentials`: the client acts for itself, with a secret or a signed assertion.
    ClientCredentials,
    /// A token exchange at an identity provider, then a JWT-bearer grant.
    CrossAppAccess(CrossAppAccess),
    /// The platform's identity token as a JWT-bearer grant.
    WorkloadIdentity(WorkloadIdentity),
}

/// The configuration of an [`OAuth`](super::OAuth) provider.
///
/// It holds plain values (strings, numbers, a flag) apart from the handler and the store,
/// so it maps easily from a configuration file, and it is cheap to clone for several
/// servers. `Debug` never shows secrets.
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// use umcp::auth::{AuthorizationHandler, FileStore, HeadlessHandler, OAuthConfig};
///
/// let config = OAuthConfig::new(HeadlessHandler::new())
///     .client_name("my-agent")
///     .client_metadata_url("https://agent.example.com/oauth/client.json")
///     .scopes(["files:read", "files:write"])
///     .token_store(Arc::new(FileStore::new("/tmp/umcp-tokens.json")))
///     .offline_access(true)
///     .max_authorization_attempts(2)
///     .timeout(Duration::from_secs(20))
///     .refresh_margin(Duration::from_secs(120))
///     .authorization_wait(Duration::from_secs(300))
///     .dpop(true);
/// assert_eq!(config.get_client_name(), "my-agent");
/// let metadata_url = config.get_client_metadata_url();
/// assert_eq!(metadata_url, Some("https://agent.example.com/oauth/client.json"));
/// assert_eq!(config.get_max_authorization_attempts(), 2);
/// assert!(config.get_dpop());
/// // A client registered by hand instead, with the handler shared between servers:
/// let handler: Arc<dyn AuthorizationHandler> = Arc::new(HeadlessHandler::new());
/// let registered = OAuthConfig::with_handler(handler).client_id("client-1234");
/// assert_eq!(registered.get_client_id(), Some("client-1234"));
/// ```
#[derive(Clone)]
pub struct OAuthConfig {
    pub(crate) grant: Grant,
    pub(crate) client_id: Option<String>,
    pub(crate) client_secret: Option<String>,
    pub(crate) issuer: Option<String>,
    #[cfg_attr(not(feature = "oauth-jwt"), allow(dead_code))]
    pub(crate) private_key_pem: Option<String>,
    pub(crate) client_metadata_url: Option<String>,
    pub(crate) client_name: String,
    pub(crate) scopes: Option<Vec<String>>,
    pub(crate) store: Arc<dyn TokenStore>,
    pub(crate) offline_access: bool,
    pub(crate) max_authorization_attempts: u32,
    pub(crate) timeout: Duration,
    pub(crate) refresh_margin: Duration,
    pub(crate) authorization_wait: Duration,
    pub(crate) dpop: bool,
    pub(crate) profile: Option<String>,
    /// Asked before a flow that needs the user starts (before registration): a manager's gate,
    /// shut while a connection starts up.
    pub(crate) user_ready: Option<UserReady>,
    #[cfg_attr(not(feature = "oauth-jwt"), allow(dead_code))]
    pub(crate) dpop_key_pem: Option<String>,
    /// The proxy and trust roots the requests to authorization servers take.
    pub(crate) network: crate::transport::http::Network,
}

impl OAuthConfig {
    /// The authorization code flow, with `handler` taking the user to the authorization
    /// server ([`LoopbackHandler`](super::LoopbackHandler) for a browser).
    ///
    /// See the example on [`auth::OAuthConfig`](crate::auth::OAuthConfig).
    pub fn new(handler: impl AuthorizationHandler + 'static) -> OAuthConfig {
        OAuthConfig::with_grant(Grant::AuthorizationCode(Arc::new(handler)))
    }

    /// The authorization code flow with a shared handler.
    ///
    /// See the example on [`auth::OAuthConfig`](crate::auth::OAuthConfig).
    pub fn with_handler(handler: Arc<dyn AuthorizationHandler>) -> OAuthConfig {
        OAuthConfig::with_grant(Grant::AuthorizationCode(handler))
    }

    /// The device authorization grant (RFC 8628), for a sign-in without a browser here (over
    /// SSH, in a container): `prompt` shows the user a page to visit on any device and a code to
    /// enter there, while umcp polls the authorization server at its pace until the user has
    /// signed in, refused, or the code expired. The wait ends by the deadline of the call it
    /// serves (or [`OAuth::authorize_within`](super::OAuth::authorize_within)'s) and when the
    /// connection closes or the sign-in is cancelled.
    ///
    /// It composes with the rest of the flow: the scopes of the server's challenge, the RFC 8707
    /// `resource`, DPoP-bound tokens and step-up after 403 `insufficient_scope`. An
    /// authorization server that offers no `device_authorization_endpoint` fails the
    /// authorization; [`device_prompt`](Self::device_prompt) falls back to the code flow
    /// instead.
    ///
    /// See the example on [`auth::DeviceAuthorization`](crate::auth::DeviceAuthorization).
    pub fn device(
        prompt: impl Fn(&DeviceAuthorization) -> std::io::Result<()> + Send + Sync + 'static,
    ) -> OAuthConfig {
        OAuthConfig::with_grant(Grant::Device(Arc::new(prompt), None))
    }

    /// Prefers the device authorization grant where the authorization server offers it, with
    /// `prompt` showing the code, and keeps the authorization code flow (this configuration's
    /// handler) for servers that do not: what a program without a browser at hand chooses. Only
    /// for the user's grants; the others are left as they are.
    ///
    /// ```
    /// use umcp::auth::{OAuthConfig, PasteHandler, PastePrompt};
    ///
    /// // Over SSH: the device flow where offered, else a redirect pasted back by the user.
    /// let paste = PasteHandler::new(|prompt: PastePrompt<'_>| {
    ///     eprintln!("{prompt}");
    ///     Ok(())
    /// });
    /// let config = OAuthConfig::new(paste).device_prompt(|device| {
    ///     eprintln!("Visit {} and enter {}", device.verification_uri, device.user_code);
    ///     Ok(())
    /// });
    /// # let _ = config;
    /// ```
    pub fn device_prompt(
        mut self,
        prompt: impl Fn(&DeviceAuthorization) -> std::io::Result<()> + Send + Sync + 'static,
    ) -> OAuthConfig {
        let prompt: Arc<Prompt> = Arc::new(prompt);
        self.grant = match self.grant {
            Grant::AuthorizationCode(handler) | Grant::Device(_, Some(handler)) => {
                Grant::Device(prompt, Some(handler))
            }
            Grant::Device(_, None) => Grant::Device(prompt, None),
            other => other,
        };
        self
    }

    /// The `client_credentials` grant (the MCP client-credentials extension) for the
    /// pre-registered `client_id`; add [`client_secret`](Self::client_secret) or, with the
    /// `oauth-jwt` feature, `private_key_pem`.
    ///
    /// ```no_run
    /// use std::sync::Arc;
    /// use umcp::auth::{OAuth, OAuthConfig};
    /// use umcp::{Client, HttpConfig};
    ///
    /// # fn main() -> umcp::Result<()> {
    /// // A machine-to-machine client registered with the authorization server beforehand.
    /// // The secret comes from the environment, never from the source.
    /// let secret = std::env::var("MCP_CLIENT_SECRET").unwrap_or_default();
    /// let config = OAuthConfig::client_credentials("reporting-job")
    ///     .client_secret(secret)
    ///     .scopes(["reports:read"]);
    /// let url = "https://mcp.example.com/mcp";
    /// let oauth = OAuth::new(url, config)?;
    /// let client = Client::connect(HttpConfig::new(url).credentials(Arc::new(oauth)))?;
    /// # let _ = client;
    /// # Ok(()) }
    /// ```
    pub fn client_credentials(client_id: impl Into<String>) -> OAuthConfig {
        OAuthConfig::with_grant(Grant::ClientCredentials).client_id(client_id)
    }

    /// Cross-app access (enterprise-managed authorization): the identity provider exchanges
    /// the user's ID token for an identity assertion grant, which the authorization server
    /// takes as a JWT-bearer grant. Add the client's [`client_id`](Self::client_id) and
    /// [`client_secret`](Self::client_secret) at the authorization server.
    ///
    /// ```no_run
    /// use std::sync::Arc;
    /// use umcp::auth::{CrossAppAccess, OAuth, OAuthConfig};
    /// use umcp::{Client, HttpConfig};
    ///
    /// # fn main() -> umcp::Result<()> {
    /// # let id_token = String::new();
    /// // `id_token` comes from the user's single sign-on; secrets from the environment.
    /// let idp = "https://idp.example.com/oauth2/token";
    /// let access = CrossAppAccess::new(idp, "agent-at-idp", id_token)
    ///     .idp_client_secret(std::env::var("IDP_CLIENT_SECRET").unwrap_or_default());
    /// let config = OAuthConfig::cross_app_access(access)
    ///     .client_id("agent-at-mcp")
    ///     .client_secret(std::env::var("MCP_CLIENT_SECRET").unwrap_or_default());
    /// let url = "https://mcp.example.com/mcp";
    /// let oauth = OAuth::new(url, config)?;
    /// let client = Client::connect(HttpConfig::new(url).credentials(Arc::new(oauth)))?;
    /// # let _ = client;
    /// # Ok(()) }
    /// ```
    pub fn cross_app_access(access: CrossAppAccess) -> OAuthConfig {
        OAuthConfig::with_grant(Grant::CrossAppAccess(access))
    }

    /// Workload identity federation: the JWT the platform issued to this workload (read
    /// from a file or an environment variable before every token request) is presented as an
    /// RFC 7523 JWT-bearer grant by the client `client_id`, at the authorization server the
    /// identity names and no other. No user and no stored secret.
    ///
    /// See the example on [`auth::WorkloadIdentity`](crate::auth::WorkloadIdentity).
    pub fn workload_identity(
        client_id: impl Into<String>,
        identity: WorkloadIdentity,
    ) -> OAuthConfig {
        OAuthConfig::with_grant(Grant::WorkloadIdentity(identity)).client_id(client_id)
    }

    fn with_grant(grant: Grant) -> OAuthConfig {
        OAuthConfig {
            grant,
            client_id: None,
            client_secret: None,
            issuer: None,
            private_key_pem: None,
            client_metadata_url: None,
            client_name: "umcp".into(),
            scopes: None,
            store: Arc::new(MemoryStore::new()),
            offline_access: true,
            max_authorization_attempts: 3,
            timeout: Duration::from_secs(30),
            refresh_margin: Duration::from_secs(60),
            authorization_wait: Duration::from_secs(300),
            dpop: true,
            profile: None,
            user_ready: None,
            dpop_key_pem: None,
            network: crate::transport::http::Network::default(),
        }
    }

    /// Sends the requests to authorization servers (metadata, registration, tokens) through the
    /// same proxy, with the same trust roots and extra authorities, as the requests to `server`
    /// (by default they follow the environment, as a server with no settings of its own does).
    /// `server`'s client certificate is not shown to authorization servers, and its Unix socket
    /// leads to the MCP server only.
    ///
    /// ```
    /// use umcp::auth::{HeadlessHandler, OAuthConfig};
    /// use umcp::{HttpConfig, Proxy, TrustRoots};
    ///
    /// let server = HttpConfig::new("https://mcp.corp/mcp")
    ///     .proxy(Proxy::url("http://proxy.corp:3128"))
    ///     .trust_roots(TrustRoots::System);
    /// let config = OAuthConfig::new(HeadlessHandler::new()).same_network_as(&server);
    /// # let _ = config;
    /// ```
    pub fn same_network_as(mut self, server: &crate::HttpConfig) -> OAuthConfig {
        self.network = server.network.for_authorization();
        self
    }

    /// A pre-registered client id; it takes precedence over any other identity.
    ///
    /// See the example on [`auth::OAuthConfig`](crate::auth::OAuthConfig).
    pub fn client_id(mut self, client_id: impl Into<String>) -> OAuthConfig {
        self.client_id = Some(client_id.into());
        self
    }

    /// The secret of the pre-registered client.
    ///
    /// See the example on
    /// [`auth::OAuthConfig::client_credentials`](crate::auth::OAuthConfig::client_credentials).
    pub fn client_secret(mut self, client_secret: impl Into<String>) -> OAuthConfig {
        self.client_secret = Some(client_secret.into());
        self
    }

    /// Binds the client's credentials to the authorization server `issuer`: when discovery
    /// finds that the MCP server is protected by any other one, the request fails with an
    /// [`AuthError`](crate::AuthError) at [`AuthStep::Discovery`](crate::AuthStep::Discovery)
    /// naming both, before anything is sent there.
    ///
    /// Without it, the authorization server is whichever the MCP server's metadata names,
    /// as the MCP authorization spec has it. That is right for dynamic registration, where
    /// each authorization server gets its own client, but a pre-registered
    /// [`client_secret`](Self::client_secret) (or private key) then goes to whatever
    /// authorization server the MCP server names, which a malicious or compromised MCP
    /// server can make its own. Set it whenever the credentials were issued by one
    /// authorization server. [`WorkloadIdentity`] carries such a binding of its own.
    ///
    /// `issuer` is compared with the discovered issuer as a URL: scheme and host case, a
    /// default port and a trailing slash do not matter.
    ///
    /// ```
    /// use umcp::auth::OAuthConfig;
    ///
    /// let secret = std::env::var("MCP_CLIENT_SECRET").unwrap_or_default();
    /// let config = OAuthConfig::client_credentials("reporting-job")
    ///     .client_secret(secret)
    ///     .issuer("https://auth.example.com");
    /// assert_eq!(config.get_issuer(), Some("https://auth.example.com"));
    /// ```
    pub fn issuer(mut self, issuer: impl Into<String>) -> OAuthConfig {
        self.issuer = Some(issuer.into());
        self
    }

    /// A PKCS#8 PEM P-256 private key (`-----BEGIN PRIVATE KEY-----`) for `private_key_jwt`
    /// client authentication with ES256 assertions (RFC 7523).
    ///
    /// ```no_run
    /// use umcp::auth::OAuthConfig;
    ///
    /// # fn main() -> umcp::Result<()> {
    /// // A signed assertion instead of a client secret:
    /// let pem = std::fs::read_to_string("/run/secrets/job-key.pem").map_err(umcp::Error::io)?;
    /// let config = OAuthConfig::client_credentials("reporting-job").private_key_pem(pem);
    /// # let _ = config;
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "oauth-jwt")]
    pub fn private_key_pem(mut self, pem: impl Into<String>) -> OAuthConfig {
        self.private_key_pem = Some(pem.into());
        self
    }

    /// The https URL of this client's ID metadata document, used as `client_id` with servers
    /// that advertise `client_id_metadata_document_supported`. The document must list the
    /// handler's redirect URI.
    ///
    /// See the example on [`auth::OAuthConfig`](crate::auth::OAuthConfig).
    pub fn client_metadata_url(mut self, url: impl Into<String>) -> OAuthConfig {
        self.client_metadata_url = Some(url.into());
        self
    }

    /// The `client_name` sent with dynamic client registration (default `umcp`).
    ///
    /// See the example on [`auth::OAuthConfig`](crate::auth::OAuthConfig).
    pub fn client_name(mut self, name: impl Into<String>) -> OAuthConfig {
        self.client_name = name.into();
        self
    }

    /// The scopes to ask for when the server's challenge names none (instead of the
    /// resource's `scopes_supported`).
    ///
    /// See the example on [`auth::OAuthConfig`](crate::auth::OAuthConfig).
    pub fn scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> OAuthConfig {
        self.scopes = Some(scopes.into_iter().map(Into::into).collect());
        self
    }

    /// Where credentials are kept (default: a new [`MemoryStore`]).
    ///
    /// See the example on [`auth::OAuthConfig`](crate::auth::OAuthConfig).
    pub fn token_store(mut self, store: Arc<dyn TokenStore>) -> OAuthConfig {
        self.store = store;
        self
    }

    /// Whether to ask for `offline_access` (a refresh token) when the authorization server
    /// lists it in `scopes_supported` (default `true`).
    ///
    /// See the example on [`auth::OAuthConfig`](crate::auth::OAuthConfig).
    pub fn offline_access(mut self, enabled: bool) -> OAuthConfig {
        self.offline_access = enabled;
        self
    }

    /// The most authorizations one request may cause, the first one and step-ups after 403
    /// `insufficient_scope` together (default 3, at least 1).
    ///
    /// See the example on [`auth::OAuthConfig`](crate::auth::OAuthConfig).
    pub fn max_authorization_attempts(mut self, attempts: u32) -> OAuthConfig {
        self.max_authorization_attempts = attempts.max(1);
        self
    }

    /// The timeout of each request to an authorization server (default 30 s). A request made
    /// for a call (a refresh, or discovery and a grant after a 401) also ends by that call's
    /// deadline, or the start-up deadline while connecting; the token request that follows a
    /// user's answer gets the call's budget afresh, counted from the answer. Closing the
    /// client cuts such a request at once, and the call fails with
    /// [`Error::Closed`](crate::Error::Closed); but not one still resolving the server's name
    /// or connecting, which ends when that is done, at the latest at this timeout (cut to the
    /// call's deadline).
    ///
    /// See the example on [`auth::OAuthConfig`](crate::auth::OAuthConfig).
    pub fn timeout(mut self, timeout: Duration) -> OAuthConfig {
        self.timeout = timeout;
        self
    }

    /// How long before expiry a token is refreshed (default 60 s).
    ///
    /// See the example on [`auth::OAuthConfig`](crate::auth::OAuthConfig).
    pub fn refresh_margin(mut self, margin: Duration) -> OAuthConfig {
        self.refresh_margin = margin;
        self
    }

    /// How long a request that needs credentials waits while another thread of this provider
    /// is obtaining them (possibly waiting for the user), before failing with
    /// [`Error::Auth`](crate::Error::Auth) (default 5 minutes; `Duration::MAX`: no limit).
    /// When the authorization it waited for fails with the authorization server's answer
    /// (an [`AuthError`](crate::AuthError) with a `status`: an OAuth error such as
    /// `invalid_client`, a refused registration, a document that does not parse), the request
    /// fails with the same error rather than starting another; after any other failure (a
    /// request that got no answer, which the deadline of the call running the authorization
    /// may have cut, the user's step, a step-up after 403) it runs one of its own, within its
    /// own deadline. A request arriving after the failure tries again. Closing the client
    /// ends the wait at once.
    ///
    /// See the example on [`auth::OAuthConfig`](crate::auth::OAuthConfig).
    pub fn authorization_wait(mut self, wait: Duration) -> OAuthConfig {
        self.authorization_wait = wait;
        self
    }

    /// Keeps this sign-in apart from others to the same server under the name `profile`, so one
    /// user can hold two identities for one server (work and personal, say) and pick one per
    /// program or configuration entry. Tokens, registrations and DPoP keys are stored per
    /// profile; without one (the default), under the server alone.
    ///
    /// A name is 1 to 64 letters, digits, `.`, `_`, `-` or `@`; [`OAuth::new`](super::OAuth::new)
    /// refuses any other.
    ///
    /// ```
    /// use umcp::auth::{HeadlessHandler, OAuthConfig};
    ///
    /// let work = OAuthConfig::new(HeadlessHandler::new()).profile("work");
    /// assert_eq!(work.get_profile(), Some("work"));
    /// ```
    pub fn profile(mut self, profile: impl Into<String>) -> OAuthConfig {
        self.profile = Some(profile.into());
        self
    }

    /// Whether to bind tokens to a DPoP key (RFC 9449) when the authorization server
    /// advertises `dpop_signing_alg_values_supported` with ES256 (default `true`; needs the
    /// `oauth-jwt` feature, without which tokens are always Bearer tokens).
    ///
    /// The key is generated per client and kept with the tokens in the token store, so a
    /// restarted process keeps its binding; it never reaches the log.
    ///
    /// See the example on [`auth::OAuthConfig`](crate::auth::OAuthConfig).
    pub fn dpop(mut self, enabled: bool) -> OAuthConfig {
        self.dpop = enabled;
        self
    }

    /// A PKCS#8 PEM P-256 private key to use as the DPoP key instead of a generated one (for
    /// keys kept in a secrets manager). It is not written to the token store.
    ///
    /// ```
    /// use umcp::auth::{HeadlessHandler, OAuthConfig};
    ///
    /// let pem = std::env::var("MCP_DPOP_KEY").unwrap_or_default();
    /// let config = OAuthConfig::new(HeadlessHandler::new()).dpop(true).dpop_key_pem(pem);
    /// assert!(config.get_dpop());
    /// ```
    #[cfg(feature = "oauth-jwt")]
    pub fn dpop_key_pem(mut self, pem: impl Into<String>) -> OAuthConfig {
        self.dpop_key_pem = Some(pem.into());
        self
    }
}
