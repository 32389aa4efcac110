//! The last step of every request before the engine: the response cache, then the exchange.
//! Both eras pass here, so this is the one place the cache is consulted.

use std::cell::Cell;

use crate::error::Result;
use crate::jsonrpc::{Message, Request};

use super::super::engine::exchange::Call;
use super::super::engine::pending::Answer;
use super::session::{CallSpec, Session};

/// One request without input rounds or a new session: what the stateless era's rounds and
/// the era's own requests (the probe, re-listing, task polls) send. A fresh cached result
/// answers without a round trip.
pub(crate) fn once(session: &Session, spec: &CallSpec<'_>) -> Result<Answer> {
    once_noting(session, spec, None)
}

/// [`once`], setting `refused` when the outcome is the failure of the request's send (an HTTP
/// status refusing it) rather than a response to it.
pub(crate) fn once_noting(
    session: &Session,
    spec: &CallSpec<'_>,
    refused: Option<&Cell<bool>>,
) -> Result<Answer> {
    let legacy = !session.era.is_modern();
    let mut wire = |spec: &CallSpec<'_>| {
        let mut message = Message::Request(Request::new(0, spec.method, spec.params.clone()));
        exchange_noting(session, spec, &mut message, refused)
    };
    cached(session, spec, legacy, &mut wire)
}

/// Answers `spec` from the response cache when it holds a fresh result, else by `wire`
/// (storing what may be cached; `legacy` for a handshake-era server, which sends no hints).
pub(crate) fn cached(
    session: &Session,
    spec: &CallSpec<'_>,
    legacy: bool,
    wire: &mut dyn FnMut(&CallSpec<'_>) -> Result<Answer>,
) -> Result<Answer> {
    let context = || session.conn.transport.authorization_context();
    session.cache.through(spec, legacy, &context, wire)
}

/// One round trip of `message` on the engine, as `spec` says.
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
    session.conn.exchange(&call, message)
}
