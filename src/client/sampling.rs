//! Tool-enabled sampling (protocol 2025-11-25): the checks that refuse a request using tools
//! when `sampling.tools` was not declared, or whose tool uses and results do not balance.
//!
//! The balance rules: every assistant message with `tool_use` blocks is followed at once by a
//! user message of `tool_result` blocks only, answering each of those uses (by `toolUseId`)
//! once and nothing else; tool results appear nowhere else. Providers refuse conversations
//! that break them, and the spec has the client answer -32602 for one: they are checked
//! before the sampling handler runs, so no model is asked to continue a broken conversation.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::jsonrpc::{ErrorCode, ErrorObject};

/// Why a tool-enabled sampling request is refused.
const UNDECLARED: &str = "the client did not declare the sampling.tools capability, so it takes \
                          no sampling request with `tools` or `toolChoice`";

/// Refuses a `sampling/createMessage` using tools when the client did not declare `sampling.tools`:
/// servers must not send one, and the handler was not written for it. Invalid params, per the spec.
pub(crate) fn refuse_undeclared_tools(
    declared: bool,
    params: Option<&Value>,
) -> Result<(), ErrorObject> {
    if declared || !uses_tools(params) {
        return Ok(());
    }
    log::debug!("refusing tool-enabled sampling: sampling.tools was not declared");
    Err(ErrorObject::new(ErrorCode::INVALID_PARAMS, UNDECLARED))
}

/// Whether sampling params carry `tools` or `toolChoice` (a `null` counts as absent, as it
/// does when the params are decoded).
fn uses_tools(params: Option<&Value>) -> bool {
    ["tools", "toolChoice"].iter().any(|key| {
        params
            .and_then(|p| p.get(key))
            .is_some_and(|v| !v.is_null())
    })
}

/// Refuses the params of a `sampling/createMessage` whose messages break the balance of tool
/// uses and results. Params without a `messages` array are left to the decoder.
pub(crate) fn refuse_unbalanced_tools(params: Option<&Value>) -> Result<(), ErrorObject> {
    let messages = params
        .and_then(|p| p.get("messages"))
        .and_then(Value::as_array);
    let Some(messages) = messages else {
        return Ok(());
    };
    check(messages).map_err(|why| {
        log::debug!("refusing sampling: {why}");
        ErrorObject::new(
            ErrorCode::INVALID_PARAMS,
            format!("unbalanced tool use in the sampling messages: {why}"),
        )
    })
}

/// Why `messages` are unbalanced, if they are.
fn check(messages: &[Value]) -> Result<(), String> {
    // The tool uses of the previous message, still waiting for their results.
    let mut pending: Option<(usize, BTreeSet<&str>)> = None;
    for (index, message) in messages.iter().enumerate() {
        let blocks = blocks(message);
        let results = of_kind(&blocks, "tool_result", "toolUseId", index)?;
        if results.is_empty() {
            if let Some((used_at, uses)) = pending.take() {
                return Err(unanswered(used_at, &uses));
            }
        } else {
            if message.get("role").and_then(Value::as_str) != Some("user") {
                return Err(format!(
                    "message {index} has tool results but is not a user message"
                ));
            }
            if results.len() != blocks.len() {
                return Err(format!(
                    "message {index} mixes tool results with other content"
                ));
            }
            let Some((used_at, mut uses)) = pending.take() else {
                return Err(format!(
                    "message {index} has tool results, but the message before it used no tools"
                ));
            };
            for id in results {
                if !uses.remove(id) {
                    return Err(format!(
                        "message {index} has a result for `{id}`, which is no tool use of \
                         message {used_at} or was answered already"
                    ));
                }
            }
            if !uses.is_empty() {
                return Err(unanswered(used_at, &uses));
            }
        }
        let uses = of_kind(&blocks, "tool_use", "id", index)?;
        let assistant = message.get("role").and_then(Value::as_str) == Some("assistant");
        if assistant && !uses.is_empty() {
            pending = Some((index, uses.into_iter().collect()));
        }
    }
    match pending {
        Some((used_at, uses)) => Err(unanswered(used_at, &uses)),
        None => Ok(()),
    }
}

/// A message's content blocks: one object, or (since 2025-11-25) an array of them.
fn blocks(message: &Value) -> Vec<&Value> {
    match message.get("content") {
        Some(Value::Array(blocks)) => blocks.iter().collect(),
        Some(block) => vec![block],
        None => Vec::new(),
    }
}

/// The `key` of every block of type `kind`; a block without it is an error, since it cannot
/// be matched.
fn of_kind<'a>(
    blocks: &[&'a Value],
    kind: &str,
    key: &str,
    index: usize,
) -> Result<Vec<&'a str>, String> {
    blocks
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some(kind))
        .map(|b| {
            b.get(key)
                .and_then(Value::as_str)
                .ok_or_else(|| format!("a {kind} block of message {index} has no `{key}`"))
        })
        .collect()
}

fn unanswered(used_at: usize, uses: &BTreeSet<&str>) -> String {
    let ids: Vec<String> = uses.iter().map(|id| format!("`{id}`")).collect();
    format!(
        "the next message after message {used_at} lacks the result of tool use {}",
        ids.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_undeclared_tool_use_is_refused() {
        let tools = json!({"messages": [], "maxTokens": 1, "tools": []});
        let choice = json!({"messages": [], "maxTokens": 1, "toolChoice": {"mode": "auto"}});
        let none = json!({"messages": [], "maxTokens": 1, "tools": null});
        for params in [&tools, &choice] {
            let refused = refuse_undeclared_tools(false, Some(params)).unwrap_err();
            assert_eq!(refused.code, ErrorCode::INVALID_PARAMS);
            assert!(refused.message.contains("sampling.tools"));
            assert!(refuse_undeclared_tools(true, Some(params)).is_ok());
        }
        assert!(refuse_undeclared_tools(false, Some(&none)).is_ok());
        assert!(refuse_undeclared_tools(false, None).is_ok());
    }

    fn text(role: &str, text: &str) -> Value {
        json!({"role": role, "content": {"type": "text", "text": text}})
    }

    fn uses(ids: &[&str]) -> Value {
        let blocks: Vec<Value> = ids
            .iter()
            .map(|id| json!({"type": "tool_use", "id": id, "name": "weather", "input": {}}))
            .collect();
        json!({"role": "assistant", "content": blocks})
    }

    fn results(ids: &[&str]) -> Value {
        let blocks: Vec<Value> = ids
            .iter()
            .map(|id| json!({"type": "tool_result", "toolUseId": id, "content": []}))
            .collect();
        json!({"role": "user", "content": blocks})
    }

    fn refused(messages: Vec<Value>) -> String {
        let params = json!({"messages": messages, "maxTokens": 10});
        let error = refuse_unbalanced_tools(Some(&params)).unwrap_err();
        assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
        error.message
    }

    #[test]
    fn balanced_conversations_are_accepted() {
        let single = |id: &str| {
            json!({"role": "user", "content":
                {"type": "tool_result", "toolUseId": id, "content": []}})
        };
        let conversations = [
            vec![text("user", "hi")],
            vec![
                text("user", "weather in Paris and London?"),
                uses(&["a", "b"]),
                results(&["b", "a"]),
                text("assistant", "Paris is warmer"),
                text("user", "and Rome?"),
                uses(&["c"]),
                single("c"),
            ],
            vec![text("user", "w?"), uses(&["a"]), single("a")],
            vec![],
        ];
        for messages in conversations {
            let params = json!({"messages": messages, "maxTokens": 10});
            assert!(refuse_unbalanced_tools(Some(&params)).is_ok(), "{params}");
        }
        // Not a conversation at all: the decoder says what is wrong.
        assert!(refuse_unbalanced_tools(None).is_ok());
        assert!(refuse_unbalanced_tools(Some(&json!({"messages": 3}))).is_ok());
    }

    #[test]
    fn a_missing_result_is_refused() {
        let message = refused(vec![text("user", "w?"), uses(&["a", "b"]), results(&["a"])]);
        assert!(
            message.contains("lacks the result of tool use `b`"),
            "{message}"
        );
        let message = refused(vec![
            text("user", "w?"),
            uses(&["a"]),
            text("user", "well?"),
        ]);
        assert!(message.contains("`a`"), "{message}");
        let message = refused(vec![text("user", "w?"), uses(&["a"])]);
        assert!(message.contains("after message 1"), "{message}");
    }

    #[test]
    fn an_unknown_or_repeated_result_is_refused() {
        let message = refused(vec![uses(&["a"]), results(&["a", "z"])]);
        assert!(message.contains("result for `z`"), "{message}");
        let message = refused(vec![uses(&["a"]), results(&["a", "a"])]);
        assert!(message.contains("answered already"), "{message}");
        let message = refused(vec![text("user", "w?"), results(&["a"])]);
        assert!(message.contains("used no tools"), "{message}");
        let message = refused(vec![uses(&["a"]), results(&["a"]), results(&["a"])]);
        assert!(message.contains("message 2"), "{message}");
    }

    #[test]
    fn tool_results_mixed_with_other_content_are_refused() {
        let mut mixed = results(&["a"]);
        mixed["content"]
            .as_array_mut()
            .unwrap()
            .insert(0, json!({"type": "text", "text": "Here are the results:"}));
        let message = refused(vec![uses(&["a"]), mixed]);
        assert!(message.contains("mixes tool results"), "{message}");
        let mut from_assistant = results(&["a"]);
        from_assistant["role"] = json!("assistant");
        let message = refused(vec![uses(&["a"]), from_assistant]);
        assert!(message.contains("not a user message"), "{message}");
        let nameless = json!({"role": "user", "content": [{"type": "tool_result"}]});
        let message = refused(vec![uses(&["a"]), nameless]);
        assert!(message.contains("no `toolUseId`"), "{message}");
    }
}
