//! The `initialize` handshake, version negotiation and re-initialization after a session
//! expires.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::error::{Closed, Error, Result, Unsupported};
use crate::sync::lock;
use crate::transport::SessionEvent;
use crate::types::{InitializeResult, LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS};

use super::super::engine::request_options::RequestOptions;
use super::session::{CallSpec, Shared};

/// Runs `initialize`, checks the answered version, sends `notifications/initialized` and
/// tells the transport the session is ready, by the handshake deadline (at connect time the
/// end of the init timeout, which bounds the whole connect; see [`super::discover`]).
pub(crate) fn initialize(shared: &Shared) -> Result<()> {
    let answer = match send_initialize(shared, LATEST_PROTOCOL_VERSION) {
        Ok(answer) => answer,
        Err(error) => match older_version(&error) {
            // A server that refuses the version with the ones it supports (the spec's example
            // of an initialization error) gets one more `initialize`, at the newest of those
            // this client speaks too.
            Some(version) => {
                log::debug!("initialize refused ({error}); offering {version}");
                send_initialize(shared, version)?
            }
            None => return Err(error),
        },
    };
    /// The capabilities as the server wrote them, unknown ones included.
    #[derive(serde::Deserialize)]
    struct Raw {
        #[serde(default)]
        capabilities: Value,
    }
    let capabilities = answer.peek::<Raw>().map_or(Value::Null, |r| r.capabilities);
    let result: InitializeResult = answer.decode("initialize")?;
    if !SUPPORTED_PROTOCOL_VERSIONS.contains(&result.protocol_version.as_str()) {
        return Err(Error::Unsupported(Unsupported::Version {
            offered: LATEST_PROTOCOL_VERSION.to_owned(),
            received: result.protocol_version,
        }));
    }
    log::debug!(
        "initialized {} {} over {} (protocol {})",
        result.server_info.name,
        result.server_info.version,
        shared.transport.kind(),
        result.protocol_version
    );
    shared.transport.session_event(SessionEvent::Negotiated {
        protocol_version: &result.protocol_version,
    });
    if let Ok(mut version) = shared.core.protocol_version.write() {
        version.clone_from(&result.protocol_version);
    }
    if let Ok(mut caps) = shared.capabilities.write() {
        *caps = capabilities;
    }
    if let Ok(mut init) = shared.init.write() {
        *init = Some(Arc::new(result));
    }
    shared.notify("notifications/initialized", None)?;
    shared.transport.session_event(SessionEvent::Ready);
    shared.generation.fetch_add(1, Ordering::SeqCst);
    ask_for_logs(
        shared,
        &RequestOptions::default().with_timeout(left(shared)),
    );
    Ok(())
}

/// Sends `initialize` offering `version`, within the time left until the handshake deadline.
fn send_initialize(
    shared: &Shared,
    version: &str,
) -> Result<super::super::engine::pending::Answer> {
    let options = RequestOptions::default().with_timeout(left(shared));
    shared
        .call(CallSpec {
            method: "initialize",
            params: Some(initialize_params(shared, version)),
            options: &options,
            handshake: true,
        })
        .map_err(during_initialize)
}

/// For an `initialize` refused with -32602 and `data.supported` (the versions the server
/// speaks), the newest of them this client speaks too, when it is not the one just offered.
fn older_version(error: &Error) -> Option<&'static str> {
    let refusal = error
        .rpc_error()
        .filter(|e| e.code == crate::jsonrpc::ErrorCode::INVALID_PARAMS)?;
    let supported = refusal.data.as_ref()?.get("supported")?.as_array()?;
    SUPPORTED_PROTOCOL_VERSIONS
        .into_iter()
        .filter(|&version| version != LATEST_PROTOCOL_VERSION)
        .find(|version| supported.iter().any(|s| s.as_str() == Some(version)))
}

/// The time left until the handshake deadline.
pub(crate) fn left(shared: &Shared) -> Duration {
    lock(&shared.handshake_deadline).saturating_duration_since(Instant::now())
}

/// Tells a new session the log level the client asked for, when its server offers logging.
/// A refusal costs the logs, not the session.
fn ask_for_logs(shared: &Shared, options: &RequestOptions) {
    let Some(level) = shared.era.log_level() else {
        return;
    };
    if !shared.offers("logging") {
        log::debug!("log level {level} not sent: the server does not offer logging");
        return;
    }
    let asked = shared.call(CallSpec {
        method: "logging/setLevel",
        params: Some(json!({ "level": level })),
        options,
        handshake: true,
    });
    if let Err(err) = asked {
        log::debug!("the server refused log level {level}: {err}");
    }
}

/// Starts a new session after the server ended the old one, unless another caller already
/// did since `seen_generation`, then restores resource subscriptions.
pub(crate) fn reinitialize(shared: &Shared, seen_generation: u64) -> Result<()> {
    let _guard = lock(&shared.reinit_lock);
    if shared.generation.load(Ordering::SeqCst) != seen_generation {
        return Ok(());
    }
    shared.transport.session_event(SessionEvent::Reset);
    let deadline = crate::sync::deadline_after(Instant::now(), shared.options.era.init_timeout);
    *lock(&shared.handshake_deadline) = deadline;
    initialize(shared)?;
    // What the old session's notifications would have said since it ended is lost.
    super::super::follow::listen::route::gap(
        &shared.listens,
        &shared.cache,
        "the server ended the session and a new one began",
    );
    let subscriptions = lock(&shared.subscriptions).clone();
    for uri in subscriptions {
        let options = RequestOptions::default();
        let restored = shared.call(CallSpec {
            method: "resources/subscribe",
            params: Some(json!({ "uri": uri })),
            options: &options,
            handshake: true,
        });
        if let Err(err) = restored {
            log::debug!(
                "could not restore the subscription to {}: {err}",
                crate::redact::url(&uri)
            );
        }
    }
    Ok(())
}

/// The `initialize` params: the version offered, the capabilities the handlers imply, and
/// the client's identity.
fn initialize_params(shared: &Shared, version: &str) -> Value {
    let options = &shared.options;
    let capabilities = super::meta::client_capabilities(options, super::state::Era::Legacy);
    json!({
        "protocolVersion": version,
        "capabilities": capabilities,
        "clientInfo": options.era.client_info,
    })
}

/// Says when a connection closed during the handshake, the most common way a misconfigured
/// server fails ("server exited during initialize: exit status: 1; stderr: …").
fn during_initialize(err: Error) -> Error {
    match err {
        Error::Closed(closed) => Error::Closed(Arc::new(Closed {
            reason: format!("{} during initialize", closed.reason),
            ..(*closed).clone()
        })),
        other => other,
    }
}
