//! The HTTP routing headers derived from a stateless request (`MCP-Protocol-Version`,
//! `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`): only Streamable HTTP has them.

use std::collections::HashMap;

use serde_json::Value;

use crate::types::META_PROTOCOL_VERSION;

use super::meta::HeaderParam;

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

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use serde_json::json;

    use super::*;
    use crate::client::era::meta::tool_header_params;

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
}

/// Tests of the `x-mcp-header` edge cases (an annotation on the schema root, and integer
/// arguments outside the range a header may carry or written as whole floats) and of the
/// `Mcp-Name` of the tasks extension's requests.
#[cfg(test)]
mod header_tests {
    use std::collections::HashMap;

    use serde_json::{json, Value};

    use super::headers;
    use crate::client::era::meta::tool_header_params;

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
