//! Servers that misbehave at volume over stdio: garbage lines, stderr and stdout floods, and
//! servers that stop reading.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use umcp::{Client, Error, Options, RequestOptions, TimeoutKind};

use crate::connect;
use crate::demo::demo;

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
        .with(&options)
        .call_tool("flood_status", json!({"timeout_ms": 50_000}))
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
                let result = client
                    .with(&options)
                    .call_tool("echo", json!({ "message": big }));
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
    let client = Client::connect_with_options(config, options).unwrap();
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
