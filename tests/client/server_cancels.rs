//! Server requests the server withdraws with `notifications/cancelled`: before their handler
//! ran, while it runs, or never sent at all.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use umcp::jsonrpc::{Message, Request, RequestId};
use umcp::types::{ElicitRequestParams, ElicitResult, Root};
use umcp::{Client, Options};

use crate::memory::FakeServer;

#[test]
fn a_request_withdrawn_while_it_waited_for_a_thread_never_reaches_its_handler() {
    let server = FakeServer::new();
    let (release, held) = crossbeam_channel::bounded::<()>(1);
    server.on("tools/call", move |peer, _| {
        let ask = |id: &str, message: &str| {
            let params = json!({"mode": "form", "message": message,
                "requestedSchema": {"type": "object", "properties": {}}});
            let request = Request::new(RequestId::from(id), "elicitation/create", Some(params));
            peer.send(Message::Request(request));
        };
        // The first takes the only handler thread; the second waits for it, and is withdrawn.
        ask("srv-a", "first");
        // Taken off the queue by then, so the second waits in it rather than being refused.
        std::thread::sleep(Duration::from_millis(200));
        ask("srv-b", "second");
        peer.notify("notifications/cancelled", json!({"requestId": "srv-b"}));
        std::thread::sleep(Duration::from_millis(200));
        let _ = release.send(());
        std::thread::sleep(Duration::from_millis(500));
        Some(json!({"content": []}))
    });
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = asked.clone();
    let options = Options::default()
        .with_handler_threads(1)
        .with_elicitation_handler(move |params: ElicitRequestParams| {
            seen.lock().unwrap().push(params.message().to_owned());
            let _ = held.recv_timeout(Duration::from_secs(10));
            Ok(ElicitResult::decline())
        });
    let client = Client::connect_with_options(server.clone(), options).unwrap();
    client.call_tool("x", Value::Null).unwrap();
    assert_eq!(*asked.lock().unwrap(), ["first"]);
    let replied: Vec<RequestId> = server
        .received
        .lock()
        .unwrap()
        .iter()
        .filter_map(|m| match m {
            Message::Response(r) => r.id.clone(),
            _ => None,
        })
        .collect();
    assert_eq!(replied, [RequestId::from("srv-a")]);
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
    let client = Client::connect_with_options(server.clone(), options).unwrap();
    let result = client.call_tool("x", Value::Null).unwrap();
    assert_eq!(result.structured_content.unwrap()["ok"], true);
}
