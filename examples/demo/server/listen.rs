//! `subscriptions/listen` for `--modern` mode: acknowledges the subset this server honours,
//! tags every notification of a subscription with its id, and ends subscriptions when the
//! client cancels them (stdio) or closes their stream (HTTP), or when a test asks it to.

use std::sync::Arc;

use serde_json::{json, Value};
use umcp::jsonrpc::{Message, RequestId, Response};
use umcp::types::{META_SUBSCRIPTION_ID, SUBSCRIPTIONS_ACKNOWLEDGED};

use super::out::{self, Out};
use super::{catalog, lock, Server};

/// An open subscription: its listen request and the subset it was granted.
pub struct Listen {
    id: RequestId,
    granted: Value,
}

/// Opens a subscription: grants the list changes and the URIs that exist, and acknowledges.
pub fn open(server: &Arc<Server>, id: &RequestId, params: &Value) {
    let asked = &params["notifications"];
    let mut granted = json!({});
    for key in [
        "toolsListChanged",
        "promptsListChanged",
        "resourcesListChanged",
    ] {
        if asked[key] == json!(true) {
            granted[key] = json!(true);
        }
    }
    let uris: Vec<Value> = asked["resourceSubscriptions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|uri| catalog::read(&json!({ "uri": uri })).is_ok())
        .cloned()
        .collect();
    if !uris.is_empty() {
        granted["resourceSubscriptions"] = Value::Array(uris);
    }
    lock(&server.state).listens.push(Listen {
        id: id.clone(),
        granted: granted.clone(),
    });
    let params = json!({
        "_meta": { META_SUBSCRIPTION_ID: id.to_value() },
        "notifications": granted,
    });
    server.notify(SUBSCRIPTIONS_ACKNOWLEDGED, Some(params));
}

/// Forgets the subscription of listen request `id` (the client cancelled it).
pub fn cancel(server: &Server, id: &RequestId) -> bool {
    let mut state = lock(&server.state);
    let before = state.listens.len();
    state.listens.retain(|l| l.id != *id);
    state.listens.len() != before
}

/// Sends `method` to every subscription that asked for it; returns how many got it.
pub fn broadcast(server: &Server, method: &str, uri: Option<&str>) -> usize {
    let key = match method {
        "notifications/tools/list_changed" => "toolsListChanged",
        "notifications/prompts/list_changed" => "promptsListChanged",
        "notifications/resources/list_changed" => "resourcesListChanged",
        _ => "resourceSubscriptions",
    };
    let targets: Vec<RequestId> = {
        let mut state = lock(&server.state);
        // Over HTTP a subscription whose stream the client closed is gone.
        if let Out::Http(routes) = &server.out {
            state.listens.retain(|l| routes.is_open(&l.id));
        }
        state
            .listens
            .iter()
            .filter(|l| match uri {
                None => l.granted[key] == json!(true),
                Some(uri) => l.granted[key]
                    .as_array()
                    .is_some_and(|uris| uris.iter().any(|u| u.as_str() == Some(uri))),
            })
            .map(|l| l.id.clone())
            .collect()
    };
    for id in &targets {
        let mut params = json!({ "_meta": { META_SUBSCRIPTION_ID: id.to_value() } });
        if let Some(uri) = uri {
            params["uri"] = json!(uri);
        }
        out::set_origin(Some(id.clone()));
        server.notify(method, Some(params));
    }
    out::set_origin(None);
    targets.len()
}

/// Ends every subscription gracefully, with a `subscriptions/listen` result each.
pub fn end_all(server: &Server) -> usize {
    let listens = std::mem::take(&mut lock(&server.state).listens);
    for listen in &listens {
        let result = json!({
            "resultType": "complete",
            "_meta": { META_SUBSCRIPTION_ID: listen.id.to_value() },
        });
        server.send(Message::from(Response {
            id: Some(listen.id.clone()),
            result: Ok(result),
        }));
    }
    listens.len()
}

/// Ends every subscription with `notifications/cancelled` naming its listen request, as a
/// stdio server may (over HTTP its stream then ends too).
pub fn cancel_all(server: &Server) -> usize {
    let listens = std::mem::take(&mut lock(&server.state).listens);
    for listen in &listens {
        let params = json!({"requestId": listen.id.to_value(), "reason": "server shutting down"});
        out::set_origin(Some(listen.id.clone()));
        server.notify("notifications/cancelled", Some(params));
        server.out.abandon(&listen.id);
    }
    out::set_origin(None);
    listens.len()
}

/// Closes every subscription's stream without a result, as a crashing front end would (HTTP;
/// on stdio the subscriptions are only forgotten).
pub fn drop_all(server: &Server) -> usize {
    let listens = std::mem::take(&mut lock(&server.state).listens);
    for listen in &listens {
        server.out.abandon(&listen.id);
    }
    listens.len()
}
