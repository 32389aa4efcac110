//! Stateless-era (2026-07-28) servers that stretch the rules: a cacheable `server/discover`
//! that must not stand in for a health check, subscription streams carrying (or
//! acknowledging) notifications nobody asked for, and requests whose `_meta` is no object.

#[cfg(feature = "http")]
use umcp_test_support::http_server;
#[allow(dead_code)] // Only the fake server is used here.
#[path = "common/memory.rs"]
mod memory;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use memory::FakeServer;
use serde_json::{json, Value};
use umcp::types::{ServerNotification, SubscriptionFilter};
use umcp::{Client, Era, SubscriptionEnd, SubscriptionEvent};

/// Generous bound for anything that should take milliseconds.
const WAIT: Duration = Duration::from_secs(10);

/// Long enough for a notification already sent to have arrived.
const SETTLE: Duration = Duration::from_millis(300);

const WATCHED: &str = "demo://watched";

/// A stateless server whose `server/discover` may be cached for a minute; it counts them.
fn cacheable_discover(name: &str) -> (FakeServer, Arc<AtomicUsize>) {
    let server = FakeServer::named(name);
    let discovers = Arc::new(AtomicUsize::new(0));
    let counter = discovers.clone();
    server.on("server/discover", move |_, _| {
        counter.fetch_add(1, Ordering::SeqCst);
        Some(json!({
            "resultType": "complete", "ttlMs": 60_000, "cacheScope": "public",
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {"listChanged": true}, "resources": {"subscribe": true}},
        }))
    });
    (server, discovers)
}

#[test]
fn ping_reaches_the_server_even_when_its_discover_result_may_be_cached() {
    let (server, discovers) = cacheable_discover("hostile-ping-cache");
    let client = Client::connect(server).expect("connect");
    assert_eq!(client.era(), Era::Modern);
    assert_eq!(discovers.load(Ordering::SeqCst), 1, "the probe");
    client.ping().expect("ping");
    client.ping().expect("ping again");
    assert_eq!(
        discovers.load(Ordering::SeqCst),
        3,
        "a health check asks the server, not the cache"
    );
}

/// A stateless server that acknowledges a listen request with `acknowledged`, and on
/// `tools/call` sends `poked(meta, id)`: notifications tagged with the subscription's `_meta`
/// (its id is the listen request's).
fn listening(
    name: &str,
    acknowledged: Value,
    poked: impl Fn(&Value, &Value) -> Vec<(&'static str, Value)> + Send + Sync + 'static,
) -> FakeServer {
    let (server, _) = cacheable_discover(name);
    let listen: Arc<Mutex<Option<Value>>> = Arc::default();
    let opened = listen.clone();
    server.on("subscriptions/listen", move |peer, request| {
        let id = serde_json::to_value(&request.id).expect("id");
        *opened.lock().unwrap() = Some(id.clone());
        let meta = json!({"io.modelcontextprotocol/subscriptionId": id});
        peer.notify(
            "notifications/subscriptions/acknowledged",
            json!({"_meta": meta, "notifications": acknowledged.clone()}),
        );
        None
    });
    server.on("tools/call", move |peer, _| {
        let id = listen.lock().unwrap().clone().expect("listening");
        let meta = json!({"io.modelcontextprotocol/subscriptionId": id});
        for (method, params) in poked(&meta, &id) {
            peer.notify(method, params);
        }
        Some(json!({"resultType": "complete", "content": []}))
    });
    server
}

/// A stateless server that acknowledges a listen request with more than was asked for, and on
/// `tools/call` sends, tagged with the subscription, a prompt list change and a resource update
/// nobody asked for, then the tool list change that was.
fn overreaching(name: &str) -> FakeServer {
    let acknowledged = json!({"toolsListChanged": true, "promptsListChanged": true,
        "resourceSubscriptions": [WATCHED, "demo://other"]});
    listening(name, acknowledged, |meta, _| {
        vec![
            ("notifications/prompts/list_changed", json!({"_meta": meta})),
            (
                "notifications/resources/updated",
                json!({"_meta": meta, "uri": "demo://other"}),
            ),
            ("notifications/tools/list_changed", json!({"_meta": meta})),
        ]
    })
}

#[test]
fn a_stateless_subscription_takes_only_what_it_asked_for() {
    let client = Client::connect(overreaching("hostile-listen-filter")).expect("connect");
    let sub = client
        .listen(SubscriptionFilter::new().tools().resource(WATCHED))
        .expect("listen");
    let honoured = sub.acknowledged();
    assert!(honoured.tools_list_changed);
    assert!(
        !honoured.prompts_list_changed,
        "an acknowledgement is a subset of the request: {honoured:?}"
    );
    assert_eq!(honoured.resource_subscriptions, [WATCHED]);
    client.call_tool("poke", json!({})).expect("poke");
    match sub.recv_timeout(WAIT) {
        Some(SubscriptionEvent::Notification(ServerNotification::ToolListChanged)) => {}
        other => panic!("expected only the tool list change, got {other:?}"),
    }
    assert!(
        sub.recv_timeout(SETTLE).is_none(),
        "nothing else was asked for"
    );
}

/// A stateless HTTP server that answers `server/discover` and echoes every `tools/call`.
#[cfg(feature = "http")]
fn echoing_http_server() -> http_server::Server {
    http_server::serve(move |seen, reply| {
        let body = seen.json();
        let result = match seen.rpc_method().as_deref() {
            Some("server/discover") => json!({"resultType": "complete",
                "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}}),
            Some("tools/call") => json!({"resultType": "complete", "content": []}),
            _ => return reply.status(405, &[]),
        };
        let answer = json!({"jsonrpc": "2.0", "id": body["id"], "result": result});
        reply.json(200, &[], &answer.to_string());
    })
}

#[cfg(feature = "http")]
#[test]
fn a_request_with_a_null_meta_still_says_its_protocol_version() {
    let server = echoing_http_server();
    let client = Client::connect(umcp::HttpConfig::new(server.url("/mcp"))).expect("connect");
    assert_eq!(client.era(), Era::Modern);
    let params = json!({"name": "echo", "arguments": {}, "_meta": null});
    client
        .request_raw("tools/call", Some(params))
        .expect("call");
    let call = std::iter::from_fn(|| server.next_within(WAIT))
        .find(|seen| seen.rpc_method().as_deref() == Some("tools/call"))
        .expect("the server saw the call");
    assert_eq!(call.header("MCP-Protocol-Version"), Some("2026-07-28"));
    let meta = &call.json()["params"]["_meta"];
    assert_eq!(
        meta["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    assert!(meta["io.modelcontextprotocol/clientCapabilities"].is_object());
}

/// A stateless server that acknowledges a listen request, and on `tools/call` ends it with a
/// `notifications/cancelled` tagged with the subscription, as every message about it is.
fn cancelling(name: &str) -> FakeServer {
    listening(name, json!({"toolsListChanged": true}), |meta, id| {
        vec![(
            "notifications/cancelled",
            json!({"_meta": meta, "requestId": id, "reason": "shutting down"}),
        )]
    })
}

#[test]
fn a_tagged_cancellation_from_the_server_ends_the_subscription() {
    let client = Client::connect(cancelling("hostile-listen-cancel")).expect("connect");
    let sub = client
        .listen(SubscriptionFilter::new().tools())
        .expect("listen");
    client.call_tool("poke", json!({})).expect("poke");
    let event = sub.recv_timeout(WAIT);
    assert!(event.is_none(), "no event, the end: {event:?}");
    assert_eq!(
        sub.ended(),
        Some(SubscriptionEnd::CancelledByServer {
            reason: Some("shutting down".into())
        })
    );
}

/// A `ttlMs` written as a whole float (`60000.0`, a Python server's computed value) lets the
/// result be cached as the integer would, as the typed results read it.
#[test]
fn a_whole_float_ttl_caches_like_the_integer() {
    let (server, _) = cacheable_discover("hostile-float-ttl");
    let lists = Arc::new(AtomicUsize::new(0));
    let counter = lists.clone();
    server.on("tools/list", move |_, _| {
        counter.fetch_add(1, Ordering::SeqCst);
        Some(json!({
            "resultType": "complete", "ttlMs": 60_000.0, "cacheScope": "public",
            "tools": [{"name": "t", "inputSchema": {"type": "object"}}],
        }))
    });
    let client = Client::connect(server).expect("connect");
    assert_eq!(client.era(), Era::Modern);
    let first = client.list_tools(None).expect("tools");
    assert_eq!(first.ttl_ms, Some(60_000));
    client.list_tools(None).expect("tools again");
    assert_eq!(
        lists.load(Ordering::SeqCst),
        1,
        "the second came from the cache"
    );
}
