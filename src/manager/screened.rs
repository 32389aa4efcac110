//! The tools a manager offers: each server's tool filter and its part of the manager's lock,
//! applied by the server's client, and the refusal of a hidden tool's namespaced name.

use std::sync::Arc;

use crate::client::ToolScreen;
use crate::config::ServerConfig;
use crate::error::{Error, Hidden, HiddenTool};
use crate::lock::{ServerIdentity, ServerLock};

use super::options::ManagerOptions;
use super::Manager;

impl ManagerOptions {
    /// What the server `config` offers: the client options' filter and the server's own
    /// together, and the server's part of the manager's lock (none of it: no tool), or else
    /// the client options' lock.
    pub(crate) fn screen_for(&self, config: &ServerConfig) -> ToolScreen {
        let base = &self.client.tools;
        let lock = match &self.tool_lock {
            Some(lock) => Some(Arc::new(lock.server(&config.name).cloned().unwrap_or_else(
                || ServerLock::new(config.name.clone(), ServerIdentity::default(), &[]),
            ))),
            None => base.lock.clone(),
        };
        ToolScreen {
            filter: base.filter.clone().and(config.tool_filter.clone()),
            lock,
            server: Some(config.name.clone()),
        }
    }
}

impl Manager {
    /// The tools hidden on the connected servers, and why: left out by a server's tool
    /// filter, or not in the manager's lock, or changed since (see
    /// [`ManagerOptions::with_tool_lock`]), as of each server's last listing. Each names its
    /// server.
    ///
    /// See the example on [`ManagerOptions::with_tool_lock`].
    pub fn hidden_tools(&self) -> Vec<HiddenTool> {
        self.slots()
            .iter()
            .filter_map(|slot| slot.state().client.clone())
            .flat_map(|client| client.hidden_tools())
            .collect()
    }

    /// The refusal for `name` when it names a hidden tool of its server: one the server's
    /// filter leaves out, or one its last listing hid.
    pub(super) fn hidden(&self, name: &str) -> Option<Error> {
        let shape = self.options.name_shape();
        let slot = self.owner(name)?;
        let prefix = shape.prefix(slot.name())?;
        let tool = name.strip_prefix(&prefix)?;
        let server = Some(slot.name());
        if !slot.screen.filter.allows(tool) {
            let hidden = HiddenTool::new(server, tool, Hidden::Filtered);
            return Some(Error::ToolHidden(Box::new(hidden)));
        }
        let client = slot.state().client.clone()?;
        let hidden = client.hidden_tools().into_iter().find(|h| h.tool == tool)?;
        Some(Error::ToolHidden(Box::new(hidden)))
    }
}
