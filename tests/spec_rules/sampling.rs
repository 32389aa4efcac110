//! Tool-enabled sampling is refused in both eras unless the client declared `sampling.tools`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};
use umcp::jsonrpc::ErrorCode;
use umcp::types::{ContentBlock, CreateMessageResult, META_CLIENT_CAPABILITIES};
use umcp::{Client, Error, Options, Unsupported};

use crate::memory::FakeServer;
use crate::{initialize_capabilities, legacy, modern, modern_server, requests};

/// A handshake-era server whose `tools/call` asks the client for tool-enabled sampling and
/// returns the client's answer as structured content.
fn sampling_server() -> FakeServer {
    let server = FakeServer::new();
    server.on("tools/call", |peer, _| {
        let params = json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": "weather?"}}],
            "maxTokens": 50,
            "tools": [{"name": "weather", "inputSchema": {"type": "object"}}],
            "toolChoice": {"mode": "auto"},
        });
        let answer = peer.request("sampling/createMessage", params);
        let answer = match answer.result {
            Ok(result) => json!({"ok": result}),
            Err(error) => json!({"code": error.code.0, "message": error.message}),
        };
        Some(json!({"content": [], "structuredContent": answer}))
    });
    server
}

/// Sampling options whose handler counts its calls.
fn counting_sampler(calls: &Arc<AtomicUsize>) -> Options {
    let calls = Arc::clone(calls);
    Options::default().with_sampling_handler(move |request| {
        calls.fetch_add(1, Ordering::SeqCst);
        let tools = request
            .tools
            .as_ref()
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        Ok(CreateMessageResult::new(
            "m",
            ContentBlock::text(format!("{tools} tools")),
        ))
    })
}

#[test]
fn tool_enabled_sampling_is_refused_unless_sampling_tools_is_declared() {
    let server = sampling_server();
    let calls = Arc::new(AtomicUsize::new(0));
    let client = Client::connect_with(server.clone(), legacy(counting_sampler(&calls))).unwrap();
    assert_eq!(initialize_capabilities(&server)["sampling"], json!({}));
    let answer = client.call_tool("x", Value::Null).unwrap();
    let answer = answer.structured_content.unwrap();
    assert_eq!(answer["code"], ErrorCode::INVALID_PARAMS.0, "{answer}");
    assert!(
        answer["message"]
            .as_str()
            .unwrap()
            .contains("sampling.tools"),
        "{answer}"
    );
    assert_eq!(calls.load(Ordering::SeqCst), 0, "the handler must not run");

    let server = sampling_server();
    let options = counting_sampler(&calls).with_sampling_tools(true);
    let client = Client::connect_with(server.clone(), legacy(options)).unwrap();
    assert_eq!(
        initialize_capabilities(&server)["sampling"],
        json!({"tools": {}})
    );
    let answer = client.call_tool("x", Value::Null).unwrap();
    let answer = answer.structured_content.unwrap();
    assert_eq!(answer["ok"]["content"]["text"], "1 tools", "{answer}");
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

/// A stateless-era server whose `tools/call` asks for tool-enabled sampling in an input round
/// and returns the client's answer.
fn modern_sampling_server(name: &str) -> FakeServer {
    let server = modern_server(name);
    server.on("tools/call", |_, request| {
        let params = request.params.as_ref().unwrap();
        if let Some(responses) = params.get("inputResponses") {
            return Some(json!({"content": [], "structuredContent": responses["s"]}));
        }
        Some(json!({
            "resultType": "input_required",
            "inputRequests": {"s": {"method": "sampling/createMessage", "params": {
                "messages": [], "maxTokens": 5,
                "tools": [{"name": "weather", "inputSchema": {"type": "object"}}]}}},
            "requestState": "r1",
        }))
    });
    server
}

#[test]
fn a_stateless_input_round_with_tools_fails_unless_sampling_tools_is_declared() {
    let server = modern_sampling_server("spec-rules-modern-sampling");
    let calls = Arc::new(AtomicUsize::new(0));
    let client = Client::connect_with(server.clone(), modern(counting_sampler(&calls))).unwrap();
    match client.call_tool("x", Value::Null) {
        Err(Error::Unsupported(Unsupported::Feature(message))) => {
            assert!(message.contains("sampling.tools"), "{message}")
        }
        other => panic!("expected Unsupported, got {other:?}"),
    }
    assert_eq!(calls.load(Ordering::SeqCst), 0, "the handler must not run");
    assert_eq!(requests(&server, "tools/call").len(), 1, "no retry");

    let server = modern_sampling_server("spec-rules-modern-sampling-tools");
    let options = modern(counting_sampler(&calls).with_sampling_tools(true));
    let client = Client::connect_with(server.clone(), options).unwrap();
    let answer = client.call_tool("x", Value::Null).unwrap();
    assert_eq!(
        answer.structured_content.unwrap()["content"]["text"],
        "1 tools"
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    let sent = requests(&server, "tools/call");
    let meta = &sent[0].params.as_ref().unwrap()["_meta"];
    assert_eq!(
        meta[META_CLIENT_CAPABILITIES]["sampling"],
        json!({"tools": {}})
    );
}
