//! `close` returns once the server process has ended, even when another thread (or the
//! manager stopping the server) started closing first: a host that exits right after must not
//! leave behind a server that ignores the end of its input.

use std::sync::Arc;
use std::time::{Duration, Instant};

use umcp::{Client, Manager, ManagerOptions, Options, ProtocolMode, ServerConfig, StdioConfig};

use umcp_test_support::python;

/// A handshake-era server that names its process id in `serverInfo.name` and, once its input
/// ends, sleeps on: only a signal ends it.
const STUBBORN: &str = r#"
import json, os, sys, time
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("method") == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {},
            "serverInfo": {"name": str(os.getpid()), "version": "1"}}
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + "\n")
        sys.stdout.flush()
time.sleep(300)
"#;

/// Whether process `pid` still exists (a zombie counts: it was not reaped).
fn alive(pid: &str) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

fn legacy() -> Options {
    Options::default().with_protocol_mode(ProtocolMode::Legacy)
}

#[cfg(target_os = "linux")]
#[test]
fn a_second_close_waits_for_the_first_to_end_the_server() {
    let config = StdioConfig::new(python::system_python())
        .args(["-c", STUBBORN])
        .close_grace(Duration::from_millis(500));
    let client = Arc::new(Client::connect_with_options(config, legacy()).expect("connect"));
    let pid = client.server_info().name;
    assert!(alive(&pid), "server {pid} runs");
    let first = Arc::clone(&client);
    let closer = std::thread::spawn(move || first.close());
    std::thread::sleep(Duration::from_millis(100));
    let started = Instant::now();
    client.close();
    let waited = started.elapsed();
    assert!(
        !alive(&pid),
        "close returned after {waited:?} with server {pid} still running"
    );
    closer.join().expect("the first close");
}

#[cfg(target_os = "linux")]
#[test]
fn manager_close_returns_after_its_servers_ended() {
    let server = ServerConfig::new(
        "stubborn",
        StdioConfig::new(python::system_python()).args(["-c", STUBBORN]),
    )
    .with_protocol(ProtocolMode::Legacy);
    let manager = Manager::start(vec![server], ManagerOptions::default().without_cache());
    assert!(manager.wait_ready(Duration::from_secs(30)));
    let pid = manager
        .client("stubborn")
        .expect("connected")
        .server_info()
        .name;
    assert!(alive(&pid), "server {pid} runs");
    let started = Instant::now();
    manager.close();
    let waited = started.elapsed();
    assert!(
        !alive(&pid),
        "close returned after {waited:?} with server {pid} still running"
    );
    // The thread that closed the server's transport was joined, not left to end on its own.
    let threads: Vec<String> = std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
        .filter(|name| name.starts_with("umcp-manager"))
        .collect();
    assert!(threads.is_empty(), "{threads:?}");
}

/// A server that never answers its handshake gets no grace to exit on its own once the
/// caller's start-up deadline has passed: `connect` returns then, not a close grace later.
#[cfg(unix)]
#[test]
fn a_connect_that_timed_out_returns_without_the_close_grace() {
    let grace = Duration::from_secs(20);
    let config = StdioConfig::new("sleep").arg("100").close_grace(grace);
    let options = legacy().with_startup_timeout(Duration::from_millis(500));
    let started = Instant::now();
    let err = Client::connect_with_options(config, options).expect_err("no handshake");
    let took = started.elapsed();
    assert!(
        matches!(
            err,
            umcp::Error::Timeout {
                kind: umcp::TimeoutKind::Startup,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().starts_with("timeout: start-up"), "{err}");
    assert!(took < grace / 4, "connect took {took:?}");
}

#[cfg(target_os = "linux")]
#[test]
fn close_releases_a_call_in_flight_before_the_server_has_ended() {
    // The server never answers `tools/call`, and takes the whole close grace to end.
    let grace = Duration::from_secs(3);
    let config = StdioConfig::new(python::system_python())
        .args(["-c", STUBBORN])
        .close_grace(grace);
    let client = Arc::new(Client::connect_with_options(config, legacy()).expect("connect"));
    let caller = Arc::clone(&client);
    let call = std::thread::spawn(move || {
        let options = umcp::RequestOptions::default().with_timeout(Duration::from_secs(60));
        let outcome = caller.with(&options).request_raw("tools/call", None);
        (outcome, Instant::now())
    });
    std::thread::sleep(Duration::from_millis(200));
    let started = Instant::now();
    client.close();
    assert!(started.elapsed() >= grace, "the server ends only by signal");
    let (outcome, returned) = call.join().expect("the caller");
    match outcome {
        Err(umcp::Error::Closed(closed)) => assert_eq!(closed.reason, "closed by client"),
        other => panic!("expected the call to fail as closed, got {other:?}"),
    }
    let released = returned.duration_since(started);
    assert!(
        released < grace / 2,
        "the call was released after {released:?}"
    );
}

#[allow(dead_code)] // Only the fake server is used here.
#[path = "common/memory.rs"]
mod memory;

/// Log lines a server sends just before a result reach the notification callback even when the
/// caller closes the client as soon as it has the result, as a one-shot program does: `close`
/// waits for the callback to take what arrived before it, and no callback runs after it.
#[test]
fn notifications_sent_before_a_result_reach_the_callback_of_a_client_closed_at_once() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use umcp::types::ServerNotification;
    const LINES: usize = 5;
    let server = memory::FakeServer::new();
    server.on("tools/call", |peer, _| {
        for n in 0..LINES {
            peer.notify(
                "notifications/message",
                serde_json::json!({"level": "error", "data": format!("line {n}")}),
            );
        }
        Some(serde_json::json!({"content": [{"type": "text", "text": "done"}]}))
    });
    let seen = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&seen);
    let options = legacy().with_notification_callback(move |note| {
        if let ServerNotification::LoggingMessage(_) = note {
            // A callback slower than the answer: the result overtakes the lines.
            std::thread::sleep(Duration::from_millis(40));
            counted.fetch_add(1, Ordering::SeqCst);
        }
    });
    let client = Client::connect_with_options(server, options).expect("connect");
    let result = client
        .call_tool("log", serde_json::json!({}))
        .expect("the call");
    assert_eq!(result.text(), "done");
    client.close();
    let at_close = seen.load(Ordering::SeqCst);
    assert_eq!(at_close, LINES, "lines seen by the time close returned");
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(
        seen.load(Ordering::SeqCst),
        at_close,
        "a callback after close"
    );
}
