//! The tasks extension of the stateless era (`io.modelcontextprotocol/tasks`): a tool the
//! server runs as a task is called with `call_tool` as any other, in either era. The client
//! declares the extension when a server refuses a call for want of it (-32021), polls
//! `tasks/get`, answers input with `tasks/update`, and cancels a task it gives up on.

#[allow(dead_code)] // Only the fake server and its handlers are used here.
#[path = "common/memory.rs"]
mod memory;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use memory::FakeServer;
use serde_json::{json, Value};
use umcp::jsonrpc::{ErrorCode, ErrorObject, Message, Response};
use umcp::types::{ElicitRequestParams, ElicitResult};
use umcp::{CancelHandle, Client, Era, Error, Options, RequestOptions};

const TASKS: &str = "io.modelcontextprotocol/tasks";

/// What `tasks/get` answers on poll `n` (from 1), given the `tasks/update` params seen so far.
type Script = dyn Fn(usize, &[Value]) -> Value + Send + Sync;

/// A task in `status`, with `fields` added.
fn task(status: &str, fields: Value) -> Value {
    let mut task = json!({
        "taskId": "t-1", "status": status, "createdAt": "2026-07-28T10:00:00Z",
        "lastUpdatedAt": "2026-07-28T10:00:00Z", "ttlMs": 60000, "pollIntervalMs": 20,
    });
    for (key, value) in fields.as_object().into_iter().flatten() {
        task[key] = value.clone();
    }
    task
}

/// A stateless server whose `report` tool runs as a task, which needs the client to declare
/// the extension (-32021 otherwise); `tasks/get` follows `script`.
fn task_server(
    name: &str,
    script: impl Fn(usize, &[Value]) -> Value + Send + Sync + 'static,
) -> FakeServer {
    let server = FakeServer::named(name);
    server.on("server/discover", |_, _| {
        Some(json!({
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}, "extensions": {TASKS: {}}},
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "fake", "version": "2"}},
        }))
    });
    server.on("tools/call", |peer, request| {
        let params = request.params.clone().unwrap_or_default();
        let capabilities = &params["_meta"]["io.modelcontextprotocol/clientCapabilities"];
        if capabilities["extensions"][TASKS].is_object() {
            let mut created = task("working", json!({}));
            created["resultType"] = json!("task");
            return Some(created);
        }
        let error = ErrorObject::new(
            ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
            "Missing required client capability",
        )
        .with_data(json!({"requiredCapabilities": {"extensions": {TASKS: {}}}}));
        peer.send(Message::Response(Response::err(request.id.clone(), error)));
        None
    });
    let polls = Arc::new(AtomicUsize::new(0));
    let updates: Arc<Mutex<Vec<Value>>> = Arc::default();
    let script: Arc<Script> = Arc::new(script);
    let seen = updates.clone();
    server.on("tasks/update", move |_, request| {
        seen.lock()
            .unwrap()
            .push(request.params.clone().unwrap_or_default());
        Some(json!({"resultType": "complete"}))
    });
    server.on("tasks/get", move |_, request| {
        assert_eq!(request.params.as_ref().unwrap()["taskId"], "t-1");
        let n = polls.fetch_add(1, Ordering::SeqCst) + 1;
        let mut answer = script(n, &updates.lock().unwrap());
        answer["resultType"] = json!("complete");
        Some(answer)
    });
    server.on("tasks/cancel", |_, _| {
        Some(json!({"resultType": "complete"}))
    });
    server
}

/// The params of every request with this method the client sent.
fn sent(server: &FakeServer, method: &str) -> Vec<Value> {
    let received = server.received.lock().unwrap();
    received
        .iter()
        .filter_map(|m| match m {
            Message::Request(r) if r.method == method => Some(r.params.clone().unwrap_or_default()),
            _ => None,
        })
        .collect()
}

/// Waits up to 5 s for a `tasks/cancel`; its params.
fn cancel_sent(server: &FakeServer) -> Option<Value> {
    let until = Instant::now() + Duration::from_secs(5);
    while Instant::now() < until {
        if let Some(params) = sent(server, "tasks/cancel").pop() {
            return Some(params);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    None
}

/// A client of `server` that follows tasks.
fn tasking(server: &FakeServer) -> Client {
    let options = Options::default().with_tasks(true);
    Client::connect_with_options(server.clone(), options).expect("connect")
}

/// An elicitation answer's content.
fn content(value: Value) -> serde_json::Map<String, Value> {
    value.as_object().cloned().unwrap_or_default()
}

fn report_done() -> Value {
    task(
        "completed",
        json!({"result": {"content": [{"type": "text", "text": "the report"}]}}),
    )
}

#[test]
fn a_tool_the_server_runs_as_a_task_returns_its_result() {
    let server = task_server("tasks-modern-result", |n, _| match n {
        1 | 2 => task("working", json!({"pollIntervalMs": 150})),
        _ => report_done(),
    });
    let client = tasking(&server);
    assert_eq!(client.era(), Era::Modern);
    let started = Instant::now();
    let result = client
        .call_tool("report", json!({}))
        .expect("the task's result");
    assert_eq!(result.text(), "the report");
    // Two waits of the server's interval before the third poll.
    assert!(
        started.elapsed() >= Duration::from_millis(280),
        "{:?}",
        started.elapsed()
    );
    let calls = sent(&server, "tools/call");
    assert_eq!(
        calls.len(),
        2,
        "refused once, then sent declaring the extension"
    );
    let declared = |call: &Value| {
        call["_meta"]["io.modelcontextprotocol/clientCapabilities"]["extensions"][TASKS].is_object()
    };
    assert!(!declared(&calls[0]), "not declared before the server asks");
    assert!(declared(&calls[1]));
    assert_eq!(sent(&server, "tasks/get").len(), 3);
    assert!(
        sent(&server, "tasks/cancel").is_empty(),
        "a finished task is not cancelled"
    );
    // Ordinary calls on the same connection are unaffected, and the extension stays undeclared.
    client.call_tool("report", json!({})).expect("again");
    assert!(!declared(&sent(&server, "tools/call")[2]));
}

#[test]
fn input_a_task_asks_for_runs_the_handler_once_per_key_and_goes_back_with_tasks_update() {
    let ask = json!({"name": {"method": "elicitation/create", "params": {
        "mode": "form", "message": "Your name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}}});
    let server = task_server("tasks-modern-input", move |_, updates| {
        if updates.is_empty() {
            task("input_required", json!({"inputRequests": ask.clone()}))
        } else {
            report_done()
        }
    });
    let asked = Arc::new(AtomicUsize::new(0));
    let counter = asked.clone();
    let options = Options::default()
        .with_tasks(true)
        .with_elicitation_handler(move |params| {
            counter.fetch_add(1, Ordering::SeqCst);
            match params {
                ElicitRequestParams::Form(_) => {
                    Ok(ElicitResult::accept(content(json!({"name": "Ada"}))))
                }
                _ => Ok(ElicitResult::decline()),
            }
        });
    let client = Client::connect_with_options(server.clone(), options).expect("connect");
    let result = client.call_tool("report", json!({})).expect("result");
    assert_eq!(result.text(), "the report");
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    let updates = sent(&server, "tasks/update");
    assert_eq!(updates.len(), 1);
    assert_eq!(updates[0]["taskId"], "t-1");
    assert_eq!(updates[0]["inputResponses"]["name"]["action"], "accept");
    assert_eq!(
        updates[0]["inputResponses"]["name"]["content"]["name"],
        "Ada"
    );
}

#[test]
fn a_request_key_repeated_by_later_polls_is_answered_once() {
    let ask = json!({"k1": {"method": "elicitation/create", "params": {
        "mode": "form", "message": "Sure?", "requestedSchema": {"type": "object"}}}});
    // The server keeps showing the answered request for two more polls.
    let server = task_server("tasks-modern-dedupe", move |n, _| match n {
        1..=3 => task("input_required", json!({"inputRequests": ask.clone()})),
        _ => report_done(),
    });
    let asked = Arc::new(AtomicUsize::new(0));
    let counter = asked.clone();
    let options = Options::default()
        .with_tasks(true)
        .with_elicitation_handler(move |_| {
            counter.fetch_add(1, Ordering::SeqCst);
            Ok(ElicitResult::accept(content(json!({}))))
        });
    let client = Client::connect_with_options(server.clone(), options).expect("connect");
    client.call_tool("report", json!({})).expect("result");
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    assert_eq!(sent(&server, "tasks/update").len(), 1);
    assert_eq!(sent(&server, "tasks/get").len(), 4);
}

#[test]
fn a_failed_task_is_its_json_rpc_error() {
    let server = task_server("tasks-modern-failed", |_, _| {
        task(
            "failed",
            json!({"error": {"code": -32603, "message": "disk full"}}),
        )
    });
    let client = tasking(&server);
    match client.call_tool("report", json!({})) {
        Err(Error::Rpc(error)) => {
            assert_eq!(error.code, ErrorCode::INTERNAL_ERROR);
            assert_eq!(error.message, "disk full");
        }
        other => panic!("expected the task's error, got {other:?}"),
    }
    assert!(sent(&server, "tasks/cancel").is_empty());
}

#[test]
fn a_task_the_server_cancelled_says_so() {
    let server = task_server("tasks-modern-server-cancelled", |_, _| {
        task("cancelled", json!({"statusMessage": "shutting down"}))
    });
    let client = tasking(&server);
    match client.call_tool("report", json!({})) {
        Err(Error::Protocol(why)) => {
            assert!(why.contains("cancelled task t-1"), "{why}");
            assert!(why.contains("shutting down"), "{why}");
        }
        other => panic!("expected a protocol error, got {other:?}"),
    }
}

#[test]
fn a_task_past_the_call_deadline_times_out_and_is_cancelled() {
    let server = task_server("tasks-modern-timeout", |_, _| task("working", json!({})));
    let client = tasking(&server);
    let options = RequestOptions::default().with_timeout(Duration::from_millis(300));
    let started = Instant::now();
    match client.with(&options).call_tool("report", json!({})) {
        Err(Error::Timeout { method, .. }) => assert_eq!(method, "tools/call"),
        other => panic!("expected a timeout, got {other:?}"),
    }
    assert!(started.elapsed() < Duration::from_secs(5));
    let cancel = cancel_sent(&server).expect("tasks/cancel sent");
    assert_eq!(cancel["taskId"], "t-1");
}

#[test]
fn polls_keep_a_task_alive_when_the_timeout_resets_on_progress() {
    // Done at the tenth poll, 100 ms apart: about a second, over three times the timeout.
    let script = |n: usize, _: &[Value]| match n {
        1..=9 => task("working", json!({"pollIntervalMs": 100})),
        _ => report_done(),
    };
    let timeout = Duration::from_millis(300);
    let server = task_server("tasks-modern-reset", script);
    let client = tasking(&server);
    let resetting = RequestOptions::default()
        .with_timeout(timeout)
        .with_reset_timeout_on_progress(true);
    let result = client.with(&resetting).call_tool("report", json!({}));
    assert_eq!(result.expect("alive while polled").text(), "the report");

    let server = task_server("tasks-modern-no-reset", script);
    let client = tasking(&server);
    let fixed = RequestOptions::default().with_timeout(timeout);
    let outcome = client.with(&fixed).call_tool("report", json!({}));
    assert!(matches!(outcome, Err(Error::Timeout { .. })), "{outcome:?}");
}

#[test]
fn a_cancel_ends_the_wait_between_polls_at_once_and_cancels_the_task() {
    // The server asks for a minute between polls.
    let server = task_server("tasks-modern-cancel", |_, _| {
        task("working", json!({"pollIntervalMs": 60000}))
    });
    let client = tasking(&server);
    let cancel = CancelHandle::new();
    let options = RequestOptions::default()
        .with_timeout(Duration::from_secs(120))
        .with_cancel(cancel.clone());
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        cancel.cancel();
    });
    let started = Instant::now();
    let outcome = client.with(&options).call_tool("report", json!({}));
    assert!(
        matches!(outcome, Err(Error::Cancelled { .. })),
        "{outcome:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    canceller.join().unwrap();
    assert_eq!(cancel_sent(&server).expect("tasks/cancel")["taskId"], "t-1");
}

#[test]
fn closing_the_client_ends_the_wait_between_polls() {
    let server = task_server("tasks-modern-close", |_, _| {
        task("working", json!({"pollIntervalMs": 60000}))
    });
    let client = Arc::new(tasking(&server));
    let closer = {
        let client = client.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            client.close();
        })
    };
    let options = RequestOptions::default().with_timeout(Duration::from_secs(120));
    let started = Instant::now();
    let outcome = client.with(&options).call_tool("report", json!({}));
    assert!(matches!(outcome, Err(Error::Closed(_))), "{outcome:?}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    closer.join().unwrap();
}

#[test]
fn a_task_result_the_client_did_not_ask_for_is_invalid() {
    let server = task_server("tasks-modern-unasked", |_, _| report_done());
    // This server answers with a task even without the extension declared.
    server.on("tools/call", |_, _| {
        let mut created = task("working", json!({}));
        created["resultType"] = json!("task");
        Some(created)
    });
    let client = tasking(&server);
    match client.call_tool("report", json!({})) {
        Err(Error::Protocol(why)) => assert!(why.contains("resultType \"task\""), "{why}"),
        other => panic!("expected a protocol error, got {other:?}"),
    }
    assert!(sent(&server, "tasks/get").is_empty());
}

#[test]
fn without_task_support_a_call_the_server_runs_only_as_a_task_names_the_builder() {
    let server = task_server("tasks-modern-unsupported", |_, _| report_done());
    let client = Client::connect(server.clone()).expect("connect");
    let error = client
        .call_tool("report", json!({}))
        .expect_err("the server runs it only as a task");
    assert!(
        matches!(&error, Error::Unsupported(why) if why.to_string().contains("Options::with_tasks(true)")),
        "{error:?}"
    );
    // Refused once, not sent again declaring the extension, and no task was polled.
    assert_eq!(sent(&server, "tools/call").len(), 1);
    assert!(sent(&server, "tasks/get").is_empty());
}
