//! The bridge's life: it ends with its host, ending the server's session too; a server that
//! restarts is seen by the host only through the lists that changed (here, none); what a host
//! sends that is no message gets the error owed, and the bridge goes on.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::{alive, demo, RawHost};

#[test]
fn the_bridge_ends_with_its_host_and_closes_the_server() {
    let mut host = RawHost::start(&["--stdio", &demo(false)]);
    host.initialize(json!({}));
    let process = host.request(1, "tools/call", json!({"name": "process", "arguments": {}}));
    let pid = process["result"]["structuredContent"]["pid"]
        .as_u64()
        .unwrap_or_else(|| panic!("no pid in {process}"));
    assert!(alive(pid));
    let started = Instant::now();
    let status = host.end().expect("the bridge exits once stdin ends");
    assert!(status.success(), "{status}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert!(!alive(pid), "the server {pid} outlived the bridge");
}

#[test]
fn a_server_that_restarts_is_invisible_when_its_lists_did_not_change() {
    let mut host = RawHost::start(&["--stdio", &demo(false)]);
    host.initialize(json!({}));
    let before = host.request(1, "tools/list", json!({}));
    let crashed = host.request(2, "tools/call", json!({"name": "crash", "arguments": {}}));
    assert!(crashed.get("error").is_some(), "{crashed}");
    // The manager starts it again; a call made meanwhile may fail, a later one works.
    let mut echoed = Value::Null;
    for id in 3..200 {
        let call = json!({"name": "echo", "arguments": {"message": "again"}});
        echoed = host.request(id, "tools/call", call);
        if echoed.get("result").is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(echoed["result"]["content"][0]["text"], "again", "{echoed}");
    let after = host.request(500, "tools/list", json!({}));
    assert_eq!(before["result"], after["result"]);
    std::thread::sleep(Duration::from_millis(500));
    while let Some(message) = host.next(Duration::from_millis(200)) {
        host.seen.push(message);
    }
    let changed: Vec<&Value> = host
        .seen
        .iter()
        .filter(|m| {
            m["method"]
                .as_str()
                .is_some_and(|m| m.ends_with("list_changed"))
        })
        .collect();
    assert!(
        changed.is_empty(),
        "the host heard of the restart: {changed:?}"
    );
}

#[test]
fn what_is_no_message_gets_the_error_owed_and_the_bridge_goes_on() {
    let mut host = RawHost::start(&["--stdio", &demo(false)]);
    host.write("{this is not json");
    let owed = host.next(Duration::from_secs(10)).expect("an error");
    assert_eq!(
        (owed["id"].clone(), owed["error"]["code"].clone()),
        (Value::Null, json!(-32700))
    );
    host.write(r#"{"jsonrpc":"2.0","id":{"no":"object ids"},"method":"ping"}"#);
    let invalid = host.next(Duration::from_secs(10)).expect("an error");
    assert_eq!(invalid["error"]["code"], -32600, "{invalid}");
    host.initialize(json!({}));
    let unknown = host.request(1, "no/such/method", json!({}));
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    let pong = host.request(2, "ping", json!({}));
    assert_eq!(pong["result"], json!({}));
}

#[cfg(unix)]
#[test]
fn a_signal_ends_the_bridge_and_the_servers_session() {
    let mut host = RawHost::start(&["--stdio", &demo(false)]);
    host.initialize(json!({}));
    let process = host.request(1, "tools/call", json!({"name": "process", "arguments": {}}));
    let pid = process["result"]["structuredContent"]["pid"]
        .as_u64()
        .unwrap();
    let bridge = host.child.id().to_string();
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &bridge])
        .status()
        .unwrap();
    assert!(killed.success());
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = host.child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "the bridge outlived SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(143), "{status}");
    assert!(!alive(pid), "the server {pid} outlived the bridge");
}

#[test]
fn a_server_that_cannot_start_is_named_in_the_answer_to_initialize() {
    let mut host = RawHost::start(&[
        "--stdio",
        "no-such-mcp-server-anywhere --flag",
        "--timeout",
        "5",
    ]);
    let answer = host.initialize(json!({}));
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("no-such-mcp-server-anywhere"), "{answer}");
    assert!(host.end().is_some_and(|s| s.success()));
}
