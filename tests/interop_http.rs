//! Interop over HTTP with two MCP servers written by others: the TypeScript reference server
//! `@modelcontextprotocol/server-everything` (Streamable HTTP and legacy HTTP+SSE) and a server
//! on the Python SDK `mcp` 2.x (`tests/peers/python_server.py`: Streamable HTTP with event-stream
//! or JSON replies, and legacy HTTP+SSE).
//!
//! Each server is reached twice: with [`HttpTransportKind::Auto`], which must pick Streamable
//! HTTP for a Streamable HTTP server and fall back to legacy SSE for a legacy one, and with the
//! matching explicit kind. Each test starts its own server on a free loopback port (see
//! `HttpPeer` in `tests/common/peers.rs`), runs one client through the whole feature set, and
//! kills the server when it ends, also when it fails.
#![cfg(feature = "http")]

mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use common::interop::{
    assert_progress, call_text, handler_error, next_notification, options, prompt_texts,
    python_tool_names, resource_text, text_of, tool_names, wait_for_tool, ProgressLog,
    PROTOCOL_VERSION, SAMPLED_TEXT, WAIT,
};

use common::peers::{self, HttpPeer};
use umcp::types::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    LoggingLevel, ProgressNotificationParams, Root, ServerNotification,
};
use umcp::{
    CancelHandle, Client, Era, HttpConfig, HttpTransportKind, Notifications, Options, ProtocolMode,
    RequestOptions,
};

/// The root the server-everything tests declare.
const ROOT_URI: &str = "file:///tmp/umcp-interop-http";

use HttpTransportKind::{Auto, Sse, StreamableHttp};

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// Connects to `server` at `path` with `kind` and runs the handshake.
fn connect(server: &HttpPeer, path: &str, kind: HttpTransportKind, options: Options) -> Client {
    let url = server.url(path);
    let config = HttpConfig::new(url.as_str()).transport(kind);
    Client::connect_with(config, options)
        .unwrap_or_else(|e| panic!("connecting to {url} with {kind:?} failed: {e}"))
}

/// What the sampling and elicitation handlers of one client were asked.
#[derive(Clone, Default)]
struct Seen {
    /// The last sampling request.
    sampling: Arc<Mutex<Option<Value>>>,
    /// The requested schema of the last form elicitation.
    schema: Arc<Mutex<Option<Value>>>,
}

impl Seen {
    fn sampling(&self) -> Option<Value> {
        self.sampling.lock().expect("seen sampling").clone()
    }

    fn schema(&self) -> Option<Value> {
        self.schema.lock().expect("seen schema").clone()
    }

    /// Options with a sampling handler that answers [`SAMPLED_TEXT`], and an elicitation
    /// handler that accepts a form with the schema's defaults plus `fields` (or declines it
    /// when its message contains "decline"); both keep what they were asked.
    fn options(&self, fields: Value) -> Options {
        let seen = self.clone();
        let sampling = move |params: CreateMessageRequestParams| {
            if let Ok(mut slot) = seen.sampling.lock() {
                *slot = serde_json::to_value(&params).ok();
            }
            serde_json::from_value::<CreateMessageResult>(json!({
                "role": "assistant",
                "content": {"type": "text", "text": SAMPLED_TEXT},
                "model": "umcp-test-model",
                "stopReason": "endTurn"
            }))
            .map_err(handler_error)
        };
        let seen = self.clone();
        let elicitation = move |params: ElicitRequestParams| {
            let ElicitRequestParams::Form(form) = params else {
                return Err(handler_error(format!(
                    "expected a form elicitation, got {params:?}"
                )));
            };
            let form_json = serde_json::to_value(&form).map_err(handler_error)?;
            if let Ok(mut slot) = seen.schema.lock() {
                *slot = Some(form_json["requestedSchema"].clone());
            }
            if form_json["message"]
                .as_str()
                .unwrap_or("")
                .contains("decline")
            {
                return serde_json::from_value::<ElicitResult>(json!({"action": "decline"}))
                    .map_err(handler_error);
            }
            let mut answer = serde_json::to_value(ElicitResult::accept_defaults(&form))
                .map_err(handler_error)?;
            if !answer["content"].is_object() {
                answer["content"] = json!({});
            }
            if let (Some(content), Some(fields)) =
                (answer["content"].as_object_mut(), fields.as_object())
            {
                content.extend(fields.clone());
            }
            serde_json::from_value::<ElicitResult>(answer).map_err(handler_error)
        };
        options()
            .with_sampling_handler(sampling)
            .with_elicitation_handler(elicitation)
    }
}

/// Closes the client and checks that doing so does not hang (a Streamable HTTP client sends
/// `DELETE` for its session; a legacy SSE client drops its event stream).
fn close_promptly(client: Client) {
    let started = Instant::now();
    client.close();
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "close took {:?}",
        started.elapsed()
    );
    assert!(client.closed().is_some(), "the client still reports open");
}

/// Calls a tool that runs for 30 s and cancels it from its first progress notification: the
/// call ends with [`umcp::Error::Cancelled`] without waiting for the tool, and the connection
/// stays usable: the `echo` call (tool and arguments) then answers with a text that says
/// "after cancel".
fn cancel_at_first_progress(client: &Client, tool: &str, arguments: Value, echo: (&str, Value)) {
    let cancel = CancelHandle::new();
    let trigger = cancel.clone();
    let options = RequestOptions::default()
        .with_progress(move |_: &ProgressNotificationParams| trigger.cancel())
        .with_cancel(cancel);
    let started = Instant::now();
    let outcome = client.call_tool_with(tool, arguments, &options);
    assert!(
        matches!(outcome, Err(umcp::Error::Cancelled { .. })),
        "expected {tool} to be cancelled, got {outcome:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "cancelling took {:?}",
        started.elapsed()
    );
    let (echo_tool, echo_arguments) = echo;
    let text = call_text(client, echo_tool, echo_arguments);
    assert!(text.contains("after cancel"), "{text}");
}

/// An explicit Streamable HTTP client pointed at a legacy SSE endpoint fails with the HTTP
/// status the server rejects the POST with, and never falls back.
fn assert_streamable_refused(server: &HttpPeer, status: u16) {
    let url = server.url("/sse");
    let config = HttpConfig::new(url.as_str()).transport(StreamableHttp);
    match Client::connect_with(config, options()) {
        Ok(client) => panic!(
            "Streamable HTTP against the legacy endpoint {url} connected over {}",
            client.transport_kind()
        ),
        Err(e) => assert_eq!(e.http_status(), Some(status), "{e}"),
    }
}

// ---------------------------------------------------------------------------------------------
// server-everything (TypeScript SDK)
// ---------------------------------------------------------------------------------------------

/// Starts server-everything in `mode`, connects to `path` with `kind`, checks that the
/// transport in use is `expected_kind`, and goes through every feature.
fn everything_over_http(mode: &str, path: &str, kind: HttpTransportKind, expected_kind: &str) {
    let server = peers::server_everything_http(mode);
    if mode == "sse" {
        // Express has no POST route for /sse.
        assert_streamable_refused(&server, 404);
    }
    let seen = Seen::default();
    let options = seen
        .options(json!({"name": "Ada Lovelace", "check": true}))
        .with_roots(vec![Root::new(ROOT_URI)]);
    let client = connect(&server, path, kind, options);
    assert_eq!(client.transport_kind(), expected_kind);
    let notes = client.notifications();

    everything_handshake(&client);
    everything_tools(&client, &notes);
    everything_resource(&client);
    everything_prompt(&client);
    everything_progress(&client);
    // 300 steps of 0.1 s: cancelled at the first.
    cancel_at_first_progress(
        &client,
        "trigger-long-running-operation",
        json!({"duration": 30, "steps": 300}),
        ("echo", json!({"message": "after cancel"})),
    );
    everything_sampling(&client, &seen);
    everything_elicitation(&client, &seen);
    everything_roots(&client);
    everything_logging(&client, &notes);
    close_promptly(client);
}

fn everything_handshake(client: &Client) {
    // A handshake-era server: `Auto` probed, was refused and initialized.
    assert_eq!(client.era(), Era::Legacy);
    assert_eq!(client.server_info().name, "mcp-servers/everything");
    assert_eq!(client.protocol_version(), PROTOCOL_VERSION);
    let caps = client.server_capabilities();
    assert!(caps.tools.is_some(), "{caps:?}");
    assert!(caps.prompts.is_some(), "{caps:?}");
    assert!(caps.resources.is_some(), "{caps:?}");
    assert!(caps.logging.is_some(), "{caps:?}");
    assert!(
        client
            .instructions()
            .is_some_and(|text| text.contains("Everything Server")),
        "instructions: {:?}",
        client.instructions()
    );
    client.ping().expect("ping");
}

/// Lists the tools (waiting for those registered after initialization) and calls two.
fn everything_tools(client: &Client, notes: &Notifications) {
    // The client declared sampling, elicitation and roots: the server adds the tools that
    // need them once initialized, and announces them.
    wait_for_tool(client, notes, "trigger-sampling-request");
    wait_for_tool(client, notes, "trigger-elicitation-request");
    wait_for_tool(client, notes, "get-roots-list");
    let names = tool_names(client);
    for expected in ["echo", "get-sum", "trigger-long-running-operation"] {
        assert!(
            names.contains(expected),
            "{expected} missing from {names:?}"
        );
    }
    assert_eq!(
        call_text(client, "echo", json!({"message": "hello over http"})),
        "Echo: hello over http"
    );
    assert_eq!(
        call_text(client, "get-sum", json!({"a": 2, "b": 3})),
        "The sum of 2 and 3 is 5."
    );
    let missing = client
        .call_tool("no-such-tool", json!({}))
        .expect("tools/call");
    assert_eq!(missing.is_error, Some(true), "{missing:?}");
}

fn everything_resource(client: &Client) {
    let resources = client.list_all_resources().expect("resources/list");
    assert!(!resources.is_empty());
    let read = client
        .read_resource("demo://resource/dynamic/text/2")
        .expect("resources/read");
    let (text, mime_type) = resource_text(&read);
    assert!(text.starts_with("Resource 2:"), "{text}");
    assert_eq!(mime_type.as_deref(), Some("text/plain"));
}

fn everything_prompt(client: &Client) {
    let prompt = client
        .get_prompt("args-prompt", json!({"city": "Paris"}))
        .expect("prompts/get");
    assert_eq!(prompt_texts(&prompt), ["What's weather in Paris?"]);
}

fn everything_progress(client: &Client) {
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

fn everything_sampling(client: &Client, seen: &Seen) {
    let text = call_text(
        client,
        "trigger-sampling-request",
        json!({"prompt": "Say hello", "maxTokens": 20}),
    );
    assert!(text.contains(SAMPLED_TEXT), "{text}");
    let request = seen.sampling().expect("the sampling handler was called");
    assert_eq!(request["maxTokens"], 20, "{request}");
    let asked = request["messages"][0]["content"]["text"]
        .as_str()
        .unwrap_or("");
    assert!(asked.contains("Say hello"), "{request}");
}

fn everything_elicitation(client: &Client, seen: &Seen) {
    let text = call_text(client, "trigger-elicitation-request", json!({}));
    assert!(text.contains("Name: Ada Lovelace"), "{text}");
    assert!(text.contains("Agreed to terms: true"), "{text}");
    // A default taken from the schema by accept_defaults, echoed back in the raw result.
    assert!(text.contains("It was a dark and stormy night."), "{text}");
    let schema = seen.schema().expect("the elicitation handler was called");
    assert_eq!(schema["required"], json!(["name"]), "{schema}");
}

fn everything_roots(client: &Client) {
    let text = call_text(client, "get-roots-list", json!({}));
    assert!(text.contains(ROOT_URI), "{text}");
}

/// Turns on simulated logging; the messages come outside any request (on the standalone GET
/// stream with Streamable HTTP).
fn everything_logging(client: &Client, notes: &Notifications) {
    client
        .set_logging_level(LoggingLevel::Debug)
        .expect("logging/setLevel");
    let text = call_text(client, "toggle-simulated-logging", json!({}));
    assert!(text.contains("Started simulated"), "{text}");
    // The server also logs other events (such as the roots it received): skip those. The
    // simulated messages read "Debug-level message", "Info-level message", and so on.
    let deadline = Instant::now() + WAIT;
    let mut others = Vec::new();
    let message = loop {
        match next_notification(notes, deadline) {
            Some(ServerNotification::LoggingMessage(params))
                if params.data.as_str().is_some_and(|d| d.contains("level")) =>
            {
                break params
            }
            Some(other) => others.push(other),
            None => panic!("no simulated log message arrived within {WAIT:?}; got {others:?}"),
        }
    };
    // Each names its own level first ("Alert level-message" is spelled that way).
    let level = serde_json::to_value(message.level).expect("a level serializes");
    let data = message.data.as_str().unwrap_or("").to_lowercase();
    assert!(
        level.as_str().is_some_and(|level| data.starts_with(level)),
        "{message:?}"
    );
}

#[test]
fn everything_streamable_http_auto() {
    if peers::skip_interop() {
        return;
    }
    everything_over_http("streamableHttp", "/mcp", Auto, "streamable-http");
}

#[test]
fn everything_streamable_http_explicit() {
    if peers::skip_interop() {
        return;
    }
    everything_over_http("streamableHttp", "/mcp", StreamableHttp, "streamable-http");
}

#[test]
fn everything_sse_auto_falls_back() {
    if peers::skip_interop() {
        return;
    }
    everything_over_http("sse", "/sse", Auto, "sse");
}

#[test]
fn everything_sse_explicit() {
    if peers::skip_interop() {
        return;
    }
    everything_over_http("sse", "/sse", Sse, "sse");
}

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
        .call_tool_with("long_task", json!({"steps": 5}), &progress.options())
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
        .call_tool_with("long_task", json!({"steps": 3}), &progress.options())
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
