//! Rules of the stateless protocol (2026-07-28) at its edges: URL-mode input requests without
//! an elicitation id, `resultType` values of extensions the client never advertised, servers
//! writing requests on stdio, subscriptions the server cancels, cancellation over HTTP, and
//! `x-mcp-header` values a header cannot carry.

use umcp_test_support::demo;
#[cfg(feature = "http")]
use umcp_test_support::http_server;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use umcp::types::{
    ElicitAction, ElicitRequestParams, ElicitResult, ListRootsResult, SubscriptionFilter,
};
use umcp::{Client, Era, Error, Options, StdioConfig, SubscriptionEnd};

/// Generous bound for anything that should take milliseconds.
const WAIT: Duration = Duration::from_secs(10);

fn modern_demo() -> StdioConfig {
    StdioConfig::new(demo::demo_binary().to_string_lossy().into_owned()).args([
        "--server",
        "--fixtures",
        "--modern",
    ])
}

fn connect(options: Options) -> Client {
    let client = Client::connect_with_options(modern_demo(), options).expect("connect");
    assert_eq!(client.era(), Era::Modern);
    client
}

fn echo_works(client: &Client) {
    let echo = client
        .call_tool("echo", json!({"message": "still here"}))
        .expect("echo");
    assert_eq!(echo.text(), "still here");
}

#[test]
fn a_url_mode_input_request_without_an_elicitation_id_reaches_the_handler() {
    let asked: Arc<Mutex<Vec<ElicitRequestParams>>> = Arc::default();
    let seen = Arc::clone(&asked);
    let options = Options::default().with_elicitation_handler(move |params| {
        let consent = matches!(params, ElicitRequestParams::Url(_));
        seen.lock().expect("seen").push(params);
        Ok(ElicitResult::new(if consent {
            ElicitAction::Accept
        } else {
            ElicitAction::Decline
        }))
    });
    let client = connect(options);
    let page = "https://example.com/consent";
    let reply = client
        .call_tool(
            "ask_url",
            json!({"url": page, "message": "Link your account."}),
        )
        .expect("ask_url");
    // The retry carried the handler's answer, which the server reports.
    let structured = reply.structured_content.clone().expect("structured");
    assert_eq!(structured["action"], "accept", "{}", reply.text());
    let asked = asked.lock().expect("asked");
    match asked.as_slice() {
        [ElicitRequestParams::Url(url)] => {
            assert_eq!(url.url, page);
            assert_eq!(url.message, "Link your account.");
            assert_eq!(url.elicitation_id, None);
        }
        other => panic!("expected one URL-mode request, got {other:?}"),
    }
}

#[test]
fn a_task_result_is_refused_as_an_extension_the_client_never_advertised() {
    let client = connect(Options::default());
    let failures = [
        client.call_tool("task_result", json!({})).map(|_| ()),
        client
            .request_once(
                "tools/call",
                Some(json!({"name": "task_result", "arguments": {}})),
            )
            .map(|_| ()),
    ];
    for outcome in failures {
        match outcome {
            Err(Error::Protocol(why)) => {
                assert!(why.contains("`tools/call`"), "{why}");
                assert!(why.contains("\"task\""), "{why}");
            }
            other => panic!("expected a protocol error, got {other:?}"),
        }
    }
    echo_works(&client);
}

#[test]
fn a_request_from_a_stateless_stdio_server_gets_no_reply() {
    let handled = Arc::new(Mutex::new(0u32));
    let count = Arc::clone(&handled);
    let options = Options::default().with_roots_handler(move || {
        *count.lock().expect("count") += 1;
        Ok(ListRootsResult::new(Vec::new()))
    });
    let client = connect(options);
    // The demo waits this long for an answer; the handshake era answers within it.
    for method in ["roots/list", "ping", "bogus/method"] {
        let said = client
            .call_tool("request_client", json!({"method": method, "wait_ms": 300}))
            .expect("request_client")
            .text();
        assert_eq!(said, "no answer within 300 ms", "{method}");
    }
    assert_eq!(*handled.lock().expect("count"), 0, "no handler runs");
    echo_works(&client);
}

#[test]
fn a_stdio_server_ends_a_subscription_by_cancelling_its_listen_request() {
    let client = connect(Options::default());
    let sub = client
        .listen(SubscriptionFilter::new().tools())
        .expect("listen");
    let said = client
        .call_tool("cancel_subscriptions", json!({}))
        .expect("cancel_subscriptions")
        .text();
    assert_eq!(said, "cancelled 1 subscriptions");
    assert!(sub.recv_timeout(WAIT).is_none(), "the subscription ended");
    assert_eq!(
        sub.ended(),
        Some(SubscriptionEnd::CancelledByServer {
            reason: Some("server shutting down".into())
        })
    );
    echo_works(&client);
}

/// A stateless HTTP server, faked: `hang` never answers (its event stream carries one progress
/// notification when the request has a progress token, then only keeps alive until the client
/// closes it, which is reported on `closed`), a tool with an integer `x-mcp-header` and one
/// annotated on its schema root are listed, and `echo` echoes.
#[cfg(feature = "http")]
fn fake_http_server(closed: crossbeam_channel::Sender<()>) -> http_server::Server {
    http_server::serve(move |seen, reply| {
        let body = seen.json();
        let answer = |result: serde_json::Value| {
            let mut result = result;
            result["resultType"] = json!("complete");
            json!({"jsonrpc": "2.0", "id": body["id"], "result": result}).to_string()
        };
        match (seen.method.as_str(), seen.rpc_method().as_deref()) {
            ("POST", Some("server/discover")) => {
                let result = json!({"supportedVersions": ["2026-07-28"],
                    "capabilities": {"tools": {}}});
                reply.json(200, &[], &answer(result));
            }
            ("POST", Some("tools/list")) => {
                let integer = json!({"type": "integer", "x-mcp-header": "Count"});
                let tools = json!([
                    {"name": "count", "inputSchema": {"type": "object",
                        "properties": {"count": integer}}},
                    {"name": "rooted", "inputSchema": {"type": "object",
                        "x-mcp-header": "Root", "properties": {}}},
                ]);
                reply.json(200, &[], &answer(json!({ "tools": tools })));
            }
            ("POST", Some("tools/call")) if body["params"]["name"] == "hang" => {
                let mut sse = reply.sse(&[]);
                let token = &body["params"]["_meta"]["progressToken"];
                if !token.is_null() {
                    let params = json!({"progressToken": token, "progress": 1});
                    let note = json!({"jsonrpc": "2.0", "method": "notifications/progress",
                        "params": params});
                    let _ = sse.message(&note.to_string());
                }
                let kept_alive = (0..500).all(|_| {
                    std::thread::sleep(Duration::from_millis(20));
                    sse.send(": keep-alive\n\n").is_ok()
                });
                if !kept_alive {
                    let _ = closed.send(());
                }
            }
            ("POST", Some("tools/call")) => {
                let text = format!("{} {}", body["params"]["name"], body["params"]["arguments"]);
                let result = json!({"content": [{"type": "text", "text": text}]});
                reply.json(200, &[], &answer(result));
            }
            ("POST", _) => reply.status(202, &[]),
            _ => reply.status(405, &[]),
        }
    })
}

#[cfg(feature = "http")]
#[test]
fn a_timed_out_or_cancelled_stateless_http_request_closes_its_stream_and_sends_no_cancel() {
    let (closed_tx, closed) = crossbeam_channel::unbounded();
    let server = fake_http_server(closed_tx);
    let client =
        Client::connect(umcp::HttpConfig::new(server.url("/mcp"))).expect("connect over HTTP");
    assert_eq!(client.era(), Era::Modern);
    let quick = umcp::RequestOptions::default().with_timeout(Duration::from_millis(200));
    match client.with(&quick).call_tool("hang", json!({})) {
        Err(Error::Timeout { .. }) => {}
        other => panic!("expected a timeout, got {other:?}"),
    }
    closed
        .recv_timeout(WAIT)
        .expect("the client closed the timed-out request's stream");
    // Cancelled as soon as the server's first progress shows the request is running.
    let cancel = umcp::CancelHandle::new();
    let trigger = cancel.clone();
    let cancelling = umcp::RequestOptions::default()
        .with_cancel(cancel)
        .with_progress(move |_| trigger.cancel());
    match client.with(&cancelling).call_tool("hang", json!({})) {
        Err(Error::Cancelled { .. }) => {}
        other => panic!("expected a cancellation, got {other:?}"),
    }
    closed
        .recv_timeout(WAIT)
        .expect("the client closed the cancelled request's stream");
    let echo = client
        .call_tool("echo", json!({"message": "after"}))
        .expect("later calls work");
    assert!(echo.text().contains("after"), "{}", echo.text());
    client.close();
    let mut methods = Vec::new();
    while let Some(request) = server.next_within(Duration::from_millis(300)) {
        methods.extend(request.rpc_method());
    }
    assert_eq!(
        methods,
        ["server/discover", "tools/call", "tools/call", "tools/call"],
        "no notifications/cancelled (nor anything else) was POSTed"
    );
}

#[cfg(feature = "http")]
#[test]
fn x_mcp_header_edge_cases_over_http() {
    let (closed_tx, _closed) = crossbeam_channel::unbounded();
    let server = fake_http_server(closed_tx);
    let client =
        Client::connect(umcp::HttpConfig::new(server.url("/mcp"))).expect("connect over HTTP");
    let names: Vec<String> = client
        .list_all_tools()
        .expect("tools/list")
        .into_iter()
        .map(|tool| tool.name)
        .collect();
    assert_eq!(names, ["count"], "a root annotation makes a tool invalid");
    while server.next_within(Duration::from_millis(100)).is_some() {}

    let max = (1i64 << 53) - 1;
    for (count, header) in [(json!(max), max.to_string()), (json!(42.0), "42".into())] {
        client
            .call_tool("count", json!({ "count": count }))
            .expect("count");
        let seen = server.next();
        assert_eq!(seen.header("mcp-param-count"), Some(header.as_str()));
    }
    // Beyond the safe range no header can be sent, so neither is the request.
    match client.call_tool("count", json!({"count": max + 1})) {
        Err(Error::Config(why)) => assert!(why.contains("`count`"), "{why}"),
        other => panic!("expected a refusal before sending, got {other:?}"),
    }
    assert!(
        server.next_within(Duration::from_millis(300)).is_none(),
        "nothing was sent"
    );
}
