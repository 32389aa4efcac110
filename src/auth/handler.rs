//! The user's step of the authorization code flow, as a trait the caller supplies.

use crate::error::Result;

/// Takes the user to the authorization server and brings back its redirect.
///
/// [`LoopbackHandler`](super::LoopbackHandler) opens a browser and listens on 127.0.0.1;
/// [`HeadlessHandler`](super::HeadlessHandler) requests the URL itself and reads the
/// redirect, for servers that authorize without a user. Implement it to show the URL in a
/// GUI, or to drive an embedded browser.
///
/// An application with its own browser window hands the URL to it and waits for the redirect
/// the window catches:
///
/// ```
/// use std::sync::mpsc::{channel, Receiver, Sender};
/// use std::sync::Mutex;
/// use std::time::Duration;
/// use umcp::auth::AuthorizationHandler;
/// use umcp::{AuthError, AuthStep};
///
/// struct InAppBrowser {
///     open: Sender<String>,
///     redirected: Mutex<Receiver<String>>,
/// }
///
/// impl AuthorizationHandler for InAppBrowser {
///     fn redirect_uri(&self) -> umcp::Result<String> {
///         Ok("http://127.0.0.1:7777/callback".into())
///     }
///
///     fn authorize(&self, authorization_url: &str) -> umcp::Result<String> {
///         let gone = |what: &str| AuthError::new(AuthStep::Authorization, what);
///         self.open.send(authorization_url.into()).map_err(|_| gone("the window is closed"))?;
///         let redirected = self.redirected.lock().map_err(|_| gone("the window failed"))?;
///         let url = redirected.recv_timeout(Duration::from_secs(300));
///         url.map_err(|_| gone("the user did not come back in time").into())
///     }
/// }
///
/// // Here the window has been redirected already, without a user.
/// let (open, opened) = channel();
/// let (redirect, redirected) = channel();
/// let browser = InAppBrowser { open, redirected: Mutex::new(redirected) };
/// let _ = redirect.send("http://127.0.0.1:7777/callback?code=c&state=s".to_string());
/// let back = browser.authorize("https://auth.example.com/authorize?state=s")?;
/// assert!(opened.try_recv().is_ok_and(|url| url.starts_with("https://auth.example.com/")));
/// assert!(back.ends_with("?code=c&state=s"));
/// # Ok::<(), umcp::Error>(())
/// ```
///
/// The [`auth`](crate::auth) module's example connects a client with a [`LoopbackHandler`].
///
/// [`LoopbackHandler`]: super::LoopbackHandler
pub trait AuthorizationHandler: Send + Sync {
    /// The redirect URI to register and to send with the authorization request. It must be
    /// an `http` URI on a loopback host (`127.0.0.1`, `[::1]` or `localhost`), and stay the
    /// same between calls as long as the registration made with it is to stay valid.
    ///
    /// See the example on [`AuthorizationHandler`].
    ///
    /// # Errors
    ///
    /// When no redirect URI can be had (e.g. no loopback port could be bound).
    fn redirect_uri(&self) -> Result<String>;

    /// Has the user visit `authorization_url` and returns the full URL the authorization
    /// server redirected to (the redirect URI with `code` and `state`, or `error`).
    ///
    /// The URL must be opened without a shell: pass it as one argument to the browser, never
    /// through `sh -c` or `cmd /c`.
    ///
    /// Closing the client does not interrupt this call: the request that needed the
    /// authorization fails with [`Error::Closed`](crate::Error::Closed) once it returns, so
    /// bound the wait for the user (as the example does). [`LoopbackHandler`] gives up within
    /// 50 ms of the close, and [`HeadlessHandler`]'s request is cut like the flow's own.
    ///
    /// See the example on [`AuthorizationHandler`].
    ///
    /// # Errors
    ///
    /// When the user could not be sent there or did not come back in time.
    ///
    /// [`LoopbackHandler`]: super::LoopbackHandler
    /// [`HeadlessHandler`]: super::HeadlessHandler
    fn authorize(&self, authorization_url: &str) -> Result<String>;
}
