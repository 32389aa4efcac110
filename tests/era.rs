//! Era selection and the stateless protocol (2026-07-28) against the bundled demo server:
//! `--modern` speaks only the stateless era, the default only the handshake era, and two
//! scripted behaviours play handshake-era servers that exit on, or ignore, the probe.

use umcp_test_support::demo;

use std::time::Duration;

use serde_json::json;
use umcp::jsonrpc::ErrorObject;
use umcp::types::{ElicitRequestParams, ElicitResult, InputRequiredResult};
use umcp::{Client, Era, Error, Options, ProtocolMode, RequestOptions, StdioConfig};

/// How many lines the file at `path` has (none when it does not exist).
fn lines_in(path: &std::path::Path) -> usize {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .count()
}

fn modern_demo() -> StdioConfig {
    StdioConfig::new(demo::demo_binary().to_string_lossy().into_owned()).args([
        "--server",
        "--fixtures",
        "--modern",
    ])
}

fn accept(params: ElicitRequestParams) -> Result<ElicitResult, ErrorObject> {
    match params {
        ElicitRequestParams::Form(form) => Ok(ElicitResult::accept_defaults(&form)),
        _ => Ok(ElicitResult::decline()),
    }
}

#[test]
fn auto_speaks_the_stateless_era_to_a_modern_server_with_the_same_api() {
    let client = Client::connect(modern_demo()).expect("connect");
    assert_eq!(client.era(), Era::Modern);
    assert_eq!(client.protocol_version(), "2026-07-28");
    assert_eq!(client.server_info().name, "umcp-demo");
    assert!(client.server_capabilities().tools.is_some());
    assert!(client.instructions().unwrap_or_default().contains("demo"));
    assert_eq!(client.verdict(), ProtocolMode::modern());
    // The server refuses any request without the stateless `_meta`, so these prove it is sent.
    let sum = client
        .call_tool("add", json!({"a": 2, "b": 3}))
        .expect("add");
    assert_eq!(sum.text(), "5");
    let tools = client.list_all_tools().expect("tools");
    assert!(tools.iter().any(|t| t.name == "region"));
    assert!(
        !tools.iter().any(|t| t.name == "bad_header"),
        "a tool with an invalid x-mcp-header annotation is dropped"
    );
    let readme = client.read_resource("demo://text/readme").expect("read");
    assert!(!readme.contents.is_empty());
}

#[test]
fn methods_the_stateless_era_removed_fail_before_anything_is_sent() {
    let client = Client::connect(modern_demo()).expect("connect");
    // `client.ping()` sends `server/discover` there; a raw `ping` is refused.
    client.ping().expect("ping as server/discover");
    for (outcome, instead) in [
        (client.request_raw("ping", None).map(drop), "Client::ping"),
        (
            client.subscribe_resource("demo://text/readme"),
            "Client::listen",
        ),
        (
            client.unsubscribe_resource("demo://text/readme"),
            "Client::listen",
        ),
    ] {
        // The error names what does the same in this era.
        match outcome {
            Err(Error::Unsupported(why)) => assert!(why.to_string().contains(instead), "{why}"),
            other => panic!("expected Unsupported, got {other:?}"),
        }
    }
}

#[test]
fn auto_initializes_a_legacy_server_on_the_same_connection() {
    let client = Client::connect(demo::demo("normal")).expect("connect");
    assert_eq!(client.era(), Era::Legacy);
    assert_eq!(client.protocol_version(), "2025-11-25");
    assert_eq!(client.verdict(), ProtocolMode::Legacy);
    client.ping().expect("ping exists in the handshake era");
}

#[test]
fn a_legacy_server_that_exits_on_the_probe_is_started_again_and_initialized() {
    let client = Client::connect(demo::demo("strict-init")).expect("connect");
    assert_eq!(client.era(), Era::Legacy);
    let echo = client
        .call_tool("echo", json!({"message": "hi"}))
        .expect("echo");
    assert_eq!(echo.text(), "hi");
}

#[test]
fn a_legacy_server_silent_on_the_probe_counts_as_legacy_after_the_probe_timeout() {
    let options = Options::default().with_probe_timeout(Duration::from_millis(500));
    let client =
        Client::connect_with_options(demo::demo("silent-probe"), options).expect("connect");
    assert_eq!(client.era(), Era::Legacy);
    client.ping().expect("ping");
}

#[test]
fn pinned_and_legacy_modes_do_not_fall_back() {
    let pinned = Options::default().with_protocol_mode(ProtocolMode::modern());
    assert!(Client::connect_with_options(demo::demo("normal"), pinned).is_err());
    let legacy = Options::default().with_protocol_mode(ProtocolMode::Legacy);
    assert!(Client::connect_with_options(modern_demo(), legacy).is_err());
    let legacy = Options::default().with_protocol_mode(ProtocolMode::Legacy);
    let client = Client::connect_with_options(demo::demo("strict-init"), legacy).expect("no probe");
    assert_eq!(client.era(), Era::Legacy);
}

#[test]
fn an_input_round_runs_the_elicitation_handler_and_retries() {
    let options = Options::default().with_elicitation_handler(accept);
    let client = Client::connect_with_options(modern_demo(), options).expect("connect");
    let reply = client
        .call_tool("ask_user", json!({"question": "Go on?"}))
        .expect("ask_user");
    assert!(reply.text().starts_with("accepted:"), "{}", reply.text());
    assert!(reply.text().contains("yes"), "{}", reply.text());
}

#[test]
fn an_input_round_without_a_handler_names_the_missing_handler() {
    let client = Client::connect(modern_demo()).expect("connect");
    let err = client
        .call_tool("ask_user", json!({"question": "Go on?"}))
        .expect_err("no elicitation handler");
    assert!(matches!(err, Error::Unsupported(_)), "{err:?}");
    assert!(err.to_string().contains("elicitation handler"), "{err}");
}

#[test]
fn request_once_returns_the_input_request_for_callers_driving_rounds() {
    let client = Client::connect(modern_demo()).expect("connect");
    let params = json!({"name": "ask_user", "arguments": {"question": "Go on?"}});
    let raw = client
        .request_once("tools/call", Some(params.clone()))
        .expect("one round");
    assert_eq!(raw["resultType"], "input_required");
    let input: InputRequiredResult = serde_json::from_value(raw).expect("decode");
    let requests = input.input_requests.expect("input requests");
    assert_eq!(requests["input"]["method"], "elicitation/create");
    // Drive the second round by hand: the state is echoed as received.
    let mut retry = params;
    retry["inputResponses"] = json!({"input": {"action": "decline"}});
    retry["requestState"] = json!(input.request_state.expect("state"));
    let done = client
        .request_once("tools/call", Some(retry))
        .expect("second round");
    assert_eq!(done["content"][0]["text"], "declined");
}

#[test]
fn rounds_beyond_the_maximum_fail() {
    let options = Options::default()
        .with_elicitation_handler(accept)
        .with_max_input_rounds(0);
    let client = Client::connect_with_options(modern_demo(), options).expect("connect");
    let err = client
        .call_tool("ask_user", json!({"question": "Go on?"}))
        .expect_err("no rounds allowed");
    assert!(err.to_string().contains("rounds"), "{err}");
}

#[test]
fn the_maximum_total_time_spans_all_input_rounds() {
    // The handler takes longer than the whole budget: the retry is never sent.
    let options = Options::default().with_elicitation_handler(|params| {
        std::thread::sleep(Duration::from_millis(600));
        accept(params)
    });
    let client = Client::connect_with_options(modern_demo(), options).expect("connect");
    let budget = RequestOptions::default().with_max_total_time(Duration::from_millis(300));
    let err = client
        .with(&budget)
        .call_tool("ask_user", json!({"question": "Go on?"}))
        .expect_err("over budget");
    match err {
        Error::Timeout { kind, .. } => assert_eq!(kind, umcp::TimeoutKind::Total),
        other => panic!("expected a total timeout, got {other:?}"),
    }
}

#[test]
fn a_cancel_during_an_input_round_stops_the_request() {
    let cancel = umcp::CancelHandle::new();
    let trigger = cancel.clone();
    let options = Options::default().with_elicitation_handler(move |params| {
        // The user gives up while the form is open.
        trigger.cancel();
        accept(params)
    });
    let client = Client::connect_with_options(modern_demo(), options).expect("connect");
    let with_cancel = RequestOptions::default().with_cancel(cancel);
    let err = client
        .with(&with_cancel)
        .call_tool("ask_user", json!({"question": "Go on?"}))
        .expect_err("cancelled");
    assert!(matches!(err, Error::Cancelled { .. }), "{err:?}");
}

/// The verdict is remembered per server: a server that exited on the probe is started once
/// more the first time, and the next connection to it skips the probe.
#[cfg(unix)]
#[test]
fn the_verdict_is_remembered_so_the_next_connect_skips_the_probe() {
    let starts = std::env::temp_dir().join(format!("umcp-era-starts-{}", std::process::id()));
    let _ = std::fs::remove_file(&starts);
    let script = format!(
        "echo start >> '{}'; exec '{}' --server --fixtures --behaviour strict-init",
        starts.display(),
        demo::demo_binary().display()
    );
    let server = StdioConfig::new("sh").args(["-c", &script]);
    let count = || lines_in(&starts);
    let first = Client::connect(server.clone()).expect("first connect");
    assert_eq!(first.era(), Era::Legacy);
    first.close();
    assert_eq!(count(), 2, "probed, exited, started again");
    let second = Client::connect(server).expect("second connect");
    assert_eq!(second.era(), Era::Legacy);
    second.close();
    assert_eq!(count(), 3, "the cached verdict skipped the probe");
    let _ = std::fs::remove_file(&starts);
}

#[test]
fn a_cancel_in_the_stateless_stdio_era_sends_notifications_cancelled() {
    let record = std::env::temp_dir().join(format!("umcp-era-cancel-{}", std::process::id()));
    let _ = std::fs::remove_file(&record);
    let server = modern_demo().env("UMCP_DEMO_RECORD", record.to_string_lossy().into_owned());
    let client = Client::connect(server).expect("connect");
    assert_eq!(client.era(), Era::Modern);
    let cancel = umcp::CancelHandle::new();
    let trigger = cancel.clone();
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        trigger.cancel();
    });
    let outcome = client
        .with(&RequestOptions::default().with_cancel(cancel))
        .call_tool("slow", json!({"steps": 100, "delay_ms": 100}));
    canceller.join().expect("canceller");
    assert!(
        matches!(outcome, Err(Error::Cancelled { .. })),
        "{outcome:?}"
    );
    // The notice is sent from a thread of its own; the server records what it receives.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let recorded = loop {
        let text = std::fs::read_to_string(&record).unwrap_or_default();
        if text.contains("notifications/cancelled") || std::time::Instant::now() > deadline {
            break text;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    client.close();
    let _ = std::fs::remove_file(&record);
    assert!(recorded.contains("notifications/cancelled"), "{recorded}");
}

/// A server upgraded (and then downgraded) behind the same command line between connections:
/// the cached verdict is only a hint, and each connection ends up speaking what the server
/// speaks now.
#[cfg(unix)]
#[test]
fn a_server_that_changes_era_between_connections_is_followed() {
    let dir = std::env::temp_dir();
    let mode = dir.join(format!("umcp-era-mode-{}", std::process::id()));
    let starts = dir.join(format!("umcp-era-changes-{}", std::process::id()));
    let _ = std::fs::remove_file(&starts);
    let script = format!(
        "echo start >> '{}'; exec '{}' --server --fixtures $(cat '{}')",
        starts.display(),
        demo::demo_binary().display(),
        mode.display()
    );
    let server = StdioConfig::new("sh").args(["-c", &script]);
    let count = || lines_in(&starts);
    let connect = |flags: &str| {
        std::fs::write(&mode, flags).expect("mode file");
        let client = Client::connect(server.clone()).expect("connect");
        let era = client.era();
        let tools = client.list_tools(None).expect("tools/list").tools.len();
        client.close();
        assert!(tools > 0);
        era
    };
    assert_eq!(connect(""), Era::Legacy);
    assert_eq!(
        count(),
        1,
        "probed, then initialized on the same connection"
    );
    // Upgraded: the cached handshake verdict's `initialize` is refused with -32022 naming
    // the stateless version, so the client falls forward to `server/discover` on the same
    // connection.
    assert_eq!(connect("--modern"), Era::Modern);
    assert_eq!(count(), 2);
    // Downgraded: the cached stateless verdict's probe is refused, so it initializes on the
    // same connection.
    assert_eq!(connect(""), Era::Legacy);
    assert_eq!(count(), 3);
    assert_eq!(connect(""), Era::Legacy);
    assert_eq!(count(), 4);
    let _ = std::fs::remove_file(&starts);
    let _ = std::fs::remove_file(&mode);
}

#[test]
fn a_tool_the_server_runs_as_a_task_over_stdio() {
    let client = Client::connect(modern_demo()).expect("connect");
    demo::check_report_task(&client);
}
