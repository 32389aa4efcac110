//! The response cache against the bundled demo server, asserted by counting the requests
//! the server saw: in `--modern` mode `tools/list` and `resources/read` carry a positive
//! `ttlMs`; the handshake-era mode sends no hints.

use umcp_test_support::demo;
#[allow(dead_code)] // Only the fake server is used here.
#[path = "common/memory.rs"]
mod memory;

use std::time::Duration;

use serde_json::{json, Value};
use umcp::types::{ServerNotification, SubscriptionFilter};
use umcp::{Client, Options, ProtocolMode, RequestOptions, StdioConfig, SubscriptionEvent};

const WAIT: Duration = Duration::from_secs(10);
const README: &str = "demo://text/readme";

fn connect(modern: bool, options: Options) -> Client {
    let binary = demo::demo_binary().to_string_lossy().into_owned();
    let mut config = StdioConfig::new(binary).args(["--server", "--fixtures"]);
    if modern {
        config = config.args(["--modern"]);
    }
    let options = if modern {
        options
    } else {
        options.with_protocol_mode(ProtocolMode::Legacy)
    };
    Client::connect_with_options(config, options).expect("connect")
}

fn seen(client: &Client, method: &str) -> u64 {
    let result = client.call_tool("requests_seen", json!({})).expect("seen");
    let counts = result.structured_content.expect("structured");
    counts.get(method).and_then(Value::as_u64).unwrap_or(0)
}

fn read(client: &Client, uri: &str) {
    let result = client.read_resource(uri).expect("read");
    assert!(!result.contents.is_empty());
}

#[test]
fn a_fresh_result_is_served_without_a_round_trip() {
    let client = connect(true, Options::default());
    read(&client, README);
    read(&client, README);
    assert_eq!(seen(&client, "resources/read"), 1);
    let first = client.list_all_tools().expect("tools");
    let again = client.list_all_tools().expect("tools");
    assert_eq!(first, again);
    let lists = seen(&client, "tools/list");
    client.list_all_tools().expect("tools");
    assert_eq!(seen(&client, "tools/list"), lists);
}

#[test]
fn the_key_is_the_method_and_the_params_that_change_the_result() {
    let client = connect(true, Options::default());
    let other = client
        .list_all_resources()
        .expect("resources")
        .into_iter()
        .map(|r| r.uri)
        .find(|uri| uri != README)
        .expect("a second resource");
    read(&client, README);
    read(&client, &other);
    read(&client, &other);
    assert_eq!(seen(&client, "resources/read"), 2);
}

#[test]
fn rounds_of_multi_round_trip_requests_are_never_cached() {
    let client = connect(true, Options::default());
    let params = json!({"uri": README, "requestState": "opaque"});
    for _ in 0..2 {
        client
            .request_raw("resources/read", Some(params.clone()))
            .expect("read");
    }
    assert_eq!(seen(&client, "resources/read"), 2);
}

#[test]
fn a_call_or_the_whole_client_can_opt_out() {
    let client = connect(true, Options::default());
    read(&client, README);
    let fresh = RequestOptions::default().with_no_cache();
    client
        .with(&fresh)
        .request_raw("resources/read", Some(json!({"uri": README})))
        .expect("read");
    assert_eq!(seen(&client, "resources/read"), 2);
    // The bypassing call refreshed the entry, which serves the next one.
    read(&client, README);
    assert_eq!(seen(&client, "resources/read"), 2);

    let client = connect(true, Options::default().with_response_cache(false));
    read(&client, README);
    read(&client, README);
    assert_eq!(seen(&client, "resources/read"), 2);
}

#[test]
fn notifications_invalidate_the_matching_entries_at_once() {
    let client = connect(true, Options::default());
    let sub = client
        .listen(SubscriptionFilter::new().tools().resource(README))
        .expect("listen");
    read(&client, README);
    client.list_all_tools().expect("tools");
    let lists = seen(&client, "tools/list");

    client
        .call_tool("touch", json!({"uri": README}))
        .expect("touch");
    match sub.recv_timeout(WAIT) {
        Some(SubscriptionEvent::Notification(ServerNotification::ResourceUpdated(_))) => {}
        other => panic!("expected resources/updated, got {other:?}"),
    }
    read(&client, README);
    assert_eq!(seen(&client, "resources/read"), 2);
    // The tool list was not touched by the resource update.
    client.list_all_tools().expect("tools");
    assert_eq!(seen(&client, "tools/list"), lists);

    client
        .call_tool("list_changed", json!({"what": "tools"}))
        .expect("list_changed");
    assert!(sub.recv_timeout(WAIT).is_some());
    client.list_all_tools().expect("tools");
    assert!(seen(&client, "tools/list") > lists);
}

#[test]
fn nothing_is_cached_for_a_server_without_hints_unless_asked() {
    let client = connect(false, Options::default());
    read(&client, README);
    read(&client, README);
    assert_eq!(seen(&client, "resources/read"), 2);

    let asked = Options::default().with_cache_ttl_without_hints(Duration::from_secs(60));
    let client = connect(false, asked);
    read(&client, README);
    read(&client, README);
    assert_eq!(seen(&client, "resources/read"), 1);
    // Its list changes arrive untagged and still invalidate.
    client.list_all_tools().expect("tools");
    client.list_all_tools().expect("tools");
    assert_eq!(seen(&client, "tools/list"), 1);
    let notes = client.notifications();
    client
        .call_tool("list_changed", json!({"what": "tools"}))
        .expect("list_changed");
    assert!(notes.recv_timeout(WAIT).is_some());
    client.list_all_tools().expect("tools");
    assert_eq!(seen(&client, "tools/list"), 2);
}

/// A stateless server whose `tools/list` is fresh for an hour and names the tool `v{N}`, N
/// counting the listings; a `break` tool call changes nothing but drops the stream of the
/// open `subscriptions/listen` (acknowledged every time).
fn lists_and_breaks() -> (
    memory::FakeServer,
    std::sync::Arc<std::sync::atomic::AtomicU64>,
) {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::{Arc, Mutex};
    let server = memory::FakeServer::new();
    server.on("server/discover", |_, _| {
        Some(json!({
            "resultType": "complete",
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {"listChanged": true}},
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "fake", "version": "2"}},
        }))
    });
    let listed = Arc::new(AtomicU64::new(0));
    let count = listed.clone();
    server.on("tools/list", move |_, _| {
        let n = count.fetch_add(1, Ordering::SeqCst) + 1;
        Some(json!({
            "resultType": "complete", "ttlMs": 3_600_000, "cacheScope": "public",
            "tools": [{"name": format!("v{n}"), "inputSchema": {"type": "object"}}],
        }))
    });
    let listening = Arc::new(Mutex::new(None));
    let open = listening.clone();
    server.on("subscriptions/listen", move |peer, request| {
        *open.lock().unwrap() = Some(request.id.clone());
        let id = serde_json::to_value(&request.id).unwrap();
        peer.notify(
            "notifications/subscriptions/acknowledged",
            json!({"_meta": {"io.modelcontextprotocol/subscriptionId": id},
                   "notifications": {"toolsListChanged": true}}),
        );
        None
    });
    server.on("tools/call", move |peer, _| {
        if let Some(id) = listening.lock().unwrap().take() {
            peer.fail(&id, umcp::Error::ResponseLost("the stream dropped".into()));
        }
        Some(json!({"resultType": "complete", "content": []}))
    });
    (server, listed)
}

#[test]
fn a_reopened_stateless_subscription_empties_the_cache() {
    use std::sync::atomic::Ordering;
    let (server, listed) = lists_and_breaks();
    let client = Client::connect(server).expect("connect");
    let names = |client: &Client| -> Vec<String> {
        let tools = client.list_all_tools().expect("tools");
        tools.into_iter().map(|t| t.name).collect()
    };
    assert_eq!(names(&client), ["v1"]);
    assert_eq!(names(&client), ["v1"], "served from the cache");
    assert_eq!(listed.load(Ordering::SeqCst), 1);
    let sub = client
        .listen(SubscriptionFilter::new().tools())
        .expect("listen");
    client.call_tool("break", json!({})).expect("break");
    match sub.recv_timeout(WAIT) {
        Some(SubscriptionEvent::Resubscribed { .. }) => {}
        other => panic!("expected the reopening to be reported, got {other:?}"),
    }
    // Whatever changed while the stream was down went unannounced: the re-listing the event
    // asks for reaches the server.
    assert_eq!(names(&client), ["v2"]);
    assert_eq!(listed.load(Ordering::SeqCst), 2);
}
