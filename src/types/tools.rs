//! Tools: listing them and calling them.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::common::Icon;
use super::content::ContentBlock;
use super::schema::Schema;

#[cfg(feature = "output-validation")]
mod complexity;
#[cfg(feature = "output-validation")]
mod output;

/// A tool the server offers, as listed by `tools/list`.
///
/// See the example on [`Client::list_tools`](crate::Client::list_tools).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    /// The name to call it by.
    pub name: String,
    /// A display name (since 2025-06-18).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does, as a hint for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The JSON Schema of the arguments, an object schema, kept as the server wrote it (see
    /// [`Schema`]). Read as `{"type":"object"}` when a server omits it.
    #[serde(default = "Schema::object")]
    pub input_schema: Schema,
    /// The JSON Schema of `structuredContent` in results (since 2025-06-18), kept as the
    /// server wrote it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Schema>,
    /// Behaviour hints (since 2025-03-26). Untrusted unless the server is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// Icons for a user interface (since 2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Execution properties such as `taskSupport` (2025-11-25), kept as raw JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution: Option<Value>,
    /// Protocol-level metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// Hints about a tool's behaviour. All are hints, never guarantees.
///
/// See the example on [`Client::list_tools`](crate::Client::list_tools).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// A display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not change its environment (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may destroy data (default true; meaningful only when not read-only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Repeating a call with the same arguments has no further effect (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// The tool reaches an open world of external entities (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

/// One page of `tools/list`.
///
/// See the example on [`Client::list_tools`](crate::Client::list_tools).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListToolsResult {
    /// The tools on this page.
    #[serde(default, deserialize_with = "super::lenient::null_as_default")]
    pub tools: Vec<Tool>,
    /// The cursor for the next page; `None` means this was the last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// How long, in milliseconds, the result may be cached (2026-07-28); `None` or 0 means
    /// stale at once. Any non-negative number reads (a fraction rounded down, anything past
    /// `u64::MAX` as `u64::MAX`); a negative one or another type reads as `None` and is
    /// logged, never failing the result.
    #[serde(
        default,
        rename = "ttlMs",
        deserialize_with = "super::lenient::ttl_ms",
        skip_serializing_if = "Option::is_none"
    )]
    pub ttl_ms: Option<u64>,
    /// Who may share a cached copy (2026-07-28): `public` or `private`. Kept as a string so a
    /// new scope name never makes the result unreadable; another type reads as `None` and is
    /// logged.
    #[serde(
        rename = "cacheScope",
        default,
        deserialize_with = "super::lenient::opt_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub cache_scope: Option<String>,
    /// Protocol-level metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// Parameters of `tools/call`.
///
/// See the example on [`types::Method`](crate::types::Method).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolRequestParams {
    /// The tool's name.
    pub name: String,
    /// The arguments, matching the tool's input schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Map<String, Value>>,
    /// Task augmentation (2025-11-25), kept as raw JSON; only for servers that declared it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<Value>,
    /// Protocol-level metadata, e.g. `progressToken`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// The result of `tools/call`.
///
/// A failure inside the tool comes back here with `is_error: Some(true)` and a description in
/// `content`; only protocol-level failures (unknown tool, bad request) are JSON-RPC errors.
///
/// See the example in the [`types`](crate::types) module.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    /// The unstructured result.
    #[serde(default, deserialize_with = "super::lenient::null_as_default")]
    pub content: Vec<ContentBlock>,
    /// The structured result (since 2025-06-18), matching the tool's output schema if it has
    /// one. An object up to 2025-11-25; kept as any JSON value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Whether the tool failed; absent means it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Protocol-level metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl Tool {
    /// A tool with a name and an input schema (a [`Value`] or a [`Schema`]).
    ///
    /// ```
    /// use serde_json::json;
    /// use umcp::types::{Tool, ToolAnnotations};
    ///
    /// let read_only = ToolAnnotations { read_only_hint: Some(true), ..Default::default() };
    /// let tool = Tool::new("read_file", json!({"type": "object", "required": ["path"]}))
    ///     .with_title("Read a file")
    ///     .with_description("Reads a UTF-8 file under the allowed roots.")
    ///     .with_output_schema(json!({"type": "object"}))
    ///     .with_annotations(read_only);
    /// assert_eq!(tool.display_name(), "Read a file");
    /// assert_eq!(serde_json::to_value(&tool)?["inputSchema"]["required"][0], "path");
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn new(name: impl Into<String>, input_schema: impl Into<Schema>) -> Tool {
        Tool {
            name: name.into(),
            title: None,
            description: None,
            input_schema: input_schema.into(),
            output_schema: None,
            annotations: None,
            icons: None,
            execution: None,
            meta: None,
        }
    }

    /// Sets the description.
    ///
    /// See the example on [`Tool::new`].
    pub fn with_description(mut self, description: impl Into<String>) -> Tool {
        self.description = Some(description.into());
        self
    }

    /// Sets the display title.
    ///
    /// See the example on [`Tool::new`].
    pub fn with_title(mut self, title: impl Into<String>) -> Tool {
        self.title = Some(title.into());
        self
    }

    /// Sets the output schema (a [`Value`] or a [`Schema`]).
    ///
    /// See the example on [`Tool::new`].
    pub fn with_output_schema(mut self, schema: impl Into<Schema>) -> Tool {
        self.output_schema = Some(schema.into());
        self
    }

    /// Sets the annotations.
    ///
    /// See the example on [`Tool::new`].
    pub fn with_annotations(mut self, annotations: ToolAnnotations) -> Tool {
        self.annotations = Some(annotations);
        self
    }

    /// The name to show a person: `title`, then `annotations.title`, then `name`.
    ///
    /// See the example on [`Tool::new`].
    pub fn display_name(&self) -> &str {
        self.title
            .as_deref()
            .or_else(|| self.annotations.as_ref()?.title.as_deref())
            .unwrap_or(&self.name)
    }
}

impl CallToolRequestParams {
    /// Parameters calling `name` with no arguments.
    ///
    /// See the example on [`types::Method`](crate::types::Method).
    pub fn new(name: impl Into<String>) -> CallToolRequestParams {
        CallToolRequestParams {
            name: name.into(),
            arguments: None,
            task: None,
            meta: None,
        }
    }

    /// Sets the arguments.
    ///
    /// See the example on [`CallToolRequestParams::with_argument`], which adds them one by one.
    pub fn with_arguments(mut self, arguments: Map<String, Value>) -> CallToolRequestParams {
        self.arguments = Some(arguments);
        self
    }

    /// Adds one argument.
    ///
    /// ```
    /// use serde_json::{json, Map};
    /// use umcp::types::CallToolRequestParams;
    ///
    /// let meta = Map::from_iter([("progressToken".to_string(), json!("copy-1"))]);
    /// let params = CallToolRequestParams::new("copy")
    ///     .with_argument("from", json!("a.txt"))
    ///     .with_argument("to", json!("b.txt"))
    ///     .with_meta(meta);
    /// assert_eq!(serde_json::to_value(&params)?, json!({
    ///     "name": "copy",
    ///     "arguments": {"from": "a.txt", "to": "b.txt"},
    ///     "_meta": {"progressToken": "copy-1"},
    /// }));
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn with_argument(mut self, name: impl Into<String>, value: Value) -> CallToolRequestParams {
        self.arguments
            .get_or_insert_with(Map::new)
            .insert(name.into(), value);
        self
    }

    /// Sets `_meta`.
    ///
    /// See the example on [`CallToolRequestParams::with_argument`].
    pub fn with_meta(mut self, meta: Map<String, Value>) -> CallToolRequestParams {
        self.meta = Some(meta);
        self
    }
}

impl CallToolResult {
    /// A successful result with the given content.
    ///
    /// ```
    /// use serde_json::json;
    /// use umcp::types::{CallToolResult, ContentBlock};
    ///
    /// let found = CallToolResult::new(vec![ContentBlock::text("3 files")])
    ///     .with_structured_content(json!({"count": 3}));
    /// assert!(!found.is_error());
    /// let failed = CallToolResult::error("no such directory");
    /// assert!(failed.is_error());
    /// assert_eq!(failed.text(), "no such directory");
    /// ```
    pub fn new(content: Vec<ContentBlock>) -> CallToolResult {
        CallToolResult {
            content,
            ..CallToolResult::default()
        }
    }

    /// A failed result carrying one text block that explains the failure.
    ///
    /// See the example on [`CallToolResult::new`].
    pub fn error(message: impl Into<String>) -> CallToolResult {
        CallToolResult {
            content: vec![ContentBlock::text(message)],
            is_error: Some(true),
            ..CallToolResult::default()
        }
    }

    /// Sets the structured result.
    ///
    /// See the example on [`CallToolResult::new`].
    pub fn with_structured_content(mut self, value: Value) -> CallToolResult {
        self.structured_content = Some(value);
        self
    }

    /// The text of every text block, joined with newlines; other blocks are skipped.
    ///
    /// See the example in the [`types`](crate::types) module.
    pub fn text(&self) -> String {
        let texts: Vec<&str> = self
            .content
            .iter()
            .filter_map(ContentBlock::as_text)
            .collect();
        texts.join("\n")
    }

    /// Whether the tool reported a failure.
    ///
    /// See the example in the [`types`](crate::types) module.
    pub fn is_error(&self) -> bool {
        self.is_error == Some(true)
    }

    /// The structured result read as a `T` of the caller's.
    ///
    /// ```
    /// use serde::Deserialize;
    /// use serde_json::json;
    /// use umcp::types::CallToolResult;
    ///
    /// #[derive(Debug, Deserialize)]
    /// struct Sum {
    ///     sum: f64,
    /// }
    ///
    /// let result = CallToolResult::new(Vec::new()).with_structured_content(json!({"sum": 5}));
    /// assert_eq!(result.structured::<Sum>()?.sum, 5.0);
    /// let failed = CallToolResult::error("division by zero");
    /// assert!(failed.structured::<Sum>().unwrap_err().to_string().contains("division by zero"));
    /// # Ok::<(), umcp::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Protocol`](crate::Error::Protocol) when the tool reported a failure (the
    /// message carries its text), when there is no structured result, or when it does not
    /// fit `T`.
    pub fn structured<T: serde::de::DeserializeOwned>(&self) -> crate::Result<T> {
        if self.is_error() {
            return Err(crate::Error::Protocol(format!(
                "the tool reported a failure: {}",
                self.text()
            )));
        }
        let value = self.structured_content.as_ref().ok_or_else(|| {
            crate::Error::Protocol("the tool's result has no structured content".into())
        })?;
        crate::jsonrpc::decode_value(value).map_err(|e| {
            crate::Error::Protocol(format!("the tool's structured content does not fit: {e}"))
        })
    }
}

#[cfg(test)]
mod tests;
