//! Argument completion: `completion/complete`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Parameters of `completion/complete`.
///
/// See the example on [`Client::complete`](crate::Client::complete).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompleteRequestParams {
    /// The prompt or resource template whose argument is being completed.
    #[serde(rename = "ref")]
    pub reference: CompleteReference,
    /// The argument and what has been typed so far.
    pub argument: CompleteArgument,
    /// Arguments already resolved (since 2025-06-18).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<CompleteContext>,
    /// Protocol-level metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// What a completion refers to, tagged by `type`.
///
/// See the example on [`Client::complete`](crate::Client::complete).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum CompleteReference {
    /// `"type": "ref/prompt"`.
    #[serde(rename = "ref/prompt")]
    Prompt(PromptReference),
    /// `"type": "ref/resource"`.
    #[serde(rename = "ref/resource")]
    Resource(ResourceTemplateReference),
}

/// A prompt, by name.
///
/// See the example on [`Client::complete`](crate::Client::complete).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PromptReference {
    /// The prompt's name.
    pub name: String,
    /// A display name (since 2025-06-18).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

/// A resource or resource template, by URI or URI template.
///
/// See the example on [`Client::complete`](crate::Client::complete).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceTemplateReference {
    /// The URI or URI template.
    pub uri: String,
}

/// The argument being completed.
///
/// See the example on [`Client::complete`](crate::Client::complete).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompleteArgument {
    /// The argument's name.
    pub name: String,
    /// The partial value to complete.
    pub value: String,
}

/// Context for a completion.
///
/// See the example on [`Client::complete`](crate::Client::complete).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompleteContext {
    /// Values of other arguments, already chosen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<BTreeMap<String, String>>,
}

/// The answer to `completion/complete`.
///
/// See the example on [`Client::complete`](crate::Client::complete).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CompleteResult {
    /// The suggestions.
    #[serde(default, deserialize_with = "super::lenient::null_as_default")]
    pub completion: Completion,
    /// Protocol-level metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// Completion suggestions.
///
/// See the example on [`Client::complete`](crate::Client::complete).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    /// Up to 100 values.
    #[serde(default, deserialize_with = "super::lenient::null_as_default")]
    pub values: Vec<String>,
    /// How many values exist in all, which may exceed those sent.
    #[serde(
        default,
        deserialize_with = "super::lenient::opt_u64",
        skip_serializing_if = "Option::is_none"
    )]
    pub total: Option<u64>,
    /// Whether more values exist than were sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
}

impl CompleteRequestParams {
    /// Parameters completing argument `name`, typed so far as `value`, of `reference`.
    ///
    /// See the example on [`Client::complete`](crate::Client::complete).
    pub fn new(
        reference: CompleteReference,
        name: impl Into<String>,
        value: impl Into<String>,
    ) -> CompleteRequestParams {
        CompleteRequestParams {
            reference,
            argument: CompleteArgument {
                name: name.into(),
                value: value.into(),
            },
            context: None,
            meta: None,
        }
    }

    /// Adds an already-resolved argument to the context.
    ///
    /// See the example on [`Client::complete`](crate::Client::complete).
    pub fn with_context_argument(
        mut self,
        name: impl Into<String>,
        value: impl Into<String>,
    ) -> CompleteRequestParams {
        self.context
            .get_or_insert_with(CompleteContext::default)
            .arguments
            .get_or_insert_with(BTreeMap::new)
            .insert(name.into(), value.into());
        self
    }
}

impl CompleteReference {
    /// A reference to the prompt `name`.
    ///
    /// See the example on [`Client::complete`](crate::Client::complete).
    pub fn prompt(name: impl Into<String>) -> CompleteReference {
        CompleteReference::Prompt(PromptReference {
            name: name.into(),
            title: None,
        })
    }

    /// A reference to the resource or template `uri`.
    ///
    /// See the example on [`Client::complete`](crate::Client::complete).
    pub fn resource(uri: impl Into<String>) -> CompleteReference {
        CompleteReference::Resource(ResourceTemplateReference { uri: uri.into() })
    }
}

impl CompleteResult {
    /// A result offering `values`.
    ///
    /// ```
    /// use serde_json::json;
    /// use umcp::types::CompleteResult;
    ///
    /// let result = CompleteResult::new(vec!["python".into(), "pytorch".into()]);
    /// assert_eq!(
    ///     serde_json::to_value(&result)?,
    ///     json!({"completion": {"values": ["python", "pytorch"]}})
    /// );
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn new(values: Vec<String>) -> CompleteResult {
        CompleteResult {
            completion: Completion {
                values,
                total: None,
                has_more: None,
            },
            meta: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn params_serialise_the_tagged_reference() {
        let p = CompleteRequestParams::new(CompleteReference::prompt("review"), "lang", "ru");
        assert_eq!(
            serde_json::to_value(&p).unwrap(),
            json!({"ref": {"type": "ref/prompt", "name": "review"},
                   "argument": {"name": "lang", "value": "ru"}})
        );
        let p =
            CompleteRequestParams::new(CompleteReference::resource("file:///{path}"), "path", "sr")
                .with_context_argument("root", "/home");
        assert_eq!(
            serde_json::to_value(&p).unwrap(),
            json!({"ref": {"type": "ref/resource", "uri": "file:///{path}"},
                   "argument": {"name": "path", "value": "sr"},
                   "context": {"arguments": {"root": "/home"}}})
        );
    }

    #[test]
    fn params_read_back() {
        let v = json!({"ref": {"type": "ref/prompt", "name": "p", "title": "P"},
                       "argument": {"name": "a", "value": ""}});
        let p: CompleteRequestParams = serde_json::from_value(v.clone()).unwrap();
        assert!(
            matches!(&p.reference, CompleteReference::Prompt(r) if r.title.as_deref() == Some("P"))
        );
        assert_eq!(serde_json::to_value(&p).unwrap(), v);
        let bad = json!({"ref": {"type": "ref/other"}, "argument": {"name": "a", "value": ""}});
        assert!(serde_json::from_value::<CompleteRequestParams>(bad).is_err());
    }

    #[test]
    fn result_reads_totals() {
        let r: CompleteResult = serde_json::from_value(json!({
            "completion": {"values": ["rust", "ruby"], "total": 10, "hasMore": true}
        }))
        .unwrap();
        assert_eq!(r.completion.values, ["rust", "ruby"]);
        assert_eq!(r.completion.total, Some(10));
        assert_eq!(r.completion.has_more, Some(true));
        let built = CompleteResult::new(vec!["a".into()]);
        assert_eq!(
            serde_json::to_value(&built).unwrap(),
            json!({"completion": {"values": ["a"]}})
        );
    }
}
