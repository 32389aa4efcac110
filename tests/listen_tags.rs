//! A stateless-era subscription over stdio, where every message shares one channel, takes
//! only the notifications tagged with its id.

use std::time::Duration;

use serde_json::json;
use umcp::types::{ServerNotification, SubscriptionFilter};
use umcp::{Client, Era, StdioConfig, SubscriptionEvent};

use umcp_test_support::python;

/// Generous bound for anything that should take milliseconds.
const WAIT: Duration = Duration::from_secs(10);

const README: &str = "demo://text/readme";

/// A stateless stdio server that acknowledges one listen request, and on `tools/call` sends an
/// untagged `tools/list_changed`, then a `resources/updated` tagged with the subscription.
const UNTAGGED_SERVER: &str = r#"
import json, sys
listen = None
def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    method, rid = msg.get("method"), msg["id"]
    if method == "server/discover":
        send({"jsonrpc": "2.0", "id": rid, "result": {"resultType": "complete",
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {"listChanged": True}, "resources": {"subscribe": True}},
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "tags", "version": "1"}}}})
    elif method == "subscriptions/listen":
        listen = rid
        send({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
            "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": rid},
                "notifications": {"toolsListChanged": True,
                    "resourceSubscriptions": ["demo://text/readme"]}}})
    elif method == "tools/call":
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        send({"jsonrpc": "2.0", "method": "notifications/resources/updated",
            "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": listen},
                "uri": "demo://text/readme"}})
        send({"jsonrpc": "2.0", "id": rid, "result": {"resultType": "complete",
            "content": []}})
    else:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no"}})
"#;

/// On stdio every message shares one channel, and a stateless subscription's notifications
/// carry its id: an untagged one is not the subscription's, whatever its filter says.
#[test]
fn a_stateless_subscription_takes_only_notifications_tagged_with_its_id() {
    let config = StdioConfig::new(python::system_python()).args(["-c", UNTAGGED_SERVER]);
    let client = Client::connect(config).expect("the Python server starts");
    assert_eq!(client.era(), Era::Modern);
    let notes = client.notifications();
    let sub = client
        .listen(SubscriptionFilter::new().tools().resource(README))
        .expect("listen");
    assert!(sub.acknowledged().tools_list_changed);
    client.call_tool("poke", json!({})).expect("poke");
    // Had the untagged list change reached the handle, it would have come first.
    match sub.recv_timeout(WAIT) {
        Some(SubscriptionEvent::Notification(ServerNotification::ResourceUpdated(updated))) => {
            assert_eq!(updated.uri, README)
        }
        other => panic!("expected the tagged resources/updated, got {other:?}"),
    }
    assert!(sub.try_recv().is_none());
    // The untagged one goes where every untagged notification goes.
    let shared = notes.recv_timeout(WAIT).expect("the shared queue got it");
    assert!(matches!(shared, ServerNotification::ToolListChanged));
    client.close();
}
