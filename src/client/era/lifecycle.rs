//! The handshake era's session: the `initialize` handshake and version negotiation, and its
//! requests ([`call`]), sent again in a new session when the server ended the old one.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::error::{Closed, Error, Result, Unsupported};
use crate::jsonrpc::{Message, Request};
use crate::sync::{deadline_after, lock};
use crate::transport::SessionEvent;
use crate::types::{InitializeResult, LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS};

use super::super::engine::pending::Answer;
use super::super::engine::request_options::RequestOptions;
use super::session::{CallSpec, RawCapabilities, Session};
use super::wire::{cached, exchange};

/// A handshake-era call: through the response cache only when the user asked to cache such
/// servers' lists (they send no hints), so that the common path sends the params without
/// copying them.
pub(crate) fn call(session: &Session, spec: CallSpec<'_>) -> Result<Answer> {
    let cache = session.cache.get();
    if cache.is_some_and(|cache| cache.keeps_legacy(spec.method)) {
        let mut wire = |spec: &mut CallSpec<'_>| {
            let message = Request::new(0, spec.method, spec.params.clone());
            again_after_expiry(session, spec, Message::Request(message))
        };
        let mut spec = spec;
        return cached(session, &mut spec, true, &mut wire);
    }
    let message = Message::Request(Request::new(0, spec.method, spec.params));
    let spec = CallSpec {
        params: None,
        ..spec
    };
    again_after_expiry(session, &spec, message)
}

/// A call of `message` (whose params `spec` no longer holds), sent again with a new id in a
/// new session after the server ended the old one, within what is left of the call's time.
fn again_after_expiry(
    session: &Session,
    spec: &CallSpec<'_>,
    mut message: Message,
) -> Result<Answer> {
    let generation = session.generation.load(Ordering::SeqCst);
    let started = Instant::now();
    match exchange(session, spec, &mut message) {
        Err(Error::SessionExpired) if !spec.handshake && session.options.reinitialize_on_expiry => {
            log::debug!("session expired during `{}`; re-initializing", spec.method);
            reinitialize(session, generation)?;
            let timeout = session.conn.request_timeout();
            let options = spec.options.left_since(spec.method, started, timeout)?;
            let again = CallSpec {
                options: &options,
                params: None,
                ..*spec
            };
            exchange(session, &again, &mut message)
        }
        other => other,
    }
}

/// Runs `initialize`, checks the answered version, sends `notifications/initialized` and
/// tells the transport the session is ready, by the handshake deadline (at connect time the
/// end of the start-up timeout, which bounds the whole connect; see [`super::discover`]).
pub(crate) fn initialize(session: &Session) -> Result<()> {
    let answer = match send_initialize(session, LATEST_PROTOCOL_VERSION) {
        Ok(answer) => answer,
        Err(error) => match older_version(&error) {
            // A server that refuses the version with the ones it supports (the spec's example
            // of an initialization error) gets one more `initialize`, at the newest of those
            // this client speaks too.
            Some(version) => {
                log::debug!("initialize refused ({error}); offering {version}");
                send_initialize(session, version)?
            }
            None => return Err(error),
        },
    };
    let capabilities = answer
        .peek::<RawCapabilities>()
        .map_or(Value::Null, |raw| raw.capabilities);
    let result: InitializeResult = answer.decode("initialize")?;
    if !SUPPORTED_PROTOCOL_VERSIONS.contains(&result.protocol_version.as_str()) {
        return Err(Error::Unsupported(Unsupported::Version {
            offered: LATEST_PROTOCOL_VERSION.to_owned(),
            received: result.protocol_version,
        }));
    }
    let transport = &session.conn.transport;
    log::debug!(
        "initialized {} {} over {} (protocol {})",
        result.server_info.name,
        result.server_info.version,
        transport.kind(),
        result.protocol_version
    );
    transport.session_event(SessionEvent::Negotiated {
        protocol_version: &result.protocol_version,
    });
    // Batches exist only in protocol 2025-03-26; elsewhere they break the protocol.
    session
        .conn
        .allow_batches(result.protocol_version == "2025-03-26");
    if let Ok(mut caps) = session.capabilities.write() {
        *caps = capabilities;
    }
    if let Ok(mut init) = session.init.write() {
        *init = Some(Arc::new(result));
    }
    session.conn.notify("notifications/initialized", None)?;
    transport.session_event(SessionEvent::Ready);
    session.generation.fetch_add(1, Ordering::SeqCst);
    ask_for_logs(
        session,
        &RequestOptions::default().with_timeout(left(session)),
    );
    Ok(())
}

/// Sends `initialize` offering `version`, within the time left until the handshake deadline.
fn send_initialize(session: &Session, version: &str) -> Result<Answer> {
    let options = RequestOptions::default().with_timeout(left(session));
    let spec = CallSpec {
        method: "initialize",
        params: Some(initialize_params(session, version)),
        options: &options,
        handshake: true,
    };
    call(session, spec).map_err(during_initialize)
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
pub(crate) fn left(session: &Session) -> Duration {
    lock(&session.handshake_deadline).saturating_duration_since(Instant::now())
}

/// Tells a new session the log level the client asked for, when its server offers logging.
/// A refusal costs the logs, not the session.
fn ask_for_logs(session: &Session, options: &RequestOptions) {
    let Some(level) = session.era.log_level() else {
        return;
    };
    if !session.offers("logging") {
        log::debug!("log level {level} not sent: the server does not offer logging");
        return;
    }
    let spec = CallSpec {
        method: "logging/setLevel",
        params: Some(json!({ "level": level })),
        options,
        handshake: true,
    };
    if let Err(err) = call(session, spec) {
        log::debug!("the server refused log level {level}: {err}");
    }
}

/// Starts a new session after the server ended the old one, unless another caller already
/// did since `seen_generation`, then restores resource subscriptions.
pub(crate) fn reinitialize(session: &Session, seen_generation: u64) -> Result<()> {
    let _guard = lock(&session.reinit_lock);
    if session.generation.load(Ordering::SeqCst) != seen_generation {
        return Ok(());
    }
    session.conn.transport.session_event(SessionEvent::Reset);
    let deadline = deadline_after(Instant::now(), session.options.startup_timeout);
    *lock(&session.handshake_deadline) = deadline;
    if let Err(error) = initialize(session) {
        // The cached handshake verdict failed: the next connection probes again, as the
        // spec has a client re-probe "if the cached assumption later fails".
        if let Some(key) = session.era.verdict_key.get() {
            session.options.verdicts.forget(key);
        }
        return Err(error);
    }
    // What the old session's notifications would have said since it ended is lost.
    session
        .conn
        .report_gap("the server ended the session and a new one began");
    let subscriptions = lock(&session.subscriptions).clone();
    for uri in subscriptions {
        let options = RequestOptions::default();
        let spec = CallSpec {
            method: "resources/subscribe",
            params: Some(json!({ "uri": uri })),
            options: &options,
            handshake: true,
        };
        if let Err(err) = call(session, spec) {
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
fn initialize_params(session: &Session, version: &str) -> Value {
    json!({
        "protocolVersion": version,
        "capabilities": session.handshake_capabilities,
        "clientInfo": session.options.client_info,
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
