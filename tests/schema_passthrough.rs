//! Tool input schemas pass through the client untouched: the JSON Schema 2020-12 vocabulary
//! (`$schema`, `$defs`, `$anchor`, `additionalProperties`, composition, conditionals) comes
//! back from `list_tools` and goes out again in a call exactly as the server wrote it, as the
//! conformance suite's `json-schema-2020-12-preservation` scenario checks.

#[allow(dead_code)] // Not every helper of the fake server is used here.
#[path = "common/memory.rs"]
mod memory;

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use umcp::Client;

/// The scenario's fixture, written compactly with its keys in `serde_json`'s order, so the
/// server's bytes on the wire are exactly these.
const FIXTURE: &str = concat!(
    r##"{"$defs":{"address":{"$anchor":"addressDef","properties":{"city":{"type":"string"},"##,
    r##""street":{"type":"string"}},"type":"object"}},"##,
    r##""$schema":"https://json-schema.org/draft/2020-12/schema","##,
    r##""additionalProperties":false,"##,
    r##""allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],"##,
    r##""else":{"required":["email"]},"##,
    r##""if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},"##,
    r##""properties":{"address":{"$ref":"#/$defs/address"},"##,
    r##""contactMethod":{"enum":["phone","email"],"type":"string"},"##,
    r##""email":{"type":"string"},"name":{"type":"string"},"phone":{"type":"string"}},"##,
    r##""then":{"required":["phone"]},"type":"object"}"##
);

#[test]
fn an_input_schema_round_trips_byte_for_byte() {
    let fixture: Value = serde_json::from_str(FIXTURE).unwrap();
    // The fixture really is what the server puts on the wire.
    assert_eq!(serde_json::to_string(&fixture).unwrap(), FIXTURE);

    let server = memory::FakeServer::new();
    let listed = json!({"tools": [
        {"name": "json_schema_2020_12_tool", "inputSchema": fixture},
        {"name": "json_schema_echo", "inputSchema": {"type": "object",
            "properties": {"schema": {"type": "object"}}, "required": ["schema"]}}
    ]});
    server.on("tools/list", move |_, _| Some(listed.clone()));
    let echoed: Arc<Mutex<Option<String>>> = Arc::default();
    let seen = Arc::clone(&echoed);
    server.on("tools/call", move |_, request| {
        let params = request.params.clone().unwrap_or_default();
        // What the server receives, in the bytes it would read.
        *seen.lock().unwrap() =
            Some(serde_json::to_string(&params["arguments"]["schema"]).unwrap());
        Some(json!({"content": [{"type": "text", "text": "echoed"}]}))
    });
    let client = Client::connect(server.clone()).unwrap();

    // As the scenario's client does: list, then hand the observed schema back verbatim.
    let tools = client.list_tools(None).unwrap().tools;
    let focal = tools
        .iter()
        .find(|t| t.name == "json_schema_2020_12_tool")
        .unwrap();
    assert_eq!(serde_json::to_string(&focal.input_schema).unwrap(), FIXTURE);
    assert_eq!(
        focal.input_schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    assert_eq!(focal.input_schema["additionalProperties"], false);
    assert_eq!(
        focal.input_schema["$defs"]["address"]["$anchor"],
        "addressDef"
    );
    // The whole tool, serialized again, carries the same schema.
    let tool_json = serde_json::to_value(focal).unwrap();
    assert_eq!(
        serde_json::to_string(&tool_json["inputSchema"]).unwrap(),
        FIXTURE
    );

    client
        .call_tool("json_schema_echo", json!({"schema": focal.input_schema}))
        .unwrap();
    assert_eq!(echoed.lock().unwrap().as_deref(), Some(FIXTURE));
}
