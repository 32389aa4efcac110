//! The capabilities a server declares, typed, with every member a peer sent that umcp does
//! not model kept as raw JSON (`other` and `extra`), so nothing is lost and a round trip gives
//! back what was received.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What the server offers; the client gates its calls on these.
///
/// Members umcp does not model stay in each capability's `extra`, and unknown capabilities in
/// [`other`](ServerCapabilities::other), so serializing the capabilities gives back exactly
/// what the server sent.
///
/// ```
/// let caps: umcp::types::ServerCapabilities = serde_json::from_str(
///     r#"{"tools": {"listChanged": true}, "logging": {}, "tasks": {"requests": {"tools": {"call": {}}}},
///         "extensions": {"io.modelcontextprotocol/ui": {"v": 1}}, "x-vendor": {"a": 1}}"#,
/// )?;
/// assert!(caps.tools_list_changed() && caps.supports_logging());
/// assert!(caps.tasks.as_ref().is_some_and(|t| t.supports_request("tools/call")));
/// assert_eq!(caps.extension("io.modelcontextprotocol/ui").unwrap()["v"], 1);
/// assert_eq!(caps.other["x-vendor"]["a"], 1); // not modelled, still there
/// # Ok::<(), serde_json::Error>(())
/// ```
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
    pub logging: Option<LoggingCapability>,
    /// Present when the server answers `completion/complete` (since 2025-03-26).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completions: Option<CompletionsCapability>,
    /// Task support (2025-11-25, experimental).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<TasksCapability>,
    /// Non-standard capabilities, by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<Map<String, Value>>,
    /// Extensions, by id (e.g. `io.modelcontextprotocol/ui`), each with its settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Map<String, Value>>,
    /// Capabilities umcp does not model, as sent.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// The server's `tools` capability.
///
/// See the example on [`types::ServerCapabilities`](crate::types::ServerCapabilities).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolsCapability {
    /// Whether the server sends `notifications/tools/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Members umcp does not model, as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The server's `resources` capability.
///
/// See the example on [`types::ServerCapabilities`](crate::types::ServerCapabilities).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourcesCapability {
    /// Whether the server accepts `resources/subscribe`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscribe: Option<bool>,
    /// Whether the server sends `notifications/resources/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Members umcp does not model, as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The server's `prompts` capability.
///
/// See the example on [`types::ServerCapabilities`](crate::types::ServerCapabilities).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptsCapability {
    /// Whether the server sends `notifications/prompts/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Members umcp does not model, as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The server's `logging` capability: an empty object in every version so far.
/// See [`ServerCapabilities`] for an example.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoggingCapability {
    /// Members umcp does not model, as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The server's `completions` capability: an empty object in every version so far.
/// See [`ServerCapabilities`] for an example.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompletionsCapability {
    /// Members umcp does not model, as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Task support (2025-11-25, experimental), on either side: whether tasks can be listed and
/// cancelled, and which requests may be run as tasks. See [`ServerCapabilities`] for an
/// example.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TasksCapability {
    /// Present when `tasks/list` is supported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list: Option<Map<String, Value>>,
    /// Present when `tasks/cancel` is supported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancel: Option<Map<String, Value>>,
    /// The requests that may be task-augmented, nested by method segment: the server's
    /// `{"tools": {"call": {}}}`, the client's `{"sampling": {"createMessage": {}}}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<Map<String, Value>>,
    /// Members umcp does not model, as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl TasksCapability {
    /// Whether `method` (e.g. `tools/call`, `sampling/createMessage`) may be run as a task.
    ///
    /// See the example on [`ServerCapabilities`].
    pub fn supports_request(&self, method: &str) -> bool {
        let Some(requests) = &self.requests else {
            return false;
        };
        let mut parts = method.split('/');
        let Some(mut node) = parts.next().and_then(|first| requests.get(first)) else {
            return false;
        };
        for part in parts {
            match node.get(part) {
                Some(next) => node = next,
                None => return false,
            }
        }
        node.is_object()
    }
}

impl ServerCapabilities {
    /// Whether the server offers tools.
    ///
    /// See the example on [`types::ServerCapabilities`](crate::types::ServerCapabilities).
    pub fn supports_tools(&self) -> bool {
        self.tools.is_some()
    }

    /// Whether the server offers resources.
    ///
    /// See the example on [`types::ServerCapabilities`](crate::types::ServerCapabilities).
    pub fn supports_resources(&self) -> bool {
        self.resources.is_some()
    }

    /// Whether the server accepts `resources/subscribe`.
    ///
    /// See the example on [`types::ServerCapabilities`](crate::types::ServerCapabilities).
    pub fn supports_resource_subscriptions(&self) -> bool {
        self.resources.as_ref().and_then(|r| r.subscribe) == Some(true)
    }

    /// Whether the server offers prompts.
    ///
    /// See the example on [`types::ServerCapabilities`](crate::types::ServerCapabilities).
    pub fn supports_prompts(&self) -> bool {
        self.prompts.is_some()
    }

    /// Whether the server accepts `logging/setLevel`.
    ///
    /// See the example on [`types::ServerCapabilities`](crate::types::ServerCapabilities).
    pub fn supports_logging(&self) -> bool {
        self.logging.is_some()
    }

    /// Whether the server declared `completions`. Servers at 2024-11-05 had no such flag, so a
    /// caller talking to one may try `completion/complete` regardless.
    ///
    /// See the example on [`types::ServerCapabilities`](crate::types::ServerCapabilities).
    pub fn supports_completions(&self) -> bool {
        self.completions.is_some()
    }

    /// Whether the server promised `notifications/tools/list_changed`.
    ///
    /// See the example on [`types::ServerCapabilities`](crate::types::ServerCapabilities).
    pub fn tools_list_changed(&self) -> bool {
        self.tools.as_ref().and_then(|t| t.list_changed) == Some(true)
    }

    /// Whether the server promised `notifications/resources/list_changed`.
    ///
    /// See the example on [`types::ServerCapabilities`](crate::types::ServerCapabilities).
    pub fn resources_list_changed(&self) -> bool {
        self.resources.as_ref().and_then(|r| r.list_changed) == Some(true)
    }

    /// The settings of extension `id`, when the server declared it.
    ///
    /// See the example on [`types::ServerCapabilities`](crate::types::ServerCapabilities).
    pub fn extension(&self, id: &str) -> Option<&Value> {
        self.extensions.as_ref()?.get(id)
    }

    /// Whether the server promised `notifications/prompts/list_changed`.
    ///
    /// See the example on [`types::ServerCapabilities`](crate::types::ServerCapabilities).
    pub fn prompts_list_changed(&self) -> bool {
        self.prompts.as_ref().and_then(|p| p.list_changed) == Some(true)
    }
}
