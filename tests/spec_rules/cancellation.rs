//! Progress resets of the timeout, and which requests are cancelled or answered after a
//! cancellation.

use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::{json, Value};
use umcp::jsonrpc::{Message, Request, RequestId};
use umcp::types::{ElicitResult, Root};
use umcp::{Client, Error, Options, RequestOptions, TimeoutKind};

use crate::memory::FakeServer;
use crate::{legacy, requests, SOON};

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
    let client = Client::connect_with_options(server.clone(), legacy(Options::default())).unwrap();
    let timeout = RequestOptions::default().with_timeout(Duration::from_millis(300));
    match client.with(&timeout).call_tool("slow", Value::Null) {
        Err(Error::Timeout { kind, .. }) => assert_eq!(kind, TimeoutKind::Request),
        other => panic!("expected a timeout, got {other:?}"),
    }
    let reset = timeout.with_reset_timeout_on_progress(true);
    client.with(&reset).call_tool("slow", Value::Null).unwrap();
}

#[test]
fn initialize_is_never_cancelled() {
    let server = FakeServer::new();
    server.on("initialize", |_, _| None);
    // Like stdio: a cancellation would be sent at once, on the caller's thread.
    server.queued_sends.store(true, Ordering::SeqCst);
    let options = legacy(Options::default()).with_startup_timeout(Duration::from_millis(200));
    match Client::connect_with_options(server.clone(), options) {
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
    let client = Client::connect_with_options(server.clone(), legacy(options)).unwrap();
    let result = client.call_tool("x", Value::Null).unwrap();
    assert_eq!(result.structured_content.unwrap()["roots"], true);
    let received = server.received.lock().unwrap();
    let replied = received
        .iter()
        .any(|m| matches!(m, Message::Response(r) if r.id.as_ref() == Some(&elicit_id)));
    assert!(!replied, "the cancelled request was answered");
}
