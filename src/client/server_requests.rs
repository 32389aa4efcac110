//! Answers the server's requests (`ping`, `roots/list`, `sampling/createMessage`,
//! `elicitation/create`) with the caller's handlers, off the router thread.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use crate::jsonrpc::{ErrorCode, ErrorObject, Message, Request, Response};

use super::options::lock;
use super::session::Shared;

/// How long the reply to a server request may take to hand to the transport.
const REPLY_DEADLINE: Duration = Duration::from_secs(10);

/// Answers one server request. Every request gets exactly one reply, unless the server
/// cancels it first.
pub(crate) fn handle(shared: &Arc<Shared>, request: Request) {
    // Handlers may block (a user answering a form, a model generating); a thread per request
    // keeps the router free to deliver responses meanwhile.
    let worker = Arc::clone(shared);
    let id = request.id.clone();
    let spawned = std::thread::Builder::new()
        .name("umcp-handler".into())
        .spawn(move || answer(&worker, request));
    if let Err(err) = spawned {
        log::debug!("could not start a handler thread: {err}");
        let error = ErrorObject::new(
            ErrorCode::INTERNAL_ERROR,
            "client could not handle the request",
        );
        reply(shared, Response::err(id, error));
    }
}

fn answer(shared: &Shared, request: Request) {
    let id = request.id.clone();
    let method = request.method.clone();
    let outcome =
        catch_unwind(AssertUnwindSafe(|| dispatch(shared, request))).unwrap_or_else(|_| {
            Err(ErrorObject::new(
                ErrorCode::INTERNAL_ERROR,
                format!("the client's `{method}` handler panicked"),
            ))
        });
    let cancelled = {
        let mut cancelled = lock(&shared.cancelled_by_server);
        let before = cancelled.len();
        cancelled.retain(|c| c != &id);
        cancelled.len() != before
    };
    if cancelled {
        // The server withdrew the request; the spec says not to answer it.
        log::debug!("server cancelled its `{method}` request {id}; not replying");
        return;
    }
    let response = match outcome {
        Ok(result) => Response::ok(id, result),
        Err(error) => Response::err(id, error),
    };
    reply(shared, response);
}

fn dispatch(shared: &Shared, request: Request) -> Result<Value, ErrorObject> {
    // The stateless era has no server requests (input comes through input rounds): a server
    // that sends one anyway gets "method not found", and no handler runs.
    if shared.era.modern_version().is_some() {
        return Err(not_found(&request.method));
    }
    let options = &shared.options;
    match request.method.as_str() {
        "ping" => Ok(Value::Object(Default::default())),
        "roots/list" => match &options.roots {
            Some(handler) => encode(handler()?),
            None => Err(not_found(&request.method)),
        },
        "sampling/createMessage" => match &options.sampling {
            Some(handler) => encode(handler(decode(request.params)?)?),
            None => Err(not_found(&request.method)),
        },
        "elicitation/create" => match &options.elicitation {
            Some(handler) => encode(handler(decode(request.params)?)?),
            None => Err(not_found(&request.method)),
        },
        _ => Err(not_found(&request.method)),
    }
}

fn reply(shared: &Shared, response: Response) {
    let message = Message::Response(response);
    if let Err(err) = shared
        .transport
        .send(&message, Instant::now() + REPLY_DEADLINE)
    {
        log::debug!("could not answer a server request: {err}");
    }
}

fn decode<T: DeserializeOwned>(params: Option<Value>) -> Result<T, ErrorObject> {
    serde_json::from_value(params.unwrap_or(Value::Null))
        .map_err(|e| ErrorObject::new(ErrorCode::INVALID_PARAMS, format!("invalid params: {e}")))
}

fn encode<T: Serialize>(result: T) -> Result<Value, ErrorObject> {
    serde_json::to_value(result).map_err(|e| {
        ErrorObject::new(
            ErrorCode::INTERNAL_ERROR,
            format!("unencodable result: {e}"),
        )
    })
}

fn not_found(method: &str) -> ErrorObject {
    ErrorObject::new(
        ErrorCode::METHOD_NOT_FOUND,
        format!("method not found: {method}"),
    )
}
