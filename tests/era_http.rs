//! The stateless protocol (2026-07-28) over Streamable HTTP against the bundled demo server
//! (`demo --server --modern --http`), which refuses any POST whose routing headers
//! (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-Region`) disagree with its
//! body, and era selection against its handshake-era mode.

#![cfg(feature = "http")]

use umcp_test_support::demo;
use umcp_test_support::http_demo;
use umcp_test_support::http_server;

use std::time::Duration;

use http_demo::HttpDemo;
use serde_json::json;
use umcp::jsonrpc::ErrorObject;
use umcp::types::{ContentBlock, CreateMessageRequestParams, CreateMessageResult};
use umcp::{Client, Era, Error, HttpConfig, Options};

#[test]
fn auto_speaks_the_stateless_era_over_http_with_routing_headers() {
    let server = HttpDemo::start(&["--modern"]);
    let client = server.connect(Options::default());
    assert_eq!(client.era(), Era::Modern);
    assert_eq!(client.transport_kind(), "streamable-http");
    assert_eq!(client.protocol_version(), "2026-07-28");
    assert_eq!(client.server_info().name, "umcp-demo");
    let tools = client.list_all_tools().expect("tools");
    assert!(!tools.iter().any(|t| t.name == "bad_header"));
    // The server compares Mcp-Param-Region with the argument; a non-ASCII value travels
    // base64-encoded.
    for region in ["eu-west", "Zürich"] {
        let reply = client
            .call_tool("region", json!({ "region": region }))
            .expect("region");
        assert_eq!(reply.text(), format!("region {region}"));
    }
    let echo = client
        .call_tool("echo", json!({"message": "hi"}))
        .expect("echo");
    assert_eq!(echo.text(), "hi");
    // The stateless era has no `ping`: the health check is a `server/discover`.
    let seen = |method: &str| {
        let result = client.call_tool("requests_seen", json!({})).expect("seen");
        let counts = result.structured_content.expect("structured");
        counts
            .get(method)
            .and_then(serde_json::Value::as_u64)
            .unwrap_or(0)
    };
    let discovers = seen("server/discover");
    client.ping().expect("ping");
    assert_eq!(seen("server/discover"), discovers + 1);
    assert_eq!(seen("ping"), 0);
}

#[test]
fn a_header_mismatch_re_lists_the_tools_and_retries_once() {
    let server = HttpDemo::start(&["--modern"]);
    let client = server.connect(Options::default());
    // Without a tools/list first the client does not know `region` mirrors an argument, so
    // the first attempt lacks Mcp-Param-Region and is refused with -32020.
    let reply = client
        .call_tool("region", json!({"region": "ap-south"}))
        .expect("retried after re-listing");
    assert_eq!(reply.text(), "region ap-south");
}

#[test]
fn an_input_round_over_http_runs_the_sampling_handler() {
    let server = HttpDemo::start(&["--modern"]);
    let options = Options::default().with_sampling_handler(
        |params: CreateMessageRequestParams| -> Result<CreateMessageResult, ErrorObject> {
            let asked = params.messages.last().map(|m| m.content.text());
            let answer = format!("answer to {}", asked.unwrap_or_default());
            Ok(CreateMessageResult::new(
                "test-model",
                ContentBlock::text(answer),
            ))
        },
    );
    let client = server.connect(options);
    let reply = client
        .call_tool("ask_llm", json!({"prompt": "2 + 2?"}))
        .expect("ask_llm");
    assert_eq!(reply.text(), "answer to 2 + 2?");
}

#[test]
fn auto_initializes_a_handshake_era_http_server() {
    let server = HttpDemo::start(&[]);
    let client = server.connect(Options::default());
    assert_eq!(client.era(), Era::Legacy);
    assert_eq!(client.transport_kind(), "streamable-http");
    assert_eq!(client.protocol_version(), "2025-11-25");
    client.ping().expect("ping");
}

#[test]
fn a_lost_response_is_re_issued_unless_it_is_a_tool_call_that_may_change_things() {
    let server = HttpDemo::start(&["--modern", "--behaviour", "lose-first-response"]);
    let client = server.connect(Options::default());
    let readme = client
        .read_resource("demo://text/readme")
        .expect("re-issued under a new id");
    assert!(!readme.contents.is_empty());
    // Listed, and without annotations: it may change things, so it is not sent twice.
    assert!(client.list_all_tools().expect("tools/list").len() > 1);
    match client.call_tool("echo", json!({"message": "once"})) {
        Err(Error::ResponseLost(_)) => {}
        other => panic!("a tool call must not be repeated: {other:?}"),
    }
    let echo = client
        .call_tool("echo", json!({"message": "twice"}))
        .expect("echo");
    assert_eq!(echo.text(), "twice");
}

#[test]
fn a_lost_call_of_a_tool_listed_as_read_only_is_re_issued() {
    let server = HttpDemo::start(&["--modern", "--behaviour", "lose-first-response"]);
    let client = server.connect(Options::default());
    let tools = client.list_all_tools().expect("tools/list");
    let add = tools.iter().find(|t| t.name == "add").expect("add");
    let hints = add.annotations.as_ref().expect("annotated");
    assert_eq!(hints.read_only_hint, Some(true));
    // The first tools/call response is lost; `add` changes nothing, so it is sent again.
    let sum = client
        .call_tool("add", json!({"a": 2, "b": 3}))
        .expect("re-issued under a new id");
    assert_eq!(sum.structured_content, Some(json!({"sum": 5})));
}

#[test]
fn the_stateless_era_keeps_no_session_opens_no_stream_and_never_resumes() {
    // A server that (wrongly) hands out a session id and event ids: the stateless client must
    // echo neither, open no GET stream, send no DELETE and no notifications.
    let server = http_server::serve(|seen, reply| {
        let body = seen.json();
        let id = body["id"].clone();
        let session = [("Mcp-Session-Id", "s-1")];
        match (seen.method.as_str(), seen.rpc_method().as_deref()) {
            ("POST", Some("server/discover")) => {
                let result = json!({"supportedVersions": ["2026-07-28"],
                    "capabilities": {"tools": {}}, "resultType": "complete"});
                reply.json(
                    200,
                    &session,
                    &json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string(),
                );
            }
            ("POST", Some("tools/list")) => {
                let mut sse = reply.sse(&session);
                let result = json!({"tools": [], "resultType": "complete"});
                let message = json!({"jsonrpc": "2.0", "id": id, "result": result});
                let _ = sse.send(&format!("id: e-1\ndata: {message}\n\n"));
                sse.end();
            }
            ("POST", Some("tools/call")) => {
                // The stream ends before the response, after an event id.
                let mut sse = reply.sse(&session);
                let _ = sse.send("id: e-2\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"x\"}}\n\n");
                sse.end();
            }
            _ => reply.status(405, &[]),
        }
    });
    let client = Client::connect(HttpConfig::new(server.url("/mcp"))).expect("connect");
    assert_eq!(client.era(), Era::Modern);
    assert!(client.list_all_tools().expect("tools/list").is_empty());
    match client.call_tool("anything", json!({})) {
        Err(Error::ResponseLost(_)) => {}
        other => panic!("expected ResponseLost, got {other:?}"),
    }
    client.close();
    let mut seen = Vec::new();
    while let Some(request) = server.next_within(Duration::from_millis(500)) {
        seen.push(request);
    }
    assert!(seen.iter().all(|r| r.method == "POST"), "{seen:?}");
    assert!(
        seen.iter().all(|r| r.header("mcp-session-id").is_none()),
        "a session id was echoed: {seen:?}"
    );
    assert!(seen.iter().all(|r| r.header("last-event-id").is_none()));
    let methods: Vec<String> = seen.iter().filter_map(|r| r.rpc_method()).collect();
    assert_eq!(
        methods,
        ["server/discover", "tools/list", "tools/call"],
        "{seen:?}"
    );
    for request in &seen {
        assert_eq!(request.header("mcp-protocol-version"), Some("2026-07-28"));
        assert_eq!(
            request.header("mcp-method").map(str::to_owned),
            request.rpc_method()
        );
    }
}

/// A server behind one URL that changes era between connections (upgraded, then rolled
/// back): the remembered verdict is only a hint, and each connection speaks what the server
/// speaks now.
#[test]
fn a_url_whose_server_changes_era_is_followed() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    let modern = Arc::new(AtomicBool::new(false));
    let now_modern = Arc::clone(&modern);
    let server = http_server::serve(move |seen, reply| {
        let body = seen.json();
        let id = body["id"].clone();
        let answer = |result: serde_json::Value| {
            json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string()
        };
        let refuse = |code: i64, message: &str| {
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
                .to_string()
        };
        let session = [("Mcp-Session-Id", "s-1")];
        match (
            seen.method.as_str(),
            seen.rpc_method().as_deref(),
            now_modern.load(Ordering::SeqCst),
        ) {
            // The stateless server: no initialize, which lacks its headers.
            ("POST", Some("initialize"), true) => {
                reply.json(400, &[], &refuse(-32020, "MCP-Protocol-Version required"))
            }
            ("POST", Some("server/discover"), true) => {
                let result = json!({"supportedVersions": ["2026-07-28"],
                    "capabilities": {"tools": {}}, "resultType": "complete"});
                reply.json(200, &[], &answer(result));
            }
            ("POST", Some("tools/list"), true) => {
                let result = json!({"tools": [], "resultType": "complete"});
                reply.json(200, &[], &answer(result));
            }
            // The handshake-era server, as TypeScript SDK 1.x servers answer the probe.
            ("POST", Some("server/discover"), false) => reply.json(
                400,
                &[],
                &refuse(-32000, "Bad Request: Server not initialized"),
            ),
            ("POST", Some("initialize"), false) => {
                let result = json!({"protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "changing", "version": "1"}});
                reply.json(200, &session, &answer(result));
            }
            ("POST", Some("tools/list"), false) => {
                reply.json(200, &session, &answer(json!({"tools": []})));
            }
            ("POST", _, _) => reply.status(202, &[]),
            _ => reply.status(405, &[]),
        }
    });
    let methods = || -> Vec<String> {
        let mut seen = Vec::new();
        while let Some(request) = server.next_within(Duration::from_millis(300)) {
            seen.extend(request.rpc_method());
        }
        seen
    };
    let connect = |modern_now: bool| {
        modern.store(modern_now, Ordering::SeqCst);
        let client = Client::connect(HttpConfig::new(server.url("/mcp"))).expect("connect");
        assert!(client.list_all_tools().expect("tools/list").is_empty());
        let era = client.era();
        client.close();
        era
    };
    // A probe the handshake-era server refuses, then its handshake, on one connection.
    let handshake_after_probe = [
        "server/discover",
        "initialize",
        "notifications/initialized",
        "tools/list",
    ];
    assert_eq!(connect(false), Era::Legacy);
    assert_eq!(methods(), handshake_after_probe);
    assert_eq!(connect(true), Era::Modern);
    assert_eq!(
        methods(),
        ["initialize", "server/discover", "tools/list"],
        "the remembered handshake was refused, then the server probed"
    );
    assert_eq!(connect(false), Era::Legacy);
    assert_eq!(
        methods(),
        handshake_after_probe,
        "the remembered stateless verdict fell back as Auto does"
    );
}

/// The demo refuses a `tasks/*` POST whose `Mcp-Name` is not the task id.
#[test]
fn a_tool_the_server_runs_as_a_task_over_streamable_http() {
    let server = HttpDemo::start(&["--modern"]);
    demo::check_report_task(&server.connect(Options::default()));
}

/// A stateless server that refuses every `tools/call` with HTTP 400 and -32020, and serves
/// `tools/list` slowly (`pause` a page), page after page up to `pages`, each naming the next
/// (or, with `same_cursor`, the same one). Counts the pages it served.
fn refusing_server(
    pause: Duration,
    pages: usize,
    same_cursor: bool,
) -> (
    http_server::Server,
    std::sync::Arc<std::sync::atomic::AtomicUsize>,
) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let served = std::sync::Arc::new(AtomicUsize::new(0));
    let count = served.clone();
    let server = http_server::serve(move |seen, reply| {
        if seen.method != "POST" {
            return reply.status(405, &[]);
        }
        let id = seen.rpc_id();
        let answer = |result: serde_json::Value| {
            json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string()
        };
        match seen.rpc_method().as_deref() {
            Some("server/discover") => reply.json(200, &[], &answer(json!({
                "resultType": "complete", "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}},
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "slow", "version": "1"}},
            }))),
            Some("tools/list") => {
                std::thread::sleep(pause);
                let n = count.fetch_add(1, Ordering::SeqCst) + 1;
                let mut page = json!({"resultType": "complete", "tools": []});
                if n < pages {
                    let cursor = if same_cursor { "c".to_owned() } else { format!("c{n}") };
                    page["nextCursor"] = json!(cursor);
                }
                reply.json(200, &[], &answer(page));
            }
            Some("tools/call") => {
                let error = json!({"jsonrpc": "2.0", "id": id,
                    "error": {"code": -32020, "message": "header mismatch"}});
                reply.json(400, &[], &error.to_string());
            }
            _ => reply.status(202, &[]),
        }
    });
    (server, served)
}

#[test]
fn the_re_listing_after_a_header_mismatch_keeps_to_the_calls_deadline_and_cancel() {
    use std::sync::atomic::Ordering;
    let (server, served) = refusing_server(Duration::from_millis(200), 30, false);
    let client = Client::connect(HttpConfig::new(server.url("/mcp"))).expect("connect");
    assert_eq!(client.era(), Era::Modern);
    let options = umcp::RequestOptions::default().with_timeout(Duration::from_secs(1));
    let err = client
        .with(&options)
        .call_tool("t", json!({}))
        .expect_err("out of time while re-listing");
    assert!(matches!(err, Error::Timeout { .. }), "{err:?}");
    // Every page used to get the client's whole request timeout: thirty pages, then a retry.
    let pages = served.load(Ordering::SeqCst);
    assert!(pages < 30, "{pages} pages listed");

    let (server, served) = refusing_server(Duration::from_millis(100), 30, false);
    let client = Client::connect(HttpConfig::new(server.url("/mcp"))).expect("connect");
    let cancel = umcp::CancelHandle::new();
    let canceller = cancel.clone();
    let watched = served.clone();
    std::thread::spawn(move || {
        while watched.load(Ordering::SeqCst) < 2 {
            std::thread::sleep(Duration::from_millis(10));
        }
        canceller.cancel();
    });
    let options = umcp::RequestOptions::default().with_cancel(cancel);
    let err = client
        .with(&options)
        .call_tool("t", json!({}))
        .expect_err("cancelled while re-listing");
    assert!(matches!(err, Error::Cancelled { .. }), "{err:?}");
    assert!(served.load(Ordering::SeqCst) < 30);
}

#[test]
fn a_re_listing_whose_cursor_repeats_ends() {
    use std::sync::atomic::Ordering;
    let (server, served) = refusing_server(Duration::ZERO, 1000, true);
    let client = Client::connect(HttpConfig::new(server.url("/mcp"))).expect("connect");
    let err = client
        .call_tool("t", json!({}))
        .expect_err("the listing repeats itself");
    assert!(
        matches!(&err, Error::Protocol(m) if m.contains("repeated the cursor")),
        "{err:?}"
    );
    assert_eq!(served.load(Ordering::SeqCst), 2);
}
