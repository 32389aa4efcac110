//! Tools across servers: one namespaced list, and calls routed to the server that owns the
//! name.

use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::client::RequestOptions;
use crate::error::{Error, Result};
use crate::types::CallToolResult;

use super::handle::Manager;
use super::names::Names;
use super::slot::Slot;
use super::status::{ServerStatus, ToolEntry};
use super::with_options::ManagerWithOptions;
use crate::sync::lock;

impl Manager {
    /// The tools the manager knows, at once and without asking any server: those of every
    /// server that is connected, starting, or will be retried, sorted by server name and then
    /// in each server's order. Each server's list is the one it gave when it connected, listed
    /// again whenever it says the list changed; while it starts, the one of its last run, from
    /// the cache, marked [`stale`](ToolEntry::stale). (The `list_*` methods, by contrast, ask
    /// every server now.)
    ///
    /// Tool `t` of server `s` is named `s__t` (with the configured separator). If two tools
    /// end up with the same name (server `a` with tool `b__c` and server `a__b` with tool
    /// `c`, or a server that lists a name twice), the first one offered keeps it and each
    /// later one gets the smallest suffix `_2`, `_3`, … that no other tool has. Names are
    /// looked up, never split, so separators inside server or tool names do no harm. A name,
    /// once given, stays bound to its server's tool for the manager's life: while that server
    /// is down or after it is removed the name is not offered, but it never routes to another
    /// server's tool.
    ///
    /// ```no_run
    /// use serde_json::json;
    ///
    /// # fn main() -> umcp::Result<()> {
    /// # let manager = umcp::Manager::start(Vec::new(), umcp::ManagerOptions::default());
    /// for entry in manager.known_tools() {
    ///     let stale = if entry.stale { " (from the cache)" } else { "" };
    ///     log::info!("{} is {} of {}{stale}", entry.name, entry.tool.name, entry.server);
    /// }
    /// let result = manager.call_tool("files__read_file", json!({ "path": "/tmp/notes.txt" }))?;
    /// log::info!("{}", result.text());
    /// # Ok(()) }
    /// ```
    pub fn known_tools(&self) -> Vec<ToolEntry> {
        let mut entries = Vec::new();
        for slot in self.slots() {
            let state = slot.state();
            if !state.status.is_live() {
                continue;
            }
            let stale = !(state.status.is_connected() && state.tools_fresh);
            for tool in &state.tools {
                entries.push(ToolEntry {
                    name: String::new(),
                    server: slot.name().to_owned(),
                    tool: tool.clone(),
                    stale,
                });
            }
        }
        let keys: Vec<(&str, &str)> = entries
            .iter()
            .map(|e| (e.server.as_str(), e.tool.name.as_str()))
            .collect();
        let names = lock(&self.tool_names).assign(&keys, &self.options.name_shape());
        for (entry, name) in entries.iter_mut().zip(names) {
            entry.name = name;
        }
        entries
    }

    /// Calls a tool by its namespaced name (see [`Manager::known_tools`]).
    ///
    /// See the example on [`Manager::known_tools`].
    ///
    /// # Errors
    ///
    /// [`Error::Invalid`] for a name never given. A name that begins as the names of a server
    /// still starting (`s__` for server `s`) is looked up again once that server is up; one
    /// of a server that is not connected gets a message that says so and why, e.g.
    /// ``no tool named `missing__x`: server `missing` is not connected (failed: …)``. For a
    /// name given before: when its server is still starting, a [`Error::Timeout`] of kind
    /// [`Startup`](crate::TimeoutKind::Startup) once its start-up timeout has passed; when it
    /// failed, the error it failed with. Then any error of
    /// [`Client::call_tool`](crate::Client::call_tool).
    pub fn call_tool(&self, name: &str, arguments: Value) -> Result<CallToolResult> {
        self.with(&RequestOptions::default())
            .call_tool(name, arguments)
    }

    /// The error for a name bound to nothing. A name that begins as the names of a server
    /// that is not connected may well be one of its items: the message says that server is
    /// down and why, rather than leave the caller hunting for a typo.
    pub(super) fn unknown(&self, kind: &str, name: &str, names: &Mutex<Names>) -> Error {
        let down = self.owner(name).and_then(|slot| {
            let status = slot.status();
            let why = match &status {
                ServerStatus::Connected { .. } => return None,
                ServerStatus::Connecting { .. } => "still connecting".to_owned(),
                ServerStatus::Failed { error, .. } => format!("failed: {error}"),
                other => other.to_string(),
            };
            Some(format!("server `{}` is not connected ({why})", slot.name()))
        });
        Error::Invalid(match down {
            Some(down) => format!("no {kind} named `{name}`: {down}"),
            None => lock(names).unknown(kind, name),
        })
    }

    /// The server whose items' names `name` begins as: the longest such prefix, so that a
    /// server `a__b` owns `a__b__c` rather than a server `a`.
    pub(super) fn owner(&self, name: &str) -> Option<Arc<Slot>> {
        let shape = self.options.name_shape();
        self.slots()
            .into_iter()
            .filter_map(|slot| {
                let prefix = shape.prefix(slot.name())?;
                name.starts_with(&prefix).then_some((prefix.len(), slot))
            })
            .max_by_key(|(len, _)| *len)
            .map(|(_, slot)| slot)
    }
}

impl ManagerWithOptions<'_> {
    /// [`Manager::call_tool`] with these options.
    ///
    /// See the example on [`ManagerWithOptions`].
    ///
    /// # Errors
    ///
    /// As [`Manager::call_tool`].
    pub fn call_tool(&self, name: &str, arguments: Value) -> Result<CallToolResult> {
        let manager = self.manager;
        let bound = |names: &Names| {
            names
                .lookup(name)
                .map(|(s, t)| (s.to_owned(), t.to_owned()))
        };
        let found = bound(&lock(&manager.tool_names));
        // A name not given yet may belong to a tool listed since: naming them all binds it.
        let found = found.or_else(|| {
            manager.known_tools();
            bound(&lock(&manager.tool_names))
        });
        // A server still starting has listed nothing yet: its tools are named once it is up.
        let found = found.or_else(|| {
            let starting = manager.owner(name).filter(|s| !s.status().is_settled())?;
            starting.client().ok()?;
            manager.known_tools();
            bound(&lock(&manager.tool_names))
        });
        // A hidden tool's name is refused as hidden, not as unknown.
        let (server, tool) = found.ok_or_else(|| {
            manager
                .hidden(name)
                .unwrap_or_else(|| manager.unknown("tool", name, &manager.tool_names))
        })?;
        manager
            .client_for(&server)?
            .with(self.options)
            .call_tool(&tool, arguments)
    }
}
