//! The manager on top of `listen`: managed subscriptions that survive a killed and restarted
//! server, and an aggregated tool list that follows the servers' changes by itself, in both
//! protocol eras.

mod common;
use umcp_test_support::demo;
use umcp_test_support::python;

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use common::peers;
use umcp::types::{ServerNotification, SubscriptionFilter};
use umcp::{
    Manager, ManagerOptions, NotificationSource, ServerConfig, StdioConfig, SubscriptionEvent,
};

/// Generous bound for anything that should be quick: proves "does not hang", not speed.
const BOUND: Duration = Duration::from_secs(30);

/// The demo binary, serving its fixtures over stdio in the stateless era when `modern`.
fn demo(modern: bool) -> StdioConfig {
    let binary = demo::demo_binary().to_string_lossy().into_owned();
    let demo = StdioConfig::new(binary).args(["--server", "--fixtures"]);
    if modern {
        demo.arg("--modern")
    } else {
        demo
    }
}

fn demo_server(name: &str, modern: bool) -> ServerConfig {
    ServerConfig::new(name, demo(modern))
}

fn options() -> ManagerOptions {
    ManagerOptions::default()
        .without_cache()
        .with_reconnect_attempts(5)
        .with_reconnect_delay(Duration::from_millis(50), Duration::from_millis(500))
}

fn tool(manager: &Manager, server: &str, name: &str, args: Value) {
    let client = manager.client(server).expect("client");
    let _ = client.call_tool(name, args);
}

fn next(sub: &umcp::ManagedSubscription) -> SubscriptionEvent {
    sub.recv_timeout(BOUND).expect("an event in time")
}

fn restarted_server_keeps_its_subscription(modern: bool) {
    let manager = Manager::start(vec![demo_server("d", modern)], options());
    assert!(manager.wait_ready(BOUND));
    let sub = manager
        .listen("d", SubscriptionFilter::new().tools())
        .expect("listen");
    assert!(sub.acknowledged().tools_list_changed);
    tool(&manager, "d", "list_changed", json!({"what": "tools"}));
    assert!(matches!(
        next(&sub),
        SubscriptionEvent::Notification(ServerNotification::ToolListChanged)
    ));
    // The server dies; the supervisor starts it again and re-opens the subscription.
    tool(&manager, "d", "crash", json!({}));
    match next(&sub) {
        SubscriptionEvent::Resubscribed { reason } => assert!(!reason.is_empty()),
        other => panic!("expected the gap to be reported, got {other:?}"),
    }
    assert!(sub.acknowledged().tools_list_changed);
    tool(&manager, "d", "list_changed", json!({"what": "tools"}));
    assert!(matches!(
        next(&sub),
        SubscriptionEvent::Notification(ServerNotification::ToolListChanged)
    ));
    sub.close();
    assert!(sub.recv_timeout(Duration::from_millis(50)).is_none());
}

#[test]
fn a_restarted_stateless_server_keeps_its_managed_subscription() {
    restarted_server_keeps_its_subscription(true);
}

#[test]
fn a_restarted_handshake_era_server_keeps_its_managed_subscription() {
    restarted_server_keeps_its_subscription(false);
}

#[test]
fn list_changes_are_followed_and_tagged_in_the_queue() {
    let manager = Manager::start(vec![demo_server("d", true)], options());
    assert!(manager.wait_ready(BOUND));
    let notes = manager.notifications();
    let seen = |method: &str| {
        let client = manager.client("d").expect("client");
        let counts = client
            .call_tool("requests_seen", json!({}))
            .expect("seen")
            .structured_content
            .expect("structured");
        counts.get(method).and_then(Value::as_u64).unwrap_or(0)
    };
    let lists = seen("tools/list");
    tool(&manager, "d", "list_changed", json!({"what": "tools"}));
    let note = notes.recv_timeout(BOUND).expect("a tagged notification");
    assert_eq!(note.server, "d");
    assert_eq!(note.source, NotificationSource::Subscription);
    assert!(matches!(
        note.notification,
        ServerNotification::ToolListChanged
    ));
    // The manager lists the tools again by itself (its cache entry was invalidated).
    let deadline = Instant::now() + BOUND;
    while seen("tools/list") == lists {
        assert!(Instant::now() < deadline, "the tools were not listed again");
        std::thread::sleep(Duration::from_millis(50));
    }
    let deadline = Instant::now() + BOUND;
    while manager.known_tools().iter().any(|t| t.stale) {
        assert!(Instant::now() < deadline, "the tools stayed stale");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn path_arg(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// Makes a server add a tool through `adder` and waits for it in the aggregated list.
fn added_tool_reaches_the_aggregated_list(manager: &Manager, adder: &str, added: &str) {
    assert!(manager.wait_ready(BOUND));
    let has = |name: &str| manager.known_tools().iter().any(|t| t.tool.name == name);
    assert!(has(adder), "{:?}", manager.statuses());
    assert!(!has(added));
    let adder = manager
        .known_tools()
        .into_iter()
        .find(|t| t.tool.name == adder)
        .expect("the adder")
        .name;
    manager
        .call_tool(&adder, json!({"name": added}))
        .expect("add a tool");
    let deadline = Instant::now() + BOUND;
    while !has(added) {
        assert!(
            Instant::now() < deadline,
            "{added} never reached the manager"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_tool_added_at_run_time_reaches_the_aggregated_list() {
    if peers::skip_interop() {
        return;
    }
    let python = ServerConfig::new(
        "py",
        StdioConfig::new(path_arg(&peers::python_mcp()))
            .args([path_arg(&peers::python_server_script()), "stdio".to_owned()]),
    );
    let manager = Manager::start(vec![python], options());
    added_tool_reaches_the_aggregated_list(&manager, "add_runtime_tool", "late_managed");
}

#[cfg(feature = "http")]
#[test]
fn a_tool_added_at_run_time_reaches_the_aggregated_list_over_http() {
    if peers::skip_interop() {
        return;
    }
    let ts = peers::ts_v2_http();
    let python = peers::python_http(&["streamable-http"]);
    let manager = Manager::start(
        vec![
            ServerConfig::http("ts", ts.url("/mcp")),
            ServerConfig::http("py", python.url("/mcp")),
        ],
        options(),
    );
    added_tool_reaches_the_aggregated_list(&manager, "add_tool", "late_ts_managed");
    added_tool_reaches_the_aggregated_list(&manager, "add_runtime_tool", "late_py_managed");
}

#[test]
fn the_era_verdict_is_saved_next_to_the_tools_and_used_by_the_next_host() {
    let dir = std::env::temp_dir().join(format!("umcp-manager-era-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // Arguments no other test uses, so no verdict of this process's own cache applies.
    let config = || ServerConfig::new("era", demo(true).args(["--page-size", "41"]));
    let manager = Manager::start(vec![config()], options().with_cache_dir(&dir));
    assert!(manager.wait_ready(BOUND));
    manager.close();
    let files: Vec<(std::path::PathBuf, Value)> = std::fs::read_dir(&dir)
        .expect("the cache directory")
        .filter_map(|entry| {
            let path = entry.ok()?.path();
            let text = std::fs::read_to_string(&path).ok()?;
            Some((path, serde_json::from_str(&text).ok()?))
        })
        .collect();
    let (path, saved) = files
        .into_iter()
        .find(|(_, v)| v["server"] == "era")
        .expect("a cache file for the server");
    assert_eq!(saved["era"], "2026-07-28");
    assert!(saved["tools"].as_array().is_some_and(|t| !t.is_empty()));

    // The next host connects with the saved verdict, without a probe. Prove it is read by
    // saving a wrong one: the modern-only server refuses `initialize`, costing one failed
    // attempt, after which the supervisor probes and connects.
    let mut wrong = saved.clone();
    wrong["era"] = json!("legacy");
    std::fs::write(&path, wrong.to_string()).expect("rewrite the cache");
    let manager = Manager::start(vec![config()], options().with_cache_dir(&dir));
    let events = manager.status_events();
    assert!(manager.wait_ready(BOUND));
    let deadline = Instant::now() + BOUND;
    let mut failed_first = false;
    while let Some(event) = events.recv_timeout(deadline.saturating_duration_since(Instant::now()))
    {
        match event.status {
            umcp::ServerStatus::Failed { .. } => failed_first = true,
            umcp::ServerStatus::Connected { .. } => break,
            _ => {}
        }
    }
    assert!(
        failed_first,
        "the saved verdict was used for the first attempt"
    );
    assert!(manager.client("era").is_ok());
    manager.close();
    let _ = std::fs::remove_dir_all(&dir);
}

/// A reader blocked on a managed subscription is let go when its server is stopped, by
/// `close` or `remove`, even while the manager itself lives on.
#[test]
fn a_managed_subscription_ends_when_its_server_is_stopped() {
    let manager = Manager::start(
        vec![demo_server("d", false), demo_server("e", true)],
        options(),
    );
    assert!(manager.wait_ready(BOUND));
    let reader = |server: &str| {
        let sub = manager
            .listen(server, SubscriptionFilter::new().tools())
            .expect("listen");
        let (done_tx, done) = std::sync::mpsc::channel();
        let thread = std::thread::spawn(move || {
            let _ = done_tx.send(sub.iter().count());
        });
        (thread, done)
    };
    let (removed, removed_done) = reader("e");
    let (closed, closed_done) = reader("d");
    manager.remove("e").expect("remove");
    assert!(
        removed_done.recv_timeout(BOUND).is_ok(),
        "the reader of a removed server still waits"
    );
    manager.close();
    assert!(
        closed_done.recv_timeout(BOUND).is_ok(),
        "the reader of a closed manager still waits"
    );
    removed.join().expect("reader");
    closed.join().expect("reader");
}

/// A stateless-era server that refuses every `subscriptions/listen`, and whose one tool says
/// how many it was sent.
const REFUSER: &str = r#"
import json, sys
listens = 0
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg or "method" not in msg:
        continue
    method, reply = msg["method"], {"jsonrpc": "2.0", "id": msg["id"]}
    if method == "server/discover":
        reply["result"] = {"supportedVersions": ["2026-07-28"], "ttlMs": 0,
                           "cacheScope": "public",
                           "capabilities": {"tools": {}, "resources": {"subscribe": True}}}
    elif method == "tools/list":
        reply["result"] = {"resultType": "complete",
                           "tools": [{"name": "listens", "inputSchema": {"type": "object"}}]}
    elif method == "tools/call":
        reply["result"] = {"resultType": "complete",
                           "content": [{"type": "text", "text": str(listens)}]}
    elif method == "subscriptions/listen":
        listens += 1
        reply["error"] = {"code": -32602, "message": "not here"}
    else:
        reply["error"] = {"code": -32601, "message": "no such method"}
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
"#;

/// A managed subscription the server refuses is asked for again with a growing wait, not on
/// every tick of the supervisor (ten times a second, for as long as the connection lasts).
#[test]
fn a_refused_managed_subscription_is_asked_again_with_backoff() {
    let refuser = ServerConfig::new(
        "r",
        StdioConfig::new(python::system_python()).args(["-c", REFUSER]),
    );
    let manager = Manager::start(vec![refuser], options());
    assert!(manager.wait_ready(BOUND));
    let listens = || {
        let result = manager.call_tool("r__listens", json!({})).expect("call");
        result.text().parse::<u32>().expect("a count")
    };
    let before = listens();
    let sub = manager
        .listen("r", SubscriptionFilter::new().resource("file:///notes.txt"))
        .expect("a handle, opened later if ever");
    // The window to count in: 30 ticks of the supervisor.
    std::thread::sleep(Duration::from_secs(3));
    let asked = listens() - before;
    assert!((1..=4).contains(&asked), "asked {asked} times in 3 s");
    assert!(sub.acknowledged().is_empty());
}

/// A stateless stdio server for managed subscriptions. Its first process acknowledges every
/// `subscriptions/listen` at once; a restarted one (argument 1 counts the processes in a file)
/// holds them until `WANTED` (argument 2) are open together, then acknowledges them all, so
/// that only a client opening its subscriptions in parallel is ever acknowledged. The tool
/// `burst` sends `count` `resources/updated` of `uri` to every listen request that asked.
const LISTENS_SERVER: &str = r#"
import json, sys
counter, wanted = sys.argv[1], int(sys.argv[2])
try:
    runs = int(open(counter).read())
except OSError:
    runs = 0
open(counter, "w").write(str(runs + 1))
hold = runs > 0
pending, released = {}, False
def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()
def ack(rid):
    send({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
          "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": rid},
                     "notifications": pending[rid]}})
for line in sys.stdin:
    msg = json.loads(line)
    method, rid = msg.get("method"), msg.get("id")
    if method == "notifications/cancelled":
        pending.pop(msg["params"].get("requestId"), None)
        continue
    if rid is None:
        continue
    if method == "server/discover":
        send({"jsonrpc": "2.0", "id": rid, "result": {"resultType": "complete",
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}, "resources": {"subscribe": True}},
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "listens", "version": "1"}}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": rid, "result": {"resultType": "complete", "tools": [
            {"name": "burst", "inputSchema": {"type": "object"}}]}})
    elif method == "subscriptions/listen":
        pending[rid] = msg["params"]["notifications"]
        if not hold or released:
            ack(rid)
        elif len(pending) >= wanted:
            released = True
            for held in pending:
                ack(held)
    elif method == "tools/call":
        args = msg["params"]["arguments"]
        for target, asked in list(pending.items()):
            if args["uri"] in asked.get("resourceSubscriptions", []):
                for _ in range(args["count"]):
                    send({"jsonrpc": "2.0", "method": "notifications/resources/updated",
                          "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": target},
                                     "uri": args["uri"]}})
        send({"jsonrpc": "2.0", "id": rid, "result": {"resultType": "complete", "content": []}})
    else:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no"}})
"#;

/// Reads a managed subscription until `count` notifications came or it stays quiet.
fn notifications_read(sub: &umcp::ManagedSubscription, count: usize) -> (usize, bool) {
    let (mut notes, mut gap) = (0, false);
    while notes < count {
        match sub.recv_timeout(Duration::from_secs(2)) {
            Some(SubscriptionEvent::Notification(_)) => notes += 1,
            Some(SubscriptionEvent::Resubscribed { .. }) => gap = true,
            Some(_) => {}
            None => break,
        }
    }
    (notes, gap)
}

#[test]
fn managed_subscriptions_open_in_parallel_hold_a_burst_and_count_their_drops() {
    let dir = std::env::temp_dir().join(format!("umcp-listens-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let counter = dir.join("runs");
    let _ = std::fs::remove_file(&counter);
    // Three managed subscriptions and the manager's own list subscription: four together.
    let config = ServerConfig::new(
        "s",
        StdioConfig::new(python::system_python()).args([
            "-c",
            LISTENS_SERVER,
            &path_arg(&counter),
            "4",
        ]),
    )
    .with_request_timeout(Duration::from_secs(5));
    let manager = Manager::start(vec![config], options());
    assert!(manager.wait_ready(BOUND));
    let subs: Vec<_> = ["x://a", "x://b", "x://c"]
        .into_iter()
        .map(|uri| {
            let filter = SubscriptionFilter::new().resource(uri);
            let sub = manager.listen("s", filter).expect("listen");
            assert_eq!(sub.acknowledged().resource_subscriptions, [uri]);
            sub
        })
        .collect();

    // The restarted server acknowledges only when all four listen requests are open at once.
    manager.restart("s").expect("restart");
    for sub in &subs {
        match next(sub) {
            SubscriptionEvent::Resubscribed { .. } => {}
            other => panic!("expected the reconnection to be reported, got {other:?}"),
        }
        assert!(!sub.acknowledged().resource_subscriptions.is_empty());
    }

    // A burst of updates between two ticks is held whole.
    let client = manager.client("s").expect("client");
    client
        .call_tool("burst", json!({"uri": "x://a", "count": 200}))
        .expect("burst");
    assert_eq!(notifications_read(&subs[0], 200), (200, false));
    assert_eq!(subs[0].dropped(), 0);

    // Past what a subscription holds: the drops are counted, and reported as a gap.
    client
        .call_tool("burst", json!({"uri": "x://b", "count": 2000}))
        .expect("burst");
    let deadline = Instant::now() + BOUND;
    while subs[1].dropped() == 0 {
        assert!(Instant::now() < deadline, "no drop was counted");
        std::thread::sleep(Duration::from_millis(50));
    }
    let (read, gap) = notifications_read(&subs[1], 2000);
    assert!(gap, "the drops were not reported");
    let dropped = usize::try_from(subs[1].dropped()).unwrap();
    assert!(read + dropped >= 2000, "{read} read, {dropped} dropped");
    assert!(read >= 256, "{read} read");
    let _ = std::fs::remove_dir_all(&dir);
}
