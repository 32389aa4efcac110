//! Tests for client rules of the spec that depend on the protocol era or version: empty
//! cursors, tool-enabled sampling, roots, progress resets, batches, cancellation and the
//! `completions` capability.

#[path = "common/memory.rs"]
mod memory;
#[path = "common/python.rs"]
mod python;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use memory::FakeServer;
use serde_json::{json, Value};
use umcp::jsonrpc::{ErrorCode, ErrorObject, Message, Request, RequestId, Response};
use umcp::types::{
    CompleteReference, CompleteRequestParams, ContentBlock, CreateMessageResult, ElicitResult,
    ListRootsResult, Root, META_CLIENT_CAPABILITIES,
};
use umcp::{Client, Error, Options, ProtocolMode, RequestOptions, TimeoutKind, Unsupported};

/// Bound for anything that should happen at once.
const SOON: Duration = Duration::from_secs(5);

/// A stateless-era (2026-07-28) fake server offering tools and prompts; it refuses
/// `initialize`, as such servers do.
fn modern_server(name: &str) -> FakeServer {
    let server = FakeServer::named(name);
    server.on("server/discover", |_, _| {
        Some(json!({
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}, "prompts": {}},
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "modern", "version": "1"}},
        }))
    });
    server.on("initialize", |peer, request| {
        let error = ErrorObject::new(ErrorCode::UNSUPPORTED_PROTOCOL_VERSION, "no initialize");
        peer.send(Response::err(request.id.clone(), error).into());
        None
    });
    server
}

fn modern(options: Options) -> Options {
    options.with_protocol_mode(ProtocolMode::modern())
}

fn legacy(options: Options) -> Options {
    options.with_protocol_mode(ProtocolMode::Legacy)
}

/// The requests the client sent with this method, in order.
fn requests(server: &FakeServer, method: &str) -> Vec<Request> {
    let received = server.received.lock().unwrap();
    received
        .iter()
        .filter_map(|m| match m {
            Message::Request(r) if r.method == method => Some(r.clone()),
            _ => None,
        })
        .collect()
}

/// The capabilities the client declared in `initialize`.
fn initialize_capabilities(server: &FakeServer) -> Value {
    requests(server, "initialize")[0].params.as_ref().unwrap()["capabilities"].clone()
}

/// The cursor a list request carried (`None` without one).
fn cursor(request: &Request) -> Option<String> {
    let cursor = request.params.as_ref().and_then(|p| p.get("cursor"));
    cursor.and_then(Value::as_str).map(String::from)
}

fn tool(name: &str) -> Value {
    json!({"name": name, "inputSchema": {"type": "object"}})
}

#[test]
fn an_empty_cursor_is_a_cursor_in_the_stateless_era() {
    let server = modern_server("spec-rules-empty-cursor");
    server.on("tools/list", |_, request| {
        Some(match cursor(request).as_deref() {
            None => json!({"tools": [tool("a")], "nextCursor": ""}),
            Some("") => json!({"tools": [tool("b")]}),
            Some(other) => panic!("unexpected cursor {other:?}"),
        })
    });
    // A server that keeps answering `""` repeats its cursor: that ends in an error, not a loop.
    server.on("prompts/list", |_, _| {
        Some(json!({"prompts": [], "nextCursor": ""}))
    });
    let client = Client::connect_with(server.clone(), modern(Options::default())).unwrap();
    let names: Vec<_> = client
        .list_all_tools()
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, ["a", "b"]);
    let sent: Vec<_> = requests(&server, "tools/list").iter().map(cursor).collect();
    assert_eq!(sent, [None, Some(String::new())]);
    match client.list_all_prompts() {
        Err(Error::Protocol(message)) => assert!(message.contains("repeated"), "{message}"),
        other => panic!("expected a repeated-cursor error, got {other:?}"),
    }
    assert_eq!(requests(&server, "prompts/list").len(), 2);
}

#[test]
fn an_empty_cursor_ends_the_list_in_the_handshake_era() {
    let server = FakeServer::new();
    server.on("tools/list", |_, _| {
        Some(json!({"tools": [tool("a")], "nextCursor": ""}))
    });
    let client = Client::connect_with(server.clone(), legacy(Options::default())).unwrap();
    assert_eq!(client.list_all_tools().unwrap().len(), 1);
    assert_eq!(requests(&server, "tools/list").len(), 1);
}

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

#[test]
fn roots_list_answers_only_file_roots() {
    let mixed = || {
        vec![
            Root::new("file:///work").with_name("work"),
            Root::new("https://example.com/repo"),
            Root::new("relative/path"),
        ]
    };
    let server = FakeServer::new();
    server.on("tools/call", |peer, _| {
        let answer = peer.request("roots/list", json!({}));
        Some(json!({"content": [], "structuredContent": answer.result.unwrap()}))
    });
    let uris = |client: &Client| {
        let result = client.call_tool("x", Value::Null).unwrap();
        let roots = &result.structured_content.unwrap()["roots"];
        let roots = roots.as_array().unwrap().iter();
        roots
            .map(|r| r["uri"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    let options = legacy(Options::default().with_roots(mixed()));
    let client = Client::connect_with(server.clone(), options).unwrap();
    assert_eq!(uris(&client), ["file:///work"]);
    let options = Options::default().with_roots_handler(move || Ok(ListRootsResult::new(mixed())));
    let client = Client::connect_with(server.clone(), legacy(options)).unwrap();
    assert_eq!(uris(&client), ["file:///work"]);
}

#[test]
fn the_roots_capability_has_list_changed_only_in_the_handshake_era() {
    let roots = || Options::default().with_roots(vec![Root::new("file:///work")]);
    let server = FakeServer::new();
    let _client = Client::connect_with(server.clone(), legacy(roots())).unwrap();
    assert_eq!(
        initialize_capabilities(&server)["roots"],
        json!({"listChanged": true})
    );

    let server = modern_server("spec-rules-modern-roots");
    server.on("tools/list", |_, _| Some(json!({"tools": []})));
    let client = Client::connect_with(server.clone(), modern(roots())).unwrap();
    client.list_tools(None).unwrap();
    let sent = requests(&server, "tools/list");
    let meta = &sent[0].params.as_ref().unwrap()["_meta"];
    assert_eq!(meta[META_CLIENT_CAPABILITIES]["roots"], json!({}));
}

#[test]
fn roots_list_changed_is_not_sent_in_the_stateless_era() {
    let roots = || Options::default().with_roots(vec![Root::new("file:///work")]);
    let server = modern_server("spec-rules-modern-roots-changed");
    server.on("tools/list", |_, _| Some(json!({"tools": []})));
    let client = Client::connect_with(server.clone(), modern(roots())).unwrap();
    client.notify_roots_list_changed().unwrap();
    // A request after it: the fake server records in order, so once it has the request it
    // would have the notification too.
    client.list_tools(None).unwrap();
    client.close();
    assert!(server.wait_ended(1, SOON));
    assert!(server
        .notifications("notifications/roots/list_changed")
        .is_empty());

    // The handshake era still sends it.
    let server = FakeServer::new();
    let client = Client::connect_with(server.clone(), legacy(roots())).unwrap();
    client.notify_roots_list_changed().unwrap();
    assert!(server
        .wait_notification("notifications/roots/list_changed", SOON)
        .is_some());
}

/// A handshake-era server whose `tools/call` works for 640 ms, reporting progress every 80 ms
/// when the request carries a progress token, as servers do.
fn slow_server() -> FakeServer {
    let server = FakeServer::new();
    server.on("tools/call", |peer, request| {
        let params = request.params.as_ref();
        let token = params.and_then(|p| p["_meta"].get("progressToken").cloned());
        for step in 1..=8 {
            std::thread::sleep(Duration::from_millis(80));
            if let Some(token) = &token {
                peer.notify(
                    "notifications/progress",
                    json!({"progressToken": token, "progress": step}),
                );
            }
        }
        Some(json!({"content": []}))
    });
    server
}

#[test]
fn resetting_the_timeout_on_progress_needs_no_progress_callback() {
    let server = slow_server();
    let client = Client::connect_with(server.clone(), legacy(Options::default())).unwrap();
    let timeout = RequestOptions::default().with_timeout(Duration::from_millis(300));
    match client.call_tool_with("slow", Value::Null, &timeout) {
        Err(Error::Timeout { kind, .. }) => assert_eq!(kind, TimeoutKind::Request),
        other => panic!("expected a timeout, got {other:?}"),
    }
    let reset = timeout.with_reset_timeout_on_progress(true);
    client.call_tool_with("slow", Value::Null, &reset).unwrap();
}

#[test]
fn initialize_is_never_cancelled() {
    let server = FakeServer::new();
    server.on("initialize", |_, _| None);
    // Like stdio: a cancellation would be sent at once, on the caller's thread.
    server.queued_sends.store(true, Ordering::SeqCst);
    let options = legacy(Options::default()).with_init_timeout(Duration::from_millis(200));
    match Client::connect_with(server.clone(), options) {
        Err(Error::Timeout { method, .. }) => assert_eq!(method, "initialize"),
        other => panic!("expected an initialize timeout, got {:?}", other.err()),
    }
    assert!(
        server.wait_ended(1, SOON),
        "the client closed the connection"
    );
    assert_eq!(requests(&server, "initialize").len(), 1);
    assert!(server.notifications("notifications/cancelled").is_empty());
}

#[test]
fn a_server_request_the_server_cancelled_gets_no_reply() {
    let (entered_tx, entered_rx) = crossbeam_channel::bounded::<()>(1);
    let (release_tx, release_rx) = crossbeam_channel::bounded::<()>(1);
    let elicit_id = RequestId::from("srv-elicit".to_owned());
    let server = FakeServer::new();
    let id = elicit_id.clone();
    server.on("tools/call", move |peer, _| {
        let params = json!({"message": "name?", "requestedSchema": {"type": "object"}});
        peer.send(Request::new(id.clone(), "elicitation/create", Some(params)).into());
        entered_rx.recv_timeout(SOON).expect("the handler runs");
        peer.notify(
            "notifications/cancelled",
            json!({"requestId": id, "reason": "no longer needed"}),
        );
        release_tx.send(()).unwrap();
        // One handler thread: this is answered only once the elicitation handler is done.
        let roots = peer.request("roots/list", json!({}));
        Some(json!({"content": [], "structuredContent": {"roots": roots.result.is_ok()}}))
    });
    let options = Options::default()
        .with_handler_threads(1)
        .with_roots(vec![Root::new("file:///work")])
        .with_elicitation_handler(move |_| {
            entered_tx.send(()).unwrap();
            release_rx.recv_timeout(SOON).expect("released");
            Ok(ElicitResult::decline())
        });
    let client = Client::connect_with(server.clone(), legacy(options)).unwrap();
    let result = client.call_tool("x", Value::Null).unwrap();
    assert_eq!(result.structured_content.unwrap()["roots"], true);
    let received = server.received.lock().unwrap();
    let replied = received
        .iter()
        .any(|m| matches!(m, Message::Response(r) if r.id.as_ref() == Some(&elicit_id)));
    assert!(!replied, "the cancelled request was answered");
}

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
    let client = Client::connect_with(server.clone(), legacy(Options::default())).unwrap();
    assert_eq!(client.protocol_version(), "2025-11-25");
    match client.complete(completion()) {
        Err(Error::Unsupported(Unsupported::Capability { capability, .. })) => {
            assert_eq!(capability, "completions")
        }
        other => panic!("expected Unsupported, got {other:?}"),
    }
    assert!(requests(&server, "completion/complete").is_empty());

    server.init_result.lock().unwrap()["protocolVersion"] = json!("2024-11-05");
    let client = Client::connect_with(server.clone(), legacy(Options::default())).unwrap();
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
                    let result = client.call_tool_with("echo", arguments, options);
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
    let client = Client::connect_with(batching_server("2025-03-26"), legacy(Options::default()))
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

    let client = Client::connect_with(batching_server("2025-11-25"), legacy(Options::default()))
        .expect("connect");
    assert_eq!(client.protocol_version(), "2025-11-25");
    let short = RequestOptions::default().with_timeout(Duration::from_millis(500));
    for outcome in two_calls(&client, &short) {
        assert!(
            matches!(outcome, Err(Error::Timeout { .. })),
            "a batch is dropped at 2025-11-25: {outcome:?}"
        );
    }
    client.ping().expect("the client keeps working");
}
