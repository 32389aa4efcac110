//! The arguments of `call` and `prompt`: one JSON object (on the command line, from stdin as
//! `-`, or from a file as `@FILE`), or `KEY=VALUE` and `KEY:=JSON` pairs (HTTPie's convention,
//! `KEY=@FILE` for a file's text), read before anything starts.
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

/// The most bytes of arguments read from stdin or one file.
const MAX_INPUT: u64 = 16 * 1024 * 1024;

/// Where `-` reads from: the program's stdin, or nowhere (a shell reads its commands there),
/// saying why.
pub enum Stdin<'a> {
    Read,
    Refused(&'a str),
}

/// The words after the tool's or prompt's name, with what they name elsewhere read in: `-`
/// (one JSON object on stdin), `@FILE` (one in a file), `KEY=@FILE` (the file's text) and
/// `KEY:=@FILE` (its JSON). Text that itself begins with `@` is escaped (`KEY=\@…`), so the
/// words mean the same read again, by a session's process.
pub fn resolve(words: &[&str], stdin: Stdin<'_>) -> Result<Vec<String>, String> {
    let mut resolved = Vec::with_capacity(words.len());
    for word in words {
        if *word == "-" {
            let text = match stdin {
                Stdin::Read => read_bounded(std::io::stdin().lock(), "stdin")?,
                Stdin::Refused(why) => return Err(format!("`-` cannot read stdin: {why}")),
            };
            resolved.push(text);
            continue;
        }
        if let Some(path) = word.strip_prefix('@') {
            resolved.push(read_file(path)?);
            continue;
        }
        let Some((key, value)) = word.split_once('=') else {
            resolved.push((*word).to_owned());
            continue;
        };
        match value.strip_prefix('@') {
            Some(path) if key.ends_with(':') => {
                resolved.push(format!("{key}={}", read_file(path)?))
            }
            Some(path) => resolved.push(format!("{key}={}", escaped(read_file(path)?))),
            None => resolved.push((*word).to_owned()),
        }
    }
    Ok(resolved)
}

/// The text of the file at `path`, at most [`MAX_INPUT`] bytes.
fn read_file(path: &str) -> Result<String, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    read_bounded(file, path)
}

fn read_bounded(reader: impl std::io::Read, what: &str) -> Result<String, String> {
    use std::io::Read;
    let mut text = String::new();
    reader
        .take(MAX_INPUT + 1)
        .read_to_string(&mut text)
        .map_err(|e| format!("cannot read {what}: {e}"))?;
    if text.len() as u64 > MAX_INPUT {
        return Err(format!("{what} holds more than {MAX_INPUT} bytes"));
    }
    Ok(text)
}

/// `text` as a `KEY=` value that [`parse`] reads back as `text`: one more backslash before
/// a leading run of them and `@`.
fn escaped(text: String) -> String {
    match text.trim_start_matches('\\').starts_with('@') {
        true => format!("\\{text}"),
        false => text,
    }
}

/// A `KEY=` value as written: `\@…` (any run of backslashes, then `@`) loses one backslash.
fn unescaped(value: &str) -> &str {
    match value.trim_start_matches('\\').starts_with('@') && value.starts_with('\\') {
        true => &value[1..],
        false => value,
    }
}

/// Reads the words after the tool's or prompt's name, as [`resolve`] left them.
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
            None => (key, Pair::Text(unescaped(value).to_owned())),
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
    fn files_are_read_in_and_text_beginning_with_at_survives_a_second_reading() {
        let dir = std::env::temp_dir().join(format!("umcp-args-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let note = dir.join("note.txt");
        std::fs::write(&note, "@handle and more").unwrap();
        let args = dir.join("args.json");
        std::fs::write(&args, r#"{"a": 1}"#).unwrap();
        let list = dir.join("list.json");
        std::fs::write(&list, "[1, 2]").unwrap();
        let (note, args, list) = (note.display(), args.display(), list.display());
        let words = [
            format!("text=@{note}"),
            format!("raw:=@{list}"),
            "plain=\\@literal".to_owned(),
        ];
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        let once = resolve(&words, Stdin::Refused("no")).unwrap();
        let once: Vec<&str> = once.iter().map(String::as_str).collect();
        let twice = resolve(&once, Stdin::Refused("no")).unwrap();
        let twice: Vec<&str> = twice.iter().map(String::as_str).collect();
        assert_eq!(once, twice);
        assert_eq!(
            parse(&twice).unwrap().for_tool(None),
            Ok(json!({"text": "@handle and more", "raw": [1, 2], "plain": "@literal"}))
        );
        let whole = resolve(&[&format!("@{args}")], Stdin::Refused("no")).unwrap();
        let whole: Vec<&str> = whole.iter().map(String::as_str).collect();
        assert_eq!(parse(&whole).unwrap().for_tool(None), Ok(json!({"a": 1})));
        assert!(resolve(&["-"], Stdin::Refused("the shell reads it")).is_err());
        assert!(resolve(&["a=@/nonexistent/file"], Stdin::Refused("no")).is_err());
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn prompt_arguments_are_text() {
        let args = parse(&["code=x = 1", "n:=\"2\""]).unwrap().for_prompt();
        assert_eq!(args, Ok(json!({"code": "x = 1", "n": "2"})));
        assert!(parse(&["n:=2"]).unwrap().for_prompt().is_err());
    }
}
