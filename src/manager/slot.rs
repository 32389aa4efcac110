//! One managed server's shared state: its status, client and last lists, which the manager
//! reads and the server's supervisor thread writes.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::client::{Client, ToolScreen};
use crate::config::ServerConfig;
use crate::error::{Closed, Error, Result, TimeoutKind};
use crate::types::{Prompt, Tool};

use super::cache;
use super::health::PingSlot;
use super::status::{Hub, ServerStatus};
use super::tracked::Tracker;
use crate::sync::lock;

/// A managed server.
pub(crate) struct Slot {
    pub(crate) config: ServerConfig,
    /// The tools it offers: its filter and its part of the manager's lock.
    pub(crate) screen: ToolScreen,
    /// How long its start may take.
    pub(crate) startup_timeout: Duration,
    pub(crate) tracker: Arc<Tracker>,
    /// The health check's ping under way.
    pub(crate) ping: PingSlot,
    state: Mutex<State>,
    changed: Condvar,
    stopping: AtomicBool,
    /// Its supervisor outlived a stop's deadline and was reported stopped: what it does
    /// from then on is not reported (a new server may have its name by then).
    detached: AtomicBool,
    /// A restart is queued for the supervisor and not yet taken: more restarts add nothing,
    /// which keeps the command queue within its bound however often `restart` is called.
    pub(crate) restart_queued: AtomicBool,
    hub: Arc<Hub>,
    /// Subscriptions opened through the manager, re-opened on every connection.
    pub(crate) subscriptions: Mutex<Vec<Arc<super::refresh::ManagedSub>>>,
}

/// What changes while the server runs.
pub(crate) struct State {
    pub(crate) status: ServerStatus,
    /// The live client; `Some` exactly while the status is `Connected`.
    pub(crate) client: Option<Arc<Client>>,
    /// The last known tools, from the current connection when `tools_fresh`.
    pub(crate) tools: Vec<Tool>,
    pub(crate) tools_fresh: bool,
    /// The prompts of the last prompt listing.
    pub(crate) prompts: Vec<Prompt>,
    /// Whether `prompts` was listed after the server's last prompt-list change.
    pub(crate) prompts_fresh: bool,
    /// When the current connection was made (before the listings run on it); `Some` exactly
    /// while the status is `Connected`.
    pub(crate) connected_at: Option<Instant>,
    /// Counts status changes, so a waiter can tell a new status from one it saw before.
    pub(crate) version: u64,
}

impl Slot {
    /// A slot for `config`, offering its cached tools (stale) that `screen` lets through
    /// until it connects.
    pub(crate) fn new(
        config: ServerConfig,
        screen: ToolScreen,
        startup_timeout: Duration,
        cache_dir: Option<&std::path::Path>,
        hub: Arc<Hub>,
    ) -> Slot {
        let tools = match cache_dir {
            Some(dir) if !config.disabled => cache::load(dir, &config).unwrap_or_default(),
            _ => Vec::new(),
        };
        let tools = screen.offered(tools);
        let status = if config.disabled {
            ServerStatus::Disabled
        } else {
            ServerStatus::Connecting { attempt: 1 }
        };
        Slot {
            config,
            screen,
            startup_timeout,
            tracker: Arc::new(Tracker::default()),
            ping: PingSlot::default(),
            restart_queued: AtomicBool::new(false),
            state: Mutex::new(State {
                status,
                client: None,
                tools,
                tools_fresh: false,
                prompts: Vec::new(),
                prompts_fresh: false,
                connected_at: None,
                version: 0,
            }),
            changed: Condvar::new(),
            stopping: AtomicBool::new(false),
            detached: AtomicBool::new(false),
            hub,
            subscriptions: Mutex::new(Vec::new()),
        }
    }

    pub(crate) fn name(&self) -> &str {
        &self.config.name
    }

    pub(crate) fn state(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }

    pub(crate) fn status(&self) -> ServerStatus {
        self.state().status.clone()
    }

    /// Marks the server as stopping and interrupts a connection attempt in progress.
    pub(crate) fn stop(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        self.tracker.interrupt();
        self.ping.cancel();
    }

    pub(crate) fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }

    /// Sets a status other than `Connected`, dropping the client, and reports the change.
    pub(crate) fn set_status(&self, status: ServerStatus) {
        let mut state = self.state();
        state.client = None;
        state.connected_at = None;
        state.tools_fresh = false;
        self.publish(&mut state, status);
    }

    /// Reports the server stopped although its supervisor has not ended yet, and silences
    /// that supervisor: its status stays `Stopped` and its later changes make no events.
    pub(crate) fn detach(&self) {
        let mut state = self.state();
        state.client = None;
        state.connected_at = None;
        state.tools_fresh = false;
        self.publish(&mut state, ServerStatus::Stopped);
        self.detached.store(true, Ordering::SeqCst);
    }

    /// Sets `Connected` with `client`, connected at `since`, and the tools it listed when it
    /// could.
    pub(crate) fn set_connected(
        &self,
        client: Arc<Client>,
        since: Instant,
        tools: Option<Vec<Tool>>,
        reconnects: u32,
    ) {
        let status = ServerStatus::Connected {
            transport: client.transport_kind(),
            reconnects,
        };
        let mut state = self.state();
        if self.detached.load(Ordering::SeqCst) {
            return;
        }
        state.client = Some(client);
        state.connected_at = Some(since);
        if let Some(tools) = tools {
            state.tools = tools;
            state.tools_fresh = true;
        }
        self.publish(&mut state, status);
    }

    /// Replaces the tools of the current connection.
    pub(crate) fn set_tools(&self, tools: Vec<Tool>) {
        let mut state = self.state();
        state.tools = tools;
        state.tools_fresh = state.client.is_some();
    }

    fn publish(&self, state: &mut State, status: ServerStatus) {
        if self.detached.load(Ordering::SeqCst) {
            return;
        }
        log::debug!("server `{}`: {status}", self.name());
        self.hub.event(self.name(), &status);
        state.status = status;
        state.version += 1;
        self.changed.notify_all();
    }

    /// Waits until no connection attempt is under way, or until `deadline`.
    pub(crate) fn wait_settled(&self, deadline: Instant) -> bool {
        self.wait_until(deadline, |state| state.status.is_settled())
    }

    /// Waits until the status has changed since `version` and settled, or until `deadline`.
    #[cfg(feature = "oauth")]
    pub(crate) fn wait_settled_after(&self, version: u64, deadline: Instant) -> bool {
        self.wait_until(deadline, |state| {
            state.version > version && state.status.is_settled()
        })
    }

    fn wait_until(&self, deadline: Instant, done: impl Fn(&State) -> bool) -> bool {
        let mut state = self.state();
        while !done(&state) {
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            state = match self.changed.wait_timeout(state, deadline - now) {
                Ok((guard, _)) => guard,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
        true
    }

    /// The live client, waiting up to the start-up timeout while the server is connecting.
    pub(crate) fn client(&self) -> Result<Arc<Client>> {
        let started = Instant::now();
        self.wait_settled(crate::sync::deadline_in(self.startup_timeout));
        let state = self.state();
        match (&state.client, &state.status) {
            (Some(client), _) => Ok(Arc::clone(client)),
            (None, ServerStatus::Connecting { .. }) => Err(Error::Timeout {
                method: format!("initialize of {}", self.name()),
                elapsed: started.elapsed(),
                kind: TimeoutKind::Startup,
                stderr_tail: None,
            }),
            (None, ServerStatus::Failed { error, .. }) => Err(error.clone()),
            (None, ServerStatus::NeedsAuthorization { hints }) => {
                let hints = Box::new(hints.clone());
                Err(if hints.status == 403 {
                    Error::Forbidden(hints)
                } else {
                    Error::Unauthorized(hints)
                })
            }
            (None, ServerStatus::Disabled) => Err(Error::Config(format!(
                "server `{}` is disabled",
                self.name()
            ))),
            (None, _) => Err(Error::Closed(Arc::new(Closed {
                reason: format!("server `{}` was stopped", self.name()),
                ..Closed::default()
            }))),
        }
    }
}
