//! The last step of every request before the engine: the response cache, then the exchange.
//! Both eras pass here, so this is the one place the cache is consulted.

use crate::error::Result;
use crate::jsonrpc::{Message, Request};

use super::super::engine::exchange::Call;
use super::super::engine::pending::Answer;
use super::session::{CallSpec, Session};

/// One request without input rounds or a new session: what the stateless era's rounds and
/// the era's own requests (the probe, re-listing, task polls) send. A fresh cached result
/// answers without a round trip.
pub(crate) fn once(session: &Session, spec: &CallSpec<'_>) -> Result<Answer> {
    let legacy = !session.era.is_modern();
    let mut wire = |spec: &CallSpec<'_>| {
        let mut message = Message::Request(Request::new(0, spec.method, spec.params.clone()));
        exchange(session, spec, &mut message)
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
    let call = Call {
        method: spec.method,
        options: spec.options,
        setup: spec.handshake.then_some(&session.handshake_deadline),
    };
    session.conn.exchange(&call, message)
}
