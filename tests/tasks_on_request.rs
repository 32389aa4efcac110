//! Tasks on request (the tasks extension, SEP-2663) against a mirror of the conformance
//! suite's unreleased `tasks-client-lifecycle` scenario: the same tools, tasks and answers,
//! and its checks asserted here. The scenario runs on a handshake-era session by default,
//! where `resultType: "task"` is not in the released 2025-11-25 schema: that test goes beyond
//! the released text, as the scenario does; its stateless twin asks for the task per request
//! with `RequestOptions::with_task` and holds it by handle.

#![cfg(feature = "http")]

use umcp_test_support::http_server;
#[path = "common/scenario.rs"]
mod scenario;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use umcp::{
    Client, Era, Error, HttpConfig, Options, ProtocolMode, RequestOptions, TaskStatus, ToolCall,
};

const TASKS: &str = "io.modelcontextprotocol/tasks";

/// A task in `status` as the mock describes it.
fn task(id: &str, status: &str) -> Value {
    json!({
        "taskId": id, "status": status, "createdAt": "2026-07-28T10:00:00Z",
        "lastUpdatedAt": "2026-07-28T10:00:00Z", "ttlMs": 60000, "pollIntervalMs": 300,
    })
}

/// The scenario's server. `declared` turns true (for the rest of the run, as in the
/// scenario) once any request declares the extension, in `initialize` or in its `_meta`.
fn mock() -> http_server::Server {
    let declared = Arc::new(Mutex::new(false));
    let quick_polls = Arc::new(AtomicUsize::new(0));
    let cancelled = Arc::new(Mutex::new(false));
    http_server::serve(move |seen, reply| {
        let Some(reply) = scenario::base(&seen, reply) else {
            return;
        };
        let body = seen.json();
        let (id, params) = (&body["id"], &body["params"]);
        let per_request = &params["_meta"]["io.modelcontextprotocol/clientCapabilities"];
        if per_request["extensions"][TASKS].is_object()
            || params["capabilities"]["extensions"][TASKS].is_object()
        {
            *declared.lock().unwrap() = true;
        }
        let augment = *declared.lock().unwrap();
        let capabilities = json!({"tools": {}, "extensions": {TASKS: {}}});
        let created = |id: &str| {
            let mut created = task(id, "working");
            created["resultType"] = json!("task");
            created
        };
        let complete = |mut value: Value| {
            value["resultType"] = json!("complete");
            value
        };
        let task_id = params["taskId"].as_str().unwrap_or_default();
        let result = match body["method"].as_str().unwrap_or_default() {
            "server/discover" => json!({
                "resultType": "complete", "supportedVersions": ["2026-07-28"],
                "capabilities": capabilities, "ttlMs": 0, "cacheScope": "private",
            }),
            "initialize" => json!({
                "protocolVersion": params["protocolVersion"], "capabilities": capabilities,
                "serverInfo": {"name": "tasks", "version": "1"},
            }),
            "tools/list" => {
                let tool = |name: &str| json!({"name": name, "inputSchema": {"type": "object"}});
                let tools = ["sync_echo", "quick_task", "failing_task", "cancel_task"].map(tool);
                complete(json!({ "tools": tools }))
            }
            "tools/call" => match (params["name"].as_str().unwrap_or_default(), augment) {
                ("quick_task", true) => created("task-quick-0001"),
                ("failing_task", true) => created("task-fail-0001"),
                ("cancel_task", true) => created("task-cancel-0001"),
                _ => complete(json!({"content": [{"type": "text", "text": "sync-ok"}]})),
            },
            "tasks/get" => match task_id {
                "task-quick-0001" if quick_polls.fetch_add(1, Ordering::SeqCst) == 0 => {
                    complete(task(task_id, "working"))
                }
                "task-quick-0001" => {
                    let mut done = complete(task(task_id, "completed"));
                    done["result"] =
                        json!({"content": [{"type": "text", "text": "quick-task-result"}]});
                    done
                }
                "task-fail-0001" => {
                    let mut failed = complete(task(task_id, "failed"));
                    failed["statusMessage"] = json!("failing_task always fails");
                    failed["error"] = json!({"code": -32603,
                        "message": "Internal error: failing_task always fails"});
                    failed
                }
                "task-cancel-0001" if *cancelled.lock().unwrap() => {
                    complete(task(task_id, "cancelled"))
                }
                "task-cancel-0001" => complete(task(task_id, "working")),
                _ => return scenario::refuse(reply, 200, id, -32602, "unknown task"),
            },
            "tasks/cancel" if task_id == "task-cancel-0001" => {
                *cancelled.lock().unwrap() = true;
                json!({"resultType": "complete"})
            }
            "tasks/cancel" | "tasks/update" => json!({"resultType": "complete"}),
            // A deliberately invalid answer: `ping` cannot become a task.
            "ping" | "vendor/ping" if augment => created("task-bogus-0001"),
            _ => json!({"resultType": "complete"}),
        };
        scenario::answer(reply, id, result)
    })
}

/// The requests about tasks, by task id: `(method, seen)`.
fn task_requests(seen: &[http_server::Seen]) -> Vec<(String, String, http_server::Seen)> {
    seen.iter()
        .filter_map(|r| {
            let method = r.rpc_method()?;
            let id = r.json()["params"]["taskId"].as_str()?.to_owned();
            method
                .starts_with("tasks/")
                .then(|| (method, id, r.clone()))
        })
        .collect()
}

/// The scenario's checks on what the mock saw (all but the polymorphic-result one, which
/// the script's assertions make).
fn check_wire(seen: &[http_server::Seen], stateless: bool) {
    let tasks = task_requests(seen);
    // sep-2663-client-emits-mcp-name-on-tasks-methods
    assert!(!tasks.is_empty());
    for (method, id, request) in &tasks {
        assert_eq!(request.header("mcp-name"), Some(id.as_str()), "{method}");
        if stateless {
            // The extension has servers refuse undeclared tasks/* requests (-32021).
            let declared = &request.json()["params"]["_meta"]
                ["io.modelcontextprotocol/clientCapabilities"]["extensions"][TASKS];
            assert!(declared.is_object(), "{method} declares the extension");
        }
    }
    // sep-2663-client-honors-poll-interval: polls of one task at least 300 − 50 ms apart.
    let quick: Vec<_> = (tasks.iter())
        .filter(|(m, id, _)| m == "tasks/get" && id == "task-quick-0001")
        .collect();
    assert_eq!(quick.len(), 2);
    let gap = quick[1].2.at.duration_since(quick[0].2.at);
    assert!(gap >= Duration::from_millis(250), "{gap:?}");
    // tasks-client-terminal-failed-surfaced: fewer than 3 polls after `failed`.
    let fail_polls = (tasks.iter())
        .filter(|(m, id, _)| m == "tasks/get" && id == "task-fail-0001")
        .count();
    assert_eq!(fail_polls, 1);
    // sep-2663-cancel-not-via-cancelled-notification
    assert!(tasks
        .iter()
        .any(|(m, id, _)| m == "tasks/cancel" && id == "task-cancel-0001"));
    let methods = scenario::methods(seen);
    assert!(
        !methods.iter().any(|m| m == "notifications/cancelled"),
        "{methods:?}"
    );
    // sep-2663-client-rejects-task-result-on-unsupported
    assert!(!tasks.iter().any(|(_, id, _)| id == "task-bogus-0001"));
}

#[test]
fn tasks_client_lifecycle_on_a_handshake_session_beyond_the_released_text() {
    let server = mock();
    let options = Options::default()
        .with_protocol_mode(ProtocolMode::Legacy)
        .with_extension(TASKS, json!({}));
    let client =
        Client::connect_with_options(HttpConfig::new(server.url("/")), options).expect("connect");
    assert_eq!(client.era(), Era::Legacy);
    assert_eq!(client.list_all_tools().expect("tools").len(), 4);
    // A task the server made of a call is followed to its result.
    let quick = client.call_tool("quick_task", json!({})).expect("quick");
    assert_eq!(quick.text(), "quick-task-result");
    assert_eq!(
        client
            .call_tool("sync_echo", json!({}))
            .expect("sync")
            .text(),
        "sync-ok"
    );
    // A failed task is its JSON-RPC error, and the client goes on.
    match client.call_tool("failing_task", json!({})) {
        Err(Error::Rpc(error)) => assert_eq!(error.code.0, -32603),
        other => panic!("{other:?}"),
    }
    let ToolCall::Task(mut handle) = client
        .with(&RequestOptions::default())
        .call_tool_as_task("cancel_task", json!({}))
        .expect("cancel_task")
    else {
        panic!("a task")
    };
    assert_eq!(handle.id(), "task-cancel-0001");
    handle.cancel().expect("tasks/cancel");
    assert_eq!(*handle.poll().expect("tasks/get"), TaskStatus::Cancelled);
    // `ping` answered with a task is an invalid response, never an empty success.
    match client.ping() {
        Err(Error::Protocol(why)) => assert!(why.contains("no valid answer"), "{why}"),
        other => panic!("{other:?}"),
    }
    client.close();
    check_wire(&scenario::posts(&server), false);
}

#[test]
fn a_task_asked_for_per_request_is_held_by_handle_in_the_stateless_era() {
    let server = mock();
    let client = Client::connect_with_options(HttpConfig::new(server.url("/")), Options::default())
        .expect("connect");
    assert_eq!(client.era(), Era::Modern);
    // Without asking, the mock answers at once: the client declared nothing.
    let plain = client.call_tool("quick_task", json!({})).expect("plain");
    assert_eq!(plain.text(), "sync-ok");
    let asked = RequestOptions::default().with_task();
    let ToolCall::Task(handle) = client
        .with(&asked)
        .call_tool_as_task("quick_task", json!({}))
        .expect("quick")
    else {
        panic!("a task")
    };
    assert_eq!(*handle.status(), TaskStatus::Working);
    assert_eq!(handle.poll_interval(), Duration::from_millis(300));
    let polls = Arc::new(AtomicUsize::new(0));
    let counted = polls.clone();
    let patience = RequestOptions::default().with_progress(move |_| {
        counted.fetch_add(1, Ordering::SeqCst);
    });
    let result = handle.wait(&patience).expect("completed");
    assert_eq!(result.text(), "quick-task-result");
    assert_eq!(polls.load(Ordering::SeqCst), 2, "each poll reported");
    // `with_task` on an ordinary call follows the task to its end.
    let sync = client
        .with(&asked)
        .call_tool("sync_echo", json!({}))
        .expect("sync");
    assert_eq!(sync.text(), "sync-ok");
    match client.with(&asked).call_tool("failing_task", json!({})) {
        Err(Error::Rpc(error)) => assert_eq!(error.code.0, -32603),
        other => panic!("{other:?}"),
    }
    let ToolCall::Task(handle) = client
        .with(&asked)
        .call_tool_as_task("cancel_task", json!({}))
        .expect("cancel_task")
    else {
        panic!("a task")
    };
    handle.cancel().expect("tasks/cancel");
    let mut again = client.task("task-cancel-0001");
    assert_eq!(*again.status(), TaskStatus::Unknown);
    assert!(again.poll().expect("polled").is_terminal());
    // A task answering a method that cannot become one (here a vendor method; the stateless
    // era has no `ping`) is refused, and nothing follows it.
    match client
        .with(&RequestOptions::default())
        .request_raw("vendor/ping", None)
    {
        Err(Error::Protocol(why)) => assert!(why.contains("no valid answer"), "{why}"),
        other => panic!("{other:?}"),
    }
    client.close();
    check_wire(&scenario::posts(&server), true);
}
