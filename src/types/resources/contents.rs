//! The contents of a read resource: text, or binary data as base64.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

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

impl ResourceContents {
    /// Text contents for `uri`.
    ///
    /// See the example on [`EmbeddedResource::new`](crate::types::EmbeddedResource::new).
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
    /// See the example on [`EmbeddedResource::new`](crate::types::EmbeddedResource::new).
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
