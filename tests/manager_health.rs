//! The manager's health check against the bundled demo server: a quiet server is pinged and
//! left alone, a frozen one (SIGSTOP: alive, its pipes open, answering nothing) is stopped and
//! started again, and a restart does not wait for a ping under way; and against servers
//! written by others (server-everything in the handshake era, the Python SDK in the stateless
//! era), which answer the checks and stay connected.

#![cfg(unix)]

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use status::wait_for;
use umcp::{Error, Manager, ManagerOptions, ServerConfig, ServerStatus, StdioConfig};

mod common;
use umcp_test_support::demo;
#[path = "common/log_capture.rs"]
mod log_capture;
#[path = "common/status.rs"]
mod status;

/// Generous bound for anything that should be quick: proves "does not hang", not speed.
const BOUND: Duration = Duration::from_secs(30);

fn demo_server(name: &str, extra: &[&str]) -> ServerConfig {
    let binary = demo::demo_binary().to_string_lossy().into_owned();
    let mut args = vec!["--server", "--fixtures"];
    args.extend_from_slice(extra);
    ServerConfig::new(name, StdioConfig::new(binary).args(args))
}

fn options(interval: Duration, timeout: Duration) -> ManagerOptions {
    ManagerOptions::default()
        .without_cache()
        .with_reconnect_delay(Duration::from_millis(50), Duration::from_millis(500))
        .with_close_timeout(Duration::from_secs(10))
        .with_health_check(interval, timeout)
}

fn pid(manager: &Manager, server: &str) -> u32 {
    let result = manager
        .call_tool(&format!("{server}__process"), json!({}))
        .expect("process");
    let pid = result
        .structured_content
        .as_ref()
        .and_then(|v| v["pid"].as_u64());
    u32::try_from(pid.expect("pid")).expect("a pid fits u32")
}

/// How many requests of `method` the server's current process has seen.
fn seen(manager: &Manager, server: &str, method: &str) -> u64 {
    let result = manager
        .call_tool(&format!("{server}__requests_seen"), json!({}))
        .expect("requests_seen");
    let counts = result.structured_content.expect("structured");
    counts.get(method).and_then(Value::as_u64).unwrap_or(0)
}

fn signal(pid: u32, signal: &str) -> bool {
    Command::new("kill")
        .args([signal, &pid.to_string()])
        .stderr(Stdio::null())
        .status()
        .expect("kill(1) runs")
        .success()
}

#[test]
fn a_quiet_server_is_pinged_in_either_era_and_left_alone() {
    let servers = vec![demo_server("old", &[]), demo_server("new", &["--modern"])];
    let manager = Manager::start(
        servers,
        options(Duration::from_millis(100), Duration::from_secs(10)),
    );
    let events = manager.status_events();
    for name in ["old", "new"] {
        if !manager.status(name).is_some_and(|s| s.is_connected()) {
            wait_for(&events, name, ServerStatus::is_connected);
        }
    }
    let pids = (pid(&manager, "old"), pid(&manager, "new"));
    // The stateless era has no `ping`: there the check is a `server/discover`.
    let checks = |m: &Manager| (seen(m, "old", "ping"), seen(m, "new", "server/discover"));
    let before = checks(&manager);
    let deadline = Instant::now() + BOUND;
    while checks(&manager).0 < before.0 + 2 || checks(&manager).1 < before.1 + 2 {
        assert!(
            Instant::now() < deadline,
            "no health pings: {:?}",
            checks(&manager)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(
        seen(&manager, "new", "ping"),
        0,
        "no ping in the stateless era"
    );
    assert_eq!((pid(&manager, "old"), pid(&manager, "new")), pids);
    for name in ["old", "new"] {
        assert!(manager.status(name).is_some_and(|s| s.is_connected()));
    }
    manager.close();
}

/// A manager checking one demo server, `name`, every 200 ms with `timeout`, connected and
/// then frozen (SIGSTOP); with its status events and the frozen process's id.
fn frozen(name: &str, timeout: Duration) -> (Manager, umcp::StatusEvents, u32) {
    let manager = Manager::start(
        vec![demo_server(name, &[])],
        options(Duration::from_millis(200), timeout),
    );
    let events = manager.status_events();
    wait_for(&events, name, ServerStatus::is_connected);
    let pid = pid(&manager, name);
    assert!(signal(pid, "-STOP"));
    (manager, events, pid)
}

#[test]
fn a_frozen_server_is_taken_as_hung_stopped_and_started_again() {
    let (manager, events, first) = frozen("frozen", Duration::from_millis(500));
    let failed = wait_for(&events, "frozen", |s| {
        matches!(s, ServerStatus::Failed { .. })
    });
    match failed {
        ServerStatus::Failed { error, .. } => {
            assert!(matches!(error, Error::Timeout { .. }), "{error}");
            assert!(error.to_string().contains("ping"), "{error}");
        }
        other => panic!("{other}"),
    }
    wait_for(&events, "frozen", ServerStatus::is_connected);
    let second = pid(&manager, "frozen");
    assert_ne!(first, second, "a new process");
    // The frozen process was killed and reaped, not left behind.
    let deadline = Instant::now() + BOUND;
    while signal(first, "-0") {
        assert!(Instant::now() < deadline, "process {first} is still there");
        std::thread::sleep(Duration::from_millis(50));
    }
    manager.close();
}

#[test]
fn a_restart_does_not_wait_for_a_ping_under_way() {
    // The ping's own timeout is far beyond the bound below: only cancelling it ends it early.
    let (manager, events, first) = frozen("slow", Duration::from_secs(600));
    // Let the check start its ping at the frozen server.
    std::thread::sleep(Duration::from_millis(500));
    let restarted = Instant::now();
    manager.restart("slow").expect("restart");
    wait_for(&events, "slow", |s| {
        matches!(s, ServerStatus::Connecting { .. })
    });
    wait_for(&events, "slow", ServerStatus::is_connected);
    assert!(restarted.elapsed() < BOUND);
    assert_ne!(pid(&manager, "slow"), first);
    manager.close();
}

#[test]
fn interop_servers_of_both_eras_answer_the_checks_and_stay_connected() {
    if common::peers::skip_interop() {
        return;
    }
    log_capture::capture_logs();
    let path = |p: std::path::PathBuf| p.to_string_lossy().into_owned();
    let everything = ServerConfig::new(
        "everything",
        StdioConfig::new(path(common::peers::node()))
            .args([path(common::peers::server_everything()), "stdio".into()]),
    );
    let python = ServerConfig::new(
        "python",
        StdioConfig::new(path(common::peers::python_mcp()))
            .args([path(common::peers::python_server_script()), "stdio".into()]),
    );
    let manager = Manager::start(
        vec![everything, python],
        options(Duration::from_millis(100), Duration::from_secs(10))
            .with_startup_timeout(Duration::from_secs(60)),
    );
    let events = manager.status_events();
    assert!(manager.wait_ready(Duration::from_secs(120)), "both connect");
    while events.try_recv().is_some() {} // The start's own statuses.
    let eras: Vec<_> = ["everything", "python"]
        .iter()
        .map(|name| manager.client(name).expect("connected").era())
        .collect();
    assert_eq!(eras, [umcp::Era::Legacy, umcp::Era::Modern]);
    let written = |method: &str| {
        let needle = format!("\"method\":\"{method}\"");
        log_capture::logged("> ")
            .iter()
            .filter(|line| line.contains(&needle))
            .count()
    };
    // The connect probes sent one `server/discover` to each server; checks add more.
    let deadline = Instant::now() + BOUND;
    while written("ping") < 3 || written("server/discover") < 5 {
        assert!(
            Instant::now() < deadline,
            "checks written: {} ping, {} server/discover",
            written("ping"),
            written("server/discover")
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    while let Some(event) = events.try_recv() {
        assert!(
            event.status.is_connected(),
            "{}: {}",
            event.server,
            event.status
        );
    }
    let echo = manager
        .call_tool("everything__echo", json!({"message": "still here"}))
        .expect("echo");
    assert_eq!(echo.text(), "Echo: still here");
    let sum = manager
        .call_tool("python__add", json!({"a": 2, "b": 40}))
        .expect("add");
    assert_eq!(sum.text(), "42");
    manager.close();
}
