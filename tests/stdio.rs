//! Tests for the client over real child processes: the bundled demo server and its scripted
//! misbehaviours (crashes, garbage, floods, a server that stops reading, process trees).

#[path = "common/demo.rs"]
mod demo;

use std::sync::Arc;
use std::time::{Duration, Instant};

use demo::demo;
use serde_json::{json, Value};
use umcp::types::{ElicitRequestParams, ElicitResult, LoggingLevel, ServerNotification};
use umcp::{CancelHandle, Client, Error, Options, RequestOptions, TimeoutKind};

fn connect(behaviour: &str) -> Client {
    Client::connect(demo(behaviour)).expect("connect to the demo server")
}

fn cancelled_ids(client: &Client) -> Vec<Value> {
    let result = client.call_tool("cancellations", Value::Null).unwrap();
    let structured = result.structured_content.unwrap_or_default();
    structured["cancelled"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[test]
fn smoke() {
    let client = connect("normal");
    assert_eq!(client.transport_kind(), "stdio");
    assert_eq!(client.protocol_version(), "2025-11-25");
    let tools = client.list_all_tools().unwrap();
    assert!(tools.iter().any(|t| t.name == "echo"), "{tools:?}");
    let result = client
        .call_tool("echo", json!({"message": "hello"}))
        .unwrap();
    assert_eq!(result.text(), "hello");
    client.close();
}

#[test]
fn concurrent_callers_on_eight_threads_get_their_own_responses() {
    let client = Arc::new(connect("normal"));
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let client = client.clone();
            std::thread::spawn(move || {
                for i in 0..100 {
                    let message = format!("t{t}-{i}");
                    let result = client
                        .call_tool("echo", json!({ "message": message }))
                        .unwrap();
                    assert_eq!(result.text(), message);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("caller thread");
    }
}

#[test]
fn crash_mid_call_fails_every_pending_request_promptly() {
    let client = Arc::new(connect("crash-mid-call"));
    let started = Instant::now();
    let waiters: Vec<_> = (0..4)
        .map(|_| {
            let client = client.clone();
            std::thread::spawn(move || {
                let options = RequestOptions::default().with_timeout(Duration::from_secs(60));
                client.call_tool_with("slow", json!({"steps": 100, "delay_ms": 100}), &options)
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
fn garbage_lines_lose_no_response() {
    let client = Client::connect(demo("garbage").args(["--garbage", "100"])).unwrap();
    // 100 garbage lines before every message, 100 calls: 10,000+ garbage lines in all.
    for i in 0..100 {
        let result = client
            .call_tool("echo", json!({"message": i.to_string()}))
            .unwrap();
        assert_eq!(result.text(), i.to_string());
    }
}

#[test]
fn a_stderr_flood_does_not_stall_requests() {
    let client = connect("stderr-flood");
    for i in 0..50 {
        let result = client
            .call_tool("echo", json!({"message": i.to_string()}))
            .unwrap();
        assert_eq!(result.text(), i.to_string());
    }
    // The flood runs on its own server thread, so answers alone do not prove stderr is read:
    // all 100 MB must get through, which needs the client to drain the pipe.
    let options = RequestOptions::default().with_timeout(Duration::from_secs(60));
    let status = client
        .call_tool_with("flood_status", json!({"timeout_ms": 50_000}), &options)
        .unwrap();
    let status = status.structured_content.unwrap_or_default();
    assert_eq!(status["done"], true, "{status}");
    assert_eq!(status["written"], 100 * 1024 * 1024, "{status}");
}

#[test]
fn a_server_that_stops_reading_times_out_and_still_closes() {
    let client = Arc::new(connect("stop-reading"));
    let big = "x".repeat(256 * 1024);
    // Forty callers at once fill the pipe and the write queue: those whose message got into
    // the queue time out waiting for an answer, the rest waiting to be written.
    let callers: Vec<_> = (0..40)
        .map(|_| {
            let client = client.clone();
            let big = big.clone();
            std::thread::spawn(move || {
                let options = RequestOptions::default().with_timeout(Duration::from_millis(800));
                let started = Instant::now();
                let result = client.call_tool_with("echo", json!({ "message": big }), &options);
                (result, started.elapsed())
            })
        })
        .collect();
    let mut kinds = Vec::new();
    for caller in callers {
        match caller.join().unwrap() {
            (Err(Error::Timeout { kind, .. }), elapsed) => {
                assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
                kinds.push(kind);
            }
            other => panic!("{other:?}"),
        }
    }
    assert!(kinds.contains(&TimeoutKind::Write), "{kinds:?}");
    let closing = Instant::now();
    client.close();
    // Close: stdin closed, the grace period, then SIGTERM; well within the default bounds.
    assert!(
        closing.elapsed() < Duration::from_secs(10),
        "{:?}",
        closing.elapsed()
    );
}

#[test]
fn timeouts_and_cancels_send_cancelled_notifications() {
    let client = connect("normal");
    let options = RequestOptions::default().with_timeout(Duration::from_millis(200));
    let slow = json!({"steps": 50, "delay_ms": 100});
    assert!(client
        .call_tool_with("slow", slow.clone(), &options)
        .unwrap_err()
        .is_timeout());

    let cancel = CancelHandle::new();
    let trigger = cancel.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        trigger.cancel();
    });
    let options = RequestOptions::default().with_cancel(cancel);
    let cancelled = client.call_tool_with("slow", slow, &options);
    assert!(
        matches!(cancelled, Err(Error::Cancelled { .. })),
        "{cancelled:?}"
    );

    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let ids = cancelled_ids(&client);
        if ids.len() >= 2 {
            break;
        }
        assert!(Instant::now() < deadline, "server recorded {ids:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn progress_notifications_and_handlers_work_end_to_end() {
    let options = Options::default()
        .with_sampling_handler(|_| {
            Ok(umcp::types::CreateMessageResult::new(
                "test-model",
                umcp::types::ContentBlock::text("a haiku"),
            ))
        })
        .with_elicitation_handler(|params| match params {
            ElicitRequestParams::Form(form) => Ok(ElicitResult::accept_defaults(&form)),
            _ => Err(umcp::jsonrpc::ErrorObject::new(
                umcp::jsonrpc::ErrorCode(-1),
                "no",
            )),
        });
    let client = Client::connect_with(demo("normal"), options).unwrap();
    let notes = client.notifications();

    let steps = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = steps.clone();
    let with_progress =
        RequestOptions::default().with_progress(move |p| sink.lock().unwrap().push(p.progress));
    client
        .call_tool_with("slow", json!({"steps": 3, "delay_ms": 10}), &with_progress)
        .unwrap();
    assert_eq!(steps.lock().unwrap().len(), 3);

    let reply = client
        .call_tool("ask_llm", json!({"prompt": "write"}))
        .unwrap();
    assert!(reply.text().contains("a haiku"), "{reply:?}");
    let answer = client
        .call_tool("ask_user", json!({"question": "name?"}))
        .unwrap();
    assert!(!answer.is_error.unwrap_or(false), "{answer:?}");

    client.set_logging_level(LoggingLevel::Debug).unwrap();
    client
        .call_tool("log", json!({"level": "warning", "message": "disk low"}))
        .unwrap();
    let note = notes
        .recv_timeout(Duration::from_secs(5))
        .expect("a log notification");
    assert!(
        matches!(note, ServerNotification::LoggingMessage(_)),
        "{note:?}"
    );
}

/// A level from the options reaches a handshake-era session as well: `logging/setLevel` is
/// sent right after `initialize`, so the server filters from the first call on.
#[test]
fn a_log_level_from_the_options_is_set_at_the_start_of_the_session() {
    let options = Options::default().with_log_level(LoggingLevel::Warning);
    let client = Client::connect_with(demo("normal"), options).expect("connect");
    let notes = client.notifications();
    for level in ["info", "error"] {
        client
            .call_tool("log", json!({"level": level, "message": level}))
            .expect("log");
    }
    let mut levels = Vec::new();
    while !levels.contains(&LoggingLevel::Error) {
        match notes.recv_timeout(Duration::from_secs(5)) {
            Some(ServerNotification::LoggingMessage(message)) => levels.push(message.level),
            Some(_) => {}
            None => panic!("no error logged; levels so far: {levels:?}"),
        }
    }
    assert_eq!(levels, [LoggingLevel::Error]);
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
    let result = client.call_tool_with("huge", json!({"bytes": 4 * 1024 * 1024}), &options);
    assert!(
        matches!(result, Err(Error::MessageTooLarge { .. })),
        "{result:?}"
    );
    let echo = client
        .call_tool("echo", json!({"message": "still here"}))
        .unwrap();
    assert_eq!(echo.text(), "still here");
}

#[test]
fn a_server_that_never_answers_times_out_and_is_told_so() {
    let record = std::env::temp_dir().join(format!("umcp-record-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&record);
    let config = demo("never-answer").env("UMCP_DEMO_RECORD", record.to_string_lossy());
    let client = Client::connect(config).unwrap();
    let options = RequestOptions::default().with_timeout(Duration::from_millis(300));
    let started = Instant::now();
    let err = client
        .call_tool_with("echo", json!({"message": "?"}), &options)
        .unwrap_err();
    assert!(err.is_timeout(), "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(5));
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let recorded = std::fs::read_to_string(&record).unwrap_or_default();
        if recorded.contains("notifications/cancelled") {
            break;
        }
        assert!(Instant::now() < deadline, "recorded: {recorded}");
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = std::fs::remove_file(&record);
}

#[test]
fn a_stdout_flood_of_notifications_does_not_stall_requests_or_memory() {
    // 64 MiB of 1 MiB log notifications that nobody reads, under a queue of 8: every one passes
    // the router, the oldest unread are dropped, and requests are answered meanwhile.
    let seen = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = seen.clone();
    let options = Options::default()
        .with_notification_capacity(8)
        .with_notification_callback(move |_| {
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        });
    let config = demo("stdout-flood").args(["--bytes", "67108864"]);
    let client = Client::connect_with(config, options).unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut i = 0;
    while seen.load(std::sync::atomic::Ordering::SeqCst) < 64 {
        assert!(
            Instant::now() < deadline,
            "only {seen:?} notifications arrived"
        );
        let result = client
            .call_tool("echo", json!({"message": i.to_string()}))
            .unwrap();
        assert_eq!(result.text(), i.to_string());
        i += 1;
    }
    let notes = client.notifications();
    let mut queued = 0;
    while notes.try_recv().is_some() {
        queued += 1;
    }
    assert_eq!(queued, 8);
}
