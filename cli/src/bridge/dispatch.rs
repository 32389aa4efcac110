//! A host's message, taken by whichever end reads it (stdin, an HTTP request): a request is
//! answered at once when the bridge knows the answer, or becomes a job on a thread of its
//! own; a notification cancels a job or passes the host's news on; a response answers a
//! question the bridge put to the host.
//!
//! A request is of the era it says: one whose `_meta` names a stateless version is served
//! statelessly (its capabilities read from that `_meta`), any other in the handshake era of
//! its host's session. The retry of an input round (its `requestState` one the bridge gave)
//! resumes the job that asked.

use std::sync::Arc;

use serde_json::{json, Map, Value};
use umcp::jsonrpc::{ErrorCode, ErrorObject, Message, Notification, Request, RequestId, Response};

use super::calls::{self, Asked};
use super::context::Bridge;
use super::host::{Handshake, Host};
use super::jobs::Current;
use super::outbox::{Kind, Shared};
use super::wire::{
    asked_log_level, declared_capabilities, era_of, modern_refusal, progress_token, refusal,
    shaped, Era,
};

/// The requests a job works on; any other is answered at once or refused.
const JOB_METHODS: &[&str] = &[
    "initialize",
    "server/discover",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "completion/complete",
    "logging/setLevel",
    "subscriptions/listen",
];

/// The requests whose stateless retries may carry an input round's answers.
const ROUND_METHODS: &[&str] = &["tools/call", "prompts/get", "resources/read"];

/// Takes one message of `host`; answers to its requests go to `reply`.
pub fn take(bridge: &Arc<Bridge>, host: &Arc<Host>, message: Message, reply: Shared) {
    match message {
        Message::Request(request) => self::request(bridge, host, request, reply),
        Message::Notification(note) => notified(bridge, host, note),
        Message::Response(response) => {
            let id = response.id.clone();
            if !host.answered(response) {
                log::debug!("host {}: an answer to nothing asked ({id:?})", host.id);
            }
        }
    }
}

fn request(bridge: &Arc<Bridge>, host: &Arc<Host>, request: Request, reply: Shared) {
    let id = request.id.clone();
    let era = era_of(request.params.as_ref());
    let answer = |result: Result<Value, ErrorObject>| {
        let response = match result {
            Ok(value) => Response::ok(
                id.clone(),
                shaped(value, era, &bridge.server_info(), "ping"),
            ),
            Err(error) => Response::err(id.clone(), error),
        };
        reply.send(response.into(), Kind::Answer);
    };
    let params = request.params.as_ref();
    if era == Era::Modern {
        if let Some(refused) = modern_refusal(params) {
            return answer(Err(refused));
        }
    }
    let method = request.method.as_str();
    if method == "ping" {
        return answer(Ok(json!({})));
    }
    if !JOB_METHODS.contains(&method) || (era == Era::Modern && method == "initialize") {
        let why = format!("no method {method} here");
        return answer(Err(ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, why)));
    }
    if method == "initialize" {
        host.set_handshake(handshake(params));
    }
    let current = Current {
        id: id.clone(),
        reply: Arc::clone(&reply),
        progress: progress_token(params),
        capabilities: match era {
            Era::Modern => declared_capabilities(params),
            Era::Legacy => host.handshake().unwrap_or_default().capabilities,
        },
        log_level: asked_log_level(params),
    };
    let token = params
        .and_then(|p| p.get("requestState"))
        .and_then(Value::as_str);
    if let (Era::Modern, Some(token), true) = (era, token, ROUND_METHODS.contains(&method)) {
        let empty = Map::new();
        let answers = params
            .and_then(|p| p.get("inputResponses"))
            .and_then(Value::as_object);
        if let Err(refused) = bridge
            .jobs
            .resume(token, current, answers.unwrap_or(&empty))
        {
            answer(Err(refused));
        }
        return;
    }
    if let Err(refused) = start_job(bridge, host, (request, era), current) {
        answer(Err(refused));
    }
}

/// What a handshake-era host declares in `initialize`.
fn handshake(params: Option<&Value>) -> Handshake {
    let capabilities = params.and_then(|p| p.get("capabilities"));
    Handshake {
        capabilities: capabilities
            .and_then(|c| serde_json::from_value(c.clone()).ok())
            .unwrap_or_default(),
    }
}

/// Starts the job that works on `request`, on a thread of its own.
fn start_job(
    bridge: &Arc<Bridge>,
    host: &Arc<Host>,
    (request, era): (Request, Era),
    current: Current,
) -> Result<(), ErrorObject> {
    let job = bridge.jobs.start(host, (&request.method, era), current)?;
    let (working, run) = (Arc::clone(bridge), Arc::clone(&job));
    let spawned = std::thread::Builder::new()
        .name("umcp-bridge-job".into())
        .spawn(move || {
            let asked = Asked {
                id: &request.id,
                method: &request.method,
                params: request.params.as_ref(),
            };
            calls::run(&working, &run, asked);
        });
    if let Err(e) = spawned {
        let why = format!("cannot start a thread: {e}");
        bridge
            .jobs
            .finish(&job, Some(Err(refusal(ErrorCode::INTERNAL_ERROR, why))));
    }
    Ok(())
}

fn notified(bridge: &Arc<Bridge>, host: &Arc<Host>, note: Notification) {
    match note.method.as_str() {
        "notifications/cancelled" => {
            let id = note.params.as_ref().and_then(|p| p.get("requestId"));
            let Some(id) = id.and_then(|id| serde_json::from_value::<RequestId>(id.clone()).ok())
            else {
                return;
            };
            match bridge.jobs.find(host.id, &id) {
                Some(job) => job.cancel(),
                None => {
                    bridge.followers.unlisten(host.id, &id);
                }
            }
        }
        "notifications/roots/list_changed" => {
            if let Some(upstream) = bridge.upstream() {
                upstream.roots_changed();
            }
        }
        _ => {}
    }
}
