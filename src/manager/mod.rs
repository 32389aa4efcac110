//! The multi-server manager: many configured servers started in parallel, one namespaced tool
//! list, calls routed to the right server, and reconnection when a server goes away.
//!
//! Every server gets a supervisor thread (`umcp-manager-<name>`) that connects it, lists its
//! tools, watches the connection and reconnects with backoff. One server failing never
//! fails the others: each has its own [`ServerStatus`]. HTTP servers with OAuth settings
//! (feature `oauth`) are authorized with tokens from the manager's token store, refreshed
//! silently, and through the manager's user step or [`Manager::authorize`] when a user is
//! needed.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::client::Client;
use crate::config::ServerConfig;
use crate::error::{Closed, Error, Result};
pub(crate) use crate::sync::lock;

mod asking;
#[cfg(feature = "oauth")]
mod auth;
mod cache;
mod health;
mod lists;
mod membership;
mod names;
mod options;
mod refresh;
mod screened;
mod slot;
mod status;
mod supervisor;
mod tools;
mod tracked;
mod with_options;

pub use lists::ResourceTemplateEntry;
pub use options::ManagerOptions;
pub use refresh::ManagedSubscription;
pub use status::{
    ManagerNotifications, NotificationSource, PromptEntry, ResourceEntry, ServerError,
    ServerStatus, StatusEvent, StatusEvents, TaggedNotification, ToolEntry,
};
pub use with_options::ManagerWithOptions;

use crate::sync::deadline_in;
use names::Names;
use slot::Slot;
use status::Hub;
use supervisor::{stop_all, Handle};

/// Many MCP servers behind one handle.
///
/// [`Manager::start`] returns at once: servers connect in the background, in parallel, each
/// within its own start-up timeout. Use [`Manager::wait_ready`] to wait until every server
/// has connected or failed, or just call: a call to a server that is still starting waits for
/// it, up to its start-up timeout.
///
/// Tools are offered under namespaced names, `server__tool` by default; see
/// [`Manager::known_tools`] for how clashes are resolved. While a server starts, its tools from the
/// last run are offered from the cache, marked [`stale`](ToolEntry::stale).
///
/// When a connection is lost, calls in flight fail with [`Error::Closed`] (tool calls are
/// never replayed) and the server is reconnected with exponential backoff, a bounded number
/// of times ([`ManagerOptions::with_reconnect_attempts`]).
///
/// HTTP servers with [OAuth settings](crate::OAuthSettings) (feature `oauth`) use the tokens
/// of the manager's token store and refresh them silently. One that needs the user gets the
/// manager's user step (`ManagerOptions::with_authorization_handler` or
/// `with_loopback_authorization`), or else waits in [`ServerStatus::NeedsAuthorization`]
/// for `Manager::authorize`.
///
/// `Manager` is `Send + Sync`; share it in an `Arc`. Dropping it closes every server.
///
/// ```no_run
/// use std::time::Duration;
/// use umcp::{ConfigFile, Manager, ManagerOptions};
///
/// # fn main() -> umcp::Result<()> {
/// let file = ConfigFile::load("mcp.json")?;
/// for error in &file.errors {
///     log::warn!("skipped {error}");
/// }
/// let manager = Manager::start(file.servers, ManagerOptions::default());
/// manager.wait_ready(Duration::from_secs(30));
/// for (name, status) in manager.statuses() {
///     log::info!("{name}: {status}");
/// }
/// for entry in manager.known_tools() {
///     log::info!("{}", entry.name);
/// }
/// let result = manager.call_tool("files__read_file", serde_json::json!({ "path": "/tmp/x" }))?;
/// log::info!("{}", result.text());
/// # Ok(()) }
/// ```
pub struct Manager {
    options: ManagerOptions,
    hub: Arc<Hub>,
    servers: Mutex<BTreeMap<String, Handle>>,
    closed: Mutex<bool>,
    /// The names given to tools and prompts, each bound to its server for the manager's life.
    tool_names: Mutex<Names>,
    prompt_names: Mutex<Names>,
}

impl Manager {
    /// Starts every enabled server in the background and returns at once.
    ///
    /// A configuration whose name is already taken by an earlier one is skipped.
    ///
    /// See the example on [`Manager`].
    pub fn start(configs: Vec<ServerConfig>, options: ManagerOptions) -> Manager {
        let manager = Manager {
            hub: Arc::new(Hub::new(options.queue_capacity)),
            options,
            servers: Mutex::new(BTreeMap::new()),
            closed: Mutex::new(false),
            tool_names: Mutex::new(Names::default()),
            prompt_names: Mutex::new(Names::default()),
        };
        for config in configs {
            if let Err(err) = manager.add(config) {
                log::debug!("{err}");
            }
        }
        manager
    }

    /// The names of the servers, sorted.
    ///
    /// See the example on [`Manager::status`].
    pub fn server_names(&self) -> Vec<String> {
        lock(&self.servers).keys().cloned().collect()
    }

    /// The status of a server, if there is one of that name.
    ///
    /// ```no_run
    /// # fn main() -> umcp::Result<()> {
    /// # let manager = umcp::Manager::start(Vec::new(), umcp::ManagerOptions::default());
    /// for name in manager.server_names() {
    ///     match manager.status(&name) {
    ///         Some(status) if status.is_connected() => log::info!("{name}: up"),
    ///         Some(status) => log::warn!("{name}: {} ({:?})", status.label(), status.error()),
    ///         None => log::warn!("{name}: removed meanwhile"),
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    pub fn status(&self, name: &str) -> Option<ServerStatus> {
        lock(&self.servers).get(name).map(|e| e.slot.status())
    }

    /// Every server's status, sorted by name.
    ///
    /// See the example on [`Manager`].
    pub fn statuses(&self) -> Vec<(String, ServerStatus)> {
        self.slots()
            .iter()
            .map(|slot| (slot.name().to_owned(), slot.status()))
            .collect()
    }

    /// When the server's current connection was made: the end of its connect, before the
    /// listings the manager runs on a new connection (so a deadline counted from here covers
    /// them). `None` unless the server is connected.
    ///
    /// ```no_run
    /// # let manager = umcp::Manager::start(Vec::new(), umcp::ManagerOptions::default());
    /// if let Some(since) = manager.connected_since("files") {
    ///     log::info!("files: connected for {:?}", since.elapsed());
    /// }
    /// ```
    pub fn connected_since(&self, name: &str) -> Option<Instant> {
        let slot = lock(&self.servers).get(name).map(|e| Arc::clone(&e.slot))?;
        let since = slot.state().connected_at;
        since
    }

    /// Waits until every server has settled (connected, failed, needs authorization or is
    /// disabled), or until `timeout` passes. Returns whether they all settled.
    ///
    /// The servers are looked at one after the other, so `true` means each was seen settled
    /// during the wait, not that all are at the same moment: a server that failed may be
    /// connecting again by the time this returns (a retry after its back-off, see
    /// [`ServerStatus::Failed`]), and [`statuses`](Self::statuses) then shows it connecting.
    ///
    /// See the example on [`Manager`].
    pub fn wait_ready(&self, timeout: Duration) -> bool {
        let deadline = deadline_in(timeout);
        self.slots().iter().all(|slot| slot.wait_settled(deadline))
    }

    /// The client of a server, for anything the manager does not route itself, waiting while
    /// the server is starting. After a reconnection the manager uses a new client, and this
    /// one stays closed.
    ///
    /// ```no_run
    /// # fn main() -> umcp::Result<()> {
    /// # let manager = umcp::Manager::start(Vec::new(), umcp::ManagerOptions::default());
    /// let client = manager.client("files")?;
    /// client.ping()?;
    /// let templates = client.list_all_resource_templates()?;
    /// # let _ = templates;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Manager::call_tool`], without the call.
    pub fn client(&self, server: &str) -> Result<Arc<Client>> {
        self.client_for(server)
    }

    /// The notifications of every server, tagged with the server's name.
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use umcp::types::ServerNotification;
    ///
    /// # fn main() -> umcp::Result<()> {
    /// # let manager = umcp::Manager::start(Vec::new(), umcp::ManagerOptions::default());
    /// let notifications = manager.notifications();
    /// while let Some(tagged) = notifications.recv_timeout(Duration::from_secs(1)) {
    ///     if let ServerNotification::LoggingMessage(message) = &tagged.notification {
    ///         log::info!("{}: {}", tagged.server, message.data);
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    pub fn notifications(&self) -> ManagerNotifications {
        self.hub.notifications()
    }

    /// The status changes of every server.
    ///
    /// ```no_run
    /// use umcp::ServerStatus;
    ///
    /// # fn main() -> umcp::Result<()> {
    /// # let manager = umcp::Manager::start(Vec::new(), umcp::ManagerOptions::default());
    /// let events = manager.status_events();
    /// for event in events.iter() {
    ///     log::info!("{} is now {}", event.server, event.status);
    ///     if let ServerStatus::Failed { .. } = event.status {
    ///         manager.restart(&event.server)?;
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    pub fn status_events(&self) -> StatusEvents {
        self.hub.status_events()
    }

    /// Closes every server in parallel and returns within the close timeout; a server that
    /// has not finished by then is left to finish on its own thread. Idempotent; also done on
    /// drop.
    ///
    /// ```no_run
    /// # fn main() -> umcp::Result<()> {
    /// # let manager = umcp::Manager::start(Vec::new(), umcp::ManagerOptions::default());
    /// manager.close(); // every server closed, within its close timeout
    /// assert!(manager.client("files").is_err());
    /// # Ok(()) }
    /// ```
    pub fn close(&self) {
        let mut closed = lock(&self.closed);
        if *closed {
            return;
        }
        *closed = true;
        // The stopped servers stay in the table, so their status explains later failed calls.
        let handles: Vec<Handle> = lock(&self.servers)
            .values_mut()
            .map(|handle| Handle {
                slot: Arc::clone(&handle.slot),
                commands: handle.commands.clone(),
                thread: handle.thread.take(),
            })
            .collect();
        stop_all(handles, deadline_in(self.options.close_timeout));
        self.hub.shut();
    }

    fn slots(&self) -> Vec<Arc<Slot>> {
        lock(&self.servers)
            .values()
            .map(|e| Arc::clone(&e.slot))
            .collect()
    }

    fn slot(&self, name: &str) -> Result<Arc<Slot>> {
        let servers = lock(&self.servers);
        servers
            .get(name)
            .map(|e| Arc::clone(&e.slot))
            .ok_or_else(|| unknown_server(name))
    }

    fn client_for(&self, server: &str) -> Result<Arc<Client>> {
        self.slot(server)?.client()
    }
}

impl Drop for Manager {
    fn drop(&mut self) {
        self.close();
    }
}

impl std::fmt::Debug for Manager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Manager")
            .field("servers", &self.statuses())
            .finish_non_exhaustive()
    }
}

fn unknown_server(name: &str) -> Error {
    Error::Config(format!("no server named `{name}`"))
}

fn manager_closed() -> Error {
    Error::Closed(Arc::new(Closed {
        reason: "the manager is closed".into(),
        ..Closed::default()
    }))
}

#[cfg(test)]
mod tests;
