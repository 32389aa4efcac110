//! A server's SSE `retry` sets how long the client waits before opening a stream again, but
//! never so little that an idle client reconnects in a tight loop.
#![cfg(feature = "http")]

use umcp_test_support::http_server;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use umcp::transport::http::{HttpConfig, HttpTransportKind};
use umcp::Client;

use http_server::serve;

/// Every GET stream says `retry: 0`, primes an event id, and ends at once.
#[test]
fn a_retry_of_zero_does_not_make_a_reconnect_storm() {
    let gets = Arc::new(AtomicUsize::new(0));
    let counted = gets.clone();
    let server = serve(move |seen, reply| match seen.method.as_str() {
        "POST" if seen.rpc_method().as_deref() == Some("initialize") => {
            let result = json!({"jsonrpc": "2.0", "id": seen.rpc_id(), "result": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "serverInfo": {"name": "retry", "version": "0"}}});
            reply.json(200, &[("mcp-session-id", "s-1")], &result.to_string());
        }
        "POST" => reply.status(202, &[]),
        "GET" => {
            counted.fetch_add(1, Ordering::SeqCst);
            let mut sse = reply.sse(&[]);
            let _ = sse.send("retry: 0\nid: 1\ndata: \n\n");
            sse.end();
        }
        _ => reply.status(405, &[]),
    });
    let config = HttpConfig::new(server.url("/mcp")).transport(HttpTransportKind::StreamableHttp);
    let options = umcp::Options::default().with_protocol_mode(umcp::ProtocolMode::Legacy);
    let client = Client::connect_with_options(config, options).expect("connect");
    let before = gets.load(Ordering::SeqCst);
    std::thread::sleep(Duration::from_secs(1));
    let in_a_second = gets.load(Ordering::SeqCst) - before;
    // 100 ms at least between attempts: ten in a second, a few more on a slow machine.
    assert!(in_a_second <= 15, "{in_a_second} GET streams in one second");
    assert!(
        in_a_second >= 2,
        "the stream is opened again ({in_a_second})"
    );
    assert!(client.closed().is_none(), "{:?}", client.closed());
}
