//! The contents of a read resource: text, or binary data as base64.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The contents of a resource: text, or binary data as base64. Told apart by which of `text`
/// and `blob` is present.
///
/// See the example on [`Client::read_resource`](crate::Client::read_resource).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ResourceContents {
    /// Text contents.
    Text(TextResourceContents),
    /// Binary contents.
    Blob(BlobResourceContents),
}

/// Every member either kind may have, read once: serde's untagged reading would buffer the
/// object and try each kind in turn, with code for each in every program that reads contents.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Members {
    uri: String,
    #[serde(default)]
    mime_type: Option<String>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    blob: Option<String>,
    #[serde(rename = "_meta", default)]
    meta: Option<Map<String, Value>>,
}

impl<'de> Deserialize<'de> for ResourceContents {
    /// Text when `text` is present, else binary when `blob` is; neither is an error.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let Members {
            uri,
            mime_type,
            text,
            blob,
            meta,
        } = Members::deserialize(deserializer)?;
        match (text, blob) {
            (Some(text), _) => Ok(ResourceContents::Text(TextResourceContents {
                uri,
                mime_type,
                text,
                meta,
            })),
            (None, Some(blob)) => Ok(ResourceContents::Blob(BlobResourceContents {
                uri,
                mime_type,
                blob,
                meta,
            })),
            (None, None) => Err(serde::de::Error::custom(
                "resource contents with neither `text` nor `blob`",
            )),
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(value: Value) -> Result<ResourceContents, String> {
        // Both ways a program reads contents: from a value and from the text.
        let text = serde_json::from_str::<ResourceContents>(&value.to_string());
        let from_value = serde_json::from_value::<ResourceContents>(value);
        match (from_value, text) {
            (Ok(a), Ok(b)) => {
                assert_eq!(a, b);
                Ok(a)
            }
            (Err(a), Err(_)) => Err(a.to_string()),
            (a, b) => panic!("the two readings disagree: {a:?} {b:?}"),
        }
    }

    #[test]
    fn text_or_blob_is_told_by_its_member_and_the_rest_is_kept() {
        let meta = json!({"k": 1});
        let text = read(
            json!({"uri": "a://x", "mimeType": "text/plain", "text": "hi",
                               "_meta": meta, "extra": true}),
        )
        .unwrap();
        assert_eq!(text.as_text(), Some("hi"));
        assert_eq!(text.mime_type(), Some("text/plain"));
        let ResourceContents::Text(inner) = &text else {
            panic!("{text:?}")
        };
        assert_eq!(inner.meta, meta.as_object().cloned());
        let blob = read(json!({"uri": "a://y", "blob": "aGk=", "text": null})).unwrap();
        assert_eq!((blob.uri(), blob.as_blob()), ("a://y", Some("aGk=")));
        // Text first when a server sends both, as before.
        let both = read(json!({"uri": "a://z", "text": "t", "blob": "b"})).unwrap();
        assert_eq!(both.as_text(), Some("t"));
        // Written as read.
        let again = serde_json::to_value(&text).unwrap();
        assert_eq!(again["text"], "hi");
        assert!(again.get("blob").is_none());
    }

    #[test]
    fn neither_member_or_no_uri_is_an_error() {
        let err = read(json!({"uri": "a://x"})).unwrap_err();
        assert!(err.contains("neither `text` nor `blob`"), "{err}");
        assert!(read(json!({"text": "hi"})).is_err());
        assert!(read(json!("text")).is_err());
    }
}
