//! The demo server's resources, prompts, completions and the pagination of every list.

use serde_json::{json, Value};
use umcp::jsonrpc::{ErrorCode, ErrorObject};

use super::Reply;

/// The logging levels, least severe first (RFC 5424 order, as the spec uses).
pub const LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// Names offered as completions for `greet`'s `name` and for `demo://note/{name}`.
const NAMES: [&str; 5] = ["Ada", "Alan", "Alonzo", "Grace", "Linus"];
/// Completions for `greet`'s `style`.
const STYLES: [&str; 3] = ["casual", "formal", "pirate"];

/// The position of `level` in [`LEVELS`].
pub fn level_index(level: &str) -> Option<usize> {
    LEVELS.iter().position(|l| *l == level)
}

/// A required string parameter, or an invalid-params error naming it.
pub fn str_param<'a>(params: &'a Value, key: &str) -> Result<&'a str, ErrorObject> {
    params[key]
        .as_str()
        .ok_or_else(|| invalid(format!("`{key}` must be a string")))
}

/// One page of `items` under `key`, starting at the request's cursor.
///
/// Cursors are opaque to clients; here they are `offset:<n>`. A `page_size` of 0 puts
/// everything on one page.
pub fn page(items: Vec<Value>, key: &str, params: &Value, page_size: usize) -> Reply {
    let start = match params.get("cursor").and_then(Value::as_str) {
        None => 0,
        Some(cursor) => cursor
            .strip_prefix("offset:")
            .and_then(|n| n.parse::<usize>().ok())
            .filter(|n| *n <= items.len())
            .ok_or_else(|| invalid(format!("invalid cursor `{cursor}`")))?,
    };
    let end = match page_size {
        0 => items.len(),
        n => (start + n).min(items.len()),
    };
    let mut result = json!({ key: items[start..end] });
    if end < items.len() {
        result["nextCursor"] = json!(format!("offset:{end}"));
    }
    Ok(result)
}

/// The fixed resources.
pub fn resources() -> Vec<Value> {
    vec![
        json!({
            "uri": "demo://text/readme",
            "name": "readme",
            "title": "Read me",
            "description": "A short text.",
            "mimeType": "text/plain",
        }),
        json!({
            "uri": "demo://blob/bytes",
            "name": "bytes",
            "description": "Eight bytes, 0 to 7.",
            "mimeType": "application/octet-stream",
            "size": 8,
        }),
    ]
}

/// The resource templates.
pub fn templates() -> Vec<Value> {
    vec![json!({
        "uriTemplate": "demo://note/{name}",
        "name": "note",
        "description": "A note about someone.",
        "mimeType": "text/plain",
    })]
}

/// `resources/read`: the fixed resources and the notes of the template.
pub fn read(params: &Value) -> Reply {
    let uri = str_param(params, "uri")?;
    let contents = match uri {
        "demo://text/readme" => json!({
            "uri": uri,
            "mimeType": "text/plain",
            "text": "Hello from the umcp demo server.",
        }),
        // The bytes 0..=7, base64-encoded.
        "demo://blob/bytes" => json!({
            "uri": uri,
            "mimeType": "application/octet-stream",
            "blob": "AAECAwQFBgc=",
        }),
        _ => match uri.strip_prefix("demo://note/").filter(|n| !n.is_empty()) {
            Some(name) => json!({
                "uri": uri,
                "mimeType": "text/plain",
                "text": format!("A note about {name}."),
            }),
            None => {
                let error = ErrorObject::new(ErrorCode::RESOURCE_NOT_FOUND, "resource not found");
                return Err(error.with_data(json!({ "uri": uri })));
            }
        },
    };
    Ok(json!({ "contents": [contents] }))
}

/// The prompts.
pub fn prompts() -> Vec<Value> {
    vec![
        json!({
            "name": "greet",
            "title": "Greeting",
            "description": "Asks for a greeting for someone.",
            "arguments": [
                {"name": "name", "description": "Who to greet", "required": true},
                {"name": "style", "description": "casual, formal or pirate", "required": false},
            ],
        }),
        json!({
            "name": "haiku",
            "description": "Asks for a haiku.",
            "arguments": [{"name": "topic", "required": false}],
        }),
    ]
}

/// `prompts/get`.
pub fn get_prompt(params: &Value) -> Reply {
    let name = str_param(params, "name")?;
    let args = &params["arguments"];
    let (description, text) = match name {
        "greet" => {
            let who = args["name"]
                .as_str()
                .ok_or_else(|| invalid("missing required argument `name`".to_owned()))?;
            let style = args["style"].as_str().unwrap_or("casual");
            (
                format!("A greeting for {who}"),
                format!("Say hello to {who} in a {style} way."),
            )
        }
        "haiku" => {
            let topic = args["topic"].as_str().unwrap_or("the sea");
            (
                "A haiku".to_owned(),
                format!("Write a haiku about {topic}."),
            )
        }
        other => return Err(invalid(format!("unknown prompt `{other}`"))),
    };
    Ok(json!({
        "description": description,
        "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
    }))
}

/// `completion/complete` for `greet`'s arguments and the note template's `name`.
pub fn complete(params: &Value) -> Reply {
    let reference = &params["ref"];
    let argument = str_param(&params["argument"], "name")?;
    let value = params["argument"]["value"].as_str().unwrap_or_default();
    let candidates: &[&str] = match (reference["type"].as_str(), argument) {
        (Some("ref/prompt"), "name") if reference["name"] == "greet" => &NAMES,
        (Some("ref/prompt"), "style") if reference["name"] == "greet" => &STYLES,
        (Some("ref/resource"), "name") if reference["uri"] == "demo://note/{name}" => &NAMES,
        _ => {
            return Err(invalid(format!(
                "nothing to complete for {reference} / {argument}"
            )))
        }
    };
    let prefix = value.to_lowercase();
    let values: Vec<&str> = candidates
        .iter()
        .copied()
        .filter(|c| c.to_lowercase().starts_with(&prefix))
        .collect();
    Ok(json!({
        "completion": {"values": values, "total": values.len(), "hasMore": false},
    }))
}

fn invalid(message: String) -> ErrorObject {
    ErrorObject::new(ErrorCode::INVALID_PARAMS, message)
}
