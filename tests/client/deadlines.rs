//! Timeouts, cancel handles and progress: how a call's deadline is set, extended, bounded and
//! cancelled.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use umcp::jsonrpc::Message;
use umcp::{CancelHandle, Client, Error, Options, RequestOptions, TimeoutKind};

use crate::connect;
use crate::memory::FakeServer;

#[test]
fn timeout_removes_the_request_and_sends_cancelled() {
    let server = FakeServer::new();
    server.on("tools/call", |_, _| None);
    let client = connect(&server);
    let started = Instant::now();
    let options = RequestOptions::default().with_timeout(Duration::from_millis(200));
    match client.with(&options).call_tool("slow", Value::Null) {
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
    let result = client.with(&options).call_tool("slow", Value::Null);
    assert!(matches!(result, Err(Error::Cancelled { .. })), "{result:?}");
    assert!(server
        .wait_notification("notifications/cancelled", Duration::from_secs(5))
        .is_some());
    // A handle cancelled before the call stops it from being sent at all.
    let before = server.received.lock().unwrap().len();
    let again = client.with(&options).call_tool("slow", Value::Null);
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
        .with(&options)
        .call_tool("slow", Value::Null)
        .unwrap();
    assert_eq!(*seen.lock().unwrap(), vec![1.0, 2.0, 3.0, 4.0, 5.0]);

    let capped = options
        .clone()
        .with_max_total_time(Duration::from_millis(200));
    match client.with(&capped).call_tool("slow", Value::Null) {
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
    match client.with(&options).call_tool("chatty", Value::Null) {
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
    client.with(&options).call_tool("x", Value::Null).unwrap();
    let cancellable = options.clone().with_cancel(CancelHandle::new());
    client
        .with(&cancellable)
        .call_tool("x", Value::Null)
        .unwrap();
    // The maximum total time still counts from the start.
    let capped = options.with_max_total_time(Duration::from_millis(500));
    match client.with(&capped).call_tool("x", Value::Null) {
        Err(Error::Timeout { kind, .. }) => assert_eq!(kind, TimeoutKind::Total),
        other => panic!("{other:?}"),
    }
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
                client.with(&options).call_tool("slow", Value::Null)
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
fn duration_max_means_no_limit() {
    let server = FakeServer::new();
    server.on("tools/call", |_, _| Some(json!({"content": []})));
    let options = Options::default()
        .with_request_timeout(Duration::MAX)
        .with_startup_timeout(Duration::MAX);
    let client = Client::connect_with_options(server.clone(), options).unwrap();
    client.call_tool("x", Value::Null).unwrap();
    let unbounded = RequestOptions::default()
        .with_timeout(Duration::MAX)
        .with_max_total_time(Duration::MAX)
        .with_progress(|_| {})
        .with_cancel(CancelHandle::new());
    client.with(&unbounded).call_tool("x", Value::Null).unwrap();
    client.notify_roots_list_changed().unwrap();
}
