//! Server requests over Streamable HTTP from a server that never acknowledges the client's
//! replies: each reply is a POST, and one the server holds open must not stall the reading of
//! the stream it came on, nor the requests and notifications behind it. Requests with ids of
//! a forbidden type get `-32600 Invalid Request` through the same bounded path.
#![cfg(all(feature = "http", target_os = "linux"))]

#[path = "common/hostile.rs"]
mod hostile;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use umcp::jsonrpc::ErrorObject;
use umcp::transport::http::{HttpConfig, HttpTransportKind};
use umcp::types::{
    ContentBlock, CreateMessageRequestParams, CreateMessageResult, ServerNotification,
};
use umcp::{Client, Options, ProtocolMode};

use hostile::{hostile, Conn, Hostile};

/// How many pings the server sends before its real request.
const PINGS: usize = 3;

/// One SSE event carrying `message`.
fn event(message: Value) -> Vec<u8> {
    format!("event: message\ndata: {message}\n\n").into_bytes()
}

/// A handshake-era server whose `tools/call` answers on an event stream: `PINGS` pings, a log
/// notification, a sampling request, and the result once the sampling reply arrived. It
/// holds every ping reply open for a minute without a word.
fn server(ping_replies: Arc<AtomicUsize>) -> Hostile {
    let sampled = Arc::new(AtomicBool::new(false));
    hostile(move |req, conn: &mut Conn| {
        let body = req.json();
        match (req.method.as_str(), req.rpc_method().as_str()) {
            ("POST", "initialize") => conn.result(
                req,
                &[("mcp-session-id", "s-1")],
                json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {}, "logging": {}},
                    "serverInfo": {"name": "unacknowledging", "version": "0"}
                }),
            ),
            ("POST", method) if method.starts_with("notifications/") => {
                conn.reply(202, &[], "text/plain", "")
            }
            ("POST", "tools/call") => {
                conn.head(200, "text/event-stream", None);
                for k in 0..PINGS {
                    conn.raw(&event(
                        json!({"jsonrpc": "2.0", "id": format!("p{k}"), "method": "ping"}),
                    ));
                }
                conn.raw(&event(
                    json!({"jsonrpc": "2.0", "method": "notifications/message",
                    "params": {"level": "info", "data": "after the pings"}}),
                ));
                conn.raw(&event(json!({"jsonrpc": "2.0", "id": "s", "method": "sampling/createMessage",
                    "params": {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                               "maxTokens": 5}})));
                let until = Instant::now() + Duration::from_secs(60);
                while !sampled.load(Ordering::SeqCst) && Instant::now() < until {
                    std::thread::sleep(Duration::from_millis(10));
                }
                conn.raw(&event(json!({"jsonrpc": "2.0", "id": req.rpc_id(),
                    "result": {"content": [{"type": "text", "text": "sampled"}]}})));
            }
            // A reply to the server's own request.
            ("POST", "") if body["id"].as_str().is_some_and(|id| id.starts_with('p')) => {
                ping_replies.fetch_add(1, Ordering::SeqCst);
                conn.hold(Duration::from_secs(60));
            }
            ("POST", "") => {
                sampled.store(true, Ordering::SeqCst);
                conn.reply(202, &[], "text/plain", "");
            }
            ("GET", _) => conn.reply(405, &[], "text/plain", ""),
            _ => conn.reply(200, &[], "text/plain", ""),
        }
    })
}

#[test]
fn unacknowledged_ping_replies_delay_neither_requests_nor_notifications() {
    let ping_replies = Arc::new(AtomicUsize::new(0));
    let server = server(ping_replies.clone());
    let (logged, log) = mpsc::channel();
    let logged = Mutex::new(logged);
    let options = Options::default()
        .with_protocol_mode(ProtocolMode::Legacy)
        .with_request_timeout(Duration::from_secs(40))
        .with_notification_callback(move |notification| {
            if let ServerNotification::LoggingMessage { .. } = notification {
                let _ = logged.lock().unwrap().send(Instant::now());
            }
        })
        .with_sampling_handler(
            |_: CreateMessageRequestParams| -> Result<CreateMessageResult, ErrorObject> {
                Ok(CreateMessageResult::new("m", ContentBlock::text("hello")))
            },
        );
    let config = HttpConfig::new(&server.url).transport(HttpTransportKind::StreamableHttp);
    let client = Client::connect_with_options(config, options).expect("connect");

    let started = Instant::now();
    let result = client
        .call_tool("sample", json!({}))
        .expect("the call ends with its result");
    let took = started.elapsed();
    assert_eq!(result.text(), "sampled");
    // Each held reply used to stall the stream for the reply deadline (10 s).
    assert!(took < Duration::from_secs(8), "the call took {took:?}");
    let notified = log
        .recv_timeout(Duration::from_secs(1))
        .expect("the notification");
    assert!(notified.duration_since(started) < Duration::from_secs(8));
    // The pings were answered (the server holds the replies; it got at least one).
    let until = Instant::now() + Duration::from_secs(5);
    while ping_replies.load(Ordering::SeqCst) == 0 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(ping_replies.load(Ordering::SeqCst) >= 1);
}

/// The ids of a forbidden type a server sends in `bad_ids_server`.
const FORBIDDEN: [&str; 5] = ["1.5", r#"{"n":1}"#, "[1]", "true", "null"];

/// A handshake-era server whose `tools/call` answers on an event stream: a `roots/list` request
/// with each id of a forbidden type, `flood` more of them, then the result. Every reply the
/// client POSTs goes into `replies`; with `hold` the server holds each open for a minute.
/// Without a flood each request waits for the reply to the one before.
fn bad_ids_server(replies: Arc<Mutex<Vec<Value>>>, flood: usize, hold: bool) -> Hostile {
    hostile(move |req, conn: &mut Conn| {
        let body = req.json();
        match (req.method.as_str(), req.rpc_method().as_str()) {
            ("POST", "initialize") => conn.result(
                req,
                &[("mcp-session-id", "s-1")],
                json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "bad-ids", "version": "0"}
                }),
            ),
            ("POST", method) if method.starts_with("notifications/") => {
                conn.reply(202, &[], "text/plain", "")
            }
            ("POST", "tools/call") => {
                conn.head(200, "text/event-stream", None);
                for (n, id) in FORBIDDEN
                    .iter()
                    .cycle()
                    .take(FORBIDDEN.len() + flood)
                    .enumerate()
                {
                    let request = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"roots/list"}}"#);
                    conn.raw(format!("event: message\ndata: {request}\n\n").as_bytes());
                    if flood == 0 {
                        // One at a time: the client's reply queue is short by design, and
                        // this server wants every reply, not the flood's bounded share.
                        replies_seen(&replies, n + 1);
                    }
                }
                conn.raw(&event(json!({"jsonrpc": "2.0", "id": req.rpc_id(),
                    "result": {"content": [{"type": "text", "text": "done"}]}})));
            }
            ("POST", "") => {
                replies.lock().unwrap().push(body);
                match hold {
                    true => conn.hold(Duration::from_secs(60)),
                    false => conn.reply(202, &[], "text/plain", ""),
                }
            }
            ("GET", _) => conn.reply(405, &[], "text/plain", ""),
            _ => conn.reply(200, &[], "text/plain", ""),
        }
    })
}

/// A client of `server` whose roots handler counts its calls in `asked`.
fn bad_ids_client(server: &Hostile, asked: &Arc<AtomicUsize>) -> Client {
    let asked = asked.clone();
    let options = Options::default()
        .with_protocol_mode(ProtocolMode::Legacy)
        .with_request_timeout(Duration::from_secs(40))
        .with_roots_handler(move || {
            asked.fetch_add(1, Ordering::SeqCst);
            Ok(umcp::types::ListRootsResult::new(Vec::new()))
        });
    let config = HttpConfig::new(&server.url).transport(HttpTransportKind::StreamableHttp);
    Client::connect_with_options(config, options).expect("connect")
}

/// The replies the server got, once there are at least `count` (or the wait ran out).
fn replies_seen(replies: &Mutex<Vec<Value>>, count: usize) -> Vec<Value> {
    let until = Instant::now() + Duration::from_secs(10);
    while replies.lock().unwrap().len() < count && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(10));
    }
    replies.lock().unwrap().clone()
}

fn assert_invalid_request(reply: &Value) {
    assert_eq!(reply.get("id"), Some(&Value::Null), "{reply}");
    assert_eq!(reply["error"]["code"], -32600, "{reply}");
    assert_eq!(reply["error"]["message"], "Invalid Request", "{reply}");
}

#[test]
fn requests_with_ids_of_forbidden_types_are_answered_invalid_request() {
    let replies = Arc::new(Mutex::new(Vec::new()));
    let server = bad_ids_server(replies.clone(), 0, false);
    let asked = Arc::new(AtomicUsize::new(0));
    let client = bad_ids_client(&server, &asked);
    let result = client.call_tool("x", json!({})).expect("the call's result");
    assert_eq!(result.text(), "done");
    let replies = replies_seen(&replies, FORBIDDEN.len());
    assert_eq!(replies.len(), FORBIDDEN.len(), "{replies:?}");
    replies.iter().for_each(assert_invalid_request);
    assert_eq!(asked.load(Ordering::SeqCst), 0, "the roots handler ran");
}

#[test]
fn a_flood_of_invalid_requests_whose_replies_the_server_holds_leaves_calls_working() {
    const FLOOD: usize = 2_000;
    let replies = Arc::new(Mutex::new(Vec::new()));
    let server = bad_ids_server(replies.clone(), FLOOD, true);
    let asked = Arc::new(AtomicUsize::new(0));
    let client = bad_ids_client(&server, &asked);
    let started = Instant::now();
    let result = client.call_tool("x", json!({})).expect("the call's result");
    assert_eq!(result.text(), "done");
    // Had the replies waited on the reading of the stream, each held one would have stalled
    // it for the reply deadline (10 s).
    let took = started.elapsed();
    assert!(took < Duration::from_secs(8), "the call took {took:?}");
    let replies = replies_seen(&replies, 1);
    assert!(!replies.is_empty(), "no reply to the flood");
    // One reply thread, its queue bounded: the rest are dropped, not queued or threaded.
    assert!(replies.len() < FLOOD, "{} replies", replies.len());
    replies.iter().for_each(assert_invalid_request);
    assert_eq!(asked.load(Ordering::SeqCst), 0, "the roots handler ran");
}
