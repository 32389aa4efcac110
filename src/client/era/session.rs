//! The session above the engine: what one connection speaks (its era, the server's answer to
//! the handshake, the capabilities it advertised) and how it starts again after expiring,
//! with the two things the layers above plug in: the response cache and the client's
//! handlers for input requests.

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, RwLock};
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
    /// The response cache, consulted by [`call`](super::call).
    pub(crate) cache: Arc<dyn ResponseCache>,
    /// The client's handlers, answering the input requests of the stateless era.
    pub(crate) inputs: Arc<dyn Inputs>,
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
        spec: &CallSpec<'_>,
        legacy: bool,
        context: &dyn Fn() -> u64,
        wire: &mut dyn FnMut(&CallSpec<'_>) -> Result<Answer>,
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
        cache: Arc<dyn ResponseCache>,
        inputs: Arc<dyn Inputs>,
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
            cache,
            inputs,
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
