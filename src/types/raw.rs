//! A JSON value's own text where serde_json offers it, and the parsed value otherwise.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};

/// serde_json's `RawValue` token: a newtype struct of this name gets the raw text. Asked for
/// directly, not as `Box<RawValue>`, so other deserializers (serde's buffering for `untagged` and
/// `flatten`) still give a plain value; were it renamed, values would only lose their text.
const RAW_TOKEN: &str = "$serde_json::private::RawValue";

/// What [`text_or_value`] read.
pub(crate) enum TextOrValue<'de> {
    /// The value's text, exactly as written (borrowed when the input is a string).
    Text(Cow<'de, str>),
    /// The value, from a deserializer that does not offer text.
    Value(Value),
}

/// Reads the next value as its text when the deserializer is serde_json's, and as a [`Value`]
/// otherwise.
pub(crate) fn text_or_value<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<TextOrValue<'de>, D::Error> {
    deserializer.deserialize_newtype_struct(RAW_TOKEN, TextOrValueVisitor)
}

/// Takes serde_json's raw text when offered, and any JSON value otherwise.
struct TextOrValueVisitor;

impl<'de> Visitor<'de> for TextOrValueVisitor {
    type Value = TextOrValue<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let Some(first) = map.next_key::<Cow<'_, str>>()? else {
            return Ok(TextOrValue::Value(Value::Object(Map::new())));
        };
        if first == RAW_TOKEN {
            return map
                .next_value::<Text<'de>>()
                .map(|t| TextOrValue::Text(t.0));
        }
        let mut object = Map::new();
        object.insert(first.into_owned(), map.next_value()?);
        while let Some((key, value)) = map.next_entry()? {
            object.insert(key, value);
        }
        Ok(TextOrValue::Value(Value::Object(object)))
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, inner: D) -> Result<Self::Value, D::Error> {
        Value::deserialize(inner).map(TextOrValue::Value)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        Value::deserialize(de::value::SeqAccessDeserializer::new(seq)).map(TextOrValue::Value)
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(TextOrValue::Value(Value::Bool(v)))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(TextOrValue::Value(v.into()))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(TextOrValue::Value(v.into()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Ok(TextOrValue::Value(v.into()))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(TextOrValue::Value(v.into()))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(TextOrValue::Value(Value::Null))
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(TextOrValue::Value(Value::Null))
    }

    fn visit_some<D: Deserializer<'de>>(self, inner: D) -> Result<Self::Value, D::Error> {
        Value::deserialize(inner).map(TextOrValue::Value)
    }
}

/// The raw text itself: borrowed from a string input, owned from a reader.
struct Text<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Text<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Text<'de>, D::Error> {
        struct TextVisitor;
        impl<'de> Visitor<'de> for TextVisitor {
            type Value = Text<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("the text of a JSON value")
            }

            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Borrowed(v)))
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(v.to_owned())))
            }

            fn visit_string<E: de::Error>(self, v: String) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(v)))
            }
        }
        deserializer.deserialize_str(TextVisitor)
    }
}
