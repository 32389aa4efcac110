//! Sampling: a server asking the client's model for a message (`sampling/createMessage`).

use serde::de;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use super::common::Role;
use super::content::ContentBlock;
use super::raw::{text_or_value, TextOrValue};

/// Parameters of `sampling/createMessage`, sent by the server.
///
/// See the example on [`Options::with_sampling_handler`](crate::Options::with_sampling_handler).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageRequestParams {
    /// The conversation so far.
    pub messages: Vec<SamplingMessage>,
    /// Which model the server would like; advisory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_preferences: Option<ModelPreferences>,
    /// A system prompt the client may use, change or drop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Which servers' context to attach; `thisServer` and `allServers` are soft-deprecated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_context: Option<IncludeContext>,
    /// The sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// The most tokens to sample; the client must not exceed it.
    #[serde(deserialize_with = "super::lenient::u64")]
    pub max_tokens: u64,
    /// Sequences that end sampling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_sequences: Option<Vec<String>>,
    /// Provider-specific metadata to pass through.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
    /// Tools the model may use (2025-11-25), as raw JSON `Tool` objects.
    ///
    /// Only a client that declared `sampling.tools`
    /// ([`Options::with_sampling_tools`](crate::Options::with_sampling_tools)) sees this set:
    /// without it, a request carrying `tools` or `toolChoice` is refused with `-32602` before
    /// the sampling handler runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Value>,
    /// How the model may use the tools (2025-11-25), e.g. `{"mode": "auto"}`, as raw JSON.
    /// Refused like [`tools`](Self::tools) unless `sampling.tools` was declared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<Value>,
    /// Task augmentation (2025-11-25), kept as raw JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<Value>,
    /// Protocol-level metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// The `includeContext` values.
///
/// See the example on [`Options::with_sampling_handler`](crate::Options::with_sampling_handler).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum IncludeContext {
    /// No extra context (the default).
    None,
    /// Context from the requesting server.
    ThisServer,
    /// Context from every connected server.
    AllServers,
}

/// One message of a sampling conversation.
///
/// See the example on [`Options::with_sampling_handler`](crate::Options::with_sampling_handler).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SamplingMessage {
    /// Who speaks.
    pub role: Role,
    /// One block, or (since 2025-11-25) several.
    pub content: SamplingContent,
    /// Protocol-level metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// The content of a sampling message: a single block (every version) or an array of blocks
/// (since 2025-11-25). Blocks of the sampling-only kinds `tool_use` and `tool_result` read as
/// [`ContentBlock::Unknown`], whole.
///
/// See the example on [`Options::with_sampling_handler`](crate::Options::with_sampling_handler).
// Messages are few and short-lived; boxing the single block would only make matching clumsier.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum SamplingContent {
    /// One block, written as a bare object.
    Single(ContentBlock),
    /// Several blocks, written as an array.
    Multiple(Vec<ContentBlock>),
}

/// The server's model preferences; every field is advisory.
///
/// See the example on [`Options::with_sampling_handler`](crate::Options::with_sampling_handler).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelPreferences {
    /// Model name hints, to be tried in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hints: Option<Vec<ModelHint>>,
    /// How much cost matters, 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_priority: Option<f64>,
    /// How much speed matters, 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_priority: Option<f64>,
    /// How much capability matters, 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intelligence_priority: Option<f64>,
}

/// A model name hint, matched as a substring of model names.
///
/// See the example on [`Options::with_sampling_handler`](crate::Options::with_sampling_handler).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelHint {
    /// A full or partial model name, e.g. `sonnet`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// The client's answer to `sampling/createMessage`.
///
/// See the example on [`Options::with_sampling_handler`](crate::Options::with_sampling_handler).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageResult {
    /// Who speaks; normally [`Role::Assistant`].
    pub role: Role,
    /// The sampled content. Answer a server older than 2025-11-25 with a single block.
    pub content: SamplingContent,
    /// The model that produced it.
    pub model: String,
    /// Why sampling stopped: `endTurn`, `stopSequence`, `maxTokens`, `toolUse` or another
    /// provider-specific string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// Protocol-level metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl CreateMessageRequestParams {
    /// Parameters asking for at most `max_tokens` tokens after `messages`.
    ///
    /// ```
    /// use umcp::types::{CreateMessageRequestParams, SamplingMessage};
    ///
    /// let ask = vec![SamplingMessage::user_text("Name a colour.")];
    /// let params = CreateMessageRequestParams::new(ask, 20).with_system_prompt("One word.");
    /// let wire = serde_json::to_value(&params)?;
    /// assert_eq!(wire["maxTokens"], 20);
    /// assert_eq!(wire["systemPrompt"], "One word.");
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn new(messages: Vec<SamplingMessage>, max_tokens: u64) -> CreateMessageRequestParams {
        CreateMessageRequestParams {
            messages,
            model_preferences: None,
            system_prompt: None,
            include_context: None,
            temperature: None,
            max_tokens,
            stop_sequences: None,
            metadata: None,
            tools: None,
            tool_choice: None,
            task: None,
            meta: None,
        }
    }

    /// Sets the system prompt.
    ///
    /// See the example on [`CreateMessageRequestParams::new`].
    pub fn with_system_prompt(mut self, prompt: impl Into<String>) -> CreateMessageRequestParams {
        self.system_prompt = Some(prompt.into());
        self
    }
}

impl SamplingMessage {
    /// A message from `role`.
    ///
    /// See the example on
    /// [`Options::with_sampling_handler`](crate::Options::with_sampling_handler).
    pub fn new(role: Role, content: impl Into<SamplingContent>) -> SamplingMessage {
        SamplingMessage {
            role,
            content: content.into(),
            meta: None,
        }
    }

    /// A text message from the user.
    ///
    /// See the example on
    /// [`Options::with_sampling_handler`](crate::Options::with_sampling_handler).
    pub fn user_text(text: impl Into<String>) -> SamplingMessage {
        SamplingMessage::new(Role::User, ContentBlock::text(text))
    }
}

impl SamplingContent {
    /// The blocks, one or many.
    ///
    /// See the example on
    /// [`Options::with_sampling_handler`](crate::Options::with_sampling_handler).
    pub fn blocks(&self) -> &[ContentBlock] {
        match self {
            SamplingContent::Single(b) => std::slice::from_ref(b),
            SamplingContent::Multiple(bs) => bs,
        }
    }

    /// The text of every text block, joined with newlines.
    ///
    /// See the example on
    /// [`Options::with_sampling_handler`](crate::Options::with_sampling_handler).
    pub fn text(&self) -> String {
        let texts: Vec<&str> = self
            .blocks()
            .iter()
            .filter_map(ContentBlock::as_text)
            .collect();
        texts.join("\n")
    }
}

impl From<ContentBlock> for SamplingContent {
    fn from(block: ContentBlock) -> SamplingContent {
        SamplingContent::Single(block)
    }
}

impl From<Vec<ContentBlock>> for SamplingContent {
    fn from(blocks: Vec<ContentBlock>) -> SamplingContent {
        SamplingContent::Multiple(blocks)
    }
}

impl<'de> Deserialize<'de> for SamplingContent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<SamplingContent, D::Error> {
        // Decided by shape rather than by trying each variant, because a single block reads from
        // any JSON value (unknown kinds are kept) and would swallow an array.
        Ok(match text_or_value(deserializer)? {
            TextOrValue::Text(text) if text.trim_start().starts_with('[') => {
                let blocks = serde_json::from_str(&text).map_err(de::Error::custom)?;
                SamplingContent::Multiple(blocks)
            }
            TextOrValue::Text(text) => SamplingContent::Single(ContentBlock::from_text(&text)),
            TextOrValue::Value(Value::Array(items)) => {
                SamplingContent::Multiple(items.into_iter().map(ContentBlock::from_value).collect())
            }
            TextOrValue::Value(other) => SamplingContent::Single(ContentBlock::from_value(other)),
        })
    }
}

impl CreateMessageResult {
    /// An assistant message from `model`.
    ///
    /// See the example on
    /// [`Options::with_sampling_handler`](crate::Options::with_sampling_handler).
    pub fn new(
        model: impl Into<String>,
        content: impl Into<SamplingContent>,
    ) -> CreateMessageResult {
        CreateMessageResult {
            role: Role::Assistant,
            content: content.into(),
            model: model.into(),
            stop_reason: None,
            meta: None,
        }
    }

    /// Sets the stop reason.
    ///
    /// See the example on
    /// [`Options::with_sampling_handler`](crate::Options::with_sampling_handler).
    pub fn with_stop_reason(mut self, reason: impl Into<String>) -> CreateMessageResult {
        self.stop_reason = Some(reason.into());
        self
    }
}

#[cfg(test)]
mod tests;
