//! `client.listen(filter)` against the bundled demo server in both eras, with the same
//! client code: `--modern` serves it with `subscriptions/listen`, the default mode with its
//! list-changed notifications and `resources/subscribe`.

use umcp_test_support::demo;

use std::time::Duration;

use serde_json::{json, Value};
use umcp::types::{ServerNotification, SubscriptionFilter};
use umcp::{Client, Era, StdioConfig, Subscription, SubscriptionEnd, SubscriptionEvent};

/// Generous bound for anything that should take milliseconds.
const WAIT: Duration = Duration::from_secs(10);

const README: &str = "demo://text/readme";

fn demo_server(modern: bool) -> StdioConfig {
    let binary = demo::demo_binary().to_string_lossy().into_owned();
    let config = StdioConfig::new(binary).args(["--server", "--fixtures"]);
    if modern {
        config.args(["--modern"])
    } else {
        config
    }
}

fn connect(modern: bool) -> Client {
    let client = Client::connect(demo_server(modern)).expect("connect");
    let era = if modern { Era::Modern } else { Era::Legacy };
    assert_eq!(client.era(), era);
    client
}

fn tool(client: &Client, name: &str, args: Value) -> String {
    client.call_tool(name, args).expect(name).text()
}

fn next_notification(sub: &Subscription) -> ServerNotification {
    match sub.recv_timeout(WAIT) {
        Some(SubscriptionEvent::Notification(note)) => note,
        other => panic!(
            "expected a notification, got {other:?} (ended: {:?})",
            sub.ended()
        ),
    }
}

/// The one code path a caller writes, whatever the era.
fn follow(client: &Client) {
    let filter = SubscriptionFilter::new()
        .tools()
        .resource(README)
        .resource("demo://no/such/resource");
    let sub = client.listen(filter).expect("listen");
    let granted = sub.acknowledged();
    assert!(granted.tools_list_changed);
    assert!(!granted.prompts_list_changed, "not asked for");
    assert_eq!(granted.resource_subscriptions, vec![README.to_owned()]);

    tool(client, "list_changed", json!({"what": "tools"}));
    assert!(matches!(
        next_notification(&sub),
        ServerNotification::ToolListChanged
    ));
    tool(client, "touch", json!({"uri": README}));
    match next_notification(&sub) {
        ServerNotification::ResourceUpdated(updated) => assert_eq!(updated.uri, README),
        other => panic!("expected resources/updated, got {other:?}"),
    }
    // Prompts were not asked for: they never reach the handle.
    tool(client, "list_changed", json!({"what": "prompts"}));
    tool(client, "list_changed", json!({"what": "tools"}));
    assert!(matches!(
        next_notification(&sub),
        ServerNotification::ToolListChanged
    ));
    assert!(sub.try_recv().is_none());
    assert!(sub.ended().is_none());
    sub.close();
    assert_eq!(sub.ended(), Some(SubscriptionEnd::Closed));
    assert!(sub.recv_timeout(Duration::from_millis(50)).is_none());
}

#[test]
fn the_same_listen_code_follows_a_stateless_server() {
    let client = connect(true);
    follow(&client);
    // The server forgot the subscription: nobody is left to notify.
    let sent = tool(&client, "list_changed", json!({"what": "tools"}));
    assert_eq!(
        sent,
        "sent notifications/tools/list_changed to 0 subscriptions"
    );
}

#[test]
fn the_same_listen_code_follows_a_handshake_era_server() {
    let client = connect(false);
    follow(&client);
    // Closing unsubscribed the URI.
    assert_eq!(
        tool(&client, "touch", json!({"uri": README})),
        "not subscribed"
    );
}

#[test]
fn a_handshake_era_subscription_leaves_the_shared_queue_its_notifications() {
    let client = connect(false);
    let notes = client.notifications();
    let sub = client
        .listen(SubscriptionFilter::new().tools())
        .expect("listen");
    tool(&client, "list_changed", json!({"what": "tools"}));
    assert!(matches!(
        next_notification(&sub),
        ServerNotification::ToolListChanged
    ));
    let shared = notes
        .recv_timeout(WAIT)
        .expect("the shared queue got it too");
    assert!(matches!(shared, ServerNotification::ToolListChanged));
}

#[test]
fn stateless_subscriptions_are_told_apart_by_their_id() {
    let client = connect(true);
    let notes = client.notifications();
    let tools = client
        .listen(SubscriptionFilter::new().tools())
        .expect("tools");
    let prompts = client
        .listen(SubscriptionFilter::new().prompts())
        .expect("prompts");
    let both = client
        .listen(SubscriptionFilter::new().tools().prompts())
        .expect("both");
    tool(&client, "list_changed", json!({"what": "tools"}));
    tool(&client, "list_changed", json!({"what": "prompts"}));
    assert!(matches!(
        next_notification(&tools),
        ServerNotification::ToolListChanged
    ));
    assert!(matches!(
        next_notification(&prompts),
        ServerNotification::PromptListChanged
    ));
    assert!(matches!(
        next_notification(&both),
        ServerNotification::ToolListChanged
    ));
    assert!(matches!(
        next_notification(&both),
        ServerNotification::PromptListChanged
    ));
    // The router handles messages in order: by now each handle has all it will get.
    assert!(tools.try_recv().is_none());
    assert!(prompts.try_recv().is_none());
    // Tagged notifications belong to their subscription, not to the shared queue.
    assert!(notes.try_recv().is_none());
}

#[test]
fn closing_a_stdio_subscription_cancels_its_listen_request() {
    let client = connect(true);
    let sub = client
        .listen(SubscriptionFilter::new().tools())
        .expect("listen");
    drop(sub);
    let seen = client.call_tool("cancellations", json!({})).expect("seen");
    let cancelled = seen.structured_content.expect("structured")["cancelled"].clone();
    assert_eq!(cancelled.as_array().map(Vec::len), Some(1), "{cancelled}");
    let sent = tool(&client, "list_changed", json!({"what": "tools"}));
    assert!(sent.ends_with("to 0 subscriptions"), "{sent}");
}

#[test]
fn a_graceful_end_and_a_closed_connection_are_reported() {
    let client = connect(true);
    let sub = client
        .listen(SubscriptionFilter::new().tools())
        .expect("listen");
    assert_eq!(
        tool(&client, "end_subscriptions", json!({})),
        "ended 1 subscriptions"
    );
    assert!(sub.recv_timeout(WAIT).is_none());
    assert_eq!(sub.ended(), Some(SubscriptionEnd::Completed));

    let sub = client
        .listen(SubscriptionFilter::new().tools())
        .expect("listen");
    client.close();
    assert!(sub.recv_timeout(WAIT).is_none());
    assert!(
        matches!(sub.ended(), Some(SubscriptionEnd::ConnectionLost { .. })),
        "{:?}",
        sub.ended()
    );
}

#[test]
fn a_handle_outliving_its_client_ends() {
    let client = connect(true);
    let sub = client
        .listen(SubscriptionFilter::new().tools())
        .expect("listen");
    drop(client);
    assert!(sub.recv().is_none(), "recv returns once the client is gone");
    assert!(sub.ended().is_some());
}

fn count(dir: &str) -> usize {
    std::fs::read_dir(dir).map(Iterator::count).unwrap_or(0)
}

/// 200 listen/close cycles leave no thread, descriptor or subscription behind.
fn cycles_leak_nothing(modern: bool) {
    let client = connect(modern);
    let filter = SubscriptionFilter::new().tools().resource(README);
    // One warm-up cycle, so lazily started machinery is counted in the baseline.
    drop(client.listen(filter.clone()).expect("listen"));
    let threads = count("/proc/self/task");
    let fds = count("/proc/self/fd");
    for _ in 0..200 {
        let sub = client.listen(filter.clone()).expect("listen");
        assert!(sub.acknowledged().tools_list_changed);
        sub.close();
    }
    // Other tests of this binary run in parallel threads: allow for them, not for 200 leaks.
    let after_threads = count("/proc/self/task");
    let after_fds = count("/proc/self/fd");
    assert!(after_threads <= threads + 8, "{threads} -> {after_threads}");
    assert!(after_fds <= fds + 16, "{fds} -> {after_fds}");
    let sent = tool(&client, "list_changed", json!({"what": "tools"}));
    if modern {
        assert!(sent.ends_with("to 0 subscriptions"), "{sent}");
    } else {
        assert_eq!(
            tool(&client, "touch", json!({"uri": README})),
            "not subscribed"
        );
    }
}

#[test]
fn listen_close_cycles_leak_nothing_in_the_stateless_era() {
    cycles_leak_nothing(true);
}

#[test]
fn listen_close_cycles_leak_nothing_in_the_handshake_era() {
    cycles_leak_nothing(false);
}

fn tools_listed(client: &Client) -> u64 {
    let result = client.call_tool("requests_seen", json!({})).expect("seen");
    let counts = result.structured_content.expect("structured");
    counts["tools/list"].as_u64().unwrap_or(0)
}

#[test]
fn follow_tools_lists_again_after_each_change_in_both_eras() {
    for modern in [true, false] {
        let client = connect(modern);
        let mut tools = client.follow_tools().expect("follow");
        assert!(tools.is_followed());
        assert!(tools.tools().iter().any(|t| t.name == "echo"));
        let listed = tools_listed(&client);
        assert!(!tools.refresh().expect("refresh"), "nothing changed yet");
        assert!(!tools
            .wait_for_change(Duration::from_millis(50))
            .expect("wait"));
        tool(&client, "list_changed", json!({"what": "tools"}));
        assert!(
            tools.wait_for_change(WAIT).expect("wait"),
            "modern: {modern}"
        );
        assert!(!tools.is_stale());
        assert_eq!(tools_listed(&client), listed + 1, "modern: {modern}");
        assert!(tools.tools().iter().any(|t| t.name == "echo"));
    }
}

#[test]
fn write_events_prints_one_line_per_event_until_its_deadline() {
    for modern in [true, false] {
        let client = connect(modern);
        let sub = client
            .listen(SubscriptionFilter::new().tools().resource(README))
            .expect("listen");
        tool(&client, "list_changed", json!({"what": "tools"}));
        tool(&client, "touch", json!({"uri": README}));
        let mut out = Vec::new();
        let deadline = std::time::Instant::now() + Duration::from_millis(300);
        let (lines, end) = sub
            .write_events(&mut out, true, Some(deadline), &|| false)
            .expect("write");
        assert_eq!(lines, 2);
        assert!(end.is_none());
        let text = String::from_utf8(out).expect("utf-8");
        let parsed: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
            .collect();
        assert_eq!(
            parsed[0],
            json!({"method": "notifications/tools/list_changed"})
        );
        assert_eq!(
            parsed[1],
            json!({"method": "notifications/resources/updated", "params": {"uri": README}})
        );

        // Text lines, and a stop request ends it at once.
        tool(&client, "touch", json!({"uri": README}));
        let mut out = Vec::new();
        let (lines, _) = sub
            .write_events(&mut out, false, None, &|| true)
            .expect("write");
        assert_eq!(lines, 0, "stop is asked before waiting");
        let deadline = std::time::Instant::now() + Duration::from_millis(300);
        let (lines, _) = sub
            .write_events(&mut out, false, Some(deadline), &|| false)
            .expect("write");
        assert_eq!(lines, 1);
        assert_eq!(
            String::from_utf8(out).expect("utf-8"),
            format!("notifications/resources/updated {README}\n")
        );
    }
}

#[test]
fn request_scoped_notifications_keep_going_to_their_request() {
    let client = connect(true);
    let sub = client
        .listen(SubscriptionFilter::all_lists())
        .expect("listen");
    let steps = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
    let counter = std::sync::Arc::clone(&steps);
    let options = umcp::RequestOptions::default().with_progress(move |_| {
        counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    });
    let result = client
        .with(&options)
        .call_tool("slow", json!({"steps": 3, "delay_ms": 1}))
        .expect("slow");
    assert_eq!(result.text(), "finished 3 steps");
    assert_eq!(steps.load(std::sync::atomic::Ordering::SeqCst), 3);
    assert!(
        sub.try_recv().is_none(),
        "progress is not the subscription's"
    );
}

#[test]
fn a_wait_too_long_for_the_clock_is_a_wait_without_deadline() {
    let client = connect(true);
    let sub = client
        .listen(SubscriptionFilter::new().tools())
        .expect("listen");
    tool(&client, "list_changed", json!({"what": "tools"}));
    assert!(matches!(
        sub.recv_timeout(Duration::MAX),
        Some(SubscriptionEvent::Notification(
            ServerNotification::ToolListChanged
        ))
    ));
    sub.close();
    assert!(
        sub.recv_timeout(Duration::MAX).is_none(),
        "returns once ended"
    );
}
