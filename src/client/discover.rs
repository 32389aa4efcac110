//! Era selection at connect time: the `server/discover` probe, its classification, and the
//! `initialize` fallback on the same connection.
//!
//! The probe is classified by a denylist, as the spec asks ("MUST NOT be keyed to one error
//! code"): a `DiscoverResult` or a stateless error (-32020, -32021, -32022) means the stateless
//! era; any other JSON-RPC error, an HTTP error whose body is not a stateless error, or
//! silence until the probe timeout means the handshake era. A stdio server that exits on the
//! probe (some handshake-era servers do on any first message but `initialize`) is started
//! again and initialized; the caller sees only a debug line.

use std::sync::Arc;

use serde_json::Value;

use crate::error::{Error, Result, Unsupported};
use crate::jsonrpc::decode_value;
use crate::jsonrpc::{ErrorCode, ErrorObject};
use crate::transport::SessionEvent;
use crate::types::{
    is_supported_protocol_version, DiscoverResult, Implementation, InitializeResult,
    UnsupportedProtocolVersionData, META_SERVER_INFO, MODERN_PROTOCOL_VERSIONS,
};

use super::era::{cached_verdict, remember_verdict, Phase, ProtocolMode};
use super::options::RequestOptions;
use super::session::{CallSpec, Shared};

/// How a connection attempt ended.
pub(crate) enum Established {
    /// The connection speaks its era and is ready.
    Ready,
    /// The server went away during the probe; connect again (the verdict is now cached).
    Restart,
}

/// What the probe said about the server.
enum Verdict {
    Modern(Box<DiscoverResult>, String),
    Legacy(String),
    /// The server closed the connection on the probe.
    Exited(String),
}

/// Chooses the era for the connection to `server` and sets it up: `server/discover` or
/// `initialize`, or both in that order.
pub(crate) fn establish(shared: &Shared, server: &str) -> Result<Established> {
    let configured = shared.options.era.mode.clone();
    let mode = match configured {
        ProtocolMode::Auto => cached_verdict(server).unwrap_or(ProtocolMode::Auto),
        other => other,
    };
    // The legacy HTTP+SSE transport predates the stateless era.
    let mode = match shared.transport.kind() {
        "sse" if mode == ProtocolMode::Auto => ProtocolMode::Legacy,
        _ => mode,
    };
    let (version, auto) = match mode {
        ProtocolMode::Legacy => {
            super::lifecycle::initialize(shared)?;
            return Ok(Established::Ready);
        }
        ProtocolMode::Pinned(version) => {
            if !MODERN_PROTOCOL_VERSIONS.contains(&version.as_str()) {
                return Err(Error::Config(format!(
                    "`{version}` is not a stateless protocol version this client speaks"
                )));
            }
            (version, false)
        }
        ProtocolMode::Auto => (MODERN_PROTOCOL_VERSIONS[0].to_owned(), true),
    };
    match probe(shared, version, auto)? {
        Verdict::Modern(result, version) => {
            adopt(shared, *result, &version);
            if auto {
                remember_verdict(server, ProtocolMode::Pinned(version));
            }
            Ok(Established::Ready)
        }
        Verdict::Legacy(why) => {
            log::debug!("{server} is a handshake-era server ({why}); initializing");
            shared.era.set_phase(Phase::Legacy);
            shared.transport.session_event(SessionEvent::Reset);
            remember_verdict(server, ProtocolMode::Legacy);
            super::lifecycle::initialize(shared)?;
            Ok(Established::Ready)
        }
        Verdict::Exited(why) => {
            log::debug!("{server} closed on server/discover ({why}); starting it again");
            remember_verdict(server, ProtocolMode::Legacy);
            Ok(Established::Restart)
        }
    }
}

/// Sends `server/discover` (again at a version the server names after -32022, once).
fn probe(shared: &Shared, mut version: String, auto: bool) -> Result<Verdict> {
    // The probe is part of connecting, which the init timeout bounds too.
    let init = shared.options.init_timeout;
    let options = RequestOptions::default().with_timeout(match auto {
        true => shared.options.era.probe_timeout.min(init),
        false => init,
    });
    let mut retried = false;
    shared.transport.session_event(SessionEvent::Stateless);
    loop {
        shared.era.set_phase(Phase::Modern(version.clone()));
        let outcome = shared.call_once(&CallSpec {
            method: "server/discover",
            params: None,
            options: &options,
            handshake: true,
        });
        let error = match outcome {
            Ok(answer) => {
                return match answer.peek::<DiscoverResult>() {
                    Ok(result) => choose(result, version, auto),
                    Err(e) => legacy_or(
                        Error::Protocol(format!("malformed server/discover result: {e}")),
                        auto,
                    ),
                };
            }
            Err(error) => error,
        };
        let Some(object) = modern_error(&error) else {
            return legacy_or(error, auto);
        };
        if object.code != ErrorCode::UNSUPPORTED_PROTOCOL_VERSION || retried {
            return Err(Error::Rpc(object));
        }
        let data: UnsupportedProtocolVersionData = object
            .data
            .clone()
            .and_then(|d| decode_value(&d).ok())
            .unwrap_or_default();
        let shared_modern = data
            .supported
            .iter()
            .find(|v| MODERN_PROTOCOL_VERSIONS.contains(&v.as_str()));
        match shared_modern {
            Some(next) => {
                log::debug!("server/discover: server wants {next}, not {version}; retrying");
                version = next.clone();
                retried = true;
            }
            None if auto
                && data
                    .supported
                    .iter()
                    .any(|v| is_supported_protocol_version(v)) =>
            {
                return Ok(Verdict::Legacy(format!(
                    "it speaks only {:?}",
                    data.supported
                )));
            }
            None => {
                return Err(Error::Unsupported(Unsupported::Version {
                    offered: version,
                    received: data.supported.join(", "),
                }))
            }
        }
    }
}

/// The version to speak with a server that answered `server/discover`.
fn choose(result: DiscoverResult, asked: String, auto: bool) -> Result<Verdict> {
    let supported = &result.supported_versions;
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
        Error::Timeout { .. } => Ok(Verdict::Legacy("no answer".into())),
        // Closed on our side (the client or its manager gave up): nothing to start again.
        Error::Closed(closed) if closed.is_client_close() => Err(error),
        Error::Closed(closed) => Ok(Verdict::Exited(closed.reason.clone())),
        Error::Protocol(why) => Ok(Verdict::Legacy(why.clone())),
        _ => Err(error),
    }
}

/// The stateless-era error in a failed request: a JSON-RPC error, or an HTTP error whose
/// body is one, with code -32020, -32021 or -32022.
pub(crate) fn modern_error(error: &Error) -> Option<ErrorObject> {
    let modern = [
        ErrorCode::HEADER_MISMATCH,
        ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
        ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
    ];
    error.rpc_error().filter(|e| modern.contains(&e.code))
}

/// Makes the discover result the connection's description, as `initialize` would have.
fn adopt(shared: &Shared, result: DiscoverResult, version: &str) {
    shared.era.set_phase(Phase::Modern(version.to_owned()));
    let server_info = server_info(result.meta.as_ref().and_then(|m| m.get(META_SERVER_INFO)))
        .unwrap_or_else(|| Implementation::new("", ""));
    log::debug!(
        "discovered {} {} over {} (protocol {version})",
        server_info.name,
        server_info.version,
        shared.transport.kind()
    );
    let capabilities = serde_json::to_value(&result.capabilities).unwrap_or(Value::Null);
    let mut init = InitializeResult::new(version, server_info);
    init.capabilities = result.capabilities;
    init.instructions = result.instructions;
    init.meta = result.meta;
    if let Ok(mut slot) = shared.core.protocol_version.write() {
        *slot = version.to_owned();
    }
    if let Ok(mut slot) = shared.capabilities.write() {
        *slot = capabilities;
    }
    if let Ok(mut slot) = shared.init.write() {
        *slot = Some(Arc::new(init));
    }
}

/// Reads `io.modelcontextprotocol/serverInfo`.
pub(crate) fn server_info(value: Option<&Value>) -> Option<Implementation> {
    value.and_then(|v| decode_value(v).ok())
}
