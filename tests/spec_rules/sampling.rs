//! Tool-enabled sampling is refused in both eras unless the client declared `sampling.tools`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};
use umcp::jsonrpc::ErrorCode;
use umcp::testing::FakeServer;
use umcp::types::{
    CallToolResult, ContentBlock, CreateMessageResult, Tool, META_CLIENT_CAPABILITIES,
};
use umcp::{Client, Error, Options, Unsupported};

use crate::{legacy, modern, SOON};

/// A server whose `ask` tool asks the client for tool-enabled sampling (a request in the
/// handshake era, an input round in the stateless one) and returns the client's answer, or
/// the error it answered with, as structured content.
fn sampling_server() -> FakeServer {
    let ask = Tool::new("ask", json!({"type": "object"}));
    FakeServer::new("sampling")
        .with_input_timeout(SOON)
        .with_tool(ask, |ctx, _| {
            let params = serde_json::from_value(json!({
                "messages": [{"role": "user", "content": {"type": "text", "text": "weather?"}}],
                "maxTokens": 50,
                "tools": [{"name": "weather", "inputSchema": {"type": "object"}}],
                "toolChoice": {"mode": "auto"},
            }))
            .expect("sampling params");
            let answer = match ctx.create_message(params) {
                Ok(result) => json!({ "ok": result }),
                Err(Error::Rpc(error)) => json!({"code": error.code.0, "message": error.message}),
                Err(other) => return Err(other),
            };
            Ok(CallToolResult::default().with_structured_content(answer))
        })
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

/// What `ask` answered.
fn ask(client: &Client) -> Value {
    let answer = client.call_tool("ask", Value::Null).expect("ask");
    answer.structured_content.expect("structured content")
}

#[test]
fn tool_enabled_sampling_is_refused_unless_sampling_tools_is_declared() {
    let server = sampling_server();
    let calls = Arc::new(AtomicUsize::new(0));
    let client =
        Client::connect_with_options(server.clone(), legacy(counting_sampler(&calls))).unwrap();
    assert_eq!(
        server.requests("initialize")[0]["capabilities"]["sampling"],
        json!({})
    );
    let answer = ask(&client);
    assert_eq!(answer["code"], ErrorCode::INVALID_PARAMS.0, "{answer}");
    let message = answer["message"].as_str().unwrap();
    assert!(message.contains("sampling.tools"), "{answer}");
    assert_eq!(calls.load(Ordering::SeqCst), 0, "the handler must not run");

    let server = sampling_server();
    let options = counting_sampler(&calls).with_sampling_tools(true);
    let client = Client::connect_with_options(server.clone(), legacy(options)).unwrap();
    let declared = &server.requests("initialize")[0]["capabilities"]["sampling"];
    assert_eq!(*declared, json!({"tools": {}}));
    let answer = ask(&client);
    assert_eq!(answer["ok"]["content"]["text"], "1 tools", "{answer}");
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[test]
fn a_stateless_input_round_with_tools_fails_unless_sampling_tools_is_declared() {
    let server = sampling_server();
    let calls = Arc::new(AtomicUsize::new(0));
    let client =
        Client::connect_with_options(server.clone(), modern(counting_sampler(&calls))).unwrap();
    match client.call_tool("ask", Value::Null) {
        Err(Error::Unsupported(Unsupported::Feature(message))) => {
            assert!(message.contains("sampling.tools"), "{message}")
        }
        other => panic!("expected Unsupported, got {other:?}"),
    }
    assert_eq!(calls.load(Ordering::SeqCst), 0, "the handler must not run");
    assert_eq!(server.requests("tools/call").len(), 1, "no retry");

    let server = sampling_server();
    let options = modern(counting_sampler(&calls).with_sampling_tools(true));
    let client = Client::connect_with_options(server.clone(), options).unwrap();
    assert_eq!(ask(&client)["ok"]["content"]["text"], "1 tools");
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    let sent = server.requests("tools/call");
    let declared = &sent[0]["_meta"][META_CLIENT_CAPABILITIES]["sampling"];
    assert_eq!(*declared, json!({"tools": {}}));
}
