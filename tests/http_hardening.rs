//! Streamable HTTP promises that hold under stress: "no limit" values, no replay of a
//! request whose resumed stream finds the session gone, messages held while the session is
//! re-initialized, and a dead server reported as closed.
#![cfg(feature = "http")]

use umcp_test_support::http_server;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::Receiver;
use serde_json::json;
use umcp::jsonrpc::{Message, Notification, Request, RequestId, Response};
use umcp::transport::http::{HttpConfig, HttpTransportKind, ReconnectPolicy};
use umcp::transport::{Connect, Inbound, Inbox, SessionEvent, Transport};
use umcp::{Client, Error, TimeoutKind};

use http_server::{serve, Server};

const WAIT: Duration = Duration::from_secs(5);

fn connect(config: &HttpConfig) -> (Box<dyn Transport>, Receiver<Inbound>) {
    let (inbox, rx) = Inbox::new();
    (config.connect(inbox).expect("connect"), rx)
}

fn request(id: i64, method: &str) -> Message {
    Request::new(id, method, Some(json!({}))).into()
}

fn result(id: &serde_json::Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "result": {"ok": id}}).to_string()
}

fn initialize_result(id: &serde_json::Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "result": {
        "protocolVersion": "2025-11-25",
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "test", "version": "0"}
    }})
    .to_string()
}

fn expect_response(rx: &Receiver<Inbound>, id: i64) {
    match rx.recv_timeout(WAIT).expect("a response") {
        Inbound::Message(Message::Response(Response { id: Some(got), .. })) => {
            assert_eq!(got, RequestId::from(id))
        }
        other => panic!("expected the response to {id}, got {other:?}"),
    }
}

/// Answers every request with JSON and notifications with 202; no GET stream.
fn json_server() -> Server {
    serve(|seen, reply| match seen.method.as_str() {
        "POST" if !seen.rpc_id().is_null() => reply.json(200, &[], &result(&seen.rpc_id())),
        "POST" => reply.status(202, &[]),
        _ => reply.status(405, &[]),
    })
}

#[test]
fn no_limit_values_mean_no_limit() {
    let server = json_server();
    let config = HttpConfig::new(server.url("/mcp"))
        .transport(HttpTransportKind::StreamableHttp)
        .connect_timeout(Duration::MAX)
        .request_timeout(Duration::MAX)
        .idle_timeout(Duration::MAX)
        .max_event_size(usize::MAX)
        .reconnect(ReconnectPolicy::new(3, Duration::MAX, Duration::MAX));
    let (transport, rx) = connect(&config);
    let far = Instant::now() + Duration::from_secs(1_000_000_000);
    transport
        .send(&request(1, "tools/list"), far)
        .expect("send");
    expect_response(&rx, 1);
    transport.close();

    // The same values on the legacy transport's connect.
    let legacy = serve(|seen, reply| match seen.method.as_str() {
        "GET" => {
            let mut sse = reply.sse(&[]);
            let _ = sse.send("event: endpoint\ndata: /message\n\n");
            std::thread::sleep(Duration::from_millis(300));
        }
        _ => reply.status(202, &[]),
    });
    let config = HttpConfig::new(legacy.url("/sse"))
        .transport(HttpTransportKind::Sse)
        .connect_timeout(Duration::MAX)
        .idle_timeout(Duration::MAX)
        .max_event_size(usize::MAX);
    let (transport, _rx) = connect(&config);
    transport
        .send(
            &Notification::new("notifications/initialized", None).into(),
            far,
        )
        .expect("post to the endpoint");
    transport.close();
}

/// A request whose stream is resumed after the session ended must fail, not be replayed on
/// a new session: the server may have run it already.
#[test]
fn a_404_on_a_resuming_get_fails_the_call_without_replaying_it() {
    let calls = Arc::new(AtomicUsize::new(0));
    let seen_calls = calls.clone();
    let server = serve(move |seen, reply| {
        let method = seen.rpc_method();
        match (seen.method.as_str(), method.as_deref()) {
            ("POST", Some("initialize")) => reply.json(
                200,
                &[("mcp-session-id", "s-1")],
                &initialize_result(&seen.rpc_id()),
            ),
            ("POST", Some("tools/call")) => {
                seen_calls.fetch_add(1, Ordering::SeqCst);
                // A priming event, then the stream ends: the client resumes with a GET.
                let mut sse = reply.sse(&[]);
                let _ = sse.send("id: e-1\nretry: 10\ndata:\n\n");
                sse.end();
            }
            ("POST", _) => reply.status(202, &[]),
            ("GET", _) if seen.header("last-event-id").is_some() => reply.status(404, &[]),
            _ => reply.status(405, &[]),
        }
    });
    let client = Client::connect(
        HttpConfig::new(server.url("/mcp")).transport(HttpTransportKind::StreamableHttp),
    )
    .expect("connect");
    let err = client
        .call_tool("work", json!({}))
        .expect_err("the resumed call fails");
    assert_eq!(err.http_status(), Some(404), "{err:?}");
    assert!(!matches!(err, Error::SessionExpired), "{err:?}");
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(calls.load(Ordering::SeqCst), 1, "tools/call was replayed");
    client.close();
}

/// A server that numbers its sessions: each `initialize` starts `s-1`, `s-2`, …; every
/// other request is answered, and its session header reported on `sessions`.
fn session_server() -> (Server, Receiver<(String, Option<String>)>) {
    let count = AtomicUsize::new(0);
    let (tx, sessions) = crossbeam_channel::unbounded();
    let server = serve(move |seen, reply| {
        let method = seen.rpc_method().unwrap_or_default();
        let session = seen.header("mcp-session-id").map(str::to_owned);
        match method.as_str() {
            "initialize" => {
                let id = format!("s-{}", count.fetch_add(1, Ordering::SeqCst) + 1);
                reply.json(
                    200,
                    &[("mcp-session-id", &id)],
                    &initialize_result(&seen.rpc_id()),
                )
            }
            _ if seen.rpc_id().is_null() => reply.status(202, &[]),
            _ => {
                let _ = tx.send((method, session));
                reply.json(200, &[], &result(&seen.rpc_id()))
            }
        }
    });
    (server, sessions)
}

#[test]
fn messages_wait_for_the_session_being_reinitialized() {
    let (server, sessions) = session_server();
    let config = HttpConfig::new(server.url("/mcp"))
        .transport(HttpTransportKind::StreamableHttp)
        .standalone_stream(false);
    let (transport, rx) = connect(&config);
    let transport: Arc<dyn Transport> = Arc::from(transport);
    transport
        .send(&request(1, "initialize"), Instant::now() + WAIT)
        .unwrap();
    expect_response(&rx, 1);

    // This thread re-initializes; another one sends meanwhile.
    transport.session_event(SessionEvent::Reset);
    let other = Arc::clone(&transport);
    let (done_tx, done) = crossbeam_channel::bounded(1);
    let sender = std::thread::spawn(move || {
        let _ = done_tx.send(other.send(&request(2, "tools/list"), Instant::now() + WAIT));
    });
    assert!(
        done.recv_timeout(Duration::from_millis(300)).is_err(),
        "the message went out during the re-initialization"
    );
    transport
        .send(&request(3, "initialize"), Instant::now() + WAIT)
        .unwrap();
    expect_response(&rx, 3);
    transport.session_event(SessionEvent::Negotiated {
        protocol_version: "2025-11-25",
    });
    transport
        .send(
            &Notification::new("notifications/initialized", None).into(),
            Instant::now() + WAIT,
        )
        .unwrap();
    transport.session_event(SessionEvent::Ready);
    done.recv_timeout(WAIT).expect("released").expect("sent");
    sender.join().unwrap();
    expect_response(&rx, 2);
    let (method, session) = sessions.recv_timeout(WAIT).unwrap();
    assert_eq!(method, "tools/list");
    assert_eq!(session.as_deref(), Some("s-2"), "sent on the new session");

    // A message held past its own deadline fails with a write timeout.
    transport.session_event(SessionEvent::Reset);
    let other = Arc::clone(&transport);
    let started = Instant::now();
    let held = std::thread::spawn(move || {
        other.send(
            &request(4, "tools/list"),
            Instant::now() + Duration::from_millis(300),
        )
    })
    .join()
    .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    match held {
        Err(Error::Timeout { kind, .. }) => assert_eq!(kind, TimeoutKind::Write),
        other => panic!("{other:?}"),
    }
    // A failed send from the re-initializing thread lets the others go.
    drop(server);
    let _ = transport.send(
        &request(5, "initialize"),
        Instant::now() + Duration::from_secs(2),
    );
    let other = Arc::clone(&transport);
    let released = std::thread::spawn(move || {
        other.send(
            &request(6, "tools/list"),
            Instant::now() + Duration::from_secs(2),
        )
    })
    .join()
    .unwrap();
    assert!(
        !matches!(released, Err(Error::Timeout { .. })),
        "still held: {released:?}"
    );
    transport.close();
}

#[test]
fn a_server_gone_for_good_is_reported_closed() {
    let gets = Arc::new(AtomicUsize::new(0));
    let seen_gets = gets.clone();
    let server = serve(move |seen, reply| match seen.method.as_str() {
        "POST" if seen.rpc_method().as_deref() == Some("initialize") => reply.json(
            200,
            &[("mcp-session-id", "s-1")],
            &initialize_result(&seen.rpc_id()),
        ),
        "POST" => reply.status(202, &[]),
        "GET" if seen_gets.fetch_add(1, Ordering::SeqCst) == 0 => {
            // The stream opens, then the server goes away: every later GET fails.
            let mut sse = reply.sse(&[]);
            let _ = sse.send(": open\n\n");
            std::thread::sleep(Duration::from_millis(100));
            sse.end();
        }
        _ => reply.status(503, &[]),
    });
    let config = HttpConfig::new(server.url("/mcp"))
        .transport(HttpTransportKind::StreamableHttp)
        .reconnect(ReconnectPolicy::new(
            2,
            Duration::from_millis(10),
            Duration::from_millis(20),
        ));
    let client = Client::connect(config).expect("connect");
    let until = Instant::now() + WAIT;
    while client.closed().is_none() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    let closed = client.closed().expect("the dead server is reported closed");
    assert!(closed.reason.contains("stopped answering"), "{closed}");
    assert!(gets.load(Ordering::SeqCst) >= 3, "the stream was retried");
    let err = client.ping().expect_err("closed");
    assert!(matches!(err, Error::Closed(_)), "{err:?}");
}

/// A server that never gives a GET stream, even failing every attempt, still serves POSTs:
/// that is no stream, not a dead server.
#[test]
fn a_get_stream_that_never_opens_is_not_a_dead_server() {
    let gets = Arc::new(AtomicUsize::new(0));
    let seen_gets = gets.clone();
    let server = serve(move |seen, reply| match seen.method.as_str() {
        "POST" if seen.rpc_method().as_deref() == Some("initialize") => reply.json(
            200,
            &[("mcp-session-id", "s-1")],
            &initialize_result(&seen.rpc_id()),
        ),
        "POST" if !seen.rpc_id().is_null() => reply.json(200, &[], &result(&seen.rpc_id())),
        "POST" => reply.status(202, &[]),
        _ => {
            seen_gets.fetch_add(1, Ordering::SeqCst);
            reply.status(503, &[])
        }
    });
    let config = HttpConfig::new(server.url("/mcp"))
        .transport(HttpTransportKind::StreamableHttp)
        .reconnect(ReconnectPolicy::new(
            2,
            Duration::from_millis(10),
            Duration::from_millis(20),
        ));
    let client = Client::connect(config).expect("connect");
    let until = Instant::now() + WAIT;
    while gets.load(Ordering::SeqCst) < 3 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(gets.load(Ordering::SeqCst), 3, "one GET and two attempts");
    std::thread::sleep(Duration::from_millis(200));
    assert!(client.closed().is_none(), "{:?}", client.closed());
    client.ping().expect("POSTs still work");
}

/// A re-initialization that stops halfway (the handshake failed on the server's side, and
/// the re-initializing thread sends nothing more) holds the others only until the deadline
/// of its last send.
#[test]
fn a_stalled_reinitialization_holds_others_only_until_its_own_deadline() {
    let (server, sessions) = session_server();
    let config = HttpConfig::new(server.url("/mcp"))
        .transport(HttpTransportKind::StreamableHttp)
        .standalone_stream(false);
    let (transport, rx) = connect(&config);
    let transport: Arc<dyn Transport> = Arc::from(transport);
    transport.session_event(SessionEvent::Reset);
    let hold = Duration::from_millis(300);
    transport
        .send(&request(1, "initialize"), Instant::now() + hold)
        .unwrap();
    expect_response(&rx, 1);
    // No `notifications/initialized`, no `Ready`: the layer above gave up.
    let other = Arc::clone(&transport);
    let started = Instant::now();
    let sent =
        std::thread::spawn(move || other.send(&request(2, "tools/list"), Instant::now() + WAIT))
            .join()
            .unwrap();
    sent.expect("released, then sent");
    assert!(started.elapsed() < WAIT / 2, "{:?}", started.elapsed());
    expect_response(&rx, 2);
    let (_, session) = sessions.recv_timeout(WAIT).unwrap();
    assert_eq!(session.as_deref(), Some("s-1"));
    transport.close();
}

/// POST answers 400 with the server's reason (an error with a null id, as SDK servers reject
/// a request at the transport), GET 405: `auto` tries legacy SSE, which is refused just as
/// plainly, and the error the caller gets is the server's reason, not the fallback's 405.
#[test]
fn a_failed_fallback_keeps_the_first_refusal() {
    let reason = "unsupported client: upgrade umcp";
    let server = serve(move |seen, reply| match seen.method.as_str() {
        "POST" => {
            let body =
                json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32000, "message": reason}});
            reply.json(400, &[], &body.to_string());
        }
        _ => reply.status(405, &[]),
    });
    let err = Client::connect(HttpConfig::new(server.url("/mcp"))).unwrap_err();
    assert_eq!(err.http_status(), Some(400), "{err:?}");
    assert!(err.to_string().contains(reason), "{err}");
    // The fallback was tried.
    let mut methods = Vec::new();
    while let Some(seen) = server.next_within(Duration::from_millis(300)) {
        methods.push(seen.method);
    }
    assert!(methods.iter().any(|m| m == "GET"), "{methods:?}");
}
