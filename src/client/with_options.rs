//! Per-call options: `client.with(&options)`, the client seen through one set of
//! [`RequestOptions`], whose methods are the protocol's.

use super::engine::request_options::RequestOptions;
use super::handle::Client;

/// A [`Client`] whose requests carry per-call [`RequestOptions`]: a timeout of their own,
/// progress, cancellation, `_meta`. Made by [`Client::with`].
///
/// Its methods are the client's requests, with the same names, arguments and results; the
/// client's own methods are these with the default options (the client's request timeout).
/// The options are borrowed, so one set serves many calls; it is the way a ureq request
/// overrides its agent's configuration.
///
/// ```no_run
/// use std::time::Duration;
/// use serde_json::json;
/// use umcp::{CancelHandle, RequestOptions};
///
/// # fn main() -> umcp::Result<()> {
/// # let client = umcp::Client::connect(umcp::StdioConfig::new("server"))?;
/// let cancel = CancelHandle::new();
/// let options = RequestOptions::default()
///     .with_timeout(Duration::from_secs(10))
///     .with_reset_timeout_on_progress(true)
///     .with_progress(|p| log::info!("{}/{:?}", p.progress, p.total))
///     .with_cancel(cancel.clone()); // cancel.cancel() from another thread stops the call
/// let result = client.with(&options).call_tool("longRunningOperation", json!({ "duration": 5 }))?;
/// log::info!("{}", result.text());
///
/// // A short deadline for a health check and a listing:
/// let quick = RequestOptions::default().with_timeout(Duration::from_secs(2));
/// let quick = client.with(&quick);
/// quick.ping()?;
/// for tool in quick.list_all_tools()? {
///     log::info!("{}", tool.name);
/// }
/// # Ok(()) }
/// ```
///
/// For `list_all_*` the options apply to each page's request. What sends no request of its
/// own, or several over time, is on [`Client`] only: [`Client::listen`] and
/// [`Client::follow_tools`] use the client's request timeout, and notifications such as
/// [`Client::notify_roots_list_changed`] wait for nothing. Every method here can also fail with
/// [`Error::Cancelled`](crate::Error::Cancelled) once the options' cancel handle is cancelled.
#[derive(Clone, Copy)]
pub struct WithOptions<'a> {
    pub(super) client: &'a Client,
    pub(super) options: &'a RequestOptions,
}

impl Client {
    /// This client with per-call `options` for the requests made through it:
    /// `client.with(&options).call_tool(…)`.
    ///
    /// See the example on [`WithOptions`].
    pub fn with<'a>(&'a self, options: &'a RequestOptions) -> WithOptions<'a> {
        WithOptions {
            client: self,
            options,
        }
    }
}

impl<'a> WithOptions<'a> {
    /// The client the requests go to.
    ///
    /// See the example on [`WithOptions`].
    pub fn client(&self) -> &'a Client {
        self.client
    }

    /// The options every request made through this view carries.
    ///
    /// See the example on [`WithOptions`].
    pub fn options(&self) -> &'a RequestOptions {
        self.options
    }
}

impl std::fmt::Debug for WithOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WithOptions")
            .field("client", self.client)
            .field("options", self.options)
            .finish()
    }
}
