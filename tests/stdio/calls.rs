//! Calls over stdio against the demo server: concurrency, timeouts, cancellation, progress and log
//! levels.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use umcp::types::{ElicitRequestParams, ElicitResult, LoggingLevel, ServerNotification};
use umcp::{CancelHandle, Client, Error, Options, RequestOptions};

use crate::connect;
use crate::demo::demo;

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
fn timeouts_and_cancels_send_cancelled_notifications() {
    let client = connect("normal");
    let options = RequestOptions::default().with_timeout(Duration::from_millis(200));
    let slow = json!({"steps": 50, "delay_ms": 100});
    assert!(client
        .with(&options)
        .call_tool("slow", slow.clone())
        .unwrap_err()
        .is_timeout());

    let cancel = CancelHandle::new();
    let trigger = cancel.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        trigger.cancel();
    });
    let options = RequestOptions::default().with_cancel(cancel);
    let cancelled = client.with(&options).call_tool("slow", slow);
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
    let client = Client::connect_with_options(demo("normal"), options).unwrap();
    let notes = client.notifications();

    let steps = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = steps.clone();
    let with_progress =
        RequestOptions::default().with_progress(move |p| sink.lock().unwrap().push(p.progress));
    client
        .with(&with_progress)
        .call_tool("slow", json!({"steps": 3, "delay_ms": 10}))
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
    let client = Client::connect_with_options(demo("normal"), options).expect("connect");
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
fn a_server_that_never_answers_times_out_and_is_told_so() {
    let record = std::env::temp_dir().join(format!("umcp-record-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&record);
    let config = demo("never-answer").env("UMCP_DEMO_RECORD", record.to_string_lossy());
    let client = Client::connect(config).unwrap();
    let options = RequestOptions::default().with_timeout(Duration::from_millis(300));
    let started = Instant::now();
    let err = client
        .with(&options)
        .call_tool("echo", json!({"message": "?"}))
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
