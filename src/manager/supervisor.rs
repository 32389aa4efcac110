//! The supervisor thread of one server: connect, list tools, watch the connection, and
//! reconnect with backoff when it is lost.
//!
//! Each server has one thread, `umcp-manager-<name>`, which owns the server's client. It ends
//! on [`Command::Stop`], or when the manager drops its end of the command channel.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};

use crate::client::{Client, Options, ProtocolMode};
use crate::error::{Error, Result};
use crate::transport::Connect;
use crate::types::{ServerNotification, Tool};

#[cfg(feature = "oauth")]
use super::auth::ServerAuth;
use super::cache;
use super::health::Watch;
use super::options::ManagerOptions;
use super::refresh::{self, Fresh};
use super::slot::Slot;
use super::status::{Hub, NotificationSource, ServerStatus, TaggedNotification};
use super::tracked::Tracked;

mod retry;

use retry::Next;

/// How often a connected server's client is checked for a closed connection.
const WATCH_INTERVAL: Duration = Duration::from_millis(100);

/// How often a thread waiting for a command re-checks the stop flag.
const IDLE_CHECK: Duration = Duration::from_secs(1);

/// The bound of a supervisor's command queue: one restart (later ones are coalesced with it
/// until the supervisor takes it, see `Slot::restart_queued`) and the one stop.
pub(crate) const COMMANDS: usize = 2;

/// What the manager asks of a supervisor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Command {
    /// Close the connection and end the thread.
    Stop,
    /// Close the connection and connect again, with a fresh attempt count.
    Restart,
}

/// A running supervisor as the manager holds it: the server's shared state and the means to
/// stop its thread (`None` for a disabled or stopped server).
pub(crate) struct Handle {
    pub(crate) slot: Arc<Slot>,
    pub(crate) commands: Sender<Command>,
    pub(crate) thread: Option<(JoinHandle<()>, Receiver<()>)>,
}

/// Stops servers in parallel: every one is told first, then each is waited for until the
/// shared deadline. A thread still busy then finishes on its own (its waits are bounded).
pub(crate) fn stop_all(handles: Vec<Handle>, deadline: Instant) {
    for handle in &handles {
        handle.slot.stop();
        let _ = handle.commands.try_send(Command::Stop);
    }
    for handle in handles {
        match handle.thread {
            Some((thread, done)) => match done.recv_deadline(deadline) {
                Err(RecvTimeoutError::Timeout) => {
                    log::debug!("server `{}` did not stop in time", handle.slot.name());
                    // It ends on its own thread; its name may be reused before then.
                    handle.slot.detach();
                }
                _ => {
                    let _ = thread.join();
                }
            },
            None => handle.slot.set_status(ServerStatus::Stopped),
        }
        handle.slot.tracker.join_stoppers(deadline);
    }
}

/// Starts the supervisor of `slot`. The returned receiver disconnects when the thread ends.
pub(crate) fn spawn(
    slot: Arc<Slot>,
    options: ManagerOptions,
    hub: Arc<Hub>,
    commands: Receiver<Command>,
) -> std::io::Result<(JoinHandle<()>, Receiver<()>)> {
    let (done_tx, done_rx) = crossbeam_channel::bounded::<()>(0);
    // A thread's name cannot hold a NUL byte (spawning would panic); a server's can.
    let name = format!("umcp-manager-{}", slot.name()).replace('\0', "?");
    let supervisor = Supervisor {
        #[cfg(feature = "oauth")]
        auth: ServerAuth::new(&slot.config, &options.auth),
        slot,
        options,
        hub,
        commands,
        saved_era_failed: AtomicBool::new(false),
    };
    let handle = std::thread::Builder::new().name(name).spawn(move || {
        supervisor.run();
        drop(done_tx);
    })?;
    Ok((handle, done_rx))
}

struct Supervisor {
    slot: Arc<Slot>,
    options: ManagerOptions,
    hub: Arc<Hub>,
    commands: Receiver<Command>,
    /// Set once a connection with the era verdict from the disk cache failed: the server
    /// may have changed, so later attempts probe.
    saved_era_failed: AtomicBool,
    /// The OAuth side of a server with OAuth settings.
    #[cfg(feature = "oauth")]
    auth: Option<ServerAuth>,
}

impl Supervisor {
    fn run(&self) {
        // Failures in a row: failed attempts, and connections lost soon after they were made.
        let mut failures = 0;
        let mut reconnects = 0;
        let mut connected_before = false;
        loop {
            self.slot.tracker.reset();
            if self.slot.is_stopping() {
                break;
            }
            self.slot.set_status(ServerStatus::Connecting {
                attempt: failures + 1,
            });
            let client = match self.connect_guarded() {
                Ok(connected) => connected,
                Err(err) => {
                    failures += 1;
                    match self.after_failure(err, failures) {
                        Next::Retry => continue,
                        Next::Restart => {
                            failures = 0;
                            continue;
                        }
                        Next::Stop => break,
                    }
                }
            };
            if connected_before {
                reconnects += 1;
            }
            connected_before = true;
            let since = Instant::now();
            let tools = self.list_tools(&client);
            // Hook: follow the server's lists and re-open managed subscriptions (`refresh.rs`).
            let fresh = Fresh::open(&self.slot, &client, reconnects > 0);
            refresh::relist_prompts(&self.slot, &client);
            // Until here a restart closes the connection, as it would a start under way: a
            // server that answered its handshake and then hangs would hold the listings (and
            // the restart) for their request timeouts.
            self.slot.tracker.finished();
            // Closed meanwhile (a restart, a stop, a crash): never shown as connected.
            if client.closed().is_none() {
                self.slot
                    .set_connected(Arc::clone(&client), since, tools, reconnects);
            }
            let exit = self.watch(&client, &fresh);
            client.close();
            let stop = match exit {
                Ok(Command::Stop) => true,
                Ok(Command::Restart) => {
                    failures = 0;
                    false
                }
                Err(error) => {
                    // A connection that outlived the longest backoff was healthy: start over.
                    if since.elapsed() >= self.options.reconnect_max {
                        failures = 0;
                    } else {
                        failures += 1;
                    }
                    log::debug!("server `{}` lost its connection: {error}", self.slot.name());
                    match self.after_failure(error, failures) {
                        Next::Retry => false,
                        Next::Restart => {
                            failures = 0;
                            false
                        }
                        Next::Stop => true,
                    }
                }
            };
            if stop {
                break;
            }
        }
        self.slot.set_status(ServerStatus::Stopped);
    }

    /// [`connect`](Self::connect), with a panic of the user's code it runs (an authorization
    /// handler or opener, a token store) taken as a failed attempt: the thread lives on to
    /// report it, retry and obey a restart or stop.
    fn connect_guarded(&self) -> Result<Arc<Client>> {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.connect())).unwrap_or_else(
            |payload| {
                let what = payload
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_owned())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                log::error!("server `{}`: connecting panicked: {what}", self.slot.name());
                self.slot.tracker.finished();
                Err(Error::io(std::io::Error::other(format!(
                    "connecting panicked: {what}"
                ))))
            },
        )
    }

    /// Connects with the server's start-up deadline, forwarding its notifications to the
    /// manager and asking for a tool refresh when its tool list changes.
    fn connect(&self) -> Result<Arc<Client>> {
        #[cfg(feature = "oauth")]
        if let Some(auth) = &self.auth {
            return self.connect_authorized(auth);
        }
        let config = &self.slot.config;
        let startup = self.slot.startup_timeout;
        self.connect_via(config.connector_with(Some(startup), config.request_timeout)?)
    }

    /// Connects a server with OAuth settings. When it refuses for want of a user's step and
    /// the manager has one, the user is asked and the server connected again, once.
    #[cfg(feature = "oauth")]
    fn connect_authorized(&self, auth: &ServerAuth) -> Result<Arc<Client>> {
        let config = &self.slot.config;
        let attempt = auth.attempt()?;
        let connector = || -> Result<Box<dyn Connect>> {
            let http = config
                .http_config(Some(self.slot.startup_timeout), config.request_timeout)
                .ok_or_else(|| Error::Config("OAuth needs an HTTP server".into()))?;
            Ok(Box::new(http.credentials(attempt.credentials())))
        };
        let connected = match self.connect_via(connector()?) {
            Err(err) if attempt.ask_user(&err)? => {
                // The user may have taken long: a stop in the meantime wins.
                self.slot.tracker.reset();
                if self.slot.is_stopping() {
                    return Err(err);
                }
                self.connect_via(connector()?)
            }
            other => other,
        };
        if connected.is_ok() {
            attempt.connected();
        }
        connected
    }

    /// Connects through `connector`, tracked so that a restart or stop can interrupt it.
    fn connect_via(&self, connector: Box<dyn Connect>) -> Result<Arc<Client>> {
        let tracked = Tracked {
            inner: connector,
            tracker: Arc::clone(&self.slot.tracker),
        };
        let mut options = self.client_options();
        // Hook: a verdict saved by an earlier run of the host skips the probe (`cache.rs`).
        let saved = self.saved_era(&options);
        if let Some(verdict) = &saved {
            options = options.with_protocol_mode(verdict.clone());
        }
        let connected = Client::connect_with_options(tracked, options);
        if connected.is_err() {
            if saved.is_some() {
                self.saved_era_failed.store(true, Ordering::SeqCst);
            }
            // A connection made stays interruptible through its first listings (`run`).
            self.slot.tracker.finished();
        }
        Ok(Arc::new(connected?))
    }

    fn client_options(&self) -> Options {
        let base = &self.options.client;
        let user = base.engine.on_notification.clone();
        let notes = self.hub.notes();
        let server = self.slot.name().to_owned();
        let protocol = self.slot.config.protocol.clone();
        let options = base.clone();
        // The server's own `protocol` setting wins over the manager's client options.
        let options = match protocol {
            Some(mode) => options.with_protocol_mode(mode),
            None => options,
        };
        let options = match &self.options.elicitation {
            Some(handler) => handler.install(options, &server),
            None => options,
        };
        let options = match &self.options.sampling {
            Some(handler) => handler.install(options, &server),
            None => options,
        };
        let mut options = options;
        options.tools = self.slot.screen.clone();
        // Subscriptions are read on the supervisor's ticks (and by the user's own reader):
        // a burst between two must fit.
        options.listen_capacity = Some(refresh::MANAGED_CAPACITY);
        options
            .with_startup_timeout(self.slot.startup_timeout)
            .with_request_timeout(
                self.slot
                    .config
                    .request_timeout
                    .unwrap_or(base.request_timeout()),
            )
            // Notifications are read from the manager's queue; the client's own stays small.
            .with_notification_capacity(1)
            .with_notification_callback(move |note: &ServerNotification| {
                if let Some(user) = &user {
                    user(note);
                }
                if let Some(notes) = &notes {
                    notes.push(TaggedNotification {
                        server: server.clone(),
                        notification: note.clone(),
                        source: NotificationSource::Session,
                    });
                }
            })
    }

    /// The era verdict an earlier run saved in the cache directory, for an `Auto` connection
    /// whose earlier attempt with it did not fail.
    fn saved_era(&self, options: &Options) -> Option<ProtocolMode> {
        let dir = self.options.cache_dir.as_ref()?;
        let auto = *options.protocol_mode() == ProtocolMode::Auto;
        if !auto || self.saved_era_failed.load(Ordering::SeqCst) {
            return None;
        }
        cache::load_era(dir, &self.slot.config)
    }

    /// Lists the server's tools and saves them to the cache; `None` when listing failed.
    fn list_tools(&self, client: &Client) -> Option<Vec<Tool>> {
        let tools = if client.server_capabilities().supports_tools() {
            match client.list_all_tools() {
                Ok(tools) => tools,
                Err(err) => {
                    log::debug!("server `{}`: listing tools failed: {err}", self.slot.name());
                    return None;
                }
            }
        } else {
            Vec::new()
        };
        if let Some(dir) = &self.options.cache_dir {
            cache::save(dir, &self.slot.config, &tools, &client.verdict());
        }
        Some(tools)
    }

    /// Watches a live connection until a command arrives, or it is lost or hung (`Err`).
    fn watch(&self, client: &Client, fresh: &Fresh) -> std::result::Result<Command, Error> {
        // Hook: ping a server that went silent (`health.rs`).
        let mut health = self.options.health.map(|check| Watch::new(check, client));
        loop {
            match self.next_command(WATCH_INTERVAL) {
                Ok(command) => return Ok(command),
                Err(RecvTimeoutError::Disconnected) => return Ok(Command::Stop),
                Err(RecvTimeoutError::Timeout) => {}
            }
            // Hook: list again what the server announced as changed (`refresh.rs`).
            let wanted = fresh.tick(&self.slot, client, &self.hub);
            if wanted.tools {
                if let Some(tools) = self.list_tools(client) {
                    self.slot.set_tools(tools);
                }
            }
            if wanted.prompts {
                refresh::relist_prompts(&self.slot, client);
            }
            if self.slot.is_stopping() {
                return Ok(Command::Stop);
            }
            if let Some(closed) = client.closed() {
                return Err(Error::Closed(closed));
            }
            if let Some(hung) = health
                .as_mut()
                .and_then(|h| h.tick(client, &self.slot.ping))
            {
                return Err(hung);
            }
        }
    }
}
