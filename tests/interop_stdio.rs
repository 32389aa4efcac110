//! Interop over stdio with two MCP servers written by others: the TypeScript reference server
//! `@modelcontextprotocol/server-everything` and a server on the Python SDK `mcp` 2.x
//! (`tests/peers/python_server.py`).
//!
//! The peers are installed on first use into `target/peers` (see `tests/common/peers.rs`).
//! Each test starts its own server process, so the tests run in parallel.

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use common::interop::{
    assert_progress, call_text, handler_error, next_notification, options, prompt_texts,
    python_tool_names, resource_text, text_of, tool_names, wait_for_tool, ProgressLog,
    PROTOCOL_VERSION, SAMPLED_TEXT, WAIT,
};

use common::peers;
use umcp::jsonrpc::ErrorObject;
use umcp::types::{
    CreateMessageRequestParams, CreateMessageResult, ElicitAction, ElicitRequestParams,
    ElicitResult, LoggingLevel, Root, ServerNotification,
};
use umcp::{Client, Era, Options, ProtocolMode, StdioConfig};

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

fn path_arg(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// Starts server-everything over stdio and runs the handshake.
fn everything(options: Options) -> Client {
    let config = StdioConfig::new(path_arg(&peers::node()))
        .arg(path_arg(&peers::server_everything()))
        .arg("stdio");
    Client::connect_with(config, options)
        .unwrap_or_else(|e| panic!("connecting to server-everything over stdio failed: {e}"))
}

/// Starts the Python SDK server over stdio and runs the handshake.
///
/// The server speaks both eras and `Auto` would choose the stateless one; these tests cover
/// its handshake era (`tests/interop_modern.rs` covers the other).
fn python(options: Options) -> Client {
    let config = StdioConfig::new(path_arg(&peers::python_mcp()))
        .arg(path_arg(&peers::python_server_script()))
        .arg("stdio");
    Client::connect_with(config, options.with_protocol_mode(ProtocolMode::Legacy))
        .unwrap_or_else(|e| panic!("connecting to the Python SDK server over stdio failed: {e}"))
}

/// A sampling handler that answers [`SAMPLED_TEXT`] and keeps the request it was given.
fn sampling_handler(
    seen: Arc<Mutex<Option<Value>>>,
) -> impl Fn(CreateMessageRequestParams) -> Result<CreateMessageResult, ErrorObject>
       + Send
       + Sync
       + 'static {
    move |params: CreateMessageRequestParams| {
        if let Ok(mut slot) = seen.lock() {
            *slot = serde_json::to_value(&params).ok();
        }
        serde_json::from_value(json!({
            "role": "assistant",
            "content": {"type": "text", "text": SAMPLED_TEXT},
            "model": "umcp-test-model",
            "stopReason": "endTurn"
        }))
        .map_err(handler_error)
    }
}

/// Accepts a form elicitation with the schema's defaults plus `fields`, or declines it when
/// its message contains "decline". Keeps the requested schema.
fn elicitation_handler(
    fields: Value,
    schema: Arc<Mutex<Option<Value>>>,
) -> impl Fn(ElicitRequestParams) -> Result<ElicitResult, ErrorObject> + Send + Sync + 'static {
    move |params: ElicitRequestParams| {
        let ElicitRequestParams::Form(form) = params else {
            return Err(handler_error(format!(
                "expected a form elicitation, got {params:?}"
            )));
        };
        let form_json = serde_json::to_value(&form).map_err(handler_error)?;
        if let Ok(mut slot) = schema.lock() {
            *slot = Some(form_json["requestedSchema"].clone());
        }
        if form_json["message"]
            .as_str()
            .unwrap_or("")
            .contains("decline")
        {
            return serde_json::from_value(json!({"action": "decline"})).map_err(handler_error);
        }
        let mut answer =
            serde_json::to_value(ElicitResult::accept_defaults(&form)).map_err(handler_error)?;
        if !answer["content"].is_object() {
            answer["content"] = json!({});
        }
        if let (Some(content), Some(fields)) =
            (answer["content"].as_object_mut(), fields.as_object())
        {
            content.extend(fields.clone());
        }
        serde_json::from_value(answer).map_err(handler_error)
    }
}

// ---------------------------------------------------------------------------------------------
// server-everything (TypeScript SDK)
// ---------------------------------------------------------------------------------------------

#[test]
fn everything_handshake() {
    if peers::skip_interop() {
        return;
    }
    let client = everything(options());
    // A handshake-era server: `Auto` probed, heard -32601 and initialized.
    assert_eq!(client.era(), Era::Legacy);
    assert_eq!(client.server_info().name, "mcp-servers/everything");
    assert_eq!(client.protocol_version(), PROTOCOL_VERSION);
    assert_eq!(client.transport_kind(), "stdio");
    let caps = client.server_capabilities();
    assert!(caps.tools.is_some(), "{caps:?}");
    assert!(caps.prompts.is_some(), "{caps:?}");
    assert!(caps.resources.is_some(), "{caps:?}");
    assert!(caps.logging.is_some(), "{caps:?}");
    assert!(caps.completions.is_some(), "{caps:?}");
    assert!(
        client
            .instructions()
            .is_some_and(|text| text.contains("Everything Server")),
        "instructions: {:?}",
        client.instructions()
    );
    client.ping().expect("ping");
    client.close();
}

#[test]
fn everything_tools_list_and_call() {
    if peers::skip_interop() {
        return;
    }
    let client = everything(options());
    let names = tool_names(&client);
    for expected in [
        "echo",
        "get-sum",
        "trigger-long-running-operation",
        "toggle-simulated-logging",
    ] {
        assert!(
            names.contains(expected),
            "{expected} missing from {names:?}"
        );
    }
    // Without the client capabilities, the tools that need them are never registered.
    assert!(!names.contains("trigger-sampling-request"), "{names:?}");

    assert_eq!(
        call_text(&client, "echo", json!({"message": "hello umcp"})),
        "Echo: hello umcp"
    );
    assert_eq!(
        call_text(&client, "get-sum", json!({"a": 2, "b": 3})),
        "The sum of 2 and 3 is 5."
    );

    // Tool errors come back as a result with isError, not as a JSON-RPC error.
    let missing = client
        .call_tool("no-such-tool", json!({}))
        .expect("tools/call");
    assert_eq!(missing.is_error, Some(true), "{missing:?}");
    let invalid = client
        .call_tool("get-sum", json!({"a": "two", "b": 3}))
        .expect("tools/call");
    assert_eq!(invalid.is_error, Some(true), "{invalid:?}");
}

#[test]
fn everything_resource_read() {
    if peers::skip_interop() {
        return;
    }
    let client = everything(options());
    let resources = client.list_all_resources().expect("resources/list");
    assert!(!resources.is_empty());
    let templates = client
        .list_all_resource_templates()
        .expect("resources/templates/list");
    assert!(
        templates
            .iter()
            .any(|t| t.uri_template == "demo://resource/dynamic/text/{resourceId}"),
        "{templates:?}"
    );

    let read = client
        .read_resource("demo://resource/dynamic/text/1")
        .expect("resources/read");
    let (text, mime_type) = resource_text(&read);
    assert!(text.starts_with("Resource 1:"), "{text}");
    assert_eq!(mime_type.as_deref(), Some("text/plain"));
}

#[test]
fn everything_prompt_get() {
    if peers::skip_interop() {
        return;
    }
    let client = everything(options());
    let prompts = client.list_all_prompts().expect("prompts/list");
    let names: BTreeSet<_> = prompts.iter().map(|p| p.name.as_str()).collect();
    assert!(
        names.contains("simple-prompt") && names.contains("args-prompt"),
        "{names:?}"
    );

    let prompt = client
        .get_prompt("args-prompt", json!({"city": "Paris"}))
        .expect("prompts/get");
    assert_eq!(prompt_texts(&prompt), ["What's weather in Paris?"]);
    let simple = client
        .get_prompt("simple-prompt", Value::Null)
        .expect("prompts/get");
    assert_eq!(
        prompt_texts(&simple),
        ["This is a simple prompt without arguments."]
    );
}

#[test]
fn everything_progress() {
    if peers::skip_interop() {
        return;
    }
    let client = everything(options());
    let progress = ProgressLog::default();
    let result = client
        .call_tool_with(
            "trigger-long-running-operation",
            json!({"duration": 1, "steps": 4}),
            &progress.options(),
        )
        .expect("tools/call");
    assert!(text_of(&result).contains("Steps: 4"), "{result:?}");
    let entries = progress.entries();
    assert_eq!(entries.len(), 4, "{entries:?}");
    assert_progress(&entries, 4.0);
}

#[test]
fn everything_sampling() {
    if peers::skip_interop() {
        return;
    }
    let seen = Arc::new(Mutex::new(None));
    let client = everything(options().with_sampling_handler(sampling_handler(seen.clone())));
    let notes = client.notifications();
    wait_for_tool(&client, &notes, "trigger-sampling-request");

    let text = call_text(
        &client,
        "trigger-sampling-request",
        json!({"prompt": "Say hello", "maxTokens": 20}),
    );
    assert!(text.contains(SAMPLED_TEXT), "{text}");
    let request = seen
        .lock()
        .expect("seen")
        .clone()
        .expect("the handler was called");
    assert_eq!(request["maxTokens"], 20, "{request}");
    let asked = request["messages"][0]["content"]["text"]
        .as_str()
        .unwrap_or("");
    assert!(asked.contains("Say hello"), "{request}");
}

#[test]
fn everything_elicitation() {
    if peers::skip_interop() {
        return;
    }
    let schema = Arc::new(Mutex::new(None));
    let handler = elicitation_handler(
        json!({"name": "Ada Lovelace", "check": true}),
        schema.clone(),
    );
    let client = everything(options().with_elicitation_handler(handler));
    let notes = client.notifications();
    wait_for_tool(&client, &notes, "trigger-elicitation-request");

    // server-everything sends the form request without `mode`, which means form.
    let text = call_text(&client, "trigger-elicitation-request", json!({}));
    assert!(text.contains("Name: Ada Lovelace"), "{text}");
    assert!(text.contains("Agreed to terms: true"), "{text}");
    // A default taken from the schema by accept_defaults, echoed back in the raw result.
    assert!(text.contains("It was a dark and stormy night."), "{text}");
    let schema = schema
        .lock()
        .expect("schema")
        .clone()
        .expect("the handler was called");
    assert_eq!(schema["required"], json!(["name"]), "{schema}");
}

#[test]
fn everything_url_elicitation() {
    if peers::skip_interop() {
        return;
    }
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = asked.clone();
    let handler = move |params: ElicitRequestParams| {
        if let ElicitRequestParams::Url(page) = params {
            seen.lock().expect("asked").push(page.url);
            return Ok(ElicitResult::new(ElicitAction::Accept));
        }
        Err(handler_error(format!(
            "expected a URL elicitation, got {params:?}"
        )))
    };
    let client = everything(options().with_elicitation_handler(handler));
    let notes = client.notifications();
    wait_for_tool(&client, &notes, "trigger-url-elicitation");

    // The request path: the server asks through `elicitation/create` in URL mode.
    let page = "https://example.com/umcp-consent";
    let text = call_text(&client, "trigger-url-elicitation", json!({"url": page}));
    assert_eq!(*asked.lock().expect("asked"), [page], "{text}");
    assert!(text.contains("accept"), "{text}");

    // The error path: -32042 names the pages, and the connection stays usable.
    let error = client
        .call_tool(
            "trigger-url-elicitation",
            json!({"url": page, "errorPath": true}),
        )
        .expect_err("-32042");
    let pages = error
        .url_elicitations_required()
        .unwrap_or_else(|| panic!("not a -32042: {error}"));
    assert_eq!(pages.len(), 1, "{error}");
    assert!(pages[0].url.starts_with("https://"), "{:?}", pages[0]);
    assert!(
        pages[0]
            .elicitation_id
            .as_ref()
            .is_some_and(|id| !id.is_empty()),
        "{:?}",
        pages[0]
    );
    assert!(!pages[0].message.is_empty(), "{:?}", pages[0]);
    assert!(call_text(&client, "echo", json!({"message": "still here"})).contains("still here"));
}

#[test]
fn everything_roots() {
    if peers::skip_interop() {
        return;
    }
    let client = everything(options().with_roots(vec![Root::new("file:///tmp/umcp-interop")]));
    let notes = client.notifications();
    wait_for_tool(&client, &notes, "get-roots-list");
    // The server asks for the roots by itself after initialization, and again here if needed.
    let text = call_text(&client, "get-roots-list", json!({}));
    assert!(text.contains("file:///tmp/umcp-interop"), "{text}");
}

#[test]
fn everything_logging() {
    if peers::skip_interop() {
        return;
    }
    let client = everything(options());
    let notes = client.notifications();
    client
        .set_logging_level(LoggingLevel::Debug)
        .expect("logging/setLevel");
    let text = call_text(&client, "toggle-simulated-logging", json!({}));
    assert!(text.contains("Started simulated"), "{text}");

    // The first simulated message is sent at once, the next ones every few seconds.
    let deadline = Instant::now() + WAIT;
    let message = loop {
        match next_notification(&notes, deadline) {
            Some(ServerNotification::LoggingMessage(params)) => break params,
            Some(_) => continue,
            None => panic!("no notifications/message arrived within {WAIT:?}"),
        }
    };
    assert!(
        message
            .data
            .as_str()
            .is_some_and(|data| data.contains("message")),
        "{message:?}"
    );

    // With simulated logging on, the server does not exit when its stdin closes: close() must
    // still return, by killing it.
    let started = Instant::now();
    client.close();
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "close took {:?}",
        started.elapsed()
    );
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
        .call_tool_with("long_task", json!({"steps": 5}), &progress.options())
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
