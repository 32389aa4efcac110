//! Session expiry as servers report it: the spec's 404, and the 400 of the TypeScript SDK's
//! servers (server-everything) whose body says the session id is not valid.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use umcp::transport::http::{HttpConfig, HttpTransportKind, ReconnectPolicy};
use umcp::transport::{Inbound, SessionEvent};
use umcp::{Client, Error};

use crate::http_server::serve;
use crate::{connect, expect_response, request, result, soon, WAIT};

/// What the TypeScript SDK's server answers a request whose session id it does not know.
const NO_VALID_SESSION: &str = r#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}"#;

#[test]
fn a_400_about_the_session_means_expired_and_any_other_400_is_plain_http() {
    let server = serve(|seen, reply| {
        let id = seen.rpc_id().as_i64().unwrap_or(0);
        let session = seen.header("mcp-session-id");
        match (seen.rpc_method().as_deref(), session) {
            (Some("initialize"), _) => reply.json(200, &[("mcp-session-id", "old")], &result(id)),
            (Some("resources/list"), Some("old")) => {
                let body = json!({"jsonrpc": "2.0", "id": null,
                    "error": {"code": -32600, "message": "Bad Request: unknown cursor"}});
                reply.json(400, &[], &body.to_string())
            }
            _ => reply.json(400, &[], NO_VALID_SESSION),
        }
    });
    let (transport, rx) = connect(&HttpConfig::new(server.url("/mcp")).standalone_stream(false));
    transport.send(&request(1, "initialize"), soon()).unwrap();
    expect_response(&rx, 1);
    // A 400 about something else leaves the session alone.
    let err = transport
        .send(&request(2, "resources/list"), soon())
        .unwrap_err();
    assert_eq!(err.http_status(), Some(400), "{err:?}");
    let err = transport
        .send(&request(3, "tools/list"), soon())
        .unwrap_err();
    assert!(matches!(err, Error::SessionExpired), "{err:?}");
    // The session is forgotten: the next request goes without it, and its 400 is plain HTTP
    // whatever the body says.
    let err = transport
        .send(&request(4, "tools/list"), soon())
        .unwrap_err();
    match err {
        Error::Http(e) => {
            assert_eq!(e.status, 400);
            assert!(e.body.contains("No valid session ID"), "{}", e.body);
        }
        other => panic!("{other:?}"),
    }
    let sessions: Vec<Option<String>> = (0..4)
        .map(|_| server.next().header("mcp-session-id").map(str::to_owned))
        .collect();
    let old = Some("old".to_owned());
    assert_eq!(sessions, [None, old.clone(), old, None]);
}

/// The GET stream of a session the server forgot is refused with the 400: that is no server
/// gone (the connection stays open), but an expired session for the next request to find.
#[test]
fn a_get_stream_reopened_into_a_400_about_the_session_leaves_the_connection_open() {
    let server = serve(|seen, reply| {
        let id = seen.rpc_id().as_i64().unwrap_or(0);
        match (seen.method.as_str(), seen.header("last-event-id")) {
            ("GET", None) => {
                // The first stream drops: the server restarted and forgot its sessions.
                let mut sse = reply.sse(&[]);
                let _ = sse.send("id: g-1\nretry: 20\ndata:\n\n");
                sse.end();
            }
            ("GET", Some(_)) => reply.json(400, &[], NO_VALID_SESSION),
            _ if seen.rpc_method().as_deref() == Some("initialize") => {
                reply.json(200, &[("mcp-session-id", "old")], &result(id))
            }
            _ => reply.json(400, &[], NO_VALID_SESSION),
        }
    });
    let policy = ReconnectPolicy::new(3, Duration::from_millis(20), Duration::from_millis(100));
    let (transport, rx) = connect(&HttpConfig::new(server.url("/mcp")).reconnect(policy));
    transport.send(&request(1, "initialize"), soon()).unwrap();
    expect_response(&rx, 1);
    transport.session_event(SessionEvent::Ready);
    let reopened = server.next_with_method("GET");
    let reopened = match reopened.header("last-event-id") {
        Some(_) => reopened,
        None => server.next_with_method("GET"),
    };
    assert_eq!(reopened.header("mcp-session-id"), Some("old"));
    match rx.recv_timeout(Duration::from_millis(500)) {
        Err(_) | Ok(Inbound::Gap(_)) => {}
        Ok(other) => panic!("the connection did not stay open: {other:?}"),
    }
    let err = transport
        .send(&request(2, "tools/list"), soon())
        .unwrap_err();
    assert!(matches!(err, Error::SessionExpired), "{err:?}");
    assert!(
        server
            .next_within(Duration::from_millis(300))
            .is_some_and(|s| s.method == "POST"),
        "the refused GET is not retried"
    );
    transport.close();
}

/// A server like server-everything: it knows only the sessions it issued since it last
/// started, answers any other session id with its 400, and offers a GET stream per session
/// that ends when it restarts.
struct Restarting {
    sessions: AtomicUsize,
    current: Mutex<Option<String>>,
    /// Ends the open GET stream.
    restart: Mutex<Option<crossbeam_channel::Sender<()>>>,
}

#[test]
fn a_plain_client_reinitializes_after_a_restart_answered_with_400() {
    let state = Arc::new(Restarting {
        sessions: AtomicUsize::new(0),
        current: Mutex::new(None),
        restart: Mutex::new(None),
    });
    let server_state = Arc::clone(&state);
    let server = serve(move |seen, reply| {
        let state = &server_state;
        let session = seen.header("mcp-session-id").map(str::to_owned);
        let method = seen.rpc_method();
        if method.as_deref() == Some("initialize") {
            let id = format!("s-{}", state.sessions.fetch_add(1, Ordering::SeqCst) + 1);
            *state.current.lock().unwrap() = Some(id.clone());
            let body = json!({"jsonrpc": "2.0", "id": seen.rpc_id(), "result": {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "restarting", "version": "0"}
            }});
            return reply.json(200, &[("mcp-session-id", &id)], &body.to_string());
        }
        if session.is_none() || session != *state.current.lock().unwrap() {
            return reply.json(400, &[], NO_VALID_SESSION);
        }
        match (seen.method.as_str(), method.as_deref()) {
            ("GET", _) => {
                let (restart_tx, restart_rx) = crossbeam_channel::bounded(1);
                *state.restart.lock().unwrap() = Some(restart_tx);
                let mut sse = reply.sse(&[]);
                let _ = sse.send("id: e-1\nretry: 20\ndata:\n\n");
                let _ = restart_rx.recv_timeout(WAIT);
            }
            (_, Some("tools/list")) => {
                let body = json!({"jsonrpc": "2.0", "id": seen.rpc_id(), "result": {
                    "tools": [{"name": format!("on-{}", session.unwrap_or_default()),
                               "inputSchema": {"type": "object"}}]
                }});
                reply.json(200, &[], &body.to_string())
            }
            _ => reply.status(202, &[]),
        }
    });
    let config = HttpConfig::new(server.url("/mcp"))
        .transport(HttpTransportKind::StreamableHttp)
        .reconnect(ReconnectPolicy::new(
            3,
            Duration::from_millis(20),
            Duration::from_millis(100),
        ));
    let client = Client::connect(config).expect("connect");
    let names = |client: &Client| -> Vec<String> {
        let tools = client.list_tools(None).expect("tools/list").tools;
        tools.into_iter().map(|t| t.name).collect()
    };
    assert_eq!(names(&client), ["on-s-1"]);

    // The server restarts: it forgets every session, and its GET stream ends.
    *state.current.lock().unwrap() = None;
    let open_stream = state.restart.lock().unwrap().take();
    if let Some(end) = open_stream {
        let _ = end.send(());
    }
    assert_eq!(names(&client), ["on-s-2"], "re-initialized and retried");
    assert!(client.closed().is_none(), "{:?}", client.closed());
    assert_eq!(state.sessions.load(Ordering::SeqCst), 2);
    client.close();
}

#[test]
fn waiting_for_a_silent_get_stream_ends_by_the_startup_timeout() {
    // The GET that opens the stream is accepted and never answered.
    let server = serve(|seen, reply| match seen.rpc_method().as_deref() {
        Some("initialize") => {
            let id = seen.rpc_id();
            let body = json!({"jsonrpc": "2.0", "id": id, "result": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "serverInfo": {"name": "silent-get", "version": "0"}}});
            reply.json(200, &[("mcp-session-id", "s")], &body.to_string())
        }
        _ if seen.method == "GET" => {
            std::thread::sleep(Duration::from_secs(30));
            reply.status(405, &[]);
        }
        _ => reply.status(202, &[]),
    });
    let config = HttpConfig::new(server.url("/mcp"))
        .transport(HttpTransportKind::StreamableHttp)
        .connect_timeout(Duration::from_secs(30));
    let options = umcp::Options::default()
        .with_protocol_mode(umcp::ProtocolMode::Legacy)
        .with_startup_timeout(Duration::from_secs(2));
    let started = std::time::Instant::now();
    let client = Client::connect_with_options(config, options);
    let took = started.elapsed();
    assert!(took < Duration::from_secs(10), "connecting took {took:?}");
    // The handshake itself was done: the client works without the stream.
    let client = client.expect("connected without the GET stream");
    assert_eq!(client.server_info().name, "silent-get");
}
