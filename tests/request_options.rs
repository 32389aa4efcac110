//! Every call of `Client` and `Manager` made through `with(&options)` has its `RequestOptions`
//! reach the request: the caller's `_meta`, timeout and cancel handle.

#[allow(dead_code)] // Not every helper of the fake server is used here.
#[path = "common/memory.rs"]
mod memory;

use umcp_test_support::demo;

use std::time::Duration;

use memory::FakeServer;
use serde_json::{json, Map, Value};
use umcp::jsonrpc::Message;
use umcp::types::{CompleteRequestParams, LoggingLevel};
use umcp::{
    CancelHandle, Client, Error, Manager, ManagerOptions, Options, RequestOptions, ServerConfig,
    StdioConfig,
};

/// Every method this file calls, with an answer.
fn answers() -> Vec<(&'static str, Value)> {
    vec![
        ("tools/list", json!({"tools": []})),
        ("resources/list", json!({"resources": []})),
        ("resources/templates/list", json!({"resourceTemplates": []})),
        ("prompts/list", json!({"prompts": []})),
        ("resources/read", json!({"contents": []})),
        ("resources/subscribe", json!({})),
        ("resources/unsubscribe", json!({})),
        ("prompts/get", json!({"messages": []})),
        ("tools/call", json!({"content": []})),
        ("logging/setLevel", json!({})),
        ("completion/complete", json!({"completion": {"values": []}})),
    ]
}

/// A fake server that answers every method this file calls.
fn answering_server() -> FakeServer {
    let server = FakeServer::new();
    for (method, result) in answers() {
        server.on(method, move |_, _| Some(result.clone()));
    }
    server
}

fn completion() -> CompleteRequestParams {
    serde_json::from_value(json!({
        "ref": {"type": "ref/prompt", "name": "greet"},
        "argument": {"name": "name", "value": "A"}
    }))
    .unwrap()
}

/// Runs every method of `client.with(options)` once, returning the method names and outcomes.
fn call_every_with(
    client: &Client,
    options: &RequestOptions,
) -> Vec<(&'static str, Result<(), Error>)> {
    let with = client.with(options);
    vec![
        ("ping", with.ping()),
        ("tools/list", with.list_tools(None).map(drop)),
        ("tools/list", with.list_all_tools().map(drop)),
        ("tools/call", with.call_tool("t", Value::Null).map(drop)),
        ("resources/list", with.list_resources(Some("c")).map(drop)),
        ("resources/list", with.list_all_resources().map(drop)),
        (
            "resources/templates/list",
            with.list_resource_templates(None).map(drop),
        ),
        (
            "resources/templates/list",
            with.list_all_resource_templates().map(drop),
        ),
        ("resources/read", with.read_resource("x://a").map(drop)),
        ("resources/subscribe", with.subscribe_resource("x://a")),
        ("resources/unsubscribe", with.unsubscribe_resource("x://a")),
        ("prompts/list", with.list_prompts(None).map(drop)),
        ("prompts/list", with.list_all_prompts().map(drop)),
        ("prompts/get", with.get_prompt("p", Value::Null).map(drop)),
        ("completion/complete", with.complete(completion()).map(drop)),
        (
            "logging/setLevel",
            with.set_logging_level(LoggingLevel::Debug),
        ),
    ]
}

#[test]
fn every_with_method_sends_the_callers_meta() {
    let server = answering_server();
    let client = Client::connect(server.clone()).unwrap();
    let mut meta = Map::new();
    meta.insert("trace".into(), json!("t-1"));
    let options = RequestOptions::default().with_meta(meta);
    let outcomes = call_every_with(&client, &options);
    let mut expected = Vec::new();
    for (method, outcome) in outcomes {
        outcome.unwrap_or_else(|e| panic!("{method}: {e}"));
        expected.push(method);
    }
    let received: Vec<(String, Value)> = server
        .received
        .lock()
        .unwrap()
        .iter()
        .filter_map(|m| match m {
            Message::Request(r) if r.method != "initialize" => {
                Some((r.method.clone(), r.params.clone().unwrap_or(Value::Null)))
            }
            _ => None,
        })
        .collect();
    let methods: Vec<&str> = received.iter().map(|(m, _)| m.as_str()).collect();
    assert_eq!(methods, expected);
    for (method, params) in &received {
        assert_eq!(params["_meta"]["trace"], "t-1", "{method}: {params}");
    }
    // The options do not replace the method's own parameters.
    let read = received
        .iter()
        .find(|(m, _)| m == "resources/read")
        .unwrap();
    assert_eq!(read.1["uri"], "x://a");
    let page = received
        .iter()
        .find(|(m, _)| m == "resources/list")
        .unwrap();
    assert_eq!(page.1["cursor"], "c");
}

#[test]
fn every_with_method_honours_the_callers_timeout() {
    // A server that answers the handshake and nothing else.
    let server = FakeServer::new();
    server.on("ping", |_, _| None);
    for (method, _) in answers() {
        server.on(method, |_, _| None);
    }
    let slow_default = Duration::from_secs(120);
    let client = Client::connect_with_options(
        server.clone(),
        Options::default().with_request_timeout(slow_default),
    )
    .unwrap();
    // Without the view's options reaching the request this would wait for the client's default.
    let options = RequestOptions::default().with_timeout(Duration::from_millis(100));
    for (method, outcome) in call_every_with(&client, &options) {
        match outcome {
            Err(Error::Timeout { elapsed, .. }) => {
                assert!(elapsed < slow_default / 2, "{method}: {elapsed:?}")
            }
            other => panic!("{method}: {other:?}"),
        }
    }
}

#[test]
fn a_zero_timeout_fails_every_method_without_sending_it() {
    let server = answering_server();
    let client = Client::connect(server.clone()).unwrap();
    let zero = [
        (
            RequestOptions::default().with_timeout(Duration::ZERO),
            "request",
        ),
        (
            RequestOptions::default().with_max_total_time(Duration::ZERO),
            "total",
        ),
    ];
    for (options, which) in zero {
        for (method, outcome) in call_every_with(&client, &options) {
            match outcome {
                Err(Error::Timeout { kind, elapsed, .. }) => {
                    assert_eq!(elapsed, Duration::ZERO, "{method}");
                    assert_eq!(format!("{kind:?}").to_lowercase(), which, "{method}");
                }
                other => panic!("{method} ({which}): {other:?}"),
            }
        }
    }
    let sent: Vec<String> = server
        .received
        .lock()
        .unwrap()
        .iter()
        .filter_map(|m| match m {
            Message::Request(r) => Some(r.method.clone()),
            Message::Notification(n) => Some(n.method.clone()),
            _ => None,
        })
        .filter(|m| {
            !matches!(
                m.as_str(),
                "initialize" | "server/discover" | "notifications/initialized"
            )
        })
        .collect();
    assert!(sent.is_empty(), "sent: {sent:?}");
}

#[test]
fn every_with_method_honours_a_cancel_handle() {
    let server = answering_server();
    let client = Client::connect(server.clone()).unwrap();
    let cancel = CancelHandle::new();
    cancel.cancel();
    let options = RequestOptions::default().with_cancel(cancel);
    for (method, outcome) in call_every_with(&client, &options) {
        assert!(
            matches!(outcome, Err(Error::Cancelled { .. })),
            "{method}: {outcome:?}"
        );
    }
    // Nothing but the era probe and the handshake reached the server.
    let requests = server
        .received
        .lock()
        .unwrap()
        .iter()
        .filter(|m| {
            matches!(m, Message::Request(r) if r.method != "initialize" && r.method != "server/discover")
        })
        .count();
    assert_eq!(requests, 0);
}

#[test]
fn manager_with_methods_pass_the_options_on() {
    let binary = demo::demo_binary().to_string_lossy().into_owned();
    let manager = Manager::start(
        vec![ServerConfig::new(
            "demo",
            StdioConfig::new(binary).args(["--server", "--fixtures"]),
        )],
        ManagerOptions::default().without_cache(),
    );
    assert!(manager.wait_ready(Duration::from_secs(60)));
    // Plain calls work, and name the prompt for the call with options below.
    let (prompts, errors) = manager.list_prompts();
    assert!(errors.is_empty() && !prompts.is_empty(), "{errors:?}");
    manager.read_resource("demo", "demo://text/readme").unwrap();

    let cancel = CancelHandle::new();
    cancel.cancel();
    let cancelled = RequestOptions::default().with_cancel(cancel);
    let is_cancelled = |r: Result<(), Error>| matches!(r, Err(Error::Cancelled { .. }));
    assert!(is_cancelled(
        manager
            .with(&cancelled)
            .read_resource("demo", "demo://text/readme")
            .map(drop)
    ));
    let prompt = &prompts[0].name;
    assert!(is_cancelled(
        manager
            .with(&cancelled)
            .get_prompt(prompt, json!({"name": "Ada"}))
            .map(drop)
    ));
    let tool = manager.known_tools()[0].name.clone();
    assert!(is_cancelled(
        manager
            .with(&cancelled)
            .call_tool(&tool, json!({}))
            .map(drop)
    ));
    let (resources, errors) = manager.with(&cancelled).list_resources();
    assert!(resources.is_empty());
    assert!(
        errors
            .iter()
            .all(|e| matches!(e.error, Error::Cancelled { .. }))
            && !errors.is_empty()
    );
    let (_, errors) = manager.with(&cancelled).list_prompts();
    assert!(
        errors
            .iter()
            .all(|e| matches!(e.error, Error::Cancelled { .. }))
            && !errors.is_empty()
    );
    manager.close();
}

#[test]
fn a_configured_servers_boxed_connector_connects_a_client() {
    let binary = demo::demo_binary().to_string_lossy().into_owned();
    let config = ServerConfig::new(
        "demo",
        StdioConfig::new(binary).args(["--server", "--fixtures"]),
    );
    let connector = config.connector().unwrap();
    assert!(
        connector.describe().contains("--server"),
        "{}",
        connector.describe()
    );
    let client = Client::connect(connector).unwrap();
    let tools = client.list_all_tools().unwrap();
    assert!(tools.iter().any(|t| t.name == "echo"));
    client.close();
}
