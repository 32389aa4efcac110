//! The Python SDK test server over Streamable HTTP (with SSE or JSON replies) and legacy SSE,
//! explicit and auto-detected.

use std::time::{Duration, Instant};

use serde_json::json;
use umcp::types::{LoggingLevel, ServerNotification};
use umcp::{Client, Era, HttpTransportKind, Notifications, ProtocolMode};
use HttpTransportKind::{Auto, Sse, StreamableHttp};

use crate::common::interop::{
    assert_progress, call_text, next_notification, prompt_texts, python_tool_names, resource_text,
    text_of, tool_names, ProgressLog, PROTOCOL_VERSION, SAMPLED_TEXT, WAIT,
};
use crate::common::peers;
use crate::{assert_streamable_refused, cancel_at_first_progress, close_promptly, connect, Seen};

// ---------------------------------------------------------------------------------------------
// Python SDK (mcp 2.x, MCPServer)
// ---------------------------------------------------------------------------------------------

/// Starts the Python server with `args`, connects to `path` with `kind`, checks that the
/// transport in use is `expected_kind`, and goes through every feature.
fn python_over_http(args: &[&str], path: &str, kind: HttpTransportKind, expected_kind: &str) {
    let server = peers::python_http(args);
    if args == ["sse"] {
        // The /sse route of the Python server takes GET only.
        assert_streamable_refused(&server, 405);
    }
    let seen = Seen::default();
    // The server speaks both eras and `Auto` would choose the stateless one; these tests
    // cover its handshake era (`tests/interop_modern.rs` covers the other).
    let options = seen
        .options(json!({"confirm": true}))
        .with_protocol_mode(ProtocolMode::Legacy);
    let client = connect(&server, path, kind, options);
    assert_eq!(client.transport_kind(), expected_kind);
    assert_eq!(client.era(), Era::Legacy);
    let notes = client.notifications();

    python_handshake(&client);
    python_tools(&client);
    python_resource(&client);
    python_prompt(&client);
    if args.contains(&"--json-response") {
        python_without_back_channel(&client, &seen);
    } else {
        python_progress(&client);
        // 1500 steps of 20 ms: cancelled at the first.
        cancel_at_first_progress(
            &client,
            "long_task",
            json!({"steps": 1500}),
            ("echo", json!({"text": "after cancel"})),
        );
        python_sampling(&client, &seen);
        python_elicitation(&client, &seen);
        python_logging(&client, &notes);
    }
    close_promptly(client);
}

fn python_handshake(client: &Client) {
    let info = client.server_info();
    assert_eq!(info.name, "umcp-python-peer");
    assert_eq!(info.version, "1.0.0");
    assert_eq!(client.protocol_version(), PROTOCOL_VERSION);
    assert_eq!(
        client.instructions().as_deref(),
        Some("A test server for umcp interop tests.")
    );
    let caps = client.server_capabilities();
    assert!(caps.tools.is_some(), "{caps:?}");
    assert!(caps.resources.is_some(), "{caps:?}");
    assert!(caps.prompts.is_some(), "{caps:?}");
    client.ping().expect("ping");
}

fn python_tools(client: &Client) {
    assert_eq!(tool_names(client), python_tool_names());
    let sum = client
        .call_tool("add", json!({"a": 2, "b": 3}))
        .expect("tools/call add");
    assert_eq!(text_of(&sum), "5");
    assert_eq!(sum.structured_content, Some(json!({"result": 5})));
    assert_eq!(
        call_text(client, "echo", json!({"text": "hello over http"})),
        "hello over http"
    );
    let invalid = client
        .call_tool("add", json!({"a": "x", "b": 3}))
        .expect("tools/call");
    assert_eq!(invalid.is_error, Some(true), "{invalid:?}");
}

fn python_resource(client: &Client) {
    let resources = client.list_all_resources().expect("resources/list");
    assert!(
        resources.iter().any(|r| r.uri == "demo://greeting"),
        "{resources:?}"
    );
    let read = client
        .read_resource("demo://greeting")
        .expect("resources/read");
    let (text, mime_type) = resource_text(&read);
    assert_eq!(text, "Hello from the Python MCP server!");
    assert_eq!(mime_type.as_deref(), Some("text/plain"));
}

fn python_prompt(client: &Client) {
    let prompt = client
        .get_prompt("review", json!({"code": "fn main() {}"}))
        .expect("prompts/get");
    assert_eq!(
        prompt_texts(&prompt),
        ["Please review this code:\n\nfn main() {}"]
    );
}

fn python_progress(client: &Client) {
    let progress = ProgressLog::default();
    let result = client
        .with(&progress.options())
        .call_tool("long_task", json!({"steps": 5}))
        .expect("tools/call long_task");
    assert_eq!(text_of(&result), "done after 5 steps");
    let entries = progress.entries();
    assert_eq!(entries.len(), 5, "{entries:?}");
    assert_progress(&entries, 5.0);
    assert_eq!(entries[0].2.as_deref(), Some("step 1 of 5"));
}

fn python_sampling(client: &Client, seen: &Seen) {
    let text = call_text(client, "summarize", json!({"text": "a long story"}));
    assert_eq!(text, SAMPLED_TEXT);
    let request = seen.sampling().expect("the sampling handler was called");
    assert_eq!(request["maxTokens"], 100, "{request}");
    assert_eq!(
        request["messages"][0]["content"]["text"],
        "Summarize: a long story"
    );
}

fn python_elicitation(client: &Client, seen: &Seen) {
    // `note` is not set by the handler: its value is the schema's default.
    let text = call_text(client, "confirm", json!({"question": "Go ahead?"}));
    assert_eq!(text, "accepted: confirm=true note=none");
    let schema = seen.schema().expect("the elicitation handler was called");
    assert_eq!(schema["properties"]["note"]["default"], "none", "{schema}");
    assert_eq!(schema["required"], json!(["confirm"]), "{schema}");
    let text = call_text(client, "confirm", json!({"question": "Shall we decline?"}));
    assert_eq!(text, "decline");
}

/// The tool logs at info and warning; the messages belong to the request, so they arrive on
/// its stream before the result.
fn python_logging(client: &Client, notes: &Notifications) {
    assert_eq!(
        call_text(client, "shout", json!({"message": "hello"})),
        "HELLO"
    );
    let deadline = Instant::now() + WAIT;
    let mut messages = Vec::new();
    while messages.len() < 2 {
        match next_notification(notes, deadline) {
            Some(ServerNotification::LoggingMessage(params)) => messages.push(params),
            Some(_) => continue,
            None => panic!(
                "only {} notifications/message arrived: {messages:?}",
                messages.len()
            ),
        }
    }
    assert_eq!(messages[0].level, LoggingLevel::Info);
    assert_eq!(messages[0].data, json!("info: hello"));
    assert_eq!(messages[0].logger.as_deref(), Some("shout"));
    assert_eq!(messages[1].level, LoggingLevel::Warning);
    assert_eq!(messages[1].data, json!("warning: hello"));
}

/// With JSON replies, a POST's answer holds only the response: the Python server drops the
/// progress and log messages of a request, and refuses to send requests of its own (sampling,
/// elicitation) during one. The calls must still complete, and the refusal come back as an
/// error rather than a hang.
fn python_without_back_channel(client: &Client, seen: &Seen) {
    let progress = ProgressLog::default();
    let result = client
        .with(&progress.options())
        .call_tool("long_task", json!({"steps": 3}))
        .expect("tools/call long_task");
    assert_eq!(text_of(&result), "done after 3 steps");

    let started = Instant::now();
    let refused = client.call_tool("summarize", json!({"text": "a long story"}));
    assert!(
        matches!(refused, Err(umcp::Error::Rpc(_))),
        "expected sampling to be refused, got {refused:?}"
    );
    assert!(seen.sampling().is_none(), "the sampling handler was called");
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "took {:?}",
        started.elapsed()
    );

    assert_eq!(
        call_text(client, "shout", json!({"message": "hello"})),
        "HELLO"
    );
}

#[test]
fn python_streamable_http_auto() {
    if peers::skip_interop() {
        return;
    }
    python_over_http(&["streamable-http"], "/mcp", Auto, "streamable-http");
}

#[test]
fn python_streamable_http_explicit() {
    if peers::skip_interop() {
        return;
    }
    python_over_http(
        &["streamable-http"],
        "/mcp",
        StreamableHttp,
        "streamable-http",
    );
}

#[test]
fn python_streamable_http_json_auto() {
    if peers::skip_interop() {
        return;
    }
    python_over_http(
        &["streamable-http", "--json-response"],
        "/mcp",
        Auto,
        "streamable-http",
    );
}

#[test]
fn python_streamable_http_json_explicit() {
    if peers::skip_interop() {
        return;
    }
    python_over_http(
        &["streamable-http", "--json-response"],
        "/mcp",
        StreamableHttp,
        "streamable-http",
    );
}

#[test]
fn python_sse_auto_falls_back() {
    if peers::skip_interop() {
        return;
    }
    python_over_http(&["sse"], "/sse", Auto, "sse");
}

#[test]
fn python_sse_explicit() {
    if peers::skip_interop() {
        return;
    }
    python_over_http(&["sse"], "/sse", Sse, "sse");
}
