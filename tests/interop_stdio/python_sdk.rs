//! The Python SDK test server over stdio: every feature it offers, end to end.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;
use umcp::types::{LoggingLevel, ServerNotification};
use umcp::{Client, Options, ProtocolMode, StdioConfig};

use crate::common::interop::{
    assert_progress, call_text, next_notification, options, prompt_texts, python_tool_names,
    resource_text, text_of, tool_names, ProgressLog, PROTOCOL_VERSION, SAMPLED_TEXT, WAIT,
};
use crate::common::peers;
use crate::{elicitation_handler, path_arg, sampling_handler};

/// Starts the Python SDK server over stdio and runs the handshake.
///
/// The server speaks both eras and `Auto` would choose the stateless one; these tests cover
/// its handshake era (`tests/interop_modern.rs` covers the other).
fn python(options: Options) -> Client {
    let config = StdioConfig::new(path_arg(&peers::python_mcp()))
        .arg(path_arg(&peers::python_server_script()))
        .arg("stdio");
    Client::connect_with_options(config, options.with_protocol_mode(ProtocolMode::Legacy))
        .unwrap_or_else(|e| panic!("connecting to the Python SDK server over stdio failed: {e}"))
}

// ---------------------------------------------------------------------------------------------
// Python SDK (mcp 2.x, MCPServer)
// ---------------------------------------------------------------------------------------------

#[test]
fn python_handshake() {
    if peers::skip_interop() {
        return;
    }
    let client = python(options());
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
    client.close();
}

#[test]
fn python_tools_list_and_call() {
    if peers::skip_interop() {
        return;
    }
    let client = python(options());
    let names = tool_names(&client);
    assert_eq!(names, python_tool_names());

    let sum = client
        .call_tool("add", json!({"a": 2, "b": 3}))
        .expect("tools/call add");
    assert_eq!(text_of(&sum), "5");
    assert_eq!(sum.structured_content, Some(json!({"result": 5})));
    assert_eq!(
        call_text(&client, "echo", json!({"text": "hello umcp"})),
        "hello umcp"
    );

    let invalid = client
        .call_tool("add", json!({"a": "x", "b": 3}))
        .expect("tools/call");
    assert_eq!(invalid.is_error, Some(true), "{invalid:?}");
    let missing = client
        .call_tool("no-such-tool", json!({}))
        .expect("tools/call");
    assert_eq!(missing.is_error, Some(true), "{missing:?}");
}

#[test]
fn python_resource_read() {
    if peers::skip_interop() {
        return;
    }
    let client = python(options());
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

#[test]
fn python_prompt_get() {
    if peers::skip_interop() {
        return;
    }
    let client = python(options());
    let prompts = client.list_all_prompts().expect("prompts/list");
    assert_eq!(
        prompts.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(),
        ["review"]
    );
    let prompt = client
        .get_prompt("review", json!({"code": "fn main() {}"}))
        .expect("prompts/get");
    assert_eq!(
        prompt_texts(&prompt),
        ["Please review this code:\n\nfn main() {}"]
    );
}

#[test]
fn python_progress() {
    if peers::skip_interop() {
        return;
    }
    let client = python(options());
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

#[test]
fn python_sampling() {
    if peers::skip_interop() {
        return;
    }
    let seen = Arc::new(Mutex::new(None));
    let client = python(options().with_sampling_handler(sampling_handler(seen.clone())));
    let text = call_text(&client, "summarize", json!({"text": "a long story"}));
    assert_eq!(text, SAMPLED_TEXT);
    let request = seen
        .lock()
        .expect("seen")
        .clone()
        .expect("the handler was called");
    assert_eq!(request["maxTokens"], 100, "{request}");
    assert_eq!(
        request["messages"][0]["content"]["text"],
        "Summarize: a long story"
    );
}

#[test]
fn python_sampling_without_handler_fails_the_call() {
    if peers::skip_interop() {
        return;
    }
    // The client declared no sampling capability, yet the Python server still asks; the client
    // answers with an error, which the server passes back as the error of the tool call.
    // Nothing waits for an answer that never comes.
    let client = python(options());
    let started = Instant::now();
    let result = client.call_tool("summarize", json!({"text": "a long story"}));
    assert!(
        matches!(result, Err(umcp::Error::Rpc(_))),
        "expected a JSON-RPC error, got {result:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "took {:?}",
        started.elapsed()
    );
    // The connection is still usable.
    assert_eq!(
        call_text(&client, "echo", json!({"text": "still here"})),
        "still here"
    );
}

#[test]
fn python_elicitation() {
    if peers::skip_interop() {
        return;
    }
    let schema = Arc::new(Mutex::new(None));
    let handler = elicitation_handler(json!({"confirm": true}), schema.clone());
    let client = python(options().with_elicitation_handler(handler));

    // `note` is not set by the handler: its value is the schema's default.
    let text = call_text(&client, "confirm", json!({"question": "Go ahead?"}));
    assert_eq!(text, "accepted: confirm=true note=none");
    let schema = schema
        .lock()
        .expect("schema")
        .clone()
        .expect("the handler was called");
    assert_eq!(schema["properties"]["note"]["default"], "none", "{schema}");
    assert_eq!(schema["required"], json!(["confirm"]), "{schema}");

    let text = call_text(&client, "confirm", json!({"question": "Shall we decline?"}));
    assert_eq!(text, "decline");
}

#[test]
fn python_logging() {
    if peers::skip_interop() {
        return;
    }
    let client = python(options());
    let notes = client.notifications();
    assert_eq!(
        call_text(&client, "shout", json!({"message": "hello"})),
        "HELLO"
    );

    let deadline = Instant::now() + WAIT;
    let mut messages = Vec::new();
    while messages.len() < 2 {
        match next_notification(&notes, deadline) {
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
