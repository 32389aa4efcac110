//! The per-request `_meta` of the stateless era, and the `x-mcp-header` annotations of a tool
//! that say which of its arguments are mirrored into headers (the headers themselves are made
//! in `headers`, with the `http` feature).

use serde_json::{Map, Value};

use crate::types::{
    Implementation, LoggingLevel, META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
};

/// Adds the stateless `_meta` entries to a request's params in place, creating both objects
/// if needed (a null one included). Entries the caller put in `_meta` are kept as they are:
/// the caller's word wins. What was added is returned, so that [`unstamp`] can give the caller
/// back its params as they were (to send them again, stamped afresh).
pub(crate) fn stamp(
    params: &mut Option<Value>,
    version: &str,
    identity: &Identity,
    log_level: Option<LoggingLevel>,
) -> Stamped {
    let mut stamped = Stamped::default();
    let object = match params {
        Some(Value::Object(map)) => map,
        None | Some(Value::Null) => {
            stamped.params = Some(params.is_some());
            match params.insert(Value::Object(Map::new())) {
                Value::Object(map) => map,
                _ => return stamped,
            }
        }
        // Not an object: nothing can be added; the server will say what it thinks.
        Some(_) => return stamped,
    };
    let meta = match object.get_mut("_meta") {
        // A null `_meta` says nothing, and the required entries have to go somewhere.
        Some(meta) if meta.is_null() => {
            stamped.meta = Some(true);
            *meta = Value::Object(Map::new());
            meta
        }
        Some(meta) => meta,
        None => {
            stamped.meta = Some(false);
            object
                .entry("_meta")
                .or_insert_with(|| Value::Object(Map::new()))
        }
    };
    let Value::Object(meta) = meta else {
        return stamped;
    };
    let level = log_level.map(|level| Value::from(level.as_str()));
    let entries = [
        (META_PROTOCOL_VERSION, Some(Value::from(version))),
        (
            META_CLIENT_CAPABILITIES,
            Some(identity.capabilities.clone()),
        ),
        (META_CLIENT_INFO, Some(identity.client_info.clone())),
        (META_LOG_LEVEL, level),
    ];
    for (slot, (key, value)) in stamped.keys.iter_mut().zip(entries) {
        if let (false, Some(value)) = (meta.contains_key(key), value) {
            meta.insert(key.to_owned(), value);
            *slot = true;
        }
    }
    stamped
}

/// What [`stamp`] added to one request's params.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Stamped {
    /// The params object was made: from nothing (`false`) or from a null (`true`).
    params: Option<bool>,
    /// The `_meta` object was made: from nothing (`false`) or from a null (`true`).
    meta: Option<bool>,
    /// Which of protocol version, capabilities, client info and log level were added.
    keys: [bool; 4],
}

/// Takes away what [`stamp`] added, leaving the params as the caller gave them.
pub(crate) fn unstamp(params: &mut Option<Value>, stamped: Stamped) {
    if let Some(was_null) = stamped.params {
        *params = was_null.then_some(Value::Null);
        return;
    }
    let Some(Value::Object(object)) = params else {
        return;
    };
    if let Some(was_null) = stamped.meta {
        match was_null {
            true => object.insert("_meta".into(), Value::Null),
            false => object.remove("_meta"),
        };
        return;
    }
    if let Some(Value::Object(meta)) = object.get_mut("_meta") {
        let keys = [
            META_PROTOCOL_VERSION,
            META_CLIENT_CAPABILITIES,
            META_CLIENT_INFO,
            META_LOG_LEVEL,
        ];
        for (key, added) in keys.into_iter().zip(stamped.keys) {
            if added {
                meta.remove(key);
            }
        }
    }
}

/// What every stateless request says about the client, encoded once per connection.
#[derive(Debug, Clone, Default)]
pub(crate) struct Identity {
    pub(crate) capabilities: Value,
    pub(crate) client_info: Value,
}

impl Identity {
    /// The identity of a client named `client_info` declaring `capabilities`.
    pub(crate) fn new(client_info: &Implementation, capabilities: Value) -> Identity {
        Identity {
            capabilities,
            client_info: serde_json::to_value(client_info).unwrap_or(Value::Null),
        }
    }
}

/// Where a tool argument is mirrored into a header: the chain of `properties` keys that leads
/// to it, and the name after `Mcp-Param-`.
pub(crate) type HeaderParam = (Vec<String>, String);

/// The `x-mcp-header` annotations of a tool's input schema, or why they are invalid (a bad or
/// repeated name, a non-primitive type, or not reached through `properties` keys alone).
pub(crate) fn tool_header_params(schema: &Value) -> Result<Vec<HeaderParam>, String> {
    let mut pairs = Vec::new();
    collect(schema, &mut Vec::new(), &mut pairs)?;
    Ok(pairs)
}

/// Walks `schema` (reached through `path`): annotations count under `properties` only, and
/// one anywhere else makes the whole tool invalid.
fn collect(
    schema: &Value,
    path: &mut Vec<String>,
    pairs: &mut Vec<HeaderParam>,
) -> Result<(), String> {
    let Some(object) = schema.as_object() else {
        return Ok(());
    };
    for (key, value) in object {
        if key == "properties" {
            for (argument, property) in value.as_object().into_iter().flatten() {
                path.push(argument.clone());
                if let Some(annotation) = property.get("x-mcp-header") {
                    pairs.push((path.clone(), checked(annotation, property, path, pairs)?));
                }
                collect(property, path, pairs)?;
                path.pop();
            }
        } else if key != "x-mcp-header" {
            nested_annotation(value, key)?;
        } else if path.is_empty() {
            // A property's own annotation was checked by its parent; the root has no parent.
            return Err("x-mcp-header on the schema root".into());
        }
    }
    Ok(())
}

/// The header name of one annotation, checked against the rules.
fn checked(
    annotation: &Value,
    property: &Value,
    path: &[String],
    pairs: &[HeaderParam],
) -> Result<String, String> {
    let at = path.join(".");
    let Some(name) = annotation.as_str() else {
        return Err(format!("`{at}`: x-mcp-header is not a string"));
    };
    if name.is_empty() || !name.bytes().all(is_token_byte) {
        return Err(format!("`{at}`: x-mcp-header {name:?} is not a token"));
    }
    if pairs.iter().any(|(_, h)| h.eq_ignore_ascii_case(name)) {
        return Err(format!("`{at}`: x-mcp-header {name:?} is a duplicate"));
    }
    match property.get("type").and_then(Value::as_str) {
        Some("string" | "integer" | "boolean") => Ok(name.to_owned()),
        other => Err(format!(
            "`{at}`: x-mcp-header on type {}",
            other.unwrap_or("(none)")
        )),
    }
}

/// Fails when `value` holds an `x-mcp-header` anywhere within it.
fn nested_annotation(value: &Value, path: &str) -> Result<(), String> {
    match value {
        Value::Object(map) => {
            if map.contains_key("x-mcp-header") {
                return Err(format!("x-mcp-header nested under `{path}`"));
            }
            map.iter().try_for_each(|(k, v)| nested_annotation(v, k))
        }
        Value::Array(items) => items.iter().try_for_each(|v| nested_annotation(v, path)),
        _ => Ok(()),
    }
}

/// RFC 9110 `tchar`.
fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// `params` stamped, checked by `check`, and unstamped back to what they were.
    fn stamped(params: Option<Value>, level: Option<LoggingLevel>, check: impl Fn(&Value)) {
        let identity = Identity::new(&Implementation::new("umcp", "1"), json!({}));
        let mut stamping = params.clone();
        let added = stamp(&mut stamping, "2026-07-28", &identity, level);
        check(stamping.as_ref().expect("params"));
        unstamp(&mut stamping, added);
        assert_eq!(stamping, params, "unstamped back to the caller's");
    }

    #[test]
    fn stamp_keeps_caller_meta_and_adds_the_protocol_entries() {
        let params = Some(json!({"name": "t", "_meta": {"trace": 1, META_PROTOCOL_VERSION: "x"}}));
        stamped(params, None, |stamped| {
            let meta = &stamped["_meta"];
            assert_eq!(meta["trace"], 1);
            assert_eq!(meta[META_PROTOCOL_VERSION], "x", "the caller's entry wins");
            assert_eq!(meta[META_CLIENT_CAPABILITIES], json!({}));
            assert_eq!(meta[META_CLIENT_INFO]["name"], "umcp");
        });
        for bare in [
            None,
            Some(Value::Null),
            Some(json!({"a": 1, "_meta": null})),
        ] {
            stamped(bare, None, |stamped| {
                assert_eq!(stamped["_meta"][META_PROTOCOL_VERSION], "2026-07-28");
                let level = stamped["_meta"].get(META_LOG_LEVEL);
                assert!(level.is_none(), "no level unless set");
            });
        }
        stamped(
            Some(json!({"a": 1})),
            Some(LoggingLevel::Warning),
            |stamped| {
                assert_eq!(stamped["_meta"][META_LOG_LEVEL], "warning");
                assert_eq!(stamped["a"], 1);
            },
        );
        // Not an object: left as it is.
        stamped(Some(json!([1])), None, |stamped| {
            assert_eq!(*stamped, json!([1]))
        });
    }

    #[test]
    fn invalid_annotations_are_rejected() {
        let bad = [
            json!({"properties": {"a": {"type": "number", "x-mcp-header": "A"}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": ""}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": "A B"}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": "A"},
                                  "b": {"type": "string", "x-mcp-header": "a"}}}),
            json!({"properties": {"a": {"type": "object", "x-mcp-header": "A"}}}),
            json!({"properties": {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}}}),
            json!({"properties": {}, "anyOf": [{"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}]}),
            json!({"properties": {"a": {"$ref": "#/$defs/b"}}, "$defs": {"b": {"type": "string", "x-mcp-header": "B"}}}),
        ];
        for schema in bad {
            assert!(tool_header_params(&schema).is_err(), "{schema}");
        }
        assert_eq!(
            tool_header_params(&json!({"type": "object"})).unwrap(),
            vec![]
        );
    }

    #[test]
    fn an_annotation_on_the_schema_root_makes_the_tool_invalid() {
        let root = json!({"type": "object", "x-mcp-header": "Root",
            "properties": {"a": {"type": "string"}}});
        let why = tool_header_params(&root).unwrap_err();
        assert!(why.contains("root"), "{why}");
        // On a property (also a nested one) it is what the annotation is for.
        let nested = json!({"type": "object", "properties": {"outer": {"type": "object",
            "properties": {"inner": {"type": "string", "x-mcp-header": "Inner"}}}}});
        let pairs = tool_header_params(&nested).unwrap();
        assert_eq!(
            pairs,
            vec![(
                vec!["outer".to_owned(), "inner".to_owned()],
                "Inner".to_owned()
            )]
        );
    }
}
