//! A manager's servers over their lifetime: one bad server never fails the group, run-time changes,
//! restarts, limits, closing, and a server's own protocol setting.

use std::time::{Duration, Instant};

use serde_json::json;
use umcp::{Era, Error, Manager, Options, ProtocolMode, ServerConfig, ServerStatus, StdioConfig};

use crate::status::wait_for;
use crate::{demo, demo_server, options, stuck_server, text, BOUND};

#[test]
fn smoke_one_bad_server_never_fails_the_group() {
    // No retries after failures, so every status below is final; a connection that lived
    // longer than the largest delay (10 ms) was healthy, and its loss is still retried.
    let manager = Manager::start(
        vec![
            demo_server("crashy"),
            demo_server("good"),
            ServerConfig::stdio("missing", "/nonexistent/umcp-no-such-server"),
            stuck_server("stuck", Duration::from_millis(500)),
        ],
        options()
            .with_reconnect_attempts(0)
            .with_reconnect_delay(Duration::from_millis(10), Duration::from_millis(10)),
    );
    let events = manager.status_events();
    // A call to a server that is still starting waits for its start-up deadline, then fails.
    let started = Instant::now();
    let err = manager.client("stuck").unwrap_err();
    assert!(err.is_timeout(), "{err}");
    assert!(started.elapsed() < BOUND);

    assert!(manager.wait_ready(BOUND));
    let statuses = manager.statuses();
    let names: Vec<&str> = statuses.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["crashy", "good", "missing", "stuck"]);
    let statuses = &statuses[1..];
    assert!(
        matches!(
            statuses[0].1,
            ServerStatus::Connected {
                transport: "stdio",
                reconnects: 0
            }
        ),
        "{}",
        statuses[0].1
    );
    match &statuses[1].1 {
        ServerStatus::Failed {
            error: Error::Spawn { command, .. },
            next_attempt: None,
            ..
        } => {
            assert!(command.contains("umcp-no-such-server"));
        }
        other => panic!("missing: {other}"),
    }
    match &statuses[2].1 {
        ServerStatus::Failed {
            error,
            next_attempt: None,
            ..
        } => assert!(error.is_timeout(), "{error}"),
        other => panic!("stuck: {other}"),
    }

    // The good servers work, and only their tools are offered.
    let result = manager
        .call_tool("good__echo", json!({"message": "hi"}))
        .unwrap();
    assert_eq!(text(&result), "hi");
    let tools = manager.known_tools();
    assert!(tools
        .iter()
        .all(|e| ["crashy", "good"].contains(&e.server.as_str()) && !e.stale));
    let err = manager.call_tool("missing__echo", json!({})).unwrap_err();
    assert!(matches!(err, Error::Invalid(_)), "{err}");
    let err = manager.client("missing").unwrap_err();
    assert!(matches!(err, Error::Spawn { .. }), "{err}");

    // A server that crashes: the call in flight fails with the closed error and is not
    // replayed; the server is reconnected and its tools listed again.
    let err = manager.call_tool("crashy__crash", json!({})).unwrap_err();
    assert!(matches!(err, Error::Closed(_)), "{err}");
    let failed = wait_for(&events, "crashy", |s| {
        matches!(s, ServerStatus::Failed { .. })
    });
    let message = failed.to_string();
    assert!(
        message.contains("crash requested"),
        "the stderr tail explains: {message}"
    );
    let status = wait_for(&events, "crashy", ServerStatus::is_connected);
    assert!(
        matches!(status, ServerStatus::Connected { reconnects: 1, .. }),
        "{status}"
    );
    assert!(manager
        .known_tools()
        .iter()
        .any(|e| e.name == "crashy__crash" && !e.stale));
    let result = manager
        .call_tool("crashy__echo", json!({"message": "back"}))
        .unwrap();
    assert_eq!(text(&result), "back");
    let result = manager
        .call_tool("good__echo", json!({"message": "still"}))
        .unwrap();
    assert_eq!(text(&result), "still");
}

fn pid(manager: &Manager, tool: &str) -> u64 {
    let result = manager.call_tool(tool, json!({})).unwrap();
    result
        .structured_content
        .as_ref()
        .and_then(|v| v["pid"].as_u64())
        .expect("pid")
}

#[test]
fn servers_are_added_restarted_and_removed_at_run_time() {
    let manager = Manager::start(Vec::new(), options());
    let events = manager.status_events();
    manager.add(demo_server("x")).unwrap();
    let err = manager.add(demo_server("x")).unwrap_err();
    assert!(matches!(err, Error::Config(_)), "{err}");
    wait_for(&events, "x", ServerStatus::is_connected);
    let first = pid(&manager, "x__process");

    manager.restart("x").unwrap();
    wait_for(&events, "x", |s| {
        matches!(s, ServerStatus::Connecting { .. })
    });
    wait_for(&events, "x", ServerStatus::is_connected);
    let second = pid(&manager, "x__process");
    assert_ne!(first, second, "a restart starts a new process");

    manager.remove("x").unwrap();
    wait_for(&events, "x", |s| matches!(s, ServerStatus::Stopped));
    assert!(manager.server_names().is_empty());
    let err = manager.call_tool("x__echo", json!({})).unwrap_err();
    assert!(matches!(err, Error::Config(_)), "{err}");
    assert!(manager.remove("x").is_err());

    manager.add(demo_server("off").with_disabled(true)).unwrap();
    assert!(matches!(
        manager.status("off"),
        Some(ServerStatus::Disabled)
    ));
    assert!(manager.restart("off").is_err());
    let err = manager.client("off").unwrap_err();
    assert_eq!(err.to_string(), "config: server `off` is disabled");
}

#[test]
fn options_without_limits_never_overflow() {
    // "No limit" everywhere the manager adds a user's duration to the clock or sizes a
    // queue; the servers' own start-up timeouts stay finite (the client's concern).
    let options = options()
        .with_reconnect_attempts(2)
        .with_reconnect_delay(Duration::MAX, Duration::MAX)
        .with_close_timeout(Duration::MAX)
        .with_queue_capacity(usize::MAX);
    let flaky = ServerConfig::new("flaky", StdioConfig::new("sh").args(["-c", "exit 3"]))
        .with_startup_timeout(BOUND);
    let manager = Manager::start(vec![flaky], options);
    let deadline = Instant::now() + BOUND;
    loop {
        match manager.status("flaky") {
            Some(ServerStatus::Failed {
                next_attempt: Some(at),
                ..
            }) => {
                // The retry is scheduled, in a future nobody will see.
                assert!(at > Instant::now() + Duration::from_secs(3600 * 24 * 365));
                break;
            }
            other => assert!(Instant::now() < deadline, "{other:?}"),
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(manager.wait_ready(Duration::MAX));
    let err = manager.client("flaky").unwrap_err();
    assert!(matches!(err, Error::Closed(_)), "{err}");
    manager.close();
    assert!(matches!(
        manager.status("flaky"),
        Some(ServerStatus::Stopped)
    ));
}

#[test]
fn close_is_bounded_and_ends_the_queues() {
    // Servers that ignore the end of their input take a grace period each to stop: they
    // must be stopped side by side, not one after the other.
    let mut servers = vec![demo_server("good")];
    servers.extend((0..6).map(|i| stuck_server(&format!("stuck{i}"), BOUND)));
    let manager = Manager::start(servers, options());
    let events = manager.status_events();
    wait_for(&events, "good", ServerStatus::is_connected);
    let notifications = manager.notifications();
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    let drain = std::thread::spawn(move || {
        let count = notifications.iter().count();
        let _ = done_tx.send(count);
    });

    let started = Instant::now();
    manager.close();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    for (name, status) in manager.statuses() {
        assert!(matches!(status, ServerStatus::Stopped), "{name}: {status}");
    }
    assert!(
        done_rx.recv_timeout(BOUND).is_ok(),
        "the notification queue ends"
    );
    drain.join().unwrap();
    let err = manager
        .call_tool("good__echo", json!({"message": "late"}))
        .unwrap_err();
    assert!(matches!(err, Error::Invalid(_) | Error::Closed(_)), "{err}");
    assert!(matches!(
        manager.add(demo_server("new")),
        Err(Error::Closed(_))
    ));
}

#[test]
fn restart_interrupts_a_start_that_hangs() {
    let manager = Manager::start(
        vec![stuck_server("stuck", Duration::from_secs(120))],
        options(),
    );
    let events = manager.status_events();
    wait_for(&events, "stuck", |s| {
        matches!(s, ServerStatus::Connecting { .. })
    });
    manager.restart("stuck").unwrap();
    // The next event is the new attempt, long before the old one's deadline, and the
    // interrupted attempt is not reported as a failure.
    let next = wait_for(&events, "stuck", |_| true);
    assert!(
        matches!(next, ServerStatus::Connecting { attempt: 1 }),
        "{next}"
    );
    let started = Instant::now();
    manager.close();
    assert!(started.elapsed() < BOUND);
}

/// A server's own `protocol` setting wins over the manager's client options: with the
/// manager set to the stateless era, a handshake-only server pinned to `legacy` connects, the
/// same server without the setting does not, and a stateless-only server speaks its era.
#[test]
fn a_servers_protocol_setting_wins_over_the_managers() {
    let modern_demo = {
        let binary = demo::demo_binary().to_string_lossy().into_owned();
        ServerConfig::new(
            "modern",
            StdioConfig::new(binary).args(["--server", "--fixtures", "--modern"]),
        )
    };
    let manager = Manager::start(
        vec![
            demo_server("pinned").with_protocol(ProtocolMode::Legacy),
            demo_server("unpinned"),
            modern_demo,
        ],
        options()
            .with_reconnect_attempts(0)
            .with_client_options(Options::default().with_protocol_mode(ProtocolMode::modern())),
    );
    assert!(manager.wait_ready(BOUND));
    assert_eq!(manager.client("pinned").unwrap().era(), Era::Legacy);
    assert_eq!(manager.client("modern").unwrap().era(), Era::Modern);
    // Spoken to in the stateless era, the handshake-only server does not connect.
    let unpinned = manager.status("unpinned");
    assert!(
        matches!(unpinned, Some(ServerStatus::Failed { .. })),
        "{unpinned:?}"
    );
    manager.close();
}

/// A restart asked for again before the supervisor took the first adds nothing: a caller
/// restarting in a loop costs a reconnection or two, not one per call.
#[test]
fn restarts_asked_in_a_burst_are_coalesced() {
    let manager = Manager::start(vec![demo_server("x")], options());
    let events = manager.status_events();
    wait_for(&events, "x", ServerStatus::is_connected);
    for _ in 0..1_000 {
        manager.restart("x").unwrap();
    }
    // Count the reconnections until the server has stayed up for a second.
    let mut connecting = 0;
    let deadline = Instant::now() + BOUND;
    while let Some(event) = events.recv_timeout(Duration::from_secs(1)) {
        if matches!(event.status, ServerStatus::Connecting { .. }) {
            connecting += 1;
        }
        assert!(connecting <= 3, "{connecting} reconnections and counting");
        assert!(Instant::now() < deadline, "the server never settled");
    }
    assert!(connecting >= 1, "the restart was lost");
    assert!(manager.status("x").is_some_and(|s| s.is_connected()));
}

/// `connected_since` is the end of the connect, before the listings the manager runs on the
/// new connection: a server that never answers them is connected one request timeout and more
/// before its status says so.
#[test]
fn connected_since_is_the_connect_not_the_listings_after_it() {
    let timeout = Duration::from_millis(500);
    let binary = demo::demo_binary().to_string_lossy().into_owned();
    let silent = ServerConfig::new(
        "silent",
        StdioConfig::new(binary).args(["--server", "--fixtures", "--behaviour", "never-answer"]),
    );
    let manager = Manager::start(
        vec![silent, stuck_server("stuck", BOUND)],
        options()
            .with_reconnect_attempts(0)
            .with_client_options(Options::default().with_request_timeout(timeout)),
    );
    let _ = manager.client("silent").expect("connected");
    let since = manager.connected_since("silent").expect("connected");
    assert!(since.elapsed() >= timeout, "{:?}", since.elapsed());
    assert_eq!(manager.connected_since("stuck"), None);
    assert_eq!(manager.connected_since("nobody"), None);
    manager.remove("silent").expect("removed");
    assert_eq!(manager.connected_since("silent"), None);
}

/// A server that answers its handshake and then nothing holds its supervisor in the first
/// listing of its tools: a restart asked meanwhile closes that connection at once rather
/// than wait out the listing's request timeout.
#[test]
fn restart_interrupts_a_server_that_hangs_after_its_handshake() {
    let binary = demo::demo_binary().to_string_lossy().into_owned();
    let mute = ServerConfig::new(
        "mute",
        StdioConfig::new(binary).args(["--server", "--behaviour", "never-answer"]),
    )
    .with_protocol(ProtocolMode::Legacy)
    .with_startup_timeout(Duration::from_secs(120))
    .with_request_timeout(Duration::from_secs(120));
    let manager = Manager::start(vec![mute], options());
    let events = manager.status_events();
    wait_for(&events, "mute", |s| {
        matches!(s, ServerStatus::Connecting { .. })
    });
    // Time to answer `initialize`: the supervisor is then listing tools.
    std::thread::sleep(Duration::from_secs(1));
    let asked = Instant::now();
    manager.restart("mute").unwrap();
    wait_for(&events, "mute", |s| {
        matches!(s, ServerStatus::Connecting { attempt: 1 })
    });
    assert!(asked.elapsed() < BOUND, "{:?}", asked.elapsed());
    let started = Instant::now();
    manager.close();
    assert!(started.elapsed() < BOUND);
}

/// A server built from a whole `StdioConfig` runs with everything that configuration says,
/// here its stderr callback, which a configuration file cannot set.
#[test]
fn a_server_built_from_a_stdio_config_keeps_its_settings() {
    use std::sync::{Arc, Mutex};
    let lines = Arc::new(Mutex::new(Vec::<String>::new()));
    let seen = Arc::clone(&lines);
    let stdio = umcp::StdioConfig::new(demo::demo_binary().to_string_lossy().into_owned())
        .args(["--server", "--fixtures", "--start-delay", "10"])
        .stderr_callback(move |line| seen.lock().unwrap().push(line.to_owned()));
    let manager = Manager::start(vec![ServerConfig::new("called", stdio)], options());
    assert!(manager.wait_ready(BOUND));
    assert!(
        matches!(
            manager.status("called"),
            Some(ServerStatus::Connected { .. })
        ),
        "{:?}",
        manager.status("called")
    );
    let result = manager
        .call_tool("called__echo", json!({"message": "hi"}))
        .unwrap();
    assert_eq!(text(&result), "hi");
    // The server says on stderr that it starts late, before it reads its input; the callback
    // runs on a thread of its own, so the line may reach it a moment after the call returned.
    let said = |lines: &[String]| lines.iter().any(|l| l.contains("starting in 10 ms"));
    let until = Instant::now() + BOUND;
    while !said(&lines.lock().unwrap()) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(10));
    }
    let lines = lines.lock().unwrap().clone();
    assert!(said(&lines), "{lines:?}");
    manager.close();
}
