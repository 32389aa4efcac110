//! Extensions an application declares, and those a server declares, in both eras: a mirror of
//! the conformance suite's unreleased `legacy-extensions` scenario (its fixtures, its seven
//! checks), and its stateless twin. The handshake-era shape (`extensions` in `initialize`'s
//! capabilities) is SEP-2133's, which the published 2025-11-25 schema lacks: the scenario goes
//! beyond the released text there, and so does this test.

#![cfg(feature = "http")]

use umcp_test_support::http_server;
#[path = "common/scenario.rs"]
mod scenario;

use serde_json::{json, Map, Value};
use umcp::{Client, Era, HttpConfig, Options, ProtocolMode};

/// What the scenario has the client declare.
fn client_extensions() -> Map<String, Value> {
    let value = json!({
        "io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]},
        "com.example/conformance": {"nested": {"enabled": false, "limit": 0}, "values": ["a", 2, null]},
        "com.example/empty": {},
    });
    value.as_object().cloned().unwrap()
}

/// What the scenario's server declares.
fn server_extensions() -> Value {
    json!({
        "io.modelcontextprotocol/ui": {},
        "com.example/conformance": {"nested": {"enabled": true, "limit": 3}, "values": [null, "b", 4]},
        "com.example/empty": {},
    })
}

/// The scenario's server: `initialize` at 2025-11-25 (and `server/discover` for the stateless
/// twin) declaring `tools` and the extensions; `tools/call` of
/// `test_legacy_extension_capabilities` echoes its arguments.
fn mock(modern: bool) -> http_server::Server {
    http_server::serve(move |seen, reply| {
        let Some(reply) = scenario::base(&seen, reply) else {
            return;
        };
        let body = seen.json();
        let id = &body["id"];
        let capabilities = json!({"tools": {}, "extensions": server_extensions()});
        let result = match body["method"].as_str().unwrap_or_default() {
            "server/discover" if modern => json!({
                "resultType": "complete", "supportedVersions": ["2026-07-28"],
                "capabilities": capabilities, "ttlMs": 0, "cacheScope": "private",
            }),
            "initialize" => json!({
                "protocolVersion": "2025-11-25", "capabilities": capabilities,
                "serverInfo": {"name": "extensions", "version": "1"},
            }),
            "tools/call" => json!({
                "content": [{"type": "text", "text": "ok"}],
                "structuredContent": body["params"]["arguments"],
            }),
            _ => return scenario::refuse(reply, 200, id, -32601, "Method not found"),
        };
        scenario::answer(reply, id, result)
    })
}

/// The client's script: connect, then hand the server's extensions, read through the
/// client's accessor, to the echo tool.
fn run(modern: bool) -> Vec<http_server::Seen> {
    let server = mock(modern);
    let mode = match modern {
        true => ProtocolMode::Auto,
        false => ProtocolMode::Legacy,
    };
    let options = Options::default()
        .with_protocol_mode(mode)
        .with_extensions(client_extensions());
    let client = Client::connect_with_options(HttpConfig::new(server.url("/mcp")), options)
        .expect("connect");
    assert_eq!(client.era() == Era::Modern, modern);
    let extensions = Value::Object(client.server_extensions());
    assert_eq!(extensions, server_extensions(), "read back unchanged");
    assert_eq!(
        client.server_capabilities().extension("com.example/empty"),
        Some(&json!({}))
    );
    let arguments = json!({ "extensions": extensions });
    let echoed = client
        .call_tool("test_legacy_extension_capabilities", arguments)
        .expect("echo");
    assert_eq!(
        echoed.structured_content.unwrap()["extensions"],
        server_extensions()
    );
    client.close();
    scenario::posts(&server)
}

#[test]
fn legacy_extensions_round_trip_both_ways_in_the_handshake_era() {
    let seen = run(false);
    let methods = scenario::methods(&seen);
    // legacy-extensions-client-handshake
    let initialize = seen
        .iter()
        .find(|r| r.rpc_method().as_deref() == Some("initialize"))
        .expect("initialize")
        .json();
    assert_eq!(initialize["params"]["protocolVersion"], "2025-11-25");
    assert!(
        methods.contains(&"notifications/initialized".to_owned()),
        "{methods:?}"
    );
    // legacy-extensions-client-advertisement-{ui,conformance,empty}: deep-equal, integers,
    // nulls and `{}` included.
    let declared = &initialize["params"]["capabilities"]["extensions"];
    for (key, value) in client_extensions() {
        assert_eq!(declared[&key], value, "{key}");
    }
    // legacy-extensions-client-reception-*: the echo tool got the server's as they were.
    let call = seen
        .iter()
        .find(|r| r.rpc_method().as_deref() == Some("tools/call"))
        .expect("tools/call")
        .json();
    assert_eq!(call["params"]["name"], "test_legacy_extension_capabilities");
    assert_eq!(
        call["params"]["arguments"]["extensions"],
        server_extensions()
    );
}

#[test]
fn declared_extensions_go_with_every_stateless_request() {
    let seen = run(true);
    let requests: Vec<_> = seen
        .iter()
        .filter(|r| r.rpc_method().is_some_and(|m| m != "server/discover"))
        .collect();
    assert!(!requests.is_empty());
    for request in requests {
        let body = request.json();
        let declared =
            &body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]["extensions"];
        assert_eq!(*declared, Value::Object(client_extensions()), "{body}");
    }
}
