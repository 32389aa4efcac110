//! Servers added, restarted and removed while the manager runs.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::config::ServerConfig;
use crate::error::{Error, Result};

use super::slot::Slot;
use super::status::ServerStatus;
use super::supervisor::{self, stop_all, Command, Handle};
use super::{lock, manager_closed, unknown_server, Manager};
use crate::sync::deadline_in;

impl Manager {
    /// Adds a server and starts it (unless it is disabled).
    ///
    /// ```no_run
    /// use umcp::ServerConfig;
    ///
    /// # fn main() -> umcp::Result<()> {
    /// # let manager = umcp::Manager::start(Vec::new(), umcp::ManagerOptions::default());
    /// manager.add(ServerConfig::stdio("time", "uvx").with_args(["mcp-server-time"]))?;
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
}
