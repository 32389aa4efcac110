//! Typed capabilities: every standard one as a struct, and whatever a peer sends that umcp
//! does not model kept as raw JSON, so a round trip gives back exactly what was received.

#[allow(dead_code)] // Not every helper of the fake server is used here.
#[path = "common/memory.rs"]
mod memory;

use serde_json::{json, Value};
use umcp::types::{ClientCapabilities, ServerCapabilities, TasksCapability};
use umcp::Client;

fn server_capabilities() -> Value {
    json!({
        "tools": {"listChanged": true, "x-paging": "fast"},
        "resources": {"subscribe": true, "listChanged": false},
        "prompts": {},
        "logging": {"x-levels": ["debug"]},
        "completions": {},
        "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}, "x-ttl": 60},
        "experimental": {"com.example/streaming": {"chunkSize": 4096}},
        "extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html"]}},
        "x-vendor-capability": {"enabled": true}
    })
}

#[test]
fn server_capabilities_are_typed_and_keep_what_they_do_not_model() {
    let raw = server_capabilities();
    let caps: ServerCapabilities = serde_json::from_value(raw.clone()).unwrap();
    assert!(caps.tools_list_changed());
    assert_eq!(caps.tools.as_ref().unwrap().extra["x-paging"], "fast");
    assert!(caps.supports_resource_subscriptions() && !caps.resources_list_changed());
    assert!(caps.supports_prompts() && !caps.prompts_list_changed());
    assert!(caps.supports_logging() && caps.supports_completions());
    assert_eq!(
        caps.logging.as_ref().unwrap().extra["x-levels"],
        json!(["debug"])
    );
    let tasks = caps.tasks.as_ref().unwrap();
    assert!(tasks.list.is_some() && tasks.cancel.is_some());
    assert!(tasks.supports_request("tools/call") && !tasks.supports_request("prompts/get"));
    assert_eq!(tasks.extra["x-ttl"], 60);
    assert_eq!(
        caps.experimental.as_ref().unwrap()["com.example/streaming"]["chunkSize"],
        4096
    );
    assert_eq!(
        caps.extension("io.modelcontextprotocol/ui").unwrap()["mimeTypes"][0],
        "text/html"
    );
    assert!(caps.extension("io.example/none").is_none());
    assert_eq!(caps.other["x-vendor-capability"]["enabled"], true);
    // The raw JSON is reachable: serializing gives back exactly what was received.
    assert_eq!(serde_json::to_value(&caps).unwrap(), raw);
    // And nothing is invented for a server that declares nothing.
    let empty: ServerCapabilities = serde_json::from_value(json!({})).unwrap();
    assert_eq!(serde_json::to_value(&empty).unwrap(), json!({}));
    assert!(!empty.supports_logging() && empty.extension("x").is_none());
}

#[test]
fn client_capabilities_declare_tasks_and_extensions() {
    let tasks: TasksCapability =
        serde_json::from_value(json!({"requests": {"sampling": {"createMessage": {}}}})).unwrap();
    assert!(tasks.supports_request("sampling/createMessage"));
    let caps = ClientCapabilities::default()
        .with_tasks(tasks)
        .with_extension("io.modelcontextprotocol/ui", json!({}));
    assert_eq!(
        serde_json::to_value(&caps).unwrap(),
        json!({"tasks": {"requests": {"sampling": {"createMessage": {}}}},
               "extensions": {"io.modelcontextprotocol/ui": {}}})
    );
    let raw = json!({"roots": {"listChanged": true, "x": 1}, "sampling": {"context": {}},
                     "elicitation": {"url": {}}, "x-client": {}});
    let read: ClientCapabilities = serde_json::from_value(raw.clone()).unwrap();
    assert_eq!(read.roots.as_ref().unwrap().extra["x"], 1);
    assert!(read.elicitation.as_ref().unwrap().supports_url());
    assert_eq!(serde_json::to_value(&read).unwrap(), raw);
}

#[test]
fn a_client_hands_back_the_servers_capabilities_typed_and_whole() {
    let server = memory::FakeServer::new();
    server.init_result.lock().unwrap()["capabilities"] = server_capabilities();
    let client = Client::connect(server.clone()).unwrap();
    let caps = client.server_capabilities();
    assert!(caps.tasks.as_ref().unwrap().supports_request("tools/call"));
    assert_eq!(serde_json::to_value(&caps).unwrap(), server_capabilities());
}
