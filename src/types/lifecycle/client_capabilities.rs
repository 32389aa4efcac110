//! The capabilities the client declares: roots, sampling and elicitation, typed, with every
//! member umcp does not model kept as raw JSON.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::capabilities::TasksCapability;

/// What the client offers the server.
///
/// The set is open: servers ignore keys they do not know, `experimental` carries non-standard
/// ones, `extensions` the negotiated extensions, and `other` anything else.
/// [`Options`](crate::Options) declares these from the handlers it is given; build them
/// yourself for an `initialize` of your own
/// ([`InitializeRequestParams`](super::InitializeRequestParams)).
///
/// ```
/// use serde_json::json;
/// use umcp::types::{
///     ClientCapabilities, ElicitationCapability, RootsCapability, SamplingCapability,
///     TasksCapability,
/// };
///
/// let caps = ClientCapabilities::default()
///     .with_roots(RootsCapability::default().with_list_changed())
///     .with_sampling(SamplingCapability::default().with_context().with_tools())
///     .with_elicitation(ElicitationCapability::default().with_url())
///     .with_tasks(TasksCapability::default())
///     .with_extension("io.modelcontextprotocol/ui", json!({}))
///     .with_experimental("x-trace", json!({"level": 1}));
/// assert_eq!(serde_json::to_value(&caps)?, json!({
///     "roots": {"listChanged": true},
///     "sampling": {"context": {}, "tools": {}},
///     "elicitation": {"url": {}},
///     "tasks": {},
///     "extensions": {"io.modelcontextprotocol/ui": {}},
///     "experimental": {"x-trace": {"level": 1}},
/// }));
/// # Ok::<(), serde_json::Error>(())
/// ```
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

/// The client's `roots` capability.
///
/// See the example on
/// [`Client::notify_roots_list_changed`](crate::Client::notify_roots_list_changed).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RootsCapability {
    /// Whether the client sends `notifications/roots/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Members umcp does not model, as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The client's `sampling` capability.
///
/// See the example on [`Options::with_sampling_handler`](crate::Options::with_sampling_handler).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplingCapability {
    /// Present when the client honours `includeContext` (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<Map<String, Value>>,
    /// Present when the client supports `tools` and `toolChoice` in sampling (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Map<String, Value>>,
    /// Members umcp does not model, as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The client's `elicitation` capability. An empty object means form mode only.
///
/// ```
/// use umcp::types::ElicitationCapability;
///
/// let empty = ElicitationCapability::default(); // `{}`, as 2025-06-18 clients declare it
/// assert!(empty.supports_form() && !empty.supports_url());
/// let url_only = ElicitationCapability::default().with_url();
/// assert!(!url_only.supports_form() && url_only.supports_url());
/// assert!(ElicitationCapability::default().with_form().with_url().supports_form());
/// ```
///
/// [`Options::with_elicitation_handler`](crate::Options::with_elicitation_handler) declares it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationCapability {
    /// Present when the client supports form mode (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub form: Option<Map<String, Value>>,
    /// Present when the client supports URL mode (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<Map<String, Value>>,
    /// Members umcp does not model, as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ClientCapabilities {
    /// Declares `roots`.
    ///
    /// See the example on [`ClientCapabilities`].
    pub fn with_roots(mut self, roots: RootsCapability) -> ClientCapabilities {
        self.roots = Some(roots);
        self
    }

    /// Declares `sampling`.
    ///
    /// See the example on [`ClientCapabilities`].
    pub fn with_sampling(mut self, sampling: SamplingCapability) -> ClientCapabilities {
        self.sampling = Some(sampling);
        self
    }

    /// Declares `elicitation`.
    ///
    /// See the example on [`ClientCapabilities`].
    pub fn with_elicitation(mut self, elicitation: ElicitationCapability) -> ClientCapabilities {
        self.elicitation = Some(elicitation);
        self
    }

    /// Declares extension `id` with its settings (`{}` when it has none).
    ///
    /// See the example on [`ClientCapabilities`].
    pub fn with_extension(mut self, id: impl Into<String>, settings: Value) -> ClientCapabilities {
        self.extensions
            .get_or_insert_with(Map::new)
            .insert(id.into(), settings);
        self
    }

    /// Declares task support.
    ///
    /// See the example on [`ClientCapabilities`].
    pub fn with_tasks(mut self, tasks: TasksCapability) -> ClientCapabilities {
        self.tasks = Some(tasks);
        self
    }

    /// Adds one non-standard capability.
    ///
    /// See the example on [`ClientCapabilities`].
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
    ///
    /// See the example on [`ClientCapabilities`].
    pub fn with_list_changed(mut self) -> RootsCapability {
        self.list_changed = Some(true);
        self
    }
}

impl SamplingCapability {
    /// Declares support for `includeContext`.
    ///
    /// See the example on [`ClientCapabilities`].
    pub fn with_context(mut self) -> SamplingCapability {
        self.context = Some(Map::new());
        self
    }

    /// Declares support for tool use in sampling.
    ///
    /// See the example on [`ClientCapabilities`].
    pub fn with_tools(mut self) -> SamplingCapability {
        self.tools = Some(Map::new());
        self
    }
}

impl ElicitationCapability {
    /// Declares form mode explicitly.
    ///
    /// See the example on [`ElicitationCapability`].
    pub fn with_form(mut self) -> ElicitationCapability {
        self.form = Some(Map::new());
        self
    }

    /// Declares URL mode.
    ///
    /// See the example on [`ElicitationCapability`].
    pub fn with_url(mut self) -> ElicitationCapability {
        self.url = Some(Map::new());
        self
    }

    /// Whether form mode is supported: declared, or implied by an empty capability.
    ///
    /// See the example on [`ElicitationCapability`].
    pub fn supports_form(&self) -> bool {
        self.form.is_some() || self.url.is_none()
    }

    /// Whether URL mode is supported.
    ///
    /// See the example on [`ElicitationCapability`].
    pub fn supports_url(&self) -> bool {
        self.url.is_some()
    }
}
