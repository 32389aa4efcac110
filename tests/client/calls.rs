//! Ordinary calls through the client: typed errors, missing capabilities, concurrency, closing,
//! paging and late responses.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use umcp::jsonrpc::ErrorCode;
use umcp::types::LoggingLevel;
use umcp::{Error, RequestOptions, Unsupported};

use crate::connect;
use crate::memory::FakeServer;

#[test]
fn rpc_errors_are_typed_and_the_connection_survives() {
    let server = FakeServer::new();
    let client = connect(&server);
    match client.request_raw("nope/nope", None) {
        Err(Error::Rpc(e)) => assert_eq!(e.code, ErrorCode::METHOD_NOT_FOUND),
        other => panic!("{other:?}"),
    }
    client.ping().unwrap();
}

#[test]
fn missing_capability_fails_without_sending() {
    let server = FakeServer::new();
    server.init_result.lock().unwrap()["capabilities"] = json!({"tools": {}});
    let client = connect(&server);
    // The fake server logs what it receives on its own thread: let the handshake land first.
    server
        .wait_notification("notifications/initialized", Duration::from_secs(5))
        .unwrap();
    let before = server.received.lock().unwrap().len();
    for result in [
        client.list_resources(None).map(drop),
        client.subscribe_resource("x://y"),
        client.list_prompts(None).map(drop),
        client.set_logging_level(LoggingLevel::Debug),
    ] {
        assert!(
            matches!(
                result,
                Err(Error::Unsupported(Unsupported::Capability { .. }))
            ),
            "{result:?}"
        );
    }
    assert_eq!(server.received.lock().unwrap().len(), before);
}

#[test]
fn arguments_that_are_not_an_object_fail_without_sending() {
    let server = FakeServer::new();
    server.init_result.lock().unwrap()["capabilities"] = json!({"tools": {}, "prompts": {}});
    server.on("tools/call", |_, _| Some(json!({"content": []})));
    let client = connect(&server);
    server
        .wait_notification("notifications/initialized", Duration::from_secs(5))
        .unwrap();
    let before = server.received.lock().unwrap().len();
    for arguments in [json!("city=Paris"), json!(["Paris"]), json!(3), json!(true)] {
        match client.call_tool("weather", arguments.clone()) {
            Err(Error::Invalid(why)) => assert!(why.contains("`weather`"), "{why}"),
            other => panic!("{arguments}: {other:?}"),
        }
        match client.get_prompt("greet", arguments.clone()) {
            Err(Error::Invalid(why)) => assert!(why.contains("JSON object"), "{why}"),
            other => panic!("{arguments}: {other:?}"),
        }
    }
    // Prompt arguments are strings: any other value is named.
    for value in [
        json!(5),
        json!(true),
        json!(null),
        json!(["a"]),
        json!({"a": 1}),
    ] {
        match client.get_prompt("greet", json!({"name": "Ada", "city": value})) {
            Err(Error::Invalid(why)) => {
                assert!(why.contains("`city`") && why.contains("string"), "{why}")
            }
            other => panic!("{value}: {other:?}"),
        }
    }
    assert_eq!(server.received.lock().unwrap().len(), before);
    // An object, or nothing at all, goes through.
    client
        .call_tool("weather", json!({"city": "Paris"}))
        .unwrap();
    client.call_tool("weather", Value::Null).unwrap();
}

#[test]
fn concurrent_callers_get_their_own_responses() {
    let server = FakeServer::new();
    server.on("tools/call", |_, req| {
        let n = req.params.as_ref().unwrap()["arguments"]["n"].clone();
        std::thread::sleep(Duration::from_millis(n.as_u64().unwrap() % 7));
        Some(json!({"content": [{"type": "text", "text": n.to_string()}]}))
    });
    let client = Arc::new(connect(&server));
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let client = client.clone();
            std::thread::spawn(move || {
                for i in 0..50 {
                    let n = t * 1000 + i;
                    let result = client.call_tool("echo", json!({"n": n})).unwrap();
                    assert_eq!(result.text(), n.to_string());
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

#[test]
fn close_fails_pending_requests_and_later_calls_at_once() {
    let server = FakeServer::new();
    server.on("tools/call", |peer, _| {
        std::thread::sleep(Duration::from_millis(100));
        peer.close("server exited");
        None
    });
    let client = connect(&server);
    let started = Instant::now();
    let result = client.call_tool("x", Value::Null);
    match result {
        Err(Error::Closed(info)) => assert_eq!(info.reason, "server exited"),
        other => panic!("{other:?}"),
    }
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(matches!(client.ping(), Err(Error::Closed(_))));
    assert!(client.closed().is_some());
}

#[test]
fn list_all_follows_cursors_and_stops_on_a_repeated_one() {
    let server = FakeServer::new();
    server.on("tools/list", |_, req| {
        let cursor = req
            .params
            .as_ref()
            .and_then(|p| p["cursor"].as_str().map(String::from));
        let tool = |n: &str| json!({"name": n, "inputSchema": {"type": "object"}});
        Some(match cursor.as_deref() {
            None => json!({"tools": [tool("a")], "nextCursor": "p2"}),
            Some("p2") => json!({"tools": [tool("b")], "nextCursor": "p3"}),
            _ => json!({"tools": [tool("c")]}),
        })
    });
    server.on("prompts/list", |_, _| {
        Some(json!({"prompts": [], "nextCursor": "same"}))
    });
    let client = connect(&server);
    let names: Vec<_> = client
        .list_all_tools()
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, ["a", "b", "c"]);
    assert!(matches!(client.list_all_prompts(), Err(Error::Protocol(_))));
}

/// A Go server writes a nil slice as `null`: every page of a listing then reads as empty,
/// as one page does through its typed result.
#[test]
fn list_all_reads_a_null_list_as_empty() {
    let server = FakeServer::new();
    server.on("tools/list", |_, req| {
        let cursor = req.params.as_ref().and_then(|p| p["cursor"].as_str());
        let tool = json!({"name": "a", "inputSchema": {"type": "object"}});
        Some(match cursor {
            None => json!({"tools": null, "nextCursor": "p2"}),
            _ => json!({"tools": [tool]}),
        })
    });
    server.on("prompts/list", |_, _| Some(json!({"prompts": null})));
    server.on("resources/list", |_, _| Some(json!({"resources": null})));
    server.on("resources/templates/list", |_, _| {
        Some(json!({"resourceTemplates": null}))
    });
    let client = connect(&server);
    let names: Vec<_> = client
        .list_all_tools()
        .expect("tools")
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, ["a"]);
    assert!(client.list_all_prompts().expect("prompts").is_empty());
    assert!(client.list_all_resources().expect("resources").is_empty());
    assert!(client
        .list_all_resource_templates()
        .expect("templates")
        .is_empty());
}

#[test]
fn late_responses_are_dropped_and_the_connection_survives() {
    let server = FakeServer::new();
    server.on("tools/call", |_, _| {
        std::thread::sleep(Duration::from_millis(300));
        Some(json!({"content": []}))
    });
    let client = connect(&server);
    let options = RequestOptions::default().with_timeout(Duration::from_millis(50));
    assert!(client
        .with(&options)
        .call_tool("x", Value::Null)
        .unwrap_err()
        .is_timeout());
    std::thread::sleep(Duration::from_millis(400));
    client.ping().unwrap();
}
