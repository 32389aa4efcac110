//! Tool schemas pass through the client untouched: the JSON Schema 2020-12 vocabulary
//! (`$schema`, `$defs`, `$anchor`, `additionalProperties`, composition, conditionals) comes
//! back from `list_tools` exactly as the server wrote it, byte for byte and in the server's
//! key order, over stdio and Streamable HTTP, and goes out again in a call with every keyword,
//! as the conformance suite's `json-schema-2020-12-preservation` scenario checks.

#[allow(dead_code)] // Not every helper of the fake server is used here.
#[path = "common/memory.rs"]
mod memory;

#[cfg(feature = "http")]
use umcp_test_support::http_server;
#[cfg(unix)]
use umcp_test_support::python;

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use umcp::types::Tool;
use umcp::Client;

/// The scenario's input schema as its server writes it: keys in the writer's order (not
/// serde_json's), and spacing inside. No newline, so that it fits on one stdio line.
const INPUT: &str = concat!(
    r##"{"$schema": "https://json-schema.org/draft/2020-12/schema", "type":"object","##,
    r##" "$defs":{"address":{"type":"object","$anchor":"addressDef","##,
    r##""properties":{"street":{"type":"string"},	"city":{"type":"string"}}}},"##,
    r##""properties":{"name":{"type":"string"},"contactMethod":{"type":"string","##,
    r##""enum":["phone","email"]},"phone":{"type":"string"},"email":{"type":"string"},"##,
    r##""address":{"$ref":"#/$defs/address"}},"##,
    r##""if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},"##,
    r##""then":{"required":["phone"]},"else":{"required":["email"]},"##,
    r##""allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],"##,
    r##""additionalProperties" : false }"##
);

/// An output schema, also out of order.
const OUTPUT: &str =
    r#"{"type":"object","required":["ok"],"properties":{"ok":{"type":"boolean"}}}"#;

/// The listed tool, written as `Tool` writes its members: serializing what `list_tools`
/// returned must give exactly this.
fn focal_tool() -> String {
    format!(
        r#"{{"name":"json_schema_2020_12_tool","inputSchema":{INPUT},"outputSchema":{OUTPUT}}}"#
    )
}

/// The `tools/list` result the fake servers send.
fn tools_list_result() -> String {
    let echo = r#"{"name":"json_schema_echo","inputSchema":{"type":"object","required":["schema"],"properties":{"schema":{"type":"object"}}}}"#;
    format!(r#"{{"tools":[{},{echo}]}}"#, focal_tool())
}

/// Lists the tools, checks the focal one is the server's bytes, and returns it.
fn list_and_check(client: &Client) -> Tool {
    let tools = client.list_tools(None).unwrap().tools;
    let focal = tools
        .into_iter()
        .find(|t| t.name == "json_schema_2020_12_tool")
        .unwrap();
    assert_eq!(serde_json::to_string(&focal.input_schema).unwrap(), INPUT);
    assert_eq!(focal.input_schema.raw_json(), Some(INPUT));
    let output = focal.output_schema.as_ref().unwrap();
    assert_eq!(serde_json::to_string(output).unwrap(), OUTPUT);
    // The whole tool, serialized again, carries both schemas as they came.
    assert_eq!(serde_json::to_string(&focal).unwrap(), focal_tool());
    // And the schema reads as a value.
    let schema = &focal.input_schema;
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(schema["$defs"]["address"]["$anchor"], "addressDef");
    focal
}

/// Calls the echo tool with the focal schema, as the scenario's client does; the server
/// answers with what it received as `structuredContent`, which must be the same schema.
fn echo_and_check(client: &Client, focal: &Tool) {
    let result = client
        .call_tool("json_schema_echo", json!({"schema": focal.input_schema}))
        .unwrap();
    let expected: Value = serde_json::from_str(INPUT).unwrap();
    assert_eq!(result.structured_content, Some(expected));
}

/// A stdio server in Python that writes the `tools/list` result given as its argument
/// verbatim, and echoes the schema of a call back; with a second argument `modern` it speaks
/// the stateless era (it answers `server/discover`).
#[cfg(unix)]
const STDIO_SERVER: &str = r#"
import json, sys
listed = sys.argv[1]
modern = sys.argv[2:] == ["modern"]
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    rid, method = json.dumps(msg["id"]), msg.get("method")
    if method == "initialize":
        result = json.dumps({"protocolVersion": msg["params"]["protocolVersion"],
            "capabilities": {"tools": {}}, "serverInfo": {"name": "schemas", "version": "1"}})
    elif method == "server/discover" and modern:
        result = json.dumps({"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "schemas", "version": "1"}}})
    elif method == "tools/list":
        result = listed
    elif method == "tools/call":
        schema = msg["params"]["arguments"]["schema"]
        result = json.dumps({"content": [], "structuredContent": schema})
    else:
        sys.stdout.write('{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no"}}\n' % rid)
        sys.stdout.flush()
        continue
    sys.stdout.write('{"jsonrpc":"2.0","id":%s,"result":%s}\n' % (rid, result))
    sys.stdout.flush()
"#;

#[cfg(unix)]
#[test]
fn over_stdio_schemas_come_back_as_the_server_wrote_them() {
    let program = python::system_python();
    let config = umcp::StdioConfig::new(program).args(["-c", STDIO_SERVER, &tools_list_result()]);
    let client = Client::connect(config).expect("the Python schema server starts");
    let focal = list_and_check(&client);
    echo_and_check(&client, &focal);
    client.close();
}

/// In the stateless era too, even when the client has to drop a tool from the list (its
/// `x-mcp-header` annotation is on a `number`): the tools it keeps are the server's bytes.
#[cfg(unix)]
#[test]
fn in_the_stateless_era_schemas_come_back_as_the_server_wrote_them() {
    let program = python::system_python();
    let bad = r#"{"name":"bad","inputSchema":{"type":"object","properties":{"n":{"type":"number","x-mcp-header":"N"}}}}"#;
    for listed in [
        tools_list_result(),
        tools_list_result().replacen('[', &format!("[{bad},"), 1),
    ] {
        let config = umcp::StdioConfig::new(program).args(["-c", STDIO_SERVER, &listed, "modern"]);
        let client = Client::connect(config).expect("the Python schema server starts");
        assert_eq!(client.era(), umcp::Era::Modern);
        let names: Vec<String> = client
            .list_all_tools()
            .unwrap()
            .into_iter()
            .map(|t| t.name)
            .collect();
        assert_eq!(names, ["json_schema_2020_12_tool", "json_schema_echo"]);
        let focal = list_and_check(&client);
        echo_and_check(&client, &focal);
        client.close();
    }
}

#[cfg(feature = "http")]
#[test]
fn over_streamable_http_schemas_come_back_as_the_server_wrote_them() {
    use umcp::HttpConfig;

    let server = http_server::serve(|seen, reply| {
        let body = seen.json();
        let id = body["id"].to_string();
        let answer = |result: &str| format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#);
        match (seen.method.as_str(), body["method"].as_str()) {
            ("POST", Some("initialize")) => {
                let result = json!({"protocolVersion": body["params"]["protocolVersion"],
                    "capabilities": {"tools": {}}, "serverInfo": {"name": "schemas", "version": "1"}});
                reply.json(200, &[], &answer(&result.to_string()));
            }
            // The first page as a JSON body, the second in an event stream.
            ("POST", Some("tools/list")) if body["params"]["cursor"].is_null() => {
                reply.json(200, &[], &answer(&tools_list_result()))
            }
            ("POST", Some("tools/list")) => {
                let mut events = reply.sse(&[]);
                events.message(&answer(&tools_list_result())).unwrap();
                events.end();
            }
            ("POST", Some("tools/call")) => {
                let schema = &body["params"]["arguments"]["schema"];
                let result = json!({"content": [], "structuredContent": schema});
                reply.json(200, &[], &answer(&result.to_string()));
            }
            ("POST", Some(_)) if !body["id"].is_null() => reply.json(
                200,
                &[],
                &format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32601,"message":"no"}}}}"#
                ),
            ),
            ("POST", _) => reply.status(202, &[]),
            _ => reply.status(405, &[]),
        }
    });
    let client = Client::connect(HttpConfig::new(server.url("/mcp"))).expect("connect");
    let focal = list_and_check(&client);
    // From the event stream too.
    let page = client.list_tools(Some("sse")).unwrap();
    assert_eq!(page.tools[0].input_schema.raw_json(), Some(INPUT));
    echo_and_check(&client, &focal);
    client.close();
}

/// A transport that hands the client decoded messages (as the in-memory one does) still
/// gives every keyword back, as values.
#[test]
fn delivered_as_values_every_keyword_survives() {
    let server = memory::FakeServer::new();
    let listed: Value = serde_json::from_str(&tools_list_result()).unwrap();
    server.on("tools/list", move |_, _| Some(listed.clone()));
    let received: Arc<Mutex<Option<Value>>> = Arc::default();
    let seen = Arc::clone(&received);
    server.on("tools/call", move |_, request| {
        let params = request.params.clone().unwrap_or_default();
        *seen.lock().unwrap() = Some(params["arguments"]["schema"].clone());
        Some(json!({"content": [{"type": "text", "text": "echoed"}]}))
    });
    let client = Client::connect(server.clone()).unwrap();
    let tools = client.list_tools(None).unwrap().tools;
    let focal = tools
        .iter()
        .find(|t| t.name == "json_schema_2020_12_tool")
        .unwrap();
    let expected: Value = serde_json::from_str(INPUT).unwrap();
    assert_eq!(focal.input_schema, expected);
    // A value's text is its own compact form.
    assert_eq!(
        focal.input_schema.raw_json(),
        Some(expected.to_string().as_str())
    );
    client
        .call_tool("json_schema_echo", json!({"schema": focal.input_schema}))
        .unwrap();
    assert_eq!(received.lock().unwrap().clone(), Some(expected));
}
