//! Resource subscriptions of the handshake era (`resources/subscribe`), remembered so that a
//! new session subscribes again.

use serde_json::json;

use crate::error::Result;
use crate::sync::lock;

use super::super::{Client, RequestOptions};

impl Client {
    /// Subscribes to updates of a resource (`notifications/resources/updated`). The
    /// subscription is restored if an HTTP session has to be re-initialized.
    ///
    /// ```no_run
    /// use umcp::types::ServerNotification;
    ///
    /// # fn main() -> umcp::Result<()> {
    /// # let client = umcp::Client::connect(umcp::StdioConfig::new("server"))?;
    /// let uri = "file:///project/build.log";
    /// client.subscribe_resource(uri)?;
    /// for notification in client.notifications().iter() {
    ///     if let ServerNotification::ResourceUpdated(updated) = notification {
    ///         let fresh = client.read_resource(&updated.uri)?;
    ///         log::info!("{} changed: {} parts", updated.uri, fresh.contents.len());
    ///         break;
    ///     }
    /// }
    /// client.unsubscribe_resource(uri)?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Unsupported`](crate::Error::Unsupported) unless the server advertises
    /// `resources.subscribe`.
    pub fn subscribe_resource(&self, uri: &str) -> Result<()> {
        self.subscribe_resource_with(uri, &RequestOptions::default())
    }

    /// [`Client::subscribe_resource`] with per-request options.
    ///
    /// See the example on [`Client::subscribe_resource`].
    ///
    /// # Errors
    ///
    /// As [`Client::subscribe_resource`], plus [`Error::Cancelled`](crate::Error::Cancelled).
    pub fn subscribe_resource_with(&self, uri: &str, options: &RequestOptions) -> Result<()> {
        self.require("resources/subscribe", "resources.subscribe")?;
        self.request_raw("resources/subscribe", Some(json!({ "uri": uri })), options)?;
        let mut subscriptions = lock(&self.shared.subscriptions);
        if !subscriptions.iter().any(|s| s == uri) {
            subscriptions.push(uri.to_owned());
        }
        Ok(())
    }

    /// Ends a subscription.
    ///
    /// See the example on [`Client::subscribe_resource`].
    ///
    /// # Errors
    ///
    /// As [`Client::subscribe_resource`].
    pub fn unsubscribe_resource(&self, uri: &str) -> Result<()> {
        self.unsubscribe_resource_with(uri, &RequestOptions::default())
    }

    /// [`Client::unsubscribe_resource`] with per-request options.
    ///
    /// See the example on [`Client::subscribe_resource`].
    ///
    /// # Errors
    ///
    /// As [`Client::unsubscribe_resource`], plus [`Error::Cancelled`](crate::Error::Cancelled).
    pub fn unsubscribe_resource_with(&self, uri: &str, options: &RequestOptions) -> Result<()> {
        self.require("resources/unsubscribe", "resources.subscribe")?;
        lock(&self.shared.subscriptions).retain(|s| s != uri);
        self.request_raw(
            "resources/unsubscribe",
            Some(json!({ "uri": uri })),
            options,
        )
        .map(drop)
    }
}
