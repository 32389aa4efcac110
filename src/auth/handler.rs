//! The user's step of the authorization code flow, as a trait the caller supplies.

use crate::error::Result;

/// Takes the user to the authorization server and brings back its redirect.
///
/// [`LoopbackHandler`](super::LoopbackHandler) opens a browser and listens on 127.0.0.1;
/// [`HeadlessHandler`](super::HeadlessHandler) requests the URL itself and reads the
/// redirect, for servers that authorize without a user. Implement it to show the URL in a
/// GUI, or to drive an embedded browser.
///
/// See the example in the [`auth`](crate::auth) module.
pub trait AuthorizationHandler: Send + Sync {
    /// The redirect URI to register and to send with the authorization request. It must be
    /// an `http` URI on a loopback host (`127.0.0.1`, `[::1]` or `localhost`), and stay the
    /// same between calls as long as the registration made with it is to stay valid.
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
    /// # Errors
    ///
    /// When the user could not be sent there or did not come back in time.
    fn authorize(&self, authorization_url: &str) -> Result<String>;
}
