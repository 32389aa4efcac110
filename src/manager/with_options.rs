//! Per-call options across servers: `manager.with(&options)`, the manager seen through one set
//! of [`RequestOptions`], whose methods are its calls.

use crate::client::RequestOptions;

use super::handle::Manager;

/// A [`Manager`] whose calls carry per-call [`RequestOptions`] (timeout, progress, cancel,
/// `_meta`), applied to every request they send to every server. Made by [`Manager::with`];
/// its methods are the manager's, with the same names, arguments and results, and can also
/// fail with [`Error::Cancelled`](crate::Error::Cancelled).
///
/// ```no_run
/// use std::time::Duration;
/// use serde_json::json;
/// use umcp::RequestOptions;
///
/// # fn main() -> umcp::Result<()> {
/// # let manager = umcp::Manager::start(Vec::new(), umcp::ManagerOptions::default());
/// let options = RequestOptions::default()
///     .with_timeout(Duration::from_secs(60))
///     .with_progress(|p| log::info!("{}/{:?}", p.progress, p.total));
/// let result = manager.with(&options).call_tool("search__query", json!({ "q": "mcp" }))?;
/// log::info!("{}", result.text());
/// let quick = RequestOptions::default().with_timeout(Duration::from_secs(2));
/// let (prompts, errors) = manager.with(&quick).list_prompts();
/// log::info!("{} prompts, {} servers did not answer in time", prompts.len(), errors.len());
/// # Ok(()) }
/// ```
#[derive(Clone, Copy)]
pub struct ManagerWithOptions<'a> {
    pub(super) manager: &'a Manager,
    pub(super) options: &'a RequestOptions,
}

impl Manager {
    /// This manager with per-call `options` for the calls made through it:
    /// `manager.with(&options).call_tool(…)`.
    ///
    /// See the example on [`ManagerWithOptions`].
    pub fn with<'a>(&'a self, options: &'a RequestOptions) -> ManagerWithOptions<'a> {
        ManagerWithOptions {
            manager: self,
            options,
        }
    }
}

impl<'a> ManagerWithOptions<'a> {
    /// The manager the calls go to.
    ///
    /// See the example on [`ManagerWithOptions`].
    pub fn manager(&self) -> &'a Manager {
        self.manager
    }

    /// The options every request made through this view carries.
    ///
    /// See the example on [`ManagerWithOptions`].
    pub fn options(&self) -> &'a RequestOptions {
        self.options
    }
}

impl std::fmt::Debug for ManagerWithOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ManagerWithOptions")
            .field("manager", self.manager)
            .field("options", self.options)
            .finish()
    }
}
