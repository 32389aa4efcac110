//! Content blocks carried by tool results, prompt messages and sampling messages.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::common::Annotations;
use super::resources::{Resource, ResourceContents};

/// One piece of content, tagged on the wire by its `type` member.
///
/// A block whose `type` this crate does not know (a newer spec's kind, or a sampling
/// `tool_use`/`tool_result`) is kept whole as [`ContentBlock::Unknown`] and written back
/// unchanged. A block of a known type whose members do not fit that type is kept the same way,
/// so one malformed block never makes a whole result unreadable.
///
/// See the example on [`ContentBlock::text`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ContentBlock {
    /// `"type": "text"`.
    Text(TextContent),
    /// `"type": "image"`: base64 image data.
    Image(ImageContent),
    /// `"type": "audio"`: base64 audio data (since 2025-03-26).
    Audio(AudioContent),
    /// `"type": "resource_link"`: a pointer to a resource (since 2025-06-18).
    ResourceLink(Resource),
    /// `"type": "resource"`: a resource's contents embedded in place.
    Resource(EmbeddedResource),
    /// Any other block, as received.
    Unknown(Value),
}

/// Text for or from a model.
///
/// See the example on [`ContentBlock::text`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextContent {
    /// The text.
    pub text: String,
    /// Hints for the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Protocol-level metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// An image for or from a model.
///
/// See the example on [`ContentBlock::text`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageContent {
    /// The base64-encoded image.
    pub data: String,
    /// The image's MIME type, e.g. `image/png`.
    pub mime_type: String,
    /// Hints for the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Protocol-level metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// Audio for or from a model (since 2025-03-26).
///
/// See the example on [`ContentBlock::text`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AudioContent {
    /// The base64-encoded audio.
    pub data: String,
    /// The audio's MIME type, e.g. `audio/wav`.
    pub mime_type: String,
    /// Hints for the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Protocol-level metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// A resource's contents embedded in a tool result or prompt.
///
/// See the example in the [`types`](crate::types) module.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EmbeddedResource {
    /// The contents, text or blob.
    pub resource: ResourceContents,
    /// Hints for the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Protocol-level metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl ContentBlock {
    /// A text block.
    ///
    /// ```
    /// use serde_json::json;
    /// use umcp::types::ContentBlock;
    ///
    /// let text = ContentBlock::text("hello");
    /// assert_eq!((text.kind(), text.as_text()), ("text", Some("hello")));
    /// let image = ContentBlock::image("iVBORw0KGgo=", "image/png");
    /// assert_eq!(image.kind(), "image");
    /// assert!(image.as_text().is_none() && image.annotations().is_none());
    /// let audio = ContentBlock::audio("UklGRg==", "audio/wav");
    /// assert_eq!(audio.kind(), "audio");
    /// // A kind this crate does not know is kept whole:
    /// let hologram = ContentBlock::from_value(json!({ "type": "hologram", "data": "…" }));
    /// assert_eq!(hologram.kind(), "hologram");
    /// ```
    pub fn text(text: impl Into<String>) -> ContentBlock {
        ContentBlock::Text(TextContent::new(text))
    }

    /// An image block from base64 data and a MIME type.
    ///
    /// See the example on [`types::ContentBlock::text`](crate::types::ContentBlock::text).
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> ContentBlock {
        ContentBlock::Image(ImageContent {
            data: data.into(),
            mime_type: mime_type.into(),
            annotations: None,
            meta: None,
        })
    }

    /// An audio block from base64 data and a MIME type.
    ///
    /// See the example on [`types::ContentBlock::text`](crate::types::ContentBlock::text).
    pub fn audio(data: impl Into<String>, mime_type: impl Into<String>) -> ContentBlock {
        ContentBlock::Audio(AudioContent {
            data: data.into(),
            mime_type: mime_type.into(),
            annotations: None,
            meta: None,
        })
    }

    /// The text of a text block.
    ///
    /// See the example on [`types::ContentBlock::text`](crate::types::ContentBlock::text).
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentBlock::Text(t) => Some(&t.text),
            _ => None,
        }
    }

    /// The wire `type`: `text`, `image`, …; for an unknown block, its own `type` member or `""`.
    ///
    /// See the example on [`types::ContentBlock::text`](crate::types::ContentBlock::text).
    pub fn kind(&self) -> &str {
        match self {
            ContentBlock::Text(_) => "text",
            ContentBlock::Image(_) => "image",
            ContentBlock::Audio(_) => "audio",
            ContentBlock::ResourceLink(_) => "resource_link",
            ContentBlock::Resource(_) => "resource",
            ContentBlock::Unknown(v) => v.get("type").and_then(Value::as_str).unwrap_or(""),
        }
    }

    /// The annotations of a known block.
    ///
    /// See the example on [`types::ContentBlock::text`](crate::types::ContentBlock::text).
    pub fn annotations(&self) -> Option<&Annotations> {
        match self {
            ContentBlock::Text(b) => b.annotations.as_ref(),
            ContentBlock::Image(b) => b.annotations.as_ref(),
            ContentBlock::Audio(b) => b.annotations.as_ref(),
            ContentBlock::ResourceLink(b) => b.annotations.as_ref(),
            ContentBlock::Resource(b) => b.annotations.as_ref(),
            ContentBlock::Unknown(_) => None,
        }
    }

    /// Reads a block from JSON; never fails (see the type's docs).
    ///
    /// See the example on [`types::ContentBlock::text`](crate::types::ContentBlock::text).
    pub fn from_value(value: Value) -> ContentBlock {
        let decoded = match value.get("type").and_then(Value::as_str) {
            Some("text") => TextContent::deserialize(&value).map(ContentBlock::Text),
            Some("image") => ImageContent::deserialize(&value).map(ContentBlock::Image),
            Some("audio") => AudioContent::deserialize(&value).map(ContentBlock::Audio),
            Some("resource_link") => Resource::deserialize(&value).map(ContentBlock::ResourceLink),
            Some("resource") => EmbeddedResource::deserialize(&value).map(ContentBlock::Resource),
            _ => return ContentBlock::Unknown(value),
        };
        match decoded {
            Ok(block) => block,
            Err(_) => ContentBlock::Unknown(value),
        }
    }
}

impl From<TextContent> for ContentBlock {
    fn from(t: TextContent) -> ContentBlock {
        ContentBlock::Text(t)
    }
}

impl From<EmbeddedResource> for ContentBlock {
    fn from(r: EmbeddedResource) -> ContentBlock {
        ContentBlock::Resource(r)
    }
}

impl TextContent {
    /// Text with no annotations.
    ///
    /// [`ContentBlock::text`] makes a block of it in one step; see the example there.
    pub fn new(text: impl Into<String>) -> TextContent {
        TextContent {
            text: text.into(),
            annotations: None,
            meta: None,
        }
    }
}

impl EmbeddedResource {
    /// Embeds the given contents.
    ///
    /// ```
    /// use umcp::types::{ContentBlock, EmbeddedResource, ResourceContents};
    ///
    /// let report = ResourceContents::text("file:///tmp/report.md", "# Done");
    /// let block = ContentBlock::from(EmbeddedResource::new(report));
    /// let wire = serde_json::to_value(&block)?;
    /// assert_eq!(wire["type"], "resource");
    /// assert_eq!(wire["resource"]["text"], "# Done");
    /// // Binary contents travel base64-encoded.
    /// let image = ResourceContents::blob("file:///tmp/dot.png", "iVBORw0KGgo=");
    /// assert_eq!(image.uri(), "file:///tmp/dot.png");
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn new(resource: ResourceContents) -> EmbeddedResource {
        EmbeddedResource {
            resource,
            annotations: None,
            meta: None,
        }
    }
}

/// The known blocks, borrowed, so serialising adds the `type` tag without cloning.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum TaggedRef<'a> {
    Text(&'a TextContent),
    Image(&'a ImageContent),
    Audio(&'a AudioContent),
    ResourceLink(&'a Resource),
    Resource(&'a EmbeddedResource),
}

impl Serialize for ContentBlock {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ContentBlock::Text(b) => TaggedRef::Text(b).serialize(serializer),
            ContentBlock::Image(b) => TaggedRef::Image(b).serialize(serializer),
            ContentBlock::Audio(b) => TaggedRef::Audio(b).serialize(serializer),
            ContentBlock::ResourceLink(b) => TaggedRef::ResourceLink(b).serialize(serializer),
            ContentBlock::Resource(b) => TaggedRef::Resource(b).serialize(serializer),
            ContentBlock::Unknown(v) => v.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for ContentBlock {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<ContentBlock, D::Error> {
        Value::deserialize(deserializer).map(ContentBlock::from_value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::common::Role;
    use serde_json::json;

    fn round_trip(v: Value) -> ContentBlock {
        let block: ContentBlock = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(serde_json::to_value(&block).unwrap(), v, "{block:?}");
        block
    }

    #[test]
    fn known_blocks_round_trip() {
        let t = round_trip(json!({"type": "text", "text": "hi",
            "annotations": {"audience": ["user"], "priority": 1.0}, "_meta": {"a": 1}}));
        assert_eq!(t.as_text(), Some("hi"));
        assert_eq!(t.annotations().unwrap().audience, Some(vec![Role::User]));
        let i =
            round_trip(json!({"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}));
        assert!(matches!(&i, ContentBlock::Image(img) if img.mime_type == "image/png"));
        assert_eq!(i.as_text(), None);
        let a = round_trip(json!({"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"}));
        assert_eq!(a.kind(), "audio");
        let l = round_trip(
            json!({"type": "resource_link", "uri": "file:///a.txt", "name": "a.txt",
            "mimeType": "text/plain", "size": 12}),
        );
        assert!(matches!(&l, ContentBlock::ResourceLink(r) if r.size == Some(12)));
        let e = round_trip(json!({"type": "resource",
            "resource": {"uri": "file:///b", "mimeType": "text/plain", "text": "body"}}));
        match &e {
            ContentBlock::Resource(r) => assert_eq!(r.resource.as_text(), Some("body")),
            other => panic!("{other:?}"),
        }
        let blob = round_trip(
            json!({"type": "resource", "resource": {"uri": "file:///c", "blob": "AAE="}}),
        );
        assert_eq!(blob.kind(), "resource");
    }

    #[test]
    fn builders_serialise_with_their_tag() {
        assert_eq!(
            serde_json::to_value(ContentBlock::text("x")).unwrap(),
            json!({"type": "text", "text": "x"})
        );
        assert_eq!(
            serde_json::to_value(ContentBlock::image("AA==", "image/gif")).unwrap(),
            json!({"type": "image", "data": "AA==", "mimeType": "image/gif"})
        );
        assert_eq!(
            serde_json::to_value(ContentBlock::audio("AA==", "audio/mpeg")).unwrap()["type"],
            "audio"
        );
    }

    #[test]
    fn unknown_types_are_preserved_unchanged() {
        let tool_use = json!({"type": "tool_use", "id": "t1", "name": "f", "input": {"x": [1, 2]}});
        let b = round_trip(tool_use);
        assert!(matches!(b, ContentBlock::Unknown(_)));
        assert_eq!(b.kind(), "tool_use");
        assert_eq!(b.annotations(), None);
        let no_type = round_trip(json!({"text": "untyped"}));
        assert_eq!(no_type.kind(), "");
        let not_object = round_trip(json!("just a string"));
        assert!(matches!(
            not_object,
            ContentBlock::Unknown(Value::String(_))
        ));
    }

    #[test]
    fn malformed_known_blocks_are_kept_as_unknown() {
        let b = round_trip(json!({"type": "text", "text": 42}));
        assert_eq!(b.kind(), "text");
        assert_eq!(b.as_text(), None);
        let b = round_trip(json!({"type": "image", "data": "AA=="}));
        assert!(matches!(b, ContentBlock::Unknown(_)));
    }

    #[test]
    fn reads_2024_11_05_blocks() {
        // The first spec had no audio, links or lastModified; these shapes must still read.
        let v = json!([
            {"type": "text", "text": "a", "annotations": {"audience": ["assistant"], "priority": 0.2}},
            {"type": "resource", "resource": {"uri": "test://x", "text": "t"}}
        ]);
        let blocks: Vec<ContentBlock> = serde_json::from_value(v).unwrap();
        assert_eq!(blocks[0].annotations().unwrap().priority, Some(0.2));
        assert!(matches!(&blocks[1], ContentBlock::Resource(_)));
        let embedded = EmbeddedResource::new(blocks_resource(&blocks[1]));
        assert_eq!(ContentBlock::from(embedded), blocks[1]);
    }

    fn blocks_resource(b: &ContentBlock) -> ResourceContents {
        match b {
            ContentBlock::Resource(r) => r.resource.clone(),
            other => panic!("{other:?}"),
        }
    }
}
