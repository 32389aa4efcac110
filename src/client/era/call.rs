//! The one entry every request of the client takes: the handshake era's path (with a new
//! session after one expired, in [`lifecycle`]), or the stateless era's input rounds and tasks
//! (in [`rounds`]). Both reach the engine through [`wire`](super::wire), where the response
//! cache is consulted.

use crate::error::Result;

use crate::types::ResultType;

use super::super::engine::pending::Answer;
use super::super::engine::request_options::TaskMode;
use super::clock::Clock;
use super::finish::Head;
use super::lifecycle;
use super::rounds;
use super::session::{CallSpec, Session};
use super::task;

/// Sends a request and waits for its outcome, in the era the connection speaks: every request of
/// the client goes through here.
pub(crate) fn call(session: &Session, spec: CallSpec<'_>) -> Result<Answer> {
    // A caller asking to follow a task, of a client that follows none: nothing is sent.
    let follows =
        spec.options.task == TaskMode::Follow && task::TASK_METHODS.contains(&spec.method);
    if follows && session.tasks.is_none() {
        return Err(task::without_support(spec.method));
    }
    if session.era.is_modern() {
        return rounds::call(session, spec);
    }
    handshake(session, spec)
}

/// A handshake-era call. Servers send task results (not of this era's schema) to clients that
/// declared the extension: a task answering `tools/call` is followed to its end; any other, or an
/// undeclared one, fails as invalid, never read as an empty result.
fn handshake(session: &Session, spec: CallSpec<'_>) -> Result<Answer> {
    let (method, options) = (spec.method, spec.options);
    let task_method = task::TASK_METHODS.contains(&method);
    let asks = task_method && options.task != TaskMode::Off;
    let spec = match asks {
        true => CallSpec {
            params: task::declare(session, spec.params),
            ..spec
        },
        false => spec,
    };
    let declared = asks || task::declares(session, spec.params.as_ref());
    if !task_method && !declared {
        return lifecycle::call(session, spec);
    }
    let answer = lifecycle::call(session, spec)?;
    if Head::of(&answer).kind() != Some(ResultType::Task) {
        return Ok(answer);
    }
    if !(task_method && declared) {
        return Err(rounds::unadvertised(method));
    }
    if options.task == TaskMode::Handle {
        return Ok(answer);
    }
    let spec = CallSpec {
        method,
        params: None,
        options,
        handshake: false,
    };
    let mut clock = Clock::start(session, &spec);
    task::follow_installed(session, &mut clock, &answer)
}
