//! The per-request `_meta` of the stateless era and the HTTP routing headers derived from a
//! request (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`).

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::types::{
    Implementation, LoggingLevel, META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
};

/// Adds the stateless `_meta` entries to a request's params, creating both objects if
/// needed (a null one included). Entries the caller put in `_meta` are kept as they are: the
/// caller's word wins.
pub(crate) fn stamp(
    params: Option<Value>,
    version: &str,
    identity: &Identity,
    log_level: Option<LoggingLevel>,
) -> Option<Value> {
    let mut object = match params {
        Some(Value::Object(map)) => map,
        None | Some(Value::Null) => Map::new(),
        // Not an object: nothing can be added; the server will say what it thinks.
        Some(other) => return Some(other),
    };
    let meta = object
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    // A null `_meta` says nothing, and the required entries have to go somewhere.
    if meta.is_null() {
        *meta = Value::Object(Map::new());
    }
    if let Value::Object(meta) = meta {
        meta.entry(META_PROTOCOL_VERSION)
            .or_insert_with(|| Value::from(version));
        meta.entry(META_CLIENT_CAPABILITIES)
            .or_insert_with(|| identity.capabilities.clone());
        meta.entry(META_CLIENT_INFO)
            .or_insert_with(|| identity.client_info.clone());
        if let Some(level) = log_level {
            meta.entry(META_LOG_LEVEL)
                .or_insert_with(|| Value::from(level.as_str()));
        }
    }
    Some(Value::Object(object))
}

/// What every stateless request says about the client, encoded once per connection.
#[derive(Debug, Clone, Default)]
pub(crate) struct Identity {
    pub(crate) capabilities: Value,
    pub(crate) client_info: Value,
}

impl Identity {
    /// The identity of a client named `client_info` declaring `capabilities`.
    pub(crate) fn new(client_info: &Implementation, capabilities: Value) -> Identity {
        Identity {
            capabilities,
            client_info: serde_json::to_value(client_info).unwrap_or(Value::Null),
        }
    }
}

/// The routing headers of one stateless HTTP request. `tool_headers` maps a tool name to the
/// arguments it mirrors into `Mcp-Param-*` headers. Fails, saying why, when a mirrored argument
/// is an integer no header may carry: the request cannot be sent as the spec asks.
pub(crate) fn headers(
    method: &str,
    params: Option<&Value>,
    tool_headers: &HashMap<String, Vec<HeaderParam>>,
) -> Result<Vec<(String, String)>, String> {
    let mut headers = Vec::new();
    let version = params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(META_PROTOCOL_VERSION))
        .and_then(Value::as_str);
    if let Some(version) = version {
        headers.push(("MCP-Protocol-Version".to_owned(), version.to_owned()));
    }
    headers.push(("Mcp-Method".to_owned(), encode_value(method)));
    let name_key = match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        // The tasks extension routes a task's requests to the instance holding it.
        "tasks/get" | "tasks/update" | "tasks/cancel" => Some("taskId"),
        _ => None,
    };
    let name = name_key
        .and_then(|key| params.and_then(|p| p.get(key)))
        .and_then(Value::as_str);
    if let Some(name) = name {
        headers.push(("Mcp-Name".to_owned(), encode_value(name)));
    }
    if method == "tools/call" {
        let arguments = params.and_then(|p| p.get("arguments"));
        let mirrored = name.and_then(|n| tool_headers.get(n));
        if let (Some(arguments), Some(mirrored)) = (arguments, mirrored) {
            for (path, header) in mirrored {
                let value = path.iter().try_fold(arguments, |v, key| v.get(key));
                let Some(value) = value else { continue };
                let value = header_value(value).map_err(|why| {
                    format!(
                        "argument `{}` of tool `{}` {why}",
                        path.join("."),
                        name.unwrap_or_default()
                    )
                })?;
                if let Some(value) = value {
                    headers.push((format!("Mcp-Param-{header}"), value));
                }
            }
        }
    }
    Ok(headers)
}

/// The `Mcp-Name` of a tasks extension request (`tasks/get`, `tasks/update`,
/// `tasks/cancel`): its task id, encoded when unsafe.
pub(crate) fn task_route(method: &str, params: Option<&Value>) -> Option<String> {
    if !matches!(method, "tasks/get" | "tasks/update" | "tasks/cancel") {
        return None;
    }
    let id = params?.get("taskId")?.as_str()?;
    Some(encode_value(id))
}

/// The largest magnitude of an integer in an `Mcp-Param-*` header: 2^53 − 1, the integers an
/// IEEE 754 double holds exactly.
const MAX_HEADER_INTEGER: u64 = (1 << 53) - 1;

/// A tool argument as an `Mcp-Param-*` value: strings (encoded if unsafe), integers (`42.0` too, as
/// JSON Schema counts them), booleans; anything else sends none. Beyond ±(2^53 − 1) is an error.
fn header_value(value: &Value) -> Result<Option<String>, String> {
    let out_of_range =
        || format!("is {value}, outside the integers an Mcp-Param header may carry (±(2^53 − 1))");
    Ok(match value {
        Value::String(s) => Some(encode_value(s)),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) if n.is_i64() || n.is_u64() => {
            let magnitude = n.as_i64().map(i64::unsigned_abs).or(n.as_u64());
            if magnitude.is_none_or(|m| m > MAX_HEADER_INTEGER) {
                return Err(out_of_range());
            }
            Some(n.to_string())
        }
        Value::Number(n) => match n.as_f64() {
            Some(f) if f.is_finite() && f.fract() == 0.0 => {
                // Exact: every whole double up to 2^53 is an integer of that value.
                if f.abs() > MAX_HEADER_INTEGER as f64 {
                    return Err(out_of_range());
                }
                Some((f as i64).to_string())
            }
            _ => None,
        },
        _ => None,
    })
}

/// A value as sent in a header: as is when it is plain visible ASCII (inner spaces allowed),
/// otherwise `=?base64?…?=`. A plain value that looks like that form is encoded too, so the
/// server never decodes what the caller meant literally.
pub(crate) fn encode_value(value: &str) -> String {
    let visible = value.bytes().all(|b| (0x20..0x7f).contains(&b));
    let padded = value.starts_with(' ') || value.ends_with(' ');
    let sentinel = value.starts_with("=?base64?") && value.ends_with("?=");
    if visible && !padded && !sentinel {
        value.to_owned()
    } else {
        format!("=?base64?{}?=", base64(value.as_bytes()))
    }
}

/// Standard base64 with padding (RFC 4648 §4); small enough not to need a dependency in the
/// builds without the `oauth` feature.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3).saturating_mul(4));
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18u32, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> shift) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Where a tool argument is mirrored into a header: the chain of `properties` keys that leads
/// to it, and the name after `Mcp-Param-`.
pub(crate) type HeaderParam = (Vec<String>, String);

/// The `x-mcp-header` annotations of a tool's input schema, or why they are invalid (a bad or
/// repeated name, a non-primitive type, or not reached through `properties` keys alone).
pub(crate) fn tool_header_params(schema: &Value) -> Result<Vec<HeaderParam>, String> {
    let mut pairs = Vec::new();
    collect(schema, &mut Vec::new(), &mut pairs)?;
    Ok(pairs)
}

/// Walks `schema` (reached through `path`): annotations count under `properties` only, and
/// one anywhere else makes the whole tool invalid.
fn collect(
    schema: &Value,
    path: &mut Vec<String>,
    pairs: &mut Vec<HeaderParam>,
) -> Result<(), String> {
    let Some(object) = schema.as_object() else {
        return Ok(());
    };
    for (key, value) in object {
        if key == "properties" {
            for (argument, property) in value.as_object().into_iter().flatten() {
                path.push(argument.clone());
                if let Some(annotation) = property.get("x-mcp-header") {
                    pairs.push((path.clone(), checked(annotation, property, path, pairs)?));
                }
                collect(property, path, pairs)?;
                path.pop();
            }
        } else if key != "x-mcp-header" {
            nested_annotation(value, key)?;
        } else if path.is_empty() {
            // A property's own annotation was checked by its parent; the root has no parent.
            return Err("x-mcp-header on the schema root".into());
        }
    }
    Ok(())
}

/// The header name of one annotation, checked against the rules.
fn checked(
    annotation: &Value,
    property: &Value,
    path: &[String],
    pairs: &[HeaderParam],
) -> Result<String, String> {
    let at = path.join(".");
    let Some(name) = annotation.as_str() else {
        return Err(format!("`{at}`: x-mcp-header is not a string"));
    };
    if name.is_empty() || !name.bytes().all(is_token_byte) {
        return Err(format!("`{at}`: x-mcp-header {name:?} is not a token"));
    }
    if pairs.iter().any(|(_, h)| h.eq_ignore_ascii_case(name)) {
        return Err(format!("`{at}`: x-mcp-header {name:?} is a duplicate"));
    }
    match property.get("type").and_then(Value::as_str) {
        Some("string" | "integer" | "boolean") => Ok(name.to_owned()),
        other => Err(format!(
            "`{at}`: x-mcp-header on type {}",
            other.unwrap_or("(none)")
        )),
    }
}

/// Fails when `value` holds an `x-mcp-header` anywhere within it.
fn nested_annotation(value: &Value, path: &str) -> Result<(), String> {
    match value {
        Value::Object(map) => {
            if map.contains_key("x-mcp-header") {
                return Err(format!("x-mcp-header nested under `{path}`"));
            }
            map.iter().try_for_each(|(k, v)| nested_annotation(v, k))
        }
        Value::Array(items) => items.iter().try_for_each(|v| nested_annotation(v, path)),
        _ => Ok(()),
    }
}

/// RFC 9110 `tchar`.
fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn stamp_keeps_caller_meta_and_adds_the_protocol_entries() {
        let identity = Identity::new(&Implementation::new("umcp", "1"), json!({}));
        let params = Some(json!({"name": "t", "_meta": {"trace": 1, META_PROTOCOL_VERSION: "x"}}));
        let stamped = stamp(params, "2026-07-28", &identity, None).unwrap();
        let meta = &stamped["_meta"];
        assert_eq!(meta["trace"], 1);
        assert_eq!(meta[META_PROTOCOL_VERSION], "x", "the caller's entry wins");
        assert_eq!(meta[META_CLIENT_CAPABILITIES], json!({}));
        assert_eq!(meta[META_CLIENT_INFO]["name"], "umcp");
        let bare = stamp(None, "2026-07-28", &identity, None).unwrap();
        assert_eq!(bare["_meta"][META_PROTOCOL_VERSION], "2026-07-28");
        assert!(
            bare["_meta"].get(META_LOG_LEVEL).is_none(),
            "no level unless set"
        );
        let level = Some(LoggingLevel::Warning);
        let leveled = stamp(None, "2026-07-28", &identity, level).unwrap();
        assert_eq!(leveled["_meta"][META_LOG_LEVEL], "warning");
    }

    #[test]
    fn values_are_encoded_when_unsafe() {
        assert_eq!(encode_value("plain value"), "plain value");
        assert_eq!(encode_value("héllo"), "=?base64?aMOpbGxv?=");
        assert_eq!(encode_value(" lead"), "=?base64?IGxlYWQ=?=");
        assert_eq!(encode_value("=?base64?x?="), "=?base64?PT9iYXNlNjQ/eD89?=");
        assert_eq!(base64(b"ab"), "YWI=");
        assert_eq!(base64(b"abc"), "YWJj");
    }

    #[test]
    fn headers_mirror_annotated_arguments() {
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "count": {"type": "integer", "x-mcp-header": "Count"},
            "dry": {"type": "boolean", "x-mcp-header": "Dry"},
            "note": {"type": "string"}
        }});
        let pairs = tool_header_params(&schema).unwrap();
        let map = HashMap::from([("t".to_owned(), pairs)]);
        let params = json!({"name": "t", "arguments": {"region": "eu", "count": 3, "dry": true},
            "_meta": {META_PROTOCOL_VERSION: "2026-07-28"}});
        let headers = headers("tools/call", Some(&params), &map).unwrap();
        let get = |n: &str| {
            headers
                .iter()
                .find(|(k, _)| k == n)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(get("MCP-Protocol-Version"), Some("2026-07-28"));
        assert_eq!(get("Mcp-Method"), Some("tools/call"));
        assert_eq!(get("Mcp-Name"), Some("t"));
        assert_eq!(get("Mcp-Param-Region"), Some("eu"));
        assert_eq!(get("Mcp-Param-Count"), Some("3"));
        assert_eq!(get("Mcp-Param-Dry"), Some("true"));
        let null = json!({"name": "t", "arguments": {"region": null}});
        let headers = super::headers("tools/call", Some(&null), &map).unwrap();
        assert!(!headers.iter().any(|(k, _)| k == "Mcp-Param-Region"));
    }

    #[test]
    fn invalid_annotations_are_rejected() {
        let bad = [
            json!({"properties": {"a": {"type": "number", "x-mcp-header": "A"}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": ""}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": "A B"}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": "A"},
                                  "b": {"type": "string", "x-mcp-header": "a"}}}),
            json!({"properties": {"a": {"type": "object", "x-mcp-header": "A"}}}),
            json!({"properties": {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}}}),
            json!({"properties": {}, "anyOf": [{"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}]}),
            json!({"properties": {"a": {"$ref": "#/$defs/b"}}, "$defs": {"b": {"type": "string", "x-mcp-header": "B"}}}),
        ];
        for schema in bad {
            assert!(tool_header_params(&schema).is_err(), "{schema}");
        }
        assert_eq!(
            tool_header_params(&json!({"type": "object"})).unwrap(),
            vec![]
        );
    }
}

/// Tests of the `x-mcp-header` edge cases (an annotation on the schema root, and integer
/// arguments outside the range a header may carry or written as whole floats) and of the
/// `Mcp-Name` of the tasks extension's requests.
#[cfg(test)]
mod header_tests {
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
}
