//! The one entry every request of the client takes: the handshake era's path (with a new
//! session after one expired, in [`lifecycle`]), or the stateless era's input rounds and tasks
//! (in [`rounds`]). Both reach the engine through [`wire`](super::wire), where the response
//! cache is consulted.

use crate::error::Result;

use super::super::engine::pending::Answer;
use super::lifecycle;
use super::rounds;
use super::session::{CallSpec, Session};

/// Sends a request and waits for its outcome, in the era the connection speaks.
///
/// Every request of the client goes through here. In the handshake era the params are not
/// copied: a request sent again after a session expiry is sent with a new id. In the stateless
/// era the call runs its input rounds (see [`rounds`]).
pub(crate) fn call(session: &Session, spec: CallSpec<'_>) -> Result<Answer> {
    if session.era.is_modern() {
        return rounds::call(session, &spec);
    }
    lifecycle::call(session, spec)
}
