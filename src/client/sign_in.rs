//! A sign-in that keeps the caller's deadline and cancel handle:
//! [`OAuth::authorize_within`], here with the cancel handle it takes, above the authorization.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::auth::OAuth;
use crate::error::{Closed, Error, Result, TimeoutKind};
use crate::sync::deadline_after;
use crate::transport::http::provider_deadline::{self, CloseSignal};
use crate::CancelHandle;

impl OAuth {
    /// [`authorize`](Self::authorize) within `timeout`, ended early by `cancel` (a `login`
    /// command with a deadline and Ctrl-C): every wait of the flow ends by then, the user's
    /// step included (a device code's polling, a pasted address, the loopback redirect), and
    /// every request to the authorization server is cut to it.
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use umcp::auth::{OAuth, OAuthConfig};
    /// use umcp::CancelHandle;
    ///
    /// # fn main() -> umcp::Result<()> {
    /// let config = OAuthConfig::device(|device| {
    ///     eprintln!("Visit {} and enter {}", device.verification_uri, device.user_code);
    ///     Ok(())
    /// });
    /// let oauth = OAuth::new("https://mcp.example.com/mcp", config)?;
    /// let cancel = CancelHandle::new(); // cancelled from a Ctrl-C handler, say
    /// match oauth.authorize_within(Duration::from_secs(300), &cancel) {
    ///     Ok(()) => eprintln!("signed in"),
    ///     Err(umcp::Error::Cancelled { .. }) => eprintln!("cancelled"),
    ///     Err(e) => return Err(e),
    /// }
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`authorize`](Self::authorize); [`Error::Cancelled`] (method `authorize`) once
    /// `cancel` was cancelled, and [`Error::Timeout`] when `timeout` passed first.
    pub fn authorize_within(&self, timeout: Duration, cancel: &CancelHandle) -> Result<()> {
        let cancelled = || Error::Cancelled {
            method: "authorize".into(),
        };
        let signal = Arc::new(CloseSignal::default());
        let closer = Arc::clone(&signal);
        let hook = cancel.on_cancel(Arc::new(move || {
            closer.close(Arc::new(Closed {
                reason: "the sign-in was cancelled".into(),
                ..Closed::default()
            }))
        }));
        let Some(_hook) = hook else {
            return Err(cancelled());
        };
        let started = Instant::now();
        let deadline = deadline_after(started, timeout);
        let result = provider_deadline::within(deadline, &signal, || self.authorize());
        match result {
            Err(_) if cancel.is_cancelled() => Err(cancelled()),
            Err(_) if Instant::now() >= deadline => Err(Error::Timeout {
                method: "authorize".into(),
                elapsed: started.elapsed(),
                kind: TimeoutKind::Request,
                stderr_tail: None,
            }),
            other => other,
        }
    }
}
