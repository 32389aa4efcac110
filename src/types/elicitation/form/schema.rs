//! Reading the restricted schema of an elicitation form, and checking string formats.

use serde_json::Value;

use super::{Choice, FieldKind};

/// Reads one property schema of the restricted subset.
pub(super) fn field_kind(schema: &Value) -> Result<FieldKind, String> {
    let uint = |key: &str| schema.get(key).and_then(Value::as_u64);
    let float = |key: &str| schema.get(key).and_then(Value::as_f64);
    match schema.get("type").and_then(Value::as_str) {
        Some("string") => match choices(schema) {
            Some(choices) => Ok(FieldKind::Choice(choices)),
            None => Ok(FieldKind::Text {
                min_length: uint("minLength"),
                max_length: uint("maxLength"),
                format: schema
                    .get("format")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            }),
        },
        Some(t @ ("number" | "integer")) => Ok(FieldKind::Number {
            integer: t == "integer",
            minimum: float("minimum"),
            maximum: float("maximum"),
        }),
        Some("boolean") => Ok(FieldKind::Boolean),
        Some("array") => {
            let choices = schema
                .get("items")
                .and_then(choices)
                .ok_or("has an array schema without string choices")?;
            Ok(FieldKind::MultiChoice {
                choices,
                min_items: uint("minItems"),
                max_items: uint("maxItems"),
            })
        }
        Some(other) => Err(format!("has the unsupported type `{other}`")),
        None => Err("has no type".into()),
    }
}

/// The choices of an `enum` (with `enumNames`), `oneOf` or `anyOf` of `const`s.
fn choices(schema: &Value) -> Option<Vec<Choice>> {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let names = schema.get("enumNames").and_then(Value::as_array);
        return values
            .iter()
            .enumerate()
            .map(|(i, v)| {
                Some(Choice {
                    value: v.as_str()?.to_owned(),
                    title: names.and_then(|n| n.get(i)?.as_str()).map(str::to_owned),
                })
            })
            .collect();
    }
    let options = schema
        .get("oneOf")
        .or_else(|| schema.get("anyOf"))?
        .as_array()?;
    options
        .iter()
        .map(|o| {
            Some(Choice {
                value: o.get("const")?.as_str()?.to_owned(),
                title: o.get("title").and_then(Value::as_str).map(str::to_owned),
            })
        })
        .collect()
}

/// Fails unless `value` is one of `choices`.
pub(super) fn one_of(choices: &[Choice], value: &str) -> Result<(), String> {
    if choices.iter().any(|c| c.value == value) {
        return Ok(());
    }
    let all: Vec<&str> = choices.iter().map(|c| c.value.as_str()).collect();
    Err(format!("`{value}` is not one of {}", all.join(", ")))
}

/// Checks the formats MCP names (`email`, `uri`, `date`, `date-time`) by shape, as a form
/// would; other formats pass.
pub(super) fn check_format(format: &str, s: &str) -> Result<(), String> {
    let digits = |part: &str, n: usize| part.len() == n && part.bytes().all(|b| b.is_ascii_digit());
    let date = |d: &str| {
        let parts: Vec<&str> = d.split('-').collect();
        matches!(parts.as_slice(), [y, m, d] if digits(y, 4) && digits(m, 2) && digits(d, 2))
    };
    let ok = match format {
        "email" => s.split_once('@').is_some_and(|(user, host)| {
            !user.is_empty() && host.contains('.') && !s.contains(char::is_whitespace)
        }),
        "uri" => s.split_once(':').is_some_and(|(scheme, rest)| {
            !rest.is_empty()
                && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        }),
        "date" => date(s),
        "date-time" => s.split_once(['T', 't']).is_some_and(|(d, time)| {
            date(d) && time.len() >= 8 && time.as_bytes().get(2) == Some(&b':')
        }),
        _ => true,
    };
    match ok {
        true => Ok(()),
        false => Err(format!("must be a valid {format}")),
    }
}
