//! Content blocks carried by tool results, prompt messages and sampling messages.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::common::Annotations;
use super::raw::{text_or_value, TextOrValue};
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
        // Through its text, so that each block type has a single decoder (see `from_text`).
        ContentBlock::known(&value.to_string()).unwrap_or(ContentBlock::Unknown(value))
    }

    /// Reads a block from its JSON text; never fails.
    pub(super) fn from_text(text: &str) -> ContentBlock {
        if let Some(block) = ContentBlock::known(text) {
            return block;
        }
        // Text holding a lone surrogate is read with U+FFFD in its place.
        let mended = crate::jsonrpc::surrogates::mend(text);
        let text = mended.as_deref().unwrap_or(text);
        ContentBlock::known(text).unwrap_or_else(|| {
            // The text is serde_json's own reading of a value, so it parses.
            ContentBlock::Unknown(serde_json::from_str(text).unwrap_or(Value::Null))
        })
    }

    /// The block `text` holds, if it is of a known type and fits it. Decoded straight from
    /// the text: no intermediate [`Value`] to build and copy out of. The members of the text,
    /// image, audio and embedded blocks are taken from one reading of the block, each decoded
    /// only when its block has it ([`Members`]): one decoder for the four, where each block's
    /// own derived one cost as much again.
    fn known(text: &str) -> Option<ContentBlock> {
        let members = serde_json::from_str::<Members<'_>>(text).ok()?;
        let block = match members.kind.as_deref()? {
            "text" => ContentBlock::Text(TextContent {
                text: members.read(members.text).ok()??,
                annotations: members.read(members.annotations).ok()?,
                meta: members.read(members.meta).ok()?,
            }),
            "image" => ContentBlock::Image(ImageContent {
                data: members.read(members.data).ok()??,
                mime_type: members.read(members.mime_type).ok()??,
                annotations: members.read(members.annotations).ok()?,
                meta: members.read(members.meta).ok()?,
            }),
            "audio" => ContentBlock::Audio(AudioContent {
                data: members.read(members.data).ok()??,
                mime_type: members.read(members.mime_type).ok()??,
                annotations: members.read(members.annotations).ok()?,
                meta: members.read(members.meta).ok()?,
            }),
            "resource" => ContentBlock::Resource(EmbeddedResource {
                resource: members.read(members.resource).ok()??,
                annotations: members.read(members.annotations).ok()?,
                meta: members.read(members.meta).ok()?,
            }),
            "resource_link" => ContentBlock::ResourceLink(serde_json::from_str(text).ok()?),
            _ => return None,
        };
        Some(block)
    }
}

/// The members of a content block as written, each read only by the block that has it. A
/// `null` optional member counts as absent, as in the blocks' own decoding.
#[derive(Deserialize)]
struct Members<'a> {
    /// The tag; one written with escapes is read into an owned string.
    #[serde(rename = "type", borrow)]
    kind: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    text: Option<&'a serde_json::value::RawValue>,
    #[serde(borrow)]
    data: Option<&'a serde_json::value::RawValue>,
    #[serde(rename = "mimeType", borrow)]
    mime_type: Option<&'a serde_json::value::RawValue>,
    #[serde(borrow)]
    resource: Option<&'a serde_json::value::RawValue>,
    #[serde(borrow)]
    annotations: Option<&'a serde_json::value::RawValue>,
    #[serde(rename = "_meta", borrow)]
    meta: Option<&'a serde_json::value::RawValue>,
}

impl Members<'_> {
    /// `member` decoded: `Ok(None)` when absent (or `null`), `Err` when it does not fit.
    fn read<T: serde::de::DeserializeOwned>(
        &self,
        member: Option<&serde_json::value::RawValue>,
    ) -> Result<Option<T>, serde_json::Error> {
        match member.filter(|raw| raw.get() != "null") {
            Some(member) => serde_json::from_str(member.get()).map(Some),
            None => Ok(None),
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
        Ok(match text_or_value(deserializer)? {
            TextOrValue::Text(text) => ContentBlock::from_text(&text),
            TextOrValue::Value(value) => ContentBlock::from_value(value),
        })
    }
}

#[cfg(test)]
mod tests;
