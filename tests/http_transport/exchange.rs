//! The basic Streamable HTTP exchange: JSON and SSE replies, notifications, batches, sessions and
//! protocol headers.

use umcp::jsonrpc::{Message, Notification, RequestId};
use umcp::transport::http::HttpConfig;
use umcp::transport::{Inbound, SessionEvent};
use umcp::Error;

use crate::http_server::serve;
use crate::{
    connect, expect_response, json_server, next, next_message, request, result, soon, WAIT,
};

fn notification(method: &str) -> Message {
    Notification::new(method, None).into()
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
    let (transport, rx) = connect(&HttpConfig::new(server.url("/mcp")).standalone_stream(false));
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
fn a_json_batch_is_delivered_as_a_batch() {
    let server = serve(|_seen, reply| {
        // With a request JSON-RPC rejects, which goes with the batch to be answered.
        let invalid = r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#;
        let body = format!(
            r#"[{},{{"jsonrpc":"2.0","method":"n"}},{invalid}]"#,
            result(1)
        );
        reply.json(200, &[], &body)
    });
    let (transport, rx) = connect(&HttpConfig::new(server.url("/mcp")));
    transport.send(&request(1, "tools/list"), soon()).unwrap();
    match next(&rx) {
        Inbound::Batch(messages, invalid) => {
            assert_eq!(messages.len(), 2);
            let methods: Vec<_> = invalid.iter().map(|i| i.method()).collect();
            assert_eq!(methods, [Some("ping")]);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_post_cut_short_by_close_fails_as_closed_by_the_client() {
    // The server takes its time answering.
    let server = serve(|seen, reply| {
        if seen.method == "POST" {
            std::thread::sleep(std::time::Duration::from_secs(10));
        }
        reply.status(405, &[]);
    });
    let config = HttpConfig::new(server.url("/mcp")).standalone_stream(false);
    let (transport, _rx) = connect(&config);
    let transport = std::sync::Arc::new(transport);
    let sender = std::sync::Arc::clone(&transport);
    let call = std::thread::spawn(move || sender.send(&request(1, "tools/call"), soon()));
    std::thread::sleep(std::time::Duration::from_millis(300));
    let started = std::time::Instant::now();
    transport.close();
    let outcome = call.join().expect("the sender");
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    match outcome {
        Err(Error::Closed(closed)) => assert_eq!(closed.reason, "closed by client"),
        other => panic!("expected the POST to fail as closed by the client, got {other:?}"),
    }
}

#[test]
fn a_request_whose_method_is_not_a_string_is_no_response_to_the_post_it_came_on() {
    // The server's ids are its own: its request `1`, with `"method": null`, on the stream of
    // the client's request `1` is answered as invalid and leaves that stream reading.
    let server = serve(|seen, reply| {
        if seen.method != "POST" {
            return reply.status(405, &[]);
        }
        let mut sse = reply.sse(&[]);
        let _ = sse.message(r#"{"jsonrpc":"2.0","id":1,"method":null}"#);
        let _ = sse.message(&result(1));
        sse.end();
    });
    let (transport, rx) = connect(&HttpConfig::new(server.url("/mcp")));
    transport.send(&request(1, "tools/list"), soon()).unwrap();
    match next(&rx) {
        Inbound::Invalid(invalid) => {
            assert_eq!(invalid.id(), Some(&RequestId::from(1)));
            assert_eq!(invalid.method_type(), Some("null"));
        }
        other => panic!("expected the invalid request, got {other:?}"),
    }
    expect_response(&rx, 1);
}

#[test]
fn a_response_written_with_a_null_method_answers_the_call() {
    // Some JSON-RPC stacks write every member, absent ones as null.
    let server = serve(|seen, reply| {
        let id = seen.rpc_id();
        match seen.rpc_method().as_deref() {
            Some("initialize") => {
                let body = serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {
                    "protocolVersion": "2025-03-26", "capabilities": {"tools": {}},
                    "serverInfo": {"name": "nulls", "version": "0"}}});
                reply.json(200, &[], &body.to_string())
            }
            Some(_) if !id.is_null() => {
                let body = format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":[]}},"method":null,"error":null}}"#
                );
                reply.json(200, &[], &body)
            }
            _ if seen.method == "POST" => reply.status(202, &[]),
            _ => reply.status(405, &[]),
        }
    });
    let options = umcp::Options::default().with_protocol_mode(umcp::ProtocolMode::Legacy);
    let client = umcp::Client::connect_with_options(HttpConfig::new(server.url("/mcp")), options)
        .expect("connect");
    let tools = client
        .list_tools(None)
        .expect("the response answers tools/list");
    assert!(tools.tools.is_empty());
    client.close();
}
