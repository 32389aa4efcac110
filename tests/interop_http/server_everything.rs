//! The TypeScript reference server `server-everything` over Streamable HTTP and legacy SSE,
//! explicit and auto-detected.

use std::time::{Duration, Instant};

use serde_json::json;
use umcp::types::{LoggingLevel, ProgressNotificationParams, Root, ServerNotification};
use umcp::{Client, Era, HttpTransportKind, Notifications, Options, RequestOptions};
use HttpTransportKind::{Auto, Sse, StreamableHttp};

use crate::common::interop::{
    assert_progress, call_text, next_notification, options, prompt_texts, resource_text, text_of,
    tool_names, wait_for_tool, ProgressLog, PROTOCOL_VERSION, SAMPLED_TEXT, WAIT,
};
use crate::common::peers;
use crate::{assert_streamable_refused, cancel_at_first_progress, close_promptly, connect, Seen};

/// The root the server-everything tests declare.
const ROOT_URI: &str = "file:///tmp/umcp-interop-http";

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
        .with(&progress.options())
        .call_tool(
            "trigger-long-running-operation",
            json!({"duration": 1, "steps": 4}),
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

/// server-everything answers a session id it does not know with 400 "No valid session ID
/// provided" (not the spec's 404): after it restarts, a plain client takes that for an expired
/// session, initializes again and carries on.
#[test]
fn everything_restarted_under_a_session_is_initialized_again() {
    if peers::skip_interop() {
        return;
    }
    let server = peers::server_everything_http("streamableHttp");
    let port = server.port();
    let client = connect(&server, "/mcp", StreamableHttp, Options::default());
    let before = tool_names(&client);
    assert!(before.contains("echo"), "{before:?}");
    drop(server);
    let _server = peers::server_everything_http_on("streamableHttp", Some(port));
    assert_eq!(tool_names(&client), before);
    assert_eq!(
        call_text(&client, "echo", json!({"message": "again"})),
        "Echo: again"
    );
    assert!(client.closed().is_none());
}

/// server-everything killed while `trigger-long-running-operation` sends progress on the
/// call's event stream: the call ends with `Error::Closed` soon after, not once the
/// reconnection policy's attempts against the closed port are spent (half a minute).
#[test]
fn everything_killed_mid_call_ends_the_call_as_closed() {
    if peers::skip_interop() {
        return;
    }
    let server = peers::server_everything_http("streamableHttp");
    let client = connect(&server, "/mcp", StreamableHttp, options());
    let (progressed_tx, progressed) = crossbeam_channel::bounded(1);
    let request = RequestOptions::default().with_progress(move |_: &ProgressNotificationParams| {
        let _ = progressed_tx.try_send(());
    });
    std::thread::scope(|scope| {
        let call = scope.spawn(|| {
            let arguments = json!({"duration": 30, "steps": 300});
            client
                .with(&request)
                .call_tool("trigger-long-running-operation", arguments)
        });
        progressed.recv_timeout(WAIT).expect("progress arrived");
        let killed = Instant::now();
        drop(server);
        let outcome = call.join().expect("the calling thread");
        let took = killed.elapsed();
        match outcome {
            Err(umcp::Error::Closed(closed)) => {
                assert!(closed.reason.contains("gone"), "{closed}")
            }
            other => panic!("expected Error::Closed, got {other:?}"),
        }
        // The first reconnection comes after about a second; the rest is margin.
        assert!(
            took < Duration::from_secs(5),
            "the call ended {took:?} after the server"
        );
    });
    assert!(client.closed().is_some());
}
