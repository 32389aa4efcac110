//! The capabilities a server declares, typed, with every member a peer sent that umcp does
//! not model kept as raw JSON (`other` and `extra`), so nothing is lost and a round trip gives
//! back what was received. They are read by hand from one map of the server's members (below): serde's derived reading of `flatten` buffers every member, and compiled for seven
//! structs that was most of a small program's capability code.

use serde::de::{Deserialize, Deserializer, Error as _};
use serde::Serialize;
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
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
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
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
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
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
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
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
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
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct LoggingCapability {
    /// Members umcp does not model, as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The server's `completions` capability: an empty object in every version so far.
/// See [`ServerCapabilities`] for an example.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CompletionsCapability {
    /// Members umcp does not model, as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Task support (2025-11-25, experimental), on either side: whether tasks can be listed and
/// cancelled, and which requests may be run as tasks. See [`ServerCapabilities`] for an
/// example.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
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

// Reading. Each capability is read from the map of its members: the modelled ones are taken
// out (a `null` counts as absent), and what is left is its `extra` (or `other`). A member of the
// wrong type fails as a derived reading would.

/// The members of a capability, which must be an object.
fn members(value: Value, what: &str) -> Result<Map<String, Value>, String> {
    match value {
        Value::Object(map) => Ok(map),
        other => Err(format!(
            "invalid type: {}, expected {what}",
            crate::jsonrpc::value_kind(&other)
        )),
    }
}

/// Takes `key` out of `map`, read by `read`; `None` when absent or `null`.
fn take<T>(
    map: &mut Map<String, Value>,
    key: &str,
    read: impl FnOnce(Value) -> Result<T, String>,
) -> Result<Option<T>, String> {
    match map.remove(key) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => read(value)
            .map(Some)
            .map_err(|why| format!("`{key}`: {why}")),
    }
}

/// A boolean member.
fn flag(value: Value) -> Result<bool, String> {
    let kind = crate::jsonrpc::value_kind(&value);
    value
        .as_bool()
        .ok_or_else(|| format!("invalid type: {kind}, expected a boolean"))
}

/// An object member, kept whole.
fn object(value: Value) -> Result<Map<String, Value>, String> {
    members(value, "a map")
}

impl ServerCapabilities {
    fn read(value: Value) -> Result<ServerCapabilities, String> {
        let mut other = members(value, "struct ServerCapabilities")?;
        let map = &mut other;
        Ok(ServerCapabilities {
            tools: take(map, "tools", ToolsCapability::read)?,
            resources: take(map, "resources", ResourcesCapability::read)?,
            prompts: take(map, "prompts", PromptsCapability::read)?,
            logging: take(map, "logging", |v| {
                object(v).map(|extra| LoggingCapability { extra })
            })?,
            completions: take(map, "completions", |v| {
                object(v).map(|extra| CompletionsCapability { extra })
            })?,
            tasks: take(map, "tasks", TasksCapability::read)?,
            experimental: take(map, "experimental", object)?,
            extensions: take(map, "extensions", object)?,
            other,
        })
    }
}

impl ToolsCapability {
    fn read(value: Value) -> Result<ToolsCapability, String> {
        let mut extra = members(value, "struct ToolsCapability")?;
        let list_changed = take(&mut extra, "listChanged", flag)?;
        Ok(ToolsCapability {
            list_changed,
            extra,
        })
    }
}

impl ResourcesCapability {
    fn read(value: Value) -> Result<ResourcesCapability, String> {
        let mut extra = members(value, "struct ResourcesCapability")?;
        let subscribe = take(&mut extra, "subscribe", flag)?;
        let list_changed = take(&mut extra, "listChanged", flag)?;
        Ok(ResourcesCapability {
            subscribe,
            list_changed,
            extra,
        })
    }
}

impl PromptsCapability {
    fn read(value: Value) -> Result<PromptsCapability, String> {
        let mut extra = members(value, "struct PromptsCapability")?;
        let list_changed = take(&mut extra, "listChanged", flag)?;
        Ok(PromptsCapability {
            list_changed,
            extra,
        })
    }
}

impl TasksCapability {
    fn read(value: Value) -> Result<TasksCapability, String> {
        let mut extra = members(value, "struct TasksCapability")?;
        let map = &mut extra;
        let list = take(map, "list", object)?;
        let cancel = take(map, "cancel", object)?;
        let requests = take(map, "requests", object)?;
        Ok(TasksCapability {
            list,
            cancel,
            requests,
            extra,
        })
    }
}

/// Reads a capability from the value it is given as, through [`ServerCapabilities::read`] and
/// the like.
fn read_with<'de, D: Deserializer<'de>, T>(
    deserializer: D,
    read: fn(Value) -> Result<T, String>,
) -> Result<T, D::Error> {
    read(Value::deserialize(deserializer)?).map_err(D::Error::custom)
}

impl<'de> Deserialize<'de> for ServerCapabilities {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        read_with(deserializer, ServerCapabilities::read)
    }
}

impl<'de> Deserialize<'de> for ToolsCapability {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        read_with(deserializer, ToolsCapability::read)
    }
}

impl<'de> Deserialize<'de> for ResourcesCapability {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        read_with(deserializer, ResourcesCapability::read)
    }
}

impl<'de> Deserialize<'de> for PromptsCapability {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        read_with(deserializer, PromptsCapability::read)
    }
}

impl<'de> Deserialize<'de> for LoggingCapability {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        read_with(deserializer, |v| {
            object(v).map(|extra| LoggingCapability { extra })
        })
    }
}

impl<'de> Deserialize<'de> for CompletionsCapability {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        read_with(deserializer, |v| {
            object(v).map(|extra| CompletionsCapability { extra })
        })
    }
}

impl<'de> Deserialize<'de> for TasksCapability {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        read_with(deserializer, TasksCapability::read)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn members_are_read_as_typed_and_the_rest_is_kept_as_sent() {
        let sent = json!({
            "tools": {"listChanged": true, "vendorFlag": 1},
            "resources": {"subscribe": false, "listChanged": null},
            "prompts": {},
            "logging": {"x": [1]},
            "completions": {},
            "tasks": {"list": {}, "requests": {"tools": {"call": {}}}, "other": 2},
            "experimental": {"e": {}},
            "extensions": {"io.example/ext": {"v": 1}},
            "vendor": {"anything": true},
            "nothing": null
        });
        let caps: ServerCapabilities = serde_json::from_value(sent.clone()).unwrap();
        let tools = caps.tools.as_ref().unwrap();
        assert_eq!(tools.list_changed, Some(true));
        assert_eq!(tools.extra["vendorFlag"], 1);
        let resources = caps.resources.as_ref().unwrap();
        assert_eq!(
            (resources.subscribe, resources.list_changed),
            (Some(false), None)
        );
        assert!(caps.tasks.as_ref().unwrap().supports_request("tools/call"));
        assert_eq!(caps.other["vendor"], json!({"anything": true}));
        // Read from text the same way, and written back as sent (a null member aside).
        let text: ServerCapabilities = serde_json::from_str(&sent.to_string()).unwrap();
        assert_eq!(text, caps);
        let mut back = serde_json::to_value(&caps).unwrap();
        back["resources"]["listChanged"] = Value::Null;
        assert_eq!(back["tools"], sent["tools"]);
        assert_eq!(back["tasks"], sent["tasks"]);
        assert_eq!(back["vendor"], sent["vendor"]);
    }

    #[test]
    fn a_member_of_the_wrong_type_fails_naming_it() {
        for (sent, member) in [
            (json!({"tools": 5}), "tools"),
            (json!({"tools": {"listChanged": "yes"}}), "listChanged"),
            (json!({"tasks": {"requests": []}}), "requests"),
            (json!({"extensions": "none"}), "extensions"),
        ] {
            let error = serde_json::from_value::<ServerCapabilities>(sent).unwrap_err();
            assert!(error.to_string().contains(member), "{error}");
        }
        assert!(serde_json::from_str::<ServerCapabilities>("[]").is_err());
        let none: ServerCapabilities = serde_json::from_str(r#"{"tools": null}"#).unwrap();
        assert_eq!(none.tools, None);
    }
}
