//! Subscriptions against servers that do not play along: subscribe and unsubscribe requests
//! never answered (handshake era), streams acknowledged and dropped at once, and large
//! notifications nobody reads (stateless era). Each costs the client a bounded time, number
//! of requests and memory.

#[allow(dead_code)] // Only the fake server is used here.
#[path = "common/memory.rs"]
mod memory;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use memory::FakeServer;
use serde_json::{json, Value};
use umcp::types::{ServerNotification, SubscriptionFilter};
use umcp::{Client, Error, Options, ProtocolMode, SubscriptionEvent, NOTIFICATION_BYTES};

const URIS: [&str; 4] = ["x://a", "x://b", "x://c", "x://d"];

/// A handshake-era server offering resource subscriptions, answering `resources/subscribe`
/// when `answers_subscribe`, and never `resources/unsubscribe`.
fn legacy_server(answers_subscribe: bool) -> FakeServer {
    let server = FakeServer::new();
    server.init_result.lock().unwrap()["capabilities"] = json!({"resources": {"subscribe": true}});
    server.on("resources/subscribe", move |_, _| {
        answers_subscribe.then(|| json!({}))
    });
    server.on("resources/unsubscribe", |_, _| None);
    server
}

fn filter() -> SubscriptionFilter {
    URIS.iter().fold(SubscriptionFilter::new(), |filter, uri| {
        filter.resource(*uri)
    })
}

#[test]
fn unanswered_subscribes_cost_one_request_timeout_together() {
    let server = legacy_server(false);
    let options = Options::default()
        .with_protocol_mode(ProtocolMode::Legacy)
        .with_request_timeout(Duration::from_secs(1));
    let client = Client::connect_with_options(server, options).expect("connect");
    let started = Instant::now();
    let sub = client.listen(filter()).expect("listen");
    let took = started.elapsed();
    // Each used to wait 5 s on its own: 20 s for four.
    assert!(took < Duration::from_secs(4), "listen took {took:?}");
    assert!(sub.acknowledged().resource_subscriptions.is_empty());
}

#[test]
fn unanswered_unsubscribes_cost_one_close_deadline_together() {
    let server = legacy_server(true);
    let options = Options::default().with_protocol_mode(ProtocolMode::Legacy);
    let client = Client::connect_with_options(server, options).expect("connect");
    let sub = client.listen(filter()).expect("listen");
    assert_eq!(sub.acknowledged().resource_subscriptions.len(), URIS.len());
    let started = Instant::now();
    drop(sub);
    let took = started.elapsed();
    // 5 s for all of them (it was 5 s each).
    assert!(took < Duration::from_secs(9), "closing took {took:?}");
}

/// A stateless server offering tools and resource subscriptions, with no other handler.
fn stateless_server() -> FakeServer {
    let server = FakeServer::new();
    server.on("server/discover", |_, _| {
        Some(json!({
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}, "resources": {"subscribe": true}},
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "fake", "version": "2"}},
        }))
    });
    server
}

/// Acknowledges the listen request `id` for `x://a`; its id as JSON, the updates' tag.
fn acknowledge(peer: &memory::Peer, id: &umcp::jsonrpc::RequestId) -> Value {
    let tag = serde_json::to_value(id).unwrap();
    peer.notify(
        "notifications/subscriptions/acknowledged",
        json!({"_meta": {"io.modelcontextprotocol/subscriptionId": tag},
               "notifications": {"resourceSubscriptions": ["x://a"]}}),
    );
    tag
}

/// A stateless server that acknowledges every `subscriptions/listen` and, unless `keep`, drops
/// its stream at once; it counts the listen requests, and sends `updates` tagged
/// `resources/updated` of `padding` bytes each on `tools/call`.
fn modern_server(keep: bool, updates: usize, padding: usize) -> (FakeServer, Arc<AtomicUsize>) {
    let server = stateless_server();
    let listens = Arc::new(AtomicUsize::new(0));
    let counter = listens.clone();
    let last = Arc::new(std::sync::Mutex::new(Value::Null));
    let tag = last.clone();
    server.on("subscriptions/listen", move |peer, request| {
        counter.fetch_add(1, Ordering::SeqCst);
        *tag.lock().unwrap() = acknowledge(peer, &request.id);
        if !keep {
            let lost = Error::ResponseLost("the stream ended before the response".into());
            peer.fail(&request.id, lost);
        }
        None
    });
    server.on("tools/call", move |peer, _| {
        let id = last.lock().unwrap().clone();
        let pad = "x".repeat(padding);
        for _ in 0..updates {
            peer.notify(
                "notifications/resources/updated",
                json!({"_meta": {"io.modelcontextprotocol/subscriptionId": id, "pad": pad},
                       "uri": "x://a"}),
            );
        }
        Some(json!({"resultType": "complete", "content": []}))
    });
    (server, listens)
}

/// Connects to `server` with `options`, subscribes to `x://a`, and has the server send its
/// updates; returns once every one of them was routed.
fn poked(server: FakeServer, options: Options) -> (Client, umcp::Subscription) {
    let client = Client::connect_with_options(server, options).expect("connect");
    let sub = client
        .listen(SubscriptionFilter::new().resource("x://a"))
        .expect("listen");
    client.call_tool("poke", json!({})).expect("poke");
    client.ping().expect("ping"); // By then every update was routed.
    (client, sub)
}

#[test]
fn a_stream_dropped_as_soon_as_it_opens_is_reopened_after_growing_pauses() {
    let (server, listens) = modern_server(false, 0, 0);
    let client = Client::connect(server).expect("connect");
    let sub = client
        .listen(SubscriptionFilter::new().resource("x://a"))
        .expect("listen");
    let started = Instant::now();
    let mut resubscribed = 0;
    while started.elapsed() < Duration::from_secs(2) {
        if let Some(SubscriptionEvent::Resubscribed { .. }) =
            sub.recv_timeout(Duration::from_millis(50))
        {
            resubscribed += 1;
        }
    }
    // Pauses of 0.1, 0.2, 0.4, 0.8 s: a handful of reopens in 2 s, not hundreds.
    let opened = listens.load(Ordering::SeqCst);
    assert!((2..=8).contains(&opened), "{opened} listen requests in 2 s");
    assert!(resubscribed >= 1 && resubscribed < opened, "{resubscribed}");
    assert!(sub.ended().is_none(), "{:?}", sub.ended());
}

#[test]
fn unread_subscription_events_are_bounded_by_bytes() {
    let (server, _) = modern_server(true, 40, 1 << 20);
    let (_client, sub) = poked(server, Options::default());
    // What was dropped is reported first, as a gap.
    assert!(matches!(
        sub.try_recv(),
        Some(SubscriptionEvent::Resubscribed { .. })
    ));
    let mut kept = 0;
    while let Some(event) = sub.try_recv() {
        assert!(matches!(
            event,
            SubscriptionEvent::Notification(ServerNotification::ResourceUpdated(_))
        ));
        kept += 1;
    }
    assert_eq!(kept + usize::try_from(sub.dropped()).unwrap(), 40);
    let budget = NOTIFICATION_BYTES / (1 << 20);
    assert!(kept <= budget, "{kept} events of 1 MiB kept");
    assert!(kept >= budget / 2, "only {kept} kept");
}

#[test]
fn a_subscription_under_an_unlimited_notification_capacity_allocates_nothing_up_front() {
    let (server, _) = modern_server(true, 3, 10);
    let options = Options::default().with_notification_capacity(usize::MAX);
    let (_client, sub) = poked(server, options);
    assert_eq!(std::iter::from_fn(|| sub.try_recv()).count(), 3);
}

#[test]
fn a_listen_under_an_unlimited_request_timeout_neither_panics_nor_hangs() {
    // Stateless era: acknowledged, then followed as usual.
    let (server, _) = modern_server(true, 2, 10);
    let options = Options::default().with_request_timeout(Duration::MAX);
    let (_client, sub) = poked(server, options);
    assert_eq!(std::iter::from_fn(|| sub.try_recv()).count(), 2);

    // Handshake era, with resource subscriptions.
    let options = Options::default()
        .with_protocol_mode(ProtocolMode::Legacy)
        .with_request_timeout(Duration::MAX);
    let client = Client::connect_with_options(legacy_server(true), options).expect("connect");
    let sub = client.listen(filter()).expect("listen");
    assert_eq!(sub.acknowledged().resource_subscriptions.len(), URIS.len());
}

#[test]
fn an_unacknowledged_listen_without_a_deadline_ends_with_its_connection() {
    let (server, _) = modern_server(true, 0, 0);
    // Never acknowledged: the server goes away instead.
    server.on("subscriptions/listen", |peer, _| {
        let peer = peer.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            peer.close("the server went away");
        });
        None
    });
    let options = Options::default().with_request_timeout(Duration::MAX);
    let client = Client::connect_with_options(server, options).expect("connect");
    let err = client
        .listen(SubscriptionFilter::new().resource("x://a"))
        .expect_err("no acknowledgement");
    assert!(err.to_string().contains("the server went away"), "{err:?}");
}

#[test]
fn a_handshake_era_update_sent_right_after_the_subscribe_answer_is_delivered() {
    let server = legacy_server(true);
    server.on("resources/subscribe", |peer, request| {
        let uri = request.params.as_ref().map(|p| p["uri"].clone());
        peer.respond(&request.id, json!({}));
        peer.notify(
            "notifications/resources/updated",
            json!({"uri": uri.unwrap_or(Value::Null)}),
        );
        None
    });
    let options = Options::default().with_protocol_mode(ProtocolMode::Legacy);
    let client = Client::connect_with_options(server, options).expect("connect");
    let sub = client
        .listen(SubscriptionFilter::new().resource("x://a"))
        .expect("listen");
    assert_eq!(sub.acknowledged().resource_subscriptions, vec!["x://a"]);
    match sub.recv_timeout(Duration::from_secs(10)) {
        Some(SubscriptionEvent::Notification(ServerNotification::ResourceUpdated(update))) => {
            assert_eq!(update.uri, "x://a");
        }
        other => panic!("the update was lost: {other:?}"),
    }
}

#[test]
fn dropped_subscription_events_are_counted_and_reported_as_a_gap() {
    let (server, _) = modern_server(true, 10, 10);
    let options = Options::default().with_notification_capacity(2);
    let (_client, sub) = poked(server, options);
    assert_eq!(sub.dropped(), 8);
    match sub.try_recv() {
        Some(SubscriptionEvent::Resubscribed { reason }) => {
            assert!(reason.contains("8 events were dropped"), "{reason}");
        }
        other => panic!("expected the gap first, got {other:?}"),
    }
    let rest: Vec<_> = std::iter::from_fn(|| sub.try_recv()).collect();
    assert_eq!(rest.len(), 2, "{rest:?}");
    assert!(rest.iter().all(|event| matches!(
        event,
        SubscriptionEvent::Notification(ServerNotification::ResourceUpdated(_))
    )));
}

#[test]
fn a_flood_after_a_broken_stream_does_not_evict_its_reopening() {
    let server = stateless_server();
    let listens = Arc::new(AtomicUsize::new(0));
    let counter = listens.clone();
    let last = Arc::new(std::sync::Mutex::new(None));
    let open = last.clone();
    server.on("subscriptions/listen", move |peer, request| {
        counter.fetch_add(1, Ordering::SeqCst);
        *open.lock().unwrap() = Some(request.id.clone());
        acknowledge(peer, &request.id);
        None
    });
    // The stream breaks, and the server goes on tagging updates with the old id elsewhere.
    server.on("tools/call", move |peer, _| {
        let id = last.lock().unwrap().clone().expect("a listen request");
        peer.fail(&id, Error::ResponseLost("the stream ended".into()));
        let tag = serde_json::to_value(&id).unwrap();
        for _ in 0..10 {
            peer.notify(
                "notifications/resources/updated",
                json!({"_meta": {"io.modelcontextprotocol/subscriptionId": tag}, "uri": "x://a"}),
            );
        }
        Some(json!({"resultType": "complete", "content": []}))
    });
    let options = Options::default().with_notification_capacity(2);
    let (_client, sub) = poked(server, options);
    // Reading goes through the flood to the broken stream's marker, which reopens it.
    let deadline = Instant::now() + Duration::from_secs(10);
    while listens.load(Ordering::SeqCst) < 2 {
        assert!(
            Instant::now() < deadline,
            "the subscription was never reopened"
        );
        let _ = sub.recv_timeout(Duration::from_millis(50));
    }
    assert!(sub.dropped() > 0);
    assert!(sub.ended().is_none(), "{:?}", sub.ended());
}

#[test]
fn a_listen_with_options_waits_for_its_acknowledgement_only_as_long_as_they_say() {
    let (server, _) = modern_server(true, 0, 0);
    // Never acknowledged, never refused: the stream is held, as a buffering proxy holds it.
    server.on("subscriptions/listen", |_, _| None);
    let options = Options::default().with_request_timeout(Duration::from_secs(60));
    let client = Client::connect_with_options(server, options).expect("connect");
    let quick = umcp::RequestOptions::default().with_timeout(Duration::from_millis(300));
    let started = Instant::now();
    let err = client
        .with(&quick)
        .listen(SubscriptionFilter::all_lists())
        .expect_err("no acknowledgement");
    assert!(err.is_timeout(), "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(30), "{err:?}");

    let cancel = umcp::CancelHandle::new();
    cancel.cancel();
    let cancelled = umcp::RequestOptions::default().with_cancel(cancel);
    let err = client
        .with(&cancelled)
        .listen(SubscriptionFilter::all_lists())
        .expect_err("cancelled");
    assert!(matches!(err, Error::Cancelled { .. }), "{err:?}");
}
