//! A host request worked on by a job: routed to the server it is for and made there through
//! the library, with the job's options (its cancel handle, progress sent on to the host, the
//! host's own `_meta`), and answered in the era the host speaks.
//!
//! A tool a server runs as a task is followed to its end (the library does), so the host gets
//! the tool's result, in either era; the bridge does not offer tasks to hosts.

use std::sync::Arc;

use serde_json::{json, Value};
use umcp::jsonrpc::{ErrorCode, ErrorObject, RequestId};
use umcp::types::{CompleteRequestParams, LoggingLevel, SubscriptionFilter};
use umcp::RequestOptions;

use super::catalog;
use super::context::Bridge;
use super::jobs::Job;
use super::wire::{self, failure, negotiated, refusal, shaped, supported_versions};

/// The request a job works on.
pub struct Asked<'a> {
    pub id: &'a RequestId,
    pub method: &'a str,
    pub params: Option<&'a Value>,
}

/// Runs `asked` for `job` on this thread, and ends the job with the outcome.
pub fn run(bridge: &Bridge, job: &Arc<Job>, asked: Asked<'_>) {
    let working = job.enter();
    let method = asked.method;
    let outcome = outcome(bridge, job, &asked);
    drop(working);
    let info = bridge.server_info();
    let outcome = outcome.map(|result| result.map(|value| shaped(value, job.era, &info, method)));
    bridge.jobs.finish(job, outcome);
}

/// The answer to `asked`: `None` when it was cancelled by the host.
fn outcome(
    bridge: &Bridge,
    job: &Arc<Job>,
    asked: &Asked<'_>,
) -> Option<Result<Value, ErrorObject>> {
    let Some(upstream) = bridge.upstream() else {
        return Some(Err(refusal(
            ErrorCode::INTERNAL_ERROR,
            "no server is started",
        )));
    };
    let method = asked.method;
    if matches!(method, "initialize" | "server/discover") {
        return Some(introduce(bridge, method, asked.params));
    }
    if matches!(
        method,
        "logging/setLevel"
            | "resources/subscribe"
            | "resources/unsubscribe"
            | "subscriptions/listen"
    ) {
        return follow(bridge, job, asked);
    }
    let options = job.options(wire::passed_meta(asked.params));
    let result = match method {
        "tools/list" | "prompts/list" | "resources/list" | "resources/templates/list" => {
            catalog::list(upstream, method, asked.params, &options)
        }
        _ => call(bridge, job, asked, &options),
    };
    match result {
        Ok(value) => Some(Ok(value)),
        Err(error) => failure(&error, method).map(Err),
    }
}

/// `initialize` and `server/discover`: once the servers are up, what they are.
fn introduce(bridge: &Bridge, method: &str, params: Option<&Value>) -> Result<Value, ErrorObject> {
    let upstream = bridge
        .upstream()
        .ok_or_else(|| refusal(ErrorCode::INTERNAL_ERROR, "no server"))?;
    if let Err(why) = upstream.ready(bridge.settings.startup) {
        // Said on stderr too, which hosts keep as the server's log.
        crate::output::warn(&format!("umcp: bridge: {}", crate::shown::block(&why)));
        return Err(refusal(ErrorCode::INTERNAL_ERROR, why));
    }
    let Some(description) = bridge.description() else {
        let why = "the server is not connected";
        return Err(refusal(ErrorCode::INTERNAL_ERROR, why));
    };
    let mut result = json!({ "capabilities": description.capabilities });
    if let Some(instructions) = &description.instructions {
        result["instructions"] = json!(instructions);
    }
    match method {
        "initialize" => {
            let asked = params
                .and_then(|p| p.get("protocolVersion"))
                .and_then(Value::as_str);
            result["protocolVersion"] = json!(negotiated(asked));
            result["serverInfo"] = description.info.clone();
        }
        _ => result["supportedVersions"] = json!(supported_versions()),
    }
    Ok(result)
}

/// What a host follows: a log level, a resource, a listen stream (which stays open,
/// unanswered).
fn follow(
    bridge: &Bridge,
    job: &Arc<Job>,
    asked: &Asked<'_>,
) -> Option<Result<Value, ErrorObject>> {
    let upstream = bridge.upstream()?;
    let field = |key: &str| asked.params.and_then(|p| p.get(key));
    let uri = field("uri").and_then(Value::as_str).unwrap_or_default();
    let invalid = |why: String| Some(Err(ErrorObject::new(ErrorCode::INVALID_PARAMS, why)));
    match asked.method {
        "logging/setLevel" => {
            let level = field("level")
                .and_then(Value::as_str)
                .and_then(LoggingLevel::from_name);
            let Some(level) = level else {
                return invalid("logging/setLevel needs a level".into());
            };
            job.host.set_level(level);
            upstream.set_level(level);
        }
        "resources/subscribe" => {
            if let Err(e) = bridge.followers.subscribe(upstream, &job.host, uri) {
                return failure(&e, asked.method).map(Err);
            }
        }
        "resources/unsubscribe" => bridge.followers.unsubscribe(&job.host, uri),
        _ => {
            let wanted = field("notifications").cloned().unwrap_or_else(|| json!({}));
            let wanted: SubscriptionFilter = match serde_json::from_value(wanted) {
                Ok(wanted) => wanted,
                Err(e) => return invalid(format!("subscriptions/listen: {e}")),
            };
            let stream = (&job.host, asked.id.clone(), job.reply());
            return match bridge.followers.listen(upstream, stream, wanted) {
                Ok(()) => None,
                Err(refused) => Some(Err(refused)),
            };
        }
    }
    Some(Ok(json!({})))
}

/// A call of a tool, prompt, resource or completion, on the server it is for.
fn call(
    bridge: &Bridge,
    job: &Arc<Job>,
    asked: &Asked<'_>,
    options: &RequestOptions,
) -> umcp::Result<Value> {
    let upstream = bridge
        .upstream()
        .ok_or_else(|| umcp::Error::Invalid("no server".into()))?;
    let params = asked.params.cloned().unwrap_or_else(|| json!({}));
    let text = |key: &str| {
        params
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let arguments = params
        .get("arguments")
        .cloned()
        .unwrap_or_else(|| json!({}));
    let encoded =
        |v: Result<Value, serde_json::Error>| v.map_err(|e| umcp::Error::Protocol(e.to_string()));
    match asked.method {
        "tools/call" => {
            let name = text("name");
            let server = upstream.tool_server(&name);
            if let Some(server) = &server {
                let _ = job.server.set(server.clone());
            }
            let result = match (upstream.single(), server) {
                (Some(single), _) => upstream
                    .client(single)?
                    .with(options)
                    .call_tool(&name, arguments)?,
                (None, _) => upstream
                    .manager()
                    .with(options)
                    .call_tool(&name, arguments)?,
            };
            encoded(serde_json::to_value(result))
        }
        "prompts/get" => {
            let (server, own) = upstream.prompt_route(&text("name"))?;
            let _ = job.server.set(server.clone());
            let prompt = upstream
                .client(&server)?
                .with(options)
                .get_prompt(&own, arguments)?;
            encoded(serde_json::to_value(prompt))
        }
        "resources/read" => {
            let uri = text("uri");
            let server = upstream.resource_server(&uri, options)?;
            let _ = job.server.set(server.clone());
            let read = upstream
                .client(&server)?
                .with(options)
                .read_resource(&uri)?;
            encoded(serde_json::to_value(read))
        }
        "completion/complete" => {
            let typed: CompleteRequestParams = serde_json::from_value(params)
                .map_err(|e| umcp::Error::Invalid(format!("completion/complete: {e}")))?;
            let (server, typed) = upstream.completion_route(typed, options)?;
            let completed = upstream.client(&server)?.with(options).complete(typed)?;
            encoded(serde_json::to_value(completed))
        }
        other => Err(umcp::Error::Invalid(format!("unknown method {other}"))),
    }
}
