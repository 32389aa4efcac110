//! The [`Manager`] itself: its servers, started, added, restarted and removed, their
//! statuses and notifications, and closing them all.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[cfg(feature = "oauth")]
use crate::auth::AuthorizationHandler;
use crate::client::Client;
use crate::config::ServerConfig;
use crate::error::{Closed, Error, Result};
use crate::sync::{deadline_in, lock};
use crate::types::SubscriptionFilter;

#[cfg(feature = "oauth")]
use super::auth;
use super::names::Names;
use super::options::ManagerOptions;
use super::refresh::ManagedSubscription;
use super::slot::Slot;
use super::status::{Hub, ManagerNotifications, ServerStatus, StatusEvents};
use super::supervisor::{self, stop_all, Command, Handle};

/// How long [`Manager::authorize`] waits for the reconnection beyond the start-up timeout.
#[cfg(feature = "oauth")]
const SETTLE_MARGIN: Duration = Duration::from_secs(2);

/// Many MCP servers behind one handle.
///
/// [`Manager::start`] returns at once: servers connect in the background, in parallel, each
/// within its own start-up timeout. Use [`Manager::wait_ready`] to wait until every server
/// has connected or failed, or just call: a call to a server that is still starting waits for
/// it, up to its start-up timeout.
///
/// Tools are offered under namespaced names, `server__tool` by default; see
/// [`Manager::known_tools`] for how clashes are resolved. While a server starts, its tools from the
/// last run are offered from the cache, marked [`stale`](crate::ToolEntry::stale).
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
    pub(super) options: ManagerOptions,
    hub: Arc<Hub>,
    servers: Mutex<BTreeMap<String, Handle>>,
    closed: Mutex<bool>,
    /// The names given to tools and prompts, each bound to its server for the manager's life.
    pub(super) tool_names: Mutex<Names>,
    pub(super) prompt_names: Mutex<Names>,
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

    /// Adds a server and starts it (unless it is disabled).
    ///
    /// ```no_run
    /// use umcp::{ServerConfig, StdioConfig};
    ///
    /// # fn main() -> umcp::Result<()> {
    /// # let manager = umcp::Manager::start(Vec::new(), umcp::ManagerOptions::default());
    /// manager.add(ServerConfig::new("time", StdioConfig::new("uvx").arg("mcp-server-time")))?;
    /// manager.restart("time")?; // reconnect now, e.g. after its configuration file changed
    /// manager.remove("time")?; // closes it; its tools are no longer offered
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Config`] when a server of that name exists, [`Error::Closed`] after
    /// [`Manager::close`], [`Error::Io`] when its thread cannot be started.
    pub fn add(&self, config: ServerConfig) -> Result<()> {
        let closed = lock(&self.closed);
        if *closed {
            return Err(manager_closed());
        }
        let mut servers = lock(&self.servers);
        if servers.contains_key(&config.name) {
            return Err(Error::Config(format!(
                "a server named `{}` exists already",
                config.name
            )));
        }
        let name = config.name.clone();
        let startup = config
            .startup_timeout
            .unwrap_or(self.options.startup_timeout);
        let cache_dir = self.options.cache_dir.as_deref();
        let screen = self.options.screen_for(&config);
        let hub = Arc::clone(&self.hub);
        let slot = Arc::new(Slot::new(config, screen, startup, cache_dir, hub));
        let (commands, commands_rx) = crossbeam_channel::bounded(supervisor::COMMANDS);
        // An enabled server's supervisor reports `Connecting` as it starts.
        let thread = if slot.config.disabled {
            self.hub.event(&name, &ServerStatus::Disabled);
            None
        } else {
            let hub = Arc::clone(&self.hub);
            let started =
                supervisor::spawn(Arc::clone(&slot), self.options.clone(), hub, commands_rx);
            Some(started.map_err(Error::io)?)
        };
        servers.insert(
            name,
            Handle {
                slot,
                commands,
                thread,
            },
        );
        Ok(())
    }

    /// Stops a server and forgets it, waiting up to the close timeout for it to shut down.
    ///
    /// See the example on [`Manager::add`].
    ///
    /// # Errors
    ///
    /// [`Error::Config`] when there is no server of that name.
    pub fn remove(&self, name: &str) -> Result<()> {
        let entry = lock(&self.servers)
            .remove(name)
            .ok_or_else(|| unknown_server(name))?;
        stop_all(vec![entry], deadline_in(self.options.close_timeout));
        Ok(())
    }

    /// Closes a server's connection and connects it again, with a fresh count of attempts.
    /// This is how a server that failed for good, or needs authorization, is retried.
    ///
    /// See the example on [`Manager::add`].
    ///
    /// # Errors
    ///
    /// [`Error::Config`] when there is no server of that name, or it is disabled or stopped.
    pub fn restart(&self, name: &str) -> Result<()> {
        let (slot, commands) = {
            let servers = lock(&self.servers);
            let entry = servers.get(name).ok_or_else(|| unknown_server(name))?;
            if entry.thread.is_none() {
                return Err(Error::Config(format!("server `{name}` is not running")));
            }
            (Arc::clone(&entry.slot), entry.commands.clone())
        };
        // Interrupt first: the attempt this stops is then always the one under way before
        // the restart, never the new one the command starts.
        slot.tracker.interrupt_attempt();
        slot.ping.cancel();
        if !slot.restart_queued.swap(true, Ordering::SeqCst) {
            let _ = commands.try_send(Command::Restart);
        }
        Ok(())
    }

    /// Subscribes to `filter` on server `server`, now and after every reconnection.
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use umcp::types::SubscriptionFilter;
    /// use umcp::SubscriptionEvent;
    ///
    /// # fn main() -> umcp::Result<()> {
    /// # let manager = umcp::Manager::start(Vec::new(), umcp::ManagerOptions::default());
    /// let filter = SubscriptionFilter::new().resource("file:///tmp/notes.txt");
    /// let subscription = manager.listen("files", filter)?;
    /// while let Some(event) = subscription.recv_timeout(Duration::from_secs(30)) {
    ///     if let SubscriptionEvent::Notification(notification) = event {
    ///         log::info!("{}: {}", subscription.server(), notification.method());
    ///     }
    /// }
    /// if subscription.dropped() > 0 {
    ///     log::warn!("{} events were dropped unread", subscription.dropped());
    /// }
    /// subscription.close();
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// An unknown server name.
    pub fn listen(&self, server: &str, filter: SubscriptionFilter) -> Result<ManagedSubscription> {
        let slot = self.slot(server)?;
        Ok(ManagedSubscription::open(server, &slot, filter))
    }

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
    #[cfg(feature = "oauth")]
    pub fn authorize(&self, name: &str, handler: Arc<dyn AuthorizationHandler>) -> Result<()> {
        let slot = self.slot(name)?;
        if slot.config.disabled {
            return Err(Error::Config(format!("server `{name}` is disabled")));
        }
        auth::authorize(&slot.config, slot.status(), &self.options.auth, handler)?;
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
    /// # Ok::<(), umcp::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`authorize`](Self::authorize), and [`Error::Cancelled`] or [`Error::Timeout`] for a
    /// sign-in cut short.
    #[cfg(feature = "oauth")]
    pub fn sign_in(
        &self,
        name: &str,
        handler: Arc<dyn AuthorizationHandler>,
        timeout: std::time::Duration,
        cancel: &crate::CancelHandle,
    ) -> Result<()> {
        let slot = self.slot(name)?;
        if slot.config.disabled {
            return Err(Error::Config(format!("server `{name}` is disabled")));
        }
        auth::sign_in(&slot.config, &self.options.auth, handler, timeout, cancel)?;
        self.reconnect_signed_in(name)
    }

    /// Signs out of a server that has [OAuth settings](crate::OAuthSettings): revokes its tokens
    /// where the authorization server offers revocation (RFC 7009), forgets them and the client
    /// registration in the manager's token store (those of the server's profile), and, when the
    /// server is running, restarts it, so that its connection drops the tokens it held.
    ///
    /// ```no_run
    /// # let manager = umcp::Manager::start(Vec::new(), umcp::ManagerOptions::default());
    /// let revocation = manager.sign_out("search")?;
    /// log::info!("signed out of search: {revocation}");
    /// # Ok::<(), umcp::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Config`] for an unknown server or one without OAuth settings; the token store's
    /// error when it cannot be written. A failed revocation is not an error but
    /// [`Revocation::Failed`](crate::auth::Revocation::Failed).
    #[cfg(feature = "oauth")]
    pub fn sign_out(&self, name: &str) -> Result<crate::auth::Revocation> {
        let slot = self.slot(name)?;
        let revocation = auth::sign_out(&slot.config, &self.options.auth)?;
        if self.restart(name).is_err() {
            log::debug!("server `{name}`: not running; nothing to restart");
        }
        Ok(revocation)
    }

    /// Reconnects a server that has new tokens and waits (up to its start-up timeout) for the
    /// outcome.
    #[cfg(feature = "oauth")]
    fn reconnect_signed_in(&self, name: &str) -> Result<()> {
        let slot = self.slot(name)?;
        log::debug!("server `{name}`: authorized; reconnecting");
        let seen = slot.state().version;
        self.restart(name)?;
        let deadline = deadline_in(slot.startup_timeout.saturating_add(SETTLE_MARGIN));
        slot.wait_settled_after(seen, deadline);
        slot.client().map(|_| ())
    }

    pub(super) fn slots(&self) -> Vec<Arc<Slot>> {
        lock(&self.servers)
            .values()
            .map(|e| Arc::clone(&e.slot))
            .collect()
    }

    pub(super) fn slot(&self, name: &str) -> Result<Arc<Slot>> {
        let servers = lock(&self.servers);
        servers
            .get(name)
            .map(|e| Arc::clone(&e.slot))
            .ok_or_else(|| unknown_server(name))
    }

    pub(super) fn client_for(&self, server: &str) -> Result<Arc<Client>> {
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
