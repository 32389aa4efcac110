//! The client's handshake with a fake server: versions offered and accepted, capabilities declared,
//! pings during it.

use std::time::Duration;

use serde_json::{json, Value};
use umcp::jsonrpc::{ErrorCode, Message};
use umcp::types::{ElicitAction, ElicitResult, Root};
use umcp::{Client, Error, Options, Unsupported};

use crate::connect;
use crate::memory::FakeServer;

#[test]
fn smoke() {
    let server = FakeServer::new();
    server.on("tools/list", |_, _| {
        Some(json!({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}))
    });
    let client = connect(&server);
    assert_eq!(client.server_info().name, "fake");
    assert_eq!(client.protocol_version(), "2025-11-25");
    assert_eq!(client.instructions().as_deref(), Some("be nice"));
    assert_eq!(client.transport_kind(), "memory");
    let tools = client.list_all_tools().unwrap();
    assert_eq!(tools[0].name, "echo");
    // The handshake is initialize, then the initialized notification.
    server
        .wait_notification("notifications/initialized", Duration::from_secs(5))
        .unwrap();
    let received = server.received.lock().unwrap().clone();
    assert!(matches!(&received[0], Message::Request(r) if r.method == "initialize"));
    assert!(
        matches!(&received[1], Message::Notification(n) if n.method == "notifications/initialized")
    );
}

#[test]
fn initialize_offers_latest_version_and_declares_handler_capabilities() {
    let server = FakeServer::new();
    let options = Options::default()
        .with_roots(vec![Root::new("file:///tmp")])
        .with_sampling_handler(|_| Err(umcp::jsonrpc::ErrorObject::new(ErrorCode(-1), "no")))
        .with_elicitation_handler(|_| Ok(ElicitResult::new(ElicitAction::Decline)));
    let _client = Client::connect_with_options(server.clone(), options).unwrap();
    let received = server.received.lock().unwrap().clone();
    let Message::Request(init) = &received[0] else {
        panic!()
    };
    let params = init.params.clone().unwrap();
    assert_eq!(params["protocolVersion"], "2025-11-25");
    assert_eq!(params["clientInfo"]["name"], "umcp");
    assert_eq!(params["capabilities"]["roots"]["listChanged"], true);
    assert!(params["capabilities"]["sampling"].is_object());
    assert!(params["capabilities"]["elicitation"]["form"].is_object());
}

#[test]
fn an_initialize_refused_with_the_supported_versions_is_offered_one_of_them() {
    // Each its own name, so that no era verdict is remembered from another connection.
    let refusing = |name: &str, supported: Value| {
        let server = FakeServer::named(name);
        let init = server.init_result.clone();
        server.on("initialize", move |peer, req| {
            let offered = &req.params.as_ref().unwrap()["protocolVersion"];
            if offered == "2024-11-05" {
                let mut result = init.lock().unwrap().clone();
                result["protocolVersion"] = json!("2024-11-05");
                return Some(result);
            }
            let error = umcp::jsonrpc::ErrorObject::new(
                ErrorCode::INVALID_PARAMS,
                "Unsupported protocol version",
            )
            .with_data(json!({"supported": supported, "requested": offered}));
            peer.send(umcp::jsonrpc::Response::err(req.id.clone(), error).into());
            None
        });
        server
    };
    let offered = |server: &FakeServer| -> Vec<Value> {
        let received = server.received.lock().unwrap();
        received
            .iter()
            .filter_map(|m| match m {
                Message::Request(r) if r.method == "initialize" => {
                    Some(r.params.as_ref().unwrap()["protocolVersion"].clone())
                }
                _ => None,
            })
            .collect()
    };
    let server = refusing("refuses-newer", json!(["2024-11-05", "1.0.0"]));
    let client = connect(&server);
    assert_eq!(client.protocol_version(), "2024-11-05");
    assert_eq!(offered(&server), [json!("2025-11-25"), json!("2024-11-05")]);
    client.ping().unwrap();

    // Nothing in common: the refusal itself, after one attempt.
    let server = refusing("refuses-all", json!(["1.0.0"]));
    let err = Client::connect(server.clone()).unwrap_err();
    assert_eq!(
        err.rpc_error().map(|e| e.code),
        Some(ErrorCode::INVALID_PARAMS),
        "{err:?}"
    );
    assert_eq!(offered(&server), [json!("2025-11-25")]);
}

#[test]
fn accepts_older_versions_and_rejects_unknown_ones() {
    let server = FakeServer::new();
    server.init_result.lock().unwrap()["protocolVersion"] = json!("2024-11-05");
    assert_eq!(connect(&server).protocol_version(), "2024-11-05");

    let server = FakeServer::new();
    server.init_result.lock().unwrap()["protocolVersion"] = json!("1999-01-01");
    match Client::connect(server.clone()) {
        Err(Error::Unsupported(Unsupported::Version { offered, received })) => {
            assert_eq!(offered, "2025-11-25");
            assert_eq!(received, "1999-01-01");
        }
        other => panic!("{other:?}"),
    }
    // No initialized notification after a failed negotiation.
    assert!(server.notifications("notifications/initialized").is_empty());
}

#[test]
fn answers_ping_during_the_handshake() {
    let server = FakeServer::new();
    let init = server.init_result.clone();
    server.on("initialize", move |peer, _| {
        let pong = peer.request("ping", json!({}));
        assert_eq!(pong.result, Ok(json!({})));
        Some(init.lock().unwrap().clone())
    });
    connect(&server);
}
