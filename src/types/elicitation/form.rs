//! [`ElicitForm`]: a form-mode elicitation's fields, read from the restricted schema, filled
//! in by the caller and checked against it before the answer is sent.

use serde_json::{Map, Number, Value};

use crate::error::{Error, Result};

use super::{ElicitRequestFormParams, ElicitResult};

mod schema;

use schema::{check_format, field_kind, one_of};

/// A form-mode elicitation ready to be filled in: its fields, read from the requested schema,
/// and the values given so far.
///
/// Every value is checked against its field when it is set (type, enum choices, minimum and
/// maximum, lengths, item counts, formats), naming the field in the error, and
/// [`ElicitForm::accept`] checks that the required fields are there, so an answer that does not
/// fit the schema is never sent (the quick [`ElicitResult::accept_defaults`] sends the
/// schema's defaults as they are, unchecked). [`ElicitForm::set_text`] parses what a person
/// typed; the demo client and the `umcp` tool use it.
///
/// ```
/// use serde_json::json;
/// use umcp::types::{ElicitForm, ElicitRequestFormParams};
///
/// let request = ElicitRequestFormParams::new("Who are you?", json!({
///     "type": "object",
///     "properties": {
///         "name": {"type": "string", "minLength": 1},
///         "age": {"type": "integer", "minimum": 0, "maximum": 150}
///     },
///     "required": ["name"]
/// }));
/// let mut form = ElicitForm::new(&request)?;
/// assert!(form.set("age", json!(200)).unwrap_err().to_string().contains("`age`"));
/// form.set_text("age", "36")?;
/// assert!(form.accept().is_err()); // `name` is required
/// form.set("name", json!("Ada"))?;
/// let answer = form.accept()?;
/// assert_eq!(answer.content.unwrap()["age"], 36);
/// # Ok::<(), umcp::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ElicitForm {
    message: String,
    fields: Vec<FormField>,
    values: Map<String, Value>,
}

/// One property of a requested schema. See [`ElicitForm`] for an example.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct FormField {
    /// The property's name, the key of its value in the answer.
    pub name: String,
    /// A human-readable label, when the schema gives one.
    pub title: Option<String>,
    /// A longer explanation, when the schema gives one.
    pub description: Option<String>,
    /// Whether the schema lists the property as required.
    pub required: bool,
    /// The schema's `default`, when it has one.
    pub default: Option<Value>,
    /// What values the field takes.
    pub kind: FieldKind,
}

/// What values a [`FormField`] takes, with the schema's limits. See [`ElicitForm`] for an
/// example.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum FieldKind {
    /// A string, optionally bounded in length (in characters) and of a known format.
    Text {
        /// `minLength`.
        min_length: Option<u64>,
        /// `maxLength`.
        max_length: Option<u64>,
        /// `format`: `email`, `uri`, `date` or `date-time` (others are not checked).
        format: Option<String>,
    },
    /// A number (`integer` when `integer` is true), optionally bounded.
    Number {
        /// Whether only whole numbers are allowed.
        integer: bool,
        /// `minimum`.
        minimum: Option<f64>,
        /// `maximum`.
        maximum: Option<f64>,
    },
    /// `true` or `false`.
    Boolean,
    /// One of a list of strings (`enum`, optionally with `enumNames`, or `oneOf` of `const`s).
    Choice(Vec<Choice>),
    /// Several of a list of strings (an `array` of `enum` or `anyOf` items).
    MultiChoice {
        /// The choices.
        choices: Vec<Choice>,
        /// `minItems`.
        min_items: Option<u64>,
        /// `maxItems`.
        max_items: Option<u64>,
    },
}

/// One choice of an enum field. See [`ElicitForm`] for an example.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// The value sent.
    pub value: String,
    /// The label shown, when the schema gives one.
    pub title: Option<String>,
}

impl ElicitForm {
    /// Reads the fields of `request`'s schema, in the order `serde_json` keeps its properties
    /// (sorted by name, unless its `preserve_order` feature is on).
    ///
    /// See the example on [`types::ElicitForm`](crate::types::ElicitForm).
    ///
    /// # Errors
    ///
    /// [`Error::Protocol`] naming the property whose schema is outside the restricted subset
    /// MCP allows (nested objects, arrays of non-strings, unknown types).
    pub fn new(request: &ElicitRequestFormParams) -> Result<ElicitForm> {
        let mut fields = Vec::new();
        for (name, schema) in request.properties().into_iter().flatten() {
            // The server's schema, not the caller's answer, is at fault here.
            let kind = field_kind(schema)
                .map_err(|e| Error::Protocol(format!("form field `{name}` {e}")))?;
            let text = |key: &str| schema.get(key).and_then(Value::as_str).map(str::to_owned);
            fields.push(FormField {
                name: name.clone(),
                title: text("title"),
                description: text("description"),
                required: request.is_required(name),
                default: schema.get("default").filter(|d| !d.is_null()).cloned(),
                kind,
            });
        }
        Ok(ElicitForm {
            message: request.message.clone(),
            fields,
            values: Map::new(),
        })
    }

    /// What the server asks.
    ///
    /// See the example on [`types::ElicitForm`](crate::types::ElicitForm).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The fields, in the order [`ElicitForm::new`] read them.
    ///
    /// See the example on [`types::ElicitForm`](crate::types::ElicitForm).
    pub fn fields(&self) -> &[FormField] {
        &self.fields
    }

    /// The values set so far, by field name.
    ///
    /// See the example on [`types::ElicitForm`](crate::types::ElicitForm).
    pub fn values(&self) -> &Map<String, Value> {
        &self.values
    }

    /// Sets a field's value after checking it against the field's schema.
    ///
    /// See the example on [`types::ElicitForm`](crate::types::ElicitForm).
    ///
    /// # Errors
    ///
    /// [`Error::Invalid`] naming the field, when there is no such field or the value does not
    /// fit it; the form is then unchanged.
    pub fn set(&mut self, name: &str, value: Value) -> Result<()> {
        let field = self.field(name)?;
        let value = field.check(value).map_err(|e| field_error(name, &e))?;
        self.values.insert(name.to_owned(), value);
        Ok(())
    }

    /// Sets a field from text a person typed: a number for number fields, `yes`/`no` (or
    /// `y`, `n`, `true`, `false`) for booleans, a choice's value, title or 1-based position
    /// for enums, and comma-separated choices for multi-select fields. Empty text clears
    /// the field.
    ///
    /// See the example on [`types::ElicitForm`](crate::types::ElicitForm).
    ///
    /// # Errors
    ///
    /// As [`ElicitForm::set`], and when the text does not parse as the field's type.
    pub fn set_text(&mut self, name: &str, text: &str) -> Result<()> {
        let text = text.trim();
        if text.is_empty() {
            self.values.remove(name);
            return self.field(name).map(drop);
        }
        let value = self
            .field(name)?
            .parse(text)
            .map_err(|e| field_error(name, &e))?;
        self.set(name, value)
    }

    /// Sets every field that has no value yet and has a valid default to that default.
    ///
    /// See the example on [`types::ElicitForm`](crate::types::ElicitForm).
    pub fn fill_defaults(&mut self) {
        for field in &self.fields {
            if self.values.contains_key(&field.name) {
                continue;
            }
            if let Some(value) = field.default.clone().and_then(|d| field.check(d).ok()) {
                self.values.insert(field.name.clone(), value);
            }
        }
    }

    /// The `accept` answer with the values set, after checking that every required field
    /// has one.
    ///
    /// See the example on [`types::ElicitForm`](crate::types::ElicitForm).
    ///
    /// # Errors
    ///
    /// [`Error::Invalid`] naming the first required field without a value.
    pub fn accept(&self) -> Result<ElicitResult> {
        if let Some(missing) = self
            .fields
            .iter()
            .find(|f| f.required && !self.values.contains_key(&f.name))
        {
            return Err(field_error(&missing.name, "is required"));
        }
        Ok(ElicitResult::accept(self.values.clone()))
    }

    fn field(&self, name: &str) -> Result<&FormField> {
        self.fields
            .iter()
            .find(|f| f.name == name)
            .ok_or_else(|| field_error(name, "is not a field of this form"))
    }
}

impl FormField {
    /// The title, or else the name: what to show the user.
    ///
    /// See the example on [`types::ElicitForm`](crate::types::ElicitForm).
    pub fn label(&self) -> &str {
        self.title.as_deref().unwrap_or(&self.name)
    }

    /// `value` as it is sent, when it fits this field.
    fn check(&self, value: Value) -> std::result::Result<Value, String> {
        match (&self.kind, value) {
            (
                FieldKind::Text {
                    min_length,
                    max_length,
                    format,
                },
                Value::String(s),
            ) => {
                let chars = s.chars().count() as u64;
                if let Some(min) = min_length.filter(|min| chars < *min) {
                    return Err(format!("must be at least {min} characters"));
                }
                if let Some(max) = max_length.filter(|max| chars > *max) {
                    return Err(format!("must be at most {max} characters"));
                }
                if let Some(format) = format {
                    check_format(format, &s)?;
                }
                Ok(Value::String(s))
            }
            (
                FieldKind::Number {
                    integer,
                    minimum,
                    maximum,
                },
                Value::Number(n),
            ) => {
                let f = n.as_f64().unwrap_or(f64::NAN);
                let whole = n.is_i64() || n.is_u64() || (f.fract() == 0.0 && f.abs() < 9.0e15);
                if *integer && !whole {
                    return Err("must be a whole number".into());
                }
                if let Some(min) = minimum.filter(|min| f < *min) {
                    return Err(format!("must be at least {min}"));
                }
                if let Some(max) = maximum.filter(|max| f > *max) {
                    return Err(format!("must be at most {max}"));
                }
                // A whole float for an integer field is sent as an integer.
                match (*integer, n.is_f64()) {
                    (true, true) => Ok(Value::from(f as i64)),
                    _ => Ok(Value::Number(n)),
                }
            }
            (FieldKind::Boolean, Value::Bool(b)) => Ok(Value::Bool(b)),
            (FieldKind::Choice(choices), Value::String(s)) => {
                one_of(choices, &s)?;
                Ok(Value::String(s))
            }
            (
                FieldKind::MultiChoice {
                    choices,
                    min_items,
                    max_items,
                },
                Value::Array(items),
            ) => {
                for item in &items {
                    one_of(choices, item.as_str().ok_or("must be a list of strings")?)?;
                }
                let count = items.len() as u64;
                if let Some(min) = min_items.filter(|min| count < *min) {
                    return Err(format!("needs at least {min} choices"));
                }
                if let Some(max) = max_items.filter(|max| count > *max) {
                    return Err(format!("allows at most {max} choices"));
                }
                Ok(Value::Array(items))
            }
            (kind, value) => Err(format!("must be {}, not {value}", kind.describe())),
        }
    }

    /// The JSON value `text` stands for in this field.
    fn parse(&self, text: &str) -> std::result::Result<Value, String> {
        let pick = |choices: &[Choice], word: &str| -> std::result::Result<String, String> {
            let word = word.trim();
            let by_position = word
                .parse::<usize>()
                .ok()
                .and_then(|i| choices.get(i.checked_sub(1)?));
            choices
                .iter()
                .find(|c| c.value == word || c.title.as_deref() == Some(word))
                .or(by_position)
                .map(|c| c.value.clone())
                .ok_or_else(|| format!("`{word}` is not one of the choices"))
        };
        Ok(match &self.kind {
            FieldKind::Text { .. } => Value::String(text.to_owned()),
            FieldKind::Number { .. } => {
                let n: Number =
                    serde_json::from_str(text).map_err(|_| format!("`{text}` is not a number"))?;
                Value::Number(n)
            }
            FieldKind::Boolean => match text.to_ascii_lowercase().as_str() {
                "y" | "yes" | "true" | "1" => Value::Bool(true),
                "n" | "no" | "false" | "0" => Value::Bool(false),
                _ => return Err(format!("`{text}` is not yes or no")),
            },
            FieldKind::Choice(choices) => Value::String(pick(choices, text)?),
            FieldKind::MultiChoice { choices, .. } => Value::Array(
                text.split(',')
                    .filter(|w| !w.trim().is_empty())
                    .map(|w| pick(choices, w).map(Value::String))
                    .collect::<std::result::Result<_, _>>()?,
            ),
        })
    }
}

impl FieldKind {
    /// The kind in words, for messages: "a string", "an integer", …
    ///
    /// ```
    /// use serde_json::json;
    /// use umcp::types::{ElicitForm, ElicitRequestFormParams};
    ///
    /// let schema = json!({"type": "object", "properties": {
    ///     "retries": {"type": "integer"}, "verbose": {"type": "boolean"}}});
    /// let request = ElicitRequestFormParams::new("Settings", schema);
    /// let form = ElicitForm::new(&request)?;
    /// let kinds: Vec<_> = form.fields().iter().map(|field| field.kind.describe()).collect();
    /// assert_eq!(kinds, ["an integer", "true or false"]);
    /// # Ok::<(), umcp::Error>(())
    /// ```
    pub fn describe(&self) -> &'static str {
        match self {
            FieldKind::Text { .. } => "a string",
            FieldKind::Number { integer: true, .. } => "an integer",
            FieldKind::Number { .. } => "a number",
            FieldKind::Boolean => "true or false",
            FieldKind::Choice(_) => "one of the choices",
            FieldKind::MultiChoice { .. } => "a list of choices",
        }
    }
}

/// A value of the caller's that does not fit the field `name`.
fn field_error(name: &str, problem: &str) -> Error {
    Error::Invalid(format!("form field `{name}` {problem}"))
}
