//! Reopening a broken stateless-era subscription keeps the reader's deadline: a server that
//! sits on the reopening `subscriptions/listen` (or never answers it) costs `recv_timeout`
//! no more than its own timeout, the reopen goes on in the next calls, and one the server
//! never acknowledges, or that fails on the way, is tried again rather than ending the
//! subscription. A reopening given up on or closed is ended on the server once it was sent.

#[cfg(feature = "http")]
use umcp_test_support::http_server;
#[allow(dead_code)] // Only the fake server is used here.
#[path = "../common/memory.rs"]
mod memory;

mod abandon;
#[cfg(feature = "http")]
mod http;
mod transient;

use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use memory::{FakeServer, Peer};
use serde_json::{json, Value};
use umcp::jsonrpc::{Message, Request};
use umcp::types::{ServerNotification, SubscriptionFilter};
use umcp::{Client, Error, Options, Subscription, SubscriptionEvent};

/// Generous bound for anything that should take milliseconds.
const WAIT: Duration = Duration::from_secs(10);

/// What the tests read with, and the most a read of it may take: well below the request
/// timeouts here, generous for a shared machine.
const READ: Duration = Duration::from_millis(200);
const READ_BOUND: Duration = Duration::from_millis(1500);

/// A gate the fake server's handlers wait at until the test opens it.
#[derive(Clone, Default)]
struct Gate(Arc<(Mutex<bool>, Condvar)>);

impl Gate {
    fn open(&self) {
        *self.0 .0.lock().unwrap() = true;
        self.0 .1.notify_all();
    }

    /// Waits until open, at most `timeout`; whether it opened.
    fn wait(&self, timeout: Duration) -> bool {
        let guard = self.0 .0.lock().unwrap();
        let (guard, _) = self
            .0
             .1
            .wait_timeout_while(guard, timeout, |open| !*open)
            .unwrap();
        *guard
    }
}

/// The ids of the `subscriptions/listen` requests the server received, in order.
type Listens = Arc<Mutex<Vec<Value>>>;

fn acknowledge(peer: &Peer, id: &Value) {
    peer.notify(
        "notifications/subscriptions/acknowledged",
        json!({"_meta": {"io.modelcontextprotocol/subscriptionId": id},
               "notifications": {"toolsListChanged": true}}),
    );
}

/// A stateless server whose `n`-th listen request (from 1) is acknowledged once `answers(n)`
/// returns `true` (it may wait first); `tools/call` named `poke` sends a tools-list change
/// on the newest listen stream, `break` breaks that stream.
fn stateless_server(
    answers: impl Fn(usize) -> bool + Send + Sync + 'static,
) -> (FakeServer, Listens) {
    stateless_server_with(move |peer, request, n| {
        if answers(n) {
            acknowledge(peer, &serde_json::to_value(&request.id).unwrap());
        }
    })
}

/// As [`stateless_server`], with `on_listen(peer, request, n)` doing what it likes with the
/// `n`-th listen request.
fn stateless_server_with(
    on_listen: impl Fn(&Peer, &Request, usize) + Send + Sync + 'static,
) -> (FakeServer, Listens) {
    let server = FakeServer::new();
    server.on("server/discover", |_, _| {
        Some(json!({
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {"listChanged": true}},
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "fake", "version": "2"}},
        }))
    });
    let listens = Listens::default();
    let seen = Arc::clone(&listens);
    server.on("subscriptions/listen", move |peer, request: &Request| {
        let id = serde_json::to_value(&request.id).unwrap();
        let n = {
            let mut seen = seen.lock().unwrap();
            seen.push(id.clone());
            seen.len()
        };
        on_listen(peer, request, n);
        None
    });
    let newest = Arc::clone(&listens);
    server.on("tools/call", move |peer, request| {
        let id = newest.lock().unwrap().last().cloned().unwrap();
        match request.params.as_ref().unwrap()["name"].as_str() {
            Some("poke") => peer.notify(
                "notifications/tools/list_changed",
                json!({"_meta": {"io.modelcontextprotocol/subscriptionId": id}}),
            ),
            Some("break") => {
                let id = serde_json::from_value(id).unwrap();
                peer.fail(&id, Error::ResponseLost("the stream broke".into()));
            }
            _ => {}
        }
        Some(json!({"resultType": "complete", "content": []}))
    });
    (server, listens)
}

/// Opens a subscription whose stream delivered an event (so it is reopened at once when it
/// breaks), then breaks that stream.
fn broken_subscription(client: &Client) -> Subscription {
    let sub = client
        .listen(SubscriptionFilter::new().tools())
        .expect("listen");
    expect_tools_changed(client, &sub);
    client.call_tool("break", json!({})).expect("break");
    sub
}

fn expect_tools_changed(client: &Client, sub: &Subscription) {
    client.call_tool("poke", json!({})).expect("poke");
    match sub.recv_timeout(WAIT) {
        Some(SubscriptionEvent::Notification(ServerNotification::ToolListChanged)) => {}
        other => panic!(
            "expected tools/list_changed, got {other:?} ({:?})",
            sub.ended()
        ),
    }
}

/// Reads `sub` until it reports being opened again, the subscription staying alive meanwhile.
fn await_reopening(sub: &Subscription) {
    let until = Instant::now() + WAIT;
    loop {
        assert!(Instant::now() < until, "never reopened");
        match read(sub) {
            Some(SubscriptionEvent::Resubscribed { .. }) => break,
            None => assert!(sub.ended().is_none(), "{:?}", sub.ended()),
            Some(other) => panic!("expected the reopening, got {other:?}"),
        }
    }
}

/// Reads with `recv_timeout(READ)`, which must keep its deadline whatever the server does.
fn read(sub: &Subscription) -> Option<SubscriptionEvent> {
    let started = Instant::now();
    let event = sub.recv_timeout(READ);
    let took = started.elapsed();
    assert!(took < READ_BOUND, "recv_timeout({READ:?}) took {took:?}");
    event
}

#[test]
fn recv_timeout_keeps_its_deadline_while_the_server_sits_on_the_reopening_listen() {
    let gate = Gate::default();
    let held = gate.clone();
    let (server, listens) = stateless_server(move |n| n == 1 || held.wait(WAIT));
    let options = Options::default().with_request_timeout(Duration::from_secs(5));
    let client = Client::connect_with_options(server, options).expect("connect");
    let sub = broken_subscription(&client);
    for _ in 0..3 {
        let event = read(&sub);
        assert!(event.is_none(), "{event:?}");
    }
    let started = Instant::now();
    assert!(sub.try_recv().is_none());
    assert!(
        started.elapsed() < READ_BOUND,
        "try_recv took {:?}",
        started.elapsed()
    );
    assert!(sub.ended().is_none(), "{:?}", sub.ended());
    assert_eq!(
        listens.lock().unwrap().len(),
        2,
        "one reopening, still waited for"
    );

    // The server answers at last: a later call reports the reopening, and events flow.
    gate.open();
    match sub.recv_timeout(WAIT) {
        Some(SubscriptionEvent::Resubscribed { reason }) => {
            assert!(reason.contains("the stream broke"), "{reason}");
        }
        other => panic!("expected the reopening, got {other:?} ({:?})", sub.ended()),
    }
    expect_tools_changed(&client, &sub);
    assert_eq!(listens.lock().unwrap().len(), 2);
}

#[test]
fn a_reopening_listen_never_acknowledged_is_abandoned_and_tried_again() {
    // The second listen request is never answered; the third is.
    let (server, listens) = stateless_server(|n| n != 2);
    let options = Options::default().with_request_timeout(Duration::from_secs(1));
    let client = Client::connect_with_options(server.clone(), options).expect("connect");
    let sub = broken_subscription(&client);
    await_reopening(&sub);
    let ids = listens.lock().unwrap().clone();
    assert_eq!(ids.len(), 3, "{ids:?}");
    // The abandoned request was cancelled on the server.
    let cancelled = |server: &FakeServer| {
        server
            .notifications("notifications/cancelled")
            .iter()
            .any(|params| params["requestId"] == ids[1])
    };
    let until = Instant::now() + WAIT;
    while !cancelled(&server) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        cancelled(&server),
        "listen request {} not cancelled",
        ids[1]
    );
    expect_tools_changed(&client, &sub);
}
