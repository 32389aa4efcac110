//! The `initialize` handshake: protocol versions, capabilities and the initialize messages.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::common::Implementation;

/// The newest protocol version umcp speaks, offered in `initialize`.
pub const LATEST_PROTOCOL_VERSION: &str = "2025-11-25";

/// Every protocol version umcp accepts from a server, newest first.
pub const SUPPORTED_PROTOCOL_VERSIONS: [&str; 4] =
    ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// Whether `version` is one of [`SUPPORTED_PROTOCOL_VERSIONS`].
pub fn is_supported_protocol_version(version: &str) -> bool {
    SUPPORTED_PROTOCOL_VERSIONS.contains(&version)
}

/// What the client offers the server.
///
/// The set is open: servers ignore keys they do not know, and `experimental` carries
/// non-standard ones.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientCapabilities {
    /// Present when the client answers `roots/list`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roots: Option<RootsCapability>,
    /// Present when the client answers `sampling/createMessage`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<SamplingCapability>,
    /// Present when the client answers `elicitation/create` (since 2025-06-18).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation: Option<ElicitationCapability>,
    /// Task support (2025-11-25, experimental), kept as raw JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<Value>,
    /// Non-standard capabilities, by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<Map<String, Value>>,
}

/// The client's `roots` capability.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RootsCapability {
    /// Whether the client sends `notifications/roots/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
}

/// The client's `sampling` capability.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplingCapability {
    /// Present when the client honours `includeContext` (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<Map<String, Value>>,
    /// Present when the client supports `tools` and `toolChoice` in sampling (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Map<String, Value>>,
}

/// The client's `elicitation` capability. An empty object means form mode only.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationCapability {
    /// Present when the client supports form mode (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub form: Option<Map<String, Value>>,
    /// Present when the client supports URL mode (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<Map<String, Value>>,
}

/// What the server offers; the client gates its calls on these.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerCapabilities {
    /// Present when the server offers tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ToolsCapability>,
    /// Present when the server offers resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourcesCapability>,
    /// Present when the server offers prompts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts: Option<PromptsCapability>,
    /// Present when the server sends log messages and accepts `logging/setLevel`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logging: Option<Map<String, Value>>,
    /// Present when the server answers `completion/complete` (since 2025-03-26).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completions: Option<Map<String, Value>>,
    /// Task support (2025-11-25, experimental), kept as raw JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<Value>,
    /// Non-standard capabilities, by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<Map<String, Value>>,
}

/// The server's `tools` capability.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolsCapability {
    /// Whether the server sends `notifications/tools/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
}

/// The server's `resources` capability.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourcesCapability {
    /// Whether the server accepts `resources/subscribe`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscribe: Option<bool>,
    /// Whether the server sends `notifications/resources/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
}

/// The server's `prompts` capability.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptsCapability {
    /// Whether the server sends `notifications/prompts/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
}

/// Parameters of `initialize`, the client's first request.
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    /// The version the server chose; it may differ from the one asked for.
    pub protocol_version: String,
    /// What the server offers. Read as empty when omitted.
    #[serde(default)]
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

impl ClientCapabilities {
    /// Declares `roots`.
    pub fn with_roots(mut self, roots: RootsCapability) -> ClientCapabilities {
        self.roots = Some(roots);
        self
    }

    /// Declares `sampling`.
    pub fn with_sampling(mut self, sampling: SamplingCapability) -> ClientCapabilities {
        self.sampling = Some(sampling);
        self
    }

    /// Declares `elicitation`.
    pub fn with_elicitation(mut self, elicitation: ElicitationCapability) -> ClientCapabilities {
        self.elicitation = Some(elicitation);
        self
    }

    /// Adds one non-standard capability.
    pub fn with_experimental(
        mut self,
        name: impl Into<String>,
        value: Value,
    ) -> ClientCapabilities {
        self.experimental
            .get_or_insert_with(Map::new)
            .insert(name.into(), value);
        self
    }
}

impl RootsCapability {
    /// Promises `notifications/roots/list_changed` when the roots change.
    pub fn with_list_changed(mut self) -> RootsCapability {
        self.list_changed = Some(true);
        self
    }
}

impl SamplingCapability {
    /// Declares support for `includeContext`.
    pub fn with_context(mut self) -> SamplingCapability {
        self.context = Some(Map::new());
        self
    }

    /// Declares support for tool use in sampling.
    pub fn with_tools(mut self) -> SamplingCapability {
        self.tools = Some(Map::new());
        self
    }
}

impl ElicitationCapability {
    /// Declares form mode explicitly.
    pub fn with_form(mut self) -> ElicitationCapability {
        self.form = Some(Map::new());
        self
    }

    /// Declares URL mode.
    pub fn with_url(mut self) -> ElicitationCapability {
        self.url = Some(Map::new());
        self
    }

    /// Whether form mode is supported: declared, or implied by an empty capability.
    pub fn supports_form(&self) -> bool {
        self.form.is_some() || self.url.is_none()
    }

    /// Whether URL mode is supported.
    pub fn supports_url(&self) -> bool {
        self.url.is_some()
    }
}

impl ServerCapabilities {
    /// Whether the server offers tools.
    pub fn supports_tools(&self) -> bool {
        self.tools.is_some()
    }

    /// Whether the server offers resources.
    pub fn supports_resources(&self) -> bool {
        self.resources.is_some()
    }

    /// Whether the server accepts `resources/subscribe`.
    pub fn supports_resource_subscriptions(&self) -> bool {
        self.resources.as_ref().and_then(|r| r.subscribe) == Some(true)
    }

    /// Whether the server offers prompts.
    pub fn supports_prompts(&self) -> bool {
        self.prompts.is_some()
    }

    /// Whether the server accepts `logging/setLevel`.
    pub fn supports_logging(&self) -> bool {
        self.logging.is_some()
    }

    /// Whether the server declared `completions`. Servers at 2024-11-05 had no such flag, so a
    /// caller talking to one may try `completion/complete` regardless.
    pub fn supports_completions(&self) -> bool {
        self.completions.is_some()
    }

    /// Whether the server promised `notifications/tools/list_changed`.
    pub fn tools_list_changed(&self) -> bool {
        self.tools.as_ref().and_then(|t| t.list_changed) == Some(true)
    }

    /// Whether the server promised `notifications/resources/list_changed`.
    pub fn resources_list_changed(&self) -> bool {
        self.resources.as_ref().and_then(|r| r.list_changed) == Some(true)
    }

    /// Whether the server promised `notifications/prompts/list_changed`.
    pub fn prompts_list_changed(&self) -> bool {
        self.prompts.as_ref().and_then(|p| p.list_changed) == Some(true)
    }
}

impl InitializeRequestParams {
    /// Parameters asking for [`LATEST_PROTOCOL_VERSION`] with no capabilities.
    pub fn new(client_info: Implementation) -> InitializeRequestParams {
        InitializeRequestParams {
            protocol_version: LATEST_PROTOCOL_VERSION.to_owned(),
            capabilities: ClientCapabilities::default(),
            client_info,
            meta: None,
        }
    }

    /// Sets the version asked for.
    pub fn with_protocol_version(mut self, version: impl Into<String>) -> InitializeRequestParams {
        self.protocol_version = version.into();
        self
    }

    /// Sets the capabilities offered.
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
    pub fn with_capabilities(mut self, capabilities: ServerCapabilities) -> InitializeResult {
        self.capabilities = capabilities;
        self
    }

    /// Sets the instructions.
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
        assert_eq!(
            r.capabilities.tasks.as_ref().unwrap()["requests"]["tools"],
            json!({"call": {}})
        );
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
