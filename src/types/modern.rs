//! Types of protocol 2026-07-28 (the stateless era): `server/discover`, `resultType`,
//! multi round-trip requests and the data of the new error codes.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::lifecycle::ServerCapabilities;

/// The newest stateless protocol version, sent in `_meta` of every request in that era.
///
/// See the example on
/// [`types::is_supported_protocol_version`](crate::types::is_supported_protocol_version).
pub const LATEST_MODERN_PROTOCOL_VERSION: &str = "2026-07-28";

/// The stateless protocol versions this client speaks, newest first.
///
/// See the example on
/// [`types::is_supported_protocol_version`](crate::types::is_supported_protocol_version).
pub const MODERN_PROTOCOL_VERSIONS: [&str; 1] = [LATEST_MODERN_PROTOCOL_VERSION];

/// `_meta` key of the protocol version on every stateless request.
///
/// ```
/// use serde_json::json;
/// use umcp::types::{META_CLIENT_INFO, META_PROTOCOL_VERSION};
///
/// // What a server (or a test double) finds in a stateless-era request from this client:
/// let params = json!({
///     "name": "echo",
///     "_meta": {
///         "io.modelcontextprotocol/protocolVersion": "2026-07-28",
///         "io.modelcontextprotocol/clientInfo": { "name": "umcp", "version": "0.1.0" }
///     }
/// });
/// assert_eq!(params["_meta"][META_PROTOCOL_VERSION], "2026-07-28");
/// assert_eq!(params["_meta"][META_CLIENT_INFO]["name"], "umcp");
/// ```
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key of the client capabilities on every stateless request.
///
/// See the example on [`META_PROTOCOL_VERSION`].
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key of the client's name and version on every stateless request.
///
/// See the example on [`META_PROTOCOL_VERSION`].
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key of the requested log level (deprecated in 2026-07-28).
///
/// See the example on [`META_PROTOCOL_VERSION`].
pub const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// `_meta` key of the server's name and version in a result.
///
/// See the example on [`META_PROTOCOL_VERSION`].
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// `_meta` key that ties a notification to a `subscriptions/listen` stream.
///
/// See the example on [`META_PROTOCOL_VERSION`].
pub const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// Whether `version` is a stateless (2026-07-28 or later) version this client speaks.
///
/// See the example on
/// [`types::is_supported_protocol_version`](crate::types::is_supported_protocol_version).
pub fn is_modern_protocol_version(version: &str) -> bool {
    MODERN_PROTOCOL_VERSIONS.contains(&version)
}

/// The result of `server/discover`: what the server speaks and can do.
///
/// See the example on [`Client::server_info`](crate::Client::server_info).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct DiscoverResult {
    /// The protocol versions the server speaks.
    #[serde(default, deserialize_with = "super::lenient::null_as_default")]
    pub supported_versions: Vec<String>,
    /// What the server can do.
    #[serde(default, deserialize_with = "super::lenient::null_as_default")]
    pub capabilities: ServerCapabilities,
    /// How to use the server, for a model's context. Another type than a string reads as
    /// `None` and is logged.
    #[serde(
        default,
        deserialize_with = "super::lenient::opt_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub instructions: Option<String>,
    /// How long the result may be cached, in milliseconds; read as on
    /// [`ListToolsResult::ttl_ms`](crate::types::ListToolsResult::ttl_ms), so no value of it
    /// makes the result unreadable.
    #[serde(
        default,
        deserialize_with = "super::lenient::ttl_ms",
        skip_serializing_if = "Option::is_none"
    )]
    pub ttl_ms: Option<u64>,
    /// `public` or `private`; another type reads as `None` and is logged.
    #[serde(
        default,
        deserialize_with = "super::lenient::opt_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub cache_scope: Option<String>,
    /// Metadata, including `io.modelcontextprotocol/serverInfo`. Another type than an object
    /// reads as `None` and is logged.
    #[serde(
        rename = "_meta",
        default,
        deserialize_with = "super::lenient::opt_object",
        skip_serializing_if = "Option::is_none"
    )]
    pub meta: Option<Map<String, Value>>,
}

/// What kind of result a stateless server sent (`resultType`).
///
/// See the example on [`Client::request_once`](crate::Client::request_once).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResultType {
    /// The final result (also what an absent `resultType` means).
    Complete,
    /// The server needs input from the client before it can finish (MRTR).
    InputRequired,
    /// A task was created (the tasks extension). This client does not advertise that
    /// extension, so a request answered with it fails with
    /// [`Error::Protocol`](crate::Error::Protocol).
    Task,
}

impl ResultType {
    /// Reads `resultType` from a raw result; `None` for a value this client does not know.
    ///
    /// ```
    /// use serde_json::json;
    /// use umcp::types::ResultType;
    ///
    /// assert_eq!(ResultType::of(&json!({"content": []})), Some(ResultType::Complete));
    /// let asks = json!({"resultType": "input_required"});
    /// assert_eq!(ResultType::of(&asks), Some(ResultType::InputRequired));
    /// assert_eq!(ResultType::of(&json!({"resultType": "hologram"})), None);
    /// ```
    pub fn of(result: &Value) -> Option<ResultType> {
        match result.get("resultType") {
            None | Some(Value::Null) => Some(ResultType::Complete),
            Some(Value::String(kind)) => match kind.as_str() {
                "complete" => Some(ResultType::Complete),
                "input_required" => Some(ResultType::InputRequired),
                "task" => Some(ResultType::Task),
                _ => None,
            },
            Some(_) => None,
        }
    }
}

/// A result asking the client for input before the server can finish (`input_required`).
///
/// The client answers every entry of `input_requests` and repeats the original request with
/// `inputResponses` under the same keys and `requestState` echoed unchanged.
///
/// See the example on [`Client::request_once`](crate::Client::request_once).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct InputRequiredResult {
    /// What the server asks for, by a key of the server's choosing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<Map<String, Value>>,
    /// Opaque state to echo byte for byte on the retry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// The `data` of an `UnsupportedProtocolVersion` error (-32022).
///
/// See the example on [`Error`](crate::Error).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct UnsupportedProtocolVersionData {
    /// The versions the server speaks.
    #[serde(default)]
    pub supported: Vec<String>,
    /// The version the client asked for.
    #[serde(default)]
    pub requested: String,
}

/// The `data` of a `MissingRequiredClientCapability` error (-32021).
///
/// See the example on [`Error`](crate::Error).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct MissingRequiredClientCapabilityData {
    /// The client capabilities the request needs.
    #[serde(default)]
    pub required_capabilities: Value,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn result_type_absent_is_complete_and_unknown_is_none() {
        assert_eq!(ResultType::of(&json!({})), Some(ResultType::Complete));
        assert_eq!(
            ResultType::of(&json!({"resultType": "input_required"})),
            Some(ResultType::InputRequired)
        );
        assert_eq!(ResultType::of(&json!({"resultType": "later"})), None);
        assert_eq!(ResultType::of(&json!({"resultType": 3})), None);
    }

    #[test]
    fn discover_result_reads_the_spec_shape() {
        let result: DiscoverResult = serde_json::from_value(json!({
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}},
            "resultType": "complete",
            "ttlMs": 0,
            "cacheScope": "public",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}
        }))
        .unwrap();
        assert_eq!(result.supported_versions, ["2026-07-28"]);
        assert!(result.capabilities.tools.is_some());
        assert!(result.meta.unwrap().contains_key(META_SERVER_INFO));
    }

    #[test]
    fn no_hint_makes_a_discover_result_unreadable() {
        let base = r#""supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}"#;
        for (hints, ttl) in [
            (r#""ttlMs": 18446744073709551615"#, Some(u64::MAX)),
            (r#""ttlMs": 1e300"#, Some(u64::MAX)),
            (r#""ttlMs": 1e400"#, Some(u64::MAX)),
            (r#""ttlMs": 2.5"#, Some(2)),
            (r#""ttlMs": -5"#, None),
            (r#""ttlMs": "x""#, None),
            (r#""ttlMs": [1], "cacheScope": 7"#, None),
            (r#""cacheScope": {"a": 1e999}, "instructions": ["x"]"#, None),
            (r#""_meta": "none", "instructions": 5"#, None),
        ] {
            let text = format!("{{{base}, {hints}}}");
            let result: DiscoverResult = serde_json::from_str(&text).expect(&text);
            assert_eq!(result.supported_versions, ["2026-07-28"], "{text}");
            assert!(result.capabilities.tools.is_some(), "{text}");
            assert_eq!(result.ttl_ms, ttl, "{text}");
            assert!(result.cache_scope.is_none() && result.instructions.is_none());
            assert!(result.meta.is_none(), "{text}");
            // From a value (no text to read), where one can hold the hints.
            if let Ok(value) = serde_json::from_str::<Value>(&text) {
                let again: DiscoverResult = serde_json::from_value(value).expect(&text);
                assert_eq!(again, result, "{text}");
            }
        }
    }
}
