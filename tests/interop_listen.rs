//! `client.listen` against servers written by others, with one client code path for both
//! eras: the Python SDK `mcp` 2.3.0 (stateless era, stdio and Streamable HTTP) and the
//! TypeScript SDK v2 (stateless era, Streamable HTTP) serve `subscriptions/listen`;
//! server-everything (handshake era) sends its list changes on the session.

mod common;

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};

use common::interop::{call_text, options};
use common::peers;
use umcp::types::{ServerNotification, SubscriptionFilter};
use umcp::{Client, Era, StdioConfig, SubscriptionEvent};

#[cfg(feature = "http")]
use umcp::HttpConfig;

/// Generous: the peers are interpreted and the machine is shared.
const WAIT: Duration = Duration::from_secs(30);

fn path_arg(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// The Python SDK's test server over stdio.
fn python_stdio() -> StdioConfig {
    StdioConfig::new(path_arg(&peers::python_mcp()))
        .arg(path_arg(&peers::python_server_script()))
        .arg("stdio")
}

/// What a host writes, whatever the era: listen for tool-list changes, make the server add a
/// tool, and see the new tool after the notification, without any manual refresh.
fn a_tool_added_at_run_time_reaches_the_handle(client: &Client, adder: &str, args: Value) {
    let name = args["name"].as_str().expect("name").to_owned();
    let sub = client
        .listen(SubscriptionFilter::new().tools())
        .expect("listen");
    assert!(
        sub.acknowledged().tools_list_changed,
        "{:?}",
        sub.acknowledged()
    );
    let before = client.list_all_tools().expect("tools");
    assert!(!before.iter().any(|t| t.name == name));
    client.call_tool(adder, args).expect("add a tool");
    match sub.recv_timeout(WAIT) {
        Some(SubscriptionEvent::Notification(ServerNotification::ToolListChanged)) => {}
        other => panic!(
            "expected tools/list_changed, got {other:?} ({:?})",
            sub.ended()
        ),
    }
    let after = client.list_all_tools().expect("tools");
    assert!(after.iter().any(|t| t.name == name), "{name} is listed");
    sub.close();
}

#[test]
fn python_stdio_in_the_stateless_era() {
    if peers::skip_interop() {
        return;
    }
    let config = python_stdio();
    let client =
        Client::connect_with_options(config, options()).expect("connect to the Python server");
    assert_eq!(client.era(), Era::Modern);
    a_tool_added_at_run_time_reaches_the_handle(
        &client,
        "add_runtime_tool",
        json!({"name": "late_stdio"}),
    );
}

#[test]
fn python_stdio_in_the_handshake_era_acknowledges_what_its_capabilities_promise() {
    if peers::skip_interop() {
        return;
    }
    let config = python_stdio();
    let options = options().with_protocol_mode(umcp::ProtocolMode::Legacy);
    let client =
        Client::connect_with_options(config, options).expect("connect to the Python server");
    assert_eq!(client.era(), Era::Legacy);
    let caps = client.server_capabilities();
    let promised = caps.tools.and_then(|t| t.list_changed) == Some(true);
    let sub = client
        .listen(SubscriptionFilter::new().tools())
        .expect("listen");
    // The handshake era has no acknowledgement: the subset is what the server declared.
    assert_eq!(sub.acknowledged().tools_list_changed, promised);
}

#[cfg(feature = "http")]
#[test]
fn python_streamable_http_in_the_stateless_era() {
    if peers::skip_interop() {
        return;
    }
    let server = peers::python_http(&["streamable-http"]);
    let url = server.url("/mcp");
    let client = Client::connect_with_options(HttpConfig::new(url.as_str()), options())
        .unwrap_or_else(|e| panic!("connecting to {url} failed: {e}"));
    assert_eq!(client.era(), Era::Modern);
    a_tool_added_at_run_time_reaches_the_handle(
        &client,
        "add_runtime_tool",
        json!({"name": "late_http"}),
    );
}

#[cfg(feature = "http")]
#[test]
fn typescript_v2_streamable_http_in_the_stateless_era() {
    if peers::skip_interop() {
        return;
    }
    let server = peers::ts_v2_http();
    let url = server.url("/mcp");
    let client = Client::connect_with_options(HttpConfig::new(url.as_str()), options())
        .unwrap_or_else(|e| panic!("connecting to {url} failed: {e}"));
    assert_eq!(client.era(), Era::Modern);
    a_tool_added_at_run_time_reaches_the_handle(&client, "add_tool", json!({"name": "late_ts"}));
}

#[test]
fn server_everything_in_the_handshake_era() {
    if peers::skip_interop() {
        return;
    }
    let config = StdioConfig::new(path_arg(&peers::node()))
        .arg(path_arg(&peers::server_everything()))
        .arg("stdio");
    let client =
        Client::connect_with_options(config, options()).expect("connect to server-everything");
    assert_eq!(client.era(), Era::Legacy);
    // The same code as for the stateless servers; server-everything adds a resource at run
    // time (a session resource), so the list that changes is the resource list.
    let sub = client
        .listen(SubscriptionFilter::new().tools().resources())
        .expect("listen");
    let granted = sub.acknowledged();
    assert!(granted.tools_list_changed && granted.resources_list_changed);
    let args = json!({"name": "late.txt.gz", "data": "data:text/plain;base64,aGVsbG8=", "outputType": "resourceLink"});
    client
        .call_tool("gzip-file-as-resource", args)
        .expect("gzip-file-as-resource");
    loop {
        match sub.recv_timeout(WAIT) {
            Some(SubscriptionEvent::Notification(ServerNotification::ResourceListChanged)) => break,
            // Its conditional tools are registered right after the handshake.
            Some(SubscriptionEvent::Notification(ServerNotification::ToolListChanged)) => {}
            other => panic!("expected resources/list_changed, got {other:?}"),
        }
    }
    let resources = client.list_all_resources().expect("resources");
    assert!(
        resources.iter().any(|r| r.uri.ends_with("late.txt.gz")),
        "{resources:?}"
    );
}

/// A read with a positive `ttlMs` is answered from the cache until the server announces the
/// resource changed; the reads the server counted prove it.
fn a_cached_read_is_fetched_again_after_its_update(client: &Client, count: &str, touch: &str) {
    const COUNTED: &str = "demo://counted";
    let reads = || call_text(client, count, json!({}));
    let sub = client
        .listen(SubscriptionFilter::new().resource(COUNTED))
        .expect("listen");
    let start: u64 = reads().parse().expect("a count");
    client.read_resource(COUNTED).expect("read");
    client.read_resource(COUNTED).expect("read again");
    assert_eq!(
        reads(),
        (start + 1).to_string(),
        "the second read was cached"
    );
    call_text(client, touch, json!({}));
    match sub.recv_timeout(WAIT) {
        Some(SubscriptionEvent::Notification(ServerNotification::ResourceUpdated(u))) => {
            assert_eq!(u.uri, COUNTED);
        }
        other => panic!("expected resources/updated, got {other:?}"),
    }
    client
        .read_resource(COUNTED)
        .expect("read after the update");
    assert_eq!(
        reads(),
        (start + 2).to_string(),
        "the update invalidated it"
    );
}

#[test]
fn python_caches_reads_until_their_update() {
    if peers::skip_interop() {
        return;
    }
    let config = python_stdio();
    let client =
        Client::connect_with_options(config, options()).expect("connect to the Python server");
    assert_eq!(client.era(), Era::Modern);
    a_cached_read_is_fetched_again_after_its_update(
        &client,
        "counted_reads_so_far",
        "touch_counted",
    );
}

#[cfg(feature = "http")]
#[test]
fn typescript_v2_caches_reads_until_their_update() {
    if peers::skip_interop() {
        return;
    }
    let server = peers::ts_v2_http();
    let url = server.url("/mcp");
    let client = Client::connect_with_options(HttpConfig::new(url.as_str()), options())
        .unwrap_or_else(|e| panic!("connecting to {url} failed: {e}"));
    a_cached_read_is_fetched_again_after_its_update(&client, "counted_reads", "touch_counted");
}
