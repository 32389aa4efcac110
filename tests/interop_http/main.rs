//! Interop over HTTP with two MCP servers written by others: the TypeScript reference server
//! `@modelcontextprotocol/server-everything` (Streamable HTTP and legacy HTTP+SSE) and a server
//! on the Python SDK `mcp` 2.x (`tests/peers/python_server.py`: Streamable HTTP with event-stream
//! or JSON replies, and legacy HTTP+SSE).
//!
//! Each server is reached twice: with [`HttpTransportKind::Auto`], which must pick Streamable
//! HTTP for a Streamable HTTP server and fall back to legacy SSE for a legacy one, and with the
//! matching explicit kind. Each test starts its own server on a free loopback port (see
//! `HttpPeer` in `test-support/src/peers/http.rs`), runs one client through the whole feature set,
//! and kills the server when it ends, also when it fails.
#![cfg(feature = "http")]

#[path = "../common/mod.rs"]
mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use common::interop::{call_text, handler_error, options, SAMPLED_TEXT};

use common::peers::HttpPeer;
use umcp::types::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    ProgressNotificationParams,
};
use umcp::{CancelHandle, Client, HttpConfig, HttpTransportKind, Options, RequestOptions};

use HttpTransportKind::StreamableHttp;

mod python_sdk;
mod server_everything;

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// Connects to `server` at `path` with `kind` and runs the handshake.
fn connect(server: &HttpPeer, path: &str, kind: HttpTransportKind, options: Options) -> Client {
    let url = server.url(path);
    let config = HttpConfig::new(url.as_str()).transport(kind);
    Client::connect_with_options(config, options)
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
    let outcome = client.with(&options).call_tool(tool, arguments);
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
    match Client::connect_with_options(config, options()) {
        Ok(client) => panic!(
            "Streamable HTTP against the legacy endpoint {url} connected over {}",
            client.transport_kind()
        ),
        Err(e) => assert_eq!(e.http_status(), Some(status), "{e}"),
    }
}
