//! The `initialize` handshake: protocol versions, capabilities and the initialize messages.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::common::Implementation;

mod capabilities;
mod client_capabilities;

pub use capabilities::{
    CompletionsCapability, LoggingCapability, PromptsCapability, ResourcesCapability,
    ServerCapabilities, TasksCapability, ToolsCapability,
};
pub use client_capabilities::{
    ClientCapabilities, ElicitationCapability, RootsCapability, SamplingCapability,
};

/// The newest protocol version umcp speaks, offered in `initialize`.
///
/// See the example on
/// [`types::is_supported_protocol_version`](crate::types::is_supported_protocol_version).
pub const LATEST_PROTOCOL_VERSION: &str = "2025-11-25";

/// Every protocol version umcp accepts from a server, newest first.
///
/// See the example on
/// [`types::is_supported_protocol_version`](crate::types::is_supported_protocol_version).
pub const SUPPORTED_PROTOCOL_VERSIONS: [&str; 4] =
    ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// Whether `version` is one of [`SUPPORTED_PROTOCOL_VERSIONS`].
///
/// ```
/// use umcp::types::{
///     is_modern_protocol_version, is_supported_protocol_version, LATEST_MODERN_PROTOCOL_VERSION,
///     LATEST_PROTOCOL_VERSION, MODERN_PROTOCOL_VERSIONS, SUPPORTED_PROTOCOL_VERSIONS,
/// };
///
/// assert!(is_supported_protocol_version(LATEST_PROTOCOL_VERSION));
/// assert!(SUPPORTED_PROTOCOL_VERSIONS.contains(&"2024-11-05"));
/// assert!(is_modern_protocol_version(LATEST_MODERN_PROTOCOL_VERSION));
/// assert!(MODERN_PROTOCOL_VERSIONS.iter().all(|v| !is_supported_protocol_version(v)));
/// assert!(!is_supported_protocol_version("1999-01-01"));
/// ```
pub fn is_supported_protocol_version(version: &str) -> bool {
    SUPPORTED_PROTOCOL_VERSIONS.contains(&version)
}

/// Parameters of `initialize`, the client's first request.
///
/// See the example on [`Client::server_info`](crate::Client::server_info).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeRequestParams {
    /// The version the client asks for, normally [`LATEST_PROTOCOL_VERSION`].
    pub protocol_version: String,
    /// What the client offers.
    #[serde(default)]
    pub capabilities: ClientCapabilities,
    /// Who the client is.
    pub client_info: Implementation,
    /// Protocol-level metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// The server's answer to `initialize`.
///
/// See the example on [`Client::server_info`](crate::Client::server_info).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    /// The version the server chose; it may differ from the one asked for.
    pub protocol_version: String,
    /// What the server offers. Read as empty when omitted.
    #[serde(default, deserialize_with = "super::lenient::null_as_default")]
    pub capabilities: ServerCapabilities,
    /// Who the server is.
    pub server_info: Implementation,
    /// How to use the server, as a hint a host may give the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Protocol-level metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl InitializeRequestParams {
    /// Parameters asking for [`LATEST_PROTOCOL_VERSION`] with no capabilities.
    ///
    /// ```
    /// use serde_json::json;
    /// use umcp::types::{
    ///     ClientCapabilities, Implementation, InitializeRequestParams, RootsCapability,
    /// };
    ///
    /// let roots = ClientCapabilities::default().with_roots(RootsCapability::default());
    /// let params = InitializeRequestParams::new(Implementation::new("my-agent", "1.0.0"))
    ///     .with_protocol_version("2025-06-18")
    ///     .with_capabilities(roots);
    /// assert_eq!(serde_json::to_value(&params)?, json!({
    ///     "protocolVersion": "2025-06-18",
    ///     "capabilities": {"roots": {}},
    ///     "clientInfo": {"name": "my-agent", "version": "1.0.0"},
    /// }));
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn new(client_info: Implementation) -> InitializeRequestParams {
        InitializeRequestParams {
            protocol_version: LATEST_PROTOCOL_VERSION.to_owned(),
            capabilities: ClientCapabilities::default(),
            client_info,
            meta: None,
        }
    }

    /// Sets the version asked for.
    ///
    /// See the example on [`InitializeRequestParams::new`].
    pub fn with_protocol_version(mut self, version: impl Into<String>) -> InitializeRequestParams {
        self.protocol_version = version.into();
        self
    }

    /// Sets the capabilities offered.
    ///
    /// See the example on [`InitializeRequestParams::new`].
    pub fn with_capabilities(
        mut self,
        capabilities: ClientCapabilities,
    ) -> InitializeRequestParams {
        self.capabilities = capabilities;
        self
    }
}

impl InitializeResult {
    /// A result with the chosen version, the server's identity and no capabilities.
    ///
    /// ```
    /// use umcp::types::{Implementation, InitializeResult, ServerCapabilities, ToolsCapability};
    ///
    /// let tools = Some(ToolsCapability::default());
    /// let tools = ServerCapabilities { tools, ..Default::default() };
    /// let result = InitializeResult::new("2025-11-25", Implementation::new("files", "0.3.0"))
    ///     .with_capabilities(tools)
    ///     .with_instructions("Paths are relative to the first root.");
    /// assert!(result.capabilities.supports_tools());
    /// assert_eq!(serde_json::to_value(&result)?["serverInfo"]["name"], "files");
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn new(
        protocol_version: impl Into<String>,
        server_info: Implementation,
    ) -> InitializeResult {
        InitializeResult {
            protocol_version: protocol_version.into(),
            capabilities: ServerCapabilities::default(),
            server_info,
            instructions: None,
            meta: None,
        }
    }

    /// Sets the capabilities.
    ///
    /// See the example on [`InitializeResult::new`].
    pub fn with_capabilities(mut self, capabilities: ServerCapabilities) -> InitializeResult {
        self.capabilities = capabilities;
        self
    }

    /// Sets the instructions.
    ///
    /// See the example on [`InitializeResult::new`].
    pub fn with_instructions(mut self, instructions: impl Into<String>) -> InitializeResult {
        self.instructions = Some(instructions.into());
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn versions_are_listed_newest_first() {
        assert_eq!(SUPPORTED_PROTOCOL_VERSIONS[0], LATEST_PROTOCOL_VERSION);
        assert!(is_supported_protocol_version("2024-11-05"));
        assert!(!is_supported_protocol_version("2026-07-28"));
        assert!(!is_supported_protocol_version(""));
    }

    #[test]
    fn initialize_params_serialise_the_declared_capabilities() {
        let caps = ClientCapabilities::default()
            .with_roots(RootsCapability::default().with_list_changed())
            .with_sampling(SamplingCapability::default().with_tools())
            .with_elicitation(ElicitationCapability::default().with_form().with_url())
            .with_experimental("x.example/feature", json!({}));
        let params = InitializeRequestParams::new(Implementation::new("umcp", "0.1"))
            .with_capabilities(caps);
        assert_eq!(
            serde_json::to_value(&params).unwrap(),
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {
                    "roots": {"listChanged": true},
                    "sampling": {"tools": {}},
                    "elicitation": {"form": {}, "url": {}},
                    "experimental": {"x.example/feature": {}}
                },
                "clientInfo": {"name": "umcp", "version": "0.1"}
            })
        );
        let bare = InitializeRequestParams::new(Implementation::new("c", "1"))
            .with_protocol_version("2024-11-05");
        let v = serde_json::to_value(&bare).unwrap();
        assert_eq!(v["capabilities"], json!({}));
        assert_eq!(v["protocolVersion"], "2024-11-05");
    }

    #[test]
    fn reads_a_2024_11_05_initialize_result() {
        let r: InitializeResult = serde_json::from_value(json!({
            "protocolVersion": "2024-11-05",
            "capabilities": {"tools": {}, "resources": {"subscribe": true}, "logging": {}},
            "serverInfo": {"name": "old", "version": "0.0.1"}
        }))
        .unwrap();
        let caps = &r.capabilities;
        assert!(caps.supports_tools() && !caps.tools_list_changed());
        assert!(caps.supports_resource_subscriptions() && !caps.resources_list_changed());
        assert!(caps.supports_logging());
        assert!(!caps.supports_prompts() && !caps.supports_completions());
        assert_eq!(r.instructions, None);
    }

    #[test]
    fn reads_a_2025_11_25_initialize_result_and_round_trips_it() {
        let v = json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {
                "tools": {"listChanged": true},
                "resources": {"subscribe": false, "listChanged": true},
                "prompts": {"listChanged": true},
                "completions": {},
                "tasks": {"list": {}, "requests": {"tools": {"call": {}}}},
                "experimental": {"x": {"y": 1}}
            },
            "serverInfo": {"name": "s", "version": "1", "title": "S"},
            "instructions": "Use the tools.",
            "_meta": {"k": "v"}
        });
        let r: InitializeResult = serde_json::from_value(v.clone()).unwrap();
        assert!(r.capabilities.prompts_list_changed() && r.capabilities.supports_completions());
        assert!(!r.capabilities.supports_resource_subscriptions());
        let tasks = r.capabilities.tasks.as_ref().unwrap();
        assert!(tasks.supports_request("tools/call") && tasks.list.is_some());
        assert!(!tasks.supports_request("tools/list") && !tasks.supports_request("x"));
        assert_eq!(serde_json::to_value(&r).unwrap(), v);
    }

    #[test]
    fn missing_capabilities_read_as_none() {
        let r: InitializeResult = serde_json::from_value(json!({
            "protocolVersion": "2025-06-18", "serverInfo": {"name": "s", "version": "1"}
        }))
        .unwrap();
        assert_eq!(r.capabilities, ServerCapabilities::default());
        let built = InitializeResult::new("2025-06-18", Implementation::new("s", "1"))
            .with_instructions("hi")
            .with_capabilities(ServerCapabilities {
                tools: Some(ToolsCapability::default()),
                ..ServerCapabilities::default()
            });
        assert!(built.capabilities.supports_tools());
        assert_eq!(built.instructions.as_deref(), Some("hi"));
    }

    #[test]
    fn elicitation_modes_follow_the_empty_object_rule() {
        let empty = ElicitationCapability::default();
        assert!(empty.supports_form() && !empty.supports_url());
        let url_only = ElicitationCapability::default().with_url();
        assert!(!url_only.supports_form() && url_only.supports_url());
        let both: ElicitationCapability =
            serde_json::from_value(json!({"form": {}, "url": {}})).unwrap();
        assert!(both.supports_form() && both.supports_url());
    }
}
