//! Start-up, crashes, exits and clean-up of stdio connections: errors are clear and nothing is left
//! behind.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use umcp::{Client, Error, RequestOptions};

use crate::connect;
use crate::demo::demo;

#[test]
fn crash_mid_call_fails_every_pending_request_promptly() {
    let client = Arc::new(connect("crash-mid-call"));
    let started = Instant::now();
    let waiters: Vec<_> = (0..4)
        .map(|_| {
            let client = client.clone();
            std::thread::spawn(move || {
                let options = RequestOptions::default().with_timeout(Duration::from_secs(60));
                client
                    .with(&options)
                    .call_tool("slow", json!({"steps": 100, "delay_ms": 100}))
            })
        })
        .collect();
    for waiter in waiters {
        match waiter.join().unwrap() {
            Err(Error::Closed(info)) => {
                assert!(info.exit_status.is_some(), "{info:?}");
                assert!(
                    info.stderr_tail.as_deref().unwrap_or("").contains("crash"),
                    "{info:?}"
                );
            }
            other => panic!("{other:?}"),
        }
    }
    // Far below the 60 s timeout: the exit is noticed, not waited out.
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert!(matches!(client.ping(), Err(Error::Closed(_))));
}

#[test]
fn exit_during_initialize_reports_status_and_stderr() {
    match Client::connect(demo("exit-on-init")) {
        Err(err @ Error::Closed(_)) => {
            let text = err.to_string();
            assert!(text.contains("during initialize"), "{text}");
            assert!(text.contains("fatal: config missing"), "{text}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_missing_command_is_a_spawn_error() {
    let config = umcp::StdioConfig::new("/nonexistent/umcp-no-such-server");
    assert!(matches!(Client::connect(config), Err(Error::Spawn { .. })));
}

#[test]
fn connect_close_cycles_leave_no_processes_or_threads() {
    let threads_before = thread_count();
    for _ in 0..200 {
        let client = connect("grandchild");
        client.ping().unwrap();
        client.close();
    }
    // Threads end as their connections close; allow a moment for the last ones to exit.
    let deadline = Instant::now() + Duration::from_secs(10);
    while thread_count() > threads_before + 4 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        thread_count() <= threads_before + 4,
        "{} > {}",
        thread_count(),
        threads_before
    );
    #[cfg(target_os = "linux")]
    assert_eq!(live_demo_processes(), Vec::<String>::new());
}

fn thread_count() -> usize {
    std::fs::read_dir("/proc/self/task")
        .map(|d| d.count())
        .unwrap_or(0)
}

/// Demo processes (servers or their sleeping grandchildren) whose parent is this test, or
/// that were orphaned to init.
#[cfg(target_os = "linux")]
fn live_demo_processes() -> Vec<String> {
    let me = std::process::id().to_string();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        let fields: Vec<&str> = stat.rsplit(") ").next().unwrap_or("").split(' ').collect();
        let ppid = fields.get(1).copied().unwrap_or("");
        if (cmdline.contains("--behaviour grandchild") || cmdline.contains("--grandchild"))
            && (ppid == me || ppid == "1")
        {
            let pid = entry.file_name().to_string_lossy().into_owned();
            found.push(format!("{pid} {cmdline}"));
        }
    }
    found
}

#[test]
fn the_server_may_ping_before_answering_initialize() {
    let client = connect("ping-first");
    client.ping().unwrap();
}

#[test]
fn an_unsupported_version_closes_with_a_clear_error() {
    match Client::connect(demo("bad-version")) {
        Err(err @ Error::Unsupported(_)) => {
            let text = err.to_string();
            assert!(
                text.contains("1999-01-01") && text.contains("2025-11-25"),
                "{text}"
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_oversized_message_is_a_clear_error_and_the_connection_survives() {
    let config = demo("huge-message").max_message_size(1024 * 1024);
    let client = Client::connect(config).unwrap();
    let options = RequestOptions::default().with_timeout(Duration::from_secs(20));
    let result = client
        .with(&options)
        .call_tool("huge", json!({"bytes": 4 * 1024 * 1024}));
    assert!(
        matches!(result, Err(Error::MessageTooLarge { .. })),
        "{result:?}"
    );
    let echo = client
        .call_tool("echo", json!({"message": "still here"}))
        .unwrap();
    assert_eq!(echo.text(), "still here");
}

/// A server that writes its banner (or its logs) on stdout, where only JSON-RPC belongs, and
/// so never seems to answer: the error shows what it wrote there.
#[cfg(unix)]
#[test]
fn text_on_stdout_shows_in_the_error_it_causes() {
    let config = umcp::StdioConfig::new("sh")
        .args(["-c", "echo 'Server listening on stdio'; exec sleep 30"])
        .kill_grace(Duration::from_millis(200));
    let options = umcp::Options::default()
        .with_protocol_mode(umcp::ProtocolMode::Legacy)
        .with_startup_timeout(Duration::from_millis(500));
    let err = Client::connect_with_options(config, options).expect_err("no handshake");
    assert!(matches!(err, Error::Timeout { .. }), "{err}");
    let shown = err.to_string();
    assert!(
        shown.contains("[stdout, not JSON-RPC] Server listening on stdio"),
        "{shown}"
    );
}
