//! What the server sends unasked: notifications, server requests and their handlers, panics in
//! them, and server cancels.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use umcp::jsonrpc::ErrorCode;
use umcp::types::{
    ContentBlock, CreateMessageResult, ElicitAction, ElicitRequestParams, ElicitResult, Root,
    ServerNotification,
};
use umcp::{CancelHandle, Client, Error, Options, RequestOptions};

use crate::connect;
use crate::memory::FakeServer;

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
    let client = Client::connect_with_options(server.clone(), options).unwrap();
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
    let client = Client::connect_with_options(server.clone(), options).unwrap();
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
    let client = Client::connect_with_options(server.clone(), options).unwrap();
    client.call_tool("x", Value::Null).unwrap();
    let reply = answer.lock().unwrap().take().unwrap();
    assert_eq!(reply.result.unwrap_err().code, ErrorCode::INTERNAL_ERROR);
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
    let client = Client::connect_with_options(server.clone(), options).unwrap();
    let quick = RequestOptions::default().with_timeout(Duration::from_millis(50));
    for text in ["panic", "done late"] {
        let err = client
            .with(&quick)
            .call_tool("x", json!({"text": text}))
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
        .with(&cancelled)
        .call_tool("x", json!({"text": "fail"}))
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
    let client = Client::connect_with_options(server.clone(), options).unwrap();
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
fn a_blocked_notification_callback_loses_notifications_not_responses() {
    let server = FakeServer::new();
    server.on("tools/call", |peer, _| {
        // More than the router's queue holds, sent before the response.
        for k in 0..100 {
            peer.notify("notifications/message", json!({"level": "info", "data": k}));
        }
        Some(json!({"content": []}))
    });
    let (release, blocked) = crossbeam_channel::bounded::<()>(0);
    let options = Options::default()
        .with_request_timeout(Duration::from_secs(30))
        .with_notification_callback(move |_| {
            // A callback stuck on something else for a long time (until the test ends).
            let _ = blocked.recv_timeout(Duration::from_secs(30));
        });
    let client = Client::connect_with_options(server.clone(), options).unwrap();
    let started = Instant::now();
    client.call_tool("x", Value::Null).unwrap();
    let took = started.elapsed();
    assert!(took < Duration::from_secs(15), "the call took {took:?}");
    assert!(client.notifications_dropped() > 0);
    drop(release);
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
    let client = Arc::new(Client::connect_with_options(server.clone(), options).unwrap());
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
fn the_notification_callback_may_close_the_client() {
    let server = FakeServer::new();
    server.on("tools/call", |peer, _| {
        for n in 0..20 {
            peer.notify("notifications/message", json!({"level": "info", "data": n}));
        }
        Some(json!({"content": []}))
    });
    let cell: Arc<std::sync::OnceLock<std::sync::Weak<Client>>> = Arc::default();
    let calls = Arc::new(AtomicUsize::new(0));
    let closing = Arc::new(Mutex::new(None));
    let (from_callback, counted, took) = (cell.clone(), calls.clone(), closing.clone());
    let options = Options::default()
        .with_request_timeout(Duration::from_secs(5))
        .with_notification_callback(move |_| {
            counted.fetch_add(1, Ordering::SeqCst);
            if let Some(client) = from_callback.get().and_then(std::sync::Weak::upgrade) {
                let started = Instant::now();
                client.close();
                *took.lock().unwrap() = Some(started.elapsed());
            }
        });
    let client = Arc::new(Client::connect_with_options(server.clone(), options).unwrap());
    cell.set(Arc::downgrade(&client)).unwrap();
    let _ = client.call_tool("x", Value::Null); // Closed from the callback meanwhile.
    let deadline = Instant::now() + Duration::from_secs(10);
    while closing.lock().unwrap().is_none() {
        assert!(
            Instant::now() < deadline,
            "the callback's close never returned"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    // The router cannot end while it runs the callback: a close from there must not wait for
    // it (that was the whole join timeout, 2 s, for every notification still queued).
    let took = closing.lock().unwrap().unwrap();
    assert!(
        took < Duration::from_secs(1),
        "close from the callback took {took:?}"
    );
    let started = Instant::now();
    client.close();
    assert!(started.elapsed() < Duration::from_secs(1));
    assert!(client.closed().is_some());
    assert_eq!(calls.load(Ordering::SeqCst), 1, "no callback after close");
}

/// Large notifications nobody reads are bounded by their bytes, not only by their count.
#[test]
fn unread_notifications_hold_a_bounded_number_of_bytes() {
    let server = FakeServer::new();
    let big = "x".repeat(1 << 20);
    server.on("tools/call", move |peer, _| {
        for _ in 0..40 {
            peer.notify(
                "notifications/message",
                json!({"level": "info", "data": big}),
            );
        }
        Some(json!({"content": []}))
    });
    let client = connect(&server);
    let notes = client.notifications();
    client.call_tool("x", Value::Null).unwrap();
    client.ping().unwrap(); // By now every notification was queued.
    let kept = std::iter::from_fn(|| notes.try_recv()).count();
    let budget = umcp::NOTIFICATION_BYTES / (1 << 20);
    assert!(kept <= budget, "{kept} notifications of 1 MiB kept");
    assert!(kept >= budget / 2, "only {kept} kept");
    assert_eq!(client.notifications_dropped(), 40 - kept as u64);
}
