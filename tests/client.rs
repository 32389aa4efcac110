//! Tests for the client layer over an in-memory transport: handshake, pipelining, deadlines,
//! cancellation, progress, notifications and server requests.

#[path = "common/memory.rs"]
mod memory;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use memory::FakeServer;
use serde_json::{json, Value};
use umcp::jsonrpc::{ErrorCode, Message};
use umcp::types::{
    ContentBlock, CreateMessageResult, ElicitAction, ElicitRequestParams, ElicitResult,
    LoggingLevel, Root, ServerNotification,
};
use umcp::{CancelHandle, Client, Error, Options, RequestOptions, TimeoutKind, Unsupported};

fn connect(server: &FakeServer) -> Client {
    Client::connect(server.clone()).expect("connect")
}

#[test]
fn smoke() {
    let server = FakeServer::new();
    server.on("tools/list", |_, _| {
        Some(json!({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}))
    });
    let client = connect(&server);
    assert_eq!(client.server_info().name, "fake");
    assert_eq!(client.protocol_version(), "2025-11-25");
    assert_eq!(client.instructions().as_deref(), Some("be nice"));
    assert_eq!(client.transport_kind(), "memory");
    let tools = client.list_all_tools().unwrap();
    assert_eq!(tools[0].name, "echo");
    // The handshake is initialize, then the initialized notification.
    server
        .wait_notification("notifications/initialized", Duration::from_secs(5))
        .unwrap();
    let received = server.received.lock().unwrap().clone();
    assert!(matches!(&received[0], Message::Request(r) if r.method == "initialize"));
    assert!(
        matches!(&received[1], Message::Notification(n) if n.method == "notifications/initialized")
    );
}

#[test]
fn initialize_offers_latest_version_and_declares_handler_capabilities() {
    let server = FakeServer::new();
    let options = Options::default()
        .with_roots(vec![Root::new("file:///tmp")])
        .with_sampling_handler(|_| Err(umcp::jsonrpc::ErrorObject::new(ErrorCode(-1), "no")))
        .with_elicitation_handler(|_| Ok(ElicitResult::new(ElicitAction::Decline)));
    let _client = Client::connect_with(server.clone(), options).unwrap();
    let received = server.received.lock().unwrap().clone();
    let Message::Request(init) = &received[0] else {
        panic!()
    };
    let params = init.params.clone().unwrap();
    assert_eq!(params["protocolVersion"], "2025-11-25");
    assert_eq!(params["clientInfo"]["name"], "umcp");
    assert_eq!(params["capabilities"]["roots"]["listChanged"], true);
    assert!(params["capabilities"]["sampling"].is_object());
    assert!(params["capabilities"]["elicitation"]["form"].is_object());
}

#[test]
fn an_initialize_refused_with_the_supported_versions_is_offered_one_of_them() {
    // Each its own name, so that no era verdict is remembered from another connection.
    let refusing = |name: &str, supported: Value| {
        let server = FakeServer::named(name);
        let init = server.init_result.clone();
        server.on("initialize", move |peer, req| {
            let offered = &req.params.as_ref().unwrap()["protocolVersion"];
            if offered == "2024-11-05" {
                let mut result = init.lock().unwrap().clone();
                result["protocolVersion"] = json!("2024-11-05");
                return Some(result);
            }
            let error = umcp::jsonrpc::ErrorObject::new(
                ErrorCode::INVALID_PARAMS,
                "Unsupported protocol version",
            )
            .with_data(json!({"supported": supported, "requested": offered}));
            peer.send(umcp::jsonrpc::Response::err(req.id.clone(), error).into());
            None
        });
        server
    };
    let offered = |server: &FakeServer| -> Vec<Value> {
        let received = server.received.lock().unwrap();
        received
            .iter()
            .filter_map(|m| match m {
                Message::Request(r) if r.method == "initialize" => {
                    Some(r.params.as_ref().unwrap()["protocolVersion"].clone())
                }
                _ => None,
            })
            .collect()
    };
    let server = refusing("refuses-newer", json!(["2024-11-05", "1.0.0"]));
    let client = connect(&server);
    assert_eq!(client.protocol_version(), "2024-11-05");
    assert_eq!(offered(&server), [json!("2025-11-25"), json!("2024-11-05")]);
    client.ping().unwrap();

    // Nothing in common: the refusal itself, after one attempt.
    let server = refusing("refuses-all", json!(["1.0.0"]));
    let err = Client::connect(server.clone()).unwrap_err();
    assert_eq!(
        err.rpc_error().map(|e| e.code),
        Some(ErrorCode::INVALID_PARAMS),
        "{err:?}"
    );
    assert_eq!(offered(&server), [json!("2025-11-25")]);
}

#[test]
fn accepts_older_versions_and_rejects_unknown_ones() {
    let server = FakeServer::new();
    server.init_result.lock().unwrap()["protocolVersion"] = json!("2024-11-05");
    assert_eq!(connect(&server).protocol_version(), "2024-11-05");

    let server = FakeServer::new();
    server.init_result.lock().unwrap()["protocolVersion"] = json!("1999-01-01");
    match Client::connect(server.clone()) {
        Err(Error::Unsupported(Unsupported::Version { offered, received })) => {
            assert_eq!(offered, "2025-11-25");
            assert_eq!(received, "1999-01-01");
        }
        other => panic!("{other:?}"),
    }
    // No initialized notification after a failed negotiation.
    assert!(server.notifications("notifications/initialized").is_empty());
}

#[test]
fn answers_ping_during_the_handshake() {
    let server = FakeServer::new();
    let init = server.init_result.clone();
    server.on("initialize", move |peer, _| {
        let pong = peer.request("ping", json!({}));
        assert_eq!(pong.result, Ok(json!({})));
        Some(init.lock().unwrap().clone())
    });
    connect(&server);
}

#[test]
fn rpc_errors_are_typed_and_the_connection_survives() {
    let server = FakeServer::new();
    let client = connect(&server);
    match client.request_raw("nope/nope", None, &RequestOptions::default()) {
        Err(Error::Rpc(e)) => assert_eq!(e.code, ErrorCode::METHOD_NOT_FOUND),
        other => panic!("{other:?}"),
    }
    client.ping().unwrap();
}

#[test]
fn missing_capability_fails_without_sending() {
    let server = FakeServer::new();
    server.init_result.lock().unwrap()["capabilities"] = json!({"tools": {}});
    let client = connect(&server);
    // The fake server logs what it receives on its own thread: let the handshake land first.
    server
        .wait_notification("notifications/initialized", Duration::from_secs(5))
        .unwrap();
    let before = server.received.lock().unwrap().len();
    for result in [
        client.list_resources(None).map(drop),
        client.subscribe_resource("x://y"),
        client.list_prompts(None).map(drop),
        client.set_logging_level(LoggingLevel::Debug),
    ] {
        assert!(
            matches!(
                result,
                Err(Error::Unsupported(Unsupported::Capability { .. }))
            ),
            "{result:?}"
        );
    }
    assert_eq!(server.received.lock().unwrap().len(), before);
}

#[test]
fn concurrent_callers_get_their_own_responses() {
    let server = FakeServer::new();
    server.on("tools/call", |_, req| {
        let n = req.params.as_ref().unwrap()["arguments"]["n"].clone();
        std::thread::sleep(Duration::from_millis(n.as_u64().unwrap() % 7));
        Some(json!({"content": [{"type": "text", "text": n.to_string()}]}))
    });
    let client = Arc::new(connect(&server));
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let client = client.clone();
            std::thread::spawn(move || {
                for i in 0..50 {
                    let n = t * 1000 + i;
                    let result = client.call_tool("echo", json!({"n": n})).unwrap();
                    assert_eq!(result.text(), n.to_string());
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

#[test]
fn timeout_removes_the_request_and_sends_cancelled() {
    let server = FakeServer::new();
    server.on("tools/call", |_, _| None);
    let client = connect(&server);
    let started = Instant::now();
    let options = RequestOptions::default().with_timeout(Duration::from_millis(200));
    match client.call_tool_with("slow", Value::Null, &options) {
        Err(Error::Timeout { method, kind, .. }) => {
            assert_eq!(method, "tools/call");
            assert_eq!(kind, TimeoutKind::Request);
        }
        other => panic!("{other:?}"),
    }
    assert!(started.elapsed() < Duration::from_secs(5));
    let cancelled = server
        .wait_notification("notifications/cancelled", Duration::from_secs(5))
        .expect("cancelled sent");
    assert!(cancelled["requestId"].is_i64());
    assert!(cancelled["reason"].is_string());
    client.ping().unwrap();
}

#[test]
fn cancel_handle_from_another_thread() {
    let server = FakeServer::new();
    server.on("tools/call", |_, _| None);
    let client = connect(&server);
    let cancel = CancelHandle::new();
    let trigger = cancel.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        trigger.cancel();
    });
    let options = RequestOptions::default().with_cancel(cancel);
    let result = client.call_tool_with("slow", Value::Null, &options);
    assert!(matches!(result, Err(Error::Cancelled { .. })), "{result:?}");
    assert!(server
        .wait_notification("notifications/cancelled", Duration::from_secs(5))
        .is_some());
    // A handle cancelled before the call stops it from being sent at all.
    let before = server.received.lock().unwrap().len();
    let again = client.call_tool_with("slow", Value::Null, &options);
    assert!(matches!(again, Err(Error::Cancelled { .. })));
    assert_eq!(server.received.lock().unwrap().len(), before);
}

#[test]
fn progress_reaches_the_caller_and_can_extend_the_deadline() {
    let server = FakeServer::new();
    server.on("tools/call", |peer, req| {
        let token = req.params.as_ref().unwrap()["_meta"]["progressToken"].clone();
        for step in 1..=5 {
            std::thread::sleep(Duration::from_millis(80));
            peer.notify(
                "notifications/progress",
                json!({"progressToken": token, "progress": step, "total": 5}),
            );
        }
        Some(json!({"content": []}))
    });
    let client = connect(&server);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    // 400 ms of work under a 150 ms timeout: only progress resets keep it alive.
    let options = RequestOptions::default()
        .with_timeout(Duration::from_millis(150))
        .with_reset_timeout_on_progress(true)
        .with_progress(move |p| sink.lock().unwrap().push(p.progress));
    client
        .call_tool_with("slow", Value::Null, &options)
        .unwrap();
    assert_eq!(*seen.lock().unwrap(), vec![1.0, 2.0, 3.0, 4.0, 5.0]);

    let capped = options
        .clone()
        .with_max_total_time(Duration::from_millis(200));
    match client.call_tool_with("slow", Value::Null, &capped) {
        Err(Error::Timeout { kind, .. }) => assert_eq!(kind, TimeoutKind::Total),
        other => panic!("{other:?}"),
    }
}

#[test]
fn progress_forever_cannot_hold_a_call_forever() {
    let server = FakeServer::new();
    server.on("tools/call", |peer, req| {
        let token = req.params.as_ref().unwrap()["_meta"]["progressToken"].clone();
        // Progress every 20 ms for far longer than the test waits.
        for step in 1..=500 {
            std::thread::sleep(Duration::from_millis(20));
            peer.notify(
                "notifications/progress",
                json!({"progressToken": token, "progress": step}),
            );
        }
        Some(json!({"content": []}))
    });
    let client = connect(&server);
    // Reset on progress and no maximum given: ten timeouts at most.
    let options = RequestOptions::default()
        .with_timeout(Duration::from_millis(100))
        .with_reset_timeout_on_progress(true);
    let started = Instant::now();
    match client.call_tool_with("chatty", Value::Null, &options) {
        Err(Error::Timeout { kind, elapsed, .. }) => {
            assert_eq!(kind, TimeoutKind::Total);
            assert!(elapsed >= Duration::from_millis(1000), "{elapsed:?}");
        }
        other => panic!("{other:?}"),
    }
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn notifications_reach_the_handle_and_callback() {
    let server = FakeServer::new();
    server.on("tools/call", |peer, _| {
        peer.notify(
            "notifications/message",
            json!({"level": "info", "data": "hello"}),
        );
        peer.notify("notifications/tools/list_changed", json!({}));
        peer.notify("vendor/custom", json!({"x": 1}));
        Some(json!({"content": []}))
    });
    let counted = Arc::new(AtomicUsize::new(0));
    let counter = counted.clone();
    let options = Options::default().with_notification_callback(move |_| {
        counter.fetch_add(1, Ordering::SeqCst);
    });
    let client = Client::connect_with(server.clone(), options).unwrap();
    let notes = client.notifications();
    client.call_tool("x", Value::Null).unwrap();
    let mut got = Vec::new();
    while let Some(n) = notes.recv_timeout(Duration::from_secs(2)) {
        got.push(n);
        if got.len() == 3 {
            break;
        }
    }
    assert!(matches!(got[0], ServerNotification::LoggingMessage(_)));
    assert!(matches!(got[1], ServerNotification::ToolListChanged));
    assert!(
        matches!(&got[2], ServerNotification::Other { method, .. } if method == "vendor/custom")
    );
    assert_eq!(counted.load(Ordering::SeqCst), 3);
    assert!(notes.try_recv().is_none());
}

#[test]
fn server_requests_are_answered_by_handlers_or_method_not_found() {
    let server = FakeServer::new();
    let answers = Arc::new(Mutex::new(Vec::new()));
    let sink = answers.clone();
    server.on("tools/call", move |peer, _| {
        for method in ["roots/list", "sampling/createMessage", "elicitation/create", "bogus/x"] {
            let params = match method {
                "sampling/createMessage" => json!({"messages": [], "maxTokens": 5}),
                "elicitation/create" => json!({"message": "name?", "requestedSchema": {
                    "type": "object", "properties": {"name": {"type": "string", "default": "Ann"}}}}),
                _ => json!({}),
            };
            sink.lock().unwrap().push(peer.request(method, params));
        }
        Some(json!({"content": []}))
    });
    let options = Options::default()
        .with_roots(vec![Root::new("file:///work")])
        .with_sampling_handler(|_| Ok(CreateMessageResult::new("m", ContentBlock::text("hi"))))
        .with_elicitation_handler(|params| match params {
            ElicitRequestParams::Form(form) => Ok(ElicitResult::accept_defaults(&form)),
            _ => Ok(ElicitResult::new(ElicitAction::Decline)),
        });
    let client = Client::connect_with(server.clone(), options).unwrap();
    client.call_tool("x", Value::Null).unwrap();
    let answers = answers.lock().unwrap();
    assert_eq!(
        answers[0].result.as_ref().unwrap()["roots"][0]["uri"],
        "file:///work"
    );
    assert_eq!(answers[1].result.as_ref().unwrap()["content"]["text"], "hi");
    assert_eq!(answers[2].result.as_ref().unwrap()["action"], "accept");
    assert_eq!(
        answers[2].result.as_ref().unwrap()["content"]["name"],
        "Ann"
    );
    assert_eq!(
        answers[3].result.as_ref().unwrap_err().code,
        ErrorCode::METHOD_NOT_FOUND
    );
}

#[test]
fn a_panicking_handler_still_gets_an_error_reply() {
    let server = FakeServer::new();
    let answer = Arc::new(Mutex::new(None));
    let sink = answer.clone();
    server.on("tools/call", move |peer, _| {
        *sink.lock().unwrap() = Some(peer.request("roots/list", json!({})));
        Some(json!({"content": []}))
    });
    let options = Options::default().with_roots_handler(|| panic!("handler bug"));
    let client = Client::connect_with(server.clone(), options).unwrap();
    client.call_tool("x", Value::Null).unwrap();
    let reply = answer.lock().unwrap().take().unwrap();
    assert_eq!(reply.result.unwrap_err().code, ErrorCode::INTERNAL_ERROR);
}

#[test]
fn close_fails_pending_requests_and_later_calls_at_once() {
    let server = FakeServer::new();
    server.on("tools/call", |peer, _| {
        std::thread::sleep(Duration::from_millis(100));
        peer.close("server exited");
        None
    });
    let client = connect(&server);
    let started = Instant::now();
    let result = client.call_tool("x", Value::Null);
    match result {
        Err(Error::Closed(info)) => assert_eq!(info.reason, "server exited"),
        other => panic!("{other:?}"),
    }
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(matches!(client.ping(), Err(Error::Closed(_))));
    assert!(client.closed().is_some());
}

#[test]
fn list_all_follows_cursors_and_stops_on_a_repeated_one() {
    let server = FakeServer::new();
    server.on("tools/list", |_, req| {
        let cursor = req
            .params
            .as_ref()
            .and_then(|p| p["cursor"].as_str().map(String::from));
        let tool = |n: &str| json!({"name": n, "inputSchema": {"type": "object"}});
        Some(match cursor.as_deref() {
            None => json!({"tools": [tool("a")], "nextCursor": "p2"}),
            Some("p2") => json!({"tools": [tool("b")], "nextCursor": "p3"}),
            _ => json!({"tools": [tool("c")]}),
        })
    });
    server.on("prompts/list", |_, _| {
        Some(json!({"prompts": [], "nextCursor": "same"}))
    });
    let client = connect(&server);
    let names: Vec<_> = client
        .list_all_tools()
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, ["a", "b", "c"]);
    assert!(matches!(client.list_all_prompts(), Err(Error::Protocol(_))));
}

#[test]
fn late_responses_are_dropped_and_the_connection_survives() {
    let server = FakeServer::new();
    server.on("tools/call", |_, _| {
        std::thread::sleep(Duration::from_millis(300));
        Some(json!({"content": []}))
    });
    let client = connect(&server);
    let options = RequestOptions::default().with_timeout(Duration::from_millis(50));
    assert!(client
        .call_tool_with("x", Value::Null, &options)
        .unwrap_err()
        .is_timeout());
    std::thread::sleep(Duration::from_millis(400));
    client.ping().unwrap();
}

#[test]
fn late_responses_reach_the_handler_and_a_panicking_one_harms_nothing() {
    let server = FakeServer::new();
    server.on("tools/call", |peer, request| {
        std::thread::sleep(Duration::from_millis(300));
        let text = request.params.as_ref().unwrap()["arguments"]["text"].clone();
        if text == "fail" {
            let error = umcp::jsonrpc::ErrorObject::new(ErrorCode(-32000), "it failed late");
            peer.send(umcp::jsonrpc::Response::err(request.id.clone(), error).into());
            return None;
        }
        Some(json!({"content": [{"type": "text", "text": text}]}))
    });
    let (tx, late) = crossbeam_channel::unbounded();
    let options = Options::default().with_late_response_handler(move |response| {
        let panics = response
            .result
            .as_ref()
            .is_ok_and(|r| r["content"][0]["text"] == "panic");
        let _ = tx.send(response);
        if panics {
            panic!("a handler may panic");
        }
    });
    let client = Client::connect_with(server.clone(), options).unwrap();
    let quick = RequestOptions::default().with_timeout(Duration::from_millis(50));
    for text in ["panic", "done late"] {
        let err = client
            .call_tool_with("x", json!({"text": text}), &quick)
            .unwrap_err();
        assert!(err.is_timeout(), "{err:?}");
        let response = late.recv_timeout(Duration::from_secs(10)).unwrap();
        assert_eq!(response.method, "tools/call");
        assert_eq!(response.reason, "timed out");
        assert_eq!(response.result.unwrap()["content"][0]["text"], text);
    }
    let cancel = CancelHandle::new();
    let cancelled = quick
        .clone()
        .with_cancel(cancel.clone())
        .with_timeout(Duration::from_secs(5));
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        cancel.cancel();
    });
    let err = client
        .call_tool_with("x", json!({"text": "fail"}), &cancelled)
        .unwrap_err();
    assert!(matches!(err, Error::Cancelled { .. }), "{err:?}");
    canceller.join().unwrap();
    let response = late.recv_timeout(Duration::from_secs(10)).unwrap();
    assert_eq!(response.reason, "cancelled by the client");
    match response.result {
        Err(Error::Rpc(error)) => assert_eq!(error.message, "it failed late"),
        other => panic!("{other:?}"),
    }
    // The panic above harmed nothing.
    client.ping().unwrap();
    assert!(client.closed().is_none());
}

#[test]
fn the_notification_queue_ends_when_the_connection_closes() {
    let server = FakeServer::new();
    server.on("tools/call", |peer, _| {
        peer.notify(
            "notifications/message",
            json!({"level": "info", "data": "last words"}),
        );
        peer.close("server exited");
        None
    });
    let client = connect(&server);
    let notes = client.notifications();
    assert!(client.call_tool("x", Value::Null).is_err());
    // What was queued before the close is still delivered, then the queue ends.
    let queued: Vec<_> = notes.iter().collect();
    assert_eq!(queued.len(), 1);
    assert!(notes.recv().is_none());
}

#[test]
fn the_timeout_counts_from_the_hand_over() {
    let server = FakeServer::new();
    server.on("tools/call", |_, _| {
        std::thread::sleep(Duration::from_millis(100));
        Some(json!({"content": []}))
    });
    let client = connect(&server);
    // Handing the request over takes longer than the whole timeout (think of a token refresh);
    // the server then answers well within it.
    *server.send_delay.lock().unwrap() = Duration::from_millis(600);
    let options = RequestOptions::default().with_timeout(Duration::from_millis(400));
    client.call_tool_with("x", Value::Null, &options).unwrap();
    let cancellable = options.clone().with_cancel(CancelHandle::new());
    client
        .call_tool_with("x", Value::Null, &cancellable)
        .unwrap();
    // The maximum total time still counts from the start.
    let capped = options.with_max_total_time(Duration::from_millis(500));
    match client.call_tool_with("x", Value::Null, &capped) {
        Err(Error::Timeout { kind, .. }) => assert_eq!(kind, TimeoutKind::Total),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_panicking_notification_callback_leaves_the_client_working() {
    let server = FakeServer::new();
    server.on("tools/call", |peer, _| {
        peer.notify(
            "notifications/message",
            json!({"level": "info", "data": "boom"}),
        );
        Some(json!({"content": []}))
    });
    let options = Options::default()
        .with_request_timeout(Duration::from_secs(5))
        .with_notification_callback(|_| panic!("a bug in the callback"));
    let client = Client::connect_with(server.clone(), options).unwrap();
    let notes = client.notifications();
    for _ in 0..3 {
        client.call_tool("x", Value::Null).unwrap();
    }
    // Every notification still passes the callback's panic into the queue.
    for _ in 0..3 {
        assert!(notes.recv_timeout(Duration::from_secs(5)).is_some());
    }
    client.ping().unwrap();
    assert!(client.closed().is_none());
}

#[test]
fn the_notification_callback_may_call_the_client() {
    let server = FakeServer::new();
    server.on("tools/list", |_, _| {
        Some(json!({"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}))
    });
    server.on("tools/call", |peer, _| {
        peer.notify("notifications/tools/list_changed", json!({}));
        Some(json!({"content": []}))
    });
    let cell: Arc<std::sync::OnceLock<std::sync::Weak<Client>>> = Arc::default();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (from_callback, sink) = (cell.clone(), seen.clone());
    let options = Options::default()
        .with_request_timeout(Duration::from_secs(2))
        .with_notification_callback(move |note| {
            if !matches!(note, ServerNotification::ToolListChanged) {
                return;
            }
            if let Some(client) = from_callback.get().and_then(std::sync::Weak::upgrade) {
                let listed = client.list_tools(None).map(|page| page.tools.len());
                sink.lock().unwrap().push(listed.map_err(|e| e.to_string()));
            }
        });
    let client = Arc::new(Client::connect_with(server.clone(), options).unwrap());
    cell.set(Arc::downgrade(&client)).unwrap();
    client.call_tool("x", Value::Null).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while seen.lock().unwrap().is_empty() {
        assert!(Instant::now() < deadline, "the callback never finished");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(*seen.lock().unwrap(), vec![Ok(1)]);
}

#[test]
fn one_cancel_handle_cancels_every_request_it_was_given_to() {
    let server = FakeServer::new();
    server.on("tools/call", |_, _| None);
    let client = Arc::new(connect(&server));
    let cancel = CancelHandle::new();
    let callers: Vec<_> = (0..2)
        .map(|_| {
            let (client, cancel) = (client.clone(), cancel.clone());
            std::thread::spawn(move || {
                let options = RequestOptions::default()
                    .with_cancel(cancel)
                    .with_timeout(Duration::from_secs(10));
                client.call_tool_with("slow", Value::Null, &options)
            })
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let calls = server
            .received
            .lock()
            .unwrap()
            .iter()
            .filter(|m| matches!(m, Message::Request(r) if r.method == "tools/call"))
            .count();
        if calls == 2 {
            break;
        }
        assert!(Instant::now() < deadline, "{calls} calls arrived");
        std::thread::sleep(Duration::from_millis(10));
    }
    cancel.cancel();
    for caller in callers {
        let outcome = caller.join().unwrap();
        assert!(
            matches!(outcome, Err(Error::Cancelled { .. })),
            "{outcome:?}"
        );
    }
}

#[test]
fn a_server_cancel_for_no_request_in_flight_silences_nothing_later() {
    let server = FakeServer::new();
    server.on("tools/call", |peer, _| {
        // The server's next request will be `srv-1`; a cancellation naming it before it exists
        // (or after it was answered, before ids restart) must not silence it.
        peer.notify(
            "notifications/cancelled",
            json!({"requestId": "srv-1", "reason": "stale"}),
        );
        let answer = peer.request("roots/list", json!({}));
        Some(json!({"content": [], "structuredContent": {"ok": answer.result.is_ok()}}))
    });
    let options = Options::default().with_roots(vec![Root::new("file:///tmp")]);
    let client = Client::connect_with(server.clone(), options).unwrap();
    let result = client.call_tool("x", Value::Null).unwrap();
    assert_eq!(result.structured_content.unwrap()["ok"], true);
}

#[test]
fn duration_max_means_no_limit() {
    let server = FakeServer::new();
    server.on("tools/call", |_, _| Some(json!({"content": []})));
    let options = Options::default()
        .with_request_timeout(Duration::MAX)
        .with_init_timeout(Duration::MAX);
    let client = Client::connect_with(server.clone(), options).unwrap();
    client.call_tool("x", Value::Null).unwrap();
    let unbounded = RequestOptions::default()
        .with_timeout(Duration::MAX)
        .with_max_total_time(Duration::MAX)
        .with_progress(|_| {})
        .with_cancel(CancelHandle::new());
    client.call_tool_with("x", Value::Null, &unbounded).unwrap();
    client.notify_roots_list_changed().unwrap();
}
