//! `client.listen` over Streamable HTTP against the bundled demo server: each stateless
//! subscription is a POST whose response stream carries its notifications, and a stream that
//! breaks is opened again with the gap reported.

#![cfg(feature = "http")]

use umcp_test_support::http_demo;

use std::time::Duration;

use http_demo::HttpDemo;
use serde_json::json;
use umcp::types::{ServerNotification, SubscriptionFilter};
use umcp::{Client, Era, Options, Subscription, SubscriptionEnd, SubscriptionEvent};

/// Generous bound for anything that should take milliseconds.
const WAIT: Duration = Duration::from_secs(10);

const README: &str = "demo://text/readme";

fn tool(client: &Client, name: &str) -> String {
    let args = match name {
        "touch" => json!({"uri": README}),
        "list_changed" => json!({"what": "tools"}),
        _ => json!({}),
    };
    client.call_tool(name, args).expect(name).text()
}

fn next(sub: &Subscription) -> SubscriptionEvent {
    sub.recv_timeout(WAIT)
        .unwrap_or_else(|| panic!("no event (ended: {:?})", sub.ended()))
}

#[test]
fn stateless_subscriptions_over_http_get_their_own_streams() {
    for modern in [true, false] {
        let server = HttpDemo::start(if modern { &["--modern"] } else { &[] });
        let client = server.connect(Options::default());
        let era = if modern { Era::Modern } else { Era::Legacy };
        assert_eq!(client.era(), era);
        let tools = client
            .listen(SubscriptionFilter::new().tools())
            .expect("tools");
        let readme = client
            .listen(SubscriptionFilter::new().resource(README))
            .expect("readme");
        assert_eq!(readme.acknowledged().resource_subscriptions, [README]);
        tool(&client, "list_changed");
        tool(&client, "touch");
        assert!(matches!(
            next(&tools),
            SubscriptionEvent::Notification(ServerNotification::ToolListChanged)
        ));
        match next(&readme) {
            SubscriptionEvent::Notification(ServerNotification::ResourceUpdated(u)) => {
                assert_eq!(u.uri, README);
            }
            other => panic!("expected resources/updated, got {other:?}"),
        }
        assert!(tools.try_recv().is_none(), "{modern}");
        assert!(readme.try_recv().is_none(), "{modern}");
    }
}

#[test]
fn a_broken_stream_is_opened_again_and_the_gap_reported() {
    let server = HttpDemo::start(&["--modern"]);
    let client = server.connect(Options::default());
    let sub = client
        .listen(SubscriptionFilter::new().tools())
        .expect("listen");
    assert_eq!(
        tool(&client, "drop_subscriptions"),
        "dropped 1 subscriptions"
    );
    match next(&sub) {
        SubscriptionEvent::Resubscribed { reason } => assert!(!reason.is_empty()),
        other => panic!("expected the gap to be reported, got {other:?}"),
    }
    assert!(sub.acknowledged().tools_list_changed);
    tool(&client, "list_changed");
    assert!(matches!(
        next(&sub),
        SubscriptionEvent::Notification(ServerNotification::ToolListChanged)
    ));

    assert_eq!(tool(&client, "end_subscriptions"), "ended 1 subscriptions");
    assert!(sub.recv_timeout(WAIT).is_none());
    assert_eq!(sub.ended(), Some(SubscriptionEnd::Completed));
}

fn count(dir: &str) -> usize {
    std::fs::read_dir(dir).map(Iterator::count).unwrap_or(0)
}

/// 200 listen/close cycles over HTTP leave no thread or descriptor behind once the closed
/// streams' readers have noticed (at the server's next keep-alive at the latest).
#[test]
fn listen_close_cycles_over_http_leak_nothing() {
    let server = HttpDemo::start(&["--modern"]);
    let client = server.connect(Options::default());
    let filter = SubscriptionFilter::new().tools();
    drop(client.listen(filter.clone()).expect("warm-up"));
    let threads = count("/proc/self/task");
    let fds = count("/proc/self/fd");
    for _ in 0..200 {
        let sub = client.listen(filter.clone()).expect("listen");
        assert!(sub.acknowledged().tools_list_changed);
        sub.close();
    }
    // The demo server sends a keep-alive every 15 s; allow for a slow machine and for the
    // other tests of this binary.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let (now_threads, now_fds) = (count("/proc/self/task"), count("/proc/self/fd"));
        if now_threads <= threads + 4 && now_fds <= fds + 8 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "threads {threads} -> {now_threads}, fds {fds} -> {now_fds}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    // The server sees no subscription left once it tries to reach them.
    let sent = tool(&client, "list_changed");
    assert!(sent.starts_with("sent"), "{sent}");
}
