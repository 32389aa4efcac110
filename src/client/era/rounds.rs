//! The request path of the stateless era: methods that no longer exist, `resultType`, multi
//! round-trip requests (MRTR), and the `tools/list` and header-mismatch rules of HTTP.
//!
//! Every public method reaches the server through [`call`] (from [`era::call`](super::call)
//! in the stateless era), so a `tools/call` that comes
//! back `input_required` runs the client's handlers and is retried with `inputResponses`
//! and the echoed `requestState` under a new id, whichever method started it. Each round is
//! an ordinary request (progress and cancel work as usual); the call's timeout and maximum
//! total time span all rounds and the handlers between them (see [`clock`](super::clock)).

use std::cell::Cell;
use std::time::Instant;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::error::{Error, Result, Unsupported};
use crate::jsonrpc::ErrorCode;
use crate::sync::lock;
use crate::types::{InputRequiredResult, ResultType};

use super::super::engine::pending::Answer;
use super::super::engine::request_options::{RequestOptions, TaskMode};
use super::clock::Clock;
use super::discover::{refusal, switch_version};
use super::finish::{finish, relist_tools, Head};
use super::inputs::fulfil;
use super::session::{CallSpec, Session};
use super::task;
use super::wire::once_noting;

/// Methods of the handshake era that the stateless era removed.
const REMOVED: [&str; 4] = [
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
];

/// Methods that may answer `input_required`.
const MULTI_ROUND: [&str; 3] = ["tools/call", "prompts/get", "resources/read"];

/// Methods sent again after their response was lost: reads and listings, whose second
/// sending does nothing twice, and a task's status, result and cancellation.
const REPEATABLE: [&str; 14] = [
    "server/discover",
    "tools/list",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "completion/complete",
    "skills/list",
    "skills/get",
    "tasks/get",
    "tasks/list",
    "tasks/result",
    "tasks/cancel",
];

/// Sends a request in the stateless era, driving input rounds to the final result.
pub(crate) fn call(session: &Session, spec: &CallSpec<'_>) -> Result<Answer> {
    let mut clock = Clock::start(session, spec);
    let mut round = 0u32;
    // Whether the request declares the tasks extension, and what each round then starts
    // from: the params declaring it (`None`: the caller's params, which declare it already,
    // not copied on every call). A caller asking for a task declares it on this request; a
    // server asking for it (-32021) has the call sent again declaring it.
    let task_method = task::TASK_METHODS.contains(&spec.method);
    let mut params = spec.params.clone();
    let mut declared: Option<Option<Value>> = None;
    if task_method && spec.options.task != TaskMode::Off {
        params = task::declare(session, params);
        declared = Some(params.clone());
    } else if task::declares(session, params.as_ref()) {
        declared = Some(None);
    }
    loop {
        let options = clock.round()?;
        let answer = match call_round(session, spec, params.clone(), &options, true) {
            // Refused before it ran: sending it again declaring the extension is safe.
            Err(error) if declared.is_none() && task_method && task::requires_tasks(&error) => {
                log::debug!("`{}` needs the tasks extension; declaring it", spec.method);
                declared = Some(task::declare(session, spec.params.clone()));
                params = task::declare(session, params);
                continue;
            }
            other => other.map_err(|error| clock.own(error))?,
        };
        clock.progress();
        let head = Head::of(&answer);
        let input = match head.kind() {
            Some(ResultType::InputRequired) if MULTI_ROUND.contains(&spec.method) => {
                decode::<InputRequiredResult>(&answer, spec.method)?
            }
            Some(ResultType::InputRequired) | None => {
                return Err(Error::Protocol(format!(
                    "`{}` answered with resultType {}",
                    spec.method,
                    head.result_type.unwrap_or(Value::Null)
                )))
            }
            // The caller holds the task by handle: the created task is its answer.
            Some(ResultType::Task)
                if declared.is_some() && task_method && spec.options.task == TaskMode::Handle =>
            {
                return Ok(answer)
            }
            Some(ResultType::Task) if declared.is_some() && task_method => {
                return task::follow(session, &mut clock, &answer)
            }
            Some(ResultType::Task) => return Err(unadvertised(spec.method)),
            Some(ResultType::Complete) => return Ok(finish(session, spec.method, answer, head)),
        };
        round = round.saturating_add(1);
        let max = session.options.max_input_rounds;
        if round > max {
            return Err(Error::Protocol(format!(
                "`{}` still asked for input after {max} rounds",
                spec.method
            )));
        }
        log::debug!("`{}` needs input (round {round})", spec.method);
        let responses = fulfil(session, &clock, input.input_requests.iter().flatten())?;
        clock.check(session)?;
        params = Some(retry_params(
            declared.clone().flatten().or_else(|| spec.params.clone()),
            responses,
            input.request_state,
        ));
    }
}

/// Sends one round without input handling: what [`Client::request_once`] returns.
///
/// [`Client::request_once`]: crate::Client::request_once
pub(crate) fn call_once(session: &Session, spec: &CallSpec<'_>) -> Result<Value> {
    let answer = call_round(session, spec, spec.params.clone(), spec.options, true)?;
    let head = Head::of(&answer);
    match head.kind() {
        Some(ResultType::InputRequired) => answer.decode(spec.method),
        Some(ResultType::Complete) => {
            finish(session, spec.method, answer, head).decode(spec.method)
        }
        Some(ResultType::Task) => Err(unadvertised(spec.method)),
        None => Err(Error::Protocol(format!(
            "`{}` answered with an unknown resultType",
            spec.method
        ))),
    }
}

/// One request, sent again at most once: a `tools/call` whose POST was refused for its headers
/// (-32020) after re-listing the tools, a request safe to repeat after its stream broke;
/// within the round's time and cancel.
fn call_round(
    session: &Session,
    spec: &CallSpec<'_>,
    params: Option<Value>,
    options: &RequestOptions,
    may_relist: bool,
) -> Result<Answer> {
    if REMOVED.contains(&spec.method) {
        let instead = match spec.method {
            "resources/subscribe" | "resources/unsubscribe" => {
                "; `Client::listen` with a resource subscription does the same"
            }
            "ping" => "; `Client::ping` sends `server/discover` instead",
            "logging/setLevel" => "; the log level goes into every request's `_meta` instead",
            _ => "",
        };
        return Err(Error::Unsupported(Unsupported::Feature(format!(
            "`{}` does not exist in the stateless protocol era{instead}",
            spec.method
        ))));
    }
    let round = CallSpec {
        method: spec.method,
        params,
        options,
        handshake: spec.handshake,
    };
    let started = Instant::now();
    let left = || options.left_since(spec.method, started, session.conn.request_timeout());
    let refused = Cell::new(false);
    match once_noting(session, &round, Some(&refused)) {
        // Without resumption a broken stream loses the request, and the spec has it sent
        // again. That is harmless except for a tool call, whose effects would happen twice:
        // one is repeated only when the tool's listing said it is read-only or idempotent.
        Err(Error::ResponseLost(why)) if may_relist && repeatable(session, spec) => {
            log::debug!(
                "`{}` lost its response ({why}); sending it again",
                spec.method
            );
            call_round(session, spec, round.params, &left()?, false)
        }
        // The server was upgraded or replaced and speaks another stateless version now. A
        // request whose POST it refused (the spec's HTTP 400) did not run, so sending it
        // again is safe; one answered so on a stream may have, and goes again only if it is
        // safe to repeat.
        Err(error) if may_relist && switch_version(session, &error) => {
            if !refused.get() && !repeatable(session, spec) {
                return Err(error);
            }
            call_round(session, spec, round.params, &left()?, false)
        }
        // Only a refusal of the POST itself (the spec's HTTP 400) proves the tool did not
        // run: a -32020 that came as a response, on a stream that may have carried progress
        // first, is the call's outcome.
        Err(error) if may_relist && spec.method == "tools/call" && session.era.http => {
            let mismatch = refusal(&error).filter(|e| e.code == ErrorCode::HEADER_MISMATCH);
            if mismatch.is_none() || !refused.get() {
                return Err(error);
            }
            log::debug!("header mismatch on tools/call; re-listing tools and retrying");
            relist_tools(session, &left)?;
            call_round(session, spec, round.params, &left()?, false)
        }
        other => other,
    }
}

/// Whether a request may be sent again after its response was lost: one of the methods that
/// change nothing on the server ([`REPEATABLE`]), and a call of a tool last listed as
/// read-only or idempotent. Any other method, a vendor's or an extension's among them, may
/// have acted already.
fn repeatable(session: &Session, spec: &CallSpec<'_>) -> bool {
    if spec.method != "tools/call" {
        return REPEATABLE.contains(&spec.method);
    }
    let name = spec.params.as_ref().and_then(|p| p.get("name"));
    name.and_then(Value::as_str)
        .is_some_and(|name| lock(&session.era.repeatable_tools).contains(name))
}

/// The original params plus `inputResponses` and the echoed `requestState`.
fn retry_params(
    original: Option<Value>,
    responses: Map<String, Value>,
    state: Option<String>,
) -> Value {
    let mut object = match original {
        Some(Value::Object(map)) => map,
        _ => Map::new(),
    };
    // A round that asked for nothing but carried state is retried with the state alone.
    if responses.is_empty() {
        object.remove("inputResponses");
    } else {
        object.insert("inputResponses".into(), Value::Object(responses));
    }
    match state {
        Some(state) => object.insert("requestState".into(), Value::String(state)),
        None => object.remove("requestState"),
    };
    Value::Object(object)
}

/// A `resultType` of `task` where the client did not declare the tasks extension, or for a
/// method the extension does not cover: the spec makes it an invalid response, and no
/// `tasks/*` request follows it.
pub(super) fn unadvertised(method: &str) -> Error {
    if task::TASK_METHODS.contains(&method) {
        Error::Protocol(format!(
            "`{method}` answered with resultType \"task\", but this request did not declare the \
             tasks extension"
        ))
    } else {
        Error::Protocol(format!(
            "`{method}` answered with resultType \"task\", which is no valid answer to it"
        ))
    }
}

fn decode<T: DeserializeOwned>(answer: &Answer, method: &str) -> Result<T> {
    answer
        .peek()
        .map_err(|e| Error::Protocol(format!("malformed `{method}` input_required result: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_retry_keeps_the_params_and_echoes_the_state_exactly() {
        let original = Some(json!({"name": "t", "arguments": {"a": 1}, "requestState": "old"}));
        let mut responses = Map::new();
        responses.insert("k".into(), json!({"action": "accept", "content": {}}));
        let state = "s\u{2713} \"quoted\" ".to_owned();
        let retry = retry_params(original.clone(), responses, Some(state.clone()));
        assert_eq!(retry["arguments"], json!({"a": 1}));
        assert_eq!(retry["inputResponses"]["k"]["action"], "accept");
        assert_eq!(retry["requestState"].as_str(), Some(state.as_str()));
        // No state from the server: none on the retry, and no empty inputResponses either.
        let bare = retry_params(original, Map::new(), None);
        assert!(bare.get("requestState").is_none());
        assert!(bare.get("inputResponses").is_none());
    }
}
