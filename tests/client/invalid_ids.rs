//! Messages whose `id` has a type JSON-RPC and MCP forbid (a fraction, an object, an array, a
//! boolean, null): a request gets `-32600 Invalid Request` with a null id and runs nothing; a
//! response matches no request and is dropped. A request whose `method` is not a string gets
//! the same error with its own id, and an integer id beyond `i64` is an id like any other;
//! beyond 64 bits, the error carries its digits.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use umcp::jsonrpc::{ErrorCode, Message, RequestId, Response};
use umcp::types::{ElicitResult, ServerNotification};
use umcp::{Client, Options};

use crate::memory::FakeServer;

/// The ids of a forbidden type, as JSON text.
pub(super) const FORBIDDEN: [&str; 5] = ["1.5", r#"{"n":1}"#, "[1]", "true", "null"];

/// Bound for anything that should happen at once.
pub(super) const SOON: Duration = Duration::from_secs(10);

/// An `elicitation/create` request with `id` (JSON text), which a handler would answer.
pub(super) fn elicitation(id: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"elicitation/create","params":{{"mode":"form","message":"name?","requestedSchema":{{"type":"object","properties":{{}}}}}}}}"#
    )
}

/// The responses the client sent, once there are `count` (or the wait ran out).
pub(super) fn replies(server: &FakeServer, count: usize) -> Vec<Response> {
    let until = Instant::now() + SOON;
    loop {
        let replies: Vec<Response> = server
            .received
            .lock()
            .unwrap()
            .iter()
            .filter_map(|m| match m {
                Message::Response(r) => Some(r.clone()),
                _ => None,
            })
            .collect();
        if replies.len() >= count || Instant::now() >= until {
            return replies;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Options whose elicitation handler counts its calls in `asked`.
pub(super) fn counting(asked: &Arc<AtomicUsize>) -> Options {
    let asked = asked.clone();
    Options::default().with_elicitation_handler(move |_| {
        asked.fetch_add(1, Ordering::SeqCst);
        Ok(ElicitResult::decline())
    })
}

pub(super) fn assert_invalid_request(reply: &Response) {
    assert_eq!(reply.id, None, "{reply:?}");
    let error = reply.result.as_ref().expect_err("an error reply");
    assert_eq!(error.code, ErrorCode::INVALID_REQUEST);
    assert_eq!(error.message, "Invalid Request");
    let wire = Message::Response(reply.clone()).encode();
    let prefix = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request""#;
    assert!(wire.starts_with(prefix), "{wire}");
}

#[test]
fn requests_with_ids_of_forbidden_types_get_invalid_request_and_run_no_handler() {
    // Over a transport whose sends wait for the server (HTTP) and one that queues them (stdio).
    for queued in [false, true] {
        let server = FakeServer::new();
        server.queued_sends.store(queued, Ordering::SeqCst);
        let seen = server.clone();
        server.on("tools/call", move |peer, _| {
            // One at a time: the router drops its own replies past a few waiting to be sent.
            for (k, id) in FORBIDDEN.into_iter().enumerate() {
                peer.send_text(&elicitation(id));
                replies(&seen, k + 1);
            }
            Some(json!({"content": []}))
        });
        let asked = Arc::new(AtomicUsize::new(0));
        let client = Client::connect_with_options(server.clone(), counting(&asked)).unwrap();
        client.call_tool("x", Value::Null).unwrap();
        let replies = replies(&server, FORBIDDEN.len());
        assert_eq!(replies.len(), FORBIDDEN.len(), "queued sends: {queued}");
        replies.iter().for_each(assert_invalid_request);
        assert_eq!(asked.load(Ordering::SeqCst), 0, "a handler ran");
        // The client goes on as before.
        client.call_tool("x", Value::Null).unwrap();
    }
}

#[test]
fn responses_with_such_ids_are_dropped_and_notifications_still_arrive() {
    let server = FakeServer::new();
    let took = Arc::new(AtomicBool::new(true));
    let all_taken = took.clone();
    server.on("tools/call", move |peer, _| {
        // Responses naming no request this client could have sent: dropped, not answered, and
        // the call in flight is not disturbed.
        for text in [
            r#"{"jsonrpc":"2.0","id":1.5,"result":{"content":[]}}"#,
            r#"{"jsonrpc":"2.0","id":{"n":1},"error":{"code":-32000,"message":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":true,"result":{}}"#,
        ] {
            peer.send_text(text);
        }
        let note = r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hi"}}"#;
        if !peer.send_text(note) {
            all_taken.store(false, Ordering::SeqCst);
        }
        // The last: the only message here the client answers, so once its reply is in, any
        // reply to the ones above would be too.
        peer.send_text(&elicitation("2.5"));
        Some(json!({"content": [{"type": "text", "text": "done"}]}))
    });
    let asked = Arc::new(AtomicUsize::new(0));
    let client = Client::connect_with_options(server.clone(), counting(&asked)).unwrap();
    let notes = client.notifications();
    assert_eq!(client.call_tool("x", Value::Null).unwrap().text(), "done");
    assert!(took.load(Ordering::SeqCst), "the notification was refused");
    let replies = replies(&server, 1);
    assert_eq!(replies.len(), 1, "{replies:?}");
    assert_invalid_request(&replies[0]);
    match notes.recv_timeout(SOON) {
        Some(ServerNotification::LoggingMessage(_)) => {}
        other => panic!("expected the log notification, got {other:?}"),
    }
    assert_eq!(asked.load(Ordering::SeqCst), 0);
}

#[test]
fn a_flood_of_invalid_requests_leaves_calls_working() {
    const FLOOD: usize = 5_000;
    for queued in [false, true] {
        let server = FakeServer::new();
        server.queued_sends.store(queued, Ordering::SeqCst);
        server.on("tools/call", |peer, request| {
            let params = request.params.clone().unwrap_or_default();
            if params["name"] == "flood" {
                for k in 0..FLOOD {
                    peer.send_text(&elicitation(FORBIDDEN[k % FORBIDDEN.len()]));
                }
            }
            Some(json!({"content": [{"type": "text", "text": params["name"]}]}))
        });
        survives_flood(&server, FLOOD);
    }
}

#[test]
fn the_stateless_era_answers_no_request_not_even_an_invalid_one() {
    // Its stdio transport forbids the client to write responses, as for any server request.
    let server = FakeServer::named("invalid-ids-stateless");
    server.queued_sends.store(true, Ordering::SeqCst);
    server.on("server/discover", |_, _| {
        Some(json!({
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}},
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "modern", "version": "1"}},
        }))
    });
    server.on("tools/list", |peer, _| {
        peer.send_text(&elicitation("1.5"));
        peer.send_text(r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"after"}}"#);
        Some(json!({"tools": []}))
    });
    // The router takes its work in order and sends its replies itself (the transport queues
    // them), so once the callback saw the notification, a reply would have been sent.
    let (noted, note) = crossbeam_channel::bounded(1);
    let options = counting(&Arc::new(AtomicUsize::new(0)))
        .with_protocol_mode(umcp::ProtocolMode::modern())
        .with_notification_callback(move |_| {
            let _ = noted.try_send(());
        });
    let client = Client::connect_with_options(server.clone(), options).unwrap();
    client.list_tools(None).unwrap();
    note.recv_timeout(SOON).expect("the notification");
    client.close();
    assert!(server.wait_ended(1, SOON));
    assert!(replies(&server, 0).is_empty());
}

/// Requests with an id a reply can carry, and a `method` that is not a string: (id, method),
/// as JSON text.
const BAD_METHODS: [(&str, &str); 4] = [
    ("7", "42"),
    (r#""s-1""#, "null"),
    ("8", r#"{"name":"ping"}"#),
    ("9223372036854775808", "[]"),
];

#[test]
fn requests_whose_method_is_not_a_string_get_invalid_request_with_their_own_id() {
    for queued in [false, true] {
        let server = FakeServer::new();
        server.queued_sends.store(queued, Ordering::SeqCst);
        let seen = server.clone();
        server.on("tools/call", move |peer, _| {
            for (k, (id, method)) in BAD_METHODS.into_iter().enumerate() {
                let text =
                    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":{method},"params":{{}}}}"#);
                peer.send_text(&text);
                replies(&seen, k + 1);
            }
            Some(json!({"content": []}))
        });
        let asked = Arc::new(AtomicUsize::new(0));
        let client = Client::connect_with_options(server.clone(), counting(&asked)).unwrap();
        client.call_tool("x", Value::Null).unwrap();
        let replies = replies(&server, BAD_METHODS.len());
        assert_eq!(replies.len(), BAD_METHODS.len(), "queued sends: {queued}");
        for (reply, (id, _)) in replies.iter().zip(BAD_METHODS) {
            let wire = Message::Response(reply.clone()).encode();
            let prefix = format!(
                r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32600,"message":"Invalid Request""#
            );
            assert!(wire.starts_with(&prefix), "{wire}");
        }
        assert_eq!(asked.load(Ordering::SeqCst), 0, "a handler ran");
        client.call_tool("x", Value::Null).unwrap();
    }
}

#[test]
fn requests_with_integer_ids_beyond_i64_are_served_and_answered_with_those_ids() {
    // MCP allows any integer id: a server counting in unsigned 64 bits gets its own back.
    let server = FakeServer::new();
    let seen = server.clone();
    server.on("tools/call", move |peer, _| {
        peer.send_text(r#"{"jsonrpc":"2.0","id":18446744073709551615,"method":"ping"}"#);
        replies(&seen, 1);
        peer.send_text(&elicitation("9223372036854775808"));
        replies(&seen, 2);
        Some(json!({"content": []}))
    });
    let asked = Arc::new(AtomicUsize::new(0));
    let client = Client::connect_with_options(server.clone(), counting(&asked)).unwrap();
    client.call_tool("x", Value::Null).unwrap();
    let replies = replies(&server, 2);
    let wire: Vec<String> = replies
        .iter()
        .map(|r| Message::Response(r.clone()).encode())
        .collect();
    assert_eq!(
        wire,
        [
            r#"{"jsonrpc":"2.0","id":18446744073709551615,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":9223372036854775808,"result":{"action":"decline"}}"#,
        ]
    );
    let ids: Vec<Option<Value>> = replies
        .iter()
        .map(|r| r.id.as_ref().map(RequestId::to_value))
        .collect();
    assert_eq!(ids, [Some(json!(u64::MAX)), Some(json!(1_u64 << 63))]);
    assert_eq!(
        asked.load(Ordering::SeqCst),
        1,
        "the handler did not run once"
    );
}

#[test]
fn a_request_with_an_integer_id_beyond_64_bits_gets_invalid_request_with_that_id() {
    let server = FakeServer::new();
    server.on("tools/call", |peer, _| {
        peer.send_text(&elicitation("-18446744073709551616"));
        Some(json!({"content": []}))
    });
    let asked = Arc::new(AtomicUsize::new(0));
    let client = Client::connect_with_options(server.clone(), counting(&asked)).unwrap();
    client.call_tool("x", Value::Null).unwrap();
    let replies = replies(&server, 1);
    assert_eq!(replies.len(), 1, "{replies:?}");
    let wire = Message::Response(replies[0].clone()).encode();
    let prefix = r#"{"jsonrpc":"2.0","id":-18446744073709551616,"error":{"code":-32600,"#;
    assert!(wire.starts_with(prefix), "{wire}");
    assert_eq!(asked.load(Ordering::SeqCst), 0, "a handler ran");
}

/// Connects to `server`, whose `flood` tool sends at most `flood` invalid requests, then
/// checks that calls still work, that only `Invalid Request` replies (at most one per
/// request) reached it, and that no handler ran.
pub(crate) fn survives_flood(server: &FakeServer, flood: usize) {
    let asked = Arc::new(AtomicUsize::new(0));
    let client = Client::connect_with_options(server.clone(), counting(&asked)).unwrap();
    let result = client.call_tool("flood", Value::Null).unwrap();
    assert_eq!(result.text(), "flood");
    for i in 0..20 {
        let name = format!("echo-{i}");
        assert_eq!(client.call_tool(&name, Value::Null).unwrap().text(), name);
    }
    let replies = replies(server, 1);
    assert!(!replies.is_empty(), "no reply to the flood");
    assert!(replies.len() <= flood);
    replies.iter().for_each(assert_invalid_request);
    assert_eq!(asked.load(Ordering::SeqCst), 0, "a handler ran");
}
