//! Rules tied to one protocol version: the `completions` capability and JSON-RPC batches.

use std::time::Duration;

use serde_json::json;
use umcp::types::{CompleteReference, CompleteRequestParams};
use umcp::{Client, Error, Options, RequestOptions, Unsupported};

use crate::memory::FakeServer;
use crate::{legacy, python, requests, SOON};

fn completion() -> CompleteRequestParams {
    CompleteRequestParams::new(CompleteReference::prompt("greet"), "name", "A")
}

#[test]
fn completion_needs_the_capability_except_at_2024_11_05() {
    let server = FakeServer::new();
    server.on("completion/complete", |_, _| {
        Some(json!({"completion": {"values": ["Ann"]}}))
    });
    server.init_result.lock().unwrap()["capabilities"] = json!({"prompts": {}});
    let client = Client::connect_with_options(server.clone(), legacy(Options::default())).unwrap();
    assert_eq!(client.protocol_version(), "2025-11-25");
    match client.complete(completion()) {
        Err(Error::Unsupported(Unsupported::Capability { capability, .. })) => {
            assert_eq!(capability, "completions")
        }
        other => panic!("expected Unsupported, got {other:?}"),
    }
    assert!(requests(&server, "completion/complete").is_empty());

    server.init_result.lock().unwrap()["protocolVersion"] = json!("2024-11-05");
    let client = Client::connect_with_options(server.clone(), legacy(Options::default())).unwrap();
    assert_eq!(client.protocol_version(), "2024-11-05");
    let result = client.complete(completion()).unwrap();
    assert_eq!(result.completion.values, ["Ann"]);
    assert_eq!(requests(&server, "completion/complete").len(), 1);
}

/// A stdio server in Python that negotiates `version` and answers two `tools/call` requests
/// together, in one JSON-RPC batch line (with a log notification first).
#[cfg(unix)]
fn batching_server(version: &str) -> umcp::StdioConfig {
    const SCRIPT: &str = r#"
import json, sys
version = sys.argv[1]
def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()
held = []
for line in sys.stdin:
    message = json.loads(line)
    if not isinstance(message, dict) or "id" not in message or "method" not in message:
        continue
    method, id = message["method"], message["id"]
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": id, "result": {"protocolVersion": version,
              "capabilities": {"tools": {}}, "serverInfo": {"name": "batcher", "version": "1"}}})
    elif method == "tools/call":
        text = message["params"]["arguments"]["message"]
        held.append({"jsonrpc": "2.0", "id": id,
                     "result": {"content": [{"type": "text", "text": text}]}})
        if len(held) == 2:
            log = {"jsonrpc": "2.0", "method": "notifications/message",
                   "params": {"level": "info", "data": "batched"}}
            send([log] + held)
            held = []
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": id, "result": {}})
    else:
        send({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "no"}})
"#;
    umcp::StdioConfig::new(python::system_python()).args(["-c", SCRIPT, version])
}

/// Calls `echo` twice at once with `options`, giving both outcomes.
#[cfg(unix)]
fn two_calls(client: &Client, options: &RequestOptions) -> Vec<umcp::Result<String>> {
    std::thread::scope(|scope| {
        let calls: Vec<_> = ["one", "two"]
            .into_iter()
            .map(|message| {
                scope.spawn(move || {
                    let arguments = json!({ "message": message });
                    let result = client.with(options).call_tool("echo", arguments);
                    result.map(|r| r.text())
                })
            })
            .collect();
        calls.into_iter().map(|c| c.join().unwrap()).collect()
    })
}

#[cfg(unix)]
#[test]
fn batches_are_accepted_only_at_2025_03_26() {
    let client =
        Client::connect_with_options(batching_server("2025-03-26"), legacy(Options::default()))
            .expect("connect");
    assert_eq!(client.protocol_version(), "2025-03-26");
    let notes = client.notifications();
    let outcomes = two_calls(&client, &RequestOptions::default().with_timeout(SOON));
    let texts: Vec<_> = outcomes.into_iter().map(Result::unwrap).collect();
    assert_eq!(texts, ["one", "two"]);
    assert!(
        notes.recv_timeout(SOON).is_some(),
        "the batched notification"
    );

    let client =
        Client::connect_with_options(batching_server("2025-11-25"), legacy(Options::default()))
            .expect("connect");
    assert_eq!(client.protocol_version(), "2025-11-25");
    // Dropped, results and all; the requests it answered fail at once rather than at
    // their deadline.
    let long = RequestOptions::default().with_timeout(Duration::from_secs(30));
    let started = std::time::Instant::now();
    for outcome in two_calls(&client, &long) {
        assert!(
            matches!(&outcome, Err(Error::Protocol(m)) if m.contains("batch")),
            "a batch is dropped at 2025-11-25: {outcome:?}"
        );
    }
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the calls waited"
    );
    client.ping().expect("the client keeps working");
}
