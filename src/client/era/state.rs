//! Which protocol era a connection speaks: the options that choose it, the per-connection
//! state, and the process-wide cache of verdicts per server.
//!
//! MCP has two eras. The handshake era (2024-11-05 … 2025-11-25) opens with `initialize`; the
//! stateless era (2026-07-28) has no handshake: every request carries its own `_meta`, and the
//! server is asked what it speaks with `server/discover`. [`ProtocolMode::Auto`] probes with
//! `server/discover` and falls back to `initialize` (see [`discover`](super::discover)); the
//! verdict is remembered per server (command line, or URL) in a store ([`verdicts`](super::verdicts):
//! the process's memory unless the application gives one), as a hint: a server that contradicts
//! it has it forgotten (see [`discover`](super::discover)).
//!
//! Where the stateless era lives: [`EraState`] is the connection's era, shared with
//! [`EraTransport`](super::transport), the wrapper every message passes on its way out,
//! which adds `_meta` and the HTTP routing headers; [`rounds`](super::rounds) is the request path
//! of the era (`resultType`, input rounds, re-issue, header mismatch), below every public
//! method. `subscriptions/listen` lives in [`listen`](crate::client::follow::listen): a
//! long-lived request sent through the same wrapper; over Streamable HTTP its notifications
//! arrive on that request's own response stream, and the engine's reading thread hands every
//! notification whose `_meta` carries
//! [`META_SUBSCRIPTION_ID`](crate::types::META_SUBSCRIPTION_ID) to the subscription with that
//! id instead of the shared queue. Closing the stream (HTTP) or
//! `notifications/cancelled` (stdio) ends it; the manager opens its subscriptions again after
//! a restart.

use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, OnceLock, PoisonError, RwLock};
use std::time::Duration;

use serde_json::Value;

use crate::types::{Implementation, LoggingLevel, LATEST_MODERN_PROTOCOL_VERSION};

use super::meta::{HeaderParam, Identity};
use super::verdicts::Verdicts;

/// Default time a server has to answer the `server/discover` probe before it counts as a
/// legacy server that ignores unknown requests (the figure rmcp and the Python SDK use).
///
/// See the example on [`Options::with_protocol_mode`](crate::Options::with_protocol_mode).
pub const DEFAULT_PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// Default number of input rounds one request may take before it fails.
///
/// See the example on [`Options::with_protocol_mode`](crate::Options::with_protocol_mode).
pub const DEFAULT_MAX_INPUT_ROUNDS: u32 = 8;

/// How a client chooses the protocol era at connect time.
///
/// See the example on [`Options::with_protocol_mode`](crate::Options::with_protocol_mode).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ProtocolMode {
    /// Probe with `server/discover`; a discover result or a recognised stateless error means
    /// the stateless era, anything else the handshake era on the same connection (default).
    ///
    /// - A discover result naming a stateless version this client speaks means the stateless
    ///   era. After -32022 (`UnsupportedProtocolVersion`) the probe is sent once more at a
    ///   stateless version both speak; when the error's `supported` names only handshake-era
    ///   versions, the server is a handshake-era one (naming only versions this client does
    ///   not speak, the connect fails with [`Error::Unsupported`](crate::Error::Unsupported)).
    ///   -32020 or -32021 mean a stateless server: the connect fails with that error, with no
    ///   fallback. Over HTTP such an error counts only as the probe's own answer: a body
    ///   declared `application/json` carrying the probe's id.
    /// - Any other error (a 400 with -32600, another id or a `null` id, plain text or no body,
    ///   a 404 or 405), a discover result without `supportedVersions` or naming only
    ///   handshake-era versions, or no answer within the probe timeout
    ///   ([`Options::with_probe_timeout`](crate::Options::with_probe_timeout), which says what
    ///   becomes of a server only slow to start) means the handshake era, and `initialize`
    ///   follows on the same connection. It offers 2025-11-25, never a stateless version;
    ///   refused with -32022 whose `supported` names a stateless version this client speaks,
    ///   it falls forward to `server/discover` at that version on the same connection.
    /// - A stdio server that exits on the probe, as some handshake-era servers do on any first
    ///   message but `initialize`, is started again and initialized; only a debug line tells.
    ///   A legacy HTTP+SSE server, which predates the stateless era, is not probed.
    ///
    /// The verdict is remembered per server (its command line, or its URL) in the
    /// [`VerdictStore`](crate::VerdictStore) of
    /// [`Options::with_verdict_store`](crate::Options::with_verdict_store) (by default this
    /// process's memory, for up to 256 servers; past that all are forgotten), as a hint that
    /// skips the probe, never as a trap: a server upgraded or replaced behind the same name is
    /// followed. A remembered stateless verdict still sends `server/discover`, whose refusal
    /// means `initialize` on the same connection. A remembered handshake verdict whose
    /// `initialize` is refused is forgotten, and the server is started or connected again and
    /// probed; one whose new session, after the server ended the old one, is refused is
    /// forgotten too, so the next connection probes. A stateless server that answers -32022
    /// to a later request has its verdict forgotten: the request fails with that error, or is
    /// sent once more when the server names another stateless version both speak. To carry
    /// verdicts to another process, give both the same store.
    #[default]
    Auto,
    /// The handshake era only: `initialize` first, no probe, and a refused `initialize` is
    /// never followed by `server/discover`.
    Legacy,
    /// The stateless era at this version only (e.g. `2026-07-28`): no fallback.
    Pinned(String),
}

impl ProtocolMode {
    /// A pin to the newest stateless version this client speaks.
    ///
    /// See the example on [`Options::with_protocol_mode`](crate::Options::with_protocol_mode).
    pub fn modern() -> ProtocolMode {
        ProtocolMode::Pinned(LATEST_MODERN_PROTOCOL_VERSION.to_owned())
    }

    /// The name used in configuration and logs: `auto`, `legacy` or the pinned version.
    ///
    /// See the example on [`Options::with_protocol_mode`](crate::Options::with_protocol_mode).
    pub fn as_str(&self) -> &str {
        match self {
            ProtocolMode::Auto => "auto",
            ProtocolMode::Legacy => "legacy",
            ProtocolMode::Pinned(version) => version,
        }
    }

    /// Reads `auto`, `legacy`, `modern` (the newest stateless version) or a stateless version.
    ///
    /// See the example on [`Options::with_protocol_mode`](crate::Options::with_protocol_mode).
    pub fn parse(text: &str) -> Option<ProtocolMode> {
        match text {
            "auto" => Some(ProtocolMode::Auto),
            "legacy" => Some(ProtocolMode::Legacy),
            "modern" => Some(ProtocolMode::modern()),
            v if crate::types::is_modern_protocol_version(v) => {
                Some(ProtocolMode::Pinned(v.to_owned()))
            }
            _ => None,
        }
    }
}

/// The protocol era a connection speaks.
///
/// See the example on [`Client::server_info`](crate::Client::server_info).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Era {
    /// The handshake era: `initialize`, sessions, server-to-client requests.
    Legacy,
    /// The stateless era: `server/discover`, per-request `_meta`, multi round-trip requests.
    Modern,
}

impl Era {
    /// `legacy` or `modern`.
    ///
    /// See the example on [`Client::server_info`](crate::Client::server_info).
    pub fn as_str(self) -> &'static str {
        match self {
            Era::Legacy => "legacy",
            Era::Modern => "modern",
        }
    }
}

/// The settings the eras read, set through the builders of [`Options`](crate::Options).
#[derive(Debug, Clone)]
pub(crate) struct EraOptions {
    pub(crate) mode: ProtocolMode,
    pub(crate) probe_timeout: Duration,
    pub(crate) max_input_rounds: u32,
    pub(crate) log_level: Option<LoggingLevel>,
    /// The name and version sent as `clientInfo`.
    pub(crate) client_info: Implementation,
    /// How long connecting may take in all, and `initialize` after a session expired.
    pub(crate) startup_timeout: Duration,
    /// Whether an expired session is started again and the request retried once.
    pub(crate) reinitialize_on_expiry: bool,
    /// `mode` is [`ProtocolMode::Legacy`] only because the server, probed under
    /// [`ProtocolMode::Auto`], exited on the probe: a refused `initialize` may still fall
    /// forward to the stateless era.
    pub(crate) legacy_after_probe: bool,
    /// Where the verdicts of [`ProtocolMode::Auto`] are kept.
    pub(crate) verdicts: Verdicts,
}

impl Default for EraOptions {
    fn default() -> EraOptions {
        EraOptions {
            mode: ProtocolMode::Auto,
            probe_timeout: DEFAULT_PROBE_TIMEOUT,
            max_input_rounds: DEFAULT_MAX_INPUT_ROUNDS,
            log_level: None,
            client_info: Implementation::new("umcp", env!("CARGO_PKG_VERSION")),
            startup_timeout: Duration::from_secs(30),
            reinitialize_on_expiry: true,
            legacy_after_probe: false,
            verdicts: Verdicts::default(),
        }
    }
}

/// What the connection speaks, as far as is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Nothing sent yet, or speaking the handshake era.
    Legacy,
    /// Probing or speaking the stateless era at this version.
    Modern(String),
}

/// One connection's era state, shared by the client and its transport wrapper.
pub(crate) struct EraState {
    phase: RwLock<Phase>,
    /// Whether the transport is Streamable HTTP: routing headers apply, notices do not.
    pub(crate) http: bool,
    /// Tool name → (argument path, header name) pairs from `x-mcp-header` annotations.
    pub(crate) tool_headers: Mutex<HashMap<String, Vec<HeaderParam>>>,
    /// The tools whose last listing marked them read-only or idempotent: a call to one whose
    /// response stream broke is sent again.
    pub(crate) repeatable_tools: Mutex<HashSet<String>>,
    /// The client's `_meta` entries.
    pub(crate) identity: Identity,
    /// The log level the client asked for: in every stateless request's `_meta`, and sent with
    /// `logging/setLevel` at the start of every handshake-era session.
    log_level: RwLock<Option<LoggingLevel>>,
    /// The server's key in the verdict cache, set when the era was chosen by
    /// [`ProtocolMode::Auto`]: a verdict the server later contradicts is forgotten there.
    pub(crate) verdict_key: OnceLock<String>,
}

impl EraState {
    /// The era state of a connection with `options`, declaring `capabilities` in every
    /// stateless request; `http` for Streamable HTTP.
    pub(crate) fn new(options: &EraOptions, capabilities: Value, http: bool) -> EraState {
        EraState {
            phase: RwLock::new(Phase::Legacy),
            http,
            tool_headers: Mutex::new(HashMap::new()),
            repeatable_tools: Mutex::new(HashSet::new()),
            identity: Identity::new(&options.client_info, capabilities),
            log_level: RwLock::new(options.log_level),
            verdict_key: OnceLock::new(),
        }
    }

    /// The log level asked for, if any.
    pub(crate) fn log_level(&self) -> Option<LoggingLevel> {
        match self.log_level.read() {
            Ok(level) => *level,
            Err(poisoned) => *poisoned.into_inner(),
        }
    }

    pub(crate) fn set_log_level(&self, level: LoggingLevel) {
        match self.log_level.write() {
            Ok(mut slot) => *slot = Some(level),
            Err(poisoned) => *poisoned.into_inner() = Some(level),
        }
    }

    pub(crate) fn phase(&self) -> Phase {
        match self.phase.read() {
            Ok(phase) => phase.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    pub(crate) fn set_phase(&self, phase: Phase) {
        match self.phase.write() {
            Ok(mut slot) => *slot = phase,
            Err(poisoned) => *poisoned.into_inner() = phase,
        }
    }

    /// Whether the connection speaks (or probes) the stateless era.
    pub(crate) fn is_modern(&self) -> bool {
        let phase = self.phase.read().unwrap_or_else(PoisonError::into_inner);
        matches!(*phase, Phase::Modern(_))
    }

    /// The stateless version in use, or `None` in the handshake era.
    pub(crate) fn modern_version(&self) -> Option<String> {
        match self.phase() {
            Phase::Modern(version) => Some(version),
            Phase::Legacy => None,
        }
    }

    pub(crate) fn era(&self) -> Era {
        match self.phase() {
            Phase::Modern(_) => Era::Modern,
            Phase::Legacy => Era::Legacy,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_and_print() {
        assert_eq!(ProtocolMode::parse("auto"), Some(ProtocolMode::Auto));
        assert_eq!(ProtocolMode::parse("legacy"), Some(ProtocolMode::Legacy));
        assert_eq!(ProtocolMode::parse("modern"), Some(ProtocolMode::modern()));
        assert_eq!(ProtocolMode::modern().as_str(), "2026-07-28");
        assert_eq!(ProtocolMode::parse("2025-11-25"), None);
        assert_eq!(EraOptions::default().mode, ProtocolMode::Auto);
    }
}
