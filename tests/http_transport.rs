//! Tests for the Streamable HTTP and legacy HTTP+SSE transports against a loopback server.
#![cfg(feature = "http")]

#[path = "common/http_server.rs"]
mod http_server;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::Receiver;
use serde_json::json;
use umcp::jsonrpc::{Message, Notification, Request, RequestId, Response};
use umcp::transport::http::{CredentialProvider, HttpConfig, HttpTransportKind, ReconnectPolicy};
use umcp::transport::{Connect, Inbound, Inbox, SessionEvent, Transport};
use umcp::{Error, HttpError, TimeoutKind};

use http_server::{serve, Seen, Server};

const WAIT: Duration = Duration::from_secs(5);

fn connect(config: &HttpConfig) -> (Box<dyn Transport>, Receiver<Inbound>) {
    let (inbox, rx) = Inbox::new();
    (config.connect(inbox).expect("connect"), rx)
}

fn request(id: i64, method: &str) -> Message {
    Request::new(id, method, Some(json!({}))).into()
}

fn notification(method: &str) -> Message {
    Notification::new(method, None).into()
}

fn soon() -> Instant {
    Instant::now() + WAIT
}

fn result(id: i64) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"ok":{id}}}}}"#)
}

fn next(rx: &Receiver<Inbound>) -> Inbound {
    rx.recv_timeout(WAIT)
        .expect("nothing arrived in the inbox within 5 s")
}

fn next_message(rx: &Receiver<Inbound>) -> Message {
    match next(rx) {
        Inbound::Message(m) => m,
        other => panic!("expected a message, got {other:?}"),
    }
}

fn expect_response(rx: &Receiver<Inbound>, id: i64) {
    match next_message(rx) {
        Message::Response(Response {
            id: Some(got),
            result: Ok(value),
        }) => {
            assert_eq!(got, RequestId::from(id));
            assert_eq!(value, json!({"ok": id}));
        }
        other => panic!("expected the response to {id}, got {other:?}"),
    }
}

fn expect_failed(rx: &Receiver<Inbound>, id: i64) -> Error {
    match next(rx) {
        Inbound::Failed(got, error) => {
            assert_eq!(got, RequestId::from(id));
            error
        }
        other => panic!("expected request {id} to fail, got {other:?}"),
    }
}

fn fast_reconnect() -> ReconnectPolicy {
    ReconnectPolicy::new(3, Duration::from_millis(20), Duration::from_millis(100))
}

/// A server answering every request with a JSON response and everything else with 202.
fn json_server() -> Server {
    serve(|seen, reply| match seen.method.as_str() {
        "POST" if seen.rpc_method().is_some() && !seen.rpc_id().is_null() => {
            let id = seen.rpc_id().as_i64().unwrap_or(0);
            reply.json(200, &[], &result(id));
        }
        "POST" => reply.status(202, &[]),
        _ => reply.status(405, &[]),
    })
}

#[test]
fn smoke_json_reply() {
    let server = json_server();
    let (transport, rx) = connect(&HttpConfig::new(server.url("/mcp")));
    assert_eq!(transport.kind(), "streamable-http");
    transport.send(&request(1, "tools/list"), soon()).unwrap();
    expect_response(&rx, 1);
    let seen = server.next();
    assert_eq!((seen.method.as_str(), seen.path.as_str()), ("POST", "/mcp"));
    let accept = seen.header("accept").unwrap();
    assert!(accept.contains("application/json") && accept.contains("text/event-stream"));
    assert_eq!(seen.header("content-type"), Some("application/json"));
    assert_eq!(seen.rpc_method().as_deref(), Some("tools/list"));
}

#[test]
fn sse_reply_delivers_interleaved_messages_before_the_response() {
    let (release_tx, release_rx) = crossbeam_channel::bounded::<()>(1);
    let server = serve(move |_seen, reply| {
        let mut sse = reply.sse(&[]);
        let _ = sse.send(": comment\n\n");
        let _ = sse.message(
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}"#,
        );
        let _ = sse.send("event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"s1\",\n");
        let _ = sse.send("data: \"method\":\"elicitation/create\"}\n\n");
        let _ = sse.message(&result(7));
        // The stream stays open: the transport must not wait for its end.
        let _ = release_rx.recv_timeout(WAIT);
    });
    let (transport, rx) = connect(&HttpConfig::new(server.url("/mcp")));
    transport.send(&request(7, "tools/call"), soon()).unwrap();
    match next_message(&rx) {
        Message::Notification(n) => assert_eq!(n.method, "notifications/progress"),
        other => panic!("{other:?}"),
    }
    match next_message(&rx) {
        Message::Request(r) => {
            assert_eq!(r.method, "elicitation/create");
            assert_eq!(r.id, RequestId::from("s1"));
        }
        other => panic!("{other:?}"),
    }
    expect_response(&rx, 7);
    drop(release_tx);
}

#[test]
fn notifications_accept_202_and_tolerate_a_body() {
    let server = serve(|seen, reply| match seen.rpc_method().as_deref() {
        Some("notifications/initialized") => reply.status(202, &[]),
        _ => reply.json(200, &[], r#"{"result":{}}"#),
    });
    let (transport, rx) = connect(&HttpConfig::new(server.url("/")));
    transport
        .send(&notification("notifications/initialized"), soon())
        .unwrap();
    transport
        .send(&notification("notifications/other"), soon())
        .unwrap();
    assert_eq!(
        server.next().rpc_method().as_deref(),
        Some("notifications/initialized")
    );
    assert_eq!(
        server.next().rpc_method().as_deref(),
        Some("notifications/other")
    );
    assert!(
        rx.try_recv().is_err(),
        "nothing is delivered for a notification"
    );
}

#[test]
fn session_id_and_protocol_version_headers() {
    let server = serve(|seen, reply| {
        let id = seen.rpc_id().as_i64().unwrap_or(0);
        match seen.rpc_method().as_deref() {
            Some("initialize") => reply.json(200, &[("MCP-Session-Id", "sess-1")], &result(id)),
            Some("bad/session") => reply.json(200, &[("Mcp-Session-Id", "has space")], &result(id)),
            _ if id != 0 => reply.json(200, &[], &result(id)),
            _ => reply.status(202, &[]),
        }
    });
    let (transport, rx) = connect(&HttpConfig::new(server.url("/mcp")).get_stream(false));
    transport.send(&request(1, "initialize"), soon()).unwrap();
    expect_response(&rx, 1);
    let first = server.next();
    assert_eq!(first.header("mcp-session-id"), None);
    assert_eq!(first.header("mcp-protocol-version"), None);

    transport
        .send(&notification("notifications/early"), soon())
        .unwrap();
    let early = server.next();
    assert_eq!(early.header("mcp-session-id"), Some("sess-1"));
    assert_eq!(
        early.header("mcp-protocol-version"),
        None,
        "not before Negotiated"
    );

    transport.session_event(SessionEvent::Negotiated {
        protocol_version: "2025-11-25",
    });
    transport.send(&request(2, "bad/session"), soon()).unwrap();
    expect_response(&rx, 2);
    let second = server.next();
    assert_eq!(second.header("mcp-session-id"), Some("sess-1"));
    assert_eq!(second.header("mcp-protocol-version"), Some("2025-11-25"));

    transport.send(&request(3, "tools/list"), soon()).unwrap();
    expect_response(&rx, 3);
    assert_eq!(
        server.next().header("mcp-session-id"),
        Some("sess-1"),
        "invalid ids are ignored"
    );

    transport.session_event(SessionEvent::Reset);
    transport.send(&request(4, "initialize"), soon()).unwrap();
    expect_response(&rx, 4);
    let after_reset = server.next();
    assert_eq!(after_reset.header("mcp-session-id"), None);
    assert_eq!(after_reset.header("mcp-protocol-version"), None);
}

#[test]
fn a_404_with_a_session_means_expired_and_without_one_is_plain_http() {
    let server = serve(|seen, reply| {
        let id = seen.rpc_id().as_i64().unwrap_or(0);
        match (seen.rpc_method().as_deref(), seen.header("mcp-session-id")) {
            (Some("initialize"), _) => reply.json(200, &[("mcp-session-id", "old")], &result(id)),
            (_, Some("old")) => reply.status(404, &[]),
            _ => reply.body(404, "text/plain", &[], "no such endpoint"),
        }
    });
    let (transport, rx) = connect(&HttpConfig::new(server.url("/mcp")));
    transport.send(&request(1, "initialize"), soon()).unwrap();
    expect_response(&rx, 1);
    let err = transport
        .send(&request(2, "tools/list"), soon())
        .unwrap_err();
    assert!(matches!(err, Error::SessionExpired), "{err:?}");
    // The session is forgotten: the next request goes without it and is an ordinary 404.
    let err = transport
        .send(&request(3, "tools/list"), soon())
        .unwrap_err();
    match err {
        Error::Http(e) => {
            assert_eq!(e.status, 404);
            assert_eq!(e.body, "no such endpoint");
            assert!(e.url.ends_with("/mcp"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn get_stream_refused_with_405_is_quiet() {
    let gets = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&gets);
    let server = serve(move |seen, reply| match seen.method.as_str() {
        "GET" => {
            counter.fetch_add(1, Ordering::SeqCst);
            reply.status(405, &[]);
        }
        _ => {
            let id = seen.rpc_id().as_i64().unwrap_or(0);
            reply.json(200, &[], &result(id));
        }
    });
    let config = HttpConfig::new(server.url("/mcp")).reconnect(fast_reconnect());
    let (transport, rx) = connect(&config);
    transport.session_event(SessionEvent::Ready);
    let get = server.next_with_method("GET");
    assert_eq!(get.header("accept"), Some("text/event-stream"));
    transport.send(&request(1, "ping"), soon()).unwrap();
    expect_response(&rx, 1);
    assert!(
        rx.recv_timeout(Duration::from_millis(300)).is_err(),
        "no error is delivered"
    );
    assert_eq!(
        gets.load(Ordering::SeqCst),
        1,
        "a refused stream is not retried"
    );
}

#[test]
fn get_stream_reconnects_with_its_last_event_id() {
    let server = serve(|seen, reply| {
        if seen.method != "GET" {
            return reply.status(202, &[]);
        }
        let mut sse = reply.sse(&[]);
        match seen.header("last-event-id") {
            None => {
                let _ = sse.send("retry: 50\n\n");
                let _ = sse.send(
                    "id: g-1\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"first\"}\n\n",
                );
                sse.end();
            }
            Some(id) => {
                let method = format!("second-after-{id}");
                let _ = sse.message(&format!(r#"{{"jsonrpc":"2.0","method":"{method}"}}"#));
                std::thread::sleep(WAIT);
            }
        }
    });
    let config = HttpConfig::new(server.url("/mcp")).reconnect(fast_reconnect());
    let (transport, rx) = connect(&config);
    transport.session_event(SessionEvent::Ready);
    transport.session_event(SessionEvent::Ready); // a second Ready opens no second stream
                                                  // Between the two streams, the gap is reported: the server may not have replayed.
    let delivered: Vec<String> = (0..3)
        .map(|_| match next(&rx) {
            Inbound::Message(Message::Notification(n)) => n.method,
            Inbound::Gap(reason) => {
                assert!(reason.contains("resumed after event g-1"), "{reason}");
                "gap".to_owned()
            }
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(delivered, ["first", "gap", "second-after-g-1"]);
    let first = server.next_with_method("GET");
    assert_eq!(first.header("last-event-id"), None);
    let second = server.next_with_method("GET");
    assert_eq!(second.header("last-event-id"), Some("g-1"));
    assert!(
        server.next_within(Duration::from_millis(200)).is_none(),
        "only two GETs"
    );
}

#[test]
fn post_stream_is_resumed_after_the_servers_retry() {
    let (closed_tx, closed_rx) = crossbeam_channel::bounded::<Instant>(1);
    let server =
        serve(
            move |seen, reply| match (seen.method.as_str(), seen.rpc_method().as_deref()) {
                ("POST", Some("initialize")) => {
                    reply.json(200, &[("mcp-session-id", "s-9")], &result(1))
                }
                ("POST", Some("tools/call")) => {
                    let mut sse = reply.sse(&[]);
                    let _ = sse.send("id: p-1\nretry: 300\ndata:\n\n");
                    let _ = sse.message(r#"{"jsonrpc":"2.0","method":"notifications/progress"}"#);
                    let _ = sse.send("id: p-2\ndata:\n\n");
                    // Taken before the end, so the client's wait can only look longer.
                    let closing = Instant::now();
                    sse.end();
                    let _ = closed_tx.send(closing);
                }
                ("GET", _) if seen.header("last-event-id") == Some("p-2") => {
                    let mut sse = reply.sse(&[]);
                    let _ = sse.send("id: p-3\ndata:\n\n");
                    let _ = sse.message(&result(2));
                    std::thread::sleep(WAIT);
                }
                _ => reply.status(405, &[]),
            },
        );
    let (transport, rx) = connect(&HttpConfig::new(server.url("/mcp")).get_stream(false));
    transport.send(&request(1, "initialize"), soon()).unwrap();
    expect_response(&rx, 1);
    transport.session_event(SessionEvent::Negotiated {
        protocol_version: "2025-11-25",
    });
    transport.send(&request(2, "tools/call"), soon()).unwrap();
    match next_message(&rx) {
        Message::Notification(n) => assert_eq!(n.method, "notifications/progress"),
        other => panic!("{other:?}"),
    }
    expect_response(&rx, 2);
    let closed_at = closed_rx.recv_timeout(WAIT).unwrap();
    let get = server.next_with_method("GET");
    let waited = get.at.duration_since(closed_at);
    assert!(
        waited >= Duration::from_millis(300),
        "reconnected after {waited:?}"
    );
    assert!(
        waited < Duration::from_secs(3),
        "reconnected after {waited:?}"
    );
    assert_eq!(get.header("last-event-id"), Some("p-2"));
    assert_eq!(get.header("mcp-session-id"), Some("s-9"));
    assert_eq!(get.header("mcp-protocol-version"), Some("2025-11-25"));
}

#[test]
fn a_stream_without_event_ids_that_ends_early_fails_the_request() {
    let server = serve(|_seen, reply| {
        let mut sse = reply.sse(&[]);
        // Cut in the middle of the event: no blank line, no line ending.
        let _ = sse.send("event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"res");
        sse.end();
    });
    let (transport, rx) = connect(&HttpConfig::new(server.url("/mcp")));
    transport.send(&request(1, "tools/call"), soon()).unwrap();
    match expect_failed(&rx, 1) {
        Error::ResponseLost(msg) => assert!(msg.contains("ended before"), "{msg}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn unauthorized_carries_the_parsed_challenge() {
    let server = serve(|_seen, reply| {
        reply.json(
            401,
            &[
                (
                    "WWW-Authenticate",
                    r#"Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource", scope="tools:read", error="invalid_token""#,
                ),
                ("Mcp-Auth-Server", "http://auth.local"),
            ],
            r#"{"error":"unauthorized"}"#,
        )
    });
    let (transport, _rx) = connect(&HttpConfig::new(server.url("/mcp")));
    let err = transport
        .send(&request(1, "initialize"), soon())
        .unwrap_err();
    assert!(err.needs_authorization());
    let Error::Unauthorized(e) = err else {
        panic!("{err:?}")
    };
    assert_eq!(e.status, 401);
    let challenge = e.www_authenticate.expect("a parsed challenge");
    assert_eq!(challenge.scheme, "Bearer");
    assert_eq!(
        challenge.resource_metadata.as_deref(),
        Some("http://127.0.0.1/.well-known/oauth-protected-resource")
    );
    assert_eq!(challenge.scope.as_deref(), Some("tools:read"));
    assert_eq!(challenge.error.as_deref(), Some("invalid_token"));
    assert_eq!(e.mcp_auth_server.as_deref(), Some("http://auth.local"));
    assert!(e.body.contains("unauthorized"));
}

#[test]
fn forbidden_is_its_own_error() {
    let server = serve(|_seen, reply| {
        reply.json(
            403,
            &[("WWW-Authenticate", r#"Bearer error="insufficient_scope""#)],
            "{}",
        )
    });
    let (transport, _rx) = connect(&HttpConfig::new(server.url("/mcp")));
    match transport
        .send(&request(1, "tools/call"), soon())
        .unwrap_err()
    {
        Error::Forbidden(e) => {
            assert_eq!(e.status, 403);
            let error = e.www_authenticate.and_then(|c| c.error);
            assert_eq!(error.as_deref(), Some("insufficient_scope"));
        }
        other => panic!("{other:?}"),
    }
}

/// Hands out `Bearer t<n>` and asks for a retry after the first 401.
struct Tokens {
    issued: AtomicUsize,
    challenges: Mutex<Vec<u16>>,
}

impl CredentialProvider for Tokens {
    fn headers(&self, _url: &str) -> umcp::Result<Vec<(String, String)>> {
        let n = self.issued.fetch_add(1, Ordering::SeqCst);
        Ok(vec![("Authorization".into(), format!("Bearer t{n}"))])
    }

    fn on_unauthorized(&self, error: &HttpError) -> umcp::Result<bool> {
        let mut challenges = self.challenges.lock().unwrap();
        challenges.push(error.status);
        Ok(challenges.len() == 1)
    }
}

#[test]
fn credentials_are_asked_for_and_a_401_is_retried_once() {
    let server = serve(|seen, reply| match seen.header("authorization") {
        Some("Bearer t1") => reply.json(200, &[], &result(1)),
        _ => reply.status(401, &[("WWW-Authenticate", "Bearer")]),
    });
    let tokens = Arc::new(Tokens {
        issued: AtomicUsize::new(0),
        challenges: Mutex::new(Vec::new()),
    });
    let config = HttpConfig::new(server.url("/mcp")).credentials(tokens.clone());
    let (transport, rx) = connect(&config);
    transport.send(&request(1, "initialize"), soon()).unwrap();
    expect_response(&rx, 1);
    assert_eq!(server.next().header("authorization"), Some("Bearer t0"));
    assert_eq!(server.next().header("authorization"), Some("Bearer t1"));
    // The provider declines the second time: the 401 reaches the caller.
    let err = transport
        .send(&request(2, "tools/list"), soon())
        .unwrap_err();
    assert!(matches!(err, Error::Unauthorized(_)), "{err:?}");
    assert_eq!(*tokens.challenges.lock().unwrap(), [401, 401]);
}

#[test]
fn error_statuses_with_a_json_rpc_error_become_rpc_errors() {
    let server = serve(|seen, reply| {
        let body = json!({"jsonrpc": "2.0", "id": seen.rpc_id(), "error": {"code": -32602, "message": "bad params"}});
        reply.json(400, &[], &body.to_string())
    });
    let (transport, _rx) = connect(&HttpConfig::new(server.url("/mcp")));
    match transport
        .send(&request(5, "tools/call"), soon())
        .unwrap_err()
    {
        Error::Rpc(e) => assert_eq!((e.code.0, e.message.as_str()), (-32602, "bad params")),
        other => panic!("{other:?}"),
    }
}

#[test]
fn malformed_json_is_a_protocol_error() {
    let server = serve(|_seen, reply| reply.json(200, &[], "{not json at all"));
    let (transport, _rx) = connect(&HttpConfig::new(server.url("/mcp")));
    match transport
        .send(&request(1, "tools/list"), soon())
        .unwrap_err()
    {
        Error::Protocol(msg) => assert!(msg.contains("{not json at all"), "{msg}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_json_batch_is_delivered_as_a_batch() {
    let server = serve(|_seen, reply| {
        let body = format!(r#"[{},{{"jsonrpc":"2.0","method":"n"}}]"#, result(1));
        reply.json(200, &[], &body)
    });
    let (transport, rx) = connect(&HttpConfig::new(server.url("/mcp")));
    transport.send(&request(1, "tools/list"), soon()).unwrap();
    match next(&rx) {
        Inbound::Batch(messages) => assert_eq!(messages.len(), 2),
        other => panic!("{other:?}"),
    }
}

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

/// A legacy server: `GET /sse` announces `endpoint`; POSTs there are answered on the stream.
fn legacy_server(endpoint: &'static str) -> Server {
    let (to_stream, from_posts) = crossbeam_channel::unbounded::<String>();
    serve(move |seen: Seen, reply| match seen.method.as_str() {
        "GET" => {
            let mut sse = reply.sse(&[]);
            let _ = sse.send(&format!("event: endpoint\ndata: {endpoint}\n\n"));
            while let Ok(message) = from_posts.recv_timeout(WAIT) {
                if sse.message(&message).is_err() {
                    return;
                }
            }
        }
        "POST" => {
            if let Some(id) = seen.rpc_id().as_i64() {
                let _ = to_stream.send(result(id));
            }
            reply.status(202, &[]);
        }
        _ => reply.status(405, &[]),
    })
}

#[test]
fn legacy_sse_posts_to_the_announced_endpoint() {
    let server = legacy_server("/messages?sessionId=abc");
    let config = HttpConfig::new(server.url("/sse")).transport(HttpTransportKind::Sse);
    assert!(config.fallback().is_none());
    let (transport, rx) = connect(&config);
    assert_eq!(transport.kind(), "sse");
    let get = server.next_with_method("GET");
    assert_eq!(get.header("accept"), Some("text/event-stream"));
    transport.send(&request(1, "initialize"), soon()).unwrap();
    let post = server.next_with_method("POST");
    assert_eq!(post.path, "/messages?sessionId=abc");
    expect_response(&rx, 1);
    transport.close();
    assert!(matches!(next(&rx), Inbound::Closed(_)));
    assert!(
        rx.recv_timeout(Duration::from_millis(200)).is_err(),
        "Closed is reported once"
    );
}

#[test]
fn auto_falls_back_to_legacy_sse() {
    let server = legacy_server("/messages");
    let auto = HttpConfig::new(server.url("/sse"));
    let fallback = auto.fallback().expect("auto has a fallback");
    let (inbox, rx) = Inbox::new();
    let transport = fallback.connect(inbox).unwrap();
    assert_eq!(transport.kind(), "sse");
    transport.send(&request(4, "initialize"), soon()).unwrap();
    expect_response(&rx, 4);
}

#[test]
fn auto_remembers_a_legacy_server_until_it_moves() {
    // A legacy server that refuses Streamable HTTP's POST to its SSE URL, until it moves to
    // Streamable HTTP and refuses the GET instead.
    let moved = Arc::new(std::sync::atomic::AtomicBool::new(false));
    // The newest event stream, which POSTs answer on.
    let stream = Arc::new(Mutex::new(None::<crossbeam_channel::Sender<String>>));
    let has_moved = moved.clone();
    let server = serve(
        move |seen: Seen, reply| match (seen.method.as_str(), seen.path.as_str()) {
            ("GET", "/sse") if !has_moved.load(Ordering::SeqCst) => {
                let (to_stream, from_posts) = crossbeam_channel::unbounded::<String>();
                *stream.lock().unwrap() = Some(to_stream);
                let mut sse = reply.sse(&[]);
                let _ = sse.send("event: endpoint\ndata: /messages\n\n");
                while let Ok(message) = from_posts.recv_timeout(WAIT) {
                    if sse.message(&message).is_err() {
                        return;
                    }
                }
            }
            ("POST", "/messages") => {
                if let (Some(id), Some(to_stream)) =
                    (seen.rpc_id().as_i64(), stream.lock().unwrap().as_ref())
                {
                    let _ = to_stream.send(result(id));
                }
                reply.status(202, &[]);
            }
            ("POST", "/sse") if has_moved.load(Ordering::SeqCst) => {
                reply.json(200, &[], &result(seen.rpc_id().as_i64().unwrap_or(0)))
            }
            _ => reply.status(405, &[]),
        },
    );
    let auto = HttpConfig::new(server.url("/sse"));
    let seen_now = |server: &Server| {
        let mut seen = Vec::new();
        while let Some(s) = server.next_within(Duration::from_millis(200)) {
            seen.push(format!("{} {}", s.method, s.path));
        }
        seen
    };

    // The first time, the client learns it by a refused request and the fallback.
    let (first, _rx) = connect(&auto);
    assert_eq!(first.kind(), "streamable-http");
    let err = first.send(&request(1, "initialize"), soon()).unwrap_err();
    assert_eq!(err.http_status(), Some(405), "{err:?}");
    first.close();
    let (inbox, rx) = Inbox::new();
    let fallback = auto.fallback().unwrap().connect(inbox).unwrap();
    assert_eq!(fallback.kind(), "sse");
    fallback.close();
    drop(rx);
    seen_now(&server);

    // Then straight over SSE: no refused POST first.
    let (again, rx) = connect(&auto);
    assert_eq!(again.kind(), "sse");
    again.send(&request(2, "initialize"), soon()).unwrap();
    expect_response(&rx, 2);
    again.close();
    let seen = seen_now(&server);
    assert_eq!(
        seen.first().map(String::as_str),
        Some("GET /sse"),
        "{seen:?}"
    );
    assert!(!seen.iter().any(|s| s == "POST /sse"), "{seen:?}");

    // The server moved to Streamable HTTP: the SSE attempt is refused, the URL forgotten.
    moved.store(true, Ordering::SeqCst);
    let (moved_on, rx) = connect(&auto);
    assert_eq!(moved_on.kind(), "streamable-http");
    moved_on.send(&request(3, "initialize"), soon()).unwrap();
    expect_response(&rx, 3);
    moved_on.close();
    seen_now(&server);
    let (next_time, _rx) = connect(&auto);
    assert_eq!(next_time.kind(), "streamable-http");
    next_time.close();
    let seen = seen_now(&server);
    assert!(!seen.iter().any(|s| s.starts_with("GET")), "{seen:?}");
}

#[test]
fn legacy_endpoint_on_another_origin_is_refused() {
    let server = legacy_server("http://127.0.0.2:9/messages");
    let config = HttpConfig::new(server.url("/sse")).transport(HttpTransportKind::Sse);
    let (inbox, _rx) = Inbox::new();
    match config.connect(inbox) {
        Err(Error::Protocol(msg)) => assert!(msg.contains("origin"), "{msg}"),
        Err(other) => panic!("{other:?}"),
        Ok(_) => panic!("connected to a foreign endpoint"),
    }
}

#[test]
fn legacy_without_an_endpoint_event_times_out() {
    let server = serve(|_seen, reply| {
        let mut sse = reply.sse(&[]);
        let _ = sse.send(": waiting\n\n");
        std::thread::sleep(WAIT);
    });
    let config = HttpConfig::new(server.url("/sse"))
        .transport(HttpTransportKind::Sse)
        .connect_timeout(Duration::from_millis(300));
    let (inbox, _rx) = Inbox::new();
    let started = Instant::now();
    match config.connect(inbox) {
        Err(Error::Timeout { kind, .. }) => assert_eq!(kind, TimeoutKind::Connect),
        Err(other) => panic!("{other:?}"),
        Ok(_) => panic!("connected without an endpoint"),
    }
    assert!(started.elapsed() < Duration::from_secs(3));
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

#[test]
fn legacy_stream_end_closes_the_connection() {
    let (end_tx, end_rx) = crossbeam_channel::bounded::<()>(1);
    let server = serve(move |seen, reply| {
        if seen.method != "GET" {
            return reply.status(202, &[]);
        }
        let mut sse = reply.sse(&[]);
        let _ = sse.send("event: endpoint\ndata: /messages\n\n");
        let _ = end_rx.recv_timeout(WAIT);
        sse.end();
    });
    let config = HttpConfig::new(server.url("/sse")).transport(HttpTransportKind::Sse);
    let (transport, rx) = connect(&config);
    end_tx.send(()).unwrap();
    match next(&rx) {
        Inbound::Closed(closed) => assert!(closed.reason.contains("ended"), "{}", closed.reason),
        other => panic!("{other:?}"),
    }
    match transport.send(&request(1, "ping"), soon()).unwrap_err() {
        Error::Closed(closed) => assert!(closed.reason.contains("ended"), "{}", closed.reason),
        other => panic!("{other:?}"),
    }
    transport.close();
    assert!(
        rx.recv_timeout(Duration::from_millis(200)).is_err(),
        "Closed is reported once"
    );
}

#[test]
fn ready_returns_once_the_get_stream_is_answered() {
    let server = serve(|seen, reply| {
        if seen.method == "GET" {
            let mut sse = reply.sse(&[]);
            let _ = sse.send(": open\n\n");
            std::thread::sleep(WAIT);
        } else {
            reply.status(202, &[]);
        }
    });
    let (transport, _rx) = connect(&HttpConfig::new(server.url("/mcp")));
    transport.session_event(SessionEvent::Ready);
    // Server messages that belong to no request go to the GET stream only if it is open, so
    // it must be open before the next request is sent.
    let first = server
        .next_within(Duration::from_millis(1))
        .expect("the GET was sent");
    assert_eq!(first.method, "GET");
    transport.close();
}

#[test]
fn a_silent_get_stream_is_reopened_after_the_idle_timeout() {
    let server = serve(|seen, reply| {
        if seen.method != "GET" {
            return reply.status(202, &[]);
        }
        let mut sse = reply.sse(&[]);
        let _ = sse.send("id: quiet-1\ndata:\n\n");
        std::thread::sleep(WAIT);
    });
    let config = HttpConfig::new(server.url("/mcp"))
        .idle_timeout(Duration::from_millis(200))
        .reconnect(fast_reconnect());
    let (transport, _rx) = connect(&config);
    transport.session_event(SessionEvent::Ready);
    assert_eq!(server.next_with_method("GET").header("last-event-id"), None);
    let again = server.next_with_method("GET");
    assert_eq!(again.header("last-event-id"), Some("quiet-1"));
    transport.close();
}

#[test]
fn a_silent_post_stream_without_event_ids_fails_with_an_idle_timeout() {
    let server = serve(|_seen, reply| {
        let mut sse = reply.sse(&[]);
        let _ = sse.send(": working\n\n");
        std::thread::sleep(WAIT);
    });
    let config = HttpConfig::new(server.url("/mcp")).idle_timeout(Duration::from_millis(200));
    let (transport, rx) = connect(&config);
    transport.send(&request(1, "tools/call"), soon()).unwrap();
    match expect_failed(&rx, 1) {
        Error::Timeout { kind, .. } => assert_eq!(kind, TimeoutKind::Idle),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_response_on_the_get_stream_completes_the_request() {
    let (pending_tx, pending_rx) = crossbeam_channel::unbounded::<i64>();
    let server = serve(move |seen, reply| match seen.method.as_str() {
        "GET" => {
            let mut sse = reply.sse(&[]);
            let _ = sse.send(": open\n\n");
            if let Ok(id) = pending_rx.recv_timeout(WAIT) {
                let _ = sse.message(&result(id));
            }
            std::thread::sleep(WAIT);
        }
        _ => {
            // Answer "later, elsewhere": 202 for the request, the response on the GET stream.
            let _ = pending_tx.send(seen.rpc_id().as_i64().unwrap_or(0));
            reply.status(202, &[]);
        }
    });
    let (transport, rx) = connect(&HttpConfig::new(server.url("/mcp")));
    transport.session_event(SessionEvent::Ready);
    transport.send(&request(9, "tools/call"), soon()).unwrap();
    expect_response(&rx, 9);
    transport.close();
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
    let outcome = client.call_tool_with(
        "slow",
        json!({}),
        &RequestOptions::default().with_cancel(cancel),
    );
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
