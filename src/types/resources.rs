//! Resources: listing, templates, reading and subscriptions.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::common::{Annotations, Icon};

mod contents;
mod directory;
mod subscribe;

pub use contents::{BlobResourceContents, ResourceContents, TextResourceContents};
pub use directory::{
    ReadResourceDirectoryRequestParams, ReadResourceDirectoryResult, DIRECTORY_MIME_TYPE,
};
pub use subscribe::{
    ResourceUpdatedNotificationParams, SubscribeRequestParams, UnsubscribeRequestParams,
};

/// A resource the server can read, as listed by `resources/list` or linked from content.
///
/// See the example on [`Client::list_resources`](crate::Client::list_resources).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Resource {
    /// The resource's URI.
    pub uri: String,
    /// The programmatic name. Required by the spec; read as empty when omitted.
    #[serde(default)]
    pub name: String,
    /// A display name (since 2025-06-18).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the resource is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The MIME type, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Hints for the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// The raw size in bytes, before any base64 encoding, if known.
    #[serde(
        default,
        deserialize_with = "super::lenient::opt_u64",
        skip_serializing_if = "Option::is_none"
    )]
    pub size: Option<u64>,
    /// Icons for a user interface (since 2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Protocol-level metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// A family of resources described by an RFC 6570 URI template.
///
/// See the example on [`Client::list_resource_templates`](crate::Client::list_resource_templates).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplate {
    /// The URI template, e.g. `file:///{path}`.
    pub uri_template: String,
    /// The programmatic name.
    #[serde(default)]
    pub name: String,
    /// A display name (since 2025-06-18).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the template is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The MIME type shared by every matching resource, if there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Hints for the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Icons for a user interface (since 2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Protocol-level metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// One page of `resources/list`.
///
/// See the example on [`Client::list_resources`](crate::Client::list_resources).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListResourcesResult {
    /// The resources on this page.
    #[serde(default, deserialize_with = "super::lenient::null_as_default")]
    pub resources: Vec<Resource>,
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

/// One page of `resources/templates/list`.
///
/// See the example on [`Client::list_resource_templates`](crate::Client::list_resource_templates).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListResourceTemplatesResult {
    /// The templates on this page.
    #[serde(default, deserialize_with = "super::lenient::null_as_default")]
    pub resource_templates: Vec<ResourceTemplate>,
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

/// Parameters of `resources/read`.
///
/// See the example on [`Client::read_resource`](crate::Client::read_resource).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReadResourceRequestParams {
    /// The URI to read.
    pub uri: String,
    /// Protocol-level metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// The answer to `resources/read`: one or more contents (a directory may give several).
///
/// See the example on [`Client::read_resource`](crate::Client::read_resource).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReadResourceResult {
    /// The contents read.
    #[serde(default, deserialize_with = "super::lenient::null_as_default")]
    pub contents: Vec<ResourceContents>,
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

impl Resource {
    /// A resource with a URI and a name.
    ///
    /// ```
    /// use umcp::types::Resource;
    ///
    /// let notes = Resource::new("file:///notes.md", "notes")
    ///     .with_description("Meeting notes")
    ///     .with_mime_type("text/markdown");
    /// assert_eq!(serde_json::to_value(&notes)?["mimeType"], "text/markdown");
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Resource {
        Resource {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            annotations: None,
            size: None,
            icons: None,
            meta: None,
        }
    }

    /// Sets the description.
    ///
    /// See the example on [`Resource::new`].
    pub fn with_description(mut self, description: impl Into<String>) -> Resource {
        self.description = Some(description.into());
        self
    }

    /// Sets the MIME type.
    ///
    /// See the example on [`Resource::new`].
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Resource {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// The name to show a person: the title when present, else the name.
    ///
    /// See the example on [`Client::list_resources`](crate::Client::list_resources).
    pub fn display_name(&self) -> &str {
        self.title.as_deref().unwrap_or(&self.name)
    }
}

impl ResourceTemplate {
    /// A template with a URI template and a name.
    ///
    /// ```
    /// let logs = umcp::types::ResourceTemplate::new("file:///logs/{date}.txt", "daily log");
    /// assert_eq!(serde_json::to_value(&logs)?["uriTemplate"], "file:///logs/{date}.txt");
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn new(uri_template: impl Into<String>, name: impl Into<String>) -> ResourceTemplate {
        ResourceTemplate {
            uri_template: uri_template.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            annotations: None,
            icons: None,
            meta: None,
        }
    }
}

impl ReadResourceRequestParams {
    /// Parameters reading `uri`.
    ///
    /// ```
    /// use serde_json::json;
    /// use umcp::types::{
    ///     Method, ReadResource, ReadResourceRequestParams, ReadResourceResult, ResourceContents,
    /// };
    ///
    /// // What `Client::read_resource` sends:
    /// let params: <ReadResource as Method>::Params = ReadResourceRequestParams::new("file:///a");
    /// assert_eq!(serde_json::to_value(&params)?, json!({"uri": "file:///a"}));
    /// // And what a server, or a stand-in for one in a test, answers:
    /// let result = ReadResourceResult::new(vec![ResourceContents::text("file:///a", "hi")]);
    /// assert_eq!(result.contents[0].as_text(), Some("hi"));
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn new(uri: impl Into<String>) -> ReadResourceRequestParams {
        ReadResourceRequestParams {
            uri: uri.into(),
            meta: None,
        }
    }
}

impl ReadResourceResult {
    /// A result holding `contents`.
    ///
    /// See the example on [`ReadResourceRequestParams::new`].
    pub fn new(contents: Vec<ResourceContents>) -> ReadResourceResult {
        ReadResourceResult {
            contents,
            ttl_ms: None,
            cache_scope: None,
            meta: None,
        }
    }
}

#[cfg(test)]
mod tests;
