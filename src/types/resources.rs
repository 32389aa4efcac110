//! Resources: listing, templates, reading and subscriptions.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::common::{Annotations, Icon};

mod subscribe;

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
    #[serde(default, skip_serializing_if = "Option::is_none")]
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
    #[serde(default)]
    pub resources: Vec<Resource>,
    /// The cursor for the next page; `None` means this was the last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
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
    #[serde(default)]
    pub resource_templates: Vec<ResourceTemplate>,
    /// The cursor for the next page; `None` means this was the last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
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
    #[serde(default)]
    pub contents: Vec<ResourceContents>,
    /// Protocol-level metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// The contents of a resource: text, or binary data as base64. Told apart by which of `text`
/// and `blob` is present.
///
/// See the example on [`Client::read_resource`](crate::Client::read_resource).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ResourceContents {
    /// Text contents.
    Text(TextResourceContents),
    /// Binary contents.
    Blob(BlobResourceContents),
}

/// A resource's contents as text.
///
/// See the example on [`Client::read_resource`](crate::Client::read_resource).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextResourceContents {
    /// The URI these contents belong to.
    pub uri: String,
    /// The MIME type, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The text.
    pub text: String,
    /// Protocol-level metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// A resource's contents as base64-encoded binary data.
///
/// See the example on [`Client::read_resource`](crate::Client::read_resource).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BlobResourceContents {
    /// The URI these contents belong to.
    pub uri: String,
    /// The MIME type, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The base64-encoded data.
    pub blob: String,
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
            meta: None,
        }
    }
}

impl ResourceContents {
    /// Text contents for `uri`.
    ///
    /// See the example on [`EmbeddedResource::new`](super::EmbeddedResource::new).
    pub fn text(uri: impl Into<String>, text: impl Into<String>) -> ResourceContents {
        ResourceContents::Text(TextResourceContents {
            uri: uri.into(),
            mime_type: None,
            text: text.into(),
            meta: None,
        })
    }

    /// Binary contents for `uri`, already base64-encoded.
    ///
    /// See the example on [`EmbeddedResource::new`](super::EmbeddedResource::new).
    pub fn blob(uri: impl Into<String>, blob: impl Into<String>) -> ResourceContents {
        ResourceContents::Blob(BlobResourceContents {
            uri: uri.into(),
            mime_type: None,
            blob: blob.into(),
            meta: None,
        })
    }

    /// The URI these contents belong to.
    ///
    /// See the example on [`Client::read_resource`](crate::Client::read_resource).
    pub fn uri(&self) -> &str {
        match self {
            ResourceContents::Text(t) => &t.uri,
            ResourceContents::Blob(b) => &b.uri,
        }
    }

    /// The MIME type, if known.
    ///
    /// See the example on [`Client::read_resource`](crate::Client::read_resource).
    pub fn mime_type(&self) -> Option<&str> {
        match self {
            ResourceContents::Text(t) => t.mime_type.as_deref(),
            ResourceContents::Blob(b) => b.mime_type.as_deref(),
        }
    }

    /// The text, for text contents.
    ///
    /// See the example on [`Client::read_resource`](crate::Client::read_resource).
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ResourceContents::Text(t) => Some(&t.text),
            ResourceContents::Blob(_) => None,
        }
    }

    /// The base64 data, for binary contents.
    ///
    /// See the example on [`Client::read_resource`](crate::Client::read_resource).
    pub fn as_blob(&self) -> Option<&str> {
        match self {
            ResourceContents::Text(_) => None,
            ResourceContents::Blob(b) => Some(&b.blob),
        }
    }
}

#[cfg(test)]
mod tests;
