//! A Streamable HTTP server that is gone, its port closed with nothing listening any more:
//! the connection reports itself closed within the first reconnection attempt, and every call,
//! the one in flight and the next one, fails with `Error::Closed`. The reconnection policy's
//! full series of attempts (half a minute by default) is for servers that are still there.
#![cfg(feature = "http")]

#[path = "common/hostile.rs"]
mod hostile;

use std::time::{Duration, Instant};

use crossbeam_channel::Sender;
use serde_json::json;
use umcp::transport::http::{HttpConfig, HttpTransportKind};
use umcp::types::ProgressNotificationParams;
use umcp::{Client, Error, Options, ProtocolMode, RequestOptions};

use hostile::{hostile, Hostile};

/// A request timeout far beyond every bound below: the calls must not end by it.
const TIMEOUT: Duration = Duration::from_secs(30);
/// How soon a gone server must be noticed: the first reconnection attempt comes after about a
/// second (the default policy); the rest is margin for a busy machine.
const NOTICED: Duration = Duration::from_secs(5);
/// How long the server holds a stream open when nobody stops it: far longer than any bound.
const FOREVER: Duration = Duration::from_secs(60);

/// A 2025-11-25 server with session `s-1` whose `tools/call` answers with an event stream that
/// carries one progress notification (event id `e-1`, so the stream can be resumed) and then
/// stays open. With `get_stream` it opens the standalone GET stream too, else refuses it.
/// Dropping it closes its listener and every connection, as a killed process does.
fn server(get_stream: bool) -> Hostile {
    hostile(
        move |req, conn| match (req.method.as_str(), req.rpc_method().as_str()) {
            ("POST", "initialize") => conn.result(
                req,
                &[("mcp-session-id", "s-1")],
                json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "gone", "version": "0"}
                }),
            ),
            ("POST", "tools/call") => {
                let token = req.json()["params"]["_meta"]["progressToken"].clone();
                let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress",
                    "params": {"progressToken": token, "progress": 1, "total": 10}});
                if conn.head(200, "text/event-stream", None)
                    && conn.raw(format!("id: e-1\nevent: message\ndata: {progress}\n\n").as_bytes())
                {
                    conn.hold(FOREVER);
                }
            }
            ("POST", method) if method.starts_with("notifications/") => {
                conn.reply(202, &[], "text/plain", "")
            }
            ("POST", _) => conn.result(req, &[], json!({})),
            ("GET", _) if get_stream => {
                if conn.head(200, "text/event-stream", None) && conn.raw(b": open\n\n") {
                    conn.hold(FOREVER);
                }
            }
            ("GET", _) => conn.reply(405, &[], "text/plain", ""),
            _ => conn.reply(200, &[], "text/plain", ""),
        },
    )
}

fn connect(server: &Hostile) -> Client {
    let config = HttpConfig::new(&server.url).transport(HttpTransportKind::StreamableHttp);
    let options = Options::default()
        .with_request_timeout(TIMEOUT)
        .with_protocol_mode(ProtocolMode::Legacy);
    Client::connect_with(config, options).expect("connect")
}

/// Asserts that `error` is the end of the connection because the server is gone.
fn assert_gone(error: &Error) {
    match error {
        Error::Closed(closed) => assert!(closed.reason.contains("gone"), "{closed}"),
        other => panic!("expected Error::Closed, got {other:?}"),
    }
}

/// A tool call that sends its first progress to `progressed`.
fn call_with_progress(client: &Client, progressed: Sender<()>) -> umcp::Result<()> {
    let options = RequestOptions::default().with_progress(move |_: &ProgressNotificationParams| {
        let _ = progressed.send(());
    });
    client
        .call_tool_with("slow", json!({}), &options)
        .map(|_| ())
}

#[test]
fn a_call_streaming_progress_fails_as_closed_soon_after_its_server_is_gone() {
    // No GET stream: the call's own stream, resumed with Last-Event-ID, is what finds the
    // port closed.
    let server = server(false);
    let client = connect(&server);
    let (progressed_tx, progressed) = crossbeam_channel::bounded(1);
    std::thread::scope(|scope| {
        let call = scope.spawn(|| call_with_progress(&client, progressed_tx));
        progressed
            .recv_timeout(NOTICED)
            .expect("the call's progress arrived");
        let killed = Instant::now();
        drop(server);
        let outcome = call.join().expect("the calling thread");
        let took = killed.elapsed();
        assert_gone(&outcome.expect_err("the server is gone"));
        assert!(took < NOTICED, "the call ended {took:?} after the server");
    });
    let closed = client.closed().expect("the client reports itself closed");
    assert!(closed.reason.contains("gone"), "{closed}");
    assert_gone(&client.ping().expect_err("closed"));
}

#[test]
fn an_idle_connection_whose_server_is_gone_reports_itself_closed_soon() {
    // The GET stream drops with the server, and reopening it finds the port closed.
    let server = server(true);
    let client = connect(&server);
    client.ping().expect("ping while the server runs");
    let killed = Instant::now();
    drop(server);
    let deadline = killed + NOTICED;
    // `closed()` is a state with nothing to wait on: it is looked at until the bound.
    while client.closed().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let closed = client
        .closed()
        .unwrap_or_else(|| panic!("not reported closed {NOTICED:?} after the server went"));
    assert!(closed.reason.contains("gone"), "{closed}");
    assert_gone(&client.ping().expect_err("closed"));
}

#[test]
fn the_first_call_after_an_idle_death_fails_as_closed() {
    // No GET stream, so nothing notices before the call does.
    let server = server(false);
    let client = connect(&server);
    client.ping().expect("ping while the server runs");
    drop(server);
    assert!(client.closed().is_none(), "nothing noticed yet");
    let started = Instant::now();
    assert_gone(&client.ping().expect_err("the server is gone"));
    assert!(started.elapsed() < NOTICED, "{:?}", started.elapsed());
    assert!(
        client.closed().is_some(),
        "the client reports itself closed"
    );
    assert_gone(&client.ping().expect_err("still closed"));
}
