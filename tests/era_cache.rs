//! The process-wide cache of era verdicts is a hint, never a trap: a server that changed era
//! since its verdict was cached (upgraded or replaced behind the same command line or URL) is
//! probed again, and a stateless server that stops speaking the version in use mid-session has
//! its verdict forgotten.

#[path = "common/log_capture.rs"]
mod log_capture;
#[allow(dead_code)] // Each test binary uses a different part of the fake.
#[path = "common/memory.rs"]
mod memory;

use memory::{FakeServer, Peer};
use serde_json::{json, Value};
use umcp::jsonrpc::{ErrorCode, ErrorObject, Message, Request, Response};
use umcp::{Client, Era, Error};

/// A `server/discover` result for the stateless era.
fn discover_result() -> Value {
    json!({
        "supportedVersions": ["2026-07-28"],
        "capabilities": {"tools": {}},
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "fake", "version": "2"}},
    })
}

/// Answers `request` with a JSON-RPC error.
fn refuse(peer: &Peer, request: &Request, error: ErrorObject) -> Option<Value> {
    peer.send(Response::err(request.id.clone(), error).into());
    None
}

/// Makes `server` a stateless-era server that refuses `initialize`, as such servers do.
fn turn_stateless(server: &FakeServer) {
    server.on("server/discover", |_, _| Some(discover_result()));
    server.on("tools/list", |_, _| Some(json!({"tools": []})));
    server.on("initialize", |peer, request| {
        let error = ErrorObject::new(ErrorCode::UNSUPPORTED_PROTOCOL_VERSION, "no initialize")
            .with_data(json!({"supported": ["2026-07-28"], "requested": "2025-11-25"}));
        refuse(peer, request, error)
    });
}

/// Makes `server` a handshake-era server that does not know `server/discover`.
fn turn_handshake_era(server: &FakeServer) {
    let init = server.init_result.clone();
    server.on("initialize", move |_, _| Some(init.lock().unwrap().clone()));
    server.on("server/discover", |peer, request| {
        let error = ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, "unknown method");
        refuse(peer, request, error)
    });
}

/// The methods of the requests the client sent, in order.
fn requests(server: &FakeServer) -> Vec<String> {
    let received = server.received.lock().unwrap();
    received
        .iter()
        .filter_map(|m| match m {
            Message::Request(r) => Some(r.method.clone()),
            _ => None,
        })
        .collect()
}

/// Connects, returns the era, and closes.
fn connect_era(server: &FakeServer) -> Era {
    let client = Client::connect(server.clone()).expect("connect");
    let era = client.era();
    client.close();
    era
}

#[test]
fn a_cached_handshake_verdict_the_server_contradicts_is_probed_again() {
    let server = FakeServer::named("era-cache-turns-stateless");
    turn_handshake_era(&server);
    assert_eq!(connect_era(&server), Era::Legacy);
    assert_eq!(requests(&server), ["server/discover", "initialize"]);

    // Upgraded behind the same name: the cached verdict says `initialize`, which is refused;
    // the verdict is forgotten and a fresh connection probes.
    turn_stateless(&server);
    server.received.lock().unwrap().clear();
    let client = Client::connect(server.clone()).expect("connect after the upgrade");
    assert_eq!(client.era(), Era::Modern);
    assert_eq!(client.server_info().version, "2");
    client
        .list_tools(None)
        .expect("tools/list in the stateless era");
    client.close();
    assert_eq!(
        requests(&server),
        ["initialize", "server/discover", "tools/list"]
    );

    // The new verdict is cached in turn: no more `initialize`.
    server.received.lock().unwrap().clear();
    assert_eq!(connect_era(&server), Era::Modern);
    assert_eq!(requests(&server), ["server/discover"]);
}

#[test]
fn a_cached_stateless_verdict_falls_back_when_the_server_went_back_to_the_handshake() {
    let server = FakeServer::named("era-cache-turns-handshake");
    turn_stateless(&server);
    assert_eq!(connect_era(&server), Era::Modern);

    // Replaced by a handshake-era server: the cached verdict still sends `server/discover`,
    // whose refusal now means `initialize` on the same connection, as under `Auto`.
    turn_handshake_era(&server);
    server.received.lock().unwrap().clear();
    let client = Client::connect(server.clone()).expect("connect after the change");
    assert_eq!(client.era(), Era::Legacy);
    assert_eq!(client.protocol_version(), "2025-11-25");
    client.close();
    assert_eq!(requests(&server), ["server/discover", "initialize"]);

    // And the verdict is now the handshake: `initialize` straight away.
    server.received.lock().unwrap().clear();
    assert_eq!(connect_era(&server), Era::Legacy);
    assert_eq!(requests(&server), ["initialize"]);
}

#[test]
fn an_unsupported_version_mid_session_is_reported_and_forgets_the_verdict() {
    log_capture::capture_logs();
    let name = "era-cache-drops-version";
    let server = FakeServer::named(name);
    turn_stateless(&server);
    // Replaces the stateless server's `tools/list`.
    server.on("tools/list", |peer, request| {
        let error = ErrorObject::new(ErrorCode::UNSUPPORTED_PROTOCOL_VERSION, "not any more")
            .with_data(json!({"supported": ["2025-11-25"], "requested": "2026-07-28"}));
        refuse(peer, request, error)
    });
    let client = Client::connect(server.clone()).expect("connect");
    assert_eq!(client.era(), Era::Modern);
    let error = client.list_tools(None).expect_err("the version is refused");
    let Error::Rpc(ref object) = error else {
        panic!("expected the server's error, got {error:?}");
    };
    assert_eq!(object.code, ErrorCode::UNSUPPORTED_PROTOCOL_VERSION);
    let data = error
        .unsupported_protocol_version()
        .expect("the error's data");
    assert_eq!(data.supported, ["2025-11-25"]);
    // No version in common: sent once, not again at some other version.
    assert_eq!(
        requests(&server),
        ["server/discover", "tools/list"],
        "sent once"
    );
    client.close();
    let forgotten = log_capture::logged(&format!("era verdict for {name} forgotten"));
    assert_eq!(forgotten.len(), 1, "{:?}", log_capture::umcp_lines());

    // The next connection probes afresh and finds the handshake era.
    turn_handshake_era(&server);
    server.received.lock().unwrap().clear();
    assert_eq!(connect_era(&server), Era::Legacy);
    assert_eq!(requests(&server), ["server/discover", "initialize"]);
}
