//! OAuth for managed HTTP servers: a provider per connection attempt, built from the server's
//! settings, the manager's token store and its user step, and
//! [`Manager::authorize`](crate::Manager::authorize).
//!
//! The user is never asked inside the start-up handshake, whose deadline a person in a
//! browser would miss: the provider's handler is a gate that stays shut while connecting, so
//! a server without a usable token fails with its 401. The supervisor then asks the user
//! through the real handler (when the manager has one) with that 401's challenge, and
//! connects again. Once connected the gate opens, so step-ups and re-authorizations during
//! the session reach the user as the provider needs them.

use std::fmt;
use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::cache;
use super::status::ServerStatus;
use crate::auth::{
    AuthorizationHandler, DeviceAuthorization, FileStore, LoopbackHandler, MemoryStore, OAuth,
    Revocation, StoreLock, StoredCredentials, TokenStore,
};
use crate::config::{OAuthSettings, ServerConfig, ServerTransport};
use crate::error::{AuthError, AuthStep, Error, HttpError, Result};
use crate::{CancelHandle, CredentialProvider};

/// What a gate answers while it is shut. Only [`Managed`] ever sees it.
const NO_USER: &str = "the user's step is not available now";

/// Shows an authorization URL (the second argument) for a server (the first) to the user.
pub(crate) type Opener = dyn Fn(&str, &str) -> io::Result<()> + Send + Sync;

/// Shows a device code for a server (the first argument) to the user.
pub(crate) type DevicePrompt = dyn Fn(&str, &DeviceAuthorization) -> io::Result<()> + Send + Sync;

/// Who takes the user through authorization.
#[derive(Clone)]
pub(crate) enum UserStep {
    /// One handler for every server.
    Handler(Arc<dyn AuthorizationHandler>),
    /// A loopback handler per server, on its `redirectPort`.
    Loopback(Arc<Opener>),
}

/// The authorization part of [`ManagerOptions`](super::ManagerOptions).
#[derive(Clone)]
pub(crate) struct AuthOptions {
    pub(crate) user: Option<UserStep>,
    /// The device grant, preferred where offered.
    pub(crate) device: Option<Arc<DevicePrompt>>,
    pub(crate) store: Arc<dyn TokenStore>,
}

impl Default for AuthOptions {
    fn default() -> AuthOptions {
        let store: Arc<dyn TokenStore> = match default_token_file() {
            Some(path) => Arc::new(FileStore::new(path)),
            None => Arc::new(MemoryStore::new()),
        };
        AuthOptions {
            user: None,
            device: None,
            store,
        }
    }
}

impl fmt::Debug for AuthOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let user = match &self.user {
            None => "none",
            Some(UserStep::Handler(_)) => "handler",
            Some(UserStep::Loopback(_)) => "loopback",
        };
        f.debug_struct("AuthOptions")
            .field("user", &user)
            .finish_non_exhaustive()
    }
}

/// The default token file, next to the tool cache: `oauth/tokens.json` in umcp's per-user
/// cache directory.
pub(crate) fn default_token_file() -> Option<PathBuf> {
    cache::user_base().map(|b| b.join("oauth").join("tokens.json"))
}

/// The OAuth side of one managed server.
pub(crate) struct ServerAuth {
    url: String,
    name: String,
    /// The server's HTTP settings, whose proxy and trust the authorization requests share.
    http: crate::HttpConfig,
    settings: OAuthSettings,
    store: Arc<dyn TokenStore>,
    device: Option<Arc<DevicePrompt>>,
    /// The user's step for this server, kept for the supervisor's life so that a loopback
    /// handler keeps its port (and the redirect URI registered with it).
    user: Option<Arc<dyn AuthorizationHandler>>,
}

impl ServerAuth {
    /// The OAuth side of `config`, with the options' user step; `None` without OAuth
    /// settings.
    pub(crate) fn new(config: &ServerConfig, options: &AuthOptions) -> Option<ServerAuth> {
        let mut auth = ServerAuth::without_user(config, options)?;
        let port = auth.settings.redirect_port.unwrap_or(0);
        auth.user = options.user.as_ref().map(|step| match step {
            UserStep::Handler(handler) => Arc::clone(handler),
            UserStep::Loopback(opener) => {
                let opener = Arc::clone(opener);
                let name = config.name.clone();
                let handler = LoopbackHandler::new(move |url: &str| opener(&name, url)).port(port);
                Arc::new(handler) as Arc<dyn AuthorizationHandler>
            }
        });
        Some(auth)
    }

    fn without_user(config: &ServerConfig, options: &AuthOptions) -> Option<ServerAuth> {
        let ServerTransport::Http(http, Some(settings)) = &config.transport else {
            return None;
        };
        Some(ServerAuth {
            url: http.get_url().to_owned(),
            name: config.name.clone(),
            device: options.device.clone(),
            http: http.clone(),
            settings: settings.clone(),
            store: Arc::new(ScopedStore {
                inner: Arc::clone(&options.store),
                name: config.name.clone(),
            }),
            user: None,
        })
    }

    /// A provider whose user's step is `handler`, and the device prompt where the manager has
    /// one; with a `gate`, no flow that needs the user starts while it is shut.
    fn provider(
        &self,
        handler: Arc<dyn AuthorizationHandler>,
        gate: Option<Arc<Gate>>,
    ) -> Result<OAuth> {
        let mut config = self
            .settings
            .to_oauth_config(handler)
            .token_store(Arc::clone(&self.store))
            .same_network_as(&self.http);
        if let Some(gate) = gate {
            // Shut, the gate refuses before anything is registered or a code asked for.
            config.user_ready = Some(Arc::new(move || gate.user().map(drop)));
        }
        if let Some(prompt) = &self.device {
            let (prompt, name) = (Arc::clone(prompt), self.name.clone());
            config =
                config.device_prompt(move |device: &DeviceAuthorization| prompt(&name, device));
        }
        OAuth::new(self.url.clone(), config)
    }

    /// A provider for one connection attempt, its gate shut.
    pub(crate) fn attempt(&self) -> Result<Attempt> {
        let gate = Arc::new(Gate {
            user: self.user.clone(),
            open: AtomicBool::new(false),
        });
        let oauth = self.provider(
            Arc::clone(&gate) as Arc<dyn AuthorizationHandler>,
            Some(Arc::clone(&gate)),
        )?;
        Ok(Attempt {
            oauth: Arc::new(oauth),
            gate,
        })
    }
}

/// The credentials of one connection attempt.
pub(crate) struct Attempt {
    oauth: Arc<OAuth>,
    gate: Arc<Gate>,
}

impl Attempt {
    /// The provider to give the connection.
    pub(crate) fn credentials(&self) -> Arc<dyn CredentialProvider> {
        Arc::new(Managed(Arc::clone(&self.oauth)))
    }

    /// After an attempt failed with `error`: asks the user when it was a 401 or 403 and the manager
    /// has a user step; `Ok(true)` when there are new credentials to try.
    pub(crate) fn ask_user(&self, error: &Error) -> Result<bool> {
        let (Error::Unauthorized(hints) | Error::Forbidden(hints)) = error else {
            return Ok(false);
        };
        if self.gate.user.is_none() {
            return Ok(false);
        }
        self.gate.open.store(true, Ordering::SeqCst);
        let obtained = obtain(&self.oauth, Some(hints), false);
        self.gate.open.store(false, Ordering::SeqCst);
        obtained
    }

    /// Lets the provider reach the user from now on, for the life of the connection.
    pub(crate) fn connected(&self) {
        self.gate.open.store(true, Ordering::SeqCst);
    }
}

/// Obtains credentials the way the server asked for them: a 401 runs the whole flow with its
/// challenge, a 403 `insufficient_scope` steps up. Otherwise, and when `fresh` is set, a plain
/// authorization. `Ok(false)` when nothing was done.
fn obtain(oauth: &OAuth, hints: Option<&HttpError>, fresh: bool) -> Result<bool> {
    let done = match hints {
        Some(hints) if hints.status == 401 => oauth.on_unauthorized(hints)?,
        Some(hints) if hints.status == 403 => oauth.on_forbidden(hints, 0)?,
        _ => false,
    };
    if done || !fresh {
        return Ok(done);
    }
    oauth.authorize()?;
    Ok(true)
}

/// Authorizes the server of `config` through `handler`, with the challenge its `status`
/// holds (a step-up for a 403 `insufficient_scope`), or anew when it holds none; the tokens
/// go to the options' store. The caller reconnects the server.
pub(crate) fn authorize(
    config: &ServerConfig,
    status: ServerStatus,
    options: &AuthOptions,
    handler: Arc<dyn AuthorizationHandler>,
) -> Result<()> {
    let name = &config.name;
    let auth = ServerAuth::without_user(config, options)
        .ok_or_else(|| Error::Config(format!("server `{name}` has no OAuth settings")))?;
    let hints = match status {
        ServerStatus::NeedsAuthorization { hints } => Some(hints),
        _ => None,
    };
    obtain(&auth.provider(handler, None)?, hints.as_ref(), true)?;
    Ok(())
}

/// Signs the server of `config` in afresh through `handler` (and the device grant where the
/// options prefer it), every wait ending by `timeout` or at `cancel`; the tokens go to the
/// options' store. The caller reconnects the server.
pub(crate) fn sign_in(
    config: &ServerConfig,
    options: &AuthOptions,
    handler: Arc<dyn AuthorizationHandler>,
    timeout: Duration,
    cancel: &CancelHandle,
) -> Result<()> {
    let name = &config.name;
    let auth = ServerAuth::without_user(config, options)
        .ok_or_else(|| Error::Config(format!("server `{name}` has no OAuth settings")))?;
    auth.provider(handler, None)?
        .authorize_within(timeout, cancel)
}

/// Signs the server of `config` out: revokes its tokens where its authorization server offers
/// it, and forgets them in the options' store. The caller restarts the server.
pub(crate) fn sign_out(config: &ServerConfig, options: &AuthOptions) -> Result<Revocation> {
    let name = &config.name;
    let auth = ServerAuth::without_user(config, options)
        .ok_or_else(|| Error::Config(format!("server `{name}` has no OAuth settings")))?;
    let nobody: Arc<dyn AuthorizationHandler> = Arc::new(Gate {
        user: None,
        open: AtomicBool::new(false),
    });
    let revocation = auth.provider(nobody, None)?.logout()?;
    log::debug!("server `{name}`: signed out ({revocation})");
    Ok(revocation)
}

/// The handler of an attempt's provider: the user's step while open, a refusal while shut.
struct Gate {
    user: Option<Arc<dyn AuthorizationHandler>>,
    open: AtomicBool,
}

impl Gate {
    fn user(&self) -> Result<&dyn AuthorizationHandler> {
        match &self.user {
            Some(user) if self.open.load(Ordering::SeqCst) => Ok(user.as_ref()),
            _ => Err(AuthError::new(AuthStep::Authorization, NO_USER).into()),
        }
    }
}

impl AuthorizationHandler for Gate {
    fn redirect_uri(&self) -> Result<String> {
        self.user()?.redirect_uri()
    }

    fn authorize(&self, authorization_url: &str) -> Result<String> {
        self.user()?.authorize(authorization_url)
    }
}

/// The provider as the connection sees it: when obtaining credentials needs a user who is not
/// at hand, the server's own 401 or 403 is reported, with its hints.
struct Managed(Arc<OAuth>);

impl Managed {
    fn or_refusal(result: Result<bool>) -> Result<bool> {
        match result {
            Err(Error::Auth(e)) if e.step == AuthStep::Authorization && e.message == NO_USER => {
                Ok(false)
            }
            other => other,
        }
    }
}

impl CredentialProvider for Managed {
    fn headers(&self, url: &str) -> Result<Vec<(String, String)>> {
        self.0.headers(url)
    }

    fn request_headers(&self, method: &str, url: &str) -> Result<Vec<(String, String)>> {
        self.0.request_headers(method, url)
    }

    fn cached_headers(&self, method: &str, url: &str) -> Result<Vec<(String, String)>> {
        self.0.cached_headers(method, url)
    }

    fn on_unauthorized(&self, error: &HttpError) -> Result<bool> {
        Managed::or_refusal(self.0.on_unauthorized(error))
    }

    fn on_forbidden(&self, error: &HttpError, retries: u32) -> Result<bool> {
        Managed::or_refusal(self.0.on_forbidden(error, retries))
    }
}

/// The manager's store as one server sees it: its entries are keyed by the server's name and
/// its canonical URL, so servers sharing a URL keep separate credentials.
struct ScopedStore {
    inner: Arc<dyn TokenStore>,
    name: String,
}

impl ScopedStore {
    fn key(&self, resource: &str) -> String {
        format!("{} {resource}", self.name)
    }
}

impl TokenStore for ScopedStore {
    fn load(&self, server: &str, issuer: Option<&str>) -> Result<Option<StoredCredentials>> {
        self.inner.load(&self.key(server), issuer)
    }

    fn save(&self, server: &str, credentials: &StoredCredentials) -> Result<()> {
        self.inner.save(&self.key(server), credentials)
    }

    fn remove(&self, server: &str, issuer: Option<&str>) -> Result<()> {
        self.inner.remove(&self.key(server), issuer)
    }

    fn entries(&self) -> Result<Vec<(String, StoredCredentials)>> {
        let prefix = self.key("");
        let mut entries = self.inner.entries()?;
        entries.retain(|(key, _)| key.starts_with(&prefix));
        Ok(entries)
    }

    fn location(&self) -> String {
        self.inner.location()
    }

    fn lock(&self, wait: Duration) -> Result<Option<StoreLock>> {
        self.inner.lock(wait)
    }
}
