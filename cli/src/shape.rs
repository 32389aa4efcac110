//! A tool's shape, read from its input schema: the signature `tools` shows
//! (`get-sum(a: number, b: number)`), the parameters `describe` prints, and the check of a
//! call's arguments before it is sent, where a missing or unknown parameter is a usage error.
//!
//! Only what a schema says plainly is read: `properties`, `required`, `type`, `enum`,
//! `const`, `items`, `anyOf`/`oneOf`, `default`, `description` and `$ref`'s name. A schema
//! that says more (`allOf`, conditionals, patterns) is not second-guessed: the server checks
//! what umcp does not.

use serde_json::{Map, Value};

use crate::suggest;

/// The most choices of an `enum` a type shows; more are cut with `…`.
const SHOWN_CHOICES: usize = 4;

/// How deep a type is followed into arrays and alternatives (`string[][]`); deeper it is
/// `any`, so that a schema nested without end is read in bounded time.
const MAX_DEPTH: usize = 4;

/// One parameter of a tool: a property of its input schema.
pub struct Param<'a> {
    /// The property's name.
    pub name: &'a str,
    /// Its type as a signature shows it (`number`, `string[]`, `"a"|"b"`).
    pub kind: String,
    /// Whether `required` lists it.
    pub required: bool,
    /// The property's own schema.
    pub schema: &'a Value,
}

impl Param<'_> {
    /// The property's `default`, if it has one.
    pub fn default(&self) -> Option<&Value> {
        self.schema.get("default")
    }

    /// The property's `description` (else its `title`), if it has one.
    pub fn description(&self) -> Option<&str> {
        (self.schema.get("description"))
            .or_else(|| self.schema.get("title"))
            .and_then(Value::as_str)
    }
}

/// The parameters of the input schema `schema`, in its order.
pub fn params(schema: &Value) -> Vec<Param<'_>> {
    let required = required(schema);
    properties(schema)
        .into_iter()
        .flatten()
        .map(|(name, property)| Param {
            name,
            kind: kind(property),
            required: required.contains(&name.as_str()),
            schema: property,
        })
        .collect()
}

/// `name(a: number, b?: string)`: the tool's name and parameters, an optional one marked `?`.
pub fn signature(name: &str, schema: &Value) -> String {
    let params: Vec<String> = params(schema)
        .iter()
        .map(|p| {
            let optional = if p.required { "" } else { "?" };
            format!("{}{optional}: {}", p.name, p.kind)
        })
        .collect();
    format!("{name}({})", params.join(", "))
}

/// The type of `property` as a signature shows it.
pub fn kind(property: &Value) -> String {
    kind_within(property, MAX_DEPTH)
}

fn kind_within(property: &Value, depth: usize) -> String {
    let Some(object) = property.as_object().filter(|_| depth > 0) else {
        return "any".into();
    };
    if let Some(Value::Array(choices)) = object.get("enum") {
        return choices_kind(choices);
    }
    if let Some(value) = object.get("const") {
        return value.to_string();
    }
    if let Some(Value::String(reference)) = object.get("$ref") {
        return reference.rsplit('/').next().unwrap_or("object").to_owned();
    }
    let alternatives = ["anyOf", "oneOf"].iter().find_map(|k| object.get(*k));
    if let Some(Value::Array(alternatives)) = alternatives {
        let kinds: Vec<String> = alternatives
            .iter()
            .map(|a| kind_within(a, depth - 1))
            .collect();
        return union(kinds);
    }
    match object.get("type") {
        Some(Value::String(one)) => typed(one, object, depth),
        Some(Value::Array(many)) => union(
            many.iter()
                .filter_map(Value::as_str)
                .map(|one| typed(one, object, depth))
                .collect(),
        ),
        _ if object.contains_key("properties") => "object".into(),
        _ => "any".into(),
    }
}

/// One `type`: an array by its items (`number[]`), the others by name.
fn typed(one: &str, object: &Map<String, Value>, depth: usize) -> String {
    match (one, object.get("items")) {
        ("array", Some(items)) => {
            let item = kind_within(items, depth - 1);
            match item.contains('|') {
                true => format!("({item})[]"),
                false => format!("{item}[]"),
            }
        }
        _ => one.to_owned(),
    }
}

/// Alternatives joined with `|`, each once.
fn union(kinds: Vec<String>) -> String {
    let mut unique: Vec<String> = Vec::new();
    for kind in kinds {
        if !unique.contains(&kind) {
            unique.push(kind);
        }
    }
    match unique.is_empty() {
        true => "any".into(),
        false => unique.join("|"),
    }
}

/// An enum's choices as JSON, `|` between them, cut after [`SHOWN_CHOICES`].
fn choices_kind(choices: &[Value]) -> String {
    let mut shown: Vec<String> = (choices.iter().take(SHOWN_CHOICES))
        .map(Value::to_string)
        .collect();
    if choices.len() > SHOWN_CHOICES {
        shown.push("…".into());
    }
    shown.join("|")
}

/// Checks `arguments` against the input schema `schema` of the tool `name`: an object, with
/// every required parameter, no parameter the schema does not list (unless it allows
/// others), and each value of the type and among the choices its property gives. The error
/// says what is wrong, with the closest parameter for an unknown one.
pub fn check(name: &str, schema: &Value, arguments: &Value) -> Result<(), String> {
    let empty = Map::new();
    let given = match arguments {
        Value::Null => &empty,
        Value::Object(given) => given,
        _ => return Err("the arguments must be a JSON object".into()),
    };
    // A misspelt name first: it is why a required one seems missing.
    if let Some(properties) = properties(schema) {
        for (key, value) in given {
            match properties.get(key) {
                Some(property) => check_value(key, property, value)?,
                None if closed(schema) => return Err(unknown(name, key, schema, properties)),
                None => {}
            }
        }
    }
    let missing: Vec<&str> = required(schema)
        .into_iter()
        .filter(|r| !given.contains_key(*r))
        .collect();
    if !missing.is_empty() {
        let names: Vec<String> = missing.iter().map(|m| format!("`{m}`")).collect();
        return Err(format!(
            "missing {}: {}",
            names.join(" and "),
            signature(name, schema)
        ));
    }
    Ok(())
}

/// The error for `key`, which `properties` does not list.
fn unknown(name: &str, key: &str, schema: &Value, properties: &Map<String, Value>) -> String {
    let names = properties.keys().map(String::as_str);
    match suggest::closest(key, names) {
        Some(near) => format!("no parameter `{key}`; did you mean `{near}`?"),
        None if properties.is_empty() => format!("no parameter `{key}`: {name} takes none"),
        None => format!("no parameter `{key}`: {}", signature(name, schema)),
    }
}

/// Checks one given value against its property's `type` and `enum`.
fn check_value(key: &str, property: &Value, value: &Value) -> Result<(), String> {
    if let Some(Value::Array(choices)) = property.get("enum") {
        if !choices.contains(value) {
            return Err(format!(
                "`{key}` must be one of {}, not {value}",
                choices_kind(choices).replace('|', ", ")
            ));
        }
    }
    let types: Vec<&str> = match property.get("type") {
        Some(Value::String(one)) => vec![one.as_str()],
        Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).collect(),
        _ => return Ok(()),
    };
    if types.is_empty() || types.iter().any(|t| is_a(value, t)) {
        return Ok(());
    }
    Err(format!(
        "`{key}` must be {}, not {}",
        types.join(" or "),
        json_kind(value)
    ))
}

/// Whether `value` is of the JSON Schema type `kind` (an unknown type name lets it pass).
fn is_a(value: &Value, kind: &str) -> bool {
    match kind {
        "string" => value.is_string(),
        "number" => value.is_number(),
        "integer" => {
            value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "null" => value.is_null(),
        _ => true,
    }
}

/// What `value` is, for a message: `a string`, `an array`.
fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The schema's `properties`, when it is an object of them.
fn properties(schema: &Value) -> Option<&Map<String, Value>> {
    schema.get("properties")?.as_object()
}

/// The names `required` lists.
fn required(schema: &Value) -> Vec<&str> {
    (schema.get("required").and_then(Value::as_array))
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// Whether the schema takes no parameter besides its `properties`: it does not allow others
/// (`additionalProperties` absent or `false`) and names none by pattern.
fn closed(schema: &Value) -> bool {
    let extra = schema.get("additionalProperties");
    let open = extra.is_some_and(|e| e != &Value::Bool(false));
    !open && schema.get("patternProperties").is_none()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn sum() -> Value {
        json!({"type": "object", "properties": {
            "a": {"type": "number", "description": "First number"},
            "b": {"type": "number", "description": "Second number"},
        }, "required": ["a", "b"], "additionalProperties": false})
    }

    #[test]
    fn signatures_show_types_optional_parameters_and_choices() {
        assert_eq!(
            signature("get-sum", &sum()),
            "get-sum(a: number, b: number)"
        );
        let schema = json!({"type": "object", "properties": {
            "query": {"type": "string"},
            "limit": {"type": "integer", "default": 10},
            "mode": {"type": "string", "enum": ["fast", "deep"]},
            "tags": {"type": "array", "items": {"type": "string"}},
            "when": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "many": {"enum": [1, 2, 3, 4, 5]},
            "ref": {"$ref": "#/$defs/Point"},
            "free": {},
        }, "required": ["query"]});
        assert_eq!(
            signature("search", &schema),
            "search(query: string, limit?: integer, mode?: \"fast\"|\"deep\", tags?: string[], \
             when?: string|null, many?: 1|2|3|4|…, ref?: Point, free?: any)"
        );
        assert_eq!(signature("now", &json!({"type": "object"})), "now()");
        assert_eq!(signature("odd", &json!(true)), "odd()");
    }

    #[test]
    fn a_type_nested_without_end_is_read_in_bounded_depth() {
        let mut deep = json!({"type": "string"});
        for _ in 0..100 {
            deep = json!({"type": "array", "items": deep});
        }
        assert_eq!(kind(&deep), "any[][][][]");
    }

    #[test]
    fn missing_and_unknown_parameters_are_named() {
        let err = check("get-sum", &sum(), &json!({"a": 1})).unwrap_err();
        assert_eq!(err, "missing `b`: get-sum(a: number, b: number)");
        let err = check("get-sum", &sum(), &Value::Null).unwrap_err();
        assert!(err.starts_with("missing `a` and `b`"), "{err}");
        let err = check("get-sum", &sum(), &json!({"a": 1, "b": 2, "bb": 3})).unwrap_err();
        assert_eq!(err, "no parameter `bb`; did you mean `b`?");
        // The misspelt name is told, not the one it leaves missing.
        let err = check("get-sum", &sum(), &json!({"a": 1, "bb": 3})).unwrap_err();
        assert_eq!(err, "no parameter `bb`; did you mean `b`?");
        let err = check("get-sum", &sum(), &json!({"a": 1, "b": 2, "zzz": 3})).unwrap_err();
        assert_eq!(err, "no parameter `zzz`: get-sum(a: number, b: number)");
        assert!(check("get-sum", &sum(), &json!({"a": 1, "b": 2.5})).is_ok());
        // A schema that allows others takes them.
        let open = json!({"properties": {"a": {}}, "additionalProperties": true});
        assert!(check("t", &open, &json!({"x": 1})).is_ok());
        assert!(check("t", &json!({"type": "object"}), &json!({"x": 1})).is_ok());
        assert!(check("t", &sum(), &json!([1])).is_err());
    }

    #[test]
    fn values_are_checked_against_their_type_and_choices() {
        let schema = json!({"properties": {
            "n": {"type": "integer"},
            "mode": {"enum": ["fast", "deep"]},
            "maybe": {"type": ["string", "null"]},
        }});
        assert_eq!(
            check("t", &schema, &json!({"n": "2"})).unwrap_err(),
            "`n` must be integer, not a string"
        );
        assert!(check("t", &schema, &json!({"n": 2.0})).is_ok());
        assert!(check("t", &schema, &json!({"n": 2.5})).is_err());
        assert_eq!(
            check("t", &schema, &json!({"mode": "slow"})).unwrap_err(),
            "`mode` must be one of \"fast\", \"deep\", not \"slow\""
        );
        assert!(check("t", &schema, &json!({"maybe": null, "mode": "deep"})).is_ok());
    }
}
