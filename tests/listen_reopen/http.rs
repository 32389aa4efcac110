//! The same over Streamable HTTP, where the reopening POST itself waits for the server.

use super::*;
use http_server::{Reply, Server, SseWriter};
use umcp::HttpConfig;

/// A stateless HTTP server whose `n`-th listen request (from 1) is handed to
/// `on_listen(n, id, reply)`; every other request is answered as a stateless server does.
fn serve(on_listen: impl Fn(usize, &Value, Reply) + Send + Sync + 'static) -> (Server, Listens) {
    let listens = Listens::default();
    let seen = Arc::clone(&listens);
    let server = http_server::serve(move |request, reply| {
        let id = request.rpc_id();
        match request.rpc_method().as_deref() {
            Some("server/discover") => {
                let result = json!({"supportedVersions": ["2026-07-28"],
                    "capabilities": {"tools": {"listChanged": true}},
                    "resultType": "complete"});
                let message = json!({"jsonrpc": "2.0", "id": id, "result": result});
                reply.json(200, &[], &message.to_string());
            }
            Some("subscriptions/listen") => {
                let n = {
                    let mut seen = seen.lock().unwrap();
                    seen.push(id.clone());
                    seen.len()
                };
                on_listen(n, &id, reply);
            }
            _ => reply.status(202, &[]),
        }
    });
    (server, listens)
}

/// Opens the stream of listen request `id`: its acknowledgement, then a tools-list change.
fn listen_stream(id: &Value, reply: Reply) -> SseWriter {
    let tag = json!({"io.modelcontextprotocol/subscriptionId": id});
    let ack = json!({"jsonrpc": "2.0",
        "method": "notifications/subscriptions/acknowledged",
        "params": {"_meta": tag, "notifications": {"toolsListChanged": true}}});
    let change = json!({"jsonrpc": "2.0",
        "method": "notifications/tools/list_changed",
        "params": {"_meta": tag}});
    let mut sse = reply.sse(&[]);
    let _ = sse.message(&ack.to_string());
    let _ = sse.message(&change.to_string());
    sse
}

/// Keeps a stream open with keep-alives until the client hangs up (`true`) or [`WAIT`] passes.
fn keep_alive(mut sse: SseWriter) -> bool {
    let until = Instant::now() + WAIT;
    while Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
        if sse.send(": keep-alive\n\n").is_err() {
            return true;
        }
    }
    false
}

/// A subscription whose first stream delivered its tools-list change, and was then ended by
/// the server (`broken` opened), without a response.
fn subscribe(server: &Server, request_timeout: Duration) -> (Client, Subscription) {
    let options = Options::default().with_request_timeout(request_timeout);
    let client = Client::connect_with_options(HttpConfig::new(server.url("/mcp")), options)
        .expect("connect");
    let sub = client
        .listen(SubscriptionFilter::new().tools())
        .expect("listen");
    assert!(matches!(
        sub.recv_timeout(WAIT),
        Some(SubscriptionEvent::Notification(
            ServerNotification::ToolListChanged
        ))
    ));
    (client, sub)
}

/// Reads until the server received `count` listen requests; none of the reads has an event.
fn read_until_listens(sub: &Subscription, listens: &Listens, count: usize) {
    let until = Instant::now() + WAIT;
    while listens.lock().unwrap().len() < count {
        assert!(Instant::now() < until, "never reopened");
        let event = read(sub);
        assert!(event.is_none(), "{event:?}");
    }
}

#[test]
fn recv_timeout_keeps_its_deadline_while_the_reopening_post_goes_unanswered() {
    let gate = Gate::default();
    let held = gate.clone();
    let broken = Gate::default();
    let breaks = broken.clone();
    let (server, listens) = serve(move |n, id, reply| {
        // The reopening POST gets no status line until the gate opens.
        if n > 1 && !held.wait(WAIT) {
            return;
        }
        let sse = listen_stream(id, reply);
        // The first stream ends without a response when the test says so; the second
        // stays open.
        if n == 1 {
            breaks.wait(WAIT);
            sse.end();
        } else {
            keep_alive(sse);
        }
    });
    let (client, sub) = subscribe(&server, Duration::from_secs(5));
    broken.open();
    read_until_listens(&sub, &listens, 2);
    for _ in 0..3 {
        let event = read(&sub);
        assert!(event.is_none(), "{event:?}");
    }
    assert!(sub.ended().is_none(), "{:?}", sub.ended());

    gate.open();
    match sub.recv_timeout(WAIT) {
        Some(SubscriptionEvent::Resubscribed { .. }) => {}
        other => panic!("expected the reopening, got {other:?} ({:?})", sub.ended()),
    }
    assert!(matches!(
        sub.recv_timeout(WAIT),
        Some(SubscriptionEvent::Notification(
            ServerNotification::ToolListChanged
        ))
    ));
    client.close();
}

#[test]
fn closing_while_the_reopening_post_is_unanswered_leaves_no_stream_behind() {
    let gate = Gate::default();
    let held = gate.clone();
    let broken = Gate::default();
    let breaks = broken.clone();
    let (hung_up_tx, hung_up) = crossbeam_channel::unbounded();
    let (server, listens) = serve(move |n, id, reply| {
        if n == 1 {
            let sse = listen_stream(id, reply);
            breaks.wait(WAIT);
            sse.end();
            return;
        }
        // Answered once the subscription was closed: a stream nobody should read.
        if held.wait(WAIT) {
            let _ = hung_up_tx.send(keep_alive(listen_stream(id, reply)));
        }
    });
    let (client, sub) = subscribe(&server, Duration::from_secs(5));
    broken.open();
    read_until_listens(&sub, &listens, 2);
    drop(sub);
    gate.open();
    let hung_up = hung_up
        .recv_timeout(WAIT * 2)
        .expect("the server answered the reopening");
    assert!(
        hung_up,
        "the client read the stream of a closed subscription"
    );
    client.close();
}

#[test]
fn a_reopening_answered_with_a_server_error_is_tried_again() {
    let broken = Gate::default();
    let breaks = broken.clone();
    let (server, listens) = serve(move |n, id, reply| match n {
        1 => {
            let sse = listen_stream(id, reply);
            breaks.wait(WAIT);
            sse.end();
        }
        // A proxy while the server restarts.
        2 => reply.status(503, &[]),
        _ => {
            keep_alive(listen_stream(id, reply));
        }
    });
    let (client, sub) = subscribe(&server, Duration::from_secs(5));
    broken.open();
    await_reopening(&sub);
    assert_eq!(listens.lock().unwrap().len(), 3);
    assert!(matches!(
        sub.recv_timeout(WAIT),
        Some(SubscriptionEvent::Notification(
            ServerNotification::ToolListChanged
        ))
    ));
    client.close();
}
