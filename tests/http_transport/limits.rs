//! Bounds of the HTTP transport: stalled and missing servers, oversized messages, bad
//! configuration, closing and cancelling.

use std::time::{Duration, Instant};

use serde_json::json;
use umcp::transport::http::{HttpConfig, HttpTransportKind};
use umcp::transport::{Connect, Inbound, Inbox, SessionEvent};
use umcp::{Error, TimeoutKind};

use crate::http_server::serve;
use crate::{
    connect, expect_failed, expect_response, json_server, next, request, result, soon, WAIT,
};

#[test]
fn a_stalled_server_hits_the_request_timeout() {
    let server = serve(|_seen, reply| {
        std::thread::sleep(WAIT);
        reply.status(202, &[]);
    });
    let (transport, _rx) = connect(&HttpConfig::new(server.url("/mcp")));
    let started = Instant::now();
    let err = transport
        .send(
            &request(1, "tools/call"),
            Instant::now() + Duration::from_millis(300),
        )
        .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "took {:?}",
        started.elapsed()
    );
    match err {
        Error::Timeout { kind, method, .. } => {
            assert_eq!(kind, TimeoutKind::Request);
            assert_eq!(method, "tools/call");
        }
        other => panic!("{other:?}"),
    }
    // The configured request timeout caps a far deadline too.
    let config = HttpConfig::new(server.url("/mcp")).request_timeout(Duration::from_millis(300));
    let (transport, _rx) = connect(&config);
    let err = transport
        .send(&request(2, "tools/call"), soon())
        .unwrap_err();
    assert!(err.is_timeout(), "{err:?}");
}

#[test]
fn a_refused_connection_is_an_io_error() {
    let url = {
        let server = json_server();
        server.url("/mcp")
    };
    let (transport, _rx) = connect(&HttpConfig::new(url));
    let err = transport
        .send(&request(1, "initialize"), soon())
        .unwrap_err();
    assert!(matches!(err, Error::Io(_)), "{err:?}");
}

#[test]
fn oversized_messages_are_refused() {
    let big = "x".repeat(4096);
    let server = serve(move |seen, reply| {
        let body = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"big":"{big}"}}}}"#);
        if seen.rpc_method().as_deref() == Some("json") {
            return reply.json(200, &[], &body);
        }
        let mut sse = reply.sse(&[]);
        let _ = sse.message(&body);
    });
    let config = HttpConfig::new(server.url("/mcp")).max_event_size(1024);
    let (transport, rx) = connect(&config);
    transport.send(&request(1, "sse"), soon()).unwrap();
    let err = expect_failed(&rx, 1);
    assert!(
        matches!(err, Error::MessageTooLarge { limit: 1024 }),
        "{err:?}"
    );
    let err = transport.send(&request(1, "json"), soon()).unwrap_err();
    assert!(
        matches!(err, Error::MessageTooLarge { limit: 1024 }),
        "{err:?}"
    );
}

#[test]
fn close_is_prompt_with_streams_in_flight_and_deletes_the_session() {
    let server = serve(
        |seen, reply| match (seen.method.as_str(), seen.rpc_method().as_deref()) {
            ("POST", Some("initialize")) => {
                reply.json(200, &[("mcp-session-id", "s-close")], &result(1))
            }
            ("POST", _) | ("GET", _) => {
                // Streams that never end on their own.
                let mut sse = reply.sse(&[]);
                let _ = sse.send(": open\n\n");
                std::thread::sleep(WAIT);
            }
            ("DELETE", _) => reply.status(200, &[]),
            _ => reply.status(405, &[]),
        },
    );
    let (transport, rx) = connect(&HttpConfig::new(server.url("/mcp")));
    transport.send(&request(1, "initialize"), soon()).unwrap();
    expect_response(&rx, 1);
    transport.session_event(SessionEvent::Ready);
    transport.send(&request(2, "tools/call"), soon()).unwrap();
    server.next_with_method("GET");

    let started = Instant::now();
    transport.close();
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "close took {:?}",
        started.elapsed()
    );
    let delete = server.next_with_method("DELETE");
    assert_eq!(delete.header("mcp-session-id"), Some("s-close"));
    match next(&rx) {
        Inbound::Closed(closed) => assert_eq!(closed.reason, "closed by client"),
        other => panic!("{other:?}"),
    }
    transport.close();
    let err = transport.send(&request(3, "ping"), soon()).unwrap_err();
    assert!(matches!(err, Error::Closed(_)), "{err:?}");
    assert!(
        rx.recv_timeout(Duration::from_millis(200)).is_err(),
        "Closed is reported once"
    );
}

#[test]
fn invalid_configuration_is_refused_before_sending() {
    let (inbox, _rx) = Inbox::new();
    assert!(matches!(
        HttpConfig::new("localhost:1/mcp").connect(inbox),
        Err(Error::Config(_))
    ));
    let (inbox, _rx) = Inbox::new();
    let bad_header = HttpConfig::new("http://127.0.0.1:1/").header("Bad Name", "v");
    assert!(matches!(bad_header.connect(inbox), Err(Error::Config(_))));
}

/// A Streamable HTTP server may hold a JSON reply until the call is done, and the transport
/// returns from `send` only once it has read that reply. Cancelling such a call must still
/// return at once and tell the server, rather than wait for the reply.
#[test]
fn cancelling_a_call_whose_json_reply_is_pending_returns_at_once() {
    use umcp::{CancelHandle, Client, RequestOptions};

    /// How long the server holds the reply when nobody cancels.
    const HOLD: Duration = Duration::from_secs(20);
    let (arrived_tx, arrived) = crossbeam_channel::unbounded::<()>();
    let (release_tx, release) = crossbeam_channel::unbounded::<()>();
    let (notice_tx, notices) = crossbeam_channel::unbounded::<serde_json::Value>();
    let server = serve(move |seen, reply| {
        let body = seen.json();
        let answer = |result: serde_json::Value| {
            json!({"jsonrpc": "2.0", "id": body["id"], "result": result}).to_string()
        };
        match (seen.method.as_str(), body["method"].as_str()) {
            ("POST", Some("initialize")) => reply.json(
                200,
                &[],
                &answer(json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "slow", "version": "1.0.0"}
                })),
            ),
            ("POST", Some("tools/call")) => {
                let _ = arrived_tx.send(());
                let _ = release.recv_timeout(HOLD);
                reply.json(200, &[], &answer(json!({"content": []})));
            }
            ("POST", Some("notifications/cancelled")) => {
                let _ = notice_tx.send(body["params"].clone());
                let _ = release_tx.send(());
                reply.status(202, &[]);
            }
            ("POST", Some(_)) if !body["id"].is_null() => reply.json(200, &[], &answer(json!({}))),
            ("POST", _) => reply.status(202, &[]),
            _ => reply.status(405, &[]),
        }
    });
    let client = Client::connect(HttpConfig::new(server.url("/mcp"))).expect("connect");
    let cancel = CancelHandle::new();
    let trigger = cancel.clone();
    let canceller = std::thread::spawn(move || {
        // Cancel once the server holds the call, so that the client is inside `send`.
        if arrived.recv_timeout(WAIT).is_ok() {
            trigger.cancel();
        }
    });
    let started = Instant::now();
    let outcome = client
        .with(&RequestOptions::default().with_cancel(cancel))
        .call_tool("slow", json!({}));
    let elapsed = started.elapsed();
    canceller.join().expect("the canceller thread");
    assert!(
        matches!(outcome, Err(Error::Cancelled { .. })),
        "{outcome:?}"
    );
    assert!(elapsed < HOLD / 2, "cancelling took {elapsed:?}");
    let notice = notices
        .recv_timeout(WAIT)
        .expect("notifications/cancelled was sent");
    assert!(notice["requestId"].is_i64(), "{notice}");
    // The connection is still usable.
    client.ping().expect("ping after cancelling");
    client.close();
}

/// A server that is not there: the error names the request and the URL (its key redacted),
/// and keeps the kind a program can match on.
#[test]
fn a_refused_connection_names_its_url() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("address").port()
    };
    let url = format!("http://127.0.0.1:{port}/mcp?api_key=secret");
    let config = HttpConfig::new(url.as_str()).transport(HttpTransportKind::StreamableHttp);
    let err = umcp::Client::connect(config).expect_err("nothing listens");
    let Error::Io(io) = &err else {
        panic!("expected an I/O error, got {err}");
    };
    assert_eq!(io.kind(), std::io::ErrorKind::ConnectionRefused, "{err}");
    let shown = err.to_string();
    assert!(
        shown.starts_with(&format!("io: POST http://127.0.0.1:{port}/mcp?api_key=")),
        "{shown}"
    );
    assert!(!shown.contains("secret"), "{shown}");
}
