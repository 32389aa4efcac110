//! GET and POST event streams: refusal, reconnection and resumption by event ID, readiness and idle
//! timeouts.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::Receiver;
use umcp::jsonrpc::Message;
use umcp::transport::http::{HttpConfig, ReconnectPolicy};
use umcp::transport::{Inbound, SessionEvent};
use umcp::{Error, TimeoutKind};

use crate::http_server::{serve, Server};
use crate::{
    connect, expect_failed, expect_response, next, next_message, request, result, soon, WAIT,
};

fn fast_reconnect() -> ReconnectPolicy {
    ReconnectPolicy::new(3, Duration::from_millis(20), Duration::from_millis(100))
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

/// An event id with a control byte is legal SSE but no valid header value: the stream
/// resumes from the id before it, as if it had never been sent, instead of failing the
/// reconnection inside the HTTP client.
const UNSENDABLE_ID: &str = "id: bad\u{1}id\n";

/// A GET stream that sends event g-1 (then, with `unsendable`, an event "second" whose id is
/// no valid header value) and ends; the stream resumed after it sends "<next>-after-<id>".
fn resuming_get_server(unsendable: bool) -> Server {
    serve(move |seen, reply| {
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
                if unsendable {
                    let _ = sse.send(&format!(
                        "{UNSENDABLE_ID}data: {{\"jsonrpc\":\"2.0\",\"method\":\"second\"}}\n\n"
                    ));
                }
                sse.end();
            }
            Some(id) => {
                let next = if unsendable { "third" } else { "second" };
                let method = format!("{next}-after-{id}");
                let _ = sse.message(&format!(r#"{{"jsonrpc":"2.0","method":"{method}"}}"#));
                std::thread::sleep(WAIT);
            }
        }
    })
}

/// The methods of the next `count` notifications, "gap" for the gap reported after g-1.
fn delivered(rx: &Receiver<Inbound>, count: usize) -> Vec<String> {
    (0..count)
        .map(|_| match next(rx) {
            Inbound::Message(Message::Notification(n)) => n.method,
            Inbound::Gap(reason) => {
                assert!(reason.contains("resumed after event g-1"), "{reason}");
                "gap".to_owned()
            }
            other => panic!("{other:?}"),
        })
        .collect()
}

#[test]
fn get_stream_reconnects_with_its_last_event_id() {
    let server = resuming_get_server(false);
    let config = HttpConfig::new(server.url("/mcp")).reconnect(fast_reconnect());
    let (transport, rx) = connect(&config);
    transport.session_event(SessionEvent::Ready);
    // A second Ready opens no second stream.
    transport.session_event(SessionEvent::Ready);
    // Between the two streams, the gap is reported: the server may not have replayed.
    assert_eq!(delivered(&rx, 3), ["first", "gap", "second-after-g-1"]);
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
    let (transport, rx) = connect(&HttpConfig::new(server.url("/mcp")).standalone_stream(false));
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

#[test]
fn get_stream_reconnects_past_an_event_id_it_cannot_send() {
    let server = resuming_get_server(true);
    let config = HttpConfig::new(server.url("/mcp")).reconnect(fast_reconnect());
    let (transport, rx) = connect(&config);
    transport.session_event(SessionEvent::Ready);
    assert_eq!(
        delivered(&rx, 4),
        ["first", "second", "gap", "third-after-g-1"]
    );
    assert_eq!(server.next_with_method("GET").header("last-event-id"), None);
    let second = server.next_with_method("GET");
    assert_eq!(second.header("last-event-id"), Some("g-1"));
    transport.close();
}

#[test]
fn post_stream_resumes_past_an_event_id_it_cannot_send() {
    let server = serve(|seen, reply| match seen.method.as_str() {
        "POST" => {
            let mut sse = reply.sse(&[]);
            let _ = sse.send("id: p-1\nretry: 20\ndata:\n\n");
            let _ = sse.send(&format!("{UNSENDABLE_ID}data:\n\n"));
            sse.end();
        }
        "GET" if seen.header("last-event-id") == Some("p-1") => {
            let mut sse = reply.sse(&[]);
            let _ = sse.message(&result(2));
            std::thread::sleep(WAIT);
        }
        _ => reply.status(405, &[]),
    });
    let config = HttpConfig::new(server.url("/mcp"))
        .standalone_stream(false)
        .reconnect(fast_reconnect());
    let (transport, rx) = connect(&config);
    transport.send(&request(2, "tools/call"), soon()).unwrap();
    expect_response(&rx, 2);
    let get = server.next_with_method("GET");
    assert_eq!(get.header("last-event-id"), Some("p-1"));
    transport.close();
}

/// A request abandoned while its POST has no answer yet: the event stream the server opens
/// later is not read (nobody waits for it), and its connection is let go at once.
#[test]
fn a_request_abandoned_before_its_post_is_answered_leaves_no_stream_behind() {
    use umcp::jsonrpc::RequestId;

    let (arrived_tx, arrived) = crossbeam_channel::unbounded::<()>();
    let (release_tx, release) = crossbeam_channel::unbounded::<()>();
    let (hung_up_tx, hung_up) = crossbeam_channel::unbounded::<bool>();
    let server = serve(move |_seen, reply| {
        let _ = arrived_tx.send(());
        if release.recv_timeout(WAIT).is_err() {
            return;
        }
        let mut sse = reply.sse(&[]);
        // Keep-alives until the client hangs up, or for as long as the test waits.
        let until = Instant::now() + WAIT;
        let mut gone = false;
        while !gone && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(50));
            gone = sse.send(": keep-alive\n\n").is_err();
        }
        let _ = hung_up_tx.send(gone);
    });
    let (transport, _rx) = connect(&HttpConfig::new(server.url("/mcp")));
    std::thread::scope(|scope| {
        let sending = scope.spawn(|| transport.send(&request(7, "tools/call"), soon()));
        arrived.recv_timeout(WAIT).expect("the POST arrived");
        transport.abandon(&RequestId::from(7));
        release_tx.send(()).expect("the server waits");
        sending
            .join()
            .expect("the sending thread")
            .expect("the POST was answered");
    });
    let gone = hung_up
        .recv_timeout(WAIT * 2)
        .expect("the server ended its stream");
    assert!(gone, "the client read the stream of an abandoned request");
    transport.close();
}
