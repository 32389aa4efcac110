//! Elicitation: a server asking the user, through the client, for input (`elicitation/create`).

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::common::object_schema;

mod form;

pub use form::{Choice, ElicitForm, FieldKind, FormField};

/// Parameters of `elicitation/create`, in one of two modes chosen by the `mode` member.
///
/// An absent `mode` means form mode, as every server before 2025-11-25 sends. An unknown mode
/// fails to decode, which the client answers with `-32602`.
///
/// See the example on
/// [`Options::with_elicitation_handler`](crate::Options::with_elicitation_handler).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ElicitRequestParams {
    /// Form mode: fill in a flat form described by a restricted JSON Schema.
    Form(ElicitRequestFormParams),
    /// URL mode (2025-11-25 on): send the user to a URL, out of band.
    Url(ElicitRequestUrlParams),
}

/// Form-mode parameters. Written without a `mode` member, which every version reads as form.
///
/// See the example on [`types::ElicitForm`](crate::types::ElicitForm).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitRequestFormParams {
    /// What is being asked, for the user.
    pub message: String,
    /// A flat object schema: `properties` of strings, numbers, integers, booleans and enums,
    /// each possibly with a `default`. Kept as raw JSON so no keyword is lost.
    #[serde(default = "object_schema")]
    pub requested_schema: Value,
    /// Task augmentation (2025-11-25), kept as raw JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<Value>,
    /// Protocol-level metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// URL-mode parameters (2025-11-25 on). Always written with `"mode": "url"`.
///
/// The client must not open or prefetch the URL without the user's consent, and should show it
/// in full. In 2025-11-25 the server names the elicitation with an id (which its
/// `notifications/elicitation/complete` repeats); in the input rounds of 2026-07-28 there is no
/// id, only `message` and `url`.
///
/// See the example on
/// [`Options::with_elicitation_handler`](crate::Options::with_elicitation_handler).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitRequestUrlParams {
    /// Why the user is being sent there.
    pub message: String,
    /// Where to send the user.
    pub url: String,
    /// The server's opaque id for this elicitation: present in 2025-11-25, absent in
    /// 2026-07-28.
    #[serde(default)]
    pub elicitation_id: Option<String>,
    /// Task augmentation (2025-11-25), kept as raw JSON.
    #[serde(default)]
    pub task: Option<Value>,
    /// Protocol-level metadata.
    #[serde(rename = "_meta", default)]
    pub meta: Option<Map<String, Value>>,
}

/// What the user did with an elicitation.
///
/// See the example on
/// [`Options::with_elicitation_handler`](crate::Options::with_elicitation_handler).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitAction {
    /// Submitted the form, or consented to open the URL.
    Accept,
    /// Explicitly refused.
    Decline,
    /// Dismissed without choosing.
    Cancel,
}

/// The client's answer to `elicitation/create`.
///
/// See the example on
/// [`Options::with_elicitation_handler`](crate::Options::with_elicitation_handler).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ElicitResult {
    /// What the user did.
    pub action: ElicitAction,
    /// The submitted values, only for an accepted form: strings, numbers, booleans or arrays
    /// of strings, keyed by property name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Map<String, Value>>,
    /// Protocol-level metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// Parameters of `notifications/elicitation/complete` (2025-11-25): a URL-mode elicitation
/// finished. Ids the client does not know must be ignored.
///
/// See the example on
/// [`Options::with_elicitation_handler`](crate::Options::with_elicitation_handler).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationCompleteNotificationParams {
    /// The id from the URL-mode request.
    pub elicitation_id: String,
    /// Protocol-level metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl ElicitRequestParams {
    /// The message to show the user.
    ///
    /// See the example on [`ElicitRequestUrlParams::new`].
    pub fn message(&self) -> &str {
        match self {
            ElicitRequestParams::Form(p) => &p.message,
            ElicitRequestParams::Url(p) => &p.message,
        }
    }

    /// The mode: `form` or `url`.
    ///
    /// See the example on [`ElicitRequestUrlParams::new`].
    pub fn mode(&self) -> &'static str {
        match self {
            ElicitRequestParams::Form(_) => "form",
            ElicitRequestParams::Url(_) => "url",
        }
    }
}

impl<'de> Deserialize<'de> for ElicitRequestParams {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<ElicitRequestParams, D::Error> {
        let value = Value::deserialize(deserializer)?;
        match value.get("mode") {
            None | Some(Value::Null) => {}
            Some(Value::String(mode)) if mode == "form" => {}
            Some(Value::String(mode)) if mode == "url" => {
                return ElicitRequestUrlParams::deserialize(value)
                    .map(ElicitRequestParams::Url)
                    .map_err(D::Error::custom);
            }
            Some(other) => {
                return Err(D::Error::custom(format!(
                    "unsupported elicitation mode {other}"
                )));
            }
        }
        let form = ElicitRequestFormParams::deserialize(value).map_err(D::Error::custom)?;
        // A form is an object schema; anything else reaches no handler. Lenient where a
        // member is only missing: `type` and `properties` are read when present.
        let schema = &form.requested_schema;
        let object = schema.is_object()
            && schema.get("type").is_none_or(|t| t == "object")
            && schema.get("properties").is_none_or(Value::is_object);
        if !object {
            let kind = match schema {
                Value::Object(_) => "an object schema with another type or properties",
                Value::Array(_) => "an array",
                Value::String(_) => "a string",
                Value::Number(_) => "a number",
                Value::Bool(_) => "a boolean",
                Value::Null => "null",
            };
            return Err(D::Error::custom(format!(
                "requestedSchema must be an object schema, not {kind}"
            )));
        }
        Ok(ElicitRequestParams::Form(form))
    }
}

impl ElicitRequestFormParams {
    /// A form asking `message`, described by `requested_schema`.
    ///
    /// See the example on [`types::ElicitForm`](crate::types::ElicitForm).
    pub fn new(message: impl Into<String>, requested_schema: Value) -> ElicitRequestFormParams {
        ElicitRequestFormParams {
            message: message.into(),
            requested_schema,
            task: None,
            meta: None,
        }
    }

    /// The schema's `properties`, by name.
    ///
    /// See the example on [`types::ElicitForm`](crate::types::ElicitForm).
    pub fn properties(&self) -> Option<&Map<String, Value>> {
        self.requested_schema.get("properties")?.as_object()
    }

    /// Whether the schema lists `name` as required.
    ///
    /// See the example on [`types::ElicitForm`](crate::types::ElicitForm).
    pub fn is_required(&self, name: &str) -> bool {
        self.requested_schema
            .get("required")
            .and_then(Value::as_array)
            .is_some_and(|names| names.iter().any(|n| n.as_str() == Some(name)))
    }
}

impl ElicitRequestUrlParams {
    /// A URL-mode request without an elicitation id, as 2026-07-28 input rounds send it.
    ///
    /// ```
    /// use serde_json::json;
    /// use umcp::types::{
    ///     ElicitRequestParams, ElicitRequestUrlParams, ElicitationCompleteNotificationParams,
    /// };
    ///
    /// let url = "https://example.com/link";
    /// let link = ElicitRequestUrlParams::new("Link your account.", url);
    /// let wire = json!({"mode": "url", "message": "Link your account.", "url": url});
    /// assert_eq!(serde_json::to_value(&link)?, wire);
    /// // 2025-11-25 names the elicitation, and says with the same id when the user is done:
    /// let named = link.with_elicitation_id("e-42");
    /// let request: ElicitRequestParams = serde_json::from_value(serde_json::to_value(&named)?)?;
    /// assert_eq!((request.mode(), request.message()), ("url", "Link your account."));
    /// let done = ElicitationCompleteNotificationParams::new("e-42");
    /// assert_eq!(serde_json::to_value(&done)?, json!({"elicitationId": "e-42"}));
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn new(message: impl Into<String>, url: impl Into<String>) -> ElicitRequestUrlParams {
        ElicitRequestUrlParams {
            message: message.into(),
            url: url.into(),
            elicitation_id: None,
            task: None,
            meta: None,
        }
    }

    /// The request with the server's id for the elicitation (2025-11-25).
    ///
    /// See the example on [`ElicitRequestUrlParams::new`].
    pub fn with_elicitation_id(mut self, elicitation_id: impl Into<String>) -> Self {
        self.elicitation_id = Some(elicitation_id.into());
        self
    }
}

/// The wire shape of URL-mode parameters, borrowed, so the `mode` tag is always written.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct UrlParamsWire<'a> {
    mode: &'static str,
    message: &'a str,
    url: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    elicitation_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    task: Option<&'a Value>,
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    meta: Option<&'a Map<String, Value>>,
}

impl Serialize for ElicitRequestUrlParams {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        UrlParamsWire {
            mode: "url",
            message: &self.message,
            url: &self.url,
            elicitation_id: self.elicitation_id.as_deref(),
            task: self.task.as_ref(),
            meta: self.meta.as_ref(),
        }
        .serialize(serializer)
    }
}

impl ElicitResult {
    /// A result with `action` and no content.
    ///
    /// See the example on
    /// [`Options::with_elicitation_handler`](crate::Options::with_elicitation_handler).
    pub fn new(action: ElicitAction) -> ElicitResult {
        ElicitResult {
            action,
            content: None,
            meta: None,
        }
    }

    /// An accepted form with the given values.
    ///
    /// See the example on
    /// [`Options::with_elicitation_handler`](crate::Options::with_elicitation_handler).
    pub fn accept(content: Map<String, Value>) -> ElicitResult {
        ElicitResult {
            action: ElicitAction::Accept,
            content: Some(content),
            meta: None,
        }
    }

    /// A refusal.
    ///
    /// See the example on
    /// [`Options::with_elicitation_handler`](crate::Options::with_elicitation_handler).
    pub fn decline() -> ElicitResult {
        ElicitResult::new(ElicitAction::Decline)
    }

    /// A dismissal.
    ///
    /// See the example on
    /// [`Options::with_elicitation_handler`](crate::Options::with_elicitation_handler).
    pub fn cancel() -> ElicitResult {
        ElicitResult::new(ElicitAction::Cancel)
    }

    /// Accepts a form with each property's `default` from the requested schema. To fill in
    /// values and check them against the schema, use [`ElicitForm`].
    ///
    /// Defaults keep their JSON type: strings (including enum choices) stay strings, numbers
    /// stay numbers, booleans stay booleans, and multi-select defaults stay arrays of strings.
    /// An `integer` property whose default is written as a whole float (`3.0`) is sent as an
    /// integer. Properties without a default, or with a default of any other shape, are left
    /// out, required ones too: nothing is checked, and a server may refuse an answer that
    /// lacks a required property. [`ElicitForm`] checks the answer
    /// (`ElicitForm::new`, `fill_defaults`, then `accept`, which fails naming a required field
    /// without a value, so the handler can decline instead).
    ///
    /// See the example on
    /// [`Options::with_elicitation_handler`](crate::Options::with_elicitation_handler).
    pub fn accept_defaults(form: &ElicitRequestFormParams) -> ElicitResult {
        let mut content = Map::new();
        for (name, schema) in form.properties().into_iter().flatten() {
            if let Some(value) = schema.get("default").and_then(|d| default_value(schema, d)) {
                content.insert(name.clone(), value);
            }
        }
        ElicitResult::accept(content)
    }
}

/// The value to submit for a property's default, or `None` when it is not a valid answer.
fn default_value(schema: &Value, default: &Value) -> Option<Value> {
    match default {
        Value::String(_) | Value::Bool(_) => Some(default.clone()),
        Value::Number(n) => {
            let integer = schema.get("type").and_then(Value::as_str) == Some("integer");
            match n.as_f64() {
                // A whole float is exactly representable as i64 within this range.
                Some(f) if integer && n.is_f64() && f.fract() == 0.0 && f.abs() < 9.0e15 => {
                    Some(Value::from(f as i64))
                }
                _ => Some(default.clone()),
            }
        }
        Value::Array(items) if items.iter().all(Value::is_string) => Some(default.clone()),
        _ => None,
    }
}

impl ElicitationCompleteNotificationParams {
    /// Parameters announcing that `elicitation_id` completed.
    ///
    /// See the example on [`ElicitRequestUrlParams::new`].
    pub fn new(elicitation_id: impl Into<String>) -> ElicitationCompleteNotificationParams {
        ElicitationCompleteNotificationParams {
            elicitation_id: elicitation_id.into(),
            meta: None,
        }
    }
}

#[cfg(test)]
mod tests;
