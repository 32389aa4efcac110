//! The arguments of `call` and `prompt`: one JSON object, or `KEY=VALUE` and `KEY:=JSON` pairs
//! (HTTPie's convention), read before anything starts.
//!
//! A `KEY=VALUE` is text, as a shell word is, unless the tool's input schema gives the
//! property another type: then `a=2` is the number 2 where the tool wants a number, and stays
//! the text "2" where it wants a string. `KEY:=JSON` is always read as JSON.

use serde_json::{Map, Value};

/// What the command line gave.
#[derive(Debug, PartialEq)]
pub enum Arguments {
    /// One JSON object, or nothing (`null`).
    Json(Value),
    /// `KEY=VALUE` and `KEY:=JSON` pairs, in order.
    Pairs(Vec<(String, Pair)>),
}

/// One pair's value.
#[derive(Debug, PartialEq)]
pub enum Pair {
    /// `KEY=VALUE`: text, or JSON where the schema asks for another type.
    Text(String),
    /// `KEY:=JSON`.
    Json(Value),
}

/// Reads the words after the tool's or prompt's name.
pub fn parse(words: &[&str]) -> Result<Arguments, String> {
    match words {
        [] => return Ok(Arguments::Json(Value::Null)),
        [word] if word.trim_start().starts_with('{') || word.trim() == "null" => {
            return match serde_json::from_str::<Value>(word) {
                Ok(value @ (Value::Object(_) | Value::Null)) => Ok(Arguments::Json(value)),
                Ok(_) => Err("the arguments must be a JSON object".into()),
                Err(e) => Err(format!("the arguments are not JSON: {e}")),
            };
        }
        _ => {}
    }
    let mut pairs: Vec<(String, Pair)> = Vec::with_capacity(words.len());
    for word in words {
        let Some((key, value)) = word.split_once('=') else {
            return Err(format!(
                "`{word}`: expected a JSON object, or KEY=VALUE (text) and KEY:=JSON pairs"
            ));
        };
        let (key, pair) = match key.strip_suffix(':') {
            Some(key) => match serde_json::from_str(value) {
                Ok(json) => (key, Pair::Json(json)),
                Err(e) => return Err(format!("`{word}`: the value is not JSON: {e}")),
            },
            None => (key, Pair::Text(value.to_owned())),
        };
        if key.is_empty() {
            return Err(format!("`{word}`: no name before the `=`"));
        }
        if pairs.iter().any(|(k, _)| k == key) {
            return Err(format!("`{key}` is given twice"));
        }
        pairs.push((key.to_owned(), pair));
    }
    Ok(Arguments::Pairs(pairs))
}

impl Arguments {
    /// Whether a `KEY=VALUE` pair was given: text that a tool's schema may type.
    pub fn has_text(&self) -> bool {
        match self {
            Arguments::Json(_) => false,
            Arguments::Pairs(pairs) => pairs.iter().any(|(_, p)| matches!(p, Pair::Text(_))),
        }
    }

    /// A tool's arguments, a `KEY=VALUE` read by the type `schema` (the tool's input schema,
    /// when known) gives the property.
    pub fn for_tool(self, schema: Option<&Value>) -> Result<Value, String> {
        self.object(|key, pair| match pair {
            Pair::Json(value) => Ok(value),
            Pair::Text(text) => match wanted_type(schema, key) {
                Some(kind) => serde_json::from_str(&text).map_err(|_| {
                    format!("`{key}={text}`: the tool wants {kind} there (KEY:=JSON gives JSON)")
                }),
                None => Ok(Value::String(text)),
            },
        })
    }

    /// A prompt's arguments, which are all text.
    pub fn for_prompt(self) -> Result<Value, String> {
        self.object(|key, pair| match pair {
            Pair::Text(text) | Pair::Json(Value::String(text)) => Ok(Value::String(text)),
            Pair::Json(_) => Err(format!("`{key}`: prompt arguments are text")),
        })
    }

    /// The JSON object given, or the object of the pairs, each value made by `value`.
    fn object(
        self,
        mut value: impl FnMut(&str, Pair) -> Result<Value, String>,
    ) -> Result<Value, String> {
        let pairs = match self {
            Arguments::Json(json) => return Ok(json),
            Arguments::Pairs(pairs) => pairs,
        };
        let mut object = Map::new();
        for (key, pair) in pairs {
            let value = value(&key, pair)?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

/// The JSON type `schema` gives property `key`, when not text: the first non-`null` one of a
/// `type` array or of `anyOf`/`oneOf` alternatives (the Python SDK writes optional parameters so);
/// `None` where a string is allowed or nothing is said.
fn wanted_type<'a>(schema: Option<&'a Value>, key: &str) -> Option<&'a str> {
    let kinds = types(schema?.get("properties")?.get(key)?)?;
    if kinds.contains(&"string") {
        return None;
    }
    kinds.iter().find(|k| **k != "null").copied()
}

/// The types `property` allows; `None` when one of its alternatives says nothing of its type
/// (it allows anything, text too).
fn types(property: &Value) -> Option<Vec<&str>> {
    if let Some(kind) = property.get("type") {
        return match kind {
            Value::String(one) => Some(vec![one.as_str()]),
            Value::Array(many) => Some(many.iter().filter_map(Value::as_str).collect()),
            _ => None,
        };
    }
    let alternatives = ["anyOf", "oneOf"]
        .iter()
        .find_map(|k| property.get(*k))?
        .as_array()?;
    let mut kinds = Vec::new();
    for alternative in alternatives {
        kinds.extend(types(alternative)?);
    }
    Some(kinds)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tool(words: &[&str], schema: Value) -> Result<Value, String> {
        parse(words)?.for_tool(Some(&schema))
    }

    #[test]
    fn one_json_object_or_nothing() {
        assert_eq!(tool(&[], json!({})), Ok(Value::Null));
        assert_eq!(tool(&[r#"{"a": 1}"#], json!({})), Ok(json!({"a": 1})));
        assert!(tool(&["{not json"], json!({})).is_err());
        assert!(tool(&["[1, 2]"], json!({})).is_err());
    }

    #[test]
    fn pairs_follow_the_schema_and_json_pairs_are_json() {
        let schema = json!({"type": "object", "properties": {
            "a": {"type": "number"},
            "name": {"type": "string"},
            "flag": {"type": ["boolean", "null"]},
            "either": {"type": ["string", "number"]},
        }});
        assert_eq!(
            tool(
                &[
                    "a=2",
                    "name=42",
                    "flag=true",
                    "either=7",
                    "other=x",
                    "raw:=[1]"
                ],
                schema.clone()
            ),
            Ok(json!({
                "a": 2, "name": "42", "flag": true, "either": "7", "other": "x", "raw": [1]
            }))
        );
        // Alternatives: the first type that is not null, text wherever one allows a string.
        let alternatives = json!({"type": "object", "properties": {
            "on": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
            "pick": {"oneOf": [{"type": "null"}, {"type": "boolean"}]},
            "maybe": {"type": ["null", "number"]},
            "either": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            "any": {"anyOf": [{"type": "integer"}, {"description": "anything"}]},
        }});
        assert_eq!(
            tool(
                &["on=5", "pick=true", "maybe=2", "either=3", "any=4"],
                alternatives.clone()
            ),
            Ok(json!({"on": 5, "pick": true, "maybe": 2, "either": "3", "any": "4"}))
        );
        let err = tool(&["on=five"], alternatives).unwrap_err();
        assert!(err.contains("the tool wants integer"), "{err}");
        // A value may hold `=`; only the first one splits.
        assert_eq!(
            tool(&["name=a=b"], schema.clone()),
            Ok(json!({"name": "a=b"}))
        );
        let err = tool(&["a=two"], schema.clone()).unwrap_err();
        assert!(err.contains("the tool wants number"), "{err}");
        // Without a schema, every KEY=VALUE is text.
        let plain = parse(&["a=2"]).unwrap().for_tool(None);
        assert_eq!(plain, Ok(json!({"a": "2"})));
    }

    #[test]
    fn malformed_pairs_are_refused() {
        for words in [
            &["a"][..],
            &["=1"][..],
            &["a:=nope"][..],
            &["a=1", "a=2"][..],
        ] {
            assert!(parse(words).is_err(), "{words:?}");
        }
    }

    #[test]
    fn prompt_arguments_are_text() {
        let args = parse(&["code=x = 1", "n:=\"2\""]).unwrap().for_prompt();
        assert_eq!(args, Ok(json!({"code": "x = 1", "n": "2"})));
        assert!(parse(&["n:=2"]).unwrap().for_prompt().is_err());
    }
}
