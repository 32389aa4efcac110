//! The tools a client offers: its [`ToolFilter`] and lock applied to every listing, and every
//! call checked against them before anything is sent.
//!
//! A listing through the client's own methods keeps what the screen lets through and notes
//! why each other tool is hidden. A call is refused at once when the filter leaves its tool
//! out; with a lock it is checked against the connection's last complete listing, listed
//! first (within the call's own time) when there is none, or when the server has announced a
//! tool-list change since. So a definition that drifted after it was locked is refused before
//! the call reaches the server, and the drift is logged when the listing finds it rather than
//! taken in silently.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::Value;

use crate::error::{Error, Hidden, HiddenTool, Result};
use crate::lock::ServerLock;
use crate::sync::lock;
use crate::types::Tool;

use super::engine::request_options::RequestOptions;
use super::handle::Client;
use super::tool_filter::ToolFilter;

/// The most tool names a connection's verdicts hold from listings of single pages: past it,
/// they start over (a call then lists every page first), so a server that pages out new
/// names without end cannot grow them without bound. A listing of every page replaces them.
const MAX_SEEN: usize = 100_000;

/// What a client offers of a server's tools: a filter, and the lock that pins them.
#[derive(Debug, Clone, Default)]
pub(crate) struct ToolScreen {
    pub(crate) filter: ToolFilter,
    pub(crate) lock: Option<Arc<ServerLock>>,
    /// The server's name in errors, when the manager (or the lock) knows it.
    pub(crate) server: Option<String>,
}

impl ToolScreen {
    /// Whether every tool is offered, with nothing to check.
    pub(crate) fn is_open(&self) -> bool {
        self.filter.is_open() && self.lock.is_none()
    }

    /// Why `tool`, as listed, is hidden, if it is.
    pub(crate) fn check(&self, tool: &Tool) -> std::result::Result<(), Hidden> {
        if !self.filter.allows(&tool.name) {
            return Err(Hidden::Filtered);
        }
        match &self.lock {
            Some(lock) => lock.check(tool),
            None => Ok(()),
        }
    }

    /// The tools of `tools` that are offered: for a list no client screened (a cached one).
    pub(crate) fn offered(&self, tools: Vec<Tool>) -> Vec<Tool> {
        if self.is_open() {
            return tools;
        }
        tools
            .into_iter()
            .filter(|tool| self.check(tool).is_ok())
            .collect()
    }

    /// The hidden tool `name` of this server.
    pub(crate) fn hidden(&self, name: &str, why: Hidden) -> HiddenTool {
        let server = self
            .server
            .as_deref()
            .or_else(|| self.lock.as_ref().map(|lock| lock.name()));
        HiddenTool::new(server, name, why)
    }

    /// The error refusing a call to `name`.
    fn refuse(&self, name: &str, why: Hidden) -> Error {
        Error::ToolHidden(Box::new(self.hidden(name, why)))
    }
}

/// A connection's screen and what its listings told about the server's tools.
#[derive(Debug, Default)]
pub(crate) struct Screened {
    screen: ToolScreen,
    seen: Mutex<Seen>,
}

/// What the listings of one connection told.
#[derive(Debug, Default)]
struct Seen {
    /// Each tool listed, by name: `None` when offered, else why it is hidden. Bounded by what
    /// the listings held.
    verdicts: HashMap<String, Option<Hidden>>,
    /// Whether `verdicts` is a whole listing (every page): then a name it lacks is not listed.
    complete: bool,
    /// The tool-list changes the server had announced when that whole listing began.
    changes: u64,
    /// The hidden tools, in listing order.
    hidden: Vec<HiddenTool>,
}

impl Screened {
    pub(crate) fn new(screen: ToolScreen) -> Screened {
        Screened {
            screen,
            seen: Mutex::default(),
        }
    }
}

impl Client {
    /// The tools the client's listings hid, and why: those its
    /// [tool filter](crate::Options::with_tool_filter) leaves out, and with a
    /// [lock](crate::Options::with_tool_lock) those not in it or changed since, as of the last
    /// listing (a listing of every page replaces what earlier ones told). Empty when nothing
    /// is filtered or locked.
    ///
    /// ```no_run
    /// use umcp::{Client, Hidden, Options, StdioConfig, ToolFilter};
    ///
    /// # fn main() -> umcp::Result<()> {
    /// let options = Options::default().with_tool_filter(ToolFilter::new().with_denied(["get-env"]));
    /// let client = Client::connect_with_options(StdioConfig::new("mcp-server-everything"), options)?;
    /// let tools = client.list_all_tools()?; // without get-env
    /// for hidden in client.hidden_tools() {
    ///     assert_eq!(hidden.why, Hidden::Filtered);
    ///     log::info!("{hidden}");
    /// }
    /// # let _ = tools; Ok(()) }
    /// ```
    pub fn hidden_tools(&self) -> Vec<HiddenTool> {
        lock(&self.screen.seen).hidden.clone()
    }

    /// The offered part of a listing, noting why each other tool is hidden; `whole` for a
    /// listing of every page that began when `changes` tool-list changes had been announced.
    /// A name listed twice is offered only when every copy is.
    pub(crate) fn screen_listing(&self, tools: Vec<Tool>, whole: Option<u64>) -> Vec<Tool> {
        let screen = &self.screen.screen;
        if screen.is_open() {
            return tools;
        }
        let mut verdicts: HashMap<String, Option<Hidden>> = HashMap::new();
        let mut hidden = Vec::new();
        for tool in &tools {
            let verdict = screen.check(tool).err();
            if let Some(why) = &verdict {
                hidden.push(screen.hidden(&tool.name, why.clone()));
            }
            let kept = verdicts.entry(tool.name.clone()).or_insert(None);
            if kept.is_none() {
                *kept = verdict;
            }
        }
        let offered = tools
            .into_iter()
            .filter(|tool| matches!(verdicts.get(&tool.name), Some(None)))
            .collect();
        let mut seen = lock(&self.screen.seen);
        for tool in &hidden {
            let new = !seen.hidden.iter().any(|seen| seen == tool);
            if new && tool.why != Hidden::Filtered {
                log::warn!("{tool}");
            }
        }
        match whole {
            Some(changes) => {
                seen.verdicts = verdicts;
                seen.complete = true;
                seen.changes = changes;
                seen.hidden = hidden;
            }
            None => {
                if seen.verdicts.len() + verdicts.len() > MAX_SEEN {
                    *seen = Seen::default();
                }
                seen.hidden.retain(|old| !verdicts.contains_key(&old.tool));
                seen.verdicts.extend(verdicts);
                seen.hidden.extend(hidden);
            }
        }
        offered
    }

    /// The count of tool-list changes the server has announced on this connection.
    pub(crate) fn tool_changes(&self) -> u64 {
        self.follower.tool_changes()
    }

    /// Refuses a `tools/call` request, however it is made, whose tool the screen hides.
    pub(crate) fn screen_request(
        &self,
        method: &str,
        params: Option<&Value>,
        options: &RequestOptions,
    ) -> Result<()> {
        if method != "tools/call" || self.screen.screen.is_open() {
            return Ok(());
        }
        // A call without a name is the server's to refuse; no tool of that name is offered.
        let name = params
            .and_then(|params| params.get("name"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        self.screen_call(name, options, Instant::now())
    }

    /// Refuses a call to the tool `name` that the screen hides, before anything is sent. With
    /// a lock, the tools are listed first (within the time the call has left since
    /// `started`) when no whole listing is known, or the server announced a change since.
    pub(crate) fn screen_call(
        &self,
        name: &str,
        options: &RequestOptions,
        started: Instant,
    ) -> Result<()> {
        let screen = &self.screen.screen;
        if screen.is_open() {
            return Ok(());
        }
        if !screen.filter.allows(name) {
            return Err(screen.refuse(name, Hidden::Filtered));
        }
        let Some(locked) = &screen.lock else {
            return Ok(());
        };
        let current = {
            let seen = lock(&self.screen.seen);
            seen.complete && seen.changes == self.tool_changes()
        };
        if !current {
            self.list_all_tools_within("tools/call", options, started)?;
        }
        let seen = lock(&self.screen.seen);
        match seen.verdicts.get(name) {
            Some(None) => Ok(()),
            Some(Some(why)) => Err(screen.refuse(name, why.clone())),
            None if locked.tool(name).is_some() => Err(screen.refuse(name, Hidden::Missing)),
            None => Err(screen.refuse(name, Hidden::NotLocked)),
        }
    }
}
