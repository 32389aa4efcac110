//! What the bridge reads from a host's messages and writes back, in either protocol era: the
//! per-request `_meta` of the stateless era, results shaped for the host's era, and the
//! errors a host hears when the server, or the bridge, could not do what it asked.

use serde_json::{json, Map, Value};
use umcp::jsonrpc::{ErrorCode, ErrorObject, Message, Notification, Payload, Response};
use umcp::types::{
    is_modern_protocol_version, ClientCapabilities, LoggingLevel, LATEST_MODERN_PROTOCOL_VERSION,
    LATEST_PROTOCOL_VERSION, META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL,
    META_PROTOCOL_VERSION, META_SERVER_INFO, SUPPORTED_PROTOCOL_VERSIONS,
};

/// The largest message the bridge reads from a host (a line on stdin, an HTTP body); a larger
/// one is skipped (said on stderr) and, over HTTP, refused with 413.
pub const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// The `_meta` prefix the protocol keeps for itself: such entries of a host's request are the
/// host's side of its connection to the bridge, not anything the server is owed.
const RESERVED_PREFIX: &str = "io.modelcontextprotocol/";

/// Which era a host request belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Era {
    /// The handshake era: the host sent `initialize`, and its session holds what it declared.
    Legacy,
    /// The stateless era: the request itself says its version and capabilities.
    Modern,
}

/// The messages of one text a host sent (a line, an HTTP body), and the error responses owed
/// for what is no message: a request JSON-RPC rejects is answered `Invalid Request`, a text
/// that is no JSON `Parse error`.
pub fn decode(text: &str) -> (Vec<Message>, Vec<Response>) {
    match Payload::decode(text) {
        Ok(Payload::Single(message)) => (vec![message], Vec::new()),
        Ok(Payload::Batch(messages, invalid, _)) => {
            (messages, invalid.iter().map(|i| i.reply()).collect())
        }
        Err(e) => {
            let owed = match e.invalid_request() {
                Some(invalid) => invalid.reply(),
                None => Response {
                    id: None,
                    result: Err(ErrorObject::new(ErrorCode::PARSE_ERROR, e.to_string())),
                },
            };
            (Vec::new(), vec![owed])
        }
    }
}

/// The `_meta` object of a request's params.
pub fn meta(params: Option<&Value>) -> Option<&Map<String, Value>> {
    params?.get("_meta")?.as_object()
}

/// The protocol version a stateless-era request names in its `_meta`, whichever it is; `None`
/// for a request of the handshake era.
pub fn stated_version(params: Option<&Value>) -> Option<&str> {
    meta(params)?.get(META_PROTOCOL_VERSION)?.as_str()
}

/// The era of a request: stateless when its `_meta` names a stateless version (or any version
/// that is not of the handshake era, which is then refused as unsupported).
pub fn era_of(params: Option<&Value>) -> Era {
    match stated_version(params) {
        Some(version) if !SUPPORTED_PROTOCOL_VERSIONS.contains(&version) => Era::Modern,
        _ => Era::Legacy,
    }
}

/// Why a stateless-era request cannot be served as it is: an unsupported version (-32022) or
/// missing capabilities (-32602); `None` when it can.
pub fn modern_refusal(params: Option<&Value>) -> Option<ErrorObject> {
    let version = stated_version(params).unwrap_or_default();
    if !is_modern_protocol_version(version) {
        let supported = supported_versions();
        let data = json!({ "supported": supported, "requested": version });
        let message = format!("unsupported protocol version {version}");
        return Some(
            ErrorObject::new(ErrorCode::UNSUPPORTED_PROTOCOL_VERSION, message).with_data(data),
        );
    }
    let declared = meta(params).is_some_and(|m| m.get(META_CLIENT_CAPABILITIES).is_some());
    (!declared).then(|| {
        let message = format!("the request's _meta has no {META_CLIENT_CAPABILITIES}");
        ErrorObject::new(ErrorCode::INVALID_PARAMS, message)
    })
}

/// Every version the bridge answers in, newest first: the stateless one and those of the
/// handshake era.
pub fn supported_versions() -> Vec<&'static str> {
    let mut versions = vec![LATEST_MODERN_PROTOCOL_VERSION];
    versions.extend(SUPPORTED_PROTOCOL_VERSIONS);
    versions
}

/// The version a handshake-era host is answered in: the one it asked for when the bridge
/// speaks it, the newest otherwise.
pub fn negotiated(asked: Option<&str>) -> &'static str {
    SUPPORTED_PROTOCOL_VERSIONS
        .iter()
        .find(|v| Some(**v) == asked)
        .copied()
        .unwrap_or(LATEST_PROTOCOL_VERSION)
}

/// The capabilities a stateless-era request declares (empty when it declares none).
pub fn declared_capabilities(params: Option<&Value>) -> ClientCapabilities {
    meta(params)
        .and_then(|m| m.get(META_CLIENT_CAPABILITIES))
        .and_then(|c| serde_json::from_value(c.clone()).ok())
        .unwrap_or_default()
}

/// The client identity a stateless-era request states.
pub fn stated_client(params: Option<&Value>) -> Option<Value> {
    meta(params)?.get(META_CLIENT_INFO).cloned()
}

/// The log level a stateless-era request asks the server's log lines from.
pub fn asked_log_level(params: Option<&Value>) -> Option<LoggingLevel> {
    let level = meta(params)?.get(META_LOG_LEVEL)?.as_str()?;
    LoggingLevel::from_name(level)
}

/// The progress token of a request, when the host asked for progress.
pub fn progress_token(params: Option<&Value>) -> Option<Value> {
    let token = meta(params)?.get("progressToken")?;
    (token.is_string() || token.is_i64() || token.is_u64()).then(|| token.clone())
}

/// The `_meta` entries of a host's request that are the host's own (a trace context, a
/// vendor's key), and the log level it asks for: what the server is sent on with the
/// request. The protocol's other entries and the progress token belong to the host's
/// connection to the bridge.
pub fn passed_meta(params: Option<&Value>) -> Option<Map<String, Value>> {
    let own = |key: &str| !key.starts_with(RESERVED_PREFIX) && key != "progressToken";
    let kept: Map<String, Value> = meta(params)?
        .iter()
        .filter(|(key, _)| own(key) || *key == META_LOG_LEVEL)
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    (!kept.is_empty()).then_some(kept)
}

/// The methods whose stateless-era results carry caching hints.
const CACHEABLE: &[&str] = &[
    "server/discover",
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
];

/// The result of `method` shaped for the host's era: a stateless-era host gets `resultType`,
/// the server's identity in `_meta` and, where the era asks for them, caching hints (none
/// given by the server means none to cache: `ttlMs` 0, `private`); a handshake-era host gets
/// no `resultType`.
pub fn shaped(mut result: Value, era: Era, server_info: &Value, method: &str) -> Value {
    let Some(object) = result.as_object_mut() else {
        return result;
    };
    match era {
        Era::Modern => {
            object
                .entry("resultType")
                .or_insert_with(|| Value::from("complete"));
            if CACHEABLE.contains(&method) {
                object.entry("ttlMs").or_insert_with(|| Value::from(0));
                object
                    .entry("cacheScope")
                    .or_insert_with(|| Value::from("private"));
            }
            if let Value::Object(meta) = object.entry("_meta").or_insert_with(|| json!({})) {
                meta.entry(META_SERVER_INFO)
                    .or_insert_with(|| server_info.clone());
            }
        }
        Era::Legacy => {
            object.remove("resultType");
        }
    }
    result
}

/// A notification message.
pub fn notification(method: &str, params: Value) -> Message {
    Notification::new(method, Some(params)).into()
}

/// The error a host hears for an upstream failure; `None` for a request the host cancelled
/// (which is not answered).
pub fn failure(error: &umcp::Error, method: &str) -> Option<ErrorObject> {
    use umcp::Error;
    let internal = |message: String| ErrorObject::new(ErrorCode::INTERNAL_ERROR, message);
    Some(match error {
        Error::Cancelled { .. } => return None,
        // The server's own answer, as it gave it.
        Error::Rpc(object) => object.clone(),
        Error::Invalid(message) => ErrorObject::new(ErrorCode::INVALID_PARAMS, message.clone()),
        Error::Unsupported(unsupported) => {
            ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, unsupported.to_string())
        }
        Error::Timeout { elapsed, .. } => internal(format!(
            "umcp bridge: the server did not answer {method} within {elapsed:.0?}"
        )),
        other => internal(format!("umcp bridge: {method}: {other}")),
    })
}

/// An error of the bridge's own.
pub fn refusal(code: ErrorCode, message: impl std::fmt::Display) -> ErrorObject {
    ErrorObject::new(code, format!("umcp bridge: {message}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_no_message_is_answered_with_the_error_owed() {
        let (messages, owed) = decode("{not json");
        assert!(messages.is_empty());
        assert_eq!(owed[0].id, None);
        assert!(matches!(&owed[0].result, Err(e) if e.code == ErrorCode::PARSE_ERROR));
        let (messages, owed) = decode(r#"{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}"#);
        assert!(messages.is_empty());
        assert!(matches!(&owed[0].result, Err(e) if e.code == ErrorCode::INVALID_REQUEST));
        let (messages, owed) = decode(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
        assert_eq!((messages.len(), owed.len()), (1, 0));
    }

    #[test]
    fn a_request_names_its_era_in_its_meta() {
        let modern = json!({"_meta": {META_PROTOCOL_VERSION: "2026-07-28"}});
        assert_eq!(era_of(Some(&modern)), Era::Modern);
        let unknown = json!({"_meta": {META_PROTOCOL_VERSION: "2099-01-01"}});
        assert_eq!(era_of(Some(&unknown)), Era::Modern);
        assert!(modern_refusal(Some(&unknown)).is_some_and(|e| e.code.0 == -32022));
        let missing = modern_refusal(Some(&modern)).map(|e| e.code.0);
        assert_eq!(missing, Some(-32602));
        assert_eq!(era_of(Some(&json!({"name": "x"}))), Era::Legacy);
        assert_eq!(era_of(None), Era::Legacy);
    }

    #[test]
    fn a_result_is_shaped_for_the_era_of_its_host() {
        let info = json!({"name": "s", "version": "1"});
        let modern = shaped(json!({"content": []}), Era::Modern, &info, "tools/call");
        assert_eq!(modern["resultType"], "complete");
        assert_eq!(modern["_meta"][META_SERVER_INFO]["name"], "s");
        assert!(modern.get("ttlMs").is_none());
        let listed = shaped(
            json!({"tools": [], "ttlMs": 5}),
            Era::Modern,
            &info,
            "tools/list",
        );
        assert_eq!(
            (&listed["ttlMs"], &listed["cacheScope"]),
            (&json!(5), &json!("private"))
        );
        let legacy = shaped(
            json!({"resultType": "complete"}),
            Era::Legacy,
            &info,
            "tools/list",
        );
        assert!(legacy.get("resultType").is_none());
    }

    #[test]
    fn only_the_hosts_own_meta_goes_on() {
        let params = json!({"_meta": {
            "progressToken": 4, META_PROTOCOL_VERSION: "2026-07-28", "traceparent": "00-ab"
        }});
        let passed = passed_meta(Some(&params)).unwrap();
        assert_eq!(passed.len(), 1);
        assert_eq!(passed["traceparent"], "00-ab");
        assert_eq!(progress_token(Some(&params)), Some(json!(4)));
    }

    #[test]
    fn a_handshake_era_host_gets_its_version_or_the_newest() {
        assert_eq!(negotiated(Some("2025-06-18")), "2025-06-18");
        assert_eq!(negotiated(Some("1999-01-01")), LATEST_PROTOCOL_VERSION);
        assert_eq!(supported_versions()[0], "2026-07-28");
    }
}
