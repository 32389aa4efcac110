//! Era selection at connect time: the `server/discover` probe, its classification, and the
//! `initialize` fallback on the same connection.
//!
//! The probe is classified by a denylist, as the spec asks ("MUST NOT be keyed to one error
//! code"): a `DiscoverResult` or a stateless error (-32020, -32021, -32022) means the stateless
//! era; any other JSON-RPC error, an HTTP error whose body is not a stateless error, or
//! silence until the probe timeout means the handshake era. A stdio server that exits on the
//! probe (some handshake-era servers do on any first message but `initialize`) is started
//! again and initialized; the caller sees only a debug line. Silence may also be a server
//! still starting, which reads the probe only once it is up (see [`after_silence`]). A verdict
//! remembered from an earlier connection skips the probe but is never trusted blindly (see
//! [`establish`]), and -32022 on a later request forgets it ([`switch_version`]).
//!
//! The probe is `server/discover` on every transport, HTTP included, not the application's
//! first request. The released text allows either ("Clients MAY call it before sending any
//! other requests"; on HTTP "attempt a modern request and inspect the body of a 400"), and
//! `server/discover` is the one request whose answer cannot be mistaken: an era-ambiguous
//! method such as `tools/list` may be served under handshake-era semantics by a lax legacy
//! server, and the connection must know the server's capabilities before any method is
//! gated on them. A server that refuses a correct `server/discover` with a stateless error
//! (-32020) speaks the stateless era, and the client does not fall back; the conformance
//! suite's unreleased `version-backcompat` scenario, which expects a `tools/list` probe and
//! answers `server/discover` so, is therefore not passed.

use std::sync::Arc;

use serde_json::Value;

use crate::error::{Error, Result, Unsupported};
use crate::jsonrpc::{decode_value, ErrorCode, ErrorObject};
use crate::transport::SessionEvent;
use crate::types::{
    is_supported_protocol_version, DiscoverResult, Implementation, InitializeResult,
    UnsupportedProtocolVersionData, META_SERVER_INFO, MODERN_PROTOCOL_VERSIONS,
};

use super::super::engine::request_options::RequestOptions;
use super::lifecycle::{initialize, left};
use super::session::{CallSpec, RawCapabilities, Session};
use super::state::{Phase, ProtocolMode};
use super::wire::once;

/// How a connection attempt ended.
pub(crate) enum Established {
    /// The connection speaks its era and is ready.
    Ready,
    /// The server went away during the probe; connect again (the verdict is now cached).
    Restart,
    /// The server contradicted the cached verdict, now forgotten; connect again and probe.
    Again,
}

/// What the probe said about the server.
enum Verdict {
    /// The result, the capabilities as the server wrote them, and the version to speak.
    Modern(Box<(DiscoverResult, Value)>, String),
    Legacy(String),
    /// No answer within the probe timeout: a handshake-era server that ignores the probe, or
    /// a server still starting.
    Silent,
    /// The server closed the connection on the probe.
    Exited(String),
}

/// How the probe is run.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Probe {
    /// [`ProtocolMode::Auto`]: the probe timeout, and anything but a stateless answer means
    /// the handshake era.
    Auto,
    /// A cached stateless verdict: the server is expected to answer as it did, but may have
    /// changed era since; as `Auto` otherwise.
    Cached,
    /// Again after a silent probe and a refused `initialize`, on the same connection: only a
    /// stateless answer counts, within what is left of the start-up timeout.
    Late,
    /// [`ProtocolMode::Pinned`]: no fallback, and the rest of the start-up timeout to answer.
    Pinned,
}

/// Chooses the era for the connection to `server` and sets it up, by the handshake deadline. A
/// cached verdict is only a hint: a stateless one still sends `server/discover`, and a handshake
/// one whose `initialize` is refused is forgotten, and the connection probes again.
pub(crate) fn establish(session: &Session, server: &str) -> Result<Established> {
    let configured = session.options.mode.clone();
    let cached = match configured {
        ProtocolMode::Auto => {
            let _ = session.era.verdict_key.set(server.to_owned());
            session.options.verdicts.load(server)
        }
        _ => None,
    };
    let from_cache = cached.is_some();
    let auto = configured == ProtocolMode::Auto || session.options.legacy_after_probe;
    let mode = cached.unwrap_or(configured);
    // The legacy HTTP+SSE transport predates the stateless era.
    let mode = match session.conn.transport.kind() {
        "sse" if mode == ProtocolMode::Auto => ProtocolMode::Legacy,
        _ => mode,
    };
    let (version, how) = match mode {
        ProtocolMode::Legacy => {
            return match initialize_or_forward(session, server, auto) {
                Ok(()) => Ok(Established::Ready),
                Err(error) if from_cache && contradicts_handshake(&error) => {
                    log::debug!("{server} refused initialize ({error}); probing again");
                    session.options.verdicts.forget(server);
                    Ok(Established::Again)
                }
                Err(error) => Err(error),
            };
        }
        ProtocolMode::Pinned(version) => {
            if !MODERN_PROTOCOL_VERSIONS.contains(&version.as_str()) {
                return Err(Error::Config(format!(
                    "`{version}` is not a stateless protocol version this client speaks"
                )));
            }
            (
                version,
                if from_cache {
                    Probe::Cached
                } else {
                    Probe::Pinned
                },
            )
        }
        ProtocolMode::Auto => (MODERN_PROTOCOL_VERSIONS[0].to_owned(), Probe::Auto),
    };
    match probe(session, version.clone(), how)? {
        Verdict::Modern(result, version) => {
            let (result, capabilities) = *result;
            adopt(session, result, capabilities, &version);
            if how != Probe::Pinned {
                session
                    .options
                    .verdicts
                    .save(server, ProtocolMode::Pinned(version));
            }
            Ok(Established::Ready)
        }
        Verdict::Legacy(why) => {
            log::debug!("{server} is a handshake-era server ({why}); initializing");
            session.era.set_phase(Phase::Legacy);
            session.conn.transport.session_event(SessionEvent::Reset);
            session.options.verdicts.save(server, ProtocolMode::Legacy);
            initialize_or_forward(session, server, true)?;
            Ok(Established::Ready)
        }
        Verdict::Silent => after_silence(session, server, version),
        Verdict::Exited(why) => {
            log::debug!("{server} closed on server/discover ({why}); starting it again");
            session.options.verdicts.save(server, ProtocolMode::Legacy);
            Ok(Established::Restart)
        }
    }
}

/// After a probe got no answer in time: `initialize`. A slow starter reads the probe once up: a
/// handshake-era one that exits on it is started again, and a stateless one refuses `initialize`,
/// so a refusal asks `server/discover` again.
fn after_silence(session: &Session, server: &str, version: String) -> Result<Established> {
    log::debug!("{server} did not answer server/discover in time; initializing");
    session.era.set_phase(Phase::Legacy);
    session.conn.transport.session_event(SessionEvent::Reset);
    let error = match initialize(session) {
        Ok(()) => {
            session.options.verdicts.save(server, ProtocolMode::Legacy);
            return Ok(Established::Ready);
        }
        Err(error) => error,
    };
    match &error {
        Error::Closed(closed) if !closed.is_client_close() => {
            log::debug!("{server} closed after the probe ({error}); starting it again");
            session.options.verdicts.save(server, ProtocolMode::Legacy);
            return Ok(Established::Restart);
        }
        refused if contradicts_handshake(refused) => {}
        _ => return Err(error),
    }
    log::debug!("{server} refused initialize ({error}); asking server/discover again");
    match probe(session, version, Probe::Late) {
        Ok(Verdict::Modern(result, version)) => {
            let (result, capabilities) = *result;
            adopt(session, result, capabilities, &version);
            session
                .options
                .verdicts
                .save(server, ProtocolMode::Pinned(version));
            Ok(Established::Ready)
        }
        _ => Err(error),
    }
}

/// `initialize`, on a connection judged handshake-era. Under `Auto`, a -32022 naming a stateless
/// version this client speaks falls forward to `server/discover` at that version, as the spec asks.
fn initialize_or_forward(session: &Session, server: &str, auto: bool) -> Result<()> {
    let error = match initialize(session) {
        Ok(()) => return Ok(()),
        Err(error) => error,
    };
    let forward = error
        .rpc_error()
        .filter(|e| auto && e.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION)
        .and_then(|e| modern_in(&supported_versions(&e)));
    let Some(version) = forward else {
        return Err(error);
    };
    log::debug!("{server} refused initialize for protocol {version}; asking server/discover");
    match probe(session, version, Probe::Late) {
        Ok(Verdict::Modern(result, version)) => {
            let (result, capabilities) = *result;
            adopt(session, result, capabilities, &version);
            session
                .options
                .verdicts
                .save(server, ProtocolMode::Pinned(version));
            Ok(())
        }
        _ => Err(error),
    }
}

/// Whether a failed `initialize` says the server no longer speaks the handshake era (rather
/// than being slow, unauthorised, or closed by this side).
fn contradicts_handshake(error: &Error) -> bool {
    match error {
        Error::Rpc(_) | Error::Protocol(_) | Error::Unsupported(_) => true,
        Error::Http(_) => error.refuses_transport(),
        Error::Closed(closed) => !closed.is_client_close(),
        _ => false,
    }
}

/// Sends `server/discover` (again at a version the server names after -32022, once).
fn probe(session: &Session, mut version: String, how: Probe) -> Result<Verdict> {
    let left = left(session);
    let options = RequestOptions::default().with_timeout(match how {
        // At most half of what is left, so that `initialize` has time after a silent probe.
        Probe::Auto | Probe::Cached => session.options.probe_timeout.min(left / 2),
        Probe::Late | Probe::Pinned => left,
    });
    let auto = how != Probe::Pinned;
    let mut retried = false;
    session
        .conn
        .transport
        .session_event(SessionEvent::Stateless);
    loop {
        session.era.set_phase(Phase::Modern(version.clone()));
        let outcome = once(
            session,
            &mut CallSpec {
                method: "server/discover",
                params: None,
                options: &options,
                handshake: true,
            },
        );
        let error = match outcome {
            Ok(answer) => {
                return match answer.peek::<DiscoverResult>() {
                    Ok(result) => {
                        let capabilities = answer
                            .peek::<RawCapabilities>()
                            .map_or(Value::Null, |raw| raw.capabilities);
                        choose((result, capabilities), version, auto)
                    }
                    Err(e) => legacy_or(
                        Error::Protocol(format!("malformed server/discover result: {e}")),
                        auto,
                    ),
                };
            }
            Err(error) => error,
        };
        let Some(object) = refusal(&error) else {
            return legacy_or(error, auto);
        };
        if object.code != ErrorCode::UNSUPPORTED_PROTOCOL_VERSION || retried {
            return Err(Error::Rpc(object));
        }
        let supported = supported_versions(&object);
        match modern_in(&supported) {
            Some(next) => {
                log::debug!("server/discover: server wants {next}, not {version}; retrying");
                version = next;
                retried = true;
            }
            None if auto && supported.iter().any(|v| is_supported_protocol_version(v)) => {
                return Ok(Verdict::Legacy(format!("it speaks only {supported:?}")));
            }
            None => {
                return Err(Error::Unsupported(Unsupported::Version {
                    offered: version,
                    received: supported.join(", "),
                }))
            }
        }
    }
}

/// The `supported` versions of an `UnsupportedProtocolVersion` (-32022) error.
fn supported_versions(object: &ErrorObject) -> Vec<String> {
    let data: UnsupportedProtocolVersionData = object
        .data
        .as_ref()
        .and_then(|d| decode_value(d).ok())
        .unwrap_or_default();
    data.supported
}

/// The first stateless version this client speaks among `supported`.
fn modern_in(supported: &[String]) -> Option<String> {
    supported
        .iter()
        .find(|v| MODERN_PROTOCOL_VERSIONS.contains(&v.as_str()))
        .cloned()
}

/// After a stateless request failed: a -32022 (server upgraded or replaced) forgets the cached
/// verdict and, when it names another version this client speaks, switches to it; `true` says to
/// send again (once per request, which the caller sees to).
pub(crate) fn switch_version(session: &Session, error: &Error) -> bool {
    // Only the request's own answer: a body with another id says nothing of this request.
    let Some(object) = refusal(error).filter(|e| e.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION)
    else {
        return false;
    };
    let key = session.era.verdict_key.get();
    if let Some(key) = key {
        session.options.verdicts.forget(key);
    }
    let current = session.era.modern_version();
    let Some(next) =
        modern_in(&supported_versions(&object)).filter(|v| Some(v) != current.as_ref())
    else {
        return false;
    };
    log::debug!("the server now wants protocol {next}; switching and sending again");
    speak(session, &next);
    if let Ok(mut slot) = session.init.write() {
        if let Some(init) = slot.as_mut() {
            Arc::make_mut(init).protocol_version.clone_from(&next);
        }
    }
    if let Some(key) = key {
        session
            .options
            .verdicts
            .save(key, ProtocolMode::Pinned(next));
    }
    true
}

/// The version to speak with a server that answered `server/discover`.
fn choose(result: (DiscoverResult, Value), asked: String, auto: bool) -> Result<Verdict> {
    let supported = &result.0.supported_versions;
    if supported.is_empty() {
        // `supportedVersions` is required: a server answering any request with an empty
        // object is not a stateless server.
        let why = "server/discover answered without supportedVersions";
        return match auto {
            true => Ok(Verdict::Legacy(why.into())),
            false => Err(Error::Protocol(why.into())),
        };
    }
    if supported.contains(&asked) {
        return Ok(Verdict::Modern(Box::new(result), asked));
    }
    if let Some(version) = MODERN_PROTOCOL_VERSIONS
        .iter()
        .find(|v| supported.iter().any(|s| s == *v))
    {
        let version = (*version).to_owned();
        return Ok(Verdict::Modern(Box::new(result), version));
    }
    if auto && supported.iter().any(|v| is_supported_protocol_version(v)) {
        return Ok(Verdict::Legacy(format!("it speaks only {supported:?}")));
    }
    Err(Error::Unsupported(Unsupported::Version {
        offered: asked,
        received: supported.join(", "),
    }))
}

/// A probe failure that is not a stateless error: the handshake era under `Auto`, where the
/// error allows it; the error itself otherwise.
fn legacy_or(error: Error, auto: bool) -> Result<Verdict> {
    if !auto {
        return Err(error);
    }
    match &error {
        Error::Rpc(object) => Ok(Verdict::Legacy(format!("error {}", object.code.0))),
        Error::Http(http) => Ok(Verdict::Legacy(format!("HTTP {}", http.status))),
        Error::Timeout { .. } => Ok(Verdict::Silent),
        // Closed on our side (the client or its manager gave up): nothing to start again.
        Error::Closed(closed) if closed.is_client_close() => Err(error),
        Error::Closed(closed) => Ok(Verdict::Exited(closed.reason.clone())),
        Error::Protocol(why) => Ok(Verdict::Legacy(why.clone())),
        _ => Err(error),
    }
}

/// The stateless-era error in a failed request: a JSON-RPC error, or an HTTP error whose
/// body is one, with code -32020, -32021 or -32022.
fn modern_error(error: &Error) -> Option<ErrorObject> {
    let modern = [
        ErrorCode::HEADER_MISMATCH,
        ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
        ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
    ];
    error.rpc_error().filter(|e| modern.contains(&e.code))
}

/// The stateless-era error a request was refused with, if any: only its own JSON-RPC response
/// (the transport's [`Error::Rpc`]), never [`Error::Http`], so any other 400 (another id, -32600,
/// HTML) means the handshake era: the conformance suite's reading of "inspect the body".
pub(crate) fn refusal(error: &Error) -> Option<ErrorObject> {
    match error {
        // `Rpc` keeps no HTTP status: a stateless error under a status other than 400 counts too.
        Error::Rpc(_) => modern_error(error),
        _ => None,
    }
}

/// Makes the discover result the connection's description, as `initialize` would have;
/// `capabilities` are the server's as it wrote them.
fn adopt(session: &Session, result: DiscoverResult, capabilities: Value, version: &str) {
    speak(session, version);
    let server_info = server_info(result.meta.as_ref().and_then(|m| m.get(META_SERVER_INFO)))
        .unwrap_or_else(|| Implementation::new("", ""));
    log::debug!(
        "discovered {} {} over {} (protocol {version})",
        server_info.name,
        server_info.version,
        session.conn.transport.kind()
    );
    let mut init = InitializeResult::new(version, server_info);
    init.capabilities = result.capabilities;
    init.instructions = result.instructions;
    init.meta = result.meta;
    if let Ok(mut slot) = session.capabilities.write() {
        *slot = capabilities;
    }
    if let Ok(mut slot) = session.init.write() {
        *slot = Some(Arc::new(init));
    }
    // As set up as a stateless connection gets: a server unreachable from now on is gone.
    session.conn.transport.session_event(SessionEvent::Ready);
}

/// Makes `version` the stateless version the connection speaks: in every request's `_meta`
/// and headers, and in what the client reports.
fn speak(session: &Session, version: &str) {
    session.era.set_phase(Phase::Modern(version.to_owned()));
    // No stateless version has JSON-RPC batches.
    session.conn.allow_batches(false);
}

/// Reads `io.modelcontextprotocol/serverInfo`.
fn server_info(value: Option<&Value>) -> Option<Implementation> {
    value.and_then(|v| decode_value(v).ok())
}
