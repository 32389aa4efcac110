//! Tests for the multi-server manager against real server processes: the bundled demo
//! server, a command that does not exist, and a command that never answers.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use status::wait_for;
use umcp::types::ServerNotification;
use umcp::{
    Era, Error, Manager, ManagerOptions, Options, ProtocolMode, ServerConfig, ServerStatus,
};

mod common;
#[allow(dead_code)] // Only the binary's path is used here.
#[path = "common/demo.rs"]
mod demo;
#[path = "common/status.rs"]
mod status;

/// Generous bound for anything that should be quick: proves "does not hang", not speed.
const BOUND: Duration = Duration::from_secs(30);

fn demo_server(name: &str) -> ServerConfig {
    let binary = demo::demo_binary().to_string_lossy().into_owned();
    ServerConfig::stdio(name, binary).with_args(["--server"])
}

/// A server that never answers `initialize`.
fn stuck_server(name: &str, startup: Duration) -> ServerConfig {
    ServerConfig::stdio(name, "sleep")
        .with_args(["1000"])
        .with_startup_timeout(startup)
}

fn options() -> ManagerOptions {
    ManagerOptions::default()
        .without_cache()
        .with_reconnect_attempts(3)
        .with_reconnect_delay(Duration::from_millis(50), Duration::from_millis(500))
}

/// A fresh directory under the system's temporary directory.
fn temp_dir(label: &str) -> PathBuf {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("umcp-manager-{label}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn text(result: &umcp::types::CallToolResult) -> String {
    result.text()
}

fn tool_names(manager: &Manager) -> Vec<String> {
    manager.tools().into_iter().map(|e| e.name).collect()
}

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
    let tools = manager.tools();
    assert!(tools
        .iter()
        .all(|e| ["crashy", "good"].contains(&e.server.as_str()) && !e.stale));
    let err = manager.call_tool("missing__echo", json!({})).unwrap_err();
    assert!(matches!(err, Error::Config(_)), "{err}");
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
        .tools()
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

#[test]
fn tools_are_namespaced_and_routed_to_their_server() {
    let manager = Manager::start(
        vec![
            demo_server("one").with_env("WHO", "first"),
            // The separator inside a server name is harmless: names are looked up, not split.
            demo_server("one__two").with_env("WHO", "second"),
        ],
        options(),
    );
    assert!(manager.wait_ready(BOUND));
    let names = tool_names(&manager);
    assert!(names.contains(&"one__echo".to_owned()), "{names:?}");
    assert!(names.contains(&"one__two__echo".to_owned()), "{names:?}");
    let mut unique = names.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), names.len());

    let who = |tool: &str| text(&manager.call_tool(tool, json!({"name": "WHO"})).unwrap());
    assert_eq!(who("one__env"), "first");
    assert_eq!(who("one__two__env"), "second");
    let err = manager.call_tool("echo", json!({})).unwrap_err();
    assert_eq!(
        err.to_string(),
        "config: no tool named `echo`; did you mean `one__echo` or `one__two__echo`?"
    );

    let dotted = Manager::start(vec![demo_server("d")], options().with_separator("."));
    assert!(dotted.wait_ready(BOUND));
    assert!(tool_names(&dotted).contains(&"d.echo".to_owned()));

    // Portable names: what an LLM API takes, routed all the same.
    let portable = Manager::start(
        vec![demo_server("my server.v2").with_env("WHO", "portable")],
        options().with_portable_names(64),
    );
    assert!(portable.wait_ready(BOUND));
    let names = tool_names(&portable);
    assert!(names.contains(&"my_server_v2__env".to_owned()), "{names:?}");
    let valid = |n: &String| {
        n.len() <= 64
            && n.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    };
    assert!(names.iter().all(valid), "{names:?}");
    let result = portable.call_tool("my_server_v2__env", json!({"name": "WHO"}));
    assert_eq!(text(&result.unwrap()), "portable");
}

/// Writes a cache file for `server` holding tools of these names.
fn write_cache(options: &ManagerOptions, server: &ServerConfig, tools: &[&str]) {
    let tools: Vec<Value> = tools
        .iter()
        .map(|name| json!({"name": name, "inputSchema": {"type": "object"}}))
        .collect();
    let path = options.cache_file(server).expect("cache on");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let body = json!({"version": 1, "server": server.name, "savedAt": 0, "tools": tools});
    std::fs::write(path, body.to_string()).unwrap();
}

#[test]
fn colliding_names_are_disambiguated_deterministically() {
    let dir = temp_dir("collide");
    let options = options().with_cache_dir(&dir);
    let a = stuck_server("a", BOUND);
    let ab = stuck_server("a__b", BOUND).with_args(["extra"]);
    write_cache(&options, &a, &["b__c", "x", "x", "x_2"]);
    write_cache(&options, &ab, &["c"]);
    // Both servers stay in start-up, so their cached tools are what is offered.
    let manager = Manager::start(vec![ab, a], options);
    let tools = manager.tools();
    let listed: Vec<(&str, &str, &str)> = tools
        .iter()
        .map(|e| (e.name.as_str(), e.server.as_str(), e.tool.name.as_str()))
        .collect();
    assert_eq!(
        listed,
        [
            ("a__b__c", "a", "b__c"),
            ("a__x", "a", "x"),
            ("a__x_3", "a", "x"),
            ("a__x_2", "a", "x_2"),
            ("a__b__c_2", "a__b", "c"),
        ]
    );
    assert!(tools.iter().all(|e| e.stale));
    let started = Instant::now();
    manager.close();
    assert!(started.elapsed() < BOUND);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_tool_name_never_routes_to_another_server_after_its_own_fails() {
    let dir = temp_dir("stable");
    let options = options().with_cache_dir(&dir).with_reconnect_attempts(0);
    // `a` fails once its start-up timeout passes; `a__b` stays in start-up throughout.
    let a = stuck_server("a", Duration::from_secs(5));
    // Other arguments, so that the two servers' cache files differ.
    let ab = stuck_server("a__b", BOUND).with_args(["1001"]);
    write_cache(&options, &a, &["b__c"]);
    write_cache(&options, &ab, &["c"]);
    let manager = Manager::start(vec![ab, a], options);
    let named = |manager: &Manager| -> Vec<(String, String)> {
        let tools = manager.tools();
        tools.into_iter().map(|e| (e.name, e.server)).collect()
    };
    assert_eq!(
        named(&manager),
        [
            ("a__b__c".to_owned(), "a".to_owned()),
            ("a__b__c_2".to_owned(), "a__b".to_owned())
        ]
    );

    let deadline = Instant::now() + BOUND;
    while !matches!(manager.status("a"), Some(ServerStatus::Failed { .. })) {
        assert!(Instant::now() < deadline, "{:?}", manager.status("a"));
        std::thread::sleep(Duration::from_millis(20));
    }
    // `a`'s tool is gone from the list, and `a__b`'s keeps the name it was given.
    assert_eq!(
        named(&manager),
        [("a__b__c_2".to_owned(), "a__b".to_owned())]
    );
    // The old name still means `a`'s tool: the call fails with `a`'s error.
    let failed = manager.client("a").unwrap_err().to_string();
    let err = manager.call_tool("a__b__c", json!({})).unwrap_err();
    assert_eq!(err.to_string(), failed);
    drop(manager);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn cached_tools_are_served_stale_while_a_slow_server_starts() {
    let dir = temp_dir("slow");
    let options = options().with_cache_dir(&dir);
    let binary = demo::demo_binary().to_string_lossy().into_owned();
    let slow = ServerConfig::stdio("slow", "sh").with_args([
        "-c",
        "sleep 2; exec \"$0\" --server",
        &binary,
    ]);
    write_cache(&options, &slow, &["echo", "retired"]);
    let cache_file = options.cache_file(&slow).unwrap();

    let manager = Manager::start(vec![slow], options);
    let tools = manager.tools();
    let names: Vec<&str> = tools.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["slow__echo", "slow__retired"]);
    assert!(tools.iter().all(|e| e.stale));
    assert!(matches!(
        manager.status("slow"),
        Some(ServerStatus::Connecting { .. })
    ));

    // The call waits for the server to start, then goes through.
    let result = manager
        .call_tool("slow__echo", json!({"message": "patience"}))
        .unwrap();
    assert_eq!(text(&result), "patience");

    let tools = manager.tools();
    assert!(tools.iter().all(|e| !e.stale));
    assert!(tools.iter().any(|e| e.name == "slow__crash"));
    assert!(!tools.iter().any(|e| e.name == "slow__retired"));
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(cache_file).unwrap()).unwrap();
    let saved: Vec<&str> = saved["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        saved.contains(&"crash") && !saved.contains(&"retired"),
        "{saved:?}"
    );
    drop(manager);
    let _ = std::fs::remove_dir_all(dir);
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
    let flaky = ServerConfig::stdio("flaky", "sh")
        .with_args(["-c", "exit 3"])
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
    assert!(matches!(err, Error::Config(_) | Error::Closed(_)), "{err}");
    assert!(matches!(
        manager.add(demo_server("new")),
        Err(Error::Closed(_))
    ));
}

#[test]
fn notifications_are_tagged_with_their_server() {
    let manager = Manager::start(vec![demo_server("a"), demo_server("b")], options());
    assert!(manager.wait_ready(BOUND));
    let notifications = manager.notifications();
    manager
        .call_tool("b__log", json!({"level": "warning", "message": "from b"}))
        .unwrap();
    let deadline = Instant::now() + BOUND;
    loop {
        let tagged = notifications
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .expect("the log notification arrives");
        if let ServerNotification::LoggingMessage(params) = &tagged.notification {
            assert_eq!(tagged.server, "b");
            assert_eq!(params.data, json!("from b"));
            break;
        }
    }
    manager
        .call_tool("a__list_changed", json!({"what": "tools"}))
        .unwrap();
    let tagged = notifications
        .recv_timeout(BOUND)
        .expect("list_changed arrives");
    assert_eq!(tagged.server, "a");
    assert!(matches!(
        tagged.notification,
        ServerNotification::ToolListChanged
    ));
}

#[test]
fn resources_and_prompts_are_listed_across_servers() {
    let manager = Manager::start(
        vec![
            demo_server("a"),
            demo_server("b"),
            ServerConfig::stdio("missing", "/nonexistent/umcp-no-such-server"),
        ],
        options(),
    );
    let (resources, errors) = manager.list_resources();
    let mut found: Vec<(String, String)> = resources
        .iter()
        .map(|e| (e.server.clone(), e.resource.uri.clone()))
        .collect();
    found.sort();
    assert_eq!(found.len(), 4, "{found:?}");
    assert_eq!(found[0], ("a".to_owned(), "demo://blob/bytes".to_owned()));
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].server, "missing");

    let (templates, errors) = manager.list_resource_templates();
    let mut found: Vec<(&str, &str)> = templates
        .iter()
        .map(|e| (e.server.as_str(), e.template.uri_template.as_str()))
        .collect();
    found.sort_unstable();
    assert_eq!(
        found,
        [("a", "demo://note/{name}"), ("b", "demo://note/{name}")]
    );
    assert_eq!(errors.len(), 1);
    let note = manager.read_resource("a", "demo://note/Ada").unwrap();
    assert!(!note.contents.is_empty());

    let read = manager.read_resource("b", "demo://text/readme").unwrap();
    let value = serde_json::to_value(&read).unwrap();
    assert_eq!(
        value["contents"][0]["text"],
        "Hello from the umcp demo server."
    );

    let (prompts, _) = manager.list_prompts();
    let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["a__greet", "a__haiku", "b__greet", "b__haiku"]);
    let prompt = manager
        .get_prompt("b__greet", json!({"name": "Ada"}))
        .unwrap();
    let value = serde_json::to_value(&prompt).unwrap();
    assert_eq!(
        value["messages"][0]["content"]["text"],
        "Say hello to Ada in a casual way."
    );
    let err = manager.get_prompt("c__greet", Value::Null).unwrap_err();
    assert_eq!(err.to_string(), "config: no prompt named `c__greet`");
}

/// An HTTP endpoint that answers every request with 401 and a Bearer challenge, until the
/// returned sender is dropped.
#[cfg(feature = "http")]
fn unauthorized_endpoint() -> (String, std::sync::mpsc::Sender<()>) {
    let server = tiny_http::Server::http("127.0.0.1:0").expect("bind");
    let url = format!("http://{}/mcp", server.server_addr());
    let (stop_tx, stop_rx) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        let challenge = r#"Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource", scope="tools""#;
        while let Err(std::sync::mpsc::TryRecvError::Empty) = stop_rx.try_recv() {
            let Ok(Some(request)) = server.recv_timeout(Duration::from_millis(50)) else {
                continue;
            };
            let header = tiny_http::Header::from_bytes("WWW-Authenticate", challenge).unwrap();
            let response = tiny_http::Response::from_string("no token")
                .with_status_code(401)
                .with_header(header);
            let _ = request.respond(response);
        }
    });
    (url, stop_tx)
}

#[cfg(feature = "http")]
#[test]
fn unauthorized_http_server_needs_authorization_and_is_not_retried() {
    let (url, _stop) = unauthorized_endpoint();
    let manager = Manager::start(
        vec![ServerConfig::http("secure", url), demo_server("good")],
        options(),
    );
    let events = manager.status_events();
    let status = wait_for(&events, "secure", |s| {
        matches!(s, ServerStatus::NeedsAuthorization { .. })
    });
    let ServerStatus::NeedsAuthorization { hints } = status else {
        unreachable!()
    };
    assert_eq!(hints.status, 401);
    let challenge = hints.www_authenticate.expect("parsed challenge");
    assert_eq!(challenge.scheme, "Bearer");
    assert_eq!(challenge.scope.as_deref(), Some("tools"));
    assert!(challenge
        .resource_metadata
        .unwrap()
        .ends_with("oauth-protected-resource"));

    let err = manager.client("secure").unwrap_err();
    assert!(err.needs_authorization(), "{err}");
    assert!(manager.wait_ready(BOUND));
    assert!(manager.status("good").unwrap().is_connected());
    // No retry follows: the next event for `secure` is the one `close` causes.
    manager.close();
    let next = wait_for(&events, "secure", |_| true);
    assert!(matches!(next, ServerStatus::Stopped), "{next}");
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

#[test]
#[cfg(feature = "http")]
fn interop_group_over_three_transports() {
    if common::peers::skip_interop() {
        return;
    }
    let everything = ServerConfig::stdio("everything", common::peers::node().to_string_lossy())
        .with_args([
            common::peers::server_everything()
                .to_string_lossy()
                .into_owned(),
            "stdio".into(),
        ]);
    // Started and listening before the manager starts: each is stopped when the test ends.
    let http_peer = common::peers::python_http(&["streamable-http"]);
    let sse_peer = common::peers::python_http(&["sse"]);
    let py_http = ServerConfig::http("py_http", http_peer.url("/mcp"));
    let py_sse =
        ServerConfig::http("py_sse", sse_peer.url("/sse")).with_http_kind(umcp::HttpKind::Sse);
    let options = options().with_startup_timeout(Duration::from_secs(60));
    let manager = Manager::start(vec![everything, py_http, py_sse], options);
    let events = manager.status_events();
    let mut transports = std::collections::BTreeMap::new();
    while transports.len() < 3 {
        let event = events
            .recv_timeout(Duration::from_secs(120))
            .expect("every peer connects");
        if let ServerStatus::Connected { transport, .. } = event.status {
            transports.insert(event.server, transport);
        }
    }
    let transports: Vec<(&str, &str)> = transports.iter().map(|(s, t)| (s.as_str(), *t)).collect();
    assert_eq!(
        transports,
        [
            ("everything", "stdio"),
            ("py_http", "streamable-http"),
            ("py_sse", "sse")
        ]
    );

    let call = |tool: &str, args: Value| text(&manager.call_tool(tool, args).unwrap());
    assert_eq!(
        call("everything__echo", json!({"message": "hi"})),
        "Echo: hi"
    );
    assert_eq!(call("py_http__add", json!({"a": 2, "b": 3})), "5");
    assert_eq!(
        call("py_sse__echo", json!({"text": "over sse"})),
        "over sse"
    );
    let read = manager.read_resource("py_sse", "demo://greeting").unwrap();
    let read = serde_json::to_value(read).unwrap();
    assert_eq!(
        read["contents"][0]["text"],
        "Hello from the Python MCP server!"
    );
    let (prompts, errors) = manager.list_prompts();
    assert!(errors.is_empty(), "{errors:?}");
    assert!(prompts.iter().any(|p| p.name == "py_http__review"));
    assert!(prompts.iter().any(|p| p.name == "py_sse__review"));
}

/// A server's own `protocol` setting wins over the manager's client options: with the
/// manager set to the stateless era, a handshake-only server pinned to `legacy` connects, the
/// same server without the setting does not, and a stateless-only server speaks its era.
#[test]
fn a_servers_protocol_setting_wins_over_the_managers() {
    let modern_demo = {
        let binary = demo::demo_binary().to_string_lossy().into_owned();
        ServerConfig::stdio("modern", binary).with_args(["--server", "--modern"])
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
