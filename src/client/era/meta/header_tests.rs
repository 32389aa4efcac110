//! Tests of the `x-mcp-header` edge cases (an annotation on the schema root, and integer
//! arguments outside the range a header may carry or written as whole floats) and of the
//! `Mcp-Name` of the tasks extension's requests.

use std::collections::HashMap;

use serde_json::{json, Value};

use super::{headers, tool_header_params};

/// The `Mcp-Param-Count` header of a call to a tool whose integer `count` is mirrored, or the
/// reason the call cannot be sent.
fn count_header(count: Value) -> Result<Option<String>, String> {
    let schema = json!({"type": "object", "properties": {
        "count": {"type": "integer", "x-mcp-header": "Count"}
    }});
    let map = HashMap::from([("t".to_owned(), tool_header_params(&schema).unwrap())]);
    let params = json!({"name": "t", "arguments": {"count": count}});
    let headers = headers("tools/call", Some(&params), &map)?;
    Ok(headers
        .into_iter()
        .find(|(name, _)| name == "Mcp-Param-Count")
        .map(|(_, value)| value))
}

#[test]
fn an_annotation_on_the_schema_root_makes_the_tool_invalid() {
    let root = json!({"type": "object", "x-mcp-header": "Root",
        "properties": {"a": {"type": "string"}}});
    let why = tool_header_params(&root).unwrap_err();
    assert!(why.contains("root"), "{why}");
    // On a property (also a nested one) it is what the annotation is for.
    let nested = json!({"type": "object", "properties": {"outer": {"type": "object",
        "properties": {"inner": {"type": "string", "x-mcp-header": "Inner"}}}}});
    let pairs = tool_header_params(&nested).unwrap();
    assert_eq!(
        pairs,
        vec![(
            vec!["outer".to_owned(), "inner".to_owned()],
            "Inner".to_owned()
        )]
    );
}

#[test]
fn integers_beyond_the_safe_range_are_refused_not_sent() {
    const MAX: i64 = (1 << 53) - 1;
    assert_eq!(count_header(json!(MAX)), Ok(Some(MAX.to_string())));
    assert_eq!(count_header(json!(-MAX)), Ok(Some((-MAX).to_string())));
    for beyond in [
        json!(MAX + 1),
        json!(-MAX - 1),
        json!(i64::MIN),
        json!(u64::MAX),
        json!(1e300),
    ] {
        let why = count_header(beyond.clone()).unwrap_err();
        assert!(why.contains("`count`") && why.contains("`t`"), "{why}");
        assert!(why.contains("2^53"), "{why}");
    }
}

#[test]
fn a_whole_float_is_an_integer_and_is_sent_in_decimal() {
    let whole: Value = serde_json::from_str("42.0").unwrap();
    assert!(whole.is_f64());
    assert_eq!(count_header(whole), Ok(Some("42".to_owned())));
    assert_eq!(count_header(json!(-7.0)), Ok(Some("-7".to_owned())));
    // Not an integer at all: no header, as for any other value a header cannot carry.
    assert_eq!(count_header(json!(42.5)), Ok(None));
    assert_eq!(count_header(Value::Null), Ok(None));
}

#[test]
fn a_tasks_request_names_its_task() {
    for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
        let params = json!({"taskId": "t-7"});
        let headers = headers(method, Some(&params), &HashMap::new()).unwrap();
        assert!(headers.contains(&("Mcp-Name".to_owned(), "t-7".to_owned())));
        assert!(headers.contains(&("Mcp-Method".to_owned(), method.to_owned())));
    }
}
