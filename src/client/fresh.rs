//! `client.follow_tools()`: the tool list a host loop keeps, listed again whenever the server
//! announces a change, in either era.

use std::time::Duration;

use crate::error::Result;
use crate::types::{ServerNotification, SubscriptionFilter, Tool};

use super::follow::listen::Subscription;
use super::follow::state::SubscriptionEvent;
use super::handle::Client;

/// The server's tools, kept fresh through a subscription to tool-list changes.
///
/// ```no_run
/// # fn main() -> umcp::Result<()> {
/// # let client = umcp::Client::connect(umcp::StdioConfig::new("server"))?;
/// let mut tools = client.follow_tools()?;
/// loop {
///     // … hand `tools.tools()` to the model, run its calls …
///     if tools.wait_for_change(std::time::Duration::from_secs(1))? {
///         log::info!("{} tools now", tools.tools().len());
///     }
/// #   break;
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct FreshTools<'c> {
    client: &'c Client,
    sub: Subscription,
    tools: Vec<Tool>,
    stale: bool,
}

impl Client {
    /// Subscribes to tool-list changes and lists the tools: the returned list is listed
    /// again whenever the server announces a change (or a subscription gap may have hidden
    /// one). Works the same in both protocol eras.
    ///
    /// See the example on [`FreshTools`].
    ///
    /// # Errors
    ///
    /// As [`Client::listen`] and [`Client::list_all_tools`].
    pub fn follow_tools(&self) -> Result<FreshTools<'_>> {
        // Subscribed first, so a change during the first listing is not missed.
        let sub = self.listen(SubscriptionFilter::new().tools())?;
        let tools = self.list_all_tools()?;
        Ok(FreshTools {
            client: self,
            sub,
            tools,
            stale: false,
        })
    }
}

impl FreshTools<'_> {
    /// The tools as last listed.
    ///
    /// See the example on [`FreshTools`].
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// Whether the server announces tool-list changes at all (from its acknowledgement or,
    /// in the handshake era, its capabilities): without them the list is listed only once.
    ///
    /// See the example on [`FreshTools`].
    pub fn is_followed(&self) -> bool {
        self.sub.acknowledged().tools_list_changed
    }

    /// Whether a change was announced that a failed listing has not picked up yet.
    ///
    /// See the example on [`FreshTools`].
    pub fn is_stale(&self) -> bool {
        self.stale
    }

    /// Lists the tools again if a change was announced since the last call, without
    /// waiting; returns whether the list was listed again.
    ///
    /// See the example on [`FreshTools`].
    ///
    /// # Errors
    ///
    /// As [`Client::list_all_tools`]; the list stays stale and the next call tries again.
    pub fn refresh(&mut self) -> Result<bool> {
        while let Some(event) = self.sub.try_recv() {
            self.note(&event);
        }
        if !self.stale {
            return Ok(false);
        }
        self.tools = self.client.list_all_tools()?;
        self.stale = false;
        Ok(true)
    }

    /// Waits up to `timeout` for a change, then lists the tools again; returns whether it
    /// did.
    ///
    /// See the example on [`FreshTools`].
    ///
    /// # Errors
    ///
    /// As [`FreshTools::refresh`].
    pub fn wait_for_change(&mut self, timeout: Duration) -> Result<bool> {
        if !self.stale {
            if let Some(event) = self.sub.recv_timeout(timeout) {
                self.note(&event);
            }
        }
        self.refresh()
    }

    fn note(&mut self, event: &SubscriptionEvent) {
        match event {
            SubscriptionEvent::Notification(ServerNotification::ToolListChanged)
            | SubscriptionEvent::Resubscribed { .. } => self.stale = true,
            SubscriptionEvent::Notification(_) => {}
        }
    }
}
