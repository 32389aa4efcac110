//! A JSON Schema as a server wrote it: the parsed value, plus the server's own text.

use std::fmt;
use std::ops::{Deref, DerefMut};

use serde::de::{self, Deserializer};

use super::raw::{text_or_value, TextOrValue};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::Value;

/// A JSON Schema (a tool's `inputSchema` or `outputSchema`), kept exactly as the server
/// wrote it.
///
/// `serde_json`'s maps sort their keys (unless its `preserve_order` feature is on, which any
/// crate of a program may turn on), so a schema held only as a [`Value`] comes back in a
/// different order, and with different spacing, than the server sent it. A `Schema` read with
/// serde_json from text also keeps that text, and serializes it back byte for byte:
/// `$schema`, `$defs`, `additionalProperties` and every key in the server's order. The client
/// reads responses of either protocol era from the server's text over stdio, Streamable HTTP
/// and legacy SSE, and its response cache keeps that text. Read from a [`Value`] (a transport
/// of your own that delivers decoded messages), its text is that value's own compact form
/// (keys sorted, without `preserve_order`).
///
/// It reads as the [`Value`] it holds (`schema["properties"]`); any mutable access drops the
/// kept text, since it no longer says the same thing. Two schemas are equal when their
/// values are.
///
/// Serialized through a format other than JSON, a schema with text is written as serde_json
/// writes a [`RawValue`] there; convert it with [`Schema::into_value`] first.
///
/// ```
/// use serde_json::json;
/// use umcp::types::Schema;
///
/// let text = r#"{"type": "object", "$defs": {}, "additionalProperties": false}"#;
/// let schema: Schema = serde_json::from_str(text)?;
/// assert_eq!(schema["additionalProperties"], false);
/// // Written back exactly as read: same order, same spacing.
/// assert_eq!(serde_json::to_string(&schema)?, text);
/// assert_eq!(schema.raw_json(), Some(text));
///
/// // Built from a value there is no server text; changing a schema drops it.
/// let built = Schema::from(json!({"type": "object"}));
/// assert_eq!(built.raw_json(), None);
/// let mut read = schema.clone();
/// read["title"] = json!("changed");
/// assert_eq!(read.raw_json(), None);
/// assert_eq!(read.to_json_string(), serde_json::to_string(read.as_value())?);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone)]
pub struct Schema {
    value: Value,
    /// The text the value was read from; `None` once the value may differ from it.
    raw: Option<Box<RawValue>>,
}

impl Schema {
    /// A schema holding `value`, with no text of its own.
    ///
    /// ```
    /// use serde_json::json;
    /// use umcp::types::Schema;
    ///
    /// let value = json!({"type": "object", "properties": {"path": {"type": "string"}}});
    /// let schema = Schema::new(value.clone());
    /// assert_eq!(schema.raw_json(), None);
    /// // Its text is the value's compact form, keys in the value's order: sorted, unless
    /// // `serde_json`'s `preserve_order` feature is on (any crate of a program may turn it on).
    /// assert_eq!(schema.to_json_string(), serde_json::to_string(&value)?);
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn new(value: Value) -> Schema {
        Schema { value, raw: None }
    }

    /// Reads a schema from JSON text, keeping the text.
    ///
    /// ```
    /// use umcp::types::Schema;
    ///
    /// let text = r#"{"type": "object", "required": ["path"]}"#;
    /// let schema = Schema::from_json(text)?;
    /// assert_eq!(schema["required"][0], "path");
    /// assert_eq!(schema.to_json_string(), text);
    /// assert!(Schema::from_json("{").is_err());
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// Fails when `text` is not JSON.
    pub fn from_json(text: &str) -> serde_json::Result<Schema> {
        serde_json::from_str(text)
    }

    /// `{"type": "object"}`, the input schema read when a server omits one.
    pub(crate) fn object() -> Schema {
        Schema::new(super::common::object_schema())
    }

    /// The schema as a JSON value.
    ///
    /// See the example on [`Schema`].
    pub fn as_value(&self) -> &Value {
        &self.value
    }

    /// The schema as a JSON value, dropping the text.
    ///
    /// ```
    /// let schema = umcp::types::Schema::from_json(r#"{"type": "string", "minLength": 1}"#)?;
    /// let value = schema.into_value();
    /// assert_eq!(value, serde_json::json!({"minLength": 1, "type": "string"}));
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn into_value(self) -> Value {
        self.value
    }

    /// The JSON text the schema was read from, byte for byte; `None` for a schema built from
    /// a value, or changed since it was read.
    ///
    /// See the example on [`Schema`].
    pub fn raw_json(&self) -> Option<&str> {
        self.raw.as_deref().map(RawValue::get)
    }

    /// The schema as JSON text: the text it was read from when it has one, else its value
    /// written compactly.
    ///
    /// See the example on [`Schema`].
    pub fn to_json_string(&self) -> String {
        match self.raw_json() {
            Some(text) => text.to_owned(),
            None => self.value.to_string(),
        }
    }

    /// A schema from a value and the text it was parsed from.
    fn with_text(text: Box<RawValue>) -> Result<Schema, serde_json::Error> {
        let value = serde_json::from_str(text.get())?;
        Ok(Schema {
            value,
            raw: Some(text),
        })
    }
}

impl Deref for Schema {
    type Target = Value;

    fn deref(&self) -> &Value {
        &self.value
    }
}

impl DerefMut for Schema {
    /// The value, to change; the kept text no longer describes it and is dropped.
    fn deref_mut(&mut self) -> &mut Value {
        self.raw = None;
        &mut self.value
    }
}

impl From<Value> for Schema {
    fn from(value: Value) -> Schema {
        Schema::new(value)
    }
}

impl From<Schema> for Value {
    fn from(schema: Schema) -> Value {
        schema.value
    }
}

impl PartialEq for Schema {
    fn eq(&self, other: &Schema) -> bool {
        self.value == other.value
    }
}

impl PartialEq<Value> for Schema {
    fn eq(&self, other: &Value) -> bool {
        &self.value == other
    }
}

impl fmt::Debug for Schema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.value.fmt(f)
    }
}

impl Serialize for Schema {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.raw {
            Some(raw) => raw.serialize(serializer),
            None => self.value.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for Schema {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Schema, D::Error> {
        match text_or_value(deserializer)? {
            TextOrValue::Text(text) => {
                let raw = RawValue::from_string(text.into_owned()).map_err(de::Error::custom)?;
                Schema::with_text(raw).map_err(de::Error::custom)
            }
            TextOrValue::Value(value) => Ok(Schema::new(value)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Keys out of serde_json's order, with spacing inside.
    const TEXT: &str = r##"{"type": "object", "$schema": "https://json-schema.org/draft/2020-12/schema",
        "properties": {"b": {"$ref": "#/$defs/b"}, "a": true}, "$defs": {"b": {"type": "string"}},
        "additionalProperties": false}"##;

    #[test]
    fn text_is_kept_and_written_back_byte_for_byte() {
        let schema = Schema::from_json(TEXT).unwrap();
        assert_eq!(schema.raw_json(), Some(TEXT));
        assert_eq!(serde_json::to_string(&schema).unwrap(), TEXT);
        assert_eq!(schema.to_json_string(), TEXT);
        assert_eq!(schema["$defs"]["b"]["type"], "string");
        assert_eq!(schema, serde_json::from_str::<Value>(TEXT).unwrap());
        // Into a value it goes through the value's own (sorted) form.
        let value = serde_json::to_value(&schema).unwrap();
        assert_eq!(value, *schema.as_value());
    }

    #[test]
    fn read_from_a_value_the_text_is_the_values_own() {
        let value: Value = serde_json::from_str(TEXT).unwrap();
        let owned: Schema = serde_json::from_value(value.clone()).unwrap();
        let borrowed = Schema::deserialize(&value).unwrap();
        let compact = value.to_string();
        for schema in [owned, borrowed] {
            assert_eq!(schema, value);
            assert_eq!(schema.raw_json(), Some(compact.as_str()));
            assert_eq!(serde_json::to_string(&schema).unwrap(), compact);
        }
    }

    #[test]
    fn buffering_deserializers_give_the_value_without_text() {
        /// serde buffers an untagged enum's input, which cannot carry raw text.
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Either {
            Schema { schema: Schema },
        }
        let text = format!(r#"{{"schema": {TEXT}}}"#);
        let Either::Schema { schema } = serde_json::from_str(&text).unwrap();
        assert_eq!(schema, serde_json::from_str::<Value>(TEXT).unwrap());
        assert_eq!(schema.raw_json(), None);
        for other in [
            json!(true),
            json!([1, "a"]),
            json!(null),
            json!(2.5),
            json!("s"),
        ] {
            let wrapped = json!({ "schema": other });
            let Either::Schema { schema } = serde_json::from_value(wrapped).unwrap();
            assert_eq!(schema, other);
        }
    }

    #[test]
    fn mutable_access_drops_the_text() {
        let mut schema = Schema::from_json(TEXT).unwrap();
        schema["additionalProperties"] = json!(true);
        assert_eq!(schema.raw_json(), None);
        let written: Value = serde_json::from_str(&schema.to_json_string()).unwrap();
        assert_eq!(written["additionalProperties"], true);
        assert_eq!(written["$defs"]["b"]["type"], "string");
    }

    #[test]
    fn boolean_schemas_and_values_convert_both_ways() {
        let schema = Schema::from_json("true").unwrap();
        assert_eq!(schema.raw_json(), Some("true"));
        assert_eq!(*schema, Value::Bool(true));
        let built = Schema::from(json!({"type": "object"}));
        assert_eq!(built.raw_json(), None);
        assert_eq!(built, Schema::object());
        assert_eq!(Value::from(built.clone()), built.into_value());
        assert_eq!(format!("{:?}", Schema::from(json!(1))), "Number(1)");
    }
}
