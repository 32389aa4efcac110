//! In the handshake era over Streamable HTTP, list changes arrive on the session's GET stream.
//! When that stream drops and is opened again, whatever the server sent in between may be
//! lost (servers may replay after `Last-Event-ID`, and need not): every subscription hears of
//! the gap, and cached lists are dropped.

#![cfg(feature = "http")]

use umcp_test_support::http_server;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use umcp::types::SubscriptionFilter;
use umcp::{Client, HttpConfig, Options, ProtocolMode, SubscriptionEvent};

/// Generous bound for anything that should take milliseconds.
const WAIT: Duration = Duration::from_secs(10);

#[test]
fn a_reopened_get_stream_reports_the_gap_and_drops_cached_lists() {
    let (release_tx, release_rx) = crossbeam_channel::bounded::<()>(1);
    let lists = Arc::new(AtomicUsize::new(0));
    let listed = Arc::clone(&lists);
    let server = http_server::serve(move |seen, reply| {
        let session = [("Mcp-Session-Id", "s-1")];
        if seen.method == "GET" {
            let mut sse = reply.sse(&[]);
            if seen.header("last-event-id").is_some() {
                // The reopened stream stays quiet.
                std::thread::sleep(WAIT);
                return;
            }
            // The first stream carries one event with an id, then drops once the test has
            // its subscription.
            let _ = sse.send("retry: 20\n\n");
            let _ = release_rx.recv_timeout(WAIT);
            let log = json!({"jsonrpc": "2.0", "method": "notifications/message",
                "params": {"level": "info", "data": "before the drop"}});
            let _ = sse.send(&format!("id: g-1\ndata: {log}\n\n"));
            sse.end();
            return;
        }
        let body = seen.json();
        let id = body["id"].clone();
        let result = match seen.rpc_method().as_deref() {
            Some("initialize") => json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {"listChanged": true}},
                "serverInfo": {"name": "gap", "version": "1"},
            }),
            Some("tools/list") => {
                let n = listed.fetch_add(1, Ordering::SeqCst) + 1;
                json!({"tools": [{"name": format!("tool-{n}"), "inputSchema": {"type": "object"}}]})
            }
            _ => return reply.status(202, &session),
        };
        let message = json!({"jsonrpc": "2.0", "id": id, "result": result});
        reply.json(200, &session, &message.to_string());
    });
    let options = Options::default()
        .with_protocol_mode(ProtocolMode::Legacy)
        .with_cache_ttl_without_hints(Duration::from_secs(600));
    let client = Client::connect_with_options(HttpConfig::new(server.url("/mcp")), options)
        .expect("connect");
    let names = |client: &Client| -> Vec<String> {
        let tools = client.list_tools(None).expect("tools/list").tools;
        tools.into_iter().map(|t| t.name).collect()
    };
    assert_eq!(names(&client), ["tool-1"]);
    assert_eq!(names(&client), ["tool-1"], "the second list is cached");
    assert_eq!(lists.load(Ordering::SeqCst), 1);

    let sub = client
        .listen(SubscriptionFilter::new().tools())
        .expect("listen");
    release_tx.send(()).expect("release the first stream");
    match sub.recv_timeout(WAIT) {
        Some(SubscriptionEvent::Resubscribed { reason }) => {
            assert!(reason.contains("GET stream"), "{reason}");
            assert!(reason.contains("resumed after event g-1"), "{reason}");
        }
        other => panic!("expected the gap, got {other:?}"),
    }
    assert!(sub.try_recv().is_none(), "one gap, one event");
    // What was cached before the gap is listed again.
    assert_eq!(names(&client), ["tool-2"]);
    assert_eq!(lists.load(Ordering::SeqCst), 2);
    client.close();
}

#[test]
fn a_new_session_after_expiry_reports_the_gap() {
    let expired = Arc::new(AtomicUsize::new(0));
    let expire = Arc::clone(&expired);
    let server = http_server::serve(move |seen, reply| {
        if seen.method == "GET" {
            return reply.status(405, &[]);
        }
        let body = seen.json();
        let id = body["id"].clone();
        let method = seen.rpc_method();
        // The first session ends (404) at the first `tools/list`; the second lives on.
        let session = match method.as_deref() {
            Some("initialize") if expire.load(Ordering::SeqCst) > 0 => "s-2",
            Some("initialize") => "s-1",
            _ => seen.header("mcp-session-id").unwrap_or_default(),
        };
        let session = session.to_owned();
        if method.as_deref() == Some("tools/list") && session == "s-1" {
            expire.fetch_add(1, Ordering::SeqCst);
            return reply.status(404, &[]);
        }
        let result = match method.as_deref() {
            Some("initialize") => json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {"listChanged": true}},
                "serverInfo": {"name": "gap", "version": "1"},
            }),
            Some("tools/list") => json!({"tools": []}),
            _ => return reply.status(202, &[("Mcp-Session-Id", &session)]),
        };
        let message = json!({"jsonrpc": "2.0", "id": id, "result": result});
        reply.json(200, &[("Mcp-Session-Id", &session)], &message.to_string());
    });
    let options = Options::default().with_protocol_mode(ProtocolMode::Legacy);
    let client = Client::connect_with_options(HttpConfig::new(server.url("/mcp")), options)
        .expect("connect");
    let sub = client
        .listen(SubscriptionFilter::new().tools())
        .expect("listen");
    assert!(client
        .list_tools(None)
        .expect("tools/list")
        .tools
        .is_empty());
    assert_eq!(
        expired.load(Ordering::SeqCst),
        1,
        "the first session expired"
    );
    match sub.try_recv() {
        Some(SubscriptionEvent::Resubscribed { reason }) => {
            assert!(reason.contains("new one began"), "{reason}");
        }
        other => panic!("expected the gap, got {other:?}"),
    }
    assert!(sub.try_recv().is_none(), "one gap, one event");
    client.close();
}
