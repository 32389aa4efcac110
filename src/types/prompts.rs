//! Prompts: listing prompt templates and filling them in.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::common::{Icon, Role};
use super::content::ContentBlock;

/// A prompt or prompt template the server offers.
///
/// See the example on [`Client::list_prompts`](crate::Client::list_prompts).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Prompt {
    /// The name to get it by.
    pub name: String,
    /// A display name (since 2025-06-18).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the prompt provides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The arguments the template takes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Vec<PromptArgument>>,
    /// Icons for a user interface (since 2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Protocol-level metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// One argument of a prompt template.
///
/// See the example on [`Client::list_prompts`](crate::Client::list_prompts).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptArgument {
    /// The argument's name.
    pub name: String,
    /// A display name (since 2025-06-18).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the argument means.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether it must be given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
}

/// One page of `prompts/list`.
///
/// See the example on [`Client::list_prompts`](crate::Client::list_prompts).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListPromptsResult {
    /// The prompts on this page.
    #[serde(default, deserialize_with = "super::lenient::null_as_default")]
    pub prompts: Vec<Prompt>,
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

/// Parameters of `prompts/get`.
///
/// See the example on [`Client::get_prompt`](crate::Client::get_prompt).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GetPromptRequestParams {
    /// The prompt's name.
    pub name: String,
    /// Values for the template's arguments; the protocol allows only strings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<BTreeMap<String, String>>,
    /// Protocol-level metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// The answer to `prompts/get`.
///
/// See the example on [`Client::get_prompt`](crate::Client::get_prompt).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GetPromptResult {
    /// A description of the prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The filled-in messages.
    #[serde(default, deserialize_with = "super::lenient::null_as_default")]
    pub messages: Vec<PromptMessage>,
    /// Protocol-level metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// One message of a prompt.
///
/// See the example on [`Client::get_prompt`](crate::Client::get_prompt).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptMessage {
    /// Who speaks.
    pub role: Role,
    /// What is said.
    pub content: ContentBlock,
}

impl Prompt {
    /// A prompt with only a name.
    ///
    /// ```
    /// use serde_json::json;
    /// use umcp::types::{Prompt, PromptArgument};
    ///
    /// let mut topic = PromptArgument::new("topic");
    /// topic.required = Some(true);
    /// let mut prompt = Prompt::new("summarize");
    /// prompt.arguments = Some(vec![topic, PromptArgument::new("length")]);
    /// assert_eq!(serde_json::to_value(&prompt)?, json!({
    ///     "name": "summarize",
    ///     "arguments": [{"name": "topic", "required": true}, {"name": "length"}],
    /// }));
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn new(name: impl Into<String>) -> Prompt {
        Prompt {
            name: name.into(),
            title: None,
            description: None,
            arguments: None,
            icons: None,
            meta: None,
        }
    }

    /// The name to show a person: the title when present, else the name.
    ///
    /// See the example on [`Client::list_prompts`](crate::Client::list_prompts).
    pub fn display_name(&self) -> &str {
        self.title.as_deref().unwrap_or(&self.name)
    }
}

impl PromptArgument {
    /// An optional argument with only a name.
    ///
    /// See the example on [`Prompt::new`].
    pub fn new(name: impl Into<String>) -> PromptArgument {
        PromptArgument {
            name: name.into(),
            title: None,
            description: None,
            required: None,
        }
    }

    /// Whether the argument must be given.
    ///
    /// See the example on [`Client::list_prompts`](crate::Client::list_prompts).
    pub fn is_required(&self) -> bool {
        self.required == Some(true)
    }
}

impl GetPromptRequestParams {
    /// Parameters getting `name` with no arguments.
    ///
    /// See the example on [`types::Method`](crate::types::Method).
    pub fn new(name: impl Into<String>) -> GetPromptRequestParams {
        GetPromptRequestParams {
            name: name.into(),
            arguments: None,
            meta: None,
        }
    }

    /// Adds one argument.
    ///
    /// See the example on [`types::Method`](crate::types::Method).
    pub fn with_argument(
        mut self,
        name: impl Into<String>,
        value: impl Into<String>,
    ) -> GetPromptRequestParams {
        self.arguments
            .get_or_insert_with(BTreeMap::new)
            .insert(name.into(), value.into());
        self
    }
}

impl PromptMessage {
    /// A message from `role` with `content`.
    ///
    /// ```
    /// use serde_json::json;
    /// use umcp::types::{ContentBlock, PromptMessage, Role};
    ///
    /// let ask = PromptMessage::new(Role::User, ContentBlock::text("Summarize the notes."));
    /// assert_eq!(serde_json::to_value(&ask)?, json!({
    ///     "role": "user",
    ///     "content": {"type": "text", "text": "Summarize the notes."},
    /// }));
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn new(role: Role, content: ContentBlock) -> PromptMessage {
        PromptMessage { role, content }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_prompt_listings() {
        let page: ListPromptsResult = serde_json::from_value(json!({"prompts": [
            {"name": "plain"},
            {"name": "review", "title": "Code review", "description": "Reviews code",
             "arguments": [{"name": "code", "required": true}, {"name": "style", "title": "Style"}],
             "icons": [{"src": "https://x/r.png", "sizes": ["16x16", "32x32"]}]}
        ]}))
        .unwrap();
        assert_eq!(page.prompts[0], Prompt::new("plain"));
        let review = &page.prompts[1];
        assert_eq!(review.display_name(), "Code review");
        let args = review.arguments.as_ref().unwrap();
        assert!(args[0].is_required() && !args[1].is_required());
        assert_eq!(args[1].title.as_deref(), Some("Style"));
        assert_eq!(PromptArgument::new("x").required, None);
    }

    #[test]
    fn get_params_carry_string_arguments() {
        let p = GetPromptRequestParams::new("review").with_argument("code", "fn main() {}");
        assert_eq!(
            serde_json::to_value(&p).unwrap(),
            json!({"name": "review", "arguments": {"code": "fn main() {}"}})
        );
        assert_eq!(
            serde_json::to_value(GetPromptRequestParams::new("x")).unwrap(),
            json!({"name": "x"})
        );
    }

    #[test]
    fn get_result_round_trips_with_mixed_content() {
        let v = json!({"description": "d", "messages": [
            {"role": "user", "content": {"type": "text", "text": "Review this"}},
            {"role": "assistant", "content": {"type": "resource",
                "resource": {"uri": "file:///m.rs", "mimeType": "text/x-rust", "text": "fn m() {}"}}},
            {"role": "user", "content": {"type": "future", "payload": 1}}
        ]});
        let r: GetPromptResult = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(
            r.messages[0],
            PromptMessage::new(Role::User, ContentBlock::text("Review this"))
        );
        assert_eq!(r.messages[1].role, Role::Assistant);
        assert_eq!(r.messages[2].content.kind(), "future");
        assert_eq!(serde_json::to_value(&r).unwrap(), v);
    }
}
