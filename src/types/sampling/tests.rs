//! Tests of the sampling types: their wire form in both directions.

use super::*;
use serde_json::json;

#[test]
fn reads_a_2024_11_05_request() {
    let p: CreateMessageRequestParams = serde_json::from_value(json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": "What is 2+2?"}}],
        "modelPreferences": {"hints": [{"name": "claude"}], "intelligencePriority": 0.8},
        "systemPrompt": "Be brief.",
        "includeContext": "thisServer",
        "maxTokens": 100
    }))
    .unwrap();
    assert_eq!(p.max_tokens, 100);
    assert_eq!(p.include_context, Some(IncludeContext::ThisServer));
    assert_eq!(p.messages[0].content.text(), "What is 2+2?");
    assert_eq!(p.messages[0], SamplingMessage::user_text("What is 2+2?"));
    let prefs = p.model_preferences.unwrap();
    assert_eq!(prefs.hints.unwrap()[0].name.as_deref(), Some("claude"));
    assert_eq!(prefs.cost_priority, None);
}

#[test]
fn reads_a_2025_11_25_request_with_tools_and_arrays() {
    let v = json!({
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "weather?"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "u1", "name": "weather",
                "input": {"city": "Paris"}}]},
            {"role": "user", "content": [{"type": "tool_result", "toolUseId": "u1",
                "content": [{"type": "text", "text": "sunny"}]}]}
        ],
        "tools": [{"name": "weather", "inputSchema": {"type": "object"}}],
        "toolChoice": {"mode": "auto"},
        "temperature": 0.2,
        "stopSequences": ["\n\n"],
        "metadata": {"k": 1},
        "maxTokens": 1000
    });
    let p: CreateMessageRequestParams = serde_json::from_value(v.clone()).unwrap();
    assert_eq!(p.messages[1].content.blocks()[0].kind(), "tool_use");
    assert_eq!(p.tool_choice, Some(json!({"mode": "auto"})));
    assert_eq!(p.tools.as_ref().unwrap()[0]["name"], "weather");
    assert_eq!(serde_json::to_value(&p).unwrap(), v);
}

#[test]
fn content_keeps_its_shape() {
    let single = json!({"type": "text", "text": "a"});
    let c: SamplingContent = serde_json::from_value(single.clone()).unwrap();
    assert!(matches!(c, SamplingContent::Single(_)));
    assert_eq!(serde_json::to_value(&c).unwrap(), single);
    let many = json!([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]);
    let c: SamplingContent = serde_json::from_value(many.clone()).unwrap();
    assert_eq!(c.blocks().len(), 2);
    assert_eq!(c.text(), "a\nb");
    assert_eq!(serde_json::to_value(&c).unwrap(), many);
    let empty: SamplingContent = serde_json::from_value(json!([])).unwrap();
    assert!(empty.blocks().is_empty());
    // From text, as the client reads a server's request: the same shapes and blocks.
    for (value, multiple) in [(single, false), (many, true), (json!([]), true)] {
        let spaced = format!("  {}", serde_json::to_string_pretty(&value).unwrap());
        let from_text: SamplingContent = serde_json::from_str(&spaced).unwrap();
        let from_value: SamplingContent = serde_json::from_value(value.clone()).unwrap();
        assert_eq!(from_text, from_value);
        assert_eq!(matches!(from_text, SamplingContent::Multiple(_)), multiple);
        assert_eq!(serde_json::to_value(&from_text).unwrap(), value);
    }
    let odd: SamplingContent = serde_json::from_str(r#"[{"type": "x"}, 7]"#).unwrap();
    assert_eq!(odd.blocks()[1], ContentBlock::Unknown(json!(7)));
}

#[test]
fn results_serialise_for_old_and_new_servers() {
    let r = CreateMessageResult::new("m-1", ContentBlock::text("4")).with_stop_reason("endTurn");
    assert_eq!(
        serde_json::to_value(&r).unwrap(),
        json!({"role": "assistant", "content": {"type": "text", "text": "4"},
               "model": "m-1", "stopReason": "endTurn"})
    );
    let many = CreateMessageResult::new("m", vec![ContentBlock::text("x")]);
    assert_eq!(
        serde_json::to_value(&many).unwrap()["content"],
        json!([{"type": "text", "text": "x"}])
    );
    let read: CreateMessageResult = serde_json::from_value(json!({
        "role": "assistant", "content": {"type": "text", "text": "4"}, "model": "m-1",
        "stopReason": "providerSpecific"
    }))
    .unwrap();
    assert_eq!(read.stop_reason.as_deref(), Some("providerSpecific"));
    let built = CreateMessageRequestParams::new(vec![SamplingMessage::user_text("q")], 10)
        .with_system_prompt("s");
    assert_eq!(
        serde_json::to_value(&built).unwrap(),
        json!({"messages": [{"role": "user", "content": {"type": "text", "text": "q"}}],
               "systemPrompt": "s", "maxTokens": 10})
    );
}
