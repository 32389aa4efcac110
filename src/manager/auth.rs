//! OAuth for managed HTTP servers: a provider per connection attempt, built from the server's
//! settings, the manager's token store and its user step, and [`Manager::authorize`].
//!
//! The user is never asked inside the start-up handshake, whose deadline a person in a
//! browser would miss: the provider's handler is a gate that stays shut while connecting, so
//! a server without a usable token fails with its 401. The supervisor then asks the user
//! through the real handler (when the manager has one) with that 401's challenge, and
//! connects again. Once connected the gate opens, so step-ups and re-authorizations during
//! the session reach the user as the provider needs them.

use std::fmt;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::{Manager, ServerStatus};
use crate::auth::{
    AuthorizationHandler, DeviceAuthorization, FileStore, LoopbackHandler, MemoryStore, OAuth,
    Revocation, StoreLock, StoredCredentials, TokenStore,
};
use crate::config::{OAuthSettings, ServerConfig, ServerTransport};
use crate::error::{AuthError, AuthStep, Error, HttpError, Result};
use crate::CredentialProvider;

/// What a gate answers while it is shut. Only [`Managed`] ever sees it.
const NO_USER: &str = "the user's step is not available now";

/// How long [`Manager::authorize`] waits for the reconnection beyond the start-up timeout.
const SETTLE_MARGIN: Duration = Duration::from_secs(2);

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
        let store: Arc<dyn TokenStore> = match super::ManagerOptions::default_token_file() {
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

/// The OAuth side of one managed server.
pub(crate) struct ServerAuth {
    url: String,
    name: String,
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
            .token_store(Arc::clone(&self.store));
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

impl Manager {
    /// Authorizes a server that has [OAuth settings](crate::OAuthSettings) through
    /// `handler`, then reconnects it and waits (up to its start-up timeout) for the outcome.
    ///
    /// This is the way out of [`ServerStatus::NeedsAuthorization`]: the flow uses the
    /// server's challenge (a step-up for a 403 `insufficient_scope`). For a server in any
    /// other state it authorizes anew, e.g. to switch accounts. The tokens go to the
    /// manager's token store, so later runs connect without the user. The handler's redirect
    /// URI is used as is (the server's `redirectPort` is not applied to it).
    ///
    /// ```no_run
    /// # #[cfg(feature = "oauth")] {
    /// use std::sync::Arc;
    /// use umcp::auth::LoopbackHandler;
    ///
    /// # let manager = umcp::Manager::start(Vec::new(), umcp::ManagerOptions::default());
    /// let browser = LoopbackHandler::new(|url: &str| {
    ///     log::info!("Open this page to authorize: {url}");
    ///     Ok(())
    /// });
    /// manager.authorize("search", Arc::new(browser))?;
    /// # }
    /// # Ok::<(), umcp::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Config`] for an unknown, disabled or stopped server or one without OAuth
    /// settings; [`Error::Auth`] (naming the step) or the handler's or store's error when
    /// authorization fails; then the error the server's next connection ended with
    /// ([`Error::Unauthorized`] if it still refuses, a [`Startup`](crate::TimeoutKind::Startup)
    /// timeout if it has not settled in time).
    pub fn authorize(&self, name: &str, handler: Arc<dyn AuthorizationHandler>) -> Result<()> {
        let slot = self.slot(name)?;
        if slot.config.disabled {
            return Err(Error::Config(format!("server `{name}` is disabled")));
        }
        let auth = ServerAuth::without_user(&slot.config, &self.options.auth)
            .ok_or_else(|| Error::Config(format!("server `{name}` has no OAuth settings")))?;
        let hints = match slot.status() {
            ServerStatus::NeedsAuthorization { hints } => Some(hints),
            _ => None,
        };
        obtain(&auth.provider(handler, None)?, hints.as_ref(), true)?;
        self.reconnect_signed_in(name)
    }

    /// Signs in to a server that has [OAuth settings](crate::OAuthSettings) afresh (a `login`
    /// command, or to switch accounts) through `handler`, and the device grant where the
    /// manager prefers it ([`ManagerOptions::with_device_authorization`]): every wait of the
    /// sign-in ends by `timeout`, or at once when `cancel` is cancelled
    /// ([`OAuth::authorize_within`](crate::auth::OAuth::authorize_within)). Then, as
    /// [`authorize`](Self::authorize), the server is reconnected with the new tokens, which
    /// stay in the manager's token store for later runs.
    ///
    /// [`ManagerOptions::with_device_authorization`]: crate::ManagerOptions::with_device_authorization
    ///
    /// ```no_run
    /// # #[cfg(feature = "oauth")] {
    /// use std::sync::Arc;
    /// use std::time::Duration;
    /// use umcp::auth::{PasteHandler, PastePrompt};
    /// use umcp::CancelHandle;
    ///
    /// # let manager = umcp::Manager::start(Vec::new(), umcp::ManagerOptions::default());
    /// let paste = PasteHandler::new(|prompt: PastePrompt<'_>| {
    ///     eprintln!("{prompt}");
    ///     Ok(())
    /// });
    /// manager.sign_in("search", Arc::new(paste), Duration::from_secs(300), &CancelHandle::new())?;
    /// # }
    /// # Ok::<(), umcp::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`authorize`](Self::authorize), and [`Error::Cancelled`] or [`Error::Timeout`] for a
    /// sign-in cut short.
    pub fn sign_in(
        &self,
        name: &str,
        handler: Arc<dyn AuthorizationHandler>,
        timeout: Duration,
        cancel: &crate::CancelHandle,
    ) -> Result<()> {
        let slot = self.slot(name)?;
        if slot.config.disabled {
            return Err(Error::Config(format!("server `{name}` is disabled")));
        }
        let auth = ServerAuth::without_user(&slot.config, &self.options.auth)
            .ok_or_else(|| Error::Config(format!("server `{name}` has no OAuth settings")))?;
        auth.provider(handler, None)?
            .authorize_within(timeout, cancel)?;
        self.reconnect_signed_in(name)
    }

    /// Reconnects a server that has new tokens and waits (up to its start-up timeout) for the
    /// outcome.
    fn reconnect_signed_in(&self, name: &str) -> Result<()> {
        let slot = self.slot(name)?;
        log::debug!("server `{name}`: authorized; reconnecting");
        let seen = slot.state().version;
        self.restart(name)?;
        let deadline = crate::sync::deadline_in(slot.startup_timeout.saturating_add(SETTLE_MARGIN));
        slot.wait_settled_after(seen, deadline);
        slot.client().map(|_| ())
    }
}

impl Manager {
    /// Signs out of a server that has [OAuth settings](crate::OAuthSettings): revokes its tokens
    /// where the authorization server offers revocation (RFC 7009), forgets them and the client
    /// registration in the manager's token store (those of the server's profile), and, when the
    /// server is running, restarts it, so that its connection drops the tokens it held.
    ///
    /// ```no_run
    /// # #[cfg(feature = "oauth")] {
    /// # let manager = umcp::Manager::start(Vec::new(), umcp::ManagerOptions::default());
    /// let revocation = manager.sign_out("search")?;
    /// log::info!("signed out of search: {revocation}");
    /// # }
    /// # Ok::<(), umcp::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Config`] for an unknown server or one without OAuth settings; the token store's
    /// error when it cannot be written. A failed revocation is not an error but
    /// [`Revocation::Failed`].
    pub fn sign_out(&self, name: &str) -> Result<Revocation> {
        let slot = self.slot(name)?;
        let auth = ServerAuth::without_user(&slot.config, &self.options.auth)
            .ok_or_else(|| Error::Config(format!("server `{name}` has no OAuth settings")))?;
        let nobody: Arc<dyn AuthorizationHandler> = Arc::new(Gate {
            user: None,
            open: AtomicBool::new(false),
        });
        let revocation = auth.provider(nobody, None)?.logout()?;
        log::debug!("server `{name}`: signed out ({revocation})");
        if self.restart(name).is_err() {
            log::debug!("server `{name}`: not running; nothing to restart");
        }
        Ok(revocation)
    }
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
