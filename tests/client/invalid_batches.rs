//! Requests JSON-RPC rejects inside a batch (protocol 2025-03-26): each gets its own
//! `-32600 Invalid Request`, sent alone like the replies to the batch's other requests, by the
//! same bounded road as one that came alone; a batch at a version without batches is
//! dropped whole.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use umcp::jsonrpc::{Message, RequestId};
use umcp::Client;

use super::invalid_ids::{counting, elicitation, replies, survives_flood, FORBIDDEN, SOON};
use crate::memory::FakeServer;

/// A fake server negotiating `version`.
fn server_at(version: &str) -> FakeServer {
    let server = FakeServer::new();
    server.init_result.lock().unwrap()["protocolVersion"] = json!(version);
    server
}

/// A batch of `elements`, JSON texts.
fn batch(elements: &[String]) -> String {
    format!("[{}]", elements.join(","))
}

/// The replies, encoded, in the order they were sent.
fn encoded(server: &FakeServer, count: usize) -> Vec<String> {
    replies(server, count)
        .into_iter()
        .map(|reply| Message::Response(reply).encode())
        .collect()
}

#[test]
fn each_invalid_request_in_a_batch_gets_its_own_invalid_request_reply() {
    // Over a transport whose sends wait for the server (HTTP) and one that queues them (stdio).
    for queued in [false, true] {
        let server = server_at("2025-03-26");
        server.queued_sends.store(queued, Ordering::SeqCst);
        server.on("tools/call", |peer, _| {
            let elements = [
                elicitation("\"fine\""),
                elicitation("1.5"),
                elicitation("null"),
                r#"{"jsonrpc":"2.0","id":7,"method":42}"#.to_owned(),
                elicitation("18446744073709551616"),
                r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}"#.to_owned(),
                "42".to_owned(),
            ];
            assert!(peer.send_text(&batch(&elements)), "the batch was refused");
            Some(json!({"content": []}))
        });
        let asked = Arc::new(AtomicUsize::new(0));
        let client = Client::connect_with_options(server.clone(), counting(&asked)).unwrap();
        assert_eq!(client.protocol_version(), "2025-03-26");
        client.call_tool("x", Value::Null).unwrap();
        let mut wire = encoded(&server, 5);
        assert_eq!(wire.len(), 5, "queued sends: {queued}: {wire:?}");
        wire.sort();
        let prefix = |id: &str| format!(r#"{{"jsonrpc":"2.0","id":{id},"#);
        let invalid = r#""error":{"code":-32600,"message":"Invalid Request""#;
        assert!(wire[0].starts_with(&prefix("\"fine\"")), "{}", wire[0]);
        assert!(
            wire[0].contains(r#""result":{"action":"decline"}"#),
            "{}",
            wire[0]
        );
        for (reply, id) in wire[1..]
            .iter()
            .zip(["18446744073709551616", "7", "null", "null"])
        {
            assert!(reply.starts_with(&prefix(id)), "{reply}");
            assert!(reply.contains(invalid), "{reply}");
        }
        assert_eq!(asked.load(Ordering::SeqCst), 1, "the handler ran but once");
        client.call_tool("x", Value::Null).unwrap();
    }
}

#[test]
fn a_batch_of_invalid_requests_costs_a_bounded_amount_and_leaves_calls_working() {
    const FLOOD: usize = 5_000;
    for queued in [false, true] {
        let server = server_at("2025-03-26");
        server.queued_sends.store(queued, Ordering::SeqCst);
        server.on("tools/call", |peer, request| {
            let params = request.params.clone().unwrap_or_default();
            if params["name"] == "flood" {
                let elements: Vec<String> = (0..FLOOD)
                    .map(|k| elicitation(FORBIDDEN[k % FORBIDDEN.len()]))
                    .collect();
                peer.send_text(&batch(&elements));
            }
            Some(json!({"content": [{"type": "text", "text": params["name"]}]}))
        });
        survives_flood(&server, FLOOD);
    }
}

#[test]
fn a_batch_at_a_version_without_batches_is_dropped_invalid_requests_and_all() {
    let server = server_at("2025-11-25");
    server.queued_sends.store(true, Ordering::SeqCst);
    server.on("tools/call", |peer, _| {
        peer.send_text(&batch(&[elicitation("1.5"), elicitation("\"dropped\"")]));
        // Answered alone: the router takes its work in order and sends its replies itself
        // (the transport queues them), so once this reply is sent, a reply to the batch would
        // have been too.
        peer.send_text(r#"{"jsonrpc":"2.0","id":99,"method":42}"#);
        Some(json!({"content": []}))
    });
    let asked = Arc::new(AtomicUsize::new(0));
    let client = Client::connect_with_options(server.clone(), counting(&asked)).unwrap();
    assert_eq!(client.protocol_version(), "2025-11-25");
    client.call_tool("x", Value::Null).unwrap();
    let until = Instant::now() + SOON;
    let last = Some(RequestId::from(99));
    let replies = loop {
        let replies = replies(&server, 1);
        if replies.iter().any(|r| r.id == last) || Instant::now() >= until {
            break replies;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    assert_eq!(replies.len(), 1, "{replies:?}");
    assert_eq!(replies[0].id, last);
    assert_eq!(asked.load(Ordering::SeqCst), 0, "a handler ran");
}
