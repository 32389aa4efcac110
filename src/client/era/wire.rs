//! The last step of every request before the engine: the response cache, then the exchange.
//! Both eras pass here, so this is the one place the cache is consulted.

use std::cell::Cell;

use crate::error::Result;
use crate::jsonrpc::{Message, Request};

use super::super::engine::exchange::Call;
use super::super::engine::pending::Answer;
use super::meta::{stamp, unstamp, Stamped};
use super::session::{CallSpec, Session};

/// One request without input rounds or a new session: what the stateless era's rounds and
/// the era's own requests (the probe, re-listing, task polls) send. A fresh cached result
/// answers without a round trip. The params are moved into the message, not copied, and are
/// back in `spec` afterwards as they were, for a caller that sends them again.
pub(crate) fn once(session: &Session, spec: &mut CallSpec<'_>) -> Result<Answer> {
    once_noting(session, spec, None)
}

/// [`once`], setting `refused` when the outcome is the failure of the request's send (an HTTP
/// status refusing it) rather than a response to it.
pub(crate) fn once_noting(
    session: &Session,
    spec: &mut CallSpec<'_>,
    refused: Option<&Cell<bool>>,
) -> Result<Answer> {
    let legacy = !session.era.is_modern();
    let mut wire = |spec: &mut CallSpec<'_>| {
        let request = Request::new(0, spec.method, spec.params.take());
        let mut message = Message::Request(request);
        let outcome = exchange_noting(session, spec, &mut message, refused);
        if let Message::Request(request) = message {
            spec.params = request.params;
        }
        outcome
    };
    cached(session, spec, legacy, &mut wire)
}

/// Answers `spec` from the response cache when it holds a fresh result, else by `wire`
/// (storing what may be cached; `legacy` for a handshake-era server, which sends no hints).
pub(crate) fn cached(
    session: &Session,
    spec: &mut CallSpec<'_>,
    legacy: bool,
    wire: &mut dyn FnMut(&mut CallSpec<'_>) -> Result<Answer>,
) -> Result<Answer> {
    let Some(cache) = session.cache.get() else {
        return wire(spec);
    };
    let context = || session.conn.transport.authorization_context();
    cache.through(spec, legacy, &context, wire)
}

/// One round trip of `message` on the engine, as `spec` says. In the stateless era the
/// request's `_meta` is stamped on the message here, on the one path every request of the
/// client takes, and taken off again afterwards: the message goes back to its owner as it
/// came, to be sent again (stamped afresh, at the version spoken then) if need be.
pub(crate) fn exchange(
    session: &Session,
    spec: &CallSpec<'_>,
    message: &mut Message,
) -> Result<Answer> {
    exchange_noting(session, spec, message, None)
}

/// [`exchange`], setting `refused` as [`once_noting`] says.
fn exchange_noting(
    session: &Session,
    spec: &CallSpec<'_>,
    message: &mut Message,
    refused: Option<&Cell<bool>>,
) -> Result<Answer> {
    let call = Call {
        method: spec.method,
        options: spec.options,
        setup: spec.handshake.then_some(&session.handshake_deadline),
        refused,
    };
    let stamped = stamp_message(session, message);
    let outcome = session.conn.exchange(&call, message);
    if let (Some(stamped), Message::Request(request)) = (stamped, message) {
        unstamp(&mut request.params, stamped);
    }
    outcome
}

/// Stamps the stateless `_meta` on `message` when it is a request of a connection speaking the
/// stateless era: what [`exchange`] does for the requests it sends, and what the layer above
/// calls for a request it sends by itself (a subscription's `subscriptions/listen`). What was
/// added, for `unstamp`.
pub(crate) fn stamp_message(session: &Session, message: &mut Message) -> Option<Stamped> {
    let (Some(version), Message::Request(request)) = (session.era.modern_version(), message) else {
        return None;
    };
    let era = &session.era;
    Some(stamp(
        &mut request.params,
        &version,
        &era.identity,
        era.log_level(),
    ))
}
