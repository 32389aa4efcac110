//! Tools that must run as tasks (2025-11-25 `execution.taskSupport: "required"`): `call_tool`
//! sends them task-augmented and returns the result `tasks/result` brings, so callers write
//! the same code as for any tool.

#[allow(dead_code)] // Only the fake server and its handlers are used here.
#[path = "common/memory.rs"]
mod memory;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use memory::FakeServer;
use serde_json::{json, Value};
use umcp::jsonrpc::{ErrorCode, ErrorObject, Message, Response};
use umcp::{Client, Error, Options, RequestOptions};

/// The `tasks/*` requests a fake server saw, with their params.
type Seen = Arc<Mutex<Vec<(String, Value)>>>;

/// A server offering task-augmented tool calls, whose `research` tool requires them. Its
/// `tasks/result` answers unless `answer` is false; the params of every `tasks/*` request
/// are kept in `seen`.
fn task_server(answer: bool) -> (FakeServer, Seen) {
    let server = FakeServer::new();
    server.init_result.lock().unwrap()["capabilities"]["tasks"] =
        json!({"requests": {"tools": {"call": {}}}, "cancel": {}});
    server.on("tools/list", |_, _| {
        Some(json!({"tools": [
            {"name": "research", "inputSchema": {"type": "object"},
             "execution": {"taskSupport": "required"}},
            {"name": "echo", "inputSchema": {"type": "object"},
             "execution": {"taskSupport": "optional"}},
        ]}))
    });
    server.on("tools/call", |peer, request| {
        let params = request.params.clone().unwrap_or_default();
        match (params["name"].as_str(), params.get("task")) {
            (Some("research"), Some(_)) => Some(json!({"task": {
                "taskId": "t-1", "status": "working", "createdAt": "2025-11-25T10:30:00Z",
                "lastUpdatedAt": "2025-11-25T10:30:00Z", "ttl": 60000, "pollInterval": 100}})),
            (Some("research"), None) => {
                let error = ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, "run it as a task");
                peer.send(Message::Response(Response::err(request.id.clone(), error)));
                None
            }
            (_, Some(_)) => panic!("an optional tool was made a task"),
            _ => Some(json!({"content": [{"type": "text", "text": "echoed"}]})),
        }
    });
    let seen = Arc::new(Mutex::new(Vec::new()));
    for method in ["tasks/result", "tasks/cancel", "tasks/get"] {
        let seen = seen.clone();
        server.on(method, move |_, request| {
            let params = request.params.clone().unwrap_or_default();
            seen.lock().unwrap().push((method.to_owned(), params));
            match method {
                "tasks/result" if answer => Some(json!({
                    "content": [{"type": "text", "text": "the findings"}],
                    "_meta": {"io.modelcontextprotocol/related-task": {"taskId": "t-1"}}})),
                "tasks/result" => None,
                _ => Some(json!({})),
            }
        });
    }
    (server, seen)
}

/// A client of `server` that follows tasks.
fn with_tasks(server: &FakeServer) -> Client {
    let options = Options::default().with_tasks(true);
    Client::connect_with_options(server.clone(), options).expect("connect")
}

/// How many `tools/list` requests the server received.
fn listings(server: &FakeServer) -> usize {
    let received = server.received.lock().unwrap();
    received
        .iter()
        .filter(|m| matches!(m, Message::Request(r) if r.method == "tools/list"))
        .count()
}

#[test]
fn a_tool_that_requires_a_task_is_called_as_one() {
    let (server, seen) = task_server(true);
    let client = with_tasks(&server);
    client.list_all_tools().expect("tools/list");
    let result = client
        .call_tool("research", json!({"topic": "rust"}))
        .expect("the task's result");
    assert_eq!(result.text(), "the findings");
    assert_eq!(
        *seen.lock().unwrap(),
        vec![("tasks/result".to_owned(), json!({"taskId": "t-1"}))]
    );
    // An optional one is an ordinary call.
    assert_eq!(
        client.call_tool("echo", json!({})).unwrap().text(),
        "echoed"
    );
}

#[test]
fn an_abandoned_task_is_cancelled() {
    let (server, seen) = task_server(false);
    let client = with_tasks(&server);
    client.list_all_tools().expect("tools/list");
    let quick = RequestOptions::default().with_timeout(Duration::from_millis(300));
    let err = client
        .with(&quick)
        .call_tool("research", json!({}))
        .expect_err("no result");
    // Named as the call the caller made, not the wait behind it.
    match &err {
        Error::Timeout { method, .. } => assert!(method.starts_with("tools/call"), "{err}"),
        other => panic!("a timeout was expected: {other}"),
    }
    let methods: Vec<String> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|(m, _)| m.clone())
        .collect();
    assert_eq!(methods, ["tasks/result", "tasks/cancel"]);
}

#[test]
fn without_the_servers_capability_no_task_is_tried() {
    let (server, seen) = task_server(true);
    server.init_result.lock().unwrap()["capabilities"]
        .as_object_mut()
        .unwrap()
        .remove("tasks");
    let client = with_tasks(&server);
    client.list_all_tools().expect("tools/list");
    // The spec forbids a task then; the server refuses the plain call, as it says it would.
    let err = client
        .call_tool("research", json!({}))
        .expect_err("refused");
    assert!(matches!(err, Error::Rpc(_)), "{err}");
    assert!(seen.lock().unwrap().is_empty());
}

#[test]
fn a_caller_need_not_list_the_tools_first() {
    let (server, seen) = task_server(true);
    let client = with_tasks(&server);
    for _ in 0..2 {
        let result = client
            .call_tool("research", json!({}))
            .expect("the task's result");
        assert_eq!(result.text(), "the findings");
    }
    assert_eq!(
        client.call_tool("echo", json!({})).unwrap().text(),
        "echoed"
    );
    assert_eq!(seen.lock().unwrap().len(), 2, "two tasks/result");
    let listings = listings(&server);
    assert_eq!(listings, 1, "listed once, to learn which tools need a task");
}

#[test]
fn a_listing_that_fails_is_not_repeated_with_every_call() {
    let (server, _) = task_server(true);
    server.on("tools/list", |peer, request| {
        let error = ErrorObject::new(ErrorCode::INTERNAL_ERROR, "cannot list now");
        peer.send(Message::Response(Response::err(request.id.clone(), error)));
        None
    });
    let client = with_tasks(&server);
    for _ in 0..3 {
        // Not known to need a task: sent plainly, and refused as the server says it would.
        let err = client
            .call_tool("research", json!({}))
            .expect_err("refused");
        assert!(matches!(err, Error::Rpc(_)), "{err}");
    }
    let listings = listings(&server);
    assert_eq!(listings, 1);
}

/// Makes the server's `tools/list` slow and endless: each page takes `pause` and names a next
/// one, up to `pages` pages.
fn slow_pages(server: &FakeServer, pause: Duration, pages: usize) {
    let served = Arc::new(Mutex::new(0usize));
    server.on("tools/list", move |_, _| {
        std::thread::sleep(pause);
        let mut n = served.lock().unwrap();
        *n += 1;
        let tool = json!({"name": format!("t{n}"), "inputSchema": {"type": "object"},
                          "execution": {"taskSupport": "required"}});
        Some(match *n < pages {
            true => json!({"tools": [tool], "nextCursor": format!("c{n}")}),
            false => json!({"tools": [tool]}),
        })
    });
}

#[test]
fn the_listing_before_a_first_call_counts_against_the_calls_timeout() {
    let (server, _) = task_server(true);
    slow_pages(&server, Duration::from_millis(200), 30);
    let client = with_tasks(&server);
    let options = RequestOptions::default().with_timeout(Duration::from_secs(1));
    let err = client
        .with(&options)
        .call_tool("research", json!({}))
        .expect_err("the listing alone outlasts the call's time");
    assert!(matches!(err, Error::Timeout { .. }), "{err:?}");
    // Each page used to get the whole timeout: all thirty pages, then the call.
    assert!(listings(&server) < 30, "{} pages listed", listings(&server));
}

#[test]
fn the_listing_before_a_first_call_obeys_its_cancel_handle() {
    let (server, _) = task_server(true);
    slow_pages(&server, Duration::from_millis(100), 30);
    let client = with_tasks(&server);
    let cancel = umcp::CancelHandle::new();
    let canceller = cancel.clone();
    let watched = server.clone();
    std::thread::spawn(move || {
        while listings(&watched) < 2 {
            std::thread::sleep(Duration::from_millis(10));
        }
        canceller.cancel();
    });
    let options = RequestOptions::default().with_cancel(cancel);
    let err = client
        .with(&options)
        .call_tool("research", json!({}))
        .expect_err("cancelled");
    assert!(matches!(err, Error::Cancelled { .. }), "{err:?}");
    assert!(listings(&server) < 30, "{} pages listed", listings(&server));
}

#[test]
fn waiting_for_a_tasks_result_gets_only_what_is_left_of_the_call() {
    let (server, seen) = task_server(false);
    let client = with_tasks(&server);
    client.list_all_tools().expect("tools");
    // The task is created slowly; its result never comes.
    server.on("tools/call", |_, _| {
        std::thread::sleep(Duration::from_millis(1500));
        Some(json!({"task": {
            "taskId": "t-1", "status": "working", "createdAt": "2025-11-25T10:30:00Z",
            "lastUpdatedAt": "2025-11-25T10:30:00Z", "ttl": 60000, "pollInterval": 100}}))
    });
    let timeout = Duration::from_secs(2);
    let options = RequestOptions::default().with_timeout(timeout);
    let started = std::time::Instant::now();
    let err = client
        .with(&options)
        .call_tool("research", json!({}))
        .expect_err("no result");
    let took = started.elapsed();
    assert!(matches!(err, Error::Timeout { .. }), "{err:?}");
    assert!(seen
        .lock()
        .unwrap()
        .iter()
        .any(|(m, _)| m == "tasks/result"));
    // The deadline is the caller's, not one per request (that was 3.5 s here).
    assert!(took < timeout + Duration::from_millis(900), "took {took:?}");
}

#[test]
fn without_task_support_the_call_goes_plain_and_nothing_is_listed() {
    let (server, seen) = task_server(true);
    let client = Client::connect(server.clone()).expect("connect");
    // The server's own refusal of a plain call, and no listing first, no `tasks/*` request.
    let error = client
        .call_tool("research", json!({"topic": "rust"}))
        .expect_err("a plain call of a tool that requires a task");
    assert!(
        matches!(&error, Error::Rpc(e) if e.code == ErrorCode::METHOD_NOT_FOUND),
        "{error:?}"
    );
    assert_eq!(listings(&server), 0);
    assert!(seen.lock().unwrap().is_empty());
    // Asking for a task to follow fails before anything is sent.
    let before = server.received.lock().unwrap().len();
    let follow = RequestOptions::default().with_task();
    let error = client
        .with(&follow)
        .call_tool("research", json!({}))
        .expect_err("no task support");
    assert!(
        matches!(&error, Error::Unsupported(why) if why.to_string().contains("Options::with_tasks")),
        "{error:?}"
    );
    assert_eq!(server.received.lock().unwrap().len(), before);
    assert_eq!(
        client.call_tool("echo", json!({})).unwrap().text(),
        "echoed"
    );
}

#[test]
fn a_task_asked_for_by_handle_is_the_eras_own_and_its_result_comes_from_tasks_result() {
    let (server, seen) = task_server(true);
    // The task is polled as working once, then found completed; the result is then fetched.
    let polls = Arc::new(Mutex::new(0));
    let counted = polls.clone();
    server.on("tasks/get", move |_, _| {
        let mut polls = counted.lock().unwrap();
        *polls += 1;
        let status = if *polls == 1 { "working" } else { "completed" };
        Some(
            json!({"taskId": "t-1", "status": status, "statusMessage": "digging",
                    "createdAt": "2025-11-25T10:30:00Z", "lastUpdatedAt": "2025-11-25T10:30:00Z",
                    "ttl": 60000, "pollInterval": 20}),
        )
    });
    let client = Client::connect(server.clone()).expect("connect");
    let umcp::ToolCall::Task(mut task) = client
        .call_tool_as_task("research", json!({"topic": "rust"}))
        .expect("a task")
    else {
        panic!("the server made a task")
    };
    assert_eq!(task.id(), "t-1");
    assert_eq!(task.poll_interval(), Duration::from_millis(100));
    assert_eq!(*task.poll().expect("tasks/get"), umcp::TaskStatus::Working);
    // Found again by its id, as a later command would.
    let result = client
        .task("t-1")
        .wait(&RequestOptions::default().with_timeout(Duration::from_secs(5)))
        .expect("the result");
    assert_eq!(result.text(), "the findings");
    // The call carried the era's own `task`, not the extension's declaration.
    let received = server.received.lock().unwrap();
    let call = received
        .iter()
        .find_map(|m| match m {
            Message::Request(r) if r.method == "tools/call" => r.params.clone(),
            _ => None,
        })
        .unwrap();
    assert_eq!(call["task"], json!({}));
    assert!(call.get("_meta").is_none(), "{call}");
    let methods: Vec<String> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|(m, _)| m.clone())
        .collect();
    assert_eq!(methods, ["tasks/result"]);
    assert_eq!(*polls.lock().unwrap(), 2);
}
