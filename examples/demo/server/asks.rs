//! What the tools that ask the client (`ask_llm`, `ask_user`) ask, and how they read the
//! answer: shared by server requests (handshake era) and input rounds (stateless era).

use serde_json::{json, Value};

use super::tools::string;

/// The `sampling/createMessage` params `ask_llm` sends.
pub fn sampling_params(args: &Value) -> Result<Value, String> {
    let prompt = string(args, "prompt")?;
    Ok(json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
        "maxTokens": 256,
    }))
}

/// The result of `ask_llm` from the client's sampling answer.
pub fn sampled(reply: &Value) -> Value {
    // `content` is one block, or (2025-11-25) a list of blocks.
    let blocks = match &reply["content"] {
        Value::Array(blocks) => blocks.iter().collect(),
        block => vec![block],
    };
    let reply_text: Vec<&str> = blocks.iter().filter_map(|b| b["text"].as_str()).collect();
    let reply_text = reply_text.join("\n");
    json!({
        "content": [{"type": "text", "text": reply_text}],
        "structuredContent": {"text": reply_text, "model": reply["model"]},
    })
}

/// The `elicitation/create` params `ask_user` sends.
pub fn elicitation_params(args: &Value, form_mode: bool) -> Result<Value, String> {
    let question = string(args, "question")?;
    let mut params = json!({
        "message": question,
        "requestedSchema": {
            "type": "object",
            "properties": {
                "answer": {"type": "string", "title": "Answer", "default": "yes"},
                "sure": {"type": "boolean", "title": "Sure?", "default": true},
            },
            "required": ["answer"],
        },
    });
    if form_mode {
        params["mode"] = json!("form");
    }
    Ok(params)
}

/// The result of `ask_user` from the client's elicitation answer.
pub fn elicited(reply: &Value) -> Result<Value, String> {
    let action = reply["action"].as_str().unwrap_or_default();
    let summary = match action {
        "accept" => format!("accepted: {}", reply["content"]),
        "decline" => "declined".to_owned(),
        "cancel" => "cancelled".to_owned(),
        other => return Err(format!("unexpected elicitation action `{other}`")),
    };
    Ok(json!({
        "content": [{"type": "text", "text": summary}],
        "structuredContent": {"action": action, "content": reply["content"]},
    }))
}
