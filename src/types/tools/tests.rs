//! Tests of `types::tools`.

use super::*;
use serde_json::json;

#[test]
fn reads_tools_from_every_version() {
    let page: ListToolsResult = serde_json::from_value(json!({"tools": [
        {"name": "old", "description": "2024 shape",
         "inputSchema": {"type": "object", "properties": {"x": {"type": "number"}}}},
        {"name": "annotated", "inputSchema": {"type": "object"},
         "annotations": {"title": "Annotated", "readOnlyHint": true, "openWorldHint": false}},
        {"name": "new", "title": "New", "inputSchema": {"type": "object"},
         "outputSchema": {"type": "object", "properties": {"y": {"type": "string"}}},
         "icons": [{"src": "https://x/i.png"}], "execution": {"taskSupport": "optional"},
         "_meta": {"v": 1}},
        {"name": "sloppy"}
    ], "nextCursor": "c"}))
    .unwrap();
    let t = &page.tools;
    assert_eq!(t[0].display_name(), "old");
    assert_eq!(t[1].display_name(), "Annotated");
    assert_eq!(
        t[1].annotations.as_ref().unwrap().read_only_hint,
        Some(true)
    );
    assert_eq!(t[2].display_name(), "New");
    assert_eq!(t[2].execution.as_ref().unwrap()["taskSupport"], "optional");
    assert!(t[2].output_schema.is_some());
    assert_eq!(t[3].input_schema, json!({"type": "object"}));
    assert_eq!(page.next_cursor.as_deref(), Some("c"));
}

#[test]
fn tool_round_trips() {
    let v = json!({"name": "n", "title": "T", "description": "d", "inputSchema": {"type": "object"},
        "outputSchema": {"type": "object"}, "annotations": {"destructiveHint": false,
        "idempotentHint": true}, "icons": [{"src": "data:image/png;base64,AA=="}]});
    let tool: Tool = serde_json::from_value(v.clone()).unwrap();
    assert_eq!(serde_json::to_value(&tool).unwrap(), v);
    let built = Tool::new("n", json!({"type": "object"}))
        .with_title("T")
        .with_description("d")
        .with_output_schema(json!({"type": "object"}))
        .with_annotations(ToolAnnotations {
            destructive_hint: Some(false),
            idempotent_hint: Some(true),
            ..ToolAnnotations::default()
        });
    assert_eq!(built.icons, None);
    assert_eq!(built.annotations, tool.annotations);
}

#[test]
fn both_schemas_keep_the_servers_text() {
    let input = r#"{"type":"object","required":["x"],"properties":{"x":{"type":"number"}}}"#;
    let output = r#"{ "type": "object", "$defs": {}, "additionalProperties": false }"#;
    let text = format!(
        r#"{{"name":"t","inputSchema":{input},"outputSchema":{output},"annotations":{{}}}}"#
    );
    let tool: Tool = serde_json::from_str(&text).unwrap();
    assert_eq!(tool.input_schema.raw_json(), Some(input));
    let kept = tool.output_schema.as_ref().and_then(|s| s.raw_json());
    assert_eq!(kept, Some(output));
    assert_eq!(serde_json::to_string(&tool).unwrap(), text);
    // Built from values, and compared by value with what was read.
    let built = Tool::new("t", serde_json::from_str::<Value>(input).unwrap())
        .with_output_schema(serde_json::from_str::<Value>(output).unwrap());
    assert_eq!(built.input_schema, tool.input_schema);
    assert_eq!(built.output_schema, tool.output_schema);
    assert_eq!(built.input_schema.raw_json(), None);
}

#[test]
fn call_params_serialise_only_what_is_set() {
    let bare = CallToolRequestParams::new("echo");
    assert_eq!(
        serde_json::to_value(&bare).unwrap(),
        json!({"name": "echo"})
    );
    let mut meta = Map::new();
    meta.insert("progressToken".into(), json!(7));
    let full = CallToolRequestParams::new("echo")
        .with_argument("message", json!("hi"))
        .with_argument("n", json!(2))
        .with_meta(meta);
    assert_eq!(
        serde_json::to_value(&full).unwrap(),
        json!({"name": "echo", "arguments": {"message": "hi", "n": 2},
               "_meta": {"progressToken": 7}})
    );
    let replaced = full.with_arguments(Map::new());
    assert_eq!(replaced.arguments, Some(Map::new()));
}

#[test]
fn call_result_text_joins_text_blocks_only() {
    let r: CallToolResult = serde_json::from_value(json!({"content": [
        {"type": "text", "text": "one"},
        {"type": "image", "data": "AA==", "mimeType": "image/png"},
        {"type": "text", "text": "two"}
    ], "structuredContent": {"n": 2}}))
    .unwrap();
    assert_eq!(r.text(), "one\ntwo");
    assert!(!r.is_error());
    assert_eq!(r.structured_content, Some(json!({"n": 2})));
    assert_eq!(CallToolResult::default().text(), "");
}

#[test]
fn call_result_errors_and_old_shapes() {
    let r: CallToolResult = serde_json::from_value(json!({
        "content": [{"type": "text", "text": "boom"}], "isError": true
    }))
    .unwrap();
    assert!(r.is_error());
    assert_eq!(r, CallToolResult::error("boom"));
    let built =
        CallToolResult::new(vec![ContentBlock::text("ok")]).with_structured_content(json!([1]));
    assert_eq!(
        serde_json::to_value(&built).unwrap(),
        json!({"content": [{"type": "text", "text": "ok"}], "structuredContent": [1]})
    );
    let missing: CallToolResult = serde_json::from_value(json!({})).unwrap();
    assert!(missing.content.is_empty());
}

#[test]
fn structured_results_read_into_a_type_or_say_why_not() {
    #[derive(Debug, serde::Deserialize)]
    struct Count {
        count: u32,
    }
    let plain = CallToolResult::new(vec![ContentBlock::text("3")]);
    let err = plain.structured::<Count>().unwrap_err().to_string();
    assert!(err.contains("no structured content"), "{err}");
    let wrong = CallToolResult::new(Vec::new()).with_structured_content(json!({"count": "3"}));
    let err = wrong.structured::<Count>().unwrap_err().to_string();
    assert!(err.contains("does not fit"), "{err}");
    let right = CallToolResult::new(Vec::new()).with_structured_content(json!({"count": 3}));
    assert_eq!(right.structured::<Count>().unwrap().count, 3);
}
