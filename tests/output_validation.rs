//! Opt-in validation of a tool's structured content against its `outputSchema`
//! (feature `output-validation`): JSON Schema 2020-12, references resolved only locally.
#![cfg(feature = "output-validation")]

use umcp_test_support::demo;

use serde_json::{json, Value};
use umcp::types::{CallToolResult, Tool};
use umcp::{Client, Error, RequestOptions};

fn result(structured: Option<Value>, is_error: bool) -> CallToolResult {
    let mut raw = json!({"content": [], "isError": is_error});
    if let Some(structured) = structured {
        raw["structuredContent"] = structured;
    }
    serde_json::from_value(raw).unwrap()
}

fn tool(schema: Value) -> Tool {
    Tool::new("t", json!({"type": "object"})).with_output_schema(schema)
}

fn protocol_error(outcome: umcp::Result<()>) -> String {
    match outcome {
        Err(Error::Protocol(message)) => message,
        other => panic!("{other:?}"),
    }
}

#[test]
fn structured_content_is_checked_against_2020_12() {
    let t = tool(json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "items": {"type": "array", "prefixItems": [{"type": "string"}], "items": false},
            "address": {"$ref": "#/$defs/address"},
            "home": {"$ref": "#home"}
        },
        "required": ["items"],
        "additionalProperties": false,
        "$defs": {
            "address": {"$anchor": "home", "type": "object", "required": ["city"],
                        "properties": {"city": {"type": "string"}}}
        }
    }));
    t.validate_output(&result(
        Some(json!({"items": ["a"], "address": {"city": "Oslo"}})),
        false,
    ))
    .unwrap();
    for (content, where_) in [
        (json!({"items": ["a", "b"]}), "/items"), // `items: false` after the prefix (2020-12)
        (json!({"items": [1]}), "/items/0"),
        (json!({"items": [], "address": {}}), "/address"), // through $defs
        (json!({"items": [], "home": {"city": 3}}), "/home/city"), // through $anchor
        (json!({"items": [], "extra": 1}), "extra"),
        (json!({}), "items"),
    ] {
        let message = protocol_error(t.validate_output(&result(Some(content.clone()), false)));
        assert!(
            message
                .starts_with("the structuredContent of tool `t` does not match its outputSchema: "),
            "{message}"
        );
        assert!(message.contains(where_), "{content}: {message}");
        assert!(!message.contains('\n'));
    }
}

#[test]
fn what_is_not_checked_and_what_is_missing() {
    let t = tool(json!({"type": "object", "required": ["x"]}));
    // Errors need not match; tools without an outputSchema are not checked.
    t.validate_output(&result(Some(json!({})), true)).unwrap();
    t.validate_output(&result(None, true)).unwrap();
    Tool::new("plain", json!({"type": "object"}))
        .validate_output(&result(None, false))
        .unwrap();
    assert_eq!(
        protocol_error(t.validate_output(&result(None, false))),
        "tool `t` declares an outputSchema but returned no structuredContent"
    );
}

#[test]
fn references_outside_the_schema_are_never_fetched() {
    for reference in [
        "https://json-schema.org/draft/2020-12/does-not-exist.json",
        "other.json#/x",
        "file:///etc/passwd",
    ] {
        let t = tool(json!({"type": "object", "properties": {"x": {"$ref": reference}}}));
        let message = protocol_error(t.validate_output(&result(Some(json!({"x": 1})), false)));
        assert!(
            message.starts_with("the outputSchema of tool `t` does not compile"),
            "{reference}: {message}"
        );
    }
    // The meta-schemas are bundled, so a schema that names its draft compiles offline.
    let draft7 = tool(json!({"$schema": "http://json-schema.org/draft-07/schema#",
        "definitions": {"n": {"type": "number"}}, "properties": {"n": {"$ref": "#/definitions/n"}}}));
    draft7
        .validate_output(&result(Some(json!({"n": 1})), false))
        .unwrap();
    assert!(draft7
        .validate_output(&result(Some(json!({"n": "1"})), false))
        .is_err());
}

#[test]
fn a_client_validates_the_demo_servers_add_tool() {
    let client = Client::connect(demo::demo("normal")).unwrap();
    let add = client
        .list_all_tools()
        .unwrap()
        .into_iter()
        .find(|t| t.name == "add")
        .unwrap();
    assert!(add.output_schema.is_some());
    let options = RequestOptions::default();
    let ok = client
        .with(&options)
        .call_tool_validated(&add, json!({"a": 2, "b": 3}))
        .unwrap();
    assert_eq!(ok.structured_content.unwrap()["sum"], 5);
    // The same tool held to a stricter schema than the server's fails on the result.
    let strict = add.clone().with_output_schema(json!({
        "type": "object", "properties": {"sum": {"type": "string"}}
    }));
    match client
        .with(&options)
        .call_tool_validated(&strict, json!({"a": 2, "b": 3}))
    {
        Err(Error::Protocol(message)) => assert!(message.contains("/sum"), "{message}"),
        other => panic!("{other:?}"),
    }
}

/// `{"anyOf": [A, A]}` nested thirty times through `$defs` would take the validator 2^30
/// checks of a value thirty objects deep: hours, for a schema of a few lines. It is refused
/// before the validator runs, and an ordinary recursive schema is still checked.
#[test]
fn a_schema_built_to_take_exponential_time_is_refused_at_once() {
    let mut defs = serde_json::Map::new();
    defs.insert("d0".into(), json!({"type": "string"}));
    for n in 1..=30 {
        let inner = json!({"type": "object", "properties": {"a": {"$ref": format!("#/$defs/d{}", n - 1)}}, "required": ["a"]});
        defs.insert(format!("d{n}"), json!({"anyOf": [inner, inner]}));
    }
    let hostile = tool(json!({"$ref": "#/$defs/d30", "$defs": defs}));
    let mut deep = json!(5);
    for _ in 0..30 {
        deep = json!({ "a": deep });
    }
    let started = std::time::Instant::now();
    let message = protocol_error(hostile.validate_output(&result(Some(deep), false)));
    assert!(message.contains("too complex"), "{message}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );

    let tree = tool(json!({
        "$defs": {"node": {"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string"},
            "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}
        }}},
        "$ref": "#/$defs/node"
    }));
    let mut value = json!({"name": "leaf"});
    for _ in 0..40 {
        value = json!({"name": "n", "children": [value, {"name": "x"}]});
    }
    assert!(tree
        .validate_output(&result(Some(value.clone()), false))
        .is_ok());
    value["children"][1]["name"] = json!(7);
    let message = protocol_error(tree.validate_output(&result(Some(value), false)));
    assert!(message.contains("does not match"), "{message}");
}
