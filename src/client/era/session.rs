//! The session above the engine: what one connection speaks (its era, the server's answer to
//! the handshake, the capabilities it advertised) and how it starts again after expiring,
//! with the two things the layers above plug in: the response cache and the client's
//! handlers for input requests.

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::Instant;

use serde_json::Value;

use crate::error::{Closed, Result};
use crate::sync::deadline_after;
use crate::types::InitializeResult;

use super::super::engine::connection::Connection;
use super::super::engine::pending::Answer;
use super::super::engine::request_options::RequestOptions;
use super::state::{EraOptions, EraState};

/// One connection's session.
pub(crate) struct Session {
    /// The engine underneath.
    pub(crate) conn: Arc<Connection>,
    pub(crate) options: EraOptions,
    /// The protocol era, shared with the transport wrapper that stamps stateless requests.
    pub(crate) era: Arc<EraState>,
    /// The client capabilities sent in `initialize`.
    pub(crate) handshake_capabilities: Value,
    pub(crate) init: RwLock<Option<Arc<InitializeResult>>>,
    /// The server's capabilities as it wrote them, unknown ones included.
    pub(crate) capabilities: RwLock<Value>,
    /// Bumped on every successful (re-)initialize, so concurrent callers that all saw the
    /// same expired session re-initialize once.
    pub(crate) generation: AtomicU64,
    pub(crate) reinit_lock: Mutex<()>,
    /// The resources subscribed with `resources/subscribe`, subscribed again in a new session.
    pub(crate) subscriptions: Mutex<Vec<String>>,
    /// When the handshake under way (connect, or a new session) must be done: one deadline
    /// for all its requests, pushed back by any time a transport spent past a request's
    /// deadline obtaining credentials, which counts no more here than for one request.
    pub(crate) handshake_deadline: Mutex<Instant>,
    /// The response cache, consulted by [`call`](super::call) once the layer above installs
    /// it (on the first request whose result may be cached); until then every request goes
    /// to the wire.
    pub(crate) cache: OnceLock<Arc<dyn ResponseCache>>,
    /// The client's handlers, answering the input requests of the stateless era.
    pub(crate) inputs: Arc<dyn Inputs>,
    /// How a `tools/list` result is finished, once the layer above installed it.
    pub(crate) tools_listed: OnceLock<ToolsListed>,
    /// How a task a call came back with is followed; `None` without task support.
    pub(crate) tasks: Option<Follow>,
}

/// How a complete `tools/list` result is finished (`finish::listed_tools`), installed by the
/// first request of the layer above that may list tools, so that a program that never lists
/// them has none of that code.
pub(crate) type ToolsListed = fn(&Session, Answer) -> Answer;

/// How a task a call came back with is followed to its end (`task::follow`): given the call,
/// when its clock started and its deadline then, and the answer announcing the task. Set by
/// [`Options::with_tasks`](crate::Options::with_tasks); the call path reaches it only through
/// this pointer, so a program that never turns task support on has none of its code.
pub(crate) type Follow = fn(&Session, &CallSpec<'_>, (Instant, Instant), &Answer) -> Result<Answer>;

/// The capabilities of an `initialize` or `server/discover` result as the server wrote them,
/// unknown ones included.
#[derive(serde::Deserialize)]
pub(crate) struct RawCapabilities {
    #[serde(default)]
    pub(crate) capabilities: Value,
}

/// How one call is made.
pub(crate) struct CallSpec<'a> {
    pub(crate) method: &'a str,
    pub(crate) params: Option<Value>,
    pub(crate) options: &'a RequestOptions,
    /// `initialize` and the probe must never be cancelled, nor retried after a session expiry.
    pub(crate) handshake: bool,
}

/// The response cache as the eras consult it: the layer above plugs it in.
pub(crate) trait ResponseCache: Send + Sync {
    /// Whether a handshake-era call of `method` goes through the cache at all (those servers
    /// send no caching hints).
    fn keeps_legacy(&self, method: &str) -> bool;

    /// Answers `spec` from the cache when a fresh entry exists, else with `wire`, storing
    /// what may be cached (`legacy`: for a handshake-era server, which sends no hints;
    /// `context`: reads the transport's authorization context, whose change drops private
    /// entries, before the request and after its answer).
    fn through(
        &self,
        spec: &mut CallSpec<'_>,
        legacy: bool,
        context: &dyn Fn() -> u64,
        wire: &mut dyn FnMut(&mut CallSpec<'_>) -> Result<Answer>,
    ) -> Result<Answer>;
}

/// The client's handlers as the stateless era's input rounds reach them: the same path the
/// handshake era's server requests take.
pub(crate) trait Inputs: Send + Sync {
    /// The answer to the input request `method` with `params`; a refusal fails the call.
    fn input(&self, method: &str, params: Option<Value>) -> Result<Value>;
}

impl Session {
    /// The session over `conn`, in the era `era` tracks, before any handshake.
    pub(crate) fn new(
        conn: Arc<Connection>,
        era: Arc<EraState>,
        options: EraOptions,
        handshake_capabilities: Value,
        inputs: Arc<dyn Inputs>,
        tasks: Option<Follow>,
    ) -> Session {
        let handshake_deadline =
            Mutex::new(deadline_after(Instant::now(), options.startup_timeout));
        Session {
            conn,
            options,
            era,
            handshake_capabilities,
            init: RwLock::new(None),
            capabilities: RwLock::new(Value::Null),
            generation: AtomicU64::new(0),
            reinit_lock: Mutex::new(()),
            subscriptions: Mutex::new(Vec::new()),
            handshake_deadline,
            cache: OnceLock::new(),
            inputs,
            tools_listed: OnceLock::new(),
            tasks,
        }
    }

    /// The reason the connection closed, if it has.
    pub(crate) fn closed(&self) -> Option<Arc<Closed>> {
        self.conn.closed()
    }

    /// The current session's `initialize` result (or the one built from `server/discover`).
    pub(crate) fn initialize_result(&self) -> Option<Arc<InitializeResult>> {
        match self.init.read() {
            Ok(init) => init.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// The server's `capabilities.extensions` as it wrote them (empty without any).
    pub(crate) fn extensions(&self) -> serde_json::Map<String, Value> {
        let caps = self
            .capabilities
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match caps.get("extensions") {
            Some(Value::Object(map)) => map.clone(),
            _ => serde_json::Map::new(),
        }
    }

    /// Whether the server declared the extension `id`: an object of settings (`{}` included)
    /// under `capabilities.extensions`, or `true`.
    pub(crate) fn offers_extension(&self, id: &str) -> bool {
        let caps = self
            .capabilities
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let settings = &caps["extensions"][id];
        settings.is_object() || settings.as_bool() == Some(true)
    }

    /// Whether the server advertised `capability`: a name such as `logging`, or a dotted path
    /// such as `resources.subscribe` (a flag, which must then be `true`) or
    /// `tasks.requests.tools.call` (an object, which must then be there).
    pub(crate) fn offers(&self, capability: &str) -> bool {
        let caps = self
            .capabilities
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut node = &*caps;
        let mut parts = capability.split('.').peekable();
        while let Some(part) = parts.next() {
            node = &node[part];
            let present = if parts.peek().is_some() || !capability.contains('.') {
                !node.is_null()
            } else {
                node.as_bool() == Some(true) || node.is_object()
            };
            if !present {
                return false;
            }
        }
        true
    }
}
