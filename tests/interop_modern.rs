//! Interop in the stateless era (protocol 2026-07-28) with servers written by others: the
//! Python SDK `mcp` 2.3.0 (`tests/peers/python_server.py`, which speaks both eras) over stdio
//! and Streamable HTTP, and the TypeScript SDK v2 (`tests/peers/ts_v2_server.mjs`, stateless
//! only) over Streamable HTTP. Every client connects with the default [`ProtocolMode::Auto`]
//! and the era it picked is asserted.

mod common;

use std::path::Path;

use serde_json::json;

use common::interop::{call_text, handler_error, options, prompt_texts, resource_text};
use common::peers;
use umcp::jsonrpc::ErrorObject;
use umcp::types::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    LoggingLevel, ServerNotification,
};
use umcp::{Client, Era, Error, Options, ProtocolMode, StdioConfig};

#[cfg(feature = "http")]
use umcp::HttpConfig;

/// The stateless version both peers speak.
const MODERN: &str = "2026-07-28";

fn path_arg(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// Answers every elicitation with `{"confirm": true}` (plus a note for the Python form).
fn confirming(params: ElicitRequestParams) -> Result<ElicitResult, ErrorObject> {
    let ElicitRequestParams::Form(form) = params else {
        return Err(handler_error("expected a form elicitation"));
    };
    let mut answer =
        serde_json::to_value(ElicitResult::accept_defaults(&form)).map_err(handler_error)?;
    answer["content"] = json!({"confirm": true, "note": "from umcp"});
    serde_json::from_value(answer).map_err(handler_error)
}

/// Answers every sampling request with a fixed text.
fn sampling(_params: CreateMessageRequestParams) -> Result<CreateMessageResult, ErrorObject> {
    serde_json::from_value(json!({
        "role": "assistant",
        "content": {"type": "text", "text": "a short summary"},
        "model": "umcp-test-model"
    }))
    .map_err(handler_error)
}

fn modern_options() -> Options {
    options()
        .with_elicitation_handler(confirming)
        .with_sampling_handler(sampling)
}

fn python_stdio(options: Options) -> Client {
    let config = StdioConfig::new(path_arg(&peers::python_mcp()))
        .arg(path_arg(&peers::python_server_script()))
        .arg("stdio");
    Client::connect_with_options(config, options)
        .unwrap_or_else(|e| panic!("connecting to the Python SDK server over stdio failed: {e}"))
}

/// What every stateless connection to the Python server shows, whatever the transport.
fn python_in_the_stateless_era(client: &Client) {
    assert_eq!(client.era(), Era::Modern);
    assert_eq!(client.protocol_version(), MODERN);
    assert_eq!(client.server_info().name, "umcp-python-peer");
    assert_eq!(
        client.instructions().as_deref(),
        Some("A test server for umcp interop tests.")
    );
    assert!(client.server_capabilities().tools.is_some());
    assert_eq!(call_text(client, "add", json!({"a": 2, "b": 40})), "42");
    // Input rounds: the server asks through `inputRequests`, the client's handlers answer.
    assert_eq!(
        call_text(client, "confirm_resolved", json!({"question": "Go?"})),
        "accepted: confirm=true note=from umcp"
    );
    assert_eq!(
        call_text(client, "summarize_resolved", json!({"text": "long text"})),
        "a short summary"
    );
    let greeting = client
        .read_resource("demo://greeting")
        .expect("resources/read");
    assert_eq!(
        resource_text(&greeting).0,
        "Hello from the Python MCP server!"
    );
    let review = client
        .get_prompt("review", json!({"code": "x = 1"}))
        .expect("prompts/get");
    assert!(prompt_texts(&review).join("\n").contains("x = 1"));
    client
        .ping()
        .expect("ping is a server/discover in the stateless era");
}

#[test]
fn python_stdio_auto_picks_the_stateless_era() {
    if peers::skip_interop() {
        return;
    }
    let client = python_stdio(modern_options());
    python_in_the_stateless_era(&client);
    assert_eq!(client.transport_kind(), "stdio");
    client.close();
}

#[test]
fn python_stdio_input_round_without_a_handler_fails_clearly() {
    if peers::skip_interop() {
        return;
    }
    let client = python_stdio(options());
    let outcome = client.call_tool("confirm_resolved", json!({"question": "Go?"}));
    match outcome {
        // The server may refuse itself (-32021: the client declared no elicitation), or ask
        // anyway and the client names the missing handler.
        Err(Error::Rpc(e)) => assert_eq!(e.code.0, -32021, "{e:?}"),
        Err(Error::Unsupported(u)) => assert!(format!("{u:?}").contains("elicitation")),
        Ok(result) => assert_eq!(result.is_error, Some(true), "{result:?}"),
        Err(other) => panic!("{other:?}"),
    }
}

#[test]
fn python_stdio_legacy_mode_still_initializes() {
    if peers::skip_interop() {
        return;
    }
    let client = python_stdio(options().with_protocol_mode(ProtocolMode::Legacy));
    assert_eq!(client.era(), Era::Legacy);
    assert_eq!(client.protocol_version(), "2025-11-25");
    client.ping().expect("ping");
}

#[cfg(feature = "http")]
#[test]
fn python_streamable_http_auto_picks_the_stateless_era() {
    if peers::skip_interop() {
        return;
    }
    for args in [
        &["streamable-http"][..],
        &["streamable-http", "--json-response"][..],
    ] {
        let server = peers::python_http(args);
        let url = server.url("/mcp");
        let client = Client::connect_with_options(HttpConfig::new(url.as_str()), modern_options())
            .unwrap_or_else(|e| panic!("connecting to {url} failed: {e}"));
        assert_eq!(client.transport_kind(), "streamable-http");
        python_in_the_stateless_era(&client);
        // The server checks Mcp-Param-Region against the argument.
        for region in ["eu-west", "Zürich"] {
            let text = call_text(&client, "region", json!({ "region": region }));
            assert_eq!(text, format!("region {region}"));
        }
        client.close();
    }
}

#[cfg(feature = "http")]
#[test]
fn typescript_v2_streamable_http_auto_picks_the_stateless_era() {
    if peers::skip_interop() {
        return;
    }
    let server = peers::ts_v2_http();
    let url = server.url("/mcp");
    let client = Client::connect_with_options(HttpConfig::new(url.as_str()), modern_options())
        .unwrap_or_else(|e| panic!("connecting to {url} failed: {e}"));
    assert_eq!(client.era(), Era::Modern);
    assert_eq!(client.transport_kind(), "streamable-http");
    assert_eq!(client.protocol_version(), MODERN);
    assert_eq!(client.server_info().name, "umcp-ts-v2-peer");
    let tools: Vec<String> = client
        .list_all_tools()
        .expect("tools/list")
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert!(tools.contains(&"region".to_owned()), "{tools:?}");
    assert_eq!(call_text(&client, "echo", json!({"message": "hi"})), "hi");
    assert_eq!(
        call_text(&client, "confirm", json!({"question": "Go?"})),
        "confirmed: true"
    );
    for region in ["ap-south", "São Paulo"] {
        let text = call_text(&client, "region", json!({ "region": region }));
        assert_eq!(text, format!("region {region}"));
    }
    client
        .ping()
        .expect("ping is a server/discover in the stateless era");
    let legacy = Options::default().with_protocol_mode(ProtocolMode::Legacy);
    let refused = Client::connect_with_options(HttpConfig::new(url.as_str()), legacy);
    assert!(
        refused.is_err(),
        "a stateless-only server refuses initialize"
    );
    client.close();
}

/// The log levels a stateless client asks for: the Python server offers no `logging`
/// capability in this era but honours the level in `_meta`, from the options or set later.
#[test]
fn python_stdio_log_levels_travel_in_meta() {
    if peers::skip_interop() {
        return;
    }
    let client = python_stdio(modern_options().with_log_level(LoggingLevel::Info));
    assert_eq!(client.era(), Era::Modern);
    assert_eq!(
        logged_levels(&client),
        [LoggingLevel::Info, LoggingLevel::Warning]
    );
    client
        .set_logging_level(LoggingLevel::Warning)
        .expect("a stateless level is set without a request");
    assert_eq!(logged_levels(&client), [LoggingLevel::Warning]);
}

/// The levels of the log messages `shout` causes, up to its warning.
fn logged_levels(client: &Client) -> Vec<LoggingLevel> {
    let notes = client.notifications();
    assert_eq!(call_text(client, "shout", json!({"message": "hi"})), "HI");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut levels = Vec::new();
    while !levels.contains(&LoggingLevel::Warning) {
        match common::interop::next_notification(&notes, deadline) {
            Some(ServerNotification::LoggingMessage(message)) => levels.push(message.level),
            Some(_) => {}
            None => panic!("no warning logged; levels so far: {levels:?}"),
        }
    }
    levels
}
